"""The full-screen wizard (textual): the same session and tree as `plan`, one screen per question.

Key bindings are data (BINDINGS, each with an id), the stylesheet lives beside this module (app.tcss).
Answers are saved after every step and offered for resume at the next start; quitting asks first.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from collections.abc import Iterable

from textual.app import App, SystemCommand
from textual.screen import Screen
from textual.binding import Binding

from wizard.artifacts.writer import FolderNotEmpty
from wizard.errors import InputError
from wizard.session import store
from wizard.session.plan import build_plan
from wizard.session.preview import panel_lines, preview
from wizard.session.questions import coerce
from wizard.session.session import Session
from wizard.tui.screens import ConfirmScreen, FilesScreen, HelpScreen, JumpScreen, QuestionScreen, SummaryScreen
from wizard.tui.side_panel import SidePanel


def resume_question(saved: store.Saved) -> str:
    """What resuming brings back: the model, how many answers, when they were saved."""
    import datetime

    answers = dict(saved.given)
    try:
        when = datetime.datetime.fromtimestamp(store.session_file().stat().st_mtime).strftime("%Y-%m-%d %H:%M")
    except OSError:
        when = "earlier"
    model = answers.get("model")
    return (f"Resume the session saved {when}" + (f" for {model}" if model else "")
            + f" ({len(saved.given)} answer{'s' if len(saved.given) != 1 else ''})?")


def guide_text(cited: str) -> str:
    """The text of every guide section `cited` names ("§2, §9 Q1"), each under its heading, for F1."""
    from wizard.errors import InputError
    from wizard.guide import cited as numbers, section

    parts = []
    for n in numbers(cited):
        try:
            s = section(n)
        except InputError:
            continue
        parts.append(f"§{s.number} {s.title}  (docs/guide/{s.path.name})\n\n{s.text.strip()}")
    return "\n\n".join(parts)


class WizardApp(App):
    """llm-deploy-wizard: choose how to serve an LLM, with the numbers beside every question."""

    TITLE = "llm-deploy-wizard"
    SUB_TITLE = "how to serve an LLM (§ = sections of the guide)"
    CSS_PATH = "app.tcss"
    BINDINGS = [
        Binding("escape", "go_back", "Back", id="back"),
        Binding("f1", "help", "Help", id="help"),
        Binding("f2", "doctor", "Troubleshoot", id="doctor"),
        Binding("f3", "jump", "Answers", id="jump"),
        Binding("ctrl+t", "toggle_dark", "Theme", id="theme"),
        Binding("ctrl+q", "request_quit", "Quit", id="quit", priority=True),
        Binding("f10", "request_quit", "Quit (F10)", id="quit-f10", show=False, priority=True),
    ]

    def __init__(self, session: Session | None = None, *, resume: bool = True, cursor_blink: bool = True) -> None:
        super().__init__()
        self.session = session or Session()
        self.offer_resume = resume
        self.cursor_blink = cursor_blink  # tests turn it off for stable screenshots
        self.written: Path | None = None
        self.autosaver = store.Autosave()

    # -- navigation
    def on_mount(self) -> None:
        self.show_current()
        loaded = store.load() if self.offer_resume else store.Loaded(None, None)
        if loaded.problem:
            self.notify(loaded.problem, title="Saved session", severity="warning", timeout=15, markup=False)
        saved = loaded.saved
        if saved and saved.given:
            self.push_screen(
                ConfirmScreen(resume_question(saved), "Resume", "Start over"),
                lambda yes: self._resume(saved) if yes else store.clear(),
            )

    def autosave(self) -> None:
        warning = self.autosaver.save(self.session.given, self.session.context.extras)
        if warning:
            self.notify(warning, title="Autosave", severity="warning", timeout=15, markup=False)

    def _resume(self, saved: store.Saved) -> None:
        given, extras = saved
        self.session.context.extras.update(extras)
        self.session.restore(given)
        self.show_current()

    def show_current(self) -> None:
        q = self.session.question
        screen = QuestionScreen(q, self.session.default_for(q), len(self.session.given) + 1) if q else SummaryScreen(
            build_plan(self.session), self.session.answers)
        if self.screen_stack and len(self.screen_stack) > 1:
            self.switch_screen(screen)
        else:
            self.push_screen(screen)

    def submit(self, value: Any) -> None:
        """Answer the current question; an answer that is not accepted stays on screen with its message."""
        q = self.session.question
        screen = self.screen
        try:
            self.session.answer(value)
        except InputError as e:
            if isinstance(screen, QuestionScreen):
                screen.show_error(e.line())
            return
        self.autosave()
        if q is not None and q.var == "model":
            self.notify(self.model_found(), title="Model found", timeout=8, markup=False)
        self.show_current()

    def model_found(self) -> str:
        """What the model resolved to: architecture, parameters, KV per token, source (issue #6)."""
        spec = self.session.model_spec
        facts = self.session.state.facts
        if spec is None:
            return ""
        p = preview(self.session)
        kv = p.memory.kv_bytes_per_token if p is not None and p.memory is not None else None
        tp = p.tp if p is not None else 1
        kv_text = (f", KV cache {kv:,} B per token per GPU" + (f" (TP {tp}; {kv * tp:,} B per token for the whole model "
                   "when the KV heads split evenly)" if tp > 1 else "")) if kv else ""
        return (f"{spec.id}: {spec.architecture} ({spec.attention}), {facts.get('params_b')} B parameters{kv_text}, "
                f"from {spec.source}")

    def refresh_panel(self, var: str | None = None, value: Any = None) -> None:
        """Recompute the side panel, optionally with a tentative answer for the current question."""
        panel = self.screen.query("#panel")
        if not panel:
            return
        session = self.session
        q = session.question
        if var is not None and q is not None and q.var == var and value not in (None, ""):
            try:
                value = coerce(q, value, session.tree)  # a half-typed value shows the last good numbers, never an error
            except InputError:
                return
            shadow = Session(session.tree, session.context.extras)
            shadow.given = [*session.given, (var, value)]
            shadow.remembered = {**session.remembered, var: value}
            session = shadow
        panel.first(SidePanel).show(panel_lines(preview(session)))

    # -- actions (bound keys)
    def action_go_back(self) -> None:
        if isinstance(self.screen, (QuestionScreen, SummaryScreen)) and self.session.back():
            self.autosave()
            self.show_current()

    def action_help(self) -> None:
        """F1: the guide sections the question cites, their text in full (the rule and its common mistakes)."""
        q = self.session.question
        if q is not None:
            self.push_screen(HelpScreen(f"{q.prompt}  ({q.section})", guide_text(q.section) or q.help))

    def action_doctor(self) -> None:
        """§11 troubleshooting; with a finished walk its plan answers the checks it can."""
        from wizard.tui.doctor_screen import DoctorScreen

        if isinstance(self.screen, DoctorScreen):
            return
        plan = None
        if self.session.recommendation is not None:
            try:
                plan = build_plan(self.session)
            except InputError:
                plan = None
        self.push_screen(DoctorScreen(plan))

    def action_jump(self) -> None:
        """F3: the answers given so far; picking one goes back to that question."""
        if not isinstance(self.screen, (QuestionScreen, SummaryScreen)) or not self.session.given:
            return
        answered = [(self.session.prompt_of(var), "(default)" if value is None else str(value))
                    for var, value in self.session.given]
        self.push_screen(JumpScreen(answered), self._jump)

    def _jump(self, index: int | None) -> None:
        if index is None:
            return
        self.session.jump_to(index)
        self.autosave()
        self.show_current()

    def action_preview_files(self) -> None:
        """The files `Generate` would write, listed before anything is written."""
        from wizard.artifacts.render import render_repo

        try:
            files = render_repo(build_plan(self.session), self.session.answers)
        except InputError as e:
            self.notify(e.line(), title="No starter repo", severity="warning", timeout=15, markup=False)
            return
        self.push_screen(FilesScreen(files))

    def launch_command(self) -> str | None:
        """The plan's `vllm serve` command line, as its launch script runs it (None before a served plan)."""
        import shlex

        from wizard.artifacts.context import flatten, serve_flags

        if self.session.recommendation is None:
            return None
        plan = build_plan(self.session)
        if plan.memory is None or plan.form in ("managed_api", "cpu"):
            return None
        model = str(self.session.answers.get("model") or plan.model)
        served = str(self.session.answers.get("served_model_name") or model)
        return shlex.join(["vllm", "serve", *flatten(model, served, serve_flags(plan, self.session.answers))])

    def copy_launch_command(self) -> None:
        command = self.launch_command()
        if command is None:
            self.notify("No launch command yet: finish the questions first (a served plan has one)", timeout=8)
            return
        self.copy_to_clipboard(command)
        self.notify(command, title="Copied the launch command", timeout=10, markup=False)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """The command palette (Ctrl+P): the wizard's own commands beside textual's."""
        yield from super().get_system_commands(screen)
        yield SystemCommand("Jump to an answer", "Go back to any question answered so far (F3)", self.action_jump)
        q = self.session.question
        if q is not None:
            yield SystemCommand("Open the guide section", f"The rule behind this question: {q.section} (F1)",
                                self.action_help)
        if self.session.recommendation is not None:
            yield SystemCommand("Show the plan", "The summary of the plan the answers lead to", self.show_current)
            yield SystemCommand("Preview the starter repo's files", "What Generate would write, nothing written",
                                self.action_preview_files)
            yield SystemCommand("Write the starter repo", "Choose the folder and write it",
                                self.open_generate)
            yield SystemCommand("Copy the launch command", "The plan's vllm serve command line, to the clipboard",
                                self.copy_launch_command)

    def open_generate(self) -> None:
        from wizard.tui.screens import GenerateScreen

        if not isinstance(self.screen, SummaryScreen):
            self.show_current()
        self.push_screen(GenerateScreen(self.default_folder()))

    def action_toggle_dark(self) -> None:
        self.theme = "textual-light" if self.theme == "textual-dark" else "textual-dark"

    def action_request_quit(self) -> None:
        self.push_screen(ConfirmScreen(self.quit_question(), "Quit", "Stay"), lambda yes: self.exit() if yes else None)

    def quit_question(self) -> str:
        """Writing the repo cleared the saved session: until an answer changes again, there is nothing to resume."""
        if self.written is not None and not _session_saved():
            return f"Quit? The starter repo is in {self.written}; nothing is left to resume."
        return "Quit? Your answers are saved: the next start offers to resume."

    # -- the starter repo
    def default_folder(self) -> str:
        """The folder `ask` proposes too: absolute, shown in full (wizard.session.starter_repo)."""
        from wizard.session.starter_repo import default_folder

        return str(default_folder(self.session))

    def write_repo(self, folder: str, force: bool) -> str | None:
        """Write the starter repo; None on success, else the one-line reason (FolderNotEmpty is raised)."""
        from wizard.session.starter_repo import write_starter_repo

        notices: list[str] = []
        try:
            written = write_starter_repo(self.session, build_plan(self.session), folder, force=force,
                                         notices=notices)
        except FolderNotEmpty:
            raise  # the screen asks before replacing
        except InputError as e:
            return e.line()
        finally:  # a folder restored from an interrupted earlier run is said even when the write is refused
            for notice in notices:
                self.notify(notice, title="Earlier run", severity="warning", timeout=15, markup=False)
        self.written = written.path
        self.pop_screen()
        self.notify(f"Wrote {self.written}: start with README.md; the reasons are in RATIONALE.md",
                    title="Starter repo written", timeout=15, markup=False)
        return None


def _session_saved() -> bool:
    try:
        return store.session_file().exists()
    except (OSError, RuntimeError):  # no home folder to find the state folder in
        return False
