"""MODEL → ModelSpec: a local folder, the bundled catalog, or the Hugging Face Hub, in that order."""

from __future__ import annotations

import os
import re
from pathlib import Path

from wizard.errors import InputError
from wizard.sources.catalog import find_entry, load_catalog_model
from wizard.specs import ModelSpec

# Hub repo ids: owner/name of letters, digits, '-', '_', '.' (huggingface_hub's validate_repo_id rules).
HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,95}/[A-Za-z0-9][A-Za-z0-9_.\-]{0,95}$")


def resolve_model(text: str) -> ModelSpec:
    """Find the model a user named: a folder with config.json, a catalog id, or a Hub repo id."""
    name = text.strip()
    if not name:
        raise InputError("model", text, "expected a Hub repo id (owner/name), a catalog id or a local folder")
    path = _local_path(name)
    if path is not None and _is_dir(path, name):
        from wizard.sources.local import load_local

        return load_local(path)
    entry = find_entry(name)
    if entry is not None:
        return load_catalog_model(entry)
    if path is not None and _exists(path):
        hint = "give the folder that holds it" if path.name == "config.json" else ""
        raise InputError("model", name, "is a file, not a folder; a local model is a folder containing config.json",
                         hint=hint)
    if name.startswith((".", "/", "~")) or os.sep in name and not HUB_ID.match(name):
        raise InputError("model", name, "no such folder; a local model is a folder containing config.json")
    if not HUB_ID.match(name):
        raise InputError(
            "model", name,
            "expected a Hub repo id like meta-llama/Llama-3.1-8B-Instruct, a catalog id (llm-deploy-wizard models) "
            "or a local folder with config.json",
        )
    from wizard.sources.hub import load_hub  # huggingface_hub is imported only when the Hub is needed

    return load_hub(name)


def _local_path(name: str) -> Path | None:
    """MODEL as a path, '~' and '~user' expanded; None when it cannot be a path at all (a NUL character)."""
    if "\0" in name:
        return None
    try:
        return Path(name).expanduser()
    except RuntimeError:  # '~nosuchuser/x': no home folder for that user (or no HOME at all)
        user = name[1:].split("/", 1)[0] or os.environ.get("USER", "")
        raise InputError("model", name, f"no home folder is known for user {user!r}, so '~' cannot be expanded; "
                         "give the folder's full path") from None


def _is_dir(path: Path, name: str) -> bool:
    """Path.is_dir, with the errors it raises (name too long, permission denied) as one InputError."""
    try:
        return path.is_dir()
    except OSError as e:
        raise InputError("model", name, f"could not be checked as a local folder ({e.strerror or type(e).__name__}); "
                         "a local model is a folder containing config.json") from None


def _exists(path: Path) -> bool:
    try:
        return os.path.exists(path)
    except (OSError, ValueError):
        return False
