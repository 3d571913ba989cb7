"""The full-screen wizard driven by textual's Pilot: every scenario gives the plan `plan --answers` gives,
Back re-walks, answers autosave and resume, validation messages show inline, and key screens are snapshots."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml
from textual.widgets import Input, OptionList, Static

from cli_run import assert_one_line_error, run_cli
from wizard.session import store
from wizard.session.plan import build_plan
from wizard.specs.contracts import to_json
from wizard.session.session import Session, run_answers
from wizard.tui.app import WizardApp
from wizard.tui.screens import QuestionScreen, SummaryScreen

SCENARIOS = Path(__file__).parent / "scenarios"
SIZE = (100, 32)


def scenario(name: str) -> dict:
    return yaml.safe_load((SCENARIOS / f"{name}.yaml").read_text())


async def answer(pilot, app: WizardApp, value) -> None:
    """Give the current question a value as a user would: type it, or move to the option, then Enter."""
    screen = app.screen
    assert isinstance(screen, QuestionScreen)
    widget = screen.query_one("#answer")
    if isinstance(widget, OptionList):
        index = next(i for i in range(widget.option_count) if screen.value_at(i) == value)
        widget.highlighted = index
    else:
        widget.value = "" if value is None else str(value)
    await pilot.press("enter")
    await pilot.pause()


async def settled(pilot) -> None:
    """Let the screen finish what it has scheduled before a screenshot: on a loaded machine one pause can come back
    before the last refresh of a freshly pushed screen has been laid out."""
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()
    await pilot.pause()


async def walk(pilot, app: WizardApp, answers: dict, shots=None) -> None:
    while app.session.question is not None:
        q = app.session.question
        if shots is not None and q.var in shots:
            await settled(pilot)
            shots[q.var] = app.export_screenshot()
        await answer(pilot, app, answers.get(q.var, app.session.default_for(q)))
    await pilot.pause()


def comparable(typed) -> dict:
    """The plan but for what only a non-interactive run can say: which values were tree defaults, and which
    answers of the file were not on the path (a user is never asked those)."""
    plan = {k: v for k, v in to_json(typed).items() if k != "ignored_answers"}
    return {**plan, "path": [(s["node"], s["value"]) for s in plan["path"]]}


# Every scenario is walked through the session in test_session.py; the screen walk takes about ten seconds each, so
# it runs one scenario per plan form (CPU, one GPU, TP node, TP+PP nodes, managed API) and the two scenarios whose
# answers file pre-sets something the first screen shows.
WALKED = ("tiny_offline_cpu", "llama8b_high_traffic", "llama70b_bf16", "very_large_model", "bursty_pay_as_you_go",
          "single_replica_forced", "llama8b_tp_forced")


@pytest.mark.parametrize("name", WALKED)
def test_walkthrough_gives_the_same_plan_as_plan_answers(name, screen_snapshot):
    answers = scenario(name)
    reference = run_answers(answers)
    asked = set(dict(reference.given))
    extras = {k: v for k, v in answers.items() if k not in asked}

    async def run():
        app = WizardApp(Session(extras=extras), resume=False, cursor_blink=False)
        shots = {"model": None, "gpu": None}
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await walk(pilot, app, answers, shots)
            assert isinstance(app.screen, SummaryScreen)
            await settled(pilot)
            shots["summary"] = app.export_screenshot()
            return app, shots

    app, shots = asyncio.run(run())
    assert comparable(build_plan(app.session)) == comparable(build_plan(reference))
    assert shots["model"] == screen_snapshot(name="1-first-question")
    if shots["gpu"] is not None:  # the fit check: the side panel's numbers beside the GPU question
        assert shots["gpu"] == screen_snapshot(name="2-fit-check")
    assert shots["summary"] == screen_snapshot(name="3-summary")


def test_back_keeps_the_answer_and_a_changed_answer_rewalks():
    async def run():
        app = WizardApp(resume=False, cursor_blink=False)
        async with app.run_test(size=SIZE) as pilot:
            await answer(pilot, app, "meta-llama/Llama-3.1-70B-Instruct")
            await answer(pilot, app, "bf16")
            assert app.session.question.var == "context_tokens"
            await pilot.press("escape")
            await pilot.pause()
            assert app.session.question.var == "weight_precision"
            screen = app.screen
            assert screen.current_value() == "bf16"  # the answer given is kept
            await answer(pilot, app, "fp8")  # switch to fp8
            assert app.session.answers["weight_precision"] == "fp8"
            await walk(pilot, app, {"peak_concurrency": 32, "context_tokens": 8192, "gpu": "h100-sxm-80gb"})
            return build_plan(app.session)

    plan = asyncio.run(run())
    assert plan.memory.inputs.weight_precision == "fp8"
    # re-walked from the changed answer: 70.6 B weights at 1 byte (bf16 would be 141 GB) across the TP ranks
    assert plan.memory.per_gpu_bytes.weights * plan.tp < 75e9


def test_validation_message_inline_then_a_good_answer():
    async def run():
        app = WizardApp(resume=False, cursor_blink=False)
        async with app.run_test(size=SIZE) as pilot:
            await answer(pilot, app, "Qwen/Qwen3-8B")
            await answer(pilot, app, "auto")
            await answer(pilot, app, "lots")
            message = str(app.screen.query_one("#error").render())
            assert app.session.question.var == "context_tokens"
            await answer(pilot, app, 4096)
            return message, app.session.question.var

    message, now = asyncio.run(run())
    assert "context_tokens" in message and "'lots'" in message and "expected a whole number" in message
    assert now == "prompt_tokens"


@pytest.mark.parametrize(("typed", "expected"), [
    ("./no/such/folder", "config.json"),  # the way out: a local folder must hold config.json
    # textual parses "[...]" in widget text: a typed "[/]" used to crash the app with a MarkupError
    ("bad[/]model[b]x", "'bad[/]model[b]x'"),
])
def test_a_refused_model_stays_on_the_question_with_the_reason(typed, expected):
    async def run():
        app = WizardApp(resume=False, cursor_blink=False)
        async with app.run_test(size=SIZE) as pilot:
            await answer(pilot, app, typed)
            return str(app.screen.query_one("#error").render()), app.session.question.var

    message, now = asyncio.run(run())
    assert now == "model" and expected in message


def test_answers_autosave_and_resume():
    async def first():
        app = WizardApp(resume=False, cursor_blink=False)
        async with app.run_test(size=SIZE) as pilot:
            await answer(pilot, app, "Qwen/Qwen3-8B")
            await answer(pilot, app, "fp8")
            await answer(pilot, app, 4096)

    asyncio.run(first())
    loaded = store.load()
    assert loaded.problem is None
    assert [k for k, _ in loaded.saved.given] == ["model", "weight_precision", "context_tokens"]

    async def second():
        app = WizardApp(cursor_blink=False)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await pilot.click("#yes")  # "Resume the saved session?"
            await pilot.pause()
            return app.session.question.var, dict(app.session.given)

    var, given = asyncio.run(second())
    assert var == "prompt_tokens" and given["weight_precision"] == "fp8"


def test_generate_refuses_a_non_empty_folder_until_confirmed(tmp_path):
    from wizard.artifacts.writer import write_repo

    target = tmp_path / "repo"
    write_repo({"mine.txt": "an earlier starter repo"}, target)  # --force replaces only a repo this tool wrote

    async def run():
        app = WizardApp(resume=False, cursor_blink=False)
        async with app.run_test(size=SIZE) as pilot:
            await walk(pilot, app, scenario("tiny_model"))
            await pilot.click("#generate")
            await pilot.pause()
            app.screen.query_one("#folder", Input).value = str(target)
            await pilot.press("enter")
            await pilot.pause()
            asked = type(app.screen).__name__
            await pilot.click("#yes")  # replace
            await pilot.pause()
            return asked, app.written

    asked, written = asyncio.run(run())
    assert asked == "ConfirmScreen"
    assert written == target and (target / "RATIONALE.md").exists() and not (target / "mine.txt").exists()


def test_quit_asks_first():
    async def run():
        app = WizardApp(resume=False, cursor_blink=False)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("ctrl+q")
            await pilot.pause()
            asked = type(app.screen).__name__
            await pilot.click("#no")  # stay
            await pilot.pause()
            still = app.is_running
            await pilot.press("f10")
            await pilot.pause()
            await pilot.click("#yes")
            await pilot.pause()
            return asked, still

    asked, still = asyncio.run(run())
    assert asked == "ConfirmScreen" and still


def test_usable_at_80_by_24():
    # Every question of the default walk, long choice lists included (22 GPUs, 6 precisions): Back and Next stay
    # on screen above the footer, and the side panel keeps a readable width.
    async def run():
        app = WizardApp(resume=False, cursor_blink=False)
        seen = []
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            while app.session.question is not None:
                q = app.session.question
                seen.append((q.var, app.screen.query_one("#back").region, app.screen.query_one("#next").region,
                             app.screen.query_one("#panel").region))
                await answer(pilot, app, app.session.default_for(q))
        return seen

    seen = asyncio.run(run())
    assert {"model", "weight_precision", "gpu"} <= {var for var, *_ in seen}
    for var, back, next_button, panel in seen:
        for button in (back, next_button):
            assert button.y >= 1 and button.bottom <= 23 and button.right <= 80, (var, button)  # above the footer
        assert panel.width >= 30, var


def test_no_terminal_is_one_line_and_exit_2():
    assert_one_line_error(run_cli(), "terminal", "ask", "plan --answers")


def test_f2_troubleshoots_with_the_plan_of_the_walk():
    """The wizard entry of `doctor` (§11): F2 on the summary of a forced TP 4 for a model that fits one card; the
    plan answers the checks it settles, so the first symptom leads straight to its cause; Escape steps back."""
    from wizard.tui.doctor_screen import DoctorScreen

    async def run():
        app = WizardApp(resume=False, cursor_blink=False)
        app.session.context.extras.update({"tp": 4})
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await walk(pilot, app, scenario("llama8b_tp_forced"))
            assert isinstance(app.screen, SummaryScreen)
            await pilot.press("f2")
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, DoctorScreen) and screen.facts
            await pilot.press("enter")  # the first symptom: fast on one card, slower on several
            await pilot.pause()
            shown = screen.shown
            await pilot.press("escape")
            await pilot.pause()
            back_at_symptoms = screen.symptom is None
            await pilot.press("escape")
            await pilot.pause()
            return shown, back_at_symptoms, isinstance(app.screen, SummaryScreen)

    shown, back_at_symptoms, closed = asyncio.run(run())
    assert "Tensor parallelism for a model that fits one card" in shown and "from plan.json" in shown
    assert back_at_symptoms and closed


def test_the_model_question_lists_the_catalog_by_family_and_typing_narrows_it():
    """Under the model input: the catalog's families newest first, each a heading over its models smallest first
    (the order of `models`); typing keeps the models whose id contains the text; picking one answers the question."""
    from wizard.sizing.engine import unserved_reason
    from wizard.sources.catalog import entry_architecture
    from wizard.sources.families import catalog_listing

    async def run():
        app = WizardApp(resume=False, cursor_blink=False)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            catalog = app.screen.query_one("#catalog", OptionList)
            prompts = [str(catalog.get_option_at_index(i).prompt) for i in range(catalog.option_count)]
            headings = [p for i, p in enumerate(prompts) if catalog.get_option_at_index(i).disabled]
            newest = catalog_listing()[0]
            assert headings[0] == f"{newest.entry.family} ({newest.released})"
            served = {m.entry.family for m in catalog_listing() if not unserved_reason(entry_architecture(m.entry))}
            assert len(headings) == len(served)  # a family vLLM no longer serves (Llama 3.2 Vision) is not offered
            field = app.screen.query_one("#answer", Input)
            field.value = "qwen3.6"
            await pilot.pause()
            narrowed = [(catalog.get_option_at_index(i).disabled, str(catalog.get_option_at_index(i).prompt))
                        for i in range(catalog.option_count)]
            assert narrowed[0] == (True, "Qwen3.6 (2026-04)")
            ids = [p.split(" · ")[0].strip() for disabled, p in narrowed if not disabled]
            assert ids == ["nvidia/Qwen3.6-27B-NVFP4", "nvidia/Qwen3.6-35B-A3B-NVFP4"]  # 27.3 B before 35.1 B
            catalog.focus()
            catalog.highlighted = 2
            await pilot.press("enter")
            await pilot.pause()
            return app.session.answers.get("model")

    assert asyncio.run(run()) == "nvidia/Qwen3.6-35B-A3B-NVFP4"


def test_the_resume_prompt_names_the_model_and_when():
    from wizard.tui.app import resume_question

    store.save([("model", "Qwen/Qwen3-8B"), ("weight_precision", "fp8")])
    text = resume_question(store.load().saved)
    assert "for Qwen/Qwen3-8B (2 answers)" in text and text.startswith("Resume the session saved 20")


def test_the_side_panel_shows_warnings_as_sentences_with_their_section():
    """The ids stay in JSON; the panel says what is wrong, in words, with the § to read."""
    from wizard.session.preview import panel_lines, preview
    from wizard.tui.side_panel import panel_text

    session = run_answers(scenario("average_not_p99"))
    lines = panel_lines(preview(session))
    assert "average_not_p99" in lines["warnings"]
    text = panel_text(lines).plain
    assert "average_not_p99" not in text
    assert "⚠ The peak concurrency given (64) is not clearly above what 2,000,000 requests a day keep in flight" in text
    assert "(§2" in text


def test_80x24_keeps_the_question_and_the_buttons_on_screen_with_the_longest_option_list():
    """The GPU question lists every card of the catalog: the options scroll, the prompt and Back/Next stay."""
    async def run():
        app = WizardApp(resume=False, cursor_blink=False)
        async with app.run_test(size=(80, 24)) as pilot:
            while app.session.question is not None and app.session.question.var != "gpu":
                await answer(pilot, app, app.session.default_for(app.session.question))
            await settled(pilot)
            screen = app.screen
            options = screen.query_one("#answer", OptionList)
            visible = [screen.query_one(w).region for w in ("#prompt", "#back", "#next")]
            return options.option_count, visible, app.size

    count, regions, size = asyncio.run(run())
    assert count > 20  # the longest list of the wizard
    for region in regions:
        assert region.height > 0 and region.y >= 0 and region.bottom <= size.height and region.right <= size.width


def test_jumping_to_an_earlier_answer_and_changing_it_rewalks_the_path():
    """F3 lists the answers; picking the second goes back to it, later answers stay as the defaults offered."""
    async def run():
        app = WizardApp(resume=False, cursor_blink=False)
        async with app.run_test(size=SIZE) as pilot:
            await answer(pilot, app, "meta-llama/Llama-3.1-70B-Instruct")
            await answer(pilot, app, "bf16")
            await answer(pilot, app, 8192)
            await pilot.press("f3")
            await pilot.pause()
            jump = app.screen.query_one("#answered", OptionList)
            listed = [str(jump.get_option_at_index(i).prompt) for i in range(jump.option_count)]
            jump.highlighted = 1
            await pilot.press("enter")
            await pilot.pause()
            at = app.session.question.var
            await answer(pilot, app, "fp8")
            return listed, at, app.session.question.var, app.session.default_for(app.session.question), dict(app.session.given)

    listed, at, now, default, given = asyncio.run(run())
    assert listed[1].startswith("2. At which precision") and listed[1].endswith("— bf16")
    assert at == "weight_precision" and given == {"model": "meta-llama/Llama-3.1-70B-Instruct", "weight_precision": "fp8"}
    assert now == "context_tokens" and default == 8192  # the later answer is offered again


def test_the_command_palette_has_the_wizards_commands_and_the_summary_previews_files():
    async def run():
        app = WizardApp(run_answers(scenario("llama8b_high_traffic")), resume=False, cursor_blink=False)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            titles = [c.title for c in app.get_system_commands(app.screen)]
            command = app.launch_command()
            await pilot.click("#files")
            await pilot.pause()
            shown = app.screen.query_one("#files-list", Static).render()
            return titles, command, str(shown)

    titles, command, shown = asyncio.run(run())
    assert {"Jump to an answer", "Show the plan", "Write the starter repo", "Copy the launch command",
            "Preview the starter repo's files"} <= set(titles)
    assert command is not None and command.startswith("vllm serve meta-llama/Llama-3.1-8B-Instruct ")
    assert "--max-num-seqs" in command
    assert "serve/launch.sh" in shown and "k8s/deployment.yaml" in shown
