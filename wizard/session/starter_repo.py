"""The starter repo of a session, written by one service for every front end (`plan --out`, the app, `ask`).

Front ends → session → artifacts: a front end asks for the folder (proposing `default_folder`), calls
`write_starter_repo` and shows what it returns. The service renders the repo from the plan and the recorded
answers, keeps the local model folder out of reach of --force, writes through wizard.artifacts.writer (its
rules and messages unchanged) and, once the repo is written, clears the saved session: it is finished, there
is nothing left to resume. A non-empty folder raises FolderNotEmpty (before anything is written or cleared) so
that a front end can ask before replacing; every other refusal is an InputError, its one line for the user.

Every repo also gets the base copies of its files (`.llm-deploy-wizard/base/`, wizard.session.repo_update), so
that `plan --out DIR --update` can later merge a new plan into the files the user edited; `compare_starter_repo`
(`--dry-run`, `--diff`) and `update_starter_repo` (`--update`) render the same way and work on a folder only when
its marker says this tool wrote it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from wizard.artifacts.writer import FolderNotEmpty, paths_to_keep, write_repo
from wizard.errors import InputError
from wizard.sizing.engine import VLLM_VERSION
from wizard.sizing.engines import profile_for
from wizard.session import store
from wizard.session.answers import recorded
from wizard.session.session import Session
from wizard.specs.contracts import Plan

if TYPE_CHECKING:
    from wizard.session.repo_update import Preview

__all__ = ["FolderNotEmpty", "Written", "app_name", "compare_starter_repo", "default_folder", "update_starter_repo",
           "write_starter_repo"]


class Written(NamedTuple):
    path: Path  # the absolute folder the repo is in
    notices: list[str]  # sentences about an interrupted earlier run's leftovers, recovered on the way


def app_name(session: Session) -> str:
    """The name the repo's objects get: the answers' app_name, else one derived from the model id."""
    from wizard.artifacts.context import derive_name

    answers = session.answers
    return str(answers.get("app_name") or derive_name(str(answers.get("model") or "")))


def default_folder(session: Session, cwd: Path | None = None) -> Path:
    """The folder every front end proposes: `<app name>-deploy` in the current folder, as an absolute path."""
    name = f"{app_name(session)}-deploy"
    try:
        base = cwd if cwd is not None else Path.cwd()
    except OSError:  # the current folder was deleted: the writer says so when the folder is used
        return Path(name)
    return base.absolute() / name


def write_starter_repo(session: Session, plan: Plan, folder: str | Path, *, force: bool = False,
                       notices: list[str] | None = None, clear_saved: bool = True) -> Written:
    """Render the plan's starter repo and write it as `folder`; the saved session is cleared once it is written.

    Raises FolderNotEmpty when the folder holds files and `force` is false (the caller may ask, then call again
    with force=True), InputError for any other refusal; the saved session is kept in both cases. `notices`, when
    given, also receives the sentences about recovered leftovers, so a caller can show them even when the write
    is then refused (they happened either way). `clear_saved=False` for a session that was not the saved one
    (`plan --out` replays a file: a half-finished interactive session elsewhere must survive it)."""
    from wizard.session.repo_update import with_base

    if isinstance(folder, str) and not folder.strip():
        raise InputError("--out", folder, "expected a folder path")
    answers, files = _render(session, plan)
    keep = paths_to_keep(str(answers.get("model") or ""))  # a local model folder is never replaced
    said: list[str] = []
    try:
        path = write_repo(with_base(files), Path(folder), force=force, keep=keep, notices=said)
    finally:
        if notices is not None:
            notices.extend(said)
    if clear_saved:
        store.clear()
    return Written(path, said)


def _render(session: Session, plan: Plan) -> tuple[dict[str, Any], dict[str, str]]:
    """(recorded answers, path → text) of the plan's starter repo; InputError for a plan it cannot serve."""
    from wizard.artifacts.render import render_repo

    answers = recorded(session.answers)
    version = answers.get("vllm_version")
    if version is not None and profile_for(str(version)) is not profile_for(VLLM_VERSION):
        # The repo's image, flags and launch are those of the pinned release; a plan sized for another
        # generation would start under rules it was not sized for.
        raise InputError("vllm_version", version,
                         f"the starter repo targets vLLM {VLLM_VERSION} (its image and flags): plan without --out, "
                         f"or leave vllm_version out (or give a {profile_for(VLLM_VERSION).versions} release)")
    return answers, render_repo(plan, answers)


def compare_starter_repo(session: Session, plan: Plan, folder: str | Path, flag: str = "--dry-run") -> Preview:
    """What `update_starter_repo` would do to each file of the starter repo in `folder`; writes nothing. An
    InputError naming --out when the folder holds no starter repo this tool wrote (`flag` names the option)."""
    from wizard.session.repo_update import preview

    return preview(_render(session, plan)[1], folder, flag, _same_answers)


def update_starter_repo(session: Session, plan: Plan, folder: str | Path, *, notices: list[str] | None = None) -> Preview:
    """Regenerate the starter repo in `folder` keeping the user's edits (three-way, wizard.session.repo_update);
    returns what was done to each file. The saved session is left alone: an update replays an answers file."""
    from wizard.session.repo_update import update

    return update(_render(session, plan)[1], folder, notices, _same_answers)


def _same_answers(path: str, mine: str, new: str) -> bool:
    """The repo's answers.yaml as the user wrote it (comments, order, `--answers answers.yaml` after editing it)
    records the same answers as the new one: it is kept as theirs, not merged line by line."""
    if path != "answers.yaml":
        return False
    from wizard.yaml_file import parse_yaml

    try:
        return parse_yaml(mine, "answers.yaml", path) == parse_yaml(new, "answers.yaml", path)
    except InputError:
        return False
