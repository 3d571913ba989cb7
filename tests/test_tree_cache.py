"""The cache of validated trees (wizard/tree/cache.py): a warm start builds no pydantic validator, and nothing in
the cache folder can change a plan, run code or fail a command."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from wizard.errors import InputError
from wizard.tree import cache
from wizard.tree.loader import default_tree_path, load_tree
from wizard.tree.schema import Tree

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def folder(tmp_path, monkeypatch):
    path = tmp_path / "cache"
    monkeypatch.setenv("WIZARD_CACHE_DIR", str(path))
    return path


def cached_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("tree-*.pickle"))


def test_a_checked_tree_is_cached_once_and_read_back_equal(folder):
    first = load_tree()
    files = cached_files(folder)
    assert len(files) == 1 and oct(folder.stat().st_mode & 0o777) == "0o700"
    assert oct(files[0].stat().st_mode & 0o777) == "0o600"
    second = load_tree()
    assert second == first and second is not first  # read from the file, equal to the validated one
    assert cached_files(folder) == files


def test_a_warm_start_imports_no_pydantic(folder):
    """The point of the cache: `plan --json` on a warm cache builds no pydantic schema (issue #11's budget)."""
    code = ("import sys; from wizard.cli import main; "
            "code = main(['plan', '--answers', 'tests/scenarios/tiny_model.yaml', '--json']); "
            "print('pydantic' in sys.modules, code, file=sys.stderr)")
    env = {**os.environ, "WIZARD_CACHE_DIR": str(folder), "HF_HUB_OFFLINE": "1"}
    cold = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    warm = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert cold.stderr.split()[-2:] == ["True", "0"], cold.stderr  # the first run validates with pydantic
    assert warm.stderr.split()[-2:] == ["False", "0"], warm.stderr
    assert cold.stdout == warm.stdout  # the same plan either way


def test_a_pickle_naming_any_other_global_is_refused_without_running_it(folder, tmp_path):
    load_tree()
    [path] = cached_files(folder)
    marker = tmp_path / "ran"

    class Evil:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    path.write_bytes(pickle.dumps(Evil()))
    tree = load_tree()
    assert isinstance(tree, Tree) and not marker.exists()
    assert cache.load(path.stem.removeprefix("tree-")) is not None  # validated again and rewritten


@pytest.mark.parametrize("damage", ["garbage", "other object", "group writable", "symlink", "foreign folder mode"])
def test_a_damaged_or_foreign_cache_is_no_cache(folder, damage, tmp_path):
    good = load_tree()
    [path] = cached_files(folder)
    key = path.stem.removeprefix("tree-")
    if damage == "garbage":
        path.write_bytes(b"\x80\x05not a pickle")
    elif damage == "other object":
        path.write_bytes(pickle.dumps({"nodes": {}}))
    elif damage == "group writable":
        path.chmod(0o620)
    elif damage == "symlink":
        target = tmp_path / "elsewhere.pickle"
        target.write_bytes(path.read_bytes())
        path.unlink()
        path.symlink_to(target)
    else:
        folder.chmod(0o777)
    assert cache.load(key) is None
    assert load_tree() == good  # validated from the file instead


def test_a_changed_tree_is_validated_not_taken_from_the_cache(folder, tmp_path):
    load_tree()
    broken = tmp_path / "tree.yaml"
    broken.write_text(default_tree_path().read_text().replace("start: ", "start: nowhere_", 1))
    with pytest.raises(InputError, match="start"):
        load_tree(broken)


def test_an_unwritable_cache_folder_fails_nothing(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("WIZARD_CACHE_DIR", str(blocker / "cache"))  # cannot be created
    assert isinstance(load_tree(), Tree)


def test_old_entries_are_pruned(folder):
    load_tree()
    [keep] = cached_files(folder)
    for i in range(cache.KEEP + 3):
        stale = folder / f"tree-{i:040d}.pickle"
        stale.write_bytes(keep.read_bytes())
        os.utime(stale, (1_000_000 + i, 1_000_000 + i))  # older than the real one
    keep.unlink()
    load_tree()
    assert len(cached_files(folder)) == cache.KEEP
    assert (folder / f"tree-{cache.key_for(default_tree_path().read_bytes())}.pickle").exists()
