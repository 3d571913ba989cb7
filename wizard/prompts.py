"""`llm-deploy-wizard ask`: the wizard's questions one per line (questionary), for SSH, screen readers, small terminals.

It drives the same Session as the full-screen app and `plan --answers`, so the same answers give the same plan.
questionary has no Back: selects offer a "← back" choice and typed answers accept "<" alone. Answers are saved
after every step; Ctrl+C saves and exits 130; without a terminal it says to use `plan --answers` and exits 2.
Everything printed is plain text (no meaning carried by colour), one line per fact.

questionary and rich are imported inside run_ask: importing this module stays cheap.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wizard.errors import InputError, printable

if TYPE_CHECKING:
    from wizard.specs.contracts import Plan
    from rich.console import Console

    from wizard.session.session import Session
    from wizard.tree.schema import Question

EXIT_OK, EXIT_USAGE, EXIT_INTERRUPTED = 0, 2, 130
BACK = "__back__"  # the value of the "← back" choice (no tree choice is spelled like this)
BACK_LABEL = "← back (previous question)"
BACK_TYPED = "<"
RESUME_HINT = "saved; run `llm-deploy-wizard ask` to resume"
NO_TTY = ("llm-deploy-wizard ask: needs a terminal (stdin is not one); "
          "without a terminal use `llm-deploy-wizard plan --answers FILE`")
GIB = 2**30


class _Back(Exception):
    """The user asked to go back (the "← back" choice, or "<" typed alone)."""


def run_ask(input: Any = None, output: Any = None, *, console: Console | None = None) -> int:
    """Ask the tree's questions one per line; returns the exit status (0 done, 2 no terminal, 130 interrupted).

    `input`/`output` are prompt_toolkit Input/Output objects handed to every prompt (tests pass a pipe input
    and a DummyOutput); `console` receives the plain lines printed between prompts (default: stdout)."""
    if input is None and not _isatty(sys.stdin):
        print(NO_TTY, file=sys.stderr)
        return EXIT_USAGE
    from rich.console import Console

    console = console or Console(highlight=False)
    ui = _Prompter(input, output, console)
    store = _Store(ui)
    session: Session | None = None
    try:
        session = _start(ui, store)
        return _walk_and_finish(ui, session, store)
    except (KeyboardInterrupt, EOFError):
        # EOFError: Ctrl+D in a text prompt, or the input closed under us; both mean "stop here".
        if session is not None:
            store.save(session.given, session.context.extras)
        ui.say("")
        ui.say(RESUME_HINT)
        return EXIT_INTERRUPTED


class _Store:
    """The session store for `ask`: saving never stops the walk; a failure is said once, as a line."""

    def __init__(self, ui: _Prompter) -> None:
        from wizard.session import store

        self.ui = ui
        self.autosave = store.Autosave()
        self.load = store.load
        self.clear = store.clear

    def save(self, given: list[tuple[str, Any]], extras: dict[str, Any]) -> None:
        warning = self.autosave.save(given, extras)
        if warning:
            self.ui.say(warning)


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class _Prompter:
    """The questionary calls, each given the same input/output, raising KeyboardInterrupt on Ctrl+C."""

    def __init__(self, input: Any, output: Any, console: Console) -> None:
        import questionary

        self.q = questionary
        self.io = {k: v for k, v in (("input", input), ("output", output)) if v is not None}
        self.console = console

    def say(self, text: str) -> None:
        self.console.print(text, markup=False, highlight=False, soft_wrap=False)

    def select(self, message: str, choices: list[tuple[str, Any]], default: Any = None, back: bool = False) -> Any:
        items = [self.q.Choice(title=label, value=value) for label, value in choices]
        if back:
            items.append(self.q.Choice(title=BACK_LABEL, value=BACK))
        values = [value for _, value in choices]
        default = default if default in values else None
        answer = self.q.select(message, choices=items, default=default, **self.io).unsafe_ask()
        if answer == BACK:
            raise _Back
        return answer

    def yes_no(self, message: str, default: bool = True, back: bool = False) -> bool:
        return self.select(message, [("Yes", "yes"), ("No", "no")], "yes" if default else "no", back=back) == "yes"

    def text(self, message: str, default: str, check, back: bool, instruction: str = "", completions=None) -> str:
        """A typed answer; `check(text)` returns True or the message shown inline under the prompt."""

        def validate(text: str) -> Any:
            if back and text.strip() == BACK_TYPED:
                return True
            return check(text)

        if back:
            instruction = (instruction + "; " if instruction else "") + f"type {BACK_TYPED} alone to go back"
        if completions:
            # questionary.autocomplete has no `instruction`: it goes into the message
            shown = f"{message} ({instruction})" if instruction else message
            ids, meta = completions
            question = self.q.autocomplete(shown, choices=ids, default=default, validate=validate,
                                           meta_information=meta, **self.io)
        else:
            question = self.q.text(message, default=default, validate=validate,
                                   instruction=f"({instruction})" if instruction else None, **self.io)
        answer = question.unsafe_ask()
        if back and answer.strip() == BACK_TYPED:
            raise _Back
        return answer


# -- the flow


def _start(ui: _Prompter, store) -> Session:
    from wizard.session.session import Session

    loaded = store.load()
    if loaded.problem:
        ui.say(loaded.problem)
    saved = loaded.saved
    if saved and saved.given:
        given, extras = saved
        ui.say(f"A saved session has {len(given)} answer(s), the last: {given[-1][0]} = {given[-1][1]!r}.")
        if ui.yes_no("Resume the saved session?", default=True):
            session = Session(extras=extras)
            session.restore(given)
            if len(session.given) < len(given):
                ui.say(f"Resumed {len(session.given)} of {len(given)} answers (the next one is no longer accepted).")
            return session
        store.clear()
    return Session()


def _walk_and_finish(ui: _Prompter, session: Session, store) -> int:
    while True:
        _walk(ui, session, store)
        try:
            return _finish(ui, session)
        except _Back:
            session.back()
            store.save(session.given, session.context.extras)
            ui.say(f"back to: {session.question.prompt}" if session.question else "back")


def _walk(ui: _Prompter, session: Session, store) -> None:
    """Ask until the walk reaches a recommendation; save after every move."""
    while (q := session.question) is not None:
        first = not session.given
        ui.say("")
        ui.say(f"[{len(session.given) + 1}] {q.prompt}")
        if q.help:
            ui.say("    " + " ".join(q.help.split()) + (f" [see {q.section}]" if q.section else ""))
        try:
            raw = _ask_one(ui, session, q, back=not first)
        except _Back:
            session.back()
            store.save(session.given, session.context.extras)
            ui.say(f"back to: {session.question.prompt}" if session.question else "back")
            continue
        try:
            session.answer(raw)
        except InputError as e:  # e.g. the model cannot be found or the Hub is unreachable: ask again
            ui.say(e.line())
            session.remembered[q.var] = raw  # offered again as the default, to be corrected
            continue
        store.save(session.given, session.context.extras)
        if q.choices_from == "model_catalog":
            _say_model(ui, session)
        _say_live(ui, session)


def _ask_one(ui: _Prompter, session: Session, q: Question, back: bool) -> Any:
    from wizard.session.questions import choices_for, coerce

    default = session.default_for(q)
    if q.type == "bool":
        return ui.yes_no(q.prompt, default=bool(default), back=back)
    if q.type == "choice" and q.choices_from != "model_catalog":
        choices = [(c.label or str(c.value), c.value) for c in choices_for(q)]
        return ui.select(q.prompt, choices, default=default, back=back)

    def check(text: str) -> Any:
        try:
            coerce(q, text)
        except InputError as e:
            return e.line()
        return True

    notes = []
    if q.optional:
        notes.append("may be left empty")
    if q.minimum is not None or q.maximum is not None:
        low = f"{q.minimum:g}" if q.minimum is not None else ""
        high = f"{q.maximum:g}" if q.maximum is not None else ""
        notes.append(f"at least {low}" if not high else f"at most {high}" if not low else f"{low} to {high}")
    completions = None
    if q.choices_from == "model_catalog":
        entries = choices_for(q)
        completions = ([str(c.value) for c in entries], {str(c.value): c.label for c in entries})
        notes.append("a catalog id (Tab completes), a Hub id or a local folder")
    return ui.text(q.prompt, _shown(default), check, back, "; ".join(notes), completions)


def _shown(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _say_model(ui: _Prompter, session: Session) -> None:
    """What was found for the model: architecture, parameters, KV bytes per token, source."""
    spec = session.model_spec
    facts = session.state.facts
    parts = []
    if spec is not None:
        parts.append(f"{spec.id}: {spec.architecture}")
    if facts.get("params_b"):
        parts.append(f"{facts['params_b']:,.2f} B parameters")
    plan = _preview(session)
    if plan is not None and plan.memory is not None:
        parts.append(f"KV cache {plan.memory.kv_bytes_per_token:,} bytes/token per GPU at TP {plan.tp}")
    if spec is not None:
        parts.append(f"from {spec.source} ({spec.source_detail})")
    ui.say("Found: " + "; ".join(parts))
    if spec is not None:
        for note in spec.notes:
            ui.say(f"Note: {note}")
    if facts.get("param_guess_text"):
        ui.say(f"Note: {facts['param_guess_text']}")


def _preview(session: Session) -> Plan | None:
    from wizard.session.preview import preview

    try:
        return preview(session)
    except Exception:  # noqa: BLE001 — a live figure must never end the session; the plan itself re-checks
        return None


def live_line(session: Session) -> str:
    """One plain line of the live figures: layout, memory per GPU against usable, fit, cost per month."""
    from wizard.session.preview import panel_lines

    p = panel_lines(_preview(session))
    if not p.get("ready"):
        return "Plan so far: not computable yet"
    parts = [p["form"]]
    if p.get("layout"):
        parts.append(p["layout"])
    if p.get("memory"):
        used = sum(p["memory"].values())
        verdict = "fits" if p.get("fits") else "does NOT fit"
        parts.append(f"{used / GIB:,.1f} of {p['usable_bytes'] / GIB:,.1f} GiB per GPU, {verdict}")
    parts.append(f"about {p['cost_text']}/month" if p.get("cost_usd_month") is not None else "cost unknown")
    if p.get("cold_start_s") is not None:
        parts.append(f"cold start {p['cold_start_s']:,.0f} s")
    return "Plan so far (defaults for the rest): " + "; ".join(parts)


def _say_live(ui: _Prompter, session: Session) -> None:
    ui.say(live_line(session))


def _finish(ui: _Prompter, session: Session) -> int:
    """The summary, then the starter repo: folder, replace or not, write."""
    from wizard.session.plan import build_plan

    plan = build_plan(session)
    ui.say("")
    from wizard.report import print_plan

    print_plan(plan, session.answers, console=ui.console)
    ui.say("")
    if not ui.yes_no("Write the starter repo?", default=True, back=True):
        ui.say("Nothing written; the answers stay saved: run `llm-deploy-wizard ask` again to write the repo later.")
        return EXIT_OK
    from wizard.session.starter_repo import FolderNotEmpty, default_folder, write_starter_repo

    default = str(default_folder(session))  # the folder the full-screen app proposes, in full
    while True:
        folder = ui.text("Folder for the starter repo?", default,
                         lambda t: True if t.strip() else "a folder is required", back=False,
                         instruction="created if missing")
        default = folder
        path = Path(folder.strip())
        notices: list[str] = []
        try:
            written = write_starter_repo(session, plan, path, force=False, notices=notices)
        except FolderNotEmpty:
            ui.say(f"{path} is not empty.")
            if not ui.yes_no("Replace it?", default=False):
                continue
            try:
                written = write_starter_repo(session, plan, path, force=True, notices=notices)
            except InputError as e2:
                ui.say(e2.line())
                continue
        except InputError as e:
            ui.say(e.line())
            continue
        break
    for notice in notices:
        ui.say(printable(notice))
    # the service cleared the saved session: the walk is finished, nothing is left to resume
    ui.say(printable(f"Wrote the starter repo to {written.path} — start with README.md, the reasons are in RATIONALE.md"))
    return EXIT_OK
