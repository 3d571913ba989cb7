"""Answers to one question: the choices it offers and the check a typed answer must pass."""

from __future__ import annotations

import math
from typing import Any

from wizard.errors import InputError
from wizard.sizing.engine import unserved_reason
from wizard.sources.catalog import entry_architecture, gpu_catalog, model_entries
from wizard.tree.schema import Choice, Question


def choices_for(q: Question) -> list[Choice]:
    """The question's choices, with catalog-backed ones filled in (auto first for the GPU)."""
    if q.choices_from == "gpu_catalog":
        auto = Choice(value="auto", label="auto — the planner chooses (simplest form, then the cheapest)")
        return [auto] + [Choice(value=g.id, label=f"{g.id} — {g.name}") for g in gpu_catalog()]
    if q.choices_from == "model_catalog":
        # Only what the target engine serves: a model vLLM refuses at start-up cannot become a plan.
        return [Choice(value=e.id, label=f"{e.id} ({e.family})") for e in model_entries()
                if not unserved_reason(entry_architecture(e))]
    return list(q.choices)


def coerce(q: Question, raw: Any) -> Any:
    """Check and convert an answer for `q`; raises InputError naming the key, the value and what is accepted."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        if q.optional:
            return None
        raise InputError(q.var, raw, "an answer is required")
    if q.type == "bool":
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        if text in ("y", "yes", "true", "1"):
            return True
        if text in ("n", "no", "false", "0"):
            return False
        raise InputError(q.var, raw, "expected yes or no")
    if q.type == "number":
        try:
            value = float(raw)
        except (TypeError, ValueError, OverflowError):
            raise InputError(q.var, raw, "expected a number") from None
        if isinstance(raw, bool) or not math.isfinite(value):  # "inf", "nan", 1e309: not an answer
            raise InputError(q.var, raw, "expected a finite number")
        if q.integer:
            if value != int(value):
                raise InputError(q.var, raw, "expected a whole number")
            value = int(value)
        if q.minimum is not None and value < q.minimum:
            raise InputError(q.var, raw, f"expected at least {q.minimum:g}")
        if q.maximum is not None and value > q.maximum:
            raise InputError(q.var, raw, f"expected at most {q.maximum:g}")
        return value
    if q.type == "choice" and q.choices_from != "model_catalog":
        allowed = [c.value for c in choices_for(q)]
        text = str(raw).strip()
        for a in allowed:
            if str(a).lower() == text.lower():
                return a
        raise InputError(q.var, raw, "expected one of " + ", ".join(str(a) for a in allowed))
    text = str(raw).strip()
    if len(text) > 300:
        raise InputError(q.var, text, "expected at most 300 characters")
    return text
