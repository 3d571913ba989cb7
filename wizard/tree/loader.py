"""Load a tree file: YAML → strict schema → referential integrity (every goto exists, compared values exist).

Pydantic validates through TypeAdapters over the schema's dataclasses, built on first use; a tree that passed is
cached by its bytes (tree/cache.py), so a warm start imports no pydantic at all.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from typing import Any

from wizard.errors import InputError
from wizard.tree import cache
from wizard.tree.schema import RULE_FIELDS, AnswerRule, Compute, ExposureMap, Question, Recommendation, Tree, compares
from wizard.yaml_file import parse_yaml_bytes, read_bytes

NODE_KINDS = ("question", "compute", "recommendation")  # the tags in a validation error's location

PACKAGE_TREES = Path(__file__).resolve().parent.parent / "trees"  # inside the wheel (force-included)
SOURCE_TREES = Path(__file__).resolve().parent.parent.parent / "trees"  # a source checkout / editable install


def bundled_file(name: str, field: str = "tree", what: str = "the bundled tree") -> Path:
    """trees/<name>, from the installed package or the source checkout."""
    for folder in (PACKAGE_TREES, SOURCE_TREES):
        if (folder / name).is_file():
            return folder / name
    raise InputError(field, name, f"{what} is missing from this installation")


def default_tree_path() -> Path:
    """trees/deployment.yaml, from the installed package or the source checkout."""
    return bundled_file("deployment.yaml")


@lru_cache(maxsize=1)
def bundled_tree() -> Tree:
    """The bundled tree, loaded and checked once per process (a Tree is frozen: safe to share)."""
    return load_tree()


def load_tree(path: Path | None = None) -> Tree:
    """Parse and check a tree file (or take it from the cache of checked trees); every problem is one InputError
    naming the node or key."""
    path = path or default_tree_path()
    data = read_bytes(path, "tree")
    key = cache.key_for(data)
    tree = cache.load(key)
    if tree is None:
        tree = validate_tree(parse_yaml_bytes(data, "tree", str(path)), path.name)
        cache.store(key, tree)
    return tree


def adapter(cls: Any) -> Any:
    """pydantic's TypeAdapter of a schema type (imports pydantic: validation and JSON Schema only)."""
    from pydantic import TypeAdapter

    return TypeAdapter(cls)


def tree_json_schema() -> dict[str, Any]:
    """The published JSON Schema of a tree file (trees/deployment.schema.json), keys as written (`not`)."""
    return adapter(Tree).json_schema(by_alias=True)


def validate_tree(raw: Any, name: str) -> Tree:
    """A tree file's data → a checked Tree; every problem is one InputError naming the node or key."""
    from pydantic import ValidationError

    try:
        tree = adapter(Tree).validate_python(with_answer_rules(raw, name))
    except ValidationError as e:
        err = e.errors()[0]
        loc = list(err["loc"])
        if len(loc) > 2 and loc[0] == "nodes" and loc[2] in NODE_KINDS:
            del loc[2]  # the discriminator's tag: the node's own `kind` says it
        where = ".".join(str(p) for p in loc if not str(p).startswith("function-"))
        raise InputError(f"{name}: {where}", err.get("input", ""), err["msg"]) from None
    check_integrity(tree, name)
    return tree


def with_answer_rules(raw: Any, name: str) -> Any:
    """The raw tree with each question node's rule fields (type, bounds, choices) filled in from `answers:`, the
    one place they are written; a node that restates one, or asks a key `answers:` lacks, is refused."""
    if not isinstance(raw, dict) or not isinstance(raw.get("answers"), dict) or not isinstance(raw.get("nodes"), dict):
        return raw  # the schema names what is missing
    from pydantic import ValidationError

    try:
        rules = adapter(dict[str, AnswerRule]).validate_python(raw["answers"])
    except ValidationError as e:
        err = e.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise InputError(f"{name}: answers.{where}", err.get("input", ""), err["msg"]) from None
    nodes = {}
    for node_id, node in raw["nodes"].items():
        if isinstance(node, dict) and node.get("kind") == "question":
            var = node.get("var")
            if not isinstance(var, str) or var not in rules:
                raise InputError(f"{name}: nodes.{node_id}.var", var, "expected a key defined under answers:")
            restated = [k for k in RULE_FIELDS if k in node]
            if restated:
                raise InputError(f"{name}: nodes.{node_id}.{restated[0]}", node[restated[0]],
                                 f"state it once, under answers.{var}")
            rule = rules[var]
            node = {**{k: getattr(rule, k) for k in RULE_FIELDS}, "default": rule.default, **node}
        nodes[node_id] = node
    return {**raw, "nodes": nodes}


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
        if isinstance(node, Question):
            for j, d in enumerate(node.default_if):
                for cmp in compares(d.when):
                    _check_value(questions, cmp, f"{name}: nodes.{node_id}.default_if[{j}]")
                if node.choices and d.value not in {c.value for c in node.choices}:
                    raise InputError(f"{name}: nodes.{node_id}.default_if[{j}].value", d.value,
                                     "expected one of " + ", ".join(str(c.value) for c in node.choices))
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
