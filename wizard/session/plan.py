"""The plan at the end of a walk: a typed Plan (wizard.specs.contracts), every figure traceable to the path.

`plan --json` and plan.json are its dump; the report, the side panel and the starter repo read it by attribute.
"""

from __future__ import annotations

from typing import Any

from wizard.errors import InputError
from wizard.session.computes import Fit, sized_search, typical_lengths
from wizard.session.session import Session
from wizard.sizing.cost import DAYS_PER_MONTH, SECONDS_PER_DAY, managed_cost, staff_cost
from wizard.sizing.performance import Workload, performance
from wizard.sizing.size_json import size_json
from wizard.specs import contracts as c
from wizard.tree.schema import ExposureMap, Recommendation, evaluate
from wizard.tree.text import render

def exposure_of(rec: Recommendation, env: dict[str, Any]) -> c.Exposure:
    """DOMAIN §6: exposure follows operations capability (a map in the tree) or is fixed by the leaf."""
    if isinstance(rec.exposure, ExposureMap):
        return rec.exposure.map[str(env.get(rec.exposure.var))]
    return rec.exposure


def warnings_for(session: Session) -> list[c.Warning_]:
    """The tree's warning rules that hold for this walk, each with its DOMAIN §."""
    env = session.state.env
    return [c.Warning_(id=rule.id, message=render(rule.message, env), section=rule.section)
            for rule in session.tree.warnings if evaluate(rule.when, env)]


def alternatives_for(session: Session, chosen: str) -> list[c.Alternative]:
    """Every form not chosen, with the first reason that applies (DOMAIN §1: the managed API is a parallel road)."""
    env = session.state.env
    out = []
    for alt in session.tree.alternatives:
        if alt.form == chosen:
            continue
        reason = next((r for r in alt.reasons if evaluate(r.when, env)), None)
        if reason is not None:
            out.append(c.Alternative(form=alt.form, why_not=render(reason.why, env)))
    return out


def path_of(session: Session) -> list[c.Step]:
    """The nodes visited, in order: the answer or the computed facts, and why the walk went on as it did."""
    out = []
    for step in session.state.path:
        node = session.tree.nodes[step.node]
        value = node.form if isinstance(node, Recommendation) else step.value
        out.append(c.Step(node=step.node, value=value, why=step.why))
    return out


def at_peak_of(cand, prompt: int, output: int, rate: float | None) -> c.AtPeak:
    """The sizing core at the peak's share of one replica, in steady state, at the plan's typical lengths: the open
    loop at `rate` / replicas when the peak is a request rate, else the closed loop of the sequences the replicas
    were sized for (the peak, or the daily average when above it) / replicas."""
    replicas = max(1, cand.replicas.replicas)
    if rate:
        q = performance(cand.limit.result, Workload(1, prompt, output, rate=rate / replicas))
        per = q.concurrency  # Little's law at the predicted request time
    else:
        per = cand.replicas.peak_sequences / replicas
        q = performance(cand.limit.result, Workload(max(1.0, per), prompt, output))
    return c.AtPeak(sequences_per_replica=round(per, 2), requests_per_s=round(rate, 4) if rate else None,
                    ttft_ms=round(q.ttft_ms, 1), ttft_p99_ms=round(q.ttft_p99_ms, 1), tpot_ms=round(q.tpot_ms, 1),
                    tpot_p99_ms=round(q.tpot_p99_ms, 1), tokens_per_s_per_replica=round(q.output_tokens_per_s, 1))


def peak_rate(session: Session) -> float | None:
    """The endpoint's peak in requests/s when the answers give one (peak_rps), or the daily average rate when that
    is higher (§2: the replicas then carry the average); None when the peak is a concurrency."""
    rate = session.context.extras.get("peak_rps")
    if not rate:
        return None
    daily = session.state.env.get("daily_requests") or 0
    return max(float(rate), daily / SECONDS_PER_DAY)


def performance_of(cand, at_peak: c.AtPeak | None = None) -> c.Performance:
    p = cand.limit.performance
    return c.Performance(at_peak=at_peak, ttft_ms=round(p.ttft_ms, 1), tpot_ms=round(p.tpot_ms, 1),
                         tokens_per_s_per_replica=round(p.output_tokens_per_s, 1), max_batch=cand.limit.batch,
                         limited_by=cand.limit.limited_by, kv_batch=cand.limit.kv_batch,
                         kv_batch_typical=cand.limit.kv_batch_typical, replicas_set_by=cand.replicas.set_by,
                         ttft_p99_ms=round(p.ttft_p99_ms, 1), tpot_p99_ms=round(p.tpot_p99_ms, 1))


def warm_minimum(replicas, env: dict[str, Any]) -> int:
    """Replicas an autoscaler keeps warm (§7, §10): all of them when a new one is slower than the traffic ramp or
    the work is offline, else the spare + 1; never above the replicas (a user may insist on fewer)."""
    if env.get("cold_start_exceeds_ramp") or env.get("workload") != "online":
        return replicas.replicas
    return min(replicas.replicas, max(1, replicas.redundancy + 1))


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 2)


def _whole(x: float | None) -> int | None:
    return None if x is None else round(x)


def cost_of(cost) -> c.Cost:
    """A candidate's Cost (sizing.cost) as the plan states it: dollars to the cent."""
    return c.Cost(
        gpu_bill_usd_month=_r(cost.gpu_bill_usd_month),
        idle_usd_month=_r(cost.idle_usd_month),
        staff_usd_month=round(cost.staff_usd_month, 2),
        total_usd_month=_r(cost.total_usd_month),
        usd_per_mtok=_r(cost.usd_per_mtok),
        managed_usd_month=_r(cost.managed_usd_month),
        average_utilization=_r(cost.average_utilization),
        utilization_exact=cost.average_utilization,  # unrounded: bill × (1 − it) is the idle share shown
        utilization_basis=cost.utilization_basis,
        break_even_daily_requests=_whole(cost.break_even_daily_requests),
        capacity_daily_requests=_whole(cost.capacity_daily_requests),
        break_even_beyond_capacity=cost.break_even_beyond_capacity,
        monthly_output_mtok=_r(cost.monthly_output_mtok),
        managed_staff_usd_month=_r(cost.managed_staff_usd_month),
        managed_total_usd_month=_r(cost.managed_total_usd_month),
        job_requests=cost.job_requests,
        job_hours=_r(cost.job_hours),
        job_usd=_r(cost.job_usd),
        job_output_tokens=cost.job_output_tokens,
        gpu_price=None if cost.gpu_price is None else gpu_price_of(cost.gpu_price),
        managed_price=None if cost.managed_price is None else managed_price_of(cost.managed_price),
    )


def gpu_price_of(price) -> c.GpuPriceJson:
    """A dated GPU-hour price: the figure, its kind, provider, date, source, and where it was read."""
    return c.GpuPriceJson(usd_per_gpu_hour=price.usd_per_gpu_hour, kind=price.kind, provider=price.provider,
                          date=price.date, source=price.source, via=price.via)


def managed_price_of(price) -> c.ManagedPriceJson:
    """A dated managed price with its basis (listed, estimated or given); the model is the plan's."""
    return c.ManagedPriceJson(usd_per_mtok_input=price.usd_per_mtok_input, usd_per_mtok_output=price.usd_per_mtok_output,
                              provider=price.provider, date=price.date, source=price.source, model_key=price.model_key,
                              via=price.via, basis=price.basis, estimated_from=list(price.estimated_from), note=price.note)


def managed_plan_cost(session: Session) -> c.ManagedCost:
    """A managed-API plan: the vendor's bill for the volume, and the caller-side staff (§6, §8)."""
    env = session.state.env
    spec = session.model_spec
    price = session.context.managed_price(spec) if spec is not None else None
    prompt, output = typical_lengths(env, session.context.extras)
    managed = managed_cost(env.get("daily_requests"), prompt, output, price)
    staff = staff_cost("managed_api", session.context.extras.get("staff_usd_month"))
    total = None if managed is None else round(managed + staff, 2)
    per_mtok = None
    daily = env.get("daily_requests")
    if price is not None and daily and managed is not None:
        per_mtok = round((managed + staff) / (daily * output * DAYS_PER_MONTH / 1e6), 2)
    own: dict[str, Any] = {}
    # What self-hosting the same load would cost: the cheapest layout of the search, at the staff cost of the
    # exposure these answers would give it (§6, §8, §12); its total is the candidate's own Cost.
    try:
        ranked = [] if session.context.quick else sized_search({**env, "gpu": env.get("gpu", "auto")},
                                                                session.context).search.ranked
    except InputError:
        ranked = []
    if ranked:
        best = ranked[0]
        figure = _r(best.cost.total_usd_month)
        own = {"self_host_usd_month": figure, "self_host_exposure": best.cost.exposure,
               "self_host_layout": f"{best.replicas.replicas} × {best.gpus_per_copy} × {best.gpu.id} (TP {best.tp}, PP {best.pp})"}
        if figure is not None and total is not None:
            difference = round(figure - total, 2)
            # a saving is only ever positive: when self-hosting is cheaper, say what the managed API costs more
            if difference > 0:
                own["saving_usd_month"] = difference
            elif difference < 0:
                own["managed_extra_usd_month"] = -difference
    return c.ManagedCost(gpu_bill_usd_month=0.0, idle_usd_month=0.0, staff_usd_month=round(staff, 2),
                         total_usd_month=total, usd_per_mtok=per_mtok, managed_usd_month=_r(managed),
                         managed_price=None if price is None else managed_price_of(price), **own)


def quantized_option(fit: Fit) -> c.QuantizedOption | None:
    """§9 Q5: the fp8 plan fit() found cheaper than the chosen one (computes._fp8_option keeps cheaper ones only)."""
    fp8, chosen = fit.fp8_option, fit.chosen
    if fp8 is None or chosen.cost.total_usd_month is None or fp8.cost.total_usd_month is None:
        return None
    saving = round(chosen.cost.total_usd_month - fp8.cost.total_usd_month, 2)
    if saving <= 0:  # cheaper by less than a cent: no saving to state
        return None
    return c.QuantizedOption(
        weight_precision="fp8", gpu=fp8.gpu.id, tp=fp8.tp, pp=fp8.pp, replicas=fp8.replicas.replicas,
        total_usd_month=round(fp8.cost.total_usd_month, 2), saving_usd_month=saving,
        why="§9 Q5 'quantize or not': FP8 weights halve the bytes read per token; check quality before switching",
    )


def build_plan(session: Session) -> c.Plan:
    """The plan of a finished walk: form, layout, memory, performance, cost, cold start, warnings, path."""
    rec = session.recommendation
    assert rec is not None, "build_plan needs a finished walk"
    env = session.state.env
    exposure = exposure_of(rec, env)
    fit = session.fit if rec.form not in ("managed_api", "cpu") else None
    plan = c.Plan(
        form=rec.form, exposure=exposure, title=rec.title, summary=session.state.path[-1].why,
        model=str(env.get("model") or ""), checkpoint_format=env.get("checkpoint_format"),
        gpu=None, tp=0, pp=0, replicas=0, gpus_per_replica=0, nodes_per_replica=0, gpus_total=0,
        warnings=warnings_for(session), path=path_of(session), alternatives=alternatives_for(session, rec.form),
        ignored_answers=session.ignored or None,  # answers whose questions this path never asks: said so
        sections=rec.section, boundary=rec.boundary or None,
    )
    if fit is not None:
        chosen, starts = fit.chosen, fit.cold_start
        # the search priced every layout at the exposure these answers give it; the leaf reached must agree
        assert chosen.cost.exposure == exposure, f"priced at {chosen.cost.exposure!r}, exposed as {exposure!r}"
        plan.gpu, plan.tp, plan.pp = chosen.gpu.id, chosen.tp, chosen.pp
        plan.gpu_vendor = chosen.gpu.vendor
        plan.replicas = chosen.replicas.replicas
        plan.min_replicas = warm_minimum(chosen.replicas, env)
        plan.gpus_per_replica, plan.nodes_per_replica = chosen.gpus_per_copy, chosen.nodes_per_copy
        plan.gpus_total = chosen.gpus_total
        plan.concurrency_per_replica = max(chosen.limit.batch, 1)
        plan.memory = size_json(chosen.limit.result)
        plan.checkpoint_bytes = fit.checkpoint_bytes
        lengths = plan.typical_lengths()
        at_peak = None
        if exposure != "none" and lengths is not None:  # served: a bench measures it
            at_peak = at_peak_of(chosen, *lengths, peak_rate(session))
        plan.performance = performance_of(chosen, at_peak)
        plan.cost = cost_of(chosen.cost)
        plan.cold_start = c.ColdStart(stages=[c.Stage(name=s.name, seconds=round(s.seconds, 1), basis=s.basis)
                                              for s in starts.stages], total_s=round(starts.total_s, 1))
        plan.quantized_option = quantized_option(fit)
    elif rec.form == "managed_api":
        plan.cost = managed_plan_cost(session)
    return plan
