"""The wizard's screens: one per question node (generated from the tree), the summary, and small dialogs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.console import Group
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.suggester import SuggestFromList
from textual.widgets import Button, Footer, Header, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from wizard.session.questions import choices_for, model_groups
from wizard.tree.schema import Question
from wizard.tui.side_panel import SidePanel

if TYPE_CHECKING:
    from wizard.specs.contracts import Plan
    from wizard.tui.app import WizardApp


def _text(value: Any) -> str:
    return "" if value is None else str(value)


class QuestionScreen(Screen):
    """One question: prompt, help with its §, the input (choices or a typed value), inline errors, Back/Next."""

    def __init__(self, question: Question, default: Any, step: int) -> None:
        super().__init__()
        self.question = question
        self.default = default
        self.step = step
        self.choices = [] if question.type in ("number", "text") or question.choices_from == "model_catalog" else (
            choices_for(question) if question.type == "choice" else None)

    @property
    def wizard(self) -> WizardApp:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        q = self.question
        yield Header()
        with Horizontal(id="body"):
            # The question scrolls; Back and Next stay on screen below it, however long the choice list.
            with Vertical(id="question-column"):
                with VerticalScroll(id="question"):
                    # Tree texts and typed answers are shown as written: no markup parsing (a "[" is a "[").
                    yield Static(f"Question {self.step} · {q.section} · F1 help", id="step", markup=False)
                    yield Static(q.prompt, id="prompt", markup=False)
                    yield Static(q.help, id="help", markup=False)
                    yield from self._input()
                    yield Static("", id="error", markup=False)
                with Horizontal(id="buttons"):
                    yield Button("← Back", id="back", disabled=self.step == 1)
                    yield Button("Next →", id="next", variant="primary")
            yield SidePanel(id="panel")
        yield Footer()

    def _input(self) -> ComposeResult:
        q = self.question
        if q.type == "bool":
            options = [Option("Yes", id="yes"), Option("No", id="no")]
            yield OptionList(*options, id="answer")
        elif self.choices:
            yield OptionList(*[Option(c.label, id=f"c{i}") for i, c in enumerate(self.choices)], id="answer")
        else:
            suggester = None
            if q.choices_from == "model_catalog":
                suggester = SuggestFromList([str(c.value) for c in choices_for(q)], case_sensitive=False)
            placeholder = "empty for the default described above" if q.optional else ""
            yield Input(_text(self.default), placeholder=placeholder, suggester=suggester, id="answer")
            if q.choices_from == "model_catalog":  # the catalog by family, newest first; typing narrows it
                yield OptionList(*self._catalog_options(""), id="catalog")

    def _catalog_options(self, text: str) -> list[Option]:
        """Family headings (not selectable) and their models matching `text`; an Option id is the model id."""
        options: list[Option] = []
        for heading, choices in model_groups(self.question, text):
            options.append(Option(heading, disabled=True))
            options += [Option(f"  {c.label}", id=str(c.value)) for c in choices]
        return options or [Option("no catalog model matches: a Hub id or a local folder is taken as typed", disabled=True)]

    def on_mount(self) -> None:
        widget = self.query_one("#answer")
        if isinstance(widget, OptionList):
            widget.highlighted = self._default_index()
        else:
            widget.cursor_blink = self.wizard.cursor_blink  # type: ignore[attr-defined]
        widget.focus()
        self.wizard.refresh_panel()

    def _default_index(self) -> int:
        if self.question.type == "bool":
            return 0 if self.default else 1
        for i, c in enumerate(self.choices or []):
            if c.value == self.default:
                return i
        return 0

    def value_at(self, index: int | None) -> Any:
        if index is None:
            return None
        if self.question.type == "bool":
            return index == 0
        return self.choices[index].value if self.choices else None

    def current_value(self) -> Any:
        widget = self.query_one("#answer")
        if isinstance(widget, OptionList):
            return self.value_at(widget.highlighted)
        return widget.value  # type: ignore[attr-defined]

    def show_error(self, message: str) -> None:
        self.query_one("#error", Static).update(f"⚠ {message}")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option_list.id == "catalog":  # a model picked from the catalog list: as if typed and entered
            self.wizard.submit(event.option.id)
            return
        self.wizard.submit(self.value_at(event.option_index))

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_list.id == "catalog":
            return
        self.wizard.refresh_panel(self.question.var, self.value_at(event.option_index))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.wizard.submit(event.value)

    def on_input_changed(self, event: Input.Changed) -> None:
        if self.question.type == "number":
            self.wizard.refresh_panel(self.question.var, event.value)
        elif self.question.choices_from == "model_catalog":
            # the whole catalog until the prefilled default is edited, then the models containing the text
            text = "" if event.value == _text(self.default) else event.value
            self.query_one("#catalog", OptionList).set_options(self._catalog_options(text))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "back":
            self.wizard.action_go_back()
        elif event.button.id == "next":
            self.wizard.submit(self.current_value())


class SummaryScreen(Screen):
    """The plan: decision, numbers, warnings, alternatives and the path; then generate the starter repo."""

    def __init__(self, plan: Plan, answers: dict[str, Any]) -> None:
        super().__init__()
        self.plan = plan
        self.answers = answers

    def compose(self) -> ComposeResult:
        from wizard.report import plan_renderables

        yield Header()
        with Horizontal(id="body"):
            with VerticalScroll(id="summary"):
                yield Static(Group(*plan_renderables(self.plan, self.answers)), id="plan")
            with Vertical(id="actions"):
                yield Button("Generate starter repo", id="generate", variant="primary")
                yield Button("Preview files", id="files")
                yield Button("← Back", id="back")
                yield Button("Quit", id="quit")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#generate", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        app: WizardApp = self.app  # type: ignore[assignment]
        if event.button.id == "generate":
            app.push_screen(GenerateScreen(app.default_folder()))
        elif event.button.id == "files":
            app.action_preview_files()
        elif event.button.id == "back":
            app.action_go_back()
        else:
            app.action_request_quit()


class GenerateScreen(ModalScreen[None]):
    """Where to write the starter repo; a non-empty folder is replaced only after a confirmation."""

    BINDINGS = [("escape", "dismiss", "Cancel")]

    def __init__(self, folder: str) -> None:
        super().__init__()
        self.folder = folder

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label("Write the starter repo into which folder? (created if missing)")
            yield Input(self.folder, id="folder")
            yield Static(f"Proposed: {self.folder}", id="proposed", markup=False)  # in full: it wraps
            yield Label("", id="error", markup=False)
            with Horizontal(classes="dialog-buttons"):
                yield Button("Write", id="write", variant="primary")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#folder", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self._write(event.value, force=False)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "write":
            self._write(self.query_one("#folder", Input).value, force=False)
        else:
            self.dismiss()

    def _write(self, folder: str, force: bool) -> None:
        app: WizardApp = self.app  # type: ignore[assignment]
        from wizard.artifacts.writer import FolderNotEmpty

        try:
            message = app.write_repo(folder, force)
        except FolderNotEmpty:
            app.push_screen(ConfirmScreen(f"{folder} is not empty. Replace the starter repo in it?", "Replace",
                                          safe_default=True),
                            lambda yes: self._write(folder, True) if yes else None)
            return
        if message is None:
            return
        self.query_one("#error", Label).update(f"⚠ {message}")


class ConfirmScreen(ModalScreen[bool]):
    """A yes/no question. Escape answers no; a destructive question starts on the safe button."""

    BINDINGS = [("escape", "answer_no", "Cancel")]

    def __init__(self, question: str, yes: str = "Yes", no: str = "Cancel", *, safe_default: bool = False) -> None:
        super().__init__()
        self.question, self.yes, self.no = question, yes, no
        self.safe_default = safe_default

    def action_answer_no(self) -> None:
        self.dismiss(False)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.question, markup=False)
            with Horizontal(classes="dialog-buttons"):
                yield Button(self.yes, id="yes", variant="primary")
                yield Button(self.no, id="no")

    def on_mount(self) -> None:
        self.query_one("#no" if self.safe_default else "#yes", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")


class HelpScreen(ModalScreen[None]):
    """F1: the rule behind the focused question, with its § of the guide."""

    BINDINGS = [("escape,f1,q", "dismiss", "Close")]

    def __init__(self, title: str, text: str) -> None:
        super().__init__()
        self.title_text, self.text = title, text

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="dialog"):
            yield Label(self.title_text, id="help-title", markup=False)
            yield Static(self.text, markup=False)
            yield Button("Close", id="close")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss()


class JumpScreen(ModalScreen[int | None]):
    """F3: the questions answered so far with their answers; picking one goes back to it (Back through fifteen
    questions is slow). Later answers are kept as the defaults they offer again."""

    BINDINGS = [("escape,f3", "dismiss", "Close")]

    def __init__(self, answered: list[tuple[str, str]]) -> None:
        super().__init__()
        self.answered = answered  # (prompt, answer as text), in the order answered

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label("Go back to an answer (Enter), Escape to stay", id="help-title")
            yield OptionList(*[Option(f"{i + 1}. {prompt} — {value}", id=f"a{i}")
                               for i, (prompt, value) in enumerate(self.answered)], id="answered")

    def on_mount(self) -> None:
        answered = self.query_one("#answered", OptionList)
        answered.highlighted = max(0, len(self.answered) - 1)
        answered.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option_index)


class FilesScreen(ModalScreen[None]):
    """The summary's preview: every file the starter repo would get, with its size, before anything is written."""

    BINDINGS = [("escape", "dismiss", "Close")]

    def __init__(self, files: dict[str, str]) -> None:
        super().__init__()
        self.files = files

    def compose(self) -> ComposeResult:
        lines = [f"{path}  ({text.count(chr(10)):,} lines)" for path, text in sorted(self.files.items())]
        with VerticalScroll(classes="dialog"):
            yield Label(f"The starter repo: {len(self.files)} files (nothing written yet)", id="help-title")
            yield Static("\n".join(lines), id="files-list", markup=False)
            yield Button("Close", id="close")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss()
