"""Write the starter repo safely: never over a user's files without --force, never half-written.

Files are written into a temporary folder beside the target and moved into place with one rename; on any
error or Ctrl+C the temporary folder is removed and a folder that was being replaced is put back. Even with
--force, a folder that holds the model's own checkpoint or the answers file being replayed is never replaced.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path

from wizard.errors import InputError


def paths_to_keep(model: str, *files: str | Path) -> tuple[Path, ...]:
    """What --force must not delete: the model when it is a local folder, and the given files (answers)."""
    keep = [Path(f) for f in files]
    model_path = Path(model).expanduser()
    if model and model_path.exists():
        keep.append(model_path)
    return tuple(keep)


def write_repo(files: dict[str, str], out: Path, force: bool = False, keep: Iterable[Path] = ()) -> Path:
    """Write `files` (relative path → text) as the folder `out`; returns the folder's absolute path."""
    try:
        out = out.expanduser().resolve()
    except (OSError, RuntimeError) as e:  # a symlink loop, an unreadable parent
        raise InputError("--out", str(out), f"cannot be resolved ({e})") from None
    if out.exists() and not out.is_dir():
        raise InputError("--out", str(out), "exists and is not a folder")
    if out.is_dir() and any(out.iterdir()) and not force:
        raise InputError("--out", str(out), "is not empty; choose an empty or new folder, or add --force to replace it")
    for k in keep:
        k = k.expanduser().resolve()
        if k == out or out in k.parents:
            raise InputError("--out", str(out), f"holds {k}, which the plan reads; choose another folder")
    for rel in files:
        if rel.startswith(("/", "..")) or ".." in Path(rel).parts:
            raise InputError("starter repo file", rel, "expected a path inside the repo")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    except OSError as e:  # a file where a folder should be, a read-only or missing mount
        raise InputError("--out", str(out), f"cannot be created ({e.strerror or e})") from None
    backup: Path | None = None
    try:
        for rel, text in files.items():
            path = staging / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            if rel.endswith((".sh", ".py")) and rel.startswith("serve/"):
                path.chmod(0o755)
        umask = os.umask(0)
        os.umask(umask)
        staging.chmod(0o777 & ~umask)  # mkdtemp made it private (0700): the repo gets the usual mode
        if out.exists():
            # A fresh name, so no folder of the user's is ever mistaken for our backup.
            backup = Path(tempfile.mkdtemp(prefix=f".{out.name}.replaced.", dir=out.parent))
            os.replace(out, backup)
        os.replace(staging, out)
    except BaseException:  # includes KeyboardInterrupt: leave nothing half-written
        shutil.rmtree(staging, ignore_errors=True)
        if backup is not None and backup.exists() and not out.exists():
            os.replace(backup, out)
        raise
    if backup is not None:
        shutil.rmtree(backup, ignore_errors=True)
    return out
