"""The plan as sections of figures — label, value, basis — built once for every place a plan is shown.

rich renders them for `plan` and `ask` (wizard.report), textual shows the same renderables on the wizard's summary
screen, and Jinja writes them into RATIONALE.md: a figure cannot read one way in the terminal and another in the
repo. Values are formatted here, once (dollars, GiB, tokens); each section names the rule of the guide it applies.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from wizard.artifacts.context import autoscaled, on_cluster
from wizard.sizing.cost import HOURS_PER_MONTH
from wizard.sizing.engine import BLOCK_SIZE, whole_blocks
from wizard.specs.contracts import Cost, GpuPriceJson, ManagedCost, ManagedPriceJson, Plan

GIB = 2**30
# The computed facts a reviewer follows in the path (the rest are in plan.json and the sections).
PATH_FACTS = ("params_b", "checkpoint_format", "fits_one_gpu", "fits_one_node", "layout_form", "gpu_id", "tp", "pp",
              "replicas", "limited_by", "sixteen_bit_on_quantized")


class Row(NamedTuple):
    """One figure: what it is, its value as shown, and where it comes from (formula, inputs, source)."""

    label: str
    value: str
    basis: str = ""
    strong: bool = False  # a result the other rows add up to (a total): shown in bold


class Section(NamedTuple):
    """A part of the plan: its title and rule, one sentence with its key figures, the rows behind it, caveats."""

    key: str  # layout, memory, throughput, cost, cold_start, warnings, alternatives, ignored, path
    title: str
    rule: str  # the guide's sections it applies ("§2"), "" when none
    headline: str
    rows: tuple[Row, ...] = ()
    notes: tuple[str, ...] = ()
    columns: tuple[str, str, str] = ("part", "value", "from")  # headings of label, value, basis
    listed: bool = False  # read as a list of statements (warnings, what was ruled out), not a table of figures
    figures: bool = True  # the values are figures (aligned right); False for text (the path's answers)


def usd(x: float | None) -> str:
    """Dollars a month as every plan text shows them: whole dollars, cents below one dollar ("—" when unknown)."""
    if x is None:
        return "—"
    return f"${x:,.2f}" if 0 < abs(x) < 1 else f"${x:,.0f}"


def sequences(n: int | None) -> str:
    """A count of sequences in words: "1 sequence", "2 sequences"."""
    if n is None:
        return "no set number of sequences"
    return f"{n:,} sequence" + ("" if n == 1 else "s")


def gib(n: float) -> str:
    return f"{n / GIB:,.2f} GiB"


def fit_facts(plan: Plan) -> dict[str, Any]:
    """The facts the layout search computed on the path (empty on a road without one)."""
    return next((s.value for s in plan.path if isinstance(s.value, dict) and "forced_replicas" in s.value), {})


def plan_sections(plan: Plan, answers: dict[str, Any]) -> list[Section]:
    """Every section that applies to this plan (with the answers behind it), in the order they are read."""
    out = [layout_section(plan, answers), memory_section(plan), throughput_section(plan), cost_section(plan),
           cold_start_section(plan), warnings_section(plan), alternatives_section(plan), ignored_section(plan),
           path_section(plan)]
    return [s for s in out if s is not None]


def layout_section(plan: Plan, answers: dict[str, Any]) -> Section | None:
    if not plan.gpu:
        return None
    facts = fit_facts(plan)
    perf = plan.performance
    batch = perf.max_batch if perf else plan.concurrency_per_replica
    online = plan.exposure != "none"
    spare = " + 1 spare (one replica is an outage at every restart, §10)" if online else ""
    bound = perf.kv_batch if perf else None
    if answers.get("replicas"):
        replicas_basis = f"as asked (the rule is ceil(peak / {batch}){' + 1 spare' if online else ''}, §5, §10)"
    elif perf is not None and perf.replicas_set_by == "deadline" and plan.cost is not None:
        hours = getattr(plan.cost, "job_hours", None)
        replicas_basis = (f"copies enough to finish the job before its deadline ({hours:,.1f} h on {plan.replicas} "
                          "copies, §12)" if hours is not None else "copies enough to finish the job before its deadline (§12)")
    elif perf is not None and perf.replicas_set_by == "p99 bound" and bound:
        replicas_basis = (f"ceil(peak / {bound}): the peak must fit at the full P99 context ({bound} such sequences "
                          f"per replica, §2) — more than ceil(peak / {batch}) by the typical lengths{spare}")
    else:
        replicas_basis = f"ceil(peak / {batch}){spare}" + (
            f"; the peak at the full P99 context needs no more (ceil(peak / {bound}))" if bound else "")
    rows = [
        Row("GPU", str(plan.gpu), "the cheapest card of the simplest form that carries the load (§1)"
            if answers.get("gpu", "auto") == "auto" else "as asked (gpu)"),
        Row("parallelism", f"TP {plan.tp} × PP {plan.pp}",
            f"{plan.gpus_per_replica} GPU(s) per replica on {plan.nodes_per_replica} node(s): TP inside a node, "
            "PP across nodes (§3)"),
        Row("sequences per replica", str(plan.concurrency_per_replica),
            "the largest batch that fits the KV cache and meets the P99 targets (§5)"),
        Row("replicas", str(plan.replicas), replicas_basis),
    ]
    if autoscaled(plan, answers):
        rows.append(Row("kept warm", str(plan.min_replicas), "the autoscaler's minimum: the spare + 1 (§7, §10)"))
    elif plan.replicas > 1:
        if not online:
            why = "an offline job uses every replica it has"
        elif not on_cluster(plan, answers) or plan.form == "multi_node":
            why = "no autoscaler for this exposure" if plan.form != "multi_node" else "a multi-node group is not autoscaled"
        elif facts.get("cold_start_exceeds_ramp"):
            why = "a new replica takes longer than the traffic ramp (§7, §10)"
        else:
            why = "the peak plus its spare needs every one of them (§10)"
        rows.append(Row("kept warm", f"all {plan.replicas}", why))
    rows.append(Row("GPUs in total", str(plan.gpus_total), f"{plan.replicas} × {plan.gpus_per_replica}"))
    headline = (f"{plan.gpu} × TP {plan.tp} × PP {plan.pp} = {plan.gpus_per_replica} GPU(s) per replica on "
                f"{plan.nodes_per_replica} node(s); {plan.replicas} replica(s) = {plan.gpus_total} GPU(s), "
                f"{sequences(plan.concurrency_per_replica)} per replica")
    return Section("layout", "Layout", "§1, §3, §5", headline, tuple(rows))


def memory_section(plan: Plan) -> Section | None:
    m = plan.memory
    if m is None:
        return None
    b, i, mod = m.per_gpu_bytes, m.inputs, m.model
    share = (f"its share of {mod.layers} layers" + (f" over PP {m.parallel.pp}" if m.parallel.pp > 1 else "")
             + f" and of {mod.kv_heads} KV heads" + (f" over TP {m.parallel.tp}" if m.parallel.tp > 1 else "")
             + f", head_dim {mod.head_dim}, {mod.attention}")
    encoder = any(n.startswith("image encoder profile") for n in m.notes)
    blocks_noted = any(n.startswith("KV counted as vLLM") for n in m.notes)  # several layer kinds: a note gives the blocks
    rows = (
        Row("weights", gib(b.weights), f"{mod.params_total:,} parameters at {i.weight_precision}, split TP "
            f"{m.parallel.tp} × PP {m.parallel.pp} (the heaviest stage)"),
        Row("KV cache", gib(b.kv_cache), (f"{sequences(i.concurrency)} × {i.context_tokens:,} tokens" if i.sequence_tokens
            is None or i.concurrency <= 1 else f"1 sequence × {i.context_tokens:,} tokens (room for a P99-length "
            f"request) + {i.concurrency - 1} × {i.sequence_tokens:,} typical tokens (prompt + half the output"
            + (f"; {whole_blocks(i.sequence_tokens):,} in vLLM's whole {BLOCK_SIZE}-token blocks"
               if whole_blocks(i.sequence_tokens) != i.sequence_tokens and not blocks_noted else "") + ")")
            + f" × {m.kv_bytes_per_token:,} B/token on this GPU ({share})"),
        Row("activations", gib(b.activations), "vLLM's profile peak (the forward pass over the token budget, or the "
            "sampler" + (", or the image encoder over dummy images: see the notes" if encoder else "") + ")"),
        Row("reserve", gib(b.reserve), "CUDA context, NCCL buffers, CUDA graph pool"),
        Row("total", gib(b.total), "weights + KV cache + activations + reserve", strong=True),
        Row("usable", gib(m.usable_bytes), f"{gib(m.gpu.memory_bytes)} reported × {i.gpu_memory_utilization}"),
        Row("headroom", gib(m.headroom_bytes), "usable − total: " + ("fits" if m.fits else "does NOT fit")),
        Row("KV capacity", f"{m.kv_capacity_tokens:,} tokens",
            f"vLLM's \"GPU KV cache size\" per GPU: {m.max_concurrency}× the {i.context_tokens:,}-token context"),
    )
    headline = (f"weights {gib(b.weights)} + KV {gib(b.kv_cache)} + activations {gib(b.activations)} + reserve "
                f"{gib(b.reserve)} = {gib(b.total)} of {gib(m.usable_bytes)} usable: "
                + ("fits" if m.fits else "does not fit"))
    return Section("memory", "Memory per GPU", "§2", headline, rows, tuple(m.notes))


def throughput_section(plan: Plan) -> Section | None:
    p = plan.performance
    if p is None:
        return None
    rows = [
        Row("TTFT", f"{p.ttft_ms:,.0f} ms mean, {p.ttft_p99_ms or p.ttft_ms:,.0f} ms P99",
            f"front end + the running step + the prompt's chunks + queueing for them, at {sequences(p.max_batch)}"),
        Row("TPOT", f"{p.tpot_ms:,.1f} ms mean, {p.tpot_p99_ms or p.tpot_ms:,.1f} ms P99",
            "a decode step (weights and KV read once, overlapped with compute); steps carrying prompt chunks are longer"),
        Row("output tokens/s", f"{p.tokens_per_s_per_replica:,.0f}", f"per replica at {sequences(p.max_batch)}"),
        Row("batch", sequences(p.max_batch), f"limited by {p.limited_by}; the KV cache admits "
            + (f"{p.kv_batch_typical} at the typical lengths and " if p.kv_batch_typical else "")
            + (f"{p.kv_batch} at the full P99 context" if p.kv_batch is not None else "")),
    ]
    margin = target_margin(plan)
    if margin:
        met = bool(fit_facts(plan).get("targets_met")) and p.max_batch > 0
        check = "bench/run.sh measures the deployment, and check-bench holds its P99 figures against these targets"
        if not met:
            basis = f"no batch meets them: these are one sequence's figures, a model estimate; {check}"
        else:
            basis = ((f"the batch is the largest whose P99 figures meet the targets, so the {p.limited_by} it stops "
                      "at sits near 100 %; " if p.limited_by.endswith("target") else "")
                     + "a model estimate at that batch"
                     + ("; the peak spread over the replicas is no heavier (the next row)" if p.at_peak else "")
                     + f": {check}")
        rows.append(Row("margin to the targets", margin, basis))
    if p.at_peak is not None:
        a = p.at_peak
        load = (f"{a.requests_per_s:,.4g} requests/s spread over {plan.replicas} replica(s), "
                f"{a.sequences_per_replica:,.1f} sequences in flight on each" if a.requests_per_s else
                f"{a.sequences_per_replica:,.1f} sequences in flight on each of {plan.replicas} replica(s) (the "
                "sized load spread over them)")
        rows.append(Row("at the peak", f"{a.ttft_p99_ms:,.0f} ms P99 TTFT, {a.tpot_p99_ms:,.1f} ms P99 TPOT, "
                        f"{a.tokens_per_s_per_replica:,.0f} output tokens/s per replica",
                        f"{load}, steady state: what bench/run.sh should measure"))
    headline = (f"P99 TTFT {p.ttft_p99_ms or p.ttft_ms:,.0f} ms, P99 TPOT {p.tpot_p99_ms or p.tpot_ms:,.1f} ms at "
                f"{sequences(p.max_batch)} (limited by "
                f"{p.limited_by}), {p.tokens_per_s_per_replica:,.0f} output tokens/s per replica (roofline of mixed "
                "decode/prefill steps, calibrated on published vLLM benchmarks)")
    return Section("throughput", "Throughput and replicas", "§5, §9 Q2–Q3", headline, tuple(rows))


def target_margin(plan: Plan) -> str:
    """Each P99 target against the plan's P99 at its batch: 'P99 TTFT 1,988 of 2,000 ms (99 %) at 1 sequence'; ''
    without targets."""
    p = plan.performance
    if p is None:
        return ""
    parts = []
    for name, value, node, digits in (("TTFT", p.ttft_p99_ms, "ttft_p99_ms", 0), ("TPOT", p.tpot_p99_ms, "tpot_p99_ms", 1)):
        target = plan.step(node)
        if isinstance(target, (int, float)) and target > 0 and value is not None:
            parts.append(f"P99 {name} {value:,.{digits}f} of {target:,.0f} ms ({value / target * 100:.0f} %)")
    return f"{', '.join(parts)} at {sequences(max(1, p.max_batch))}" if parts else ""


def price_basis(p: GpuPriceJson | ManagedPriceJson) -> str:
    """Where a dated price comes from: provider, date, and the aggregator or mirror it was read through."""
    via = f"; read via {p.via}" if p.via else ""
    return f"{p.provider or 'no provider'}, {p.date or 'undated'}{via}"


def managed_price_text(p: ManagedPriceJson) -> str:
    """The managed price with its basis: listed, estimated from named models, or given in the answers."""
    figure = f"${p.usd_per_mtok_input:g} / ${p.usd_per_mtok_output:g} per million input / output tokens"
    if p.basis == "given":
        return f"{figure}: given (managed_usd_per_mtok)"
    if p.basis == "estimated":
        return (f"{figure}, estimated from {', '.join(p.estimated_from)}: no listed price for this model; {p.note} "
                f"({p.date}; read via {p.via}) — set managed_usd_per_mtok to use a quoted price")
    return f"{figure} ({price_basis(p)}) — a dated snapshot, re-check"


def cost_section(plan: Plan) -> Section | None:
    """§8: the monthly total and its parts, the prices behind them, and the comparisons. Every figure is the plan's
    own (cost.*, quantized_option): the alternatives and warnings quote the same numbers."""
    c = plan.cost
    if c is None:
        return None
    rows: list[Row] = []
    managed_plan = isinstance(c, ManagedCost)
    if isinstance(c, ManagedCost):
        headline = f"managed API bill {usd(c.managed_usd_month)} + staff {usd(c.staff_usd_month)} = {usd(c.total_usd_month)}"
        if c.managed_usd_month is None:
            headline += " (no daily volume to price the bill at: give daily_requests)"
    elif plan.exposure == "none":  # offline (§12): the job and the cost per token lead; a month is the comparison
        lead = []
        if c.job_usd is not None and c.job_hours is not None:
            lead.append(f"this job {usd(c.job_usd)} in {c.job_hours:,.1f} h on {plan.gpus_total} GPUs")
        if c.usd_per_mtok is not None:
            lead.append(f"GPU cost ${c.usd_per_mtok:,.2f} per million output tokens at full use")
        headline = "; ".join(lead + [f"rented all month: GPU bill {usd(c.gpu_bill_usd_month)} (no idle share) + staff "
                                     f"{usd(c.staff_usd_month)} = {usd(c.total_usd_month)}"])
    else:
        headline = (f"GPU bill {usd(c.gpu_bill_usd_month)} (idle share {usd(c.idle_usd_month)}) + staff "
                    f"{usd(c.staff_usd_month)} = {usd(c.total_usd_month)}")
    if not isinstance(c, ManagedCost):
        price = c.gpu_price
        rows.append(Row("GPU bill" if plan.exposure != "none" else "GPU bill, all month", usd(c.gpu_bill_usd_month),
                        f"${price.usd_per_gpu_hour}/GPU-hour ({price.kind}, {price_basis(price)}) × {plan.gpus_total} "
                        f"GPUs × {HOURS_PER_MONTH} h" if price else "no price for this GPU in the catalog: set gpu_hour_usd"))
        utilization = (f"{c.utilization_exact:.4f}" if c.utilization_exact is not None else "unknown")
        rows.append(Row("of which idle", usd(c.idle_usd_month), f"bill × (1 − utilization {utilization}"
                        + (f", from {c.utilization_basis}" if c.utilization_basis else "") + ") — already inside the bill"))
    if c.usd_per_mtok is not None and plan.exposure != "none":
        headline += f"; ${c.usd_per_mtok:,.2f} per million output tokens"
    if isinstance(c, ManagedCost):
        rows.append(Row("managed API bill", usd(c.managed_usd_month),
                        managed_price_text(c.managed_price) if c.managed_price else "no managed price for this model"))
    if isinstance(c, Cost) and plan.exposure == "none" and c.usd_per_mtok is not None and c.gpu_price is not None:
        tps = plan.performance.tokens_per_s_per_replica if plan.performance else 0
        rows.append(Row("per million output tokens", f"${c.usd_per_mtok:,.2f}",
                        f"${c.gpu_price.usd_per_gpu_hour}/GPU-hour × {plan.gpus_per_replica} GPU(s) per copy / "
                        f"({tps:,.0f} output tokens/s × 3,600 / 1e6): offline GPUs run flat out, no idle share (§12)"))
    if isinstance(c, Cost) and c.job_usd is not None and c.job_hours is not None and c.job_requests:
        tps = plan.performance.tokens_per_s_per_replica if plan.performance else 0
        rows.append(Row("this job", usd(c.job_usd), f"{c.job_requests:,} requests × {c.job_output_tokens or 0:,} output "
                        f"tokens at {tps:,.0f} "
                        f"tokens/s per copy × {plan.replicas} copies = {c.job_hours:,.1f} h on {plan.gpus_total} GPUs"
                        + (f" × ${c.gpu_price.usd_per_gpu_hour}/h" if c.gpu_price else ""), strong=True))
    rows.append(Row("operations staff", usd(c.staff_usd_month),
                    f"by exposure {plan.exposure} (an assumption: set staff_usd_month)"))
    if plan.exposure == "none":
        total_basis = "GPU bill + staff, rented all month (the job alone: the row above)"
    else:
        total_basis = (("managed bill + staff" if managed_plan else "bill + staff")
                       + (f"; ${c.usd_per_mtok:,.2f} per million output tokens" if c.usd_per_mtok is not None else ""))
    rows.append(Row("total", usd(c.total_usd_month), total_basis, strong=True))
    if isinstance(c, Cost) and c.managed_usd_month is not None and c.managed_price is not None:
        rows.append(Row("managed API, same volume", usd(c.managed_usd_month), managed_price_text(c.managed_price)))
        if c.managed_total_usd_month is not None:
            if c.break_even_daily_requests is not None:
                tail = f"; self-hosting breaks even above {c.break_even_daily_requests:,} requests/day"
            elif c.break_even_beyond_capacity and c.capacity_daily_requests is not None:
                tail = (f"; these replicas carry at most {c.capacity_daily_requests:,} requests/day, too few to beat "
                        "that price: more replicas would cost more too")
            else:
                tail = ""
            rows.append(Row("managed API with its staff", usd(c.managed_total_usd_month),
                            f"managed bill + caller-side staff {usd(c.managed_staff_usd_month)} (exposure managed_api)"
                            + tail))
    if isinstance(c, ManagedCost) and c.self_host_usd_month is not None:
        rows.append(Row("self-hosting instead", usd(c.self_host_usd_month), _self_hosting(c)))
    q = plan.quantized_option
    if q is not None:
        rows.append(Row("quantized option", usd(q.total_usd_month),
                        f"fp8 weights on {q.replicas} × TP {q.tp} × {q.gpu} would cost {usd(q.total_usd_month)}/month, "
                        f"saving {usd(q.saving_usd_month)} — check quality first (§9 Q5)"))
    return Section("cost", "Cost per month", "§8", headline, tuple(rows),
                   ("Prices are dated snapshots, not live: re-check them before you commit money.",))


def _self_hosting(c: ManagedCost) -> str:
    head = (f"{c.self_host_layout}, GPU bill + operations staff (exposure {c.self_host_exposure}): ")
    if c.saving_usd_month is not None:
        return head + f"the managed API saves {usd(c.saving_usd_month)}/month"
    if c.managed_extra_usd_month is not None:
        return head + f"{usd(c.managed_extra_usd_month)}/month less than the managed API, the price of not running GPUs (§6)"
    if c.total_usd_month is not None:
        return head + "the same as the managed API"
    return head + "the managed bill is unknown without a daily volume"


def cold_start_section(plan: Plan) -> Section | None:
    s = plan.cold_start
    if s is None:
        return None
    rows = tuple(Row(st.name, f"{st.seconds:,.0f} s", st.basis) for st in s.stages) + (
        Row("total", f"{s.total_s:,.0f} s", "the stages one after another", strong=True),)
    headline = f"{s.total_s:,.0f} s per new replica — " + ", ".join(f"{st.name} {st.seconds:,.0f} s" for st in s.stages)
    return Section("cold_start", "Cold start", "§7", headline, rows)


def warnings_section(plan: Plan) -> Section:
    rows = tuple(Row(w.id, w.message, w.section) for w in plan.warnings)
    return Section("warnings", "Warnings", "", f"{len(rows)} warning(s)" if rows else "none", rows, listed=True)


def alternatives_section(plan: Plan) -> Section:
    rows = tuple(Row(a.form, a.why_not) for a in plan.alternatives)
    return Section("alternatives", "Ruled out", "", ", ".join(a.form for a in plan.alternatives) or "nothing", rows,
                   listed=True)


def ignored_section(plan: Plan) -> Section | None:
    if not plan.ignored_answers:
        return None
    return Section("ignored", "Not used", "", ", ".join(plan.ignored_answers) + " — their questions are not on this "
                   "path (e.g. the budget amount is asked only for a fixed budget)")


def path_value(value: Any) -> str:
    """A step's value as shown: an answer, the leaf's form, or the key computed facts of a compute node."""
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items() if k in PATH_FACTS)
    return "" if value is None else str(value)


def path_section(plan: Plan) -> Section:
    rows = tuple(Row(s.node, path_value(s.value), s.why) for s in plan.path)
    return Section("path", "The path through the tree", "", f"{len(rows)} steps, each naming its rule", rows,
                   columns=("step", "value", "why"), figures=False)
