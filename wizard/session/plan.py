"""The plan at the end of a walk: DESIGN.md's `plan --json` object, every figure traceable to the path."""

from __future__ import annotations

from typing import Any

from wizard.errors import InputError
from wizard.session.computes import plan_search, typical_lengths
from wizard.session.session import Session
from wizard.sizing.cost import DAYS_PER_MONTH, managed_cost, staff_cost
from wizard.sizing.size_json import size_json
from wizard.tree.schema import ExposureMap, Question, Recommendation, evaluate
from wizard.tree.text import render

FORMS = ("cpu", "single_gpu", "single_node_multi_gpu", "multi_node", "managed_api")


def exposure_of(rec: Recommendation, env: dict[str, Any]) -> str:
    """DOMAIN §6: exposure follows operations capability (a map in the tree) or is fixed by the leaf."""
    if isinstance(rec.exposure, ExposureMap):
        return rec.exposure.map[str(env.get(rec.exposure.var))]
    return rec.exposure


def warnings_for(session: Session) -> list[dict[str, str]]:
    """The tree's warning rules that hold for this walk, each with its DOMAIN §."""
    env = session.state.env
    out = []
    for rule in session.tree.warnings:
        if evaluate(rule.when, env):
            out.append({"id": rule.id, "message": render(rule.message, env), "section": rule.section})
    return out


def alternatives_for(session: Session, chosen: str) -> list[dict[str, str]]:
    """Every form not chosen, with the first reason that applies (DOMAIN §1: the managed API is a parallel road)."""
    env = session.state.env
    out = []
    for alt in session.tree.alternatives:
        if alt.form == chosen:
            continue
        reason = next((r for r in alt.reasons if evaluate(r.when, env)), None)
        if reason is not None:
            out.append({"form": alt.form, "why_not": render(reason.why, env)})
    return out


def path_of(session: Session) -> list[dict[str, Any]]:
    """The nodes visited, in order: the answer or the computed facts, and why the walk went on as it did."""
    out = []
    for step in session.state.path:
        node = session.tree.nodes[step.node]
        if isinstance(node, Question):
            value: Any = step.value
        elif isinstance(node, Recommendation):
            value = node.form
        else:
            value = step.value
        out.append({"node": step.node, "value": value, "why": step.why})
    return out


def performance_of(c) -> dict[str, Any]:
    p = c.limit.performance
    return {
        "ttft_ms": round(p.ttft_ms, 1),
        "tpot_ms": round(p.tpot_ms, 1),
        "tokens_per_s_per_replica": round(p.output_tokens_per_s, 1),
        "max_batch": c.limit.batch,
        "limited_by": c.limit.limited_by,
        "kv_batch": c.limit.kv_batch,
    }


def warm_minimum(replicas, env: dict[str, Any]) -> int:
    """Replicas an autoscaler keeps warm (§7, §10): all of them when a new one is slower than the traffic ramp or
    the work is offline, else the spare + 1; never above the replicas (a user may insist on fewer)."""
    if env.get("cold_start_exceeds_ramp") or env.get("workload") != "online":
        return replicas.replicas
    return min(replicas.replicas, max(1, replicas.redundancy + 1))


def cost_json(cost) -> dict[str, Any]:
    r = (lambda x: None if x is None else round(x, 2))  # noqa: E731
    out = {
        "gpu_bill_usd_month": r(cost.gpu_bill_usd_month),
        "idle_usd_month": r(cost.idle_usd_month),
        "staff_usd_month": r(cost.staff_usd_month),
        "total_usd_month": r(cost.total_usd_month),
        "usd_per_mtok": r(cost.usd_per_mtok),
        "managed_usd_month": r(cost.managed_usd_month),
        "average_utilization": r(cost.average_utilization),
        "utilization_exact": cost.average_utilization,  # unrounded: bill × (1 − it) is the idle share shown
        "utilization_basis": cost.utilization_basis,
        "break_even_daily_requests": None if cost.break_even_daily_requests is None else round(cost.break_even_daily_requests),
        "capacity_daily_requests": None if cost.capacity_daily_requests is None else round(cost.capacity_daily_requests),
        "break_even_beyond_capacity": cost.break_even_beyond_capacity,
        "monthly_output_mtok": r(cost.monthly_output_mtok),
        "managed_staff_usd_month": r(cost.managed_staff_usd_month),
        "managed_total_usd_month": r(cost.managed_total_usd_month),
    }
    if cost.gpu_price is not None:
        out["gpu_price"] = price_json(cost.gpu_price)
    if cost.managed_price is not None:
        out["managed_price"] = price_json(cost.managed_price)
    return out


def price_json(price) -> dict[str, Any]:
    """A dated price as JSON: the figure, its kind, provider, date, source, where it was read and its basis
    (listed, estimated or given); which GPU/model is implied by the plan."""
    out = {k: v for k, v in price._asdict().items() if k not in ("gpu", "model")}
    if "estimated_from" in out:
        out["estimated_from"] = list(out["estimated_from"])
    return out


def managed_plan_cost(session: Session) -> dict[str, Any]:
    """A managed-API plan: the vendor's bill for the volume, and the caller-side staff (§6, §8)."""
    env = session.state.env
    spec = session.context.model_spec
    price = session.context.managed_price(spec) if spec is not None else None
    prompt, output = typical_lengths(env, session.context.extras)
    managed = managed_cost(env.get("daily_requests"), prompt, output, price)
    staff = staff_cost("managed_api", session.context.extras.get("staff_usd_month"))
    out: dict[str, Any] = {
        "gpu_bill_usd_month": 0.0, "idle_usd_month": 0.0, "staff_usd_month": round(staff, 2),
        "total_usd_month": None if managed is None else round(managed + staff, 2),
        "usd_per_mtok": None, "managed_usd_month": None if managed is None else round(managed, 2),
    }
    if price is not None:
        out["managed_price"] = price_json(price)
        daily = env.get("daily_requests")
        if daily and managed is not None:
            out["usd_per_mtok"] = round((managed + staff) / (daily * output * DAYS_PER_MONTH / 1e6), 2)
    # What self-hosting the same load would cost: the cheapest layout of the search, at the staff cost of the
    # exposure these answers would give it (§6, §8, §12); its total is the candidate's own Cost.
    if session.context.quick:
        return out
    try:
        ranked, _, _, _ = plan_search({**env, "gpu": env.get("gpu", "auto")}, session.context)
    except InputError:
        ranked = []
    if ranked:
        best = ranked[0]
        own = best.cost.total_usd_month
        out["self_host_usd_month"] = None if own is None else round(own, 2)
        out["self_host_exposure"] = best.cost.exposure
        out["self_host_layout"] = f"{best.replicas.replicas} × {best.gpus_per_copy} × {best.gpu.id} (TP {best.tp}, PP {best.pp})"
        if own is not None and out["total_usd_month"] is not None:
            difference = round(own - out["total_usd_month"], 2)
            # a saving is only ever positive: when self-hosting is cheaper, say what the managed API costs more
            if difference > 0:
                out["saving_usd_month"] = difference
            elif difference < 0:
                out["managed_extra_usd_month"] = -difference
    return out


def build_plan(session: Session) -> dict[str, Any]:
    """The plan as DESIGN.md's JSON: form, layout, memory, performance, cost, cold start, warnings, path."""
    rec = session.recommendation
    assert rec is not None, "build_plan needs a finished walk"
    env = session.state.env
    exposure = exposure_of(rec, env)
    c = session.context.candidate if rec.form not in ("managed_api", "cpu") else None
    plan: dict[str, Any] = {
        "form": rec.form,
        "exposure": exposure,
        "title": rec.title,
        "summary": session.state.path[-1].why,
        "model": env.get("model"),
        "checkpoint_format": env.get("checkpoint_format"),
    }
    if c is not None:
        starts = session.context.cold_start
        assert starts is not None, "fit() sets the cold start with the candidate"
        # the search priced every layout at the exposure these answers give it; the leaf reached must agree
        assert c.cost.exposure == exposure, f"priced at {c.cost.exposure!r}, exposed as {exposure!r}"
        plan |= {
            "gpu": c.gpu.id,
            "tp": c.tp,
            "pp": c.pp,
            "replicas": c.replicas.replicas,
            "min_replicas": warm_minimum(c.replicas, env),
            "gpus_per_replica": c.gpus_per_copy,
            "nodes_per_replica": c.nodes_per_copy,
            "gpus_total": c.gpus_total,
            "concurrency_per_replica": max(c.limit.batch, 1),
            "memory": size_json(c.limit.result),
            "performance": performance_of(c),
            "cost": cost_json(c.cost),
            "cold_start": {"stages": [{"name": s.name, "seconds": round(s.seconds, 1), "basis": s.basis}
                                      for s in starts.stages], "total_s": round(starts.total_s, 1)},
        }
    else:
        plan |= {"gpu": None, "tp": 0, "pp": 0, "replicas": 0, "gpus_per_replica": 0, "nodes_per_replica": 0,
                 "gpus_total": 0}
        if rec.form == "managed_api":
            plan["cost"] = managed_plan_cost(session)
    fp8 = session.context.fp8_option
    if c is not None and fp8 is not None and c.cost.total_usd_month is not None and fp8.cost.total_usd_month is not None:
        saving = c.cost.total_usd_month - fp8.cost.total_usd_month  # > 0: computes._fp8_option keeps cheaper ones only
        plan["quantized_option"] = {
            "weight_precision": "fp8", "gpu": fp8.gpu.id, "tp": fp8.tp, "pp": fp8.pp, "replicas": fp8.replicas.replicas,
            "total_usd_month": round(fp8.cost.total_usd_month, 2), "saving_usd_month": round(saving, 2),
            "why": "§9 Q5 'quantize or not': FP8 weights halve the bytes read per token; check quality before switching",
        }
    plan["warnings"] = warnings_for(session)
    plan["path"] = path_of(session)
    plan["alternatives"] = alternatives_for(session, rec.form)
    if session.ignored:  # answers whose questions this path never asks: not used, and said so
        plan["ignored_answers"] = session.ignored
    plan["sections"] = rec.section
    plan["boundary"] = rec.boundary or None
    return plan
