"""The compute functions the tree names (`function: fit`): they call the sizing core and return facts.

Each returns a Computed: facts as plain JSON values (the tree's conditions and texts read them) and, for fit, the
chosen layout itself (Fit) for the plan. Nothing is written to the context. Each function documents the DOMAIN §
it implements.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Callable, NamedTuple

from wizard.errors import InputError
from wizard.session.answer_rules import rules
from wizard.sizing.engine import unserved_reason
from wizard.sizing.engines import DEFAULT_VLLM_VERSION
from wizard.sizing.cpu_performance import CPU_EFF_BANDWIDTH, CPU_MAX_PREFILL_LOAD, cpu_performance
from wizard.sizing.fit import SizeInputs, SizeResult, check_card_precision, size
from wizard.sizing.layout import check_layout
from wizard.sizing.cold_start import ColdStart, ColdStartAssumptions, cold_start
from wizard.sizing.cost import SECONDS_PER_DAY
from wizard.sizing.layout_search import MULTI_NODE, ONE_NODE, SINGLE, Candidate, Load, datacenter_gpus, forced_layout, search
from wizard.sizing.performance import Workload, allreduce_through_host
from wizard.sizing.policy import (
    AVERAGE_MARGIN, DEFAULT_OUTPUT_TOKENS, DEFAULT_PROMPT_TOKENS, NAME_TOLERANCE, PEAK_TO_AVERAGE, RAMP_SECONDS,
    TINY_PARAMS,
)
from wizard.sizing.replicas import Targets, peak_sequences
from wizard.sizing.params import count_params
from wizard.sizing.precision import precision_problem, weight_format
from wizard.sizing.weights import weight_bytes
from wizard.sources.catalog import find_entry, find_gpu, gpu_catalog, load_catalog_model, model_entries
from wizard.sources.prices import estimate_managed_price, gpu_prices, managed_price
from wizard.sources.resolve import resolve_model
from wizard.specs import GpuPrice, GpuSpec, ManagedPrice, ModelSpec
from wizard.tree.schema import ExposureMap, Recommendation

GIB = 2**30
# "8B", "0.6B", "70b", and Mixtral-style "8x7B"; an "A3B" (active) suffix is not a size.
NAME_SIZE = re.compile(r"(?<![A-Za-z0-9.])(?:(\d+)x)?(\d+(?:\.\d+)?)[Bb](?![A-Za-z0-9])")


# Operations capabilities whose starter repo runs on a cluster with a pre-seeded model volume (k8s/preseed-job.yaml)
PRESEEDED_OPS = ("kubernetes", "platform")

class Computed(NamedTuple):
    """What a compute function returns: the facts its tree node declares (JSON values the tree's conditions and
    texts read, checked against the node's outputs) and, for the plan, the typed result behind them."""

    facts: dict[str, Any]
    detail: Any = None


class Fit(NamedTuple):
    """What fit() chose, for the plan: every figure the plan shows for the layout comes from here."""

    chosen: Candidate  # the layout, its batch limit, replicas and Cost
    cold_start: ColdStart
    fp8_option: Candidate | None  # a cheaper plan at fp8 weights, reported beside the chosen one
    checkpoint_bytes: int = 0  # what is downloaded and read from disk: the checkpoint's own weights, not the deployed


class Search(NamedTuple):
    """The priced layout search for one set of answers (plan_search)."""

    ranked: list[Candidate]  # the layouts that answer the question (a forced TP/PP: those only), best first
    everything: list[Candidate]  # every layout searched
    load: Load
    base: SizeInputs


class Context:
    """What the compute functions read during one walk: the extra answers, settings, and resolved models (a cache:
    resolving a model is the only thing remembered, and it depends on the name alone). Results are returned, never
    stored here."""

    def __init__(self, extras: dict[str, Any] | None = None) -> None:
        self.extras = extras or {}  # answers-file keys no question asks: tp, pp, replicas, peak_rps, params_b, ...
        self._models: dict[str, ModelSpec] = {}
        self.quick = False  # live previews skip the extra searches (fp8 option, self-hosting comparison)

    def cold_start_assumptions(self) -> ColdStartAssumptions:
        """The defaults of cold_start.py, with the answers file's `cold_start` overrides applied."""
        given = {k: v for k, v in (self.extras.get("cold_start") or {}).items() if v is not None}
        return ColdStartAssumptions()._replace(**given)

    def gpu_prices(self) -> dict[str, GpuPrice]:
        """Catalog prices, or the user's own gpu_hour_usd for every GPU type (DESIGN: it overrides the catalog)."""
        own = self.extras.get("gpu_hour_usd")
        catalog = gpu_prices()
        if own is None:
            return catalog
        return {g.id: GpuPrice(g.id, float(own), "given", "answers file", "", "gpu_hour_usd") for g in gpu_catalog()}

    def managed_price(self, spec: ModelSpec) -> ManagedPrice | None:
        """managed_usd_per_mtok from the answers, else the dated catalog price for this model, else an estimate
        from the listed models nearest its active size (its catalog family first). The plan, its comparisons and
        the managed client's budget guard all use this one figure."""
        own = self.extras.get("managed_usd_per_mtok")
        if own:
            return ManagedPrice(spec.id, float(own["input"]), float(own["output"]), "", "", "answers file",
                                basis="given", note="managed_usd_per_mtok from the answers")
        listed = managed_price(spec.id)
        if listed is not None:
            return listed
        entry = find_entry(spec.id)
        return estimate_managed_price(spec.id, count_params(spec).active, entry.family if entry else "")

    def model(self, name: str) -> ModelSpec:
        """The model spec for a name (resolved once per context)."""
        if name not in self._models:
            self._models[name] = resolve_model(name)
        return self._models[name]

    def resolved(self, name: Any) -> ModelSpec | None:
        """The spec already resolved for this name, without resolving (None when it never was)."""
        return self._models.get(name) if isinstance(name, str) else None


def name_params_b(model_id: str) -> tuple[float, str]:
    """The size a model's name claims, in billions, and the text it came from (0 when the name has none)."""
    last = model_id.rstrip("/").split("/")[-1]
    for m in NAME_SIZE.finditer(last):
        start = m.start()
        if start > 0 and last[start - 1] in "Aa":  # "A22B": active parameters, not the size
            continue
        experts, size = m.group(1), float(m.group(2))
        return (size * int(experts) if experts else size), m.group(0)
    return 0.0, ""


def model_facts(env: dict[str, Any], ctx: Context) -> Computed:
    """§2: parameter count from the config (not the name), the checkpoint's format against the asked precision."""
    spec = ctx.model(env["model"])
    unserved = unserved_reason(spec.architecture, ctx.extras.get("vllm_version") or DEFAULT_VLLM_VERSION)
    if unserved:  # vLLM refuses it at start-up: no launch script of ours could run it
        raise InputError("model", env["model"], "a model the target engine serves natively",
                         hint=f"{unserved}; choose another model, or pin that older vLLM outside this wizard")
    params = count_params(spec)
    params_b = float(f"{params.total / 1e9:.4g}")  # billions, 4 significant digits (0.596, 8.03, 671.0)
    guess, text = name_params_b(spec.id)
    off = bool(guess) and abs(guess * 1e9 - params.total) / params.total > NAME_TOLERANCE
    guess_text = f"the name says {text} ({guess:g} B) but the config has {params_b} B" if off else ""
    own = ctx.extras.get("params_b")
    if own and abs(own * 1e9 - params.total) / params.total > NAME_TOLERANCE:
        off = True
        guess_text = f"params_b {own:g} B was given but the config has {params_b} B"
    return Computed({
        "params_b": params_b,
        "name_params_b": guess,
        "name_params_off": off,
        "param_guess_text": guess_text,
        "tiny_model": params.total <= TINY_PARAMS,
        "checkpoint_format": weight_format(spec, "auto").name,
        "max_context_tokens": spec.max_position_embeddings,
    })


def quantized_siblings(model_id: str, precision: str) -> tuple[str, ...]:
    """Catalog checkpoints of the same model stored at `precision` (int4, int8, fp8): entries of its family whose id
    starts with its name ("Qwen2.5-7B-Instruct" → "Qwen/Qwen2.5-7B-Instruct-AWQ"), the ways to serve it quantized."""
    entry = find_entry(model_id)
    name = model_id.rsplit("/", 1)[-1].lower()
    out = []
    for e in model_entries():
        if e.id.lower() == model_id.lower() or not e.id.rsplit("/", 1)[-1].lower().startswith(name):
            continue
        if entry is not None and e.family != entry.family:
            continue
        if weight_format(load_catalog_model(e), "auto").name == precision:
            out.append(e.id)
    return tuple(out)


def precision_facts(env: dict[str, Any], ctx: Context) -> Computed:
    """§2 "computing FP16 after quantizing": the asked precision against the checkpoint's own format."""
    checkpoint = env["checkpoint_format"]
    asked = env.get("weight_precision", "auto")
    needs = asked in ("int4", "int8") and checkpoint != asked
    siblings = quantized_siblings(str(env.get("model") or ""), asked) if needs else ()
    return Computed({
        "sixteen_bit_on_quantized": asked in ("bf16", "fp16") and checkpoint != "bf16",
        "needs_quantized_checkpoint": needs,
        "quantized_checkpoints": (", ".join(siblings) or f"none at {asked} in the bundled catalog") if needs else "",
    })


def managed_facts(env: dict[str, Any], ctx: Context) -> Computed:
    """§1: a managed API is "ruled out only when one of three things can't be had from it: data stays in-house,
    predictable cost, controllable latency" — one fact, so later questions need not re-read all three."""
    reasons = ("data_residency", "needs_predictable_cost", "needs_latency_control")
    return Computed({"managed_ruled_out": any(env.get(name) for name in reasons),
                     "wants_fixed_budget": env.get("needs_predictable_cost") is True})


def typical_lengths(env: dict[str, Any], extras: dict[str, Any]) -> tuple[int, int]:
    """Typical prompt and output tokens (answers, else the stated default), fitted inside the P99 context."""
    context = int(env.get("context_tokens") or 8192)
    prompt = env.get("prompt_tokens") or extras.get("prompt_tokens")
    output = env.get("output_tokens") or extras.get("output_tokens")
    given = (prompt or 0) + (output or 0)
    if given > context:  # vLLM refuses a request longer than max_model_len: a typical one cannot be
        raise InputError("prompt_tokens + output_tokens", given,
                         f"at most context_tokens ({context:,}), the longest request vLLM will accept")
    output = int(output or min(DEFAULT_OUTPUT_TOKENS, max(1, context // 4)))
    prompt = int(prompt or max(1, min(DEFAULT_PROMPT_TOKENS, context // 4, context - output)))
    if prompt + output > context:  # typical lengths cannot exceed the P99 length: scale both down
        scale = context / (prompt + output)
        prompt, output = max(1, int(prompt * scale)), max(1, int(output * scale))
    return prompt, output


@lru_cache(maxsize=1)
def online_exposure() -> ExposureMap:
    """§6 as the tree writes it once (trees/deployment.yaml, &online_exposure): operations capability → exposure of
    an online self-hosted layout. Offline batch jobs have no server (exposure "none")."""
    from wizard.tree.loader import bundled_tree

    return next(n.exposure for n in bundled_tree().nodes.values()
                if isinstance(n, Recommendation) and isinstance(n.exposure, ExposureMap))


def layout_exposure(env: dict[str, Any]) -> str:
    """The exposure a self-hosted layout gets with these answers: whose staff cost its monthly total carries."""
    if env.get("workload", "online") != "online":
        return "none"
    exposure = online_exposure()
    # a managed road may never ask ops_capability: then the tree's own default for it
    return exposure.map[str(env.get(exposure.var) or rules()[exposure.var].default)]


def plan_search(env: dict[str, Any], ctx: Context, gpus_filter=None, floor_sequences: float = 0.0) -> Search:
    """The priced layout search for these answers. Every candidate is priced at the staff cost of the exposure
    these answers give it (layout_exposure). `floor_sequences`: a load the replicas must carry at least (the
    average the daily volume implies, when it exceeds the peak given: fit() finds it from a first search)."""
    spec = ctx.model(env["model"])
    peak = int(env.get("peak_concurrency") or 1)
    precision = env.get("weight_precision", "auto")
    if precision_problem(spec, precision):  # a quantized checkpoint loads in its own format (quantized_as_fp16 warns)
        precision = "auto"
    base = SizeInputs(
        context_tokens=int(env.get("context_tokens") or min(8192, spec.max_position_embeddings)),
        weight_precision=precision,
        kv_cache_dtype=env.get("kv_cache_dtype", "auto"),
        gpu_memory_utilization=float(env.get("gpu_memory_utilization", 0.9)),
        vllm_version=ctx.extras.get("vllm_version") or DEFAULT_VLLM_VERSION,
    )
    if env.get("gpu", "auto") != "auto":  # a card that cannot run these weights is said so, not "does not fit"
        check_card_precision(find_gpu(env["gpu"]), weight_format(spec, precision))
    if base.context_tokens > spec.max_position_embeddings:
        raise InputError("context_tokens", base.context_tokens,
                         f"{spec.id} allows at most {spec.max_position_embeddings:,} tokens (max_position_embeddings)")
    online = env.get("workload", "online") == "online"
    prompt, output = typical_lengths(env, ctx.extras)
    # how many sequences a replica carries comes from the KV each holds at the typical lengths (prompt + half the
    # output on average, one of them at the P99 context); the replicas still hold the peak at the P99 context (§2)
    base = base._replace(sequence_tokens=min(base.context_tokens, prompt + output // 2))
    targets = Targets(env.get("ttft_p99_ms"), env.get("tpot_p99_ms")) if online else Targets(None, None)
    # Little's law for a peak request rate: a request stays at most ttft + output × tpot (the targets bound it).
    seconds = ((targets.ttft_ms or 0) + output * (targets.tpot_ms or 0)) / 1000
    load = Load(
        peak_sequences=max(peak_sequences(peak, ctx.extras.get("peak_rps"), seconds), floor_sequences),
        workload=Workload(1, prompt, output),
        targets=targets,
        online=online,
        exposure=layout_exposure(env),
        daily_requests=env.get("daily_requests"),
        pattern=env.get("traffic_pattern", "steady"),
        managed=ctx.managed_price(spec),
        forced_replicas=ctx.extras.get("replicas"),
        staff_usd_month=ctx.extras.get("staff_usd_month"),
        job_requests=None if online else env.get("job_requests"),
        deadline_s=None if online or not env.get("job_deadline_hours") else env["job_deadline_hours"] * 3600,
    )
    gpu_answer = env.get("gpu", "auto")
    gpus = datacenter_gpus(gpu_catalog()) if gpu_answer == "auto" else [find_gpu(gpu_answer)]
    if gpus_filter is not None:
        gpus = [g for g in gpus if gpus_filter(g)]
    prices = ctx.gpu_prices()
    forced_tp, forced_pp = ctx.extras.get("tp"), ctx.extras.get("pp")
    if forced_tp or forced_pp:
        ranked = forced_layout(spec, gpus, base, forced_tp or 1, forced_pp or 1, load, prices)
        if not ranked:  # the layout the user insists on is to blame, not the GPU choice
            field, value = ("tp", forced_tp) if forced_tp else ("pp", forced_pp)
            raise InputError(field, value, _layout_error(spec, gpus, base, forced_tp or 1, forced_pp or 1))
        everything = search(spec, gpus, base, load, prices)
    else:
        ranked = everything = search(spec, gpus, base, load, prices)
    if not ranked:
        raise InputError(
            "gpu", gpu_answer,
            f"{spec.id} does not fit {gpus[0].id if len(gpus) == 1 else 'any catalog GPU'} with up to 16 "
            f"nodes at {base.context_tokens} tokens; choose gpu auto, a larger card, fp8 KV or a shorter context",
        )
    return Search(ranked, everything, load, base)


class Sized(NamedTuple):
    """A search whose load is at least the average the daily volume keeps in flight (sized_search)."""

    search: Search
    average: float  # sequences in flight on average, at `request_s` per request (Little's law)
    request_s: float  # the predicted request time of the chosen layout that gave the average


# Rounds of sized_search: four stopped the fp8 option of average_not_p99 at 175 of a 284 average. Near the fixed point a
# round closes only a quarter to a third of the gap (each larger load slows the requests it was sized on), so from a
# gap of a few hundred sequences 0.1 % takes about 20 rounds (a round is one layout search, tens of ms; only a plan
# whose average is above its peak repeats it); 40 leave that a margin
SIZED_ROUNDS = 40


def sized_search(env: dict[str, Any], ctx: Context, gpus_filter=None) -> Sized:
    """§2 "P99, not the average": the search for the peak given, and — when the daily volume keeps more sequences
    in flight on average than that, at the request time the chosen layout predicts (TTFT + output × TPOT; never
    the targets) — again with the average as the load, until the average the plan reports is the one it carries
    (a larger load means larger batches and slower requests: each round moves by less, about two thirds of the
    last where the batch is not yet capped; at most SIZED_ROUNDS). Every search of a plan (the chosen layout, the
    fp8 option, the self-hosting comparison of a managed plan) goes through here."""
    found = plan_search(env, ctx, gpus_filter)
    average, seconds = average_sequences(env, found), request_seconds(found)
    for _ in range(SIZED_ROUNDS):
        if average <= found.load.peak_sequences * 1.001:
            break
        found = plan_search(env, ctx, gpus_filter, floor_sequences=average)
        average, seconds = average_sequences(env, found), request_seconds(found)
    return Sized(found, average, seconds)


def fit(env: dict[str, Any], ctx: Context) -> Computed:
    """§1, §2, §3, §5, §8: the layout in the fixed order, priced; replicas for the peak within the targets."""
    spec = ctx.model(env["model"])
    peak = int(env["peak_concurrency"])
    online = env.get("workload", "online") == "online"
    # §2 "P99, not the average": a peak given below the average the daily volume keeps in flight cannot be right:
    # the replicas then carry the average and the average_not_p99 warning says so (sized_search)
    sized = sized_search(env, ctx)
    found, average = sized.search, sized.average
    everything, load, base = found.everything, found.load, found.base
    forced_tp = ctx.extras.get("tp")
    chosen = found.ranked[0]
    fp8_searched, fp8 = (False, None) if ctx.quick else _fp8_option(env, ctx, spec, chosen)
    gpu = chosen.gpu
    singles = [c for c in everything if c.form == SINGLE]
    probe = size(spec, gpu, base._replace(concurrency=1))
    # the download and the disk read are the checkpoint's bytes (fp8 of a bf16 checkpoint downloads the bf16 files)
    checkpoint_bytes = weight_bytes(spec, "auto").total
    # On a cluster the starter repo's pre-seed Job downloads the checkpoint once into the model volume and the
    # servers start from it offline (k8s/preseed-job.yaml): a replica's cold start reads, it does not download.
    assumptions = ctx.cold_start_assumptions()
    if (online and env.get("ops_capability") in PRESEEDED_OPS and spec.source != "local"
            and "weights_cached" not in (ctx.extras.get("cold_start") or {})):
        assumptions = assumptions._replace(weights_cached=True)
    starts = cold_start(checkpoint_bytes, chosen.nodes_per_copy, chosen.limit.performance.ttft_ms / 1000, a=assumptions)
    ramp = RAMP_SECONDS.get(load.pattern, 0.0) if online else 0.0
    # §2: a peak given within AVERAGE_MARGIN of the average is an average given as the peak; the pattern's typical
    # peak-to-average ratio (policy.PEAK_TO_AVERAGE, an assumption) is shown beside the warning
    implied = average
    shape = PEAK_TO_AVERAGE.get(load.pattern, 1.0)
    forced_pp = ctx.extras.get("pp")
    # where one card holds the model: the chosen card when it does, else the cheapest card that does (§5)
    fits_on = next((c for c in singles if c.gpu.id == gpu.id), None) or (singles[0] if singles else None)
    if chosen.form == SINGLE:
        tp_reason = "none"
    elif forced_tp or forced_pp:
        tp_reason = "asked"
    elif not singles:
        tp_reason = "not_fit"
    elif not online:  # §12: offline ranks by cost per token, and a split layout came out cheaper per token
        tp_reason = "cost_per_token"
    else:  # §5 with §9 Q3: a card holds it, but no single-GPU layout meets the P99 targets; TP shortens each step
        tp_reason = "targets"
    facts = {
        "fits_one_gpu": bool(singles),
        "fits_gpu_id": fits_on.gpu.id if fits_on else "",
        "tp_reason": tp_reason,
        "single_limit": _latency_text(fits_on, load) if fits_on and not fits_on.meets_targets else "",
        "plan_gpus": chosen.gpus_total,
        "tp_over_pcie": chosen.tp > 1 and not gpu.nvlink,
        "interconnect": f"{gpu.interconnect}, through host memory (no peer-to-peer between these cards)"
        if allreduce_through_host(gpu) else gpu.interconnect,
        "allreduce_ms": round(chosen.limit.performance.comm_ms, 1),
        "tpot_ms": round(chosen.limit.performance.tpot_ms, 1),
        "usd_per_mtok_offline": round(chosen.cost.usd_per_mtok or 0, 2) if not online else 0,
        "fits_one_node": any(c.form != MULTI_NODE for c in everything),
        "layout_form": chosen.form,
        "targets_met": chosen.meets_targets,
        "limited_by": chosen.limit.limited_by,
        **_cpu_facts(spec, probe, load),
        "gpu_id": gpu.id,
        "gpus_per_node": gpu.gpus_per_node,
        "tp": chosen.tp,
        "pp": chosen.pp,
        "per_copy": max(chosen.limit.batch, 1),
        "p99_per_copy": chosen.limit.kv_batch,
        "replicas_set_by": chosen.replicas.set_by,
        "single_per_copy": max((c.limit.batch for c in singles if c.gpu.id == gpu.id), default=0),
        "replicas": chosen.replicas.replicas,
        "usable_gib": round(probe.usable_bytes / GIB, 1),
        "single_need_gib": round(probe.total_bytes / GIB, 1),
        "forced_tp": forced_tp or 0,
        "forced_replicas": ctx.extras.get("replicas") or 0,
        "tp_exceeds_node": (forced_tp or 0) > gpu.gpus_per_node,
        "implied_concurrency": round(implied, 1),
        "peak_below_average": online and implied > 0 and peak <= implied * AVERAGE_MARGIN,
        "sized_on_average": implied > peak,
        "request_s": round(sized.request_s, 2),
        "typical_prompt_tokens": load.workload.prompt_tokens,
        "typical_output_tokens": load.workload.output_tokens,
        "peak_to_average": shape,
        "cold_start_s": round(starts.total_s),
        **_form_costs(everything, chosen),
        "over_budget": over_budget(_budget(env, ctx), chosen),
        "budget_levers": budget_levers(env, spec, base, chosen, fp8, fp8_searched),
        "ramp_s": ramp,
        "cold_start_exceeds_ramp": ramp > 0 and starts.total_s > ramp,
    }
    return Computed(facts, Fit(chosen, starts, fp8, checkpoint_bytes))


def _cpu_facts(spec: ModelSpec, probe: SizeResult, load: Load) -> dict[str, Any]:
    """§12 "even a CPU may do": a very small model on the reference CPU host at the plan's load. cpu_ok when it
    meets the P99 targets online (a target not given does not stop it), or finishes the job by its deadline."""
    params = count_params(spec)
    w = load.workload
    seq_kv = probe.kv._replace(batched_tokens=None).bytes_per_sequence(w.prompt_tokens + w.output_tokens // 2)
    cpu = cpu_performance(weight_bytes=probe.weights.total, params=params.active, kv_bytes_per_sequence=seq_kv,
                          sequences=load.peak_sequences, prompt_tokens=w.prompt_tokens, output_tokens=w.output_tokens)
    t = load.targets
    # the prompts must also leave the host time to decode: half its time reading prompts is the most allowed
    meets = ((t.ttft_ms is None or cpu.ttft_ms <= t.ttft_ms) and (t.tpot_ms is None or cpu.tpot_ms <= t.tpot_ms)
             and cpu.prefill_load <= CPU_MAX_PREFILL_LOAD)
    hours = (load.job_requests * w.output_tokens / cpu.output_tokens_per_s / 3600
             if load.job_requests and cpu.output_tokens_per_s > 0 else 0.0)
    in_time = load.deadline_s is None or hours * 3600 <= load.deadline_s
    ok = params.total <= TINY_PARAMS and (meets if load.online else in_time)
    return {
        "cpu_ok": ok,
        "cpu_ttft_ms": round(cpu.ttft_ms),
        "cpu_tpot_ms": round(cpu.tpot_ms, 1),
        "cpu_tokens_s": round(cpu.output_tokens_per_s),
        "cpu_job_hours": round(hours, 1),
        "cpu_sequences": round(load.peak_sequences, 1),
        "cpu_prefill_pct": round(cpu.prefill_load * 100),
        "cpu_prefill_max_pct": round(CPU_MAX_PREFILL_LOAD * 100),
        "cpu_host": (f"{cpu.host.name} ({cpu.host.memory_bw_bytes_s / 1e9:.0f} GB/s, decode at "
                     f"{CPU_EFF_BANDWIDTH * 100:.0f} % of it: an assumption)"),
    }


def request_seconds(found: Search) -> float:
    """How long a typical request of the best layout takes (the roofline's TTFT + output tokens × TPOT)."""
    p = found.ranked[0].limit.performance
    return (p.ttft_ms + found.load.workload.output_tokens * p.tpot_ms) / 1000


def average_sequences(env: dict[str, Any], found: Search) -> float:
    """Sequences in flight on average (Little's law): daily requests / 86,400 s × predicted seconds per request."""
    if env.get("workload", "online") != "online" or not env.get("daily_requests"):
        return 0.0
    return env["daily_requests"] / SECONDS_PER_DAY * request_seconds(found)


def _latency_text(c: Candidate, load: Load) -> str:
    """What keeps a layout from the targets: its TTFT / TPOT at one sequence against them."""
    p, t = c.limit.performance, load.targets
    parts = []
    if t.ttft_ms is not None and p.ttft_p99_ms > t.ttft_ms:
        parts.append(f"P99 TTFT {p.ttft_p99_ms:,.0f} ms > {t.ttft_ms:,.0f} ms")
    if t.tpot_ms is not None and p.tpot_p99_ms > t.tpot_ms:
        parts.append(f"P99 TPOT {p.tpot_p99_ms:,.1f} ms > {t.tpot_ms:,.0f} ms")
    return f"{' and '.join(parts) or 'the targets missed'} at one sequence on {c.gpu.id}"


def _fp8_option(env: dict[str, Any], ctx: Context, spec: ModelSpec, chosen: Candidate) -> tuple[bool, Candidate | None]:
    """§9 Q5 "quantize or not": the same search at fp8 weights on FP8-capable cards, when the answers left the
    precision to the checkpoint (16-bit). Reported beside the plan, never chosen silently: quality is the team's call.
    (whether the search ran, its best plan when that costs less than the chosen one: a saving is always positive)"""
    if env.get("weight_precision", "auto") != "auto" or weight_format(spec, "auto").name != "bf16":
        return False, None
    if env.get("gpu", "auto") != "auto" and not find_gpu(env["gpu"]).fp8_support:
        return False, None
    try:
        ranked = sized_search({**env, "weight_precision": "fp8"}, ctx, gpus_filter=lambda g: g.fp8_support).search.ranked
    except InputError:
        return True, None
    best = ranked[0] if ranked else None  # ranked: the layouts meeting the targets first
    if best is not None and chosen.meets_targets and not best.meets_targets:  # cheaper only by missing the targets
        best = None
    if best is None or best.cost.total_usd_month is None or chosen.cost.total_usd_month is None:
        return True, None
    return True, (best if best.cost.total_usd_month < chosen.cost.total_usd_month else None)


def _budget(env: dict[str, Any], ctx: Context) -> float | None:
    budget = env.get("monthly_budget_usd")
    return budget if budget is not None else ctx.extras.get("monthly_budget_usd")


def over_budget(budget: float | None, chosen: Candidate) -> bool:
    """§8, §9 Q5: exactly when the chosen plan's own monthly total (the figure its headline shows) exceeds a
    stated budget; unknown without a budget or a GPU price."""
    total = chosen.cost.total_usd_month
    return budget is not None and total is not None and total > budget


def budget_levers(env: dict[str, Any], spec: ModelSpec, base: SizeInputs, chosen: Candidate,
                  fp8: Candidate | None, fp8_searched: bool) -> str:
    """§8, §9 Q5: what could lower this plan's cost, leaving out what the plan already does (weights already at
    8 bits or fewer, an fp8 KV cache, no latency targets) and what cannot help (fp8 weights when the fp8 search
    found nothing cheaper, a managed API that something rules out)."""
    levers = []
    if fp8 is not None:  # the fp8 search found a cheaper plan: name it
        levers.append(f"fp8 weights ({_usd(fp8.cost.total_usd_month)}/month on {fp8.replicas.replicas} × TP {fp8.tp} × "
                      f"{fp8.gpu.id}: the quantized option; check quality first)")
    elif weight_format(spec, base.weight_precision).bits >= 16 and not fp8_searched:
        levers.append("fp8 weights (half the bytes; check quality first)")
    if base.kv_cache_dtype != "fp8":
        levers.append("an fp8 KV cache (--kv-cache-dtype fp8 halves it)")
    levers.append(f"a shorter context than {base.context_tokens:,} tokens")
    online = env.get("workload", "online") == "online"
    if online and (env.get("ttft_p99_ms") or env.get("tpot_p99_ms")):
        levers.append("looser latency targets")
    ruled_out = env.get("data_residency") or env.get("needs_predictable_cost") or env.get("needs_latency_control")
    if online and not ruled_out:
        managed = chosen.cost.managed_total_usd_month
        levers.append("a managed API" + (f" (about {_usd(managed)}/month with its staff)" if managed is not None else ""))
    return ", ".join(levers[:-1]) + (" or " if len(levers) > 1 else "") + levers[-1]


def _usd(x: float | None) -> str:
    return "—" if x is None else f"${x:,.0f}"


def _form_costs(everything: list[Candidate], chosen: Candidate) -> dict[str, Any]:
    """The cheapest candidate of each form, for the alternatives' numbers (0 when none or unpriced). Every figure
    is a candidate's own Cost (layout_search.layout_cost): the same number the plan's headline shows for it.
    The managed API's figure is its bill plus its caller-side staff, the total it is compared as."""
    out: dict[str, Any] = {"plan_usd_month": round(chosen.cost.total_usd_month or 0),
                           "managed_usd_month": round(chosen.cost.managed_total_usd_month or 0)}
    for form, key in ((SINGLE, "single"), (ONE_NODE, "tp"), (MULTI_NODE, "multi")):
        best = next((c for c in everything if c.form == form and c.meets_targets), None)
        out[f"best_{key}_usd"] = round(best.cost.total_usd_month or 0) if best else 0
        out[f"best_{key}_gpus"] = best.gpus_total if best else 0
        out[f"best_{key}_layout"] = f"{best.replicas.replicas} × TP {best.tp} × PP {best.pp} on {best.gpu.id}" if best else ""
    return out


def _layout_error(spec: ModelSpec, gpus: list[GpuSpec], base: SizeInputs, tp: int, pp: int) -> str:
    """Why no card takes a forced TP × PP: the model's own divisibility rule when it breaks one (the same for every
    card), else why the largest card cannot hold it."""
    try:
        check_layout(spec, tp, pp)
    except InputError as e:
        return e.accepted
    gpu = max(gpus, key=lambda g: g.memory_reported_bytes)
    try:
        r = size(spec, gpu, base._replace(tp=tp, pp=pp, concurrency=1))
    except InputError as e:
        return e.accepted
    where = gpu.id if len(gpus) == 1 else f"any catalog GPU (the largest, {gpu.id}, included)"
    if r.refused_at_startup and r.startup_check is not None:
        need, pool = r.startup_check
        return (f"vLLM {base.vllm_version} refuses TP {tp} × PP {pp} on {where} at start-up: it checks one "
                f"{base.context_tokens}-token request's KV of every stage ({need / 2**30:.2f} GiB) against the smallest "
                f"stage's KV memory ({pool / 2**30:.2f} GiB), though each GPU holds only its own stage (0.14-0.16; "
                "vLLM 0.17.0 or later, or a shorter context, passes)")
    return f"TP {tp} × PP {pp} on {where} does not hold one {base.context_tokens}-token sequence of {spec.id}"


FUNCTIONS: dict[str, Callable[[dict[str, Any], Context], Computed]] = {
    "model_facts": model_facts,
    "precision_facts": precision_facts,
    "managed_facts": managed_facts,
    "fit": fit,
}
