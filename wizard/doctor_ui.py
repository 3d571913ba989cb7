"""`llm-deploy-wizard doctor`: the front end of the doctor session (wizard/session/doctor.py).

Three ways to run it:
- on a terminal (stdin is one, no --json): the symptom and every check nobody answered are asked with questionary,
  with the "← back" choice of `ask`; answers from --answer and plan.json are said, not asked; Ctrl+C exits 130;
- without a terminal (or with --json): --symptom and --answer must carry the walk; the first check left open is
  one line naming it and its accepted values, exit 2 (never a prompt that waits);
- --plan without --symptom, without a terminal: every symptom is walked with what plan.json settles, and the
  causes it reaches by itself are listed (with what the other symptoms still need).
Output is rich Text for people (texts from plan.json are data, never markup) or one JSON object with --json.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

    from wizard.session.doctor import Diagnosis, Fact, Pending
    from wizard.tree.doctor import DoctorTree, Symptom

EXIT_OK, EXIT_INTERRUPTED = 0, 130


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def run_doctor(symptom_id: str | None, plan_path: str | None, answer_items: list[str], as_json: bool, *,
               interactive: bool | None = None, input: Any = None, output: Any = None,
               console: Console | None = None) -> int:
    """The command; raises InputError (one line, exit 2) for bad input or a walk that needs an answer off a terminal."""
    from wizard.session import doctor as d
    from wizard.tree.doctor import bundled_doctor_tree

    tree = bundled_doctor_tree()
    answers = d.parse_answers(tree, answer_items)
    symptom = d.find_symptom(tree, symptom_id) if symptom_id is not None else None
    plan = d.read_plan(Path(plan_path)) if plan_path is not None else None
    facts = d.plan_facts(plan) if plan is not None else {}
    figures = d.plan_figures(plan)
    if symptom is not None and (refused := d.not_applicable(tree, symptom, plan)) is not None:
        raise refused
    from dataclasses import replace

    tree = replace(tree, symptoms=d.applicable(tree, plan))  # a plan's kind rules the others out
    if not tree.symptoms:  # a managed API: the vendor runs what §11 troubleshoots
        reason = ("§11 troubleshoots self-hosted serving; this plan is a managed API, whose vendor owns \"model, "
                  "cards, scaling, drivers\" — the team owns caller-side retries, timeouts, budget, degradation (§6)")
        if as_json:
            print(json.dumps({"plan": plan_path, "applies": False, "reason": reason}, indent=2, ensure_ascii=False))
        else:
            from rich.text import Text

            _print(console, [Text(f"doctor: {reason}")])
        return EXIT_OK
    ask = interactive if interactive is not None else (not as_json and _isatty(sys.stdin))
    if ask:
        return _interactive(tree, symptom, answers, facts, figures, input, output, console)
    if symptom is None:
        if plan is None or plan_path is None:
            raise d.missing_symptom(tree)
        results = d.scan(tree, answers, facts, figures)
        unused = d.unused_answers(tree, answers, results)
        if as_json:
            print(json.dumps(_scan_json(results, plan_path, unused), indent=2, ensure_ascii=False))
        else:
            _print(console, scan_renderables(results, plan_path, unused))
        return EXIT_OK
    result = d.diagnose(tree, symptom, answers, facts, figures)
    if isinstance(result, d.Pending):
        raise d.missing_answer(result)
    unused = d.unused_answers(tree, answers, [result])
    if as_json:
        out = result.to_json()
        if plan_path is not None:
            out["plan"] = plan_path
        if unused:
            out["unused_answers"] = unused
        print(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        _print(console, diagnosis_renderables(result, unused))
    return EXIT_OK


def _scan_json(results: list[Diagnosis | Pending], plan_path: str, unused: list[str]) -> dict[str, Any]:
    from wizard.session.doctor import Diagnosis

    done = [r for r in results if isinstance(r, Diagnosis)]
    out: dict[str, Any] = {
        "plan": plan_path,
        "findings": [r.to_json() for r in done if r.node.found],
        "ruled_out": [r.to_json() for r in done if not r.node.found],
        "needs_answers": [r.to_json() for r in results if not isinstance(r, Diagnosis)],
    }
    if unused:
        out["unused_answers"] = unused
    return out


def _print(console: Console | None, items: list[RenderableType]) -> None:
    from wizard.report import new_console

    console = console or new_console()
    for item in items:
        console.print(item, highlight=False)


# -- rich renderables (Text only: plan.json's model names and paths are never parsed as markup)


def step_text(step) -> Any:  # noqa: ANN001 (a doctor Step)
    from rich.text import Text

    origin = "from plan.json: " if step.source == "plan.json" else "answer: "
    return Text.assemble("  ", (step.node, "cyan"), " = ", (step.value, "bold"), " — ", (origin, "dim"), step.why)


def diagnosis_renderables(d: Diagnosis, unused: list[str] | None = None, *, head: bool = True,
                          path: bool = True) -> list[RenderableType]:
    from rich.text import Text

    items: list[RenderableType] = []
    if head:
        items.append(Text.assemble(("Symptom: ", "bold"), d.symptom.label, f" ({d.symptom.section})"))
    if path:
        items += [step_text(s) for s in d.path]
    verdict = ("Cause", "bold red") if d.node.found else ("No §11 cause found", "bold yellow")
    items.append(Text.assemble(verdict, f" ({d.node.section}): ", (d.node.title, "bold")))
    items.append(Text.assemble("  ", d.cause))
    items.append(Text.assemble(("Fix: ", "bold green"), d.fix))
    if unused:
        items.append(Text.assemble(("note: ", "yellow"), "answers not used on this walk: " + ", ".join(unused)))
    return items


def scan_renderables(results: list[Diagnosis | Pending], plan_path: str, unused: list[str]) -> list[RenderableType]:
    from rich.text import Text

    from wizard.session.doctor import Diagnosis

    found = [r for r in results if isinstance(r, Diagnosis) and r.node.found]
    ruled = [r for r in results if isinstance(r, Diagnosis) and not r.node.found]
    open_ = [r for r in results if not isinstance(r, Diagnosis)]
    items: list[RenderableType] = [Text.assemble(
        ("doctor: ", "bold"), plan_path, f" settles {len(found) + len(ruled)} of {len(results)} symptoms of §11 by itself")]
    if found:
        items.append(Text(f"Causes plan.json names by itself ({len(found)}), each for the symptom above it:",
                          style="bold"))
        for r in found:
            items.append(Text.assemble(("• ", "bold"), (r.symptom.label, "bold"), f" ({r.symptom.section})"))
            items += diagnosis_renderables(r, head=False)
    else:
        items.append(Text("No cause of §11 follows from the plan alone.", style="bold"))
    if ruled:
        items.append(Text(f"Ruled out or to measure ({len(ruled)}):", style="bold"))
        for r in ruled:
            items.append(Text.assemble("  ", (r.symptom.label, "bold"), " — ", r.node.title, f" ({r.node.section})"))
    if open_:
        items.append(Text(f"Need your answers ({len(open_)}): run with --symptom ID and --answer, or on a terminal",
                          style="bold"))
        for pending in open_:
            assert not isinstance(pending, Diagnosis)
            items.append(Text.assemble("  ", (pending.symptom.label, "bold"), f": --symptom {pending.symptom.id} "
                                       f"--answer {pending.node}={pending.accepted()}"))
    if unused:
        items.append(Text.assemble(("note: ", "yellow"), "answers no walk used: " + ", ".join(unused)))
    return items


# -- the terminal


def _interactive(tree: DoctorTree, symptom: Symptom | None, answers: dict[str, str], facts: dict[str, Fact],
                 figures: dict[str, Any] | None, input: Any, output: Any, console: Console | None) -> int:
    from wizard.prompts import _Prompter
    from wizard.report import new_console

    console = console or new_console()
    ui = _Prompter(input, output, console)
    try:
        return _ask(ui, tree, symptom, answers, facts, figures)
    except (KeyboardInterrupt, EOFError):  # Ctrl+C, or Ctrl+D / the input closed under us
        ui.say("")
        ui.say("doctor: interrupted")
        return EXIT_INTERRUPTED


def _ask(ui, tree: DoctorTree, symptom: Symptom | None, answers: dict[str, str],  # noqa: ANN001 (a _Prompter)
         facts: dict[str, Fact], figures: dict[str, Any] | None) -> int:
    from wizard.prompts import _Back
    from wizard.session import doctor as d

    chose_symptom = symptom is None
    given: dict[str, str] = {}  # asked here, in order (Back removes the last)
    said: set[str] = set()
    while True:
        if symptom is None:
            symptom = _pick_symptom(ui, tree, answers, facts, figures)
            given, said = {}, set()
        result = d.diagnose(tree, symptom, {**answers, **given}, facts, figures)
        for step in result.path:
            if step.node not in said and step.node not in given:
                ui.console.print(step_text(step), highlight=False)
                said.add(step.node)
        if isinstance(result, d.Diagnosis):
            ui.say("")
            # the whole path again once questions came between its steps; else every step was just said
            for item in diagnosis_renderables(result, d.unused_answers(tree, answers, [result]), path=bool(given)):
                ui.console.print(item, highlight=False)
            return EXIT_OK
        check = result.check
        ui.say("")
        ui.say(f"[{len(given) + 1}] {' '.join(check.prompt.split())}")
        ui.say("    " + " ".join(check.help.split()) + f" [see {check.section}]")
        try:
            value = ui.select(" ".join(check.prompt.split()), [(c.label, c.value) for c in check.choices],
                              back=bool(given) or chose_symptom)
        except _Back:
            if given:
                last = list(given)[-1]
                del given[last]
                ui.say(f"back to: {' '.join(tree.checks[last].prompt.split())}")
            else:
                symptom = None
                ui.say("back to: the symptom")
            continue
        given[result.node] = value


def symptom_choices(tree: DoctorTree, answers: dict[str, str], facts: dict[str, Fact],
                    figures: dict[str, Any] | None) -> list[tuple[str, str]]:
    """(label, id) of each symptom; with a plan, those whose cause the plan shows by itself say so."""
    from wizard.session import doctor as d

    shown = set()
    if facts:
        shown = {r.symptom.id for r in d.scan(tree, answers, facts, figures)
                 if isinstance(r, d.Diagnosis) and r.node.found}
    return [(s.label + (" — plan.json shows a cause" if s.id in shown else ""), s.id) for s in tree.symptoms]


def _pick_symptom(ui, tree: DoctorTree, answers: dict[str, str], facts: dict[str, Fact],  # noqa: ANN001
                  figures: dict[str, Any] | None) -> Symptom:
    from wizard.session import doctor as d

    ui.say("")
    ui.say(f"{tree.title}: which symptom do you see?")
    chosen = ui.select("Which symptom do you see?", symptom_choices(tree, answers, facts, figures))
    return d.find_symptom(tree, chosen)
