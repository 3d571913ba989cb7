"""One writer for the starter repo (issue #11): `plan --out`, the full-screen app and `ask` all call
wizard.session.starter_repo, so the same answers give the same files, the same absolute default folder, the same
keep-list, and a saved session cleared only once a repo is written. Also the side panel's managed figure."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml
from textual.widgets import Input, Static

from cli_run import run_main
from test_ask import ENTER, ask, typed, walk_keys
from test_tui import SIZE, walk
from wizard.artifacts.writer import FolderNotEmpty, write_repo
from wizard.errors import InputError
from wizard.session import starter_repo, store
from wizard.session.plan import build_plan
from wizard.session.preview import panel_lines
from wizard.session.session import run_answers
from wizard.tree.schema import Question
from wizard.tui.app import WizardApp

TESTS = Path(__file__).parent
SCENARIO = TESTS / "scenarios" / "tiny_model.yaml"
NAME = "qwen3-0-6b"  # derive_name("Qwen/Qwen3-0.6B")


def every_answer(path: Path = SCENARIO) -> dict:
    """The scenario with every question on its path answered, as an interactive user answers them: then
    `plan --answers` records no "tree default" either, and the three front ends' files can be compared byte
    for byte."""
    session = run_answers(yaml.safe_load(path.read_text()))
    out = {}
    for step in session.state.path:
        node = session.tree.nodes[step.node]
        if isinstance(node, Question):
            out[node.var] = step.value
    return out


def tree_of(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def saved_session_exists() -> bool:
    return store.session_file().exists()


@pytest.fixture
def service_calls(monkeypatch):
    """Every call of the one service, whichever front end makes it."""
    calls: list[tuple[Path, bool]] = []
    real = starter_repo.write_starter_repo

    def spy(session, plan, folder, *, force=False, notices=None, clear_saved=True):
        calls.append((Path(folder), force))
        return real(session, plan, folder, force=force, notices=notices, clear_saved=clear_saved)

    monkeypatch.setattr(starter_repo, "write_starter_repo", spy)
    return calls


async def generate(pilot, app: WizardApp, folder: Path | None) -> str:
    """Summary → "Generate starter repo" → the folder (None: the proposed one) → Enter; the screen shown after."""
    await pilot.click("#generate")
    await pilot.pause()
    if folder is not None:
        app.screen.query_one("#folder", Input).value = str(folder)
    await pilot.press("enter")
    await pilot.pause()
    return type(app.screen).__name__


def test_the_three_front_ends_write_the_same_files_through_the_one_service(tmp_path, service_calls):
    answers = every_answer()
    answers_file = tmp_path / "answers.yaml"
    answers_file.write_text(yaml.safe_dump(answers, sort_keys=False))

    r = run_main("plan", "--answers", str(answers_file), "--out", str(tmp_path / "cli"))
    assert r.code == 0, r.err
    assert f"wrote the starter repo to {tmp_path / 'cli'} — start with README.md" in r.err

    keys, _ = walk_keys(answers)
    code, text = ask(keys + ENTER + typed(tmp_path / "ask"))  # "Write the starter repo?" Yes → the folder
    assert code == 0, text
    assert f"Wrote the starter repo to {tmp_path / 'ask'} — start with README.md" in text

    async def tui():
        app = WizardApp(resume=False, cursor_blink=False)
        async with app.run_test(size=SIZE) as pilot:
            await walk(pilot, app, answers)
            await generate(pilot, app, tmp_path / "tui")
            return app.written

    assert asyncio.run(tui()) == tmp_path / "tui"

    assert service_calls == [(tmp_path / "cli", False), (tmp_path / "ask", False), (tmp_path / "tui", False)]
    cli, ask_files, tui_files = (tree_of(tmp_path / name) for name in ("cli", "ask", "tui"))
    assert {"README.md", "RATIONALE.md", "plan.json", "answers.yaml"} <= set(cli)
    assert ask_files == cli
    assert tui_files == cli


def test_the_default_folder_is_absolute_and_the_same_in_the_app_and_ask(tmp_path, monkeypatch):
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    expected = Path.cwd() / f"{NAME}-deploy"
    answers = every_answer()
    assert starter_repo.default_folder(run_answers(answers)) == expected and expected.is_absolute()
    assert starter_repo.default_folder(run_answers({**answers, "app_name": "chat"})) == Path.cwd() / "chat-deploy"

    async def tui():
        app = WizardApp(resume=False, cursor_blink=False)
        async with app.run_test(size=SIZE) as pilot:
            await walk(pilot, app, answers)
            await pilot.click("#generate")
            await pilot.pause()
            proposed = app.screen.query_one("#folder", Input).value
            shown = str(app.screen.query_one("#proposed", Static).render())
            return proposed, shown

    proposed, shown = asyncio.run(tui())
    assert proposed == str(expected) and str(expected) in shown  # in full, not "./…"

    from wizard import prompts

    defaults: dict[str, str] = {}
    real_text = prompts._Prompter.text

    def text(self, message, default, *args, **kwargs):
        defaults[message] = default
        return real_text(self, message, default, *args, **kwargs)

    monkeypatch.setattr(prompts._Prompter, "text", text)
    store.clear()  # the app's autosave: `ask` would offer to resume it
    keys, _ = walk_keys(answers)
    code, said = ask(keys + ENTER + ENTER)  # Yes, then the proposed folder as it is
    assert code == 0, said
    assert defaults["Folder for the starter repo?"] == proposed
    assert f"Wrote the starter repo to {expected} — start with README.md" in said
    assert (expected / "README.md").is_file()


def test_a_written_repo_clears_the_saved_session_a_refused_one_does_not(tmp_path):
    session = run_answers(every_answer())
    plan = build_plan(session)
    store.save(session.given)
    full = tmp_path / "full"
    full.mkdir()
    (full / "notes.txt").write_text("the user's own file")

    with pytest.raises(FolderNotEmpty):
        starter_repo.write_starter_repo(session, plan, full, force=False)
    assert saved_session_exists()
    with pytest.raises(InputError, match="holds no starter repo of this tool"):
        starter_repo.write_starter_repo(session, plan, full, force=True)
    assert saved_session_exists() and (full / "notes.txt").read_text() == "the user's own file"
    with pytest.raises(InputError, match="expected a folder path"):
        starter_repo.write_starter_repo(session, plan, "  ", force=True)
    assert saved_session_exists()

    written = starter_repo.write_starter_repo(session, plan, tmp_path / "new")
    assert written == starter_repo.Written(tmp_path / "new", [])
    assert (tmp_path / "new" / "README.md").is_file()
    assert not saved_session_exists()


def test_plan_out_never_clears_a_saved_interactive_session(tmp_path):
    # `plan --out` replays a file; a half-finished session of `ask` or the app is another piece of work, kept.
    store.save([("model", "Qwen/Qwen3-0.6B")])
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "notes.txt").write_text("mine")
    r = run_main("plan", "--answers", str(SCENARIO), "--out", str(tmp_path / "full"))
    assert r.code == 2 and "is not empty" in r.err
    assert saved_session_exists()
    assert run_main("plan", "--answers", str(SCENARIO), "--out", str(tmp_path / "new")).code == 0
    assert saved_session_exists()


def test_the_app_keeps_the_session_when_refused_and_clears_it_once_written(tmp_path, service_calls):
    full = tmp_path / "full"
    full.mkdir()
    (full / "notes.txt").write_text("mine")

    async def run():
        app = WizardApp(resume=False, cursor_blink=False)
        async with app.run_test(size=SIZE) as pilot:
            await walk(pilot, app, every_answer())
            before = app.quit_question()
            asked = await generate(pilot, app, full)
            await pilot.click("#no")  # not replaced
            await pilot.pause()
            kept = saved_session_exists()
            app.screen.query_one("#folder", Input).value = str(tmp_path / "new")
            await pilot.press("enter")
            await pilot.pause()
            return before, asked, kept, app.written, app.quit_question()

    before, asked, kept, written, after = asyncio.run(run())
    assert asked == "ConfirmScreen" and kept
    assert "answers are saved" in before
    assert written == tmp_path / "new" and not saved_session_exists()
    assert after == f"Quit? The starter repo is in {written}; nothing is left to resume."
    assert service_calls == [(full, False), (tmp_path / "new", False)]
    assert (full / "notes.txt").read_text() == "mine" and sorted(p.name for p in full.iterdir()) == ["notes.txt"]


def test_the_local_model_folder_is_kept_out_of_reach(tmp_path):
    model = tmp_path / "repo" / "model"
    model.mkdir(parents=True)
    (model / "config.json").write_bytes((TESTS / "data" / "configs" / "Qwen__Qwen3-0.6B.json").read_bytes())
    session = run_answers({**yaml.safe_load(SCENARIO.read_text()), "model": str(model)})
    store.save(session.given)
    with pytest.raises(InputError, match="which the plan reads"):
        starter_repo.write_starter_repo(session, build_plan(session), tmp_path / "repo", force=True)
    assert (model / "config.json").is_file() and saved_session_exists()
    assert starter_repo.default_folder(session).name == "model-deploy"


def test_leftovers_of_an_interrupted_run_are_said_even_when_the_write_is_refused(tmp_path):
    session = run_answers(every_answer())
    plan = build_plan(session)
    out = tmp_path / "repo"
    write_repo({"README.md": "old readme\n"}, tmp_path / ".repo.llmdw-replaced.x1")  # a kill left it aside
    notices: list[str] = []
    with pytest.raises(FolderNotEmpty):
        starter_repo.write_starter_repo(session, plan, out, notices=notices)
    assert len(notices) == 1 and notices[0].startswith(f"restored {out}")
    assert (out / "README.md").read_text() == "old readme\n"
    written = starter_repo.write_starter_repo(session, plan, out, force=True)
    assert written.path == out and written.notices == []


def test_the_side_panel_compares_the_managed_api_with_its_staff():
    plan = build_plan(run_answers(yaml.safe_load((TESTS / "scenarios" / "data_residency.yaml").read_text())))
    cost = plan.cost
    assert cost.managed_usd_month < 1 < cost.managed_total_usd_month  # a $0.42 bill, $750 with the staff
    lines = panel_lines(plan)
    assert lines["managed_usd_month"] == cost.managed_total_usd_month and lines["managed_with_staff"]
    assert lines["managed_text"] == f"Managed + staff ${cost.managed_total_usd_month:,.0f}/month"

    managed = build_plan(run_answers(yaml.safe_load((TESTS / "scenarios" / "very_low_traffic.yaml").read_text())))
    lines = panel_lines(managed)  # a managed plan: its total is the plan's own cost; the panel says the bill
    bill = managed.cost.managed_usd_month
    assert lines["managed_usd_month"] == bill and not lines["managed_with_staff"]
    assert lines["managed_text"] == f"Managed bill ${bill:,.0f}/month"
    assert len(lines["managed_text"]) <= 33  # the panel's width inside its border and padding: no wrapped line
    cpu = build_plan(run_answers(yaml.safe_load((TESTS / "scenarios" / "tiny_offline_cpu.yaml").read_text())))
    assert cpu.form == "cpu" and "managed_text" not in panel_lines(cpu)  # no managed figure: no managed line
