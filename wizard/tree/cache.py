"""A validated tree, kept between runs so `plan` does not build pydantic's validators on every start.

Validating trees/deployment.yaml means building pydantic schemas for every node class (~50 ms) after importing
pydantic (~100 ms); the result depends only on the tree file and the code that defines and checks it. So the
validated Tree is pickled under a key made of exactly those bytes: the tree file, the code that parses and checks it
(tree/schema.py, tree/loader.py, yaml_file.py, errors.py, this module), the Python version and the versions of
PyYAML and pydantic that parse and validate it. Another tree or another version of any of them is another key.

Where: $WIZARD_CACHE_DIR, else $XDG_CACHE_HOME/llm-deploy-wizard, else ~/.cache/llm-deploy-wizard. A pickle can
run code when loaded, so a cached file is read only when it and its folder belong to this user and nobody else
may write them, and the unpickler accepts no global but the tree's own node classes. Any failure (read-only
home, full disk, a foreign file) means no cache, never an error: the tree is then validated as before.
"""

from __future__ import annotations

import hashlib
import io
import os
import pickle
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any

from wizard.capped_read import read_capped

MAX_BYTES = 4 * 2**20  # a cached tree is ~30 KB; anything near this is not ours
KEEP = 8  # cached trees kept (the bundled one, a few --tree files, the last versions of the code)
# the code whose behaviour the cached object depends on, relative to the wizard package
_CODE = ("tree/schema.py", "tree/loader.py", "tree/cache.py", "yaml_file.py", "errors.py")


def cache_dir() -> Path:
    if os.environ.get("WIZARD_CACHE_DIR"):
        return Path(os.environ["WIZARD_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "llm-deploy-wizard"


def key_for(tree_bytes: bytes) -> str | None:
    """The cache key of a tree file's bytes: sha256 over them, the tree code's sources and the Python version
    (None when a source cannot be read, e.g. an installation without .py files: then there is no cache)."""
    h = hashlib.sha256(tree_bytes)
    package = Path(__file__).resolve().parent.parent
    try:
        for name in _CODE:
            h.update(name.encode() + b"\0" + (package / name).read_bytes())
        h.update(_pydantic_version_file())
    except OSError:
        return None
    import yaml

    h.update(f"{sys.version}\0{yaml.__version__}".encode())
    return h.hexdigest()[:40]


def _pydantic_version_file() -> bytes:
    """pydantic's version.py, found without importing pydantic (importing it is the cost the cache avoids)."""
    import importlib.util

    spec = importlib.util.find_spec("pydantic")
    if spec is None or spec.origin is None:
        raise OSError("pydantic is not installed")
    return (Path(spec.origin).parent / "version.py").read_bytes()


class _TreeUnpickler(pickle.Unpickler):
    """Only the tree's node classes may be named by a cached file (Python docs, "Restricting Globals")."""

    def find_class(self, module: str, name: str) -> Any:
        from wizard.tree import schema

        if module == schema.__name__ and name in NODE_CLASSES:
            return getattr(schema, name)
        raise pickle.UnpicklingError(f"{module}.{name} is not a tree class")


NODE_CLASSES = frozenset({"Compare", "All", "Any_", "Not", "Edge", "Choice", "AnswerRule", "Question", "Output",
                          "Compute", "DefaultIf", "ExposureMap", "Recommendation", "WarningRule", "WhyNot", "Alternative", "UpperBound", "Tree"})


def _private(st: os.stat_result) -> bool:
    """Owned by this user, writable by no one else."""
    return st.st_uid == os.getuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def load(key: str | None) -> Any | None:
    """The cached tree for this key, or None (absent, foreign, unreadable or not a tree)."""
    if key is None:
        return None
    folder = cache_dir()
    path = folder / f"tree-{key}.pickle"
    try:
        if not _private(os.stat(folder)) or not _private(os.lstat(path)) or not stat.S_ISREG(os.lstat(path).st_mode):
            return None
        data = read_capped(path, MAX_BYTES)
        tree = _TreeUnpickler(io.BytesIO(data)).load()
    except Exception:  # noqa: BLE001 — a cache that cannot be read is no cache
        return None
    from wizard.tree.schema import Tree

    return tree if isinstance(tree, Tree) else None


def store(key: str | None, tree: Any) -> None:
    """Keep a validated tree under its key (atomically: a reader sees the whole file or none); errors are ignored."""
    if key is None:
        return
    folder = cache_dir()
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not _private(os.stat(folder)):
            return
        data = pickle.dumps(tree, protocol=pickle.HIGHEST_PROTOCOL)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tree-", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, folder / f"tree-{key}.pickle")
        except BaseException:
            os.unlink(tmp)
            raise
        old = sorted(folder.glob("tree-*.pickle"), key=lambda p: p.stat().st_mtime, reverse=True)[KEEP:]
        for stale in old:
            stale.unlink()
    except Exception:  # noqa: BLE001 — a cache that cannot be written is no cache
        return
