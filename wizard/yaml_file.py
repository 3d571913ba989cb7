"""Read YAML a user gave (answers, `--set` values, a tree, the session file): every failure is one InputError.

YAML builds values itself, and some of them are traps: an alias bomb ("billion laughs") expands a few hundred
bytes into billions of nodes, `!!int abc` or `2024-02-30` make PyYAML's own constructors raise ValueError, an
integer of 5,000 digits exceeds Python's int/str limit. So the text is capped by size, the composed node graph
is measured with aliases expanded (without expanding them) before anything is constructed, and every exception
of construction becomes one line naming the option and the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from wizard.errors import InputError

# libyaml's safe loader when PyYAML was built with it: the same safe subset, ~7x faster (the tree: 19 vs 131 ms)
BASE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
MAX_BYTES = 4 * 2**20  # an answers file is a few hundred bytes, the bundled tree ~40 kB
MAX_NODES = 200_000  # nodes after alias expansion (the tree: ~9,000)
MERGE_TAG = "tag:yaml.org,2002:merge"


class DuplicateKey(yaml.YAMLError):
    """A key written twice in one mapping: YAML keeps the last silently, a user meant one of them."""


class TooLarge(yaml.YAMLError):
    """The document expands beyond MAX_NODES nodes (an alias bomb) or refers to itself."""


def expanded_size(root: yaml.Node, limit: int = MAX_NODES) -> int:
    """Nodes of `root` with every alias expanded, computed once per node (shared nodes are not walked again);
    raises TooLarge past `limit` or on a node that contains itself."""
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            on_path.discard(key)
            children = _children(node)
            sizes[key] = 1 + sum(sizes[id(c)] for c in children)
            if sizes[key] > limit:
                raise TooLarge(f"it expands to more than {limit:,} values (an alias bomb?)")
            continue
        if key in sizes:
            continue
        if key in on_path:
            raise TooLarge("an alias refers to the value that contains it")
        on_path.add(key)
        stack.append((node, True))
        stack.extend((c, False) for c in _children(node) if id(c) not in sizes)
    return sizes[id(root)]


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []


MAX_NUMBER_TEXT = 64  # characters: PyYAML builds `1:2:3:...` (base 60) with big-int arithmetic, quadratic in length


class StrictSafeLoader(BASE_LOADER):  # type: ignore[misc,valid-type]
    """The safe loader, refusing duplicate keys and documents that expand beyond MAX_NODES."""

    def construct_yaml_int(self, node):  # noqa: ANN001, ANN201
        if ":" in str(node.value) and len(node.value) > MAX_NUMBER_TEXT:
            raise yaml.constructor.ConstructorError(None, None, "a base-60 number of more than 64 characters",
                                                    node.start_mark)
        return super().construct_yaml_int(node)

    def construct_yaml_float(self, node):  # noqa: ANN001, ANN201
        if ":" in str(node.value) and len(node.value) > MAX_NUMBER_TEXT:
            raise yaml.constructor.ConstructorError(None, None, "a base-60 number of more than 64 characters",
                                                    node.start_mark)
        return super().construct_yaml_float(node)

    check_aliases = True  # parse_yaml turns it off for a text without "&": no anchor, so no alias can expand

    def construct_document(self, node):  # noqa: ANN001, ANN201 (PyYAML's signature)
        if self.check_aliases:
            expanded_size(node)
        return super().construct_document(node)

    def construct_mapping(self, node, deep=False):  # noqa: ANN001, ANN201
        seen = set()
        for key_node, _ in node.value:
            if key_node.tag == MERGE_TAG:
                continue  # `<<: *base` merges as YAML says (keys written here override merged ones)
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, (str, int, float, bool)):
                continue  # unhashable or composite keys: left to the schema that reads the mapping
            if key in seen:
                raise DuplicateKey(f"duplicate key {short(key)} (line {key_node.start_mark.line + 1})")
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def short(value: Any) -> str:
    from wizard.errors import value_text

    return repr(value_text(value))


def parse_yaml(text: str, field: str, where: str) -> Any:
    """YAML text → Python values; every failure one InputError naming `field` and `where` (a file or a value)."""
    if len(text) > MAX_BYTES:
        raise InputError(field, where, f"is larger than {MAX_BYTES // 2**20} MiB; expected a small YAML file")
    try:
        loader = StrictSafeLoader(text)
        try:
            loader.check_aliases = "&" in text  # the tree (~9,000 nodes) has none: its walk cost 21 ms
            return loader.get_single_data()
        finally:
            loader.dispose()
    except yaml.YAMLError as e:
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise InputError(field, where, f"is not valid YAML ({first})") from None
    except RecursionError:
        raise InputError(field, where, "is not valid YAML (nested too deeply)") from None
    except Exception as e:  # noqa: BLE001
        # PyYAML's constructors raise what they meet: ValueError (`!!int abc`, `2024-02-30`, an integer beyond
        # 4,300 digits), KeyError (`!!bool maybe`), AttributeError (`!!timestamp x`), IndexError (an empty `!!int`)
        reason = " ".join(str(e).split())[:120] or type(e).__name__
        if "digits" in reason and "integer" in reason:
            reason = "an integer of more than 4,300 digits"
        raise InputError(field, where, f"has a value YAML cannot build ({reason})") from None


def read_bytes(path: Path, field: str) -> bytes:
    """A small file's bytes (a YAML file, capped); every failure one InputError naming `field` and the path."""
    from wizard.capped_read import TooBig, read_capped

    try:
        if path.is_dir():
            raise InputError(field, str(path), "is a folder; expected a YAML file")
        return read_capped(path, MAX_BYTES)  # a FIFO or /dev/zero must not hang or fill memory
    except TooBig:
        raise InputError(field, str(path), f"is larger than {MAX_BYTES // 2**20} MiB; expected a small YAML file") from None
    except OSError as e:
        raise InputError(field, str(path), f"could not be read ({e.strerror or type(e).__name__})") from None
    except ValueError:  # a NUL byte in the path
        raise InputError(field, repr(str(path)), "expected a file path") from None


def parse_yaml_bytes(raw: bytes, field: str, where: str) -> Any:
    """UTF-8 YAML bytes → Python values (parse_yaml), refusing other encodings in one line."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(field, where, "is not UTF-8 text") from None
    return parse_yaml(text, field, where)


def read_yaml(path: Path, field: str) -> Any:
    return parse_yaml_bytes(read_bytes(path, field), field, str(path))


StrictSafeLoader.add_constructor("tag:yaml.org,2002:int", StrictSafeLoader.construct_yaml_int)
StrictSafeLoader.add_constructor("tag:yaml.org,2002:float", StrictSafeLoader.construct_yaml_float)
