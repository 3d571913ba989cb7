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
    """Find the model a user named: a folder with config.json, a catalog id, or a Hub repo id.

    A name that resolves to nothing ends its one-line error with "did you mean X?" when a catalog id is near
    (wizard/sources/suggest.py): a bare name that is the name part of a catalog id (`Qwen2.5-7B-Instruct`), a
    letter or two off a catalog id or alias (`Qwen/Qwen2.5-7B-Instuct`), the right name under a wrong owner.
    Suggested, never taken in its place: a bare name is no Hub id, and the Hub holds many models of one name
    under other owners (re-uploads, quantizations, fine-tunes), so resolving `Qwen2.5-7B-Instruct` to the
    catalog's Qwen/Qwen2.5-7B-Instruct could size another checkpoint than the one meant, and write that id
    into answers.yaml; a Hub id one letter off a catalog id can be a real model of its own (Qwen/Qwen3-4B is
    one letter off Qwen/Qwen3-8B), so it is still looked up on the Hub, and the suggestion is added only when
    the Hub did not give it (not found, offline, unreachable, too slow). `models ID` is a catalog lookup only
    and does take a bare name that is one catalog id's name part (cli.cmd_models)."""
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
        near = "" if name.startswith((".", "/", "~")) else _did_you_mean(name)  # Qwen/Qwen3-8B/: a stray "/"
        raise InputError("model", name, "no such folder; a local model is a folder containing config.json"
                         + (f"; {near}" if near else ""))
    if not HUB_ID.match(name):
        near = _did_you_mean(name)
        if near and "/" not in name:  # a bare name: short, with the id it is the name part of
            raise InputError("model", name, f"a Hub repo id has an owner (owner/name); {near}")
        raise InputError(
            "model", name,
            "expected a Hub repo id like meta-llama/Llama-3.1-8B-Instruct, a catalog id (llm-deploy-wizard models) "
            "or a local folder with config.json" + (f"; {near}" if near else ""),
        )
    from wizard.sources.hub import WAY_OUT, load_hub  # huggingface_hub is imported only when the Hub is needed

    try:
        return load_hub(name)
    except InputError as e:
        near = _did_you_mean(name) if e.field == "model" and any(m in e.accepted for m in HUB_MISSES) else ""
        if not near:
            raise
        hint = e.hint.replace(f", or {WAY_OUT}", "").replace(WAY_OUT, "").strip()  # the suggestion is the way out
        raise InputError(e.field, e.value, e.accepted + (f" ({hint})" if hint else "") + f"; {near}") from None


# wizard.sources.hub's words for "the Hub did not give this repo": only then may a catalog id be what was meant
# (a gated repo, or one without config.json, exists: no suggestion there). tests/test_did_you_mean.py covers each.
HUB_MISSES = ("repo not found on the Hugging Face Hub", "not in the local Hugging Face cache", "is unreachable",
              "did not answer in time", "did not finish within", "needs the huggingface_hub package")


def _did_you_mean(name: str) -> str:
    from wizard.sources.suggest import did_you_mean, model_suggestions

    return did_you_mean(model_suggestions(name))


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
