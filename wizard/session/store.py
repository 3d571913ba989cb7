"""Answers saved after every step, so an interrupted session can resume (the user's state directory).

$WIZARD_STATE_DIR, else $XDG_STATE_HOME/llm-deploy-wizard, else ~/.local/state/llm-deploy-wizard; one file,
session.yaml: the answers in the order given. Written atomically (temp file + rename).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import yaml


def state_dir() -> Path:
    if os.environ.get("WIZARD_STATE_DIR"):
        return Path(os.environ["WIZARD_STATE_DIR"])
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "llm-deploy-wizard"


def session_file() -> Path:
    return state_dir() / "session.yaml"


def save(given: list[tuple[str, Any]], extras: dict[str, Any] | None = None) -> Path:
    """Save the answers given so far (and extras such as tp/replicas from an answers file)."""
    path = session_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"given": [[k, v] for k, v in given], "extras": extras or {}}
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".session.")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        yaml.safe_dump(data, f, sort_keys=False, allow_unicode=True)
    os.replace(tmp, path)
    return path


def load() -> tuple[list[tuple[str, Any]], dict[str, Any]] | None:
    """The saved answers, or None when there is nothing (or nothing readable) to resume."""
    path = session_file()
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        given = [(str(k), v) for k, v in data["given"]]
        return given, dict(data.get("extras") or {})
    except (OSError, yaml.YAMLError, KeyError, TypeError, ValueError):
        return None


def clear() -> None:
    try:
        session_file().unlink()
    except OSError:
        pass
