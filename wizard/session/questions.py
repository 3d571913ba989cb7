"""Answers to one question: the choices it offers and the check a typed answer must pass."""

from __future__ import annotations

from typing import Any

from wizard.sizing.engine import unserved_reason
from wizard.sources.catalog import entry_architecture, gpu_catalog
from wizard.sources.families import catalog_listing
from wizard.tree.schema import Choice, Question, Tree


def choices_for(q: Question) -> list[Choice]:
    """The question's choices, with catalog-backed ones filled in (auto first for the GPU)."""
    if q.choices_from == "gpu_catalog":
        auto = Choice(value="auto", label="auto — the planner chooses (simplest form, then the cheapest)")
        return [auto] + [Choice(value=g.id, label=f"{g.id} — {g.name}") for g in gpu_catalog()]
    if q.choices_from == "model_catalog":
        # The order of `models`: families newest first, then sizes smallest first (wizard/sources/families.py);
        # the label (the completion menu's note beside the id in `ask`) names the family, its month and the size.
        # Only what the target engine serves: a model vLLM refuses at start-up cannot become a plan.
        return [Choice(value=m.entry.id, label=f"{m.entry.family} ({m.released or 'release unknown'}) · {m.size}")
                for m in catalog_listing() if not unserved_reason(entry_architecture(m.entry))]
    return list(q.choices)


def model_groups(q: Question, text: str = "") -> list[tuple[str, list[Choice]]]:
    """The model catalog as the wizard lists it: (family heading, its models) in choices_for's order, keeping the
    models whose id contains `text` (case-insensitive): what a person typing "qwen3.6" is offered."""
    key = text.strip().lower()
    groups: dict[str, list[Choice]] = {}
    for c in choices_for(q):
        if key in str(c.value).lower():
            heading, _, size = c.label.partition(" · ")
            groups.setdefault(heading, []).append(Choice(value=c.value, label=f"{c.value} · {size}"))
    return list(groups.items())


def coerce(q: Question, raw: Any, tree: Tree | None = None) -> Any:
    """An answer a person typed or picked for `q`, checked by its key's rule (the same function as the answers
    file's); raises InputError naming the key, the value and what is accepted."""
    from wizard.session.answer_rules import parse
    from wizard.tree.loader import bundled_tree

    return parse((tree or bundled_tree()).answers[q.var], raw, q.var, typed=False)
