"""Load a tree file: YAML → strict schema → referential integrity (every goto exists, compared values exist)."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from wizard.errors import InputError
from wizard.yaml_file import read_yaml
from wizard.tree.schema import Compute, ExposureMap, Question, Recommendation, Tree, compares

PACKAGE_TREES = Path(__file__).resolve().parent.parent / "trees"  # inside the wheel (force-included)
SOURCE_TREES = Path(__file__).resolve().parent.parent.parent / "trees"  # a source checkout / editable install


def default_tree_path() -> Path:
    """trees/deployment.yaml, from the installed package or the source checkout."""
    for folder in (PACKAGE_TREES, SOURCE_TREES):
        if (folder / "deployment.yaml").is_file():
            return folder / "deployment.yaml"
    raise InputError("tree", "deployment.yaml", "the bundled tree is missing from this installation")


def load_tree(path: Path | None = None) -> Tree:
    """Parse and check a tree file; every problem is one InputError naming the node or key."""
    path = path or default_tree_path()
    raw = read_yaml(path, "tree")
    try:
        tree = Tree.model_validate(raw)
    except ValidationError as e:
        err = e.errors()[0]
        where = ".".join(str(p) for p in err["loc"] if not str(p).startswith(("Question", "Compute", "Recommendation", "function-")))
        raise InputError(f"{path.name}: {where}", err.get("input", ""), err["msg"]) from None
    check_integrity(tree, path.name)
    return tree


def check_integrity(tree: Tree, name: str = "tree") -> None:
    """References that the schema alone cannot check."""
    nodes = tree.nodes
    if tree.start not in nodes:
        raise InputError(f"{name}: start", tree.start, "expected the id of a node")
    questions = {n.var: n for n in nodes.values() if isinstance(n, Question)}
    for node_id, node in nodes.items():
        edges = node.next if isinstance(node, (Question, Compute)) else []
        for i, edge in enumerate(edges):
            if edge.goto not in nodes:
                raise InputError(f"{name}: nodes.{node_id}.next[{i}].goto", edge.goto, "expected the id of a node")
            for cmp in compares(edge.when):
                _check_value(questions, cmp, f"{name}: nodes.{node_id}.next[{i}]")
        if isinstance(node, Question) and node.type == "choice" and not node.choices and not node.choices_from:
            raise InputError(f"{name}: nodes.{node_id}.choices", "[]", "a choice question needs choices or choices_from")
        if isinstance(node, Recommendation) and isinstance(node.exposure, ExposureMap):
            q = questions.get(node.exposure.var)
            if q is None or q.type != "choice":
                raise InputError(f"{name}: nodes.{node_id}.exposure.var", node.exposure.var, "expected the var of a choice question")
            missing = {str(c.value) for c in q.choices} - set(node.exposure.map)
            if missing:
                raise InputError(f"{name}: nodes.{node_id}.exposure.map", sorted(missing), "every choice needs an exposure")
    for i, rule in enumerate(tree.warnings):
        for cmp in compares(rule.when):
            _check_value(questions, cmp, f"{name}: warnings[{i}] ({rule.id})")
    for alt in tree.alternatives:
        for j, reason in enumerate(alt.reasons):
            for cmp in compares(reason.when):
                _check_value(questions, cmp, f"{name}: alternatives.{alt.form}[{j}]")


def _check_value(questions: dict[str, Question], cmp, where: str) -> None:
    """A value compared with a choice question must be one of its choices (catches typos like 'kubernets')."""
    q = questions.get(cmp.var)
    if q is None or q.type != "choice" or q.choices_from:
        return
    allowed = {c.value for c in q.choices}
    values = cmp.value if isinstance(cmp.value, list) else [cmp.value]
    for v in values:
        if v not in allowed:
            raise InputError(f"{where}: {cmp.var}", v, "expected one of " + ", ".join(str(a) for a in sorted(allowed, key=str)))
