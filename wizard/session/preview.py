"""The live numbers beside every question: the plan the answers so far lead to, with defaults for the rest.

The front ends show it in a side panel that updates as soon as an answer changes. It is the same walk and the
same sizing core as `plan`, with the tree's defaults standing in for questions not reached yet; the extra
searches of a full plan (the fp8 option, the self-hosting comparison of a managed plan) are skipped to keep a
recomputation well under 50 ms. Results are cached by the answers given.
"""

from __future__ import annotations

from typing import Any

from wizard.errors import InputError
from wizard.session.plan import build_plan
from wizard.artifacts.plan_sections import usd
from wizard.session.session import Session
from wizard.specs.contracts import Cost, Plan
from wizard.tree.walker import DeadEnd, walk

_cache: dict[tuple, Plan | None] = {}


def preview(session: Session) -> Plan | None:
    """The plan the current answers lead to (defaults for the rest), or None when it cannot be computed yet."""
    # Answers given earlier and undone by Back stand in for the defaults: the preview shows what the user chose.
    supplied = {**session.remembered, **dict(session.given)}
    key = (id(session.tree), repr(sorted(supplied.items())), repr(sorted(session.context.extras.items())))
    if key in _cache:
        return _cache[key]
    shadow = Session(session.tree, session.context.extras)
    shadow.context.quick = True
    shadow.given = list(session.given)
    try:
        shadow.state = walk(session.tree, supplied, shadow._compute, use_defaults=True)
        result = build_plan(shadow) if shadow.state.recommendation else None
    except (InputError, DeadEnd):
        result = None
    if len(_cache) > 256:
        _cache.clear()
    _cache[key] = result
    return result


def panel_lines(p: Plan | None) -> dict[str, Any]:
    """The side panel's figures: memory parts as shares of usable memory, verdict, layout, replicas, cost, start.

    `managed_usd_month` is the managed API's total with its caller-side staff when the plan has it (a self-hosted
    plan's comparison), else its bill; `managed_text` says which, in the plan's money format."""
    if p is None:
        return {"ready": False}
    out: dict[str, Any] = {"ready": True, "form": p.form, "title": p.title, "gpu": p.gpu}
    mem = p.memory
    if mem is not None:
        parts = mem.per_gpu_bytes
        out["memory"] = {"weights": parts.weights, "kv_cache": parts.kv_cache, "activations": parts.activations,
                         "reserve": parts.reserve}
        out["usable_bytes"] = mem.usable_bytes
        out["fits"] = mem.fits
        out["layout"] = f"{p.replicas} × TP {p.tp} × PP {p.pp} on {p.gpu}"
    if p.performance is not None:
        out["performance"] = {"tpot_ms": p.performance.tpot_ms, "ttft_ms": p.performance.ttft_ms}
    cost = p.cost
    if cost is not None:
        out["cost_usd_month"] = cost.total_usd_month
        out["cost_text"] = usd(cost.total_usd_month)
        # The managed API compared like for like: its bill plus the caller-side staff, as the plan's own comparison
        # reads it; a managed plan has no such total (its own total is cost_usd_month), so its bill stands in.
        total = cost.managed_total_usd_month if isinstance(cost, Cost) else None
        figure = total if total is not None else cost.managed_usd_month
        out["managed_usd_month"] = figure
        out["managed_with_staff"] = total is not None
        if figure is not None:
            out["managed_text"] = (f"Managed + staff {usd(figure)}/month" if total is not None else
                                   f"Managed bill {usd(figure)}/month")
    if p.cold_start is not None:
        out["cold_start_s"] = p.cold_start.total_s
    out["warnings"] = [w.id for w in p.warnings]
    out["warning_texts"] = [f"{first_sentence(w.message)} ({w.section})" for w in p.warnings]
    return out


def first_sentence(text: str, limit: int = 110) -> str:
    """The opening sentence of a warning, for a narrow panel: up to the first '. ', else cut at a word, '…'."""
    head = text.split(". ", 1)[0].rstrip(".")
    if len(head) <= limit:
        return head + "."
    return head[:limit].rsplit(" ", 1)[0] + " …"
