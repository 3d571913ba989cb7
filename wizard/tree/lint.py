"""Static checks of a tree, and a probe walk over every branch, before any user meets it.

Checks: every node reachable; no cycles; nothing after a catch-all edge; conditions and texts read only
variables set on every path into them; every compute names a known function; every question's key and
choices match the answers file; and a probe walk — each choice, both booleans, every numeric threshold ± 1
and the default, each possible value of a computed fact — finds no dead end and reaches every recommendation,
recording the first answers that reach it (that recommendation's walkthrough).
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import product
from typing import Any, NamedTuple

from jinja2 import UndefinedError

from wizard.tree.schema import Compute, Question, Recommendation, Tree, compares, condition_vars, evaluate
from wizard.tree.text import render, template_vars

MAX_PROBES = 200_000


class LintReport(NamedTuple):
    errors: list[str]
    reached: dict[str, dict[str, Any]]  # recommendation → the first answers that reach it
    paths: list[tuple[tuple[str, ...], dict[str, Any]]]  # distinct node sequences to a leaf, with answers
    probes: int  # leaves reached by the probe walk

    @property
    def ok(self) -> bool:
        return not self.errors


def _edges(tree: Tree, node_id: str):
    node = tree.nodes[node_id]
    return node.next if isinstance(node, (Question, Compute)) else []


def _sets(node: Any) -> set[str]:
    if isinstance(node, Question):
        return {node.var}
    if isinstance(node, Compute):
        return set(node.outputs)
    return set()


def lint(tree: Tree, functions: Iterable[str] | None = None, answer_fields: dict[str, Any] | None = None) -> LintReport:
    """All checks; `functions` and `answer_fields` come from the session layer (the tree layer cannot import it)."""
    errors: list[str] = []
    errors += _structure(tree)
    if any(e.startswith("cycle:") for e in errors):  # the dataflow and the probe walk need an acyclic graph
        return LintReport(errors, {}, [], 0)
    errors += _dataflow(tree)
    if functions is not None:
        known = set(functions)
        errors += [f"node {k}: unknown compute function {n.function!r}" for k, n in tree.nodes.items()
                   if isinstance(n, Compute) and n.function not in known]
    if answer_fields is not None:
        errors += _answer_keys(tree, answer_fields)
    declared = set().union(*(_sets(n) for n in tree.nodes.values()))
    for rule in tree.warnings:
        for var in condition_vars(rule.when) - declared:
            errors.append(f"warning {rule.id}: reads {var!r}, which no question or compute sets")
    for alt in tree.alternatives:
        for r in alt.reasons:
            for var in condition_vars(r.when) - declared:
                errors.append(f"alternative {alt.form}: reads {var!r}, which no question or compute sets")
    reached, paths, probes, walk_errors = _probe(tree)
    errors += walk_errors
    for node_id, node in tree.nodes.items():
        if isinstance(node, Recommendation) and node_id not in reached:
            errors.append(f"recommendation {node_id}: no probe walk reaches it")
    return LintReport(errors, reached, paths, probes)


def _structure(tree: Tree) -> list[str]:
    errors: list[str] = []
    for node_id in tree.nodes:
        edges = _edges(tree, node_id)
        for i, e in enumerate(edges[:-1]):
            if e.when is None:
                errors.append(f"node {node_id}: edge {i + 1} after the catch-all edge {i} is never taken (goto {edges[i + 1].goto})")
    seen, stack = set(), [tree.start]
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        stack.extend(e.goto for e in _edges(tree, n))
    errors += [f"node {n}: unreachable from start {tree.start!r}" for n in tree.nodes if n not in seen]
    color: dict[str, int] = {}

    def visit(n: str, trail: list[str]) -> None:
        color[n] = 1
        for e in _edges(tree, n):
            if color.get(e.goto) == 1:
                cycle = trail[trail.index(e.goto):] + [n, e.goto] if e.goto in trail else [n, e.goto]
                errors.append("cycle: " + " → ".join(dict.fromkeys(cycle)) + f" → {e.goto}")
            elif e.goto not in color:
                visit(e.goto, trail + [n])
        color[n] = 2

    visit(tree.start, [])
    return errors


def _topological(tree: Tree) -> list[str]:
    order, done = [], set()

    def visit(n: str) -> None:
        if n in done:
            return
        done.add(n)
        for e in _edges(tree, n):
            visit(e.goto)
        order.append(n)

    visit(tree.start)
    return order[::-1]


def _dataflow(tree: Tree) -> list[str]:
    """Must-set analysis: a variable is available at a node only if every path into it sets it."""
    preds: dict[str, list[str]] = {n: [] for n in tree.nodes}
    for n in tree.nodes:
        for e in _edges(tree, n):
            preds[e.goto].append(n)
    before: dict[str, set[str]] = {}
    for n in _topological(tree):
        ins = [before[p] | _sets(tree.nodes[p]) for p in preds[n] if p in before]
        before[n] = set.intersection(*ins) if ins else set()
    errors = []
    for n, node in tree.nodes.items():
        if n not in before:  # unreachable: reported by the structure check
            continue
        available = before[n] | _sets(node)
        for i, e in enumerate(_edges(tree, n)):
            for var in sorted(condition_vars(e.when) - available):
                errors.append(f"node {n}: edge {i} reads {var!r}, which is not set on every path into it")
            for var in sorted(template_vars(e.why) - available):
                errors.append(f"node {n}: edge {i} text uses {var!r}, which is not set on every path into it")
        if isinstance(node, Question) and node.maximum_from is not None:
            bound = node.maximum_from
            for var in sorted(({bound.fact} | template_vars(bound.why)) - before[n]):
                errors.append(f"node {n}: maximum_from reads {var!r}, which is not set on every path into it")
        if isinstance(node, Question):
            for i, d in enumerate(node.default_if):
                for var in sorted(condition_vars(d.when) - before[n]):
                    errors.append(f"node {n}: default_if[{i}] reads {var!r}, which is not set on every path into it")
        if isinstance(node, Recommendation):
            for var in sorted(template_vars(node.summary) - before[n]):
                errors.append(f"recommendation {n}: summary uses {var!r}, which is not set on every path into it")
    return errors


def _answer_keys(tree: Tree, fields: dict[str, Any]) -> list[str]:
    """Each question asks for an answers-file key, and its choices are values that key accepts."""
    errors = []
    for n, node in tree.nodes.items():
        if not isinstance(node, Question):
            continue
        if node.var not in fields:
            errors.append(f"question {n}: var {node.var!r} is not a key of the answers file")
            continue
        allowed = fields[node.var]
        if allowed is not None and node.choices:
            for c in node.choices:
                if c.value not in allowed:
                    errors.append(f"question {n}: choice {c.value!r} is not accepted by the answers file ({', '.join(map(str, allowed))})")
    return errors


def _probe_values(tree: Tree) -> dict[str, list[Any]]:
    """Values worth trying per variable: every threshold an edge compares it with, ± 1."""
    values: dict[str, set] = {}
    for n in tree.nodes:
        for e in _edges(tree, n):
            for c in compares(e.when):
                vs = c.value if isinstance(c.value, list) else [c.value]
                bucket = values.setdefault(c.var, set())
                for v in vs:
                    bucket.add(v)
                    if isinstance(v, (int, float)) and not isinstance(v, bool):
                        bucket.update({v - 1, v + 1})
    return {k: sorted(v, key=lambda x: (str(type(x)), x)) for k, v in values.items()}


def _question_probes(q: Question, thresholds: dict[str, list[Any]]) -> list[Any]:
    if q.var not in thresholds:  # no edge reads it: its value cannot change the route
        return [q.default]
    if q.type == "bool":
        return [False, True]
    if q.type == "choice" and q.choices:
        return [c.value for c in q.choices]
    values = [q.default] + [v for v in thresholds.get(q.var, []) if v not in (q.default,)]
    if q.optional:
        values.append(None)
    return values


def _fact_probes(name: str, out: Any, thresholds: dict[str, list[Any]]) -> list[Any]:
    if name not in thresholds:
        return [_placeholder(out)]
    if out.type == "bool":
        return [False, True]
    if out.type == "choice":
        return list(out.choices)
    return thresholds[name] or [_placeholder(out)]


def _placeholder(out: Any) -> Any:
    return {"bool": False, "number": 1, "choice": (out.choices or ["x"])[0], "text": "x"}[out.type]


def _probe(tree: Tree):
    thresholds = _probe_values(tree)
    reached: dict[str, dict[str, Any]] = {}
    paths: dict[tuple[str, ...], dict[str, Any]] = {}
    errors: list[str] = []
    count = 0
    rendered: set[tuple] = set()  # (leaf, texts that apply, variables defined): rendering again proves nothing new

    def leaf(n: str, env: dict[str, Any], answers: dict[str, Any], trail: tuple[str, ...]) -> None:
        nonlocal count
        count += 1
        reached.setdefault(n, dict(answers))
        paths.setdefault(trail, dict(answers))
        node = tree.nodes[n]
        assert isinstance(node, Recommendation)  # leaf() is called on recommendations only
        texts = [("summary", node.summary)]
        texts += [(f"warning {w.id}", w.message) for w in tree.warnings if evaluate(w.when, env)]
        for alt in tree.alternatives:
            if alt.form == node.form:  # the chosen form is not an alternative to itself
                continue
            r = next((r for r in alt.reasons if evaluate(r.when, env)), None)
            if r is not None:
                texts.append((f"alternative {alt.form}", r.why))
        signature = (n, tuple(w for w, _ in texts), frozenset(env))
        if signature in rendered:
            return
        rendered.add(signature)
        for what, text in texts:
            try:
                render(text, env)
            except UndefinedError as e:
                msg = f"recommendation {n}: {what} text fails on this path ({e.message}); answers {answers}"
                if msg not in errors and len(errors) < 50:
                    errors.append(msg)

    def go(n: str, env: dict[str, Any], answers: dict[str, Any], trail: tuple[str, ...]) -> None:
        if count >= MAX_PROBES:
            return
        node = tree.nodes[n]
        trail = trail + (n,)
        if isinstance(node, Recommendation):
            leaf(n, env, answers, trail)
            return
        if isinstance(node, Question):
            options = [{node.var: v} for v in _question_probes(node, thresholds)]
        else:
            names = list(node.outputs)
            combos = product(*(_fact_probes(k, node.outputs[k], thresholds) for k in names))
            options = [dict(zip(names, combo)) for combo in combos]
        for values in options:
            env2 = {**env, **{k: v for k, v in values.items() if v is not None}}
            answers2 = {**answers, **values} if isinstance(node, Question) else answers
            edge = next((e for e in node.next if evaluate(e.when, env2)), None)
            if edge is None:
                msg = f"node {n}: dead end — no edge matches for answers {answers2}"
                if len(errors) < 50:
                    errors.append(msg)
                continue
            go(edge.goto, env2, answers2, trail)

    go(tree.start, {}, {}, ())
    return reached, list(paths.items()), count, errors
