"""The session every front end drives: answer, back, where we are, and the plan at the end.

State is the ordered list of answers given on the current path; every change re-walks the tree from the
start (a pure function), so Back and a changed earlier answer can never leave stale facts behind. Answers
given once are remembered as the defaults offered when a question comes round again.
"""

from __future__ import annotations

from typing import Any

from wizard.errors import InputError
from wizard.session.computes import FUNCTIONS, Computed, Context, Fit
from wizard.session.questions import coerce
from wizard.tree.loader import bundled_tree
from wizard.tree.schema import Compute, Question, Recommendation, Tree, default_in, output_problems
from wizard.tree.walker import WalkState, walk


class ContractError(RuntimeError):
    """A compute function returned other facts than its tree node declares (a bug, never a user's input)."""


class Session:
    """One walk through the tree. `extras` are answers-file keys no question asks (tp, pp, replicas, ...)."""

    def __init__(self, tree: Tree | None = None, extras: dict[str, Any] | None = None) -> None:
        self.tree = tree or bundled_tree()
        self.given: list[tuple[str, Any]] = []  # (var, value) in the order asked on the current path
        self.remembered: dict[str, Any] = {}  # every answer ever given: offered as the default next time
        self.context = Context(extras)
        self.ignored: list[str] = []  # answers given whose question is not on this path (plan says so)
        self.state: WalkState = self._walk()

    # -- the walk
    def _compute(self, node: Compute, env: dict[str, Any]) -> Computed:
        """Call the node's function; its facts must be what the node declares (checked compute contract)."""
        result = FUNCTIONS[node.function](env, self.context)
        problems = output_problems(node.outputs, result.facts)
        if problems:  # a programming error, not bad input: the tree and its function disagree
            raise ContractError(f"compute {node.function}: " + "; ".join(problems))
        return result

    def _walk(self) -> WalkState:
        return walk(self.tree, dict(self.given), self._compute)

    @property
    def question(self) -> Question | None:
        """The question waiting for an answer (None once a recommendation is reached)."""
        if self.state.current is None:
            return None
        node = self.tree.nodes[self.state.current]
        assert isinstance(node, Question)
        return node

    @property
    def recommendation(self) -> Recommendation | None:
        if self.state.recommendation is None:
            return None
        node = self.tree.nodes[self.state.recommendation]
        assert isinstance(node, Recommendation)
        return node

    @property
    def fit(self) -> Fit | None:
        """The layout search's result on this path (None before it runs, or on a road without one)."""
        return next((d for d in self.state.details.values() if isinstance(d, Fit)), None)

    @property
    def model_spec(self):
        """The spec of the model answered on this path (None before the model question is answered)."""
        return self.context.resolved(self.state.answers.get("model"))

    def default_for(self, q: Question) -> Any:
        """What to pre-fill: the answer given before (after Back), else the tree's default."""
        return self.remembered.get(q.var, default_in(q, self.state.env))

    # -- the moves
    def answer(self, raw: Any) -> None:
        """Answer the current question; raises InputError (state unchanged) when the answer is not accepted."""
        q = self.question
        if q is None:
            raise InputError("answer", raw, "the walk is finished; use back() to change an answer")
        value = coerce(q, raw, self.tree)
        before = list(self.given)
        self.given.append((q.var, value))
        try:
            self.state = self._walk()
        except InputError:
            self.given = before  # e.g. the model cannot be resolved: stay on the question
            self.state = self._walk()
            raise
        self.remembered[q.var] = value

    def back(self) -> bool:
        """Return to the previous question, keeping its answer as the default; False at the first question."""
        if not self.given:
            return False
        self.given.pop()
        self.state = self._walk()
        return True

    def jump_to(self, index: int) -> None:
        """Return to the index-th answered question (0 = the first), keeping every later answer as the default it
        offers when the walk reaches it again; changing the answer re-walks the path from there."""
        if not 0 <= index < len(self.given):
            raise InputError("answer", index, f"expected an answered question from 0 to {len(self.given) - 1}")
        self.given = self.given[:index]
        self.state = self._walk()

    def prompt_of(self, var: str) -> str:
        """The prompt of the question that sets `var` (the var itself when no question does)."""
        return next((n.prompt for n in self.tree.nodes.values() if isinstance(n, Question) and n.var == var), var)

    def restore(self, given: list[tuple[str, Any]]) -> None:
        """Replay saved answers (resume): each is checked again; the walk stops at the first one refused."""
        for var, value in given:
            q = self.question
            if q is None or q.var != var:
                break
            try:
                self.answer(value)
            except InputError:
                break

    @property
    def answers(self) -> dict[str, Any]:
        """The answers of the questions on the path, plus the extras: what answers.yaml records."""
        return {**self.context.extras, **self.state.answers}


def run_answers(data: dict[str, Any], tree: Tree | None = None) -> Session:
    """Non-interactive: walk with the given answers, taking the tree's default for every question not answered."""
    tree = tree or bundled_tree()
    asked = {n.var for n in tree.nodes.values() if isinstance(n, Question)}
    extras = {k: v for k, v in data.items() if k not in asked}
    session = Session(tree, extras)
    supplied = {k: v for k, v in data.items() if k in asked}
    session.given = list(supplied.items())
    session.state = walk(tree, supplied, session._compute, use_defaults=True)
    if session.state.current is not None:
        node = tree.nodes[session.state.current]
        raise InputError("answers", node.var if isinstance(node, Question) else node, "required: the tree has no default for it")
    session.ignored = sorted(k for k in supplied if k not in session.state.answers)
    return session
