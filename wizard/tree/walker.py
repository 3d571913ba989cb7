"""Walk a tree: a pure function from the answers given so far to the path, the facts and where it stops.

Questions take the supplied answer for their `var` (or, when `use_defaults`, the tree's default); compute
nodes call `compute(node, env)`, merge the facts it returns and keep its detail (the typed result behind the
facts, e.g. the chosen layout) by node id for the plan; the first edge whose condition holds is
taken. Only answers of questions on the path are kept, so no default leaks from a question never asked.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from wizard.errors import InputError
from wizard.tree.schema import Compute, Question, Recommendation, Tree, default_in, describe, evaluate
from wizard.tree.text import render

ComputeFn = Callable[[Compute, dict[str, Any]], tuple[dict[str, Any], Any]]  # (facts, detail or None)


class Step(NamedTuple):
    """One visited node: its id, the value given or computed there, and why the walk left it as it did."""

    node: str
    value: Any
    why: str


class WalkState(NamedTuple):
    path: tuple[Step, ...]
    answers: dict[str, Any]  # answers of questions on the path only
    facts: dict[str, Any]
    current: str | None  # the question waiting for an answer, or None
    recommendation: str | None  # the leaf reached, or None
    details: dict[str, Any] = {}  # compute node id → the typed result its function returned beside the facts

    @property
    def env(self) -> dict[str, Any]:
        return {**self.answers, **self.facts}


class DeadEnd(Exception):
    """No edge of a node matched: a defect of the tree (lint finds these before users do)."""

    def __init__(self, node: str, env: Mapping[str, Any]) -> None:
        self.node = node
        super().__init__(f"no edge of node {node!r} matches")


def walk(tree: Tree, supplied: Mapping[str, Any], compute: ComputeFn, *, use_defaults: bool = False,
         max_steps: int = 500) -> WalkState:
    """Walk from the start as far as the supplied answers (and defaults, if allowed) reach."""
    answers: dict[str, Any] = {}
    facts: dict[str, Any] = {}
    details: dict[str, Any] = {}
    path: list[Step] = []
    node_id = tree.start
    for _ in range(max_steps):
        node = tree.nodes[node_id]
        env = {**answers, **facts}
        if isinstance(node, Recommendation):
            path.append(Step(node_id, None, render(node.summary, env)))
            return WalkState(tuple(path), answers, facts, None, node_id, details)
        origin = ""
        if isinstance(node, Question):
            if node.var in supplied:
                value = supplied[node.var]
            elif use_defaults and ((value := default_in(node, env)) is not None or node.optional):
                origin = "tree default"
            else:
                return WalkState(tuple(path), answers, facts, node_id, None, details)
            bound = node.maximum_from
            limit = env.get(bound.fact) if bound is not None else None
            if bound is not None and isinstance(limit, (int, float)) and isinstance(value, (int, float)) and value > limit:
                raise InputError(node.var, value, render(bound.why, env))  # refused at its question, not 16 later
            if value is not None:
                answers[node.var] = value
            env = {**answers, **facts}
        else:
            assert isinstance(node, Compute)
            value, detail = compute(node, env)
            facts.update(value)
            if detail is not None:
                details[node_id] = detail
            env = {**answers, **facts}
        edge = next((e for e in node.next if evaluate(e.when, env)), None)
        if edge is None:
            raise DeadEnd(node_id, env)
        reason = render(edge.why, env) if edge.why else ""
        why = describe(edge.when) if edge.when is not None else ""
        text = "; ".join(x for x in (origin, why, reason) if x)
        path.append(Step(node_id, value, f"{text} ({node.section})" if text else f"({node.section})"))
        node_id = edge.goto
    raise InputError("tree", tree.title, f"more than {max_steps} steps: the tree has a cycle (run `tree lint`)")
