"""The compute functions the tree names (`function: fit`): they call the sizing core and return facts.

Facts are plain JSON values (the tree's conditions and texts read them); the chosen layout itself is kept
on the context for the plan. Each function documents the DOMAIN § it implements.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from wizard.errors import InputError
from wizard.sizing.fit import SizeInputs, SizeResult, size
from wizard.sizing.layout_search import (
    ONE_NODE,
    LayoutOption,
    best_option,
    choose_gpu,
    datacenter_gpus,
    layout_options,
    option,
)
from wizard.sizing.params import count_params
from wizard.sizing.precision import precision_problem, weight_format
from wizard.sources.catalog import find_gpu, gpu_catalog
from wizard.sources.resolve import resolve_model
from wizard.specs import GpuSpec, ModelSpec

GIB = 2**30
TINY_PARAMS = 3e9  # §12 "very small model": one card is plenty
CPU_MAX_PARAMS = 1.5e9  # CPU decode reads every weight per step from DRAM: 1.5 B × 2 B = 3 GB per token step
CPU_MAX_CONCURRENCY = 4
NAME_TOLERANCE = 0.10  # a name's number more than 10 % off the real count is a guess, not a size
# "8B", "0.6B", "70b", and Mixtral-style "8x7B"; an "A3B" (active) suffix is not a size.
NAME_SIZE = re.compile(r"(?<![A-Za-z0-9.])(?:(\d+)x)?(\d+(?:\.\d+)?)[Bb](?![A-Za-z0-9])")


class Context:
    """What the compute functions share during one walk: resolved specs, the chosen layout, extra answers."""

    def __init__(self, extras: dict[str, Any] | None = None) -> None:
        self.extras = extras or {}  # answers-file keys no question asks: tp, pp, replicas, peak_rps, params_b, ...
        self._models: dict[str, ModelSpec] = {}
        self.layout: LayoutOption | None = None
        self.model_spec: ModelSpec | None = None

    def model(self, name: str) -> ModelSpec:
        if name not in self._models:
            self._models[name] = resolve_model(name)
        self.model_spec = self._models[name]
        return self._models[name]


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


def model_facts(env: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """§2: parameter count from the config (not the name), the checkpoint's format against the asked precision."""
    spec = ctx.model(env["model"])
    params = count_params(spec)
    params_b = round(params.total / 1e9, 2)
    guess, text = name_params_b(spec.id)
    off = bool(guess) and abs(guess - params_b) / params_b > NAME_TOLERANCE
    guess_text = f"the name says {text} ({guess:g} B) but the config has {params_b} B" if off else ""
    own = ctx.extras.get("params_b")
    if own and abs(own - params_b) / params_b > NAME_TOLERANCE:
        off = True
        guess_text = f"params_b {own:g} B was given but the config has {params_b} B"
    return {
        "params_b": params_b,
        "name_params_b": guess,
        "name_params_off": off,
        "param_guess_text": guess_text,
        "tiny_model": params.total <= TINY_PARAMS,
        "checkpoint_format": weight_format(spec, "auto").name,
    }


def precision_facts(env: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """§2 "computing FP16 after quantizing": the asked precision against the checkpoint's own format."""
    checkpoint = env["checkpoint_format"]
    asked = env.get("weight_precision", "auto")
    return {
        "sixteen_bit_on_quantized": asked in ("bf16", "fp16") and checkpoint != "bf16",
        "needs_quantized_checkpoint": asked in ("int4", "int8") and checkpoint != asked,
    }


def fit(env: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """§1, §2, §3, §5: the layout in the fixed order, copies for the peak, N+1 for online traffic."""
    spec = ctx.model(env["model"])
    peak = int(env["peak_concurrency"])
    precision = env.get("weight_precision", "auto")
    if precision_problem(spec, precision):  # a quantized checkpoint loads in its own format (quantized_as_fp16 warns)
        precision = "auto"
    base = SizeInputs(
        context_tokens=int(env["context_tokens"]),
        weight_precision=precision,
        kv_cache_dtype=env.get("kv_cache_dtype", "auto"),
        gpu_memory_utilization=float(env.get("gpu_memory_utilization", 0.9)),
    )
    gpu_answer = env.get("gpu", "auto")
    candidates = datacenter_gpus(gpu_catalog()) if gpu_answer == "auto" else [find_gpu(gpu_answer)]
    forced_tp, forced_pp = ctx.extras.get("tp"), ctx.extras.get("pp")
    if forced_tp or forced_pp:
        chosen = _forced(spec, candidates, base, forced_tp or 1, forced_pp or 1, peak)
    elif gpu_answer == "auto":
        chosen = choose_gpu(spec, candidates, base, peak)
    else:
        chosen = best_option(layout_options(spec, candidates[0], base, peak))
    if chosen is None:
        raise InputError(
            "gpu", gpu_answer,
            f"{spec.id} does not fit {candidates[0].id if len(candidates) == 1 else 'any catalog GPU'} with up to 16 "
            f"nodes at {base.context_tokens} tokens; choose gpu auto, a larger card, fp8 KV or a shorter context",
        )
    ctx.layout = chosen
    gpu = chosen.gpu
    options = layout_options(spec, gpu, base, peak) if not (forced_tp or forced_pp) else [chosen]
    single = option(spec, gpu, base, 1, 1, peak)
    probe = _probe_single(spec, gpu, base)
    online = env.get("workload", "online") == "online"
    forced_replicas = ctx.extras.get("replicas")
    replicas = forced_replicas or chosen.copies_for_peak + (1 if online else 0)  # §10: N+1, never one copy online
    implied = _implied_concurrency(env, ctx)
    return {
        "fits_one_gpu": single is not None,
        "fits_one_node": single is not None or any(o.form == ONE_NODE for o in options),
        "layout_form": chosen.form,
        "cpu_ok": count_params(spec).total <= CPU_MAX_PARAMS and peak <= CPU_MAX_CONCURRENCY,
        "gpu_id": gpu.id,
        "gpus_per_node": gpu.gpus_per_node,
        "tp": chosen.tp,
        "pp": chosen.pp,
        "per_copy": chosen.per_copy_concurrency,
        "single_per_copy": single.per_copy_concurrency if single else 0,
        "replicas": replicas,
        "usable_gib": round(probe.usable_bytes / GIB, 1),
        "single_need_gib": round((probe.total_bytes) / GIB, 1),
        "forced_tp": forced_tp or 0,
        "forced_replicas": forced_replicas or 0,
        "tp_exceeds_node": bool(forced_tp) and forced_tp > gpu.gpus_per_node,
        "implied_concurrency": round(implied, 1),
        "peak_below_average": implied > peak,
    }


def _probe_single(spec: ModelSpec, gpu: GpuSpec, base: SizeInputs) -> SizeResult:
    """One card, one sequence: what the single-GPU verdict compares against usable memory."""
    return size(spec, gpu, base._replace(concurrency=1))


def _forced(spec: ModelSpec, gpus: list[GpuSpec], base: SizeInputs, tp: int, pp: int, peak: int) -> LayoutOption | None:
    """The user insists on a layout (§5, §10: keep it, and let the warnings say where the rules disagree)."""
    found = [o for g in gpus if (o := option(spec, g, base, tp, pp, peak)) is not None]
    if not found:
        if len(gpus) == 1:
            option_error = _layout_error(spec, gpus[0], base, tp, pp)
            raise InputError("tp", tp, option_error)
        return None
    return min(found, key=lambda o: (o.gpus_for_peak, o.gpu.memory_reported_bytes))


def _layout_error(spec: ModelSpec, gpu: GpuSpec, base: SizeInputs, tp: int, pp: int) -> str:
    try:
        size(spec, gpu, base._replace(tp=tp, pp=pp))
    except InputError as e:
        return e.accepted
    return f"TP {tp} × PP {pp} on {gpu.id} does not hold one {base.context_tokens}-token sequence of {spec.id}"


def _implied_concurrency(env: dict[str, Any], ctx: Context) -> float:
    """Little's law: sequences in flight = arrival rate × time in system (§2: the average is not the P99 peak).

    Time in system needs output length and the latency targets; without them nothing is implied."""
    out_tokens = ctx.extras.get("output_tokens")
    ttft, tpot = env.get("ttft_p99_ms"), env.get("tpot_p99_ms")
    if not (out_tokens and ttft and tpot):
        return 0.0
    seconds = (ttft + out_tokens * tpot) / 1000
    rates = [r for r in ((env.get("daily_requests") or 0) / 86400, ctx.extras.get("peak_rps") or 0) if r]
    return max(rates, default=0.0) * seconds


FUNCTIONS: dict[str, Callable[[dict[str, Any], Context], dict[str, Any]]] = {
    "model_facts": model_facts,
    "precision_facts": precision_facts,
    "fit": fit,
}
