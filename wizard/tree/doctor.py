"""The doctor's tree (trees/doctor.yaml): the guide's §11 symptoms walked through checks to a cause and its fix.

A doctor tree is data, like the deployment tree: `symptoms` (§11's rows) each start at a node; a `check` asks one
question with fixed choices (its id is the `--answer` key) and goes on by ordered edges whose conditions are the
main tree's structured conditions (wizard/tree/schema.py: {var, op, value} with all / any / not, `evaluate`); a
`cause` is a leaf that states the cause and the fix with their §. The nodes are frozen standard-library
dataclasses in the pattern of schema.py: pydantic validates a file into them through a TypeAdapter, imported
only while validating; every problem in a tree file is one InputError naming the node or key.

Beyond the schema, `check_doctor_integrity` proves what `tree lint` proves of the main tree: every goto exists,
every compared value is a choice of the check it names, every choice is taken by some edge, no cycle, every
symptom's every walk ends at a cause, every node is reached, and the texts name only check ids and `plan`
figures (PLAN_FIGURES: what the doctor session derives from a plan.json for the leaf texts).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal, NamedTuple, Union

from wizard.errors import InputError
from wizard.tree.loader import bundled_file
from wizard.tree.schema import Edge, _Strict, _Tagged, compares, describe, evaluate
from wizard.yaml_file import parse_yaml_bytes, read_bytes

ID_PATTERN = r"^[a-z][a-z0-9_]*$"  # node, symptom and choice ids: `--answer KEY=VALUE` must spell them plainly
SECTION_PATTERN = r"§\d+"  # every node and symptom cites the guide
NODE_KINDS = ("check", "cause")

# The plan.json figures a leaf text may read as `plan.<name>` (None when the plan has no such figure; `plan` itself
# is None without --plan). wizard/session/doctor.py's plan_figures returns exactly these keys.
PLAN_FIGURES = (
    "model", "form", "gpu", "layout", "tp", "pp", "replicas", "min_replicas", "gpus_per_replica", "gpus_total",
    "nodes_per_replica", "gpus_per_node", "interconnect", "per_copy", "peak_concurrency", "implied_concurrency",
    "cold_start_s", "ramp_s", "traffic_pattern", "gpu_bill_usd_month", "idle_usd_month", "idle_share",
    "total_usd_month", "managed_total_usd_month", "tp_reason", "job_hours", "job_usd",
)
TEXT_FIELDS = ("title", "cause", "fix")  # a cause's texts (Jinja2)
MAX_WALKS = 100_000  # distinct walks the integrity check enumerates (the bundled tree has a few dozen)


def _text() -> Any:
    return field(metadata={"min_length": 1})


def _section() -> Any:
    return field(metadata={"pattern": SECTION_PATTERN})


@dataclass(frozen=True, slots=True, kw_only=True)
class Option(_Strict):
    """One answer a check accepts: `value` is what `--answer` takes, `label` what a terminal shows."""

    value: str = field(metadata={"pattern": ID_PATTERN})
    label: str = _text()


@dataclass(frozen=True, slots=True, kw_only=True)
class Check(_Strict):
    """A question with fixed choices; its node id is the answer's key, compared by the edges' conditions."""

    kind: Literal["check"]
    prompt: str = _text()
    help: str = _text()  # what the guide says about it, with §
    section: str = _section()
    choices: list[Option] = field(metadata={"min_length": 2})
    next: list[Edge] = field(metadata={"min_length": 1})


@dataclass(frozen=True, slots=True, kw_only=True)
class Cause(_Strict):
    """A leaf: the cause and its fix (Jinja2 over the answers and `plan`). `found` is false for a leaf that ends the
    walk without one of §11's causes (ruled out, or a figure to measure first)."""

    kind: Literal["cause"]
    title: str = _text()
    cause: str = _text()
    fix: str = _text()
    section: str = _section()
    found: bool = True


DoctorNode = Annotated[Union[Check, Cause], _Tagged("kind")]


@dataclass(frozen=True, slots=True, kw_only=True)
class Symptom(_Strict):
    """A row of §11: what the user sees, and the check the walk starts at."""

    id: str = field(metadata={"pattern": ID_PATTERN})
    label: str = _text()
    help: str = _text()
    section: str = _section()
    start: str
    # the plans it can happen to: an online service, an offline batch job, a managed API (with a plan.json, the
    # others are not offered: a batch job has no rolling upgrade, a managed API no cards to split)
    applies: list[Literal["online", "offline", "managed"]] = field(
        default_factory=lambda: ["online", "offline", "managed"], metadata={"min_length": 1})


@dataclass(frozen=True, slots=True, kw_only=True)
class DoctorTree(_Strict):
    version: Literal[1]
    title: str
    symptoms: list[Symptom] = field(metadata={"min_length": 1})
    nodes: dict[str, DoctorNode]

    def symptom(self, symptom_id: str) -> Symptom | None:
        return next((s for s in self.symptoms if s.id == symptom_id), None)

    @property
    def checks(self) -> dict[str, Check]:
        return {k: n for k, n in self.nodes.items() if isinstance(n, Check)}


class Walk(NamedTuple):
    """One way through the tree: the symptom, the (check, answer) pairs in order, the cause reached."""

    symptom: str
    answers: tuple[tuple[str, str], ...]
    leaf: str


def default_doctor_path() -> Path:
    """trees/doctor.yaml, from the installed package or the source checkout."""
    return bundled_file("doctor.yaml", "doctor tree", "the bundled troubleshooting tree")


@lru_cache(maxsize=1)
def bundled_doctor_tree() -> DoctorTree:
    """The bundled doctor tree, loaded and checked once per process (frozen: safe to share)."""
    return load_doctor_tree()


def load_doctor_tree(path: Path | None = None) -> DoctorTree:
    path = path or default_doctor_path()
    data = read_bytes(path, "doctor tree")
    return validate_doctor_tree(parse_yaml_bytes(data, "doctor tree", str(path)), path.name)


def validate_doctor_tree(raw: Any, name: str = "doctor.yaml") -> DoctorTree:
    """A doctor tree file's data → a checked DoctorTree; every problem is one InputError naming the node or key."""
    from pydantic import TypeAdapter, ValidationError

    try:
        tree = TypeAdapter(DoctorTree).validate_python(raw)
    except ValidationError as e:
        err = e.errors()[0]
        loc = list(err["loc"])
        if len(loc) > 2 and loc[0] == "nodes" and loc[2] in NODE_KINDS:
            del loc[2]  # the discriminator's tag: the node's own `kind` says it
        where = ".".join(str(p) for p in loc if not str(p).startswith("function-"))
        value = "missing" if err["type"] == "missing" else err.get("input", "")
        raise InputError(f"{name}: {where}", value, err["msg"]) from None
    check_doctor_integrity(tree, name)
    return tree


def check_doctor_integrity(tree: DoctorTree, name: str = "doctor.yaml") -> None:
    """What the schema alone cannot check; the first problem is raised as one InputError."""
    nodes = tree.nodes
    checks = tree.checks
    for node_id in nodes:
        if not re.fullmatch(ID_PATTERN, node_id):
            raise InputError(f"{name}: nodes", node_id, "expected lowercase letters, digits and _ (a check id is an "
                                                         "--answer key)")
    seen: set[str] = set()
    for i, s in enumerate(tree.symptoms):
        if s.id in seen:
            raise InputError(f"{name}: symptoms[{i}].id", s.id, "each symptom id once")
        seen.add(s.id)
        if s.start not in nodes:
            raise InputError(f"{name}: symptoms[{i}].start", s.start, "expected the id of a node")
    for check_id, check in checks.items():
        for i, edge in enumerate(check.next):
            if edge.goto not in nodes:
                raise InputError(f"{name}: nodes.{check_id}.next[{i}].goto", edge.goto, "expected the id of a node")
        _check_edges(check_id, check, checks, name)
    for node_id, node in nodes.items():
        if isinstance(node, Cause):
            for text_field in TEXT_FIELDS:
                _check_text(getattr(node, text_field), f"{name}: nodes.{node_id}.{text_field}", checks)
    every = walks(tree, name)
    reached = {w.leaf for w in every}
    visited = {s.start for s in tree.symptoms} | {k for w in every for k, _ in w.answers}
    for node_id in nodes:
        if node_id not in visited | reached:
            raise InputError(f"{name}: nodes.{node_id}", node_id, "no symptom's walk reaches this node")


def _check_edges(node_id: str, node: Check, checks: dict[str, Check], name: str) -> None:
    values = [c.value for c in node.choices]
    for value in values:
        if values.count(value) > 1:
            raise InputError(f"{name}: nodes.{node_id}.choices", value, "each choice value once")
    for i, edge in enumerate(node.next):
        where = f"{name}: nodes.{node_id}.next[{i}]"
        if edge.when is None and i != len(node.next) - 1:
            raise InputError(where, describe(edge.when), "an edge without `when` is the catch-all and must come last")
        for cmp in compares(edge.when):
            target = checks.get(cmp.var)
            if target is None:
                raise InputError(f"{where}: {cmp.var}", cmp.var, "a condition compares the answer of a check: "
                                 "expected the id of a check")
            allowed = [c.value for c in target.choices]
            for v in cmp.value if isinstance(cmp.value, list) else [cmp.value]:
                if v not in allowed:
                    raise InputError(f"{where}: {cmp.var}", v, "expected one of " + ", ".join(allowed))
    for value in values:  # every answer goes somewhere (edges may also read earlier answers: walks() checks those)
        if not any(evaluate(e.when, {node_id: value}) for e in node.next):
            raise InputError(f"{name}: nodes.{node_id}.choices", value,
                             "no edge takes this answer; add an edge for it, or a catch-all edge last")


def _check_text(text: str, where: str, checks: dict[str, Check]) -> None:
    """A leaf text parses as Jinja2 and reads only check ids and `plan.<figure>` (PLAN_FIGURES)."""
    if "{" not in text:
        return
    from jinja2 import TemplateSyntaxError, meta
    from jinja2 import nodes as jinja_nodes

    from wizard.tree.text import environment

    try:
        ast = environment().parse(text)
    except TemplateSyntaxError as e:
        raise InputError(where, text, f"is not valid Jinja2 ({e.message})") from None
    for var in sorted(meta.find_undeclared_variables(ast) - set(checks) - {"plan"}):
        raise InputError(where, var, "a text reads check ids and plan.<figure> only")
    for getattr_node in ast.find_all(jinja_nodes.Getattr):
        inner = getattr_node.node
        if isinstance(inner, jinja_nodes.Name) and inner.name == "plan" and getattr_node.attr not in PLAN_FIGURES:
            raise InputError(where, f"plan.{getattr_node.attr}", "expected one of plan." + ", plan.".join(PLAN_FIGURES))


def walks(tree: DoctorTree, name: str = "doctor.yaml") -> list[Walk]:
    """Every way through the tree: each symptom, each choice of each check met, to the cause it ends at. Raises an
    InputError on a missing goto, a cycle, or a dead end (no edge for an answer given the answers before it)."""
    out: list[Walk] = []
    for symptom in tree.symptoms:
        stack: list[tuple[str, tuple[tuple[str, str], ...]]] = [(symptom.start, ())]
        while stack:
            node_id, answers = stack.pop()
            node = tree.nodes.get(node_id)
            if node is None:
                where = f"nodes.{answers[-1][0]}.next" if answers else f"symptom {symptom.id}: start"
                raise InputError(f"{name}: {where}", node_id, "expected the id of a node")
            if isinstance(node, Cause):
                out.append(Walk(symptom.id, answers, node_id))
                if len(out) > MAX_WALKS:
                    raise InputError(name, tree.title, f"more than {MAX_WALKS:,} walks; expected a small tree")
                continue
            on_path = [k for k, _ in answers]
            if node_id in on_path:
                loop = " → ".join([*on_path[on_path.index(node_id):], node_id])
                raise InputError(f"{name}: nodes.{on_path[-1]}.next", node_id, f"a cycle ({loop})")
            env = dict(answers)
            for choice in reversed(node.choices):
                env[node_id] = choice.value
                edge = next((e for e in node.next if evaluate(e.when, env)), None)
                if edge is None:
                    raise InputError(f"{name}: nodes.{node_id}", choice.value,
                                     f"no edge takes this answer after {dict(answers)}")
                stack.append((edge.goto, (*answers, (node_id, choice.value))))
    return out
