"""Answers saved after every step, so an interrupted session can resume (the user's state directory).

$WIZARD_STATE_DIR, else $XDG_STATE_HOME/llm-deploy-wizard, else ~/.local/state/llm-deploy-wizard; one file,
session.yaml: the answers in the order given. Written atomically (temp file + rename).

The file is input like an answers file: it is read with the same capped, alias-safe YAML reader and its answers
are validated by the same rules before anything is resumed; a file that fails is reported, never resumed in
part. Saving never stops the wizard: a state folder that cannot be written turns autosave off with one warning.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from wizard.errors import InputError


class Saved(NamedTuple):
    given: list[tuple[str, Any]]  # (answers key, value) in the order answered
    extras: dict[str, Any]  # answers-file keys no question asks


class Loaded(NamedTuple):
    saved: Saved | None  # None: nothing to resume
    problem: str | None  # why a session file that exists was not resumed (one sentence), else None


def state_dir() -> Path:
    if os.environ.get("WIZARD_STATE_DIR"):
        return Path(os.environ["WIZARD_STATE_DIR"])
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "llm-deploy-wizard"


def session_file() -> Path:
    return state_dir() / "session.yaml"


def save(given: list[tuple[str, Any]], extras: dict[str, Any] | None = None) -> Path:
    """Save the answers given so far (and extras such as tp/replicas from an answers file); raises OSError."""
    path = session_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"given": [[k, v] for k, v in given], "extras": extras or {}}
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".session.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            yaml.safe_dump(data, f, sort_keys=False, allow_unicode=True)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


class Autosave:
    """save() for the front ends: a failure turns autosave off and is reported once, as a sentence."""

    def __init__(self) -> None:
        self.off = False

    def save(self, given: list[tuple[str, Any]], extras: dict[str, Any] | None = None) -> str | None:
        """None when saved (or already off); the warning to show, the first time saving fails."""
        if self.off:
            return None
        try:
            save(given, extras)
        except (OSError, RuntimeError, ValueError) as e:  # RuntimeError: no home folder to derive the path from
            self.off = True
            reason = getattr(e, "strerror", None) or type(e).__name__
            where = _where()
            return (f"autosave is off: {where} could not be written ({reason}); the answers are kept only until "
                    "you quit")
        return None


def _where() -> str:
    try:
        return str(session_file())
    except RuntimeError:
        return "the state folder"


def load() -> Loaded:
    """The saved answers, validated like an answers file; or why the file there cannot be resumed."""
    from wizard.session.answers import validate_answers
    from wizard.yaml_file import read_yaml

    try:
        path = session_file()
        if not os.path.lexists(path):
            return Loaded(None, None)
        data = read_yaml(path, "session file")
        if not isinstance(data, dict) or not isinstance(data.get("given"), list):
            raise InputError("session file", str(path), "expected a mapping with a list `given`")
        given: list[tuple[str, Any]] = []
        for pair in data["given"]:
            if not (isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str)):
                raise InputError("session file: given", pair, "expected [key, value] pairs")
            given.append((pair[0], pair[1]))
        extras = data.get("extras") or {}
        if not isinstance(extras, dict):
            raise InputError("session file: extras", extras, "expected a mapping")
        validate_answers(dict(given), where="session file")
        validate_answers(extras, where="session file")
    except InputError as e:
        return Loaded(None, f"the saved session could not be resumed, starting over ({e.line()})")
    except RuntimeError:  # no home folder to find the state folder in
        return Loaded(None, None)
    return Loaded(Saved(given, dict(extras)), None)


def clear() -> None:
    try:
        session_file().unlink()
    except (OSError, RuntimeError):
        pass
