"""Regenerate a starter repo the user may have edited, as `copier update` does: `plan --out DIR --dry-run`,
`--diff` and `--update`.

The base. A three-way merge needs what the tool wrote last time, so every starter repo keeps a copy of each file
as generated under `.llm-deploy-wizard/base/<path>` (BASE_DIR), listed in the marker like every file the tool
writes. It is plain text inside the repo, so it survives `git clone`; `diff .llm-deploy-wizard/base/k8s/x.yaml
k8s/x.yaml` shows what you changed. It is a copy, not a re-render of the recorded answers: a newer tool renders
the same answers differently, and the answers file is one of the files you edit. `check` and the starter repo's
own tools skip hidden folders, and the copies are never executable.

The states of a file (what --dry-run lists, --update reports, and --diff shows the change of):
  new          the plan writes it and the folder has none: written
  unchanged    the folder's file is already the new text: left alone
  changed      you had not edited it (it is the base) and the new plan changes it: replaced
  user-edited  you edited it and the new plan writes the base again: yours is kept (so is an answers.yaml that
               records the same answers as the new one, with your comments and order)
  merged       you and the new plan changed different lines: merged (merge3)
  conflict     you and the new plan changed the same lines: both written between conflict markers
               (`<<<<<<< yours` / `=======` / `>>>>>>> llm-deploy-wizard`); also a file you deleted that the new
               plan changes (written again), and a file without a base copy that differs from the new text
  removed      the new plan no longer writes it and you had not edited it: deleted
  kept         the new plan no longer writes it and you edited it (or there is no base copy to tell): kept
  deleted      you deleted it and the new plan does not change it: stays deleted
  skipped      it is a symbolic link, a folder, not UTF-8 text or over 4 MiB, or a folder on its way is a link:
               never written through, not updated (the new text is recorded as the base)
A file without a base copy (a repo written before the tool kept one, or a file of yours at a path the plan now
writes) is compared two-way: equal is unchanged, different is a conflict whose blocks are the stretches where
the two differ (merge2), since nothing says which side changed them; one no longer generated is kept.

--update writes each file atomically (a temporary file renamed over it, keeping the file's mode; new scripts in
serve/ and bench/ executable, as the writer makes them), then deletes the removed files, then refreshes the base
copies, then the marker, last: a run killed half-way leaves the old base, and the next --update finds the files
it already wrote equal to the new text. Only the files the tool writes are touched: anything else in the folder
(.git, your own files) stays, and the folder may be the current one. It holds the writer's lock (one writer at
a time beside the folder).
"""

from __future__ import annotations

import difflib
import os
import stat
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import NamedTuple

from wizard.artifacts.writer import MARKER, _absolute, _parent_lock, _reason, marker_text, read_marker, recover
from wizard.errors import InputError
from wizard.session.merge3 import merge2, merge3, split_lines

BASE_DIR = ".llm-deploy-wizard/base"
MAX_TEXT = 4 * 2**20  # bytes of a file to merge: a generated one is a few kB
ATTENTION = ("conflict", "skipped")  # states that need the user: --update exits 1


class Change(NamedTuple):
    path: str  # relative to the repo
    state: str  # one of the states above
    old: str | None  # the folder's text (None: no such file, or not readable as text)
    text: str | None  # what --update leaves there (None: no file, or left as it is)
    note: str  # why, in a few words ("" for unchanged)
    conflicts: int = 0  # conflict blocks in `text`


class Preview(NamedTuple):
    folder: Path  # absolute
    changes: list[Change]  # one per file, sorted by path
    listing: list[str]  # what the marker lists afterwards (without the marker itself)

    def counts(self) -> Counter[str]:
        return Counter(c.state for c in self.changes)

    def attention(self) -> list[Change]:
        return [c for c in self.changes if c.state in ATTENTION]


def with_base(files: dict[str, str]) -> dict[str, str]:
    """The repo's files plus their base copies: what `plan --out` writes, so a later --update can merge."""
    return {**files, **{f"{BASE_DIR}/{path}": text for path, text in files.items()}}


def _safe_rel(rel: str) -> bool:
    """A marker entry that names a file inside the repo (a hand-edited marker must not reach outside)."""
    p = PurePosixPath(rel)
    return bool(rel) and not p.is_absolute() and ".." not in p.parts and str(p) == rel and rel != "."


class _Read(NamedTuple):
    kind: str  # "missing", "text", or "other" (exists, but is not merged: why)
    text: str | None = None
    why: str = ""


def _read(root: Path, rel: str) -> _Read:
    """The file at `rel` under `root`, never through a symbolic link."""
    path = root
    parts = PurePosixPath(rel).parts
    for i, part in enumerate(parts):
        path = path / part
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            return _Read("missing")
        except OSError as e:
            return _Read("other", why=f"cannot be read ({_reason(e)})")
        shown = "/".join(parts[:i + 1])
        if stat.S_ISLNK(st.st_mode):
            return _Read("other", why=f"{shown} is a symbolic link: never written through")
        if i < len(parts) - 1 and not stat.S_ISDIR(st.st_mode):
            return _Read("other", why=f"{shown} is not a folder")
    if stat.S_ISDIR(st.st_mode):
        return _Read("other", why="is a folder")
    if not stat.S_ISREG(st.st_mode):
        return _Read("other", why="is not a regular file")
    if st.st_size > MAX_TEXT:
        return _Read("other", why=f"is larger than {MAX_TEXT // 2**20} MiB")
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_TEXT + 1)
        return _Read("text", raw.decode("utf-8"))
    except UnicodeDecodeError:
        return _Read("other", why="is not UTF-8 text")
    except OSError as e:
        return _Read("other", why=f"cannot be read ({_reason(e)})")


Same = Callable[[str, str, str], bool]  # (path, the folder's text, the new text): they say the same thing


def _classify(path: str, new: str | None, base: str | None, listed: bool, disk: _Read, legacy: bool,
              same: Same | None = None) -> Change:
    no_base = "no base copy (the repo was written before llm-deploy-wizard kept one)" if legacy else "no base copy of it"
    if new is None:  # listed, no longer generated
        if disk.kind == "missing":
            return Change(path, "removed", None, None, "the new plan no longer writes it; already gone")
        if disk.kind == "text" and base is not None and disk.text == base:
            return Change(path, "removed", disk.text, None, "the new plan no longer writes it; you had not edited it")
        why = "you edited it" if base is not None else no_base
        return Change(path, "kept", disk.text, None, f"the new plan no longer writes it; {why}: kept")
    if disk.kind == "other":
        return Change(path, "skipped", None, None, f"{disk.why}; not updated")
    if disk.kind == "missing":
        if listed and base is not None:
            if new == base:
                return Change(path, "deleted", None, None, "you deleted it; the new plan does not change it")
            return Change(path, "conflict", None, new, "you deleted it and the new plan changes it: written again, "
                          "delete it again if you do not want it")
        return Change(path, "new", None, new, "the new plan adds it" if not listed else "written again")
    assert disk.text is not None
    mine = disk.text
    if mine == new:
        return Change(path, "unchanged", mine, new, "")
    if same is not None and same(path, mine, new):
        return Change(path, "user-edited", mine, mine, "it says what the new plan writes, in your words: yours is kept")
    if base is None:
        m = merge2(mine, new)
        return Change(path, "conflict", mine, m.text, f"{no_base}: the stretches that differ are marked", m.conflicts)
    if mine == base:
        return Change(path, "changed", mine, new, "you had not edited it; the new plan changes it")
    if new == base:
        return Change(path, "user-edited", mine, mine, "you edited it; the new plan does not change it: yours is kept")
    m = merge3(base, mine, new)
    if m.conflicts:
        blocks = f"{m.conflicts} conflict{'s' if m.conflicts > 1 else ''}"
        return Change(path, "conflict", mine, m.text, f"you and the new plan changed the same lines: {blocks} marked",
                      m.conflicts)
    return Change(path, "merged", mine, m.text, "you and the new plan changed different lines: merged")


def starter_repo_folder(out: str | Path, flag: str) -> tuple[Path, list[str]]:
    """(absolute folder, the repo files its marker lists) of a starter repo this tool wrote; any other `--out`
    is one InputError naming it (`flag`: the option that needs a repo, for the message)."""
    path = _absolute(Path(out))
    if path.is_symlink():
        raise InputError("--out", str(path), f"is a symbolic link ({os.readlink(path)}); give the real folder's path")
    if not path.exists():
        raise InputError("--out", str(path), f"there is no such folder: {flag} works on a starter repo this tool "
                         "wrote (leave it out to write a new one)")
    if not path.is_dir():
        raise InputError("--out", str(path), "exists and is not a folder")
    listed = read_marker(path)
    if listed is None:
        raise InputError("--out", str(path), f"holds no starter repo of this tool (no {MARKER}): {flag} works only on "
                         "a folder it wrote")
    repo_files = sorted({f for f in listed if f != MARKER and not f.startswith(BASE_DIR + "/") and _safe_rel(f)})
    return path, repo_files


def preview(files: dict[str, str], out: str | Path, flag: str = "--update", same: Same | None = None) -> Preview:
    """What regenerating `out` with `files` (path → text, the new render) would do to each file; writes nothing.
    `same` may recognise a file of the user's that differs in text but not in meaning (answers.yaml with comments)."""
    folder, listed = starter_repo_folder(out, flag)
    legacy = not (folder / BASE_DIR).is_dir()
    changes = []
    for path in sorted(set(files) | set(listed)):
        base = _read(folder, f"{BASE_DIR}/{path}")
        if base.kind == "other" and path in files:  # it is refreshed afterwards: never through a link
            raise InputError("--out", str(folder), f"its base copy {BASE_DIR}/{path} cannot be used ({base.why}): "
                             f"delete it (the file is then compared two-way) and run {flag} again")
        changes.append(_classify(path, files.get(path), base.text, path in listed, _read(folder, path), legacy, same))
    kept = [c.path for c in changes if c.state == "kept"]
    return Preview(folder, changes, sorted({*files, *kept, *(f"{BASE_DIR}/{p}" for p in files)}))


def diff_lines(change: Change) -> list[str]:
    """The unified diff of what --update does to the file (none when it leaves it as it is)."""
    if change.state not in ("new", "changed", "merged", "conflict", "removed") or change.old == change.text:
        return []
    before, after = split_lines(change.old or ""), split_lines(change.text or "")
    lines = list(difflib.unified_diff(before, after, "/dev/null" if change.old is None else f"a/{change.path}",
                                      "/dev/null" if change.text is None else f"b/{change.path}"))
    return [line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines]


def report_line(change: Change) -> str:
    return f"{change.state:<12} {change.path}" + (f"  ({change.note})" if change.note else "")


def _mode_for(rel: str) -> int:
    """A new file's mode, as the writer gives it: scripts in serve/ and bench/ executable."""
    if rel.endswith((".sh", ".py")) and rel.startswith(("serve/", "bench/")):
        return 0o755
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _put(root: Path, rel: str, text: str) -> None:
    """Write one file atomically (temporary file + rename), keeping the mode of the file it replaces."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = stat.S_IMODE(os.lstat(path).st_mode)
    except FileNotFoundError:
        mode = _mode_for(rel)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name[:32]}.llmdw-update.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _remove(root: Path, rel: str) -> None:
    """Delete a file and the folders on its way that it leaves empty (never the repo itself)."""
    path = root / rel
    path.unlink(missing_ok=True)
    for parent in path.parents:
        if parent == root or root not in parent.parents:
            break
        try:
            parent.rmdir()
        except OSError:
            break


def _refresh_base(folder: Path, files: dict[str, str]) -> None:
    """The base copies become the new render (preview checked that none is a link or a folder)."""
    base_root = folder / BASE_DIR
    for path, text in sorted(files.items()):
        if _read(folder, f"{BASE_DIR}/{path}").text != text:
            _put(folder, f"{BASE_DIR}/{path}", text)
    if base_root.is_dir():
        wanted = set(files)
        for root, _, names in os.walk(base_root, topdown=False):
            for name in names:
                rel = (Path(root) / name).relative_to(base_root).as_posix()
                if rel not in wanted:
                    _remove(folder, f"{BASE_DIR}/{rel}")


def update(files: dict[str, str], out: str | Path, notices: list[str] | None = None, same: Same | None = None) -> Preview:
    """Apply `preview` to the folder (see the module's docstring for the order); returns what was done."""
    folder = _absolute(Path(out))
    try:
        with _parent_lock(folder):
            said = recover(folder)  # an interrupted --force run's old repo is put back first
            if notices is not None:
                notices.extend(said)
            done = preview(files, folder, "--update", same)
            for c in done.changes:
                if c.state == "removed" and c.old is not None:
                    _remove(folder, c.path)
                elif c.text is not None and c.text != c.old and c.state in ("new", "changed", "merged", "conflict"):
                    _put(folder, c.path, c.text)
            _refresh_base(folder, files)
            marker = marker_text(done.listing)
            if _read(folder, MARKER).text != marker:
                _put(folder, MARKER, marker)
    except OSError as e:
        raise InputError("--out", str(folder), f"could not be updated ({_reason(e)}); run --update again once it "
                         "is fixed (the files already written are recognised)") from None
    return done


STATES = ("new", "changed", "merged", "conflict", "user-edited", "removed", "kept", "deleted", "skipped", "unchanged")


def summary(done: Preview) -> str:
    """The states and how many files are in each ("changed 2, conflict 1, unchanged 14")."""
    counts = done.counts()
    return ", ".join(f"{state} {counts[state]}" for state in STATES if counts[state]) or "no files"
