"""Write the starter repo safely: never over a user's files without --force, never half-written.

Files are written into a temporary folder beside the target and moved into place with one rename; on any
error or Ctrl+C the temporary folder is removed and a folder that was being replaced is put back.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from wizard.errors import InputError


def write_repo(files: dict[str, str], out: Path, force: bool = False) -> Path:
    """Write `files` (relative path → text) as the folder `out`; returns the folder's absolute path."""
    out = out.expanduser().resolve()
    if out.exists() and not out.is_dir():
        raise InputError("--out", str(out), "exists and is not a folder")
    if out.is_dir() and any(out.iterdir()) and not force:
        raise InputError("--out", str(out), "is not empty; choose an empty or new folder, or add --force to replace it")
    for rel in files:
        if rel.startswith(("/", "..")) or ".." in Path(rel).parts:
            raise InputError("starter repo file", rel, "expected a path inside the repo")
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    backup: Path | None = None
    try:
        for rel, text in files.items():
            path = staging / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            if rel.endswith((".sh", ".py")) and rel.startswith("serve/"):
                path.chmod(0o755)
        if out.exists():
            backup = out.with_name(f".{out.name}.replaced")
            if backup.exists():
                shutil.rmtree(backup)
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
