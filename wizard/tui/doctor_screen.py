"""The wizard's troubleshooting screen (F2): the guide's §11 symptoms walked to a cause and fix.

The same doctor tree and walk as `llm-deploy-wizard doctor` (wizard.session.doctor): pick a symptom, answer each
check from its choices; when the wizard's own walk has reached a plan, every check that plan settles is answered
from it and said so. Escape takes back the last answer (then the symptom, then closes).
"""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList, Static
from textual.widgets.option_list import Option

from wizard.tree.doctor import Symptom


class DoctorScreen(ModalScreen[None]):
    """Symptom → checks → cause and fix, in one dialog."""

    BINDINGS = [("escape", "back", "Back")]
    DEFAULT_CSS = """
    DoctorScreen { align: center middle; }
    DoctorScreen > Vertical { width: 90%; height: 90%; border: thick $primary; padding: 1 2; background: $surface; }
    DoctorScreen #doctor-text { height: auto; max-height: 70%; overflow-y: auto; }
    DoctorScreen OptionList { height: auto; max-height: 12; }
    """

    def __init__(self, plan: Any = None) -> None:
        super().__init__()
        from wizard.session.doctor import plan_facts, plan_figures
        from wizard.tree.doctor import bundled_doctor_tree

        from dataclasses import replace

        from wizard.session.doctor import applicable

        tree = bundled_doctor_tree()
        self.doctor_tree = replace(tree, symptoms=applicable(tree, plan))  # the symptoms this plan can have
        self.facts = plan_facts(plan) if plan is not None else {}
        self.figures = plan_figures(plan) if plan is not None else None
        self.symptom: Symptom | None = None
        self.answers: dict[str, str] = {}
        self.order: list[str] = []  # the checks answered here, in order (Back takes the last one back)
        self.shown = ""  # the dialog's text as plain text (what a screen reader or a test reads)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Troubleshooting (§11) — Escape: back", id="doctor-title")
            yield Static(id="doctor-text")
            yield OptionList(id="doctor-choices")

    def on_mount(self) -> None:
        self.show()

    def show(self) -> None:
        """Render where the walk stands: the symptoms, the next check, or the cause and its fix."""
        from wizard.session.doctor import Pending, diagnose

        text = self.query_one("#doctor-text", Static)
        choices = self.query_one("#doctor-choices", OptionList)
        choices.clear_options()
        if self.symptom is None:
            lead = "What do you see?" + (" The plan of this walk answers the checks it can." if self.facts else "")
            text.update(Text(lead))
            self.shown = lead
            choices.add_options([Option(f"{s.label} ({s.section})", id=f"s:{s.id}") for s in self.doctor_tree.symptoms])
        else:
            result = diagnose(self.doctor_tree, self.symptom, self.answers, self.facts, self.figures)
            from wizard.doctor_ui import diagnosis_renderables, step_text

            if isinstance(result, Pending):
                check = result.check
                parts: list[Any] = [Text.assemble(("Symptom: ", "bold"), self.symptom.label)]
                parts += [step_text(s) for s in result.path]
                parts += [Text(""), Text(" ".join(check.prompt.split()), style="bold"),
                          Text(f"{' '.join(check.help.split())} ({check.section})", style="dim")]
                text.update(Group(*parts))
                self.shown = "\n".join(p.plain for p in parts)
                choices.add_options([Option(c.label, id=f"a:{result.node}:{c.value}") for c in check.choices])
            else:
                items = diagnosis_renderables(result)
                text.update(Group(*items))
                self.shown = "\n".join(i.plain for i in items if isinstance(i, Text))
        choices.display = choices.option_count > 0
        if choices.option_count:
            choices.highlighted = 0
            choices.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        kind, _, rest = (event.option.id or "").partition(":")
        if kind == "s":
            self.symptom = self.doctor_tree.symptom(rest)
        elif kind == "a":
            node, _, value = rest.partition(":")
            self.answers[node] = value
            self.order.append(node)
        self.show()

    def action_back(self) -> None:
        if self.order:
            self.answers.pop(self.order.pop(), None)
        elif self.symptom is not None:
            self.symptom = None
        else:
            self.dismiss(None)
            return
        self.show()
