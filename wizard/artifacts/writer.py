"""Write the starter repo safely: never over a user's files, never half-written, recoverable after a kill.

Rules (each one refuses with one line, InputError → exit 2):
- a folder that does not exist is staged beside it and moved into place with one rename;
- an existing empty folder is filled in place (its inode, mode and mount stay; it may be the current folder);
- a non-empty folder is replaced only with --force, and only when it holds a starter repo this tool wrote: the
  marker file `MARKER` lists every file written, and the folder holds nothing else (like copier's answers file,
  it says what the tool owns). Never $HOME, the current folder or one of its ancestors, a mount point, or the
  folder holding the model being planned, even when marked;
- `--out` that is a symbolic link (dangling or not) is refused: the tool never writes through a link.
Replacing renames the old repo aside (`.NAME.llmdw-replaced.*`), renames the staged one into place and deletes
the old one. A kill between those renames leaves the old repo aside: the next run for the same folder puts it
back (or, if the new one landed, deletes the marked leftover) and says so; leftover staging folders are removed.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from wizard.errors import InputError

MARKER = ".llm-deploy-wizard.json"  # in every starter repo: the files this tool wrote there
MARKER_MAX = 2**20  # bytes: a marker lists a few dozen files
PREFIX_NAME = 32  # characters of the folder's name in its staging and backup names (NAME_MAX is 255 bytes)
TOOL = "llm-deploy-wizard"
STAGING_TAG = "llmdw-staging"
REPLACED_TAG = "llmdw-replaced"


class FolderNotEmpty(InputError):
    """The folder holds files and --force was not given: front ends ask before replacing."""


def paths_to_keep(model: str, *files: str | Path) -> tuple[Path, ...]:
    """What --force must not delete: the model when it is a local folder, and the given files."""
    keep = [Path(f) for f in files]
    try:
        model_path = Path(model).expanduser()
        if model and model_path.exists():
            keep.append(model_path)
    except (OSError, RuntimeError, ValueError):  # ~nosuchuser, a name too long, a NUL: not a folder of ours
        pass
    return tuple(keep)


def _absolute(out: Path) -> Path:
    """`out` made absolute with its parent's links resolved, but not its own last component (a link is refused)."""
    if "\0" in str(out):
        raise InputError("--out", str(out).replace("\0", "\\0"), "expected a folder path without a NUL byte")
    try:
        out = Path(os.path.abspath(out.expanduser()))
        return out if out == out.parent else out.parent.resolve() / out.name
    except (OSError, RuntimeError, ValueError) as e:  # ~nosuchuser, a link loop, a NUL byte
        raise InputError("--out", str(out), f"cannot be resolved ({_reason(e)})") from None


def _reason(e: BaseException) -> str:
    if isinstance(e, OSError):
        if e.errno == errno.ENOSPC:
            return "no space left on the device"
        if e.errno in (errno.EACCES, errno.EPERM):
            return "permission denied"
        if e.errno == errno.EBUSY:
            return "the folder is busy (a mount point or in use)"
        if e.errno == errno.EROFS:
            return "read-only file system"
        return e.strerror or type(e).__name__
    return str(e) or type(e).__name__


def read_marker(folder: Path) -> list[str] | None:
    """The files a starter repo's marker lists, or None when the folder holds no (readable) marker of ours."""
    from wizard.capped_read import open_regular

    try:  # a FIFO or a link to /dev/zero must not block or fill memory
        f, _ = open_regular(folder / MARKER, "marker")
        with f:
            data = json.loads(f.read(MARKER_MAX + 1).decode("utf-8"))
    except (InputError, OSError, UnicodeDecodeError, ValueError, RecursionError):  # a truncated read is no JSON
        return None
    if not isinstance(data, dict) or data.get("tool") != TOOL or not isinstance(data.get("files"), list):
        return None
    files = [f for f in data["files"] if isinstance(f, str)]
    return files if len(files) == len(data["files"]) else None


def marker_text(files: Iterable[str]) -> str:
    from wizard import __version__

    return json.dumps({"tool": TOOL, "version": __version__, "files": sorted({*files, MARKER})}, indent=2) + "\n"


def _foreign(folder: Path, listed: list[str]) -> str | None:
    """The first entry of `folder` that its marker does not account for (relative path), or None."""
    allowed = set(listed) | {MARKER}
    dirs = {str(p) for f in allowed for p in Path(f).parents if str(p) != "."}
    for root, subdirs, names in os.walk(folder):
        rel_root = Path(root).relative_to(folder)
        for name in sorted(subdirs):
            rel = str(rel_root / name)
            if rel not in dirs or (Path(root) / name).is_symlink():
                return rel
        for name in sorted(names):
            rel = str(rel_root / name)
            if rel not in allowed:
                return rel
    return None


def _protected(out: Path) -> str | None:
    """Why `out` may never be replaced, or None."""
    try:
        home = Path.home().resolve()
    except (OSError, RuntimeError):
        home = None
    try:
        cwd = Path.cwd().resolve()
    except OSError:
        cwd = None
    if home is not None and out == home:
        return "is your home folder"
    if cwd is not None and (out == cwd or out in cwd.parents):
        return "is the current folder" if out == cwd else "holds the current folder"
    if out == out.parent or os.path.ismount(out):
        return "is a mount point"
    return None


def _short(name: str) -> str:
    """The folder's name as it appears in its staging and backup names (a 250-character name must still fit)."""
    return name[:PREFIX_NAME]


def recover(out: Path) -> list[str]:
    """Put back what an interrupted earlier run left aside for `out`, remove its staging folders; returns what
    was done, one sentence each (the caller shows them)."""
    said: list[str] = []
    try:
        siblings = list(out.parent.iterdir()) if out.parent.is_dir() else []
    except OSError:
        return said
    short = _short(out.name)
    for p in sorted(siblings):
        if not p.is_dir() or p.is_symlink() or not p.name.startswith(f".{short}."):
            continue
        tag = p.name[len(short) + 2:].split(".", 1)[0]
        if tag == STAGING_TAG:
            shutil.rmtree(p, ignore_errors=True)
        elif tag == REPLACED_TAG:
            if not any(p.iterdir()):  # killed before the old repo was moved in: nothing to restore
                p.rmdir()
            elif not os.path.lexists(out):
                os.replace(p, out)
                said.append(f"restored {out} from an interrupted earlier run (it had been moved aside as {p.name})")
            elif read_marker(p) is not None:
                shutil.rmtree(p, ignore_errors=True)  # the old copy of a repo that was replaced: ours to delete
            else:
                said.append(f"an interrupted earlier run left a copy of {out} at {p}: check it, then delete it")
    if out.is_dir() and not out.is_symlink():  # an interrupted fill of an empty folder stages inside it
        for p in out.glob(f".repo.{STAGING_TAG}.*"):
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p, ignore_errors=True)
    return said


def write_repo(files: dict[str, str], out: Path, force: bool = False, keep: Iterable[Path] = (),
               notices: list[str] | None = None) -> Path:
    """Write `files` (relative path → text) as the folder `out`, plus its marker; returns the absolute path.

    `notices` receives sentences about recovered leftovers of an interrupted earlier run."""
    out = _absolute(out)
    try:
        with _parent_lock(out):
            return _write(files, out, force, keep, notices)
    except OSError as e:  # a check that touched the disk: a name too long, an unreadable parent, a vanished folder
        raise InputError("--out", str(out), f"cannot be used ({_reason(e)}); nothing was written") from None


def _write(files: dict[str, str], out: Path, force: bool, keep: Iterable[Path], notices: list[str] | None) -> Path:
    for rel in files:
        if rel.startswith(("/", "..")) or ".." in Path(rel).parts or rel == MARKER:
            raise InputError("starter repo file", rel, "expected a path inside the repo")
    try:
        said = recover(out)
    except OSError as e:
        raise InputError("--out", str(out), f"an earlier run's leftovers could not be restored ({_reason(e)})") from None
    if notices is not None:
        notices.extend(said)
    if out.is_symlink():
        target = os.readlink(out)
        what = "a symbolic link to a missing target" if not out.exists() else "a symbolic link"
        raise InputError("--out", str(out), f"is {what} ({target}); give the real folder's path")
    if out.exists() and not out.is_dir():
        raise InputError("--out", str(out), "exists and is not a folder")
    for k in keep:
        try:
            k = k.expanduser().resolve()
        except (OSError, RuntimeError, ValueError):
            continue
        if k == out or out in k.parents:
            raise InputError("--out", str(out), f"holds {k}, which the plan reads; choose another folder")
    try:
        entries = sorted(p.name for p in out.iterdir()) if out.is_dir() else None
    except OSError as e:
        raise InputError("--out", str(out), f"cannot be read ({_reason(e)})") from None
    all_files = {**files, MARKER: marker_text(files)}
    if entries is None:
        return _write_new(all_files, out)
    if not entries:
        return _fill_empty(all_files, out)
    if not force:
        raise FolderNotEmpty("--out", str(out), "is not empty; choose an empty or new folder, or add --force to replace "
                         "a starter repo this tool wrote there")
    why = _protected(out)
    if why:
        raise InputError("--out", str(out), f"{why}: --force never replaces it; choose a new folder")
    listed = read_marker(out)
    if listed is None:
        raise InputError("--out", str(out), f"holds no starter repo of this tool (no {MARKER}): --force replaces only "
                         "those; choose an empty or new folder")
    stray = _foreign(out, listed)
    if stray is not None:
        raise InputError("--out", str(out), f"holds {stray}, which this tool did not write: --force would delete it; "
                         "move it out or choose another folder")
    return _replace(all_files, out)


def _stage(files: dict[str, str], parent: Path, name: str, mode: int | None = None) -> Path:
    """Write the files into a new staging folder in `parent`; on any failure it is removed and an InputError
    (or the KeyboardInterrupt) raised."""
    try:
        staging = Path(tempfile.mkdtemp(prefix=f".{_short(name)}.{STAGING_TAG}.", dir=parent))
    except OSError as e:  # a file where a folder should be, a read-only or missing mount, a name too long
        raise InputError("--out", str(parent / name), f"cannot be created ({_reason(e)})") from None
    try:
        for rel, text in files.items():
            path = staging / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            if rel.endswith((".sh", ".py")) and rel.startswith(("serve/", "bench/")):
                path.chmod(0o755)
        if mode is None:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o777 & ~umask
        staging.chmod(mode)  # mkdtemp made it private (0700): the repo gets the usual mode, or the old one's
    except BaseException as e:
        shutil.rmtree(staging, ignore_errors=True)
        if isinstance(e, OSError):
            raise InputError("--out", str(parent / name), f"could not be written ({_reason(e)}); nothing was "
                             "written") from None
        raise
    return staging


@contextmanager
def _parent_lock(out: Path) -> Iterator[None]:
    """One writer at a time beside `out` (the app and `plan --out` on the same folder): an exclusive flock on the
    parent folder itself, so no lock file is left behind; a parent that does not exist yet needs none."""
    try:
        fd = os.open(out.parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


@contextmanager
def _all_or_nothing(out: Path, verb: str, undo: Callable[[], None]) -> Iterator[None]:
    """Run the block; on any failure (Ctrl+C included) `undo` it, and turn an OSError into one line."""
    try:
        yield
    except BaseException as e:
        undo()
        if isinstance(e, OSError):
            raise InputError("--out", str(out), f"could not be {verb} ({_reason(e)}); nothing was written") from None
        raise


def _write_new(files: dict[str, str], out: Path) -> Path:
    made = [p for p in reversed(out.parents) if not os.path.lexists(p)]  # parents this run creates, top first

    def remove_made() -> None:  # "nothing was written" includes the folders made on the way
        for p in reversed(made):
            try:
                p.rmdir()
            except OSError:
                break

    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        remove_made()
        raise InputError("--out", str(out), f"cannot be created ({_reason(e)})") from None
    try:
        staging = _stage(files, out.parent, out.name)
    except BaseException:
        remove_made()
        raise

    def undo() -> None:
        shutil.rmtree(staging, ignore_errors=True)
        remove_made()

    with _all_or_nothing(out, "created", undo):
        os.rename(staging, out)  # an empty folder made meanwhile would be replaced (Linux): nothing is lost
    return out


def _fill_empty(files: dict[str, str], out: Path) -> Path:
    """Stage inside the empty folder (same file system, even when it is a mount point) and move the top-level
    entries out of the staging folder, the marker first: an interrupted run leaves a marked, replaceable repo."""
    staging = _stage(files, out, "repo", mode=0o700)
    tops = sorted({Path(rel).parts[0] for rel in files}, key=lambda t: (t != MARKER, t))
    moved: list[Path] = []

    def undo() -> None:
        for p in moved:
            shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink(missing_ok=True)
        shutil.rmtree(staging, ignore_errors=True)

    with _all_or_nothing(out, "written", undo):
        for top in tops:
            os.rename(staging / top, out / top)
            moved.append(out / top)
        staging.rmdir()
    return out


def _replace(files: dict[str, str], out: Path) -> Path:
    try:
        mode = out.stat().st_mode & 0o7777
    except OSError as e:
        raise InputError("--out", str(out), f"cannot be read ({_reason(e)})") from None
    staging = _stage(files, out.parent, out.name, mode=mode)
    backup: Path | None = None
    try:
        # A fresh name in our own namespace, so no folder of the user's is ever mistaken for our backup.
        backup = Path(tempfile.mkdtemp(prefix=f".{_short(out.name)}.{REPLACED_TAG}.", dir=out.parent))
        os.replace(out, backup)
        os.rename(staging, out)
    except BaseException as e:  # includes KeyboardInterrupt: put the old repo back, leave nothing half-written
        shutil.rmtree(staging, ignore_errors=True)
        if backup is not None:
            if not os.path.lexists(out) and read_marker(backup) is not None:
                os.replace(backup, out)
            elif backup.is_dir() and not any(backup.iterdir()):
                backup.rmdir()
        if isinstance(e, OSError):
            raise InputError("--out", str(out), f"could not be replaced ({_reason(e)}); the old repo is unchanged") from None
        raise
    shutil.rmtree(backup, ignore_errors=True)
    return out
