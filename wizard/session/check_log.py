"""`check-log`: a team's own vLLM start-up log against what the sizing core predicts for the same run.

The log gives the release, the engine arguments and the memory figures (sources/vllm_log.py). The same run is
sized with that release's profile (sizing/engines.py), on the card's memory as the log states it, and every
figure both sides have is compared with the likely cause of a difference. The verdict reads the headline
figure — "GPU KV cache size" (else the available KV memory): within 3 % the plan's memory model holds for
this run. With a target concurrency it ends with what to change to reach it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wizard.errors import InputError
from wizard.sizing.engines import (
    DEFAULT_VLLM_VERSION,
    flashinfer_installed,
    pp_checks_whole_model,
    profile_for,
    resolve_sampler,
)
from wizard.sizing.engine import BLOCK_SIZE
from wizard.sizing.fit import SizeInputs, SizeResult, size
from wizard.sizing.kv_cache import kv_stages
from wizard.sizing.kv_report import logged_pool
from wizard.sizing.layout import stage_layers
from wizard.sources.vllm_log import StartupLog, parse_log
from wizard.specs import GpuSpec, ModelSpec

GIB = 2**30
MAX_LOG_BYTES = 64 * 2**20
TOLERANCE = 0.03  # the verdict's bound on the headline figure
SAMPLER_NAMES = {"flashinfer": "FlashInfer's top-k/top-p sampler",
                 "native": "PyTorch's top-k/top-p sampler (it sorts the vocabulary)"}
SAME_CARD = 0.02  # a logged total within 2 % of the catalog card's reported memory is that card

# Why a figure can differ, by item (what to look at first).
CAUSES = {
    "weights_gib": "checkpoint bytes: its quantization or dtype is not what the config says, or the log counts "
                   "construction buffers (RoPE caches) with the weights",
    "activation_peak_gib": "the profile's peak: the sampler pass over max_num_seqs × vocab logits or the forward pass "
                           "over max_num_batched_tokens (check both flags in the log's engine arguments)",
    "consumed_gib": "weights + non-torch memory at the profile's end (the line of 0.28 on): the checkpoint's bytes, "
                    "or non-torch memory (CUDA context, NCCL, custom all-reduce) beyond the profile's figure",
    "non_torch_gib": "non-torch memory (CUDA context, cuBLAS, NCCL, custom all-reduce) depends on the interconnect "
                     "and libraries; the profile holds one figure per layout kind (TP 2 or PCIe logs: above 2 GPUs on "
                     "an NVLink switch, H100 and newer, NCCL also allocates NVLink SHARP buffers, vllm-project/vllm "
                     "issue 9699; NCCL_NVLS_ENABLE=0 leaves them out)",
    "cuda_graph_gib": "the CUDA graph pool grows with the capture sizes (max_num_seqs) and the model; the profile "
                      "holds one figure",
    "available_kv_gib": "the sum of the parts above, against total × gpu_memory_utilization",
    "kv_tokens": "KV bytes per token (KV dtype, sliding-window or hybrid layers) or the available memory",
    "max_concurrency": "KV capacity over the per-request budget (sliding windows hold window + in-flight tokens)",
    "kv_needed_gib": "KV bytes of one sequence at max_model_len (KV dtype, sliding-window or hybrid layers; under "
                     "pipeline parallelism vLLM 0.14-0.16 count every stage's layers)",
    "estimated_max_len": "the longest max_model_len one request's KV fits in the available memory: KV bytes per token "
                         "(under pipeline parallelism vLLM 0.14-0.16 count every stage's layers)",
}


@dataclass
class Item:
    name: str
    logged: float | int
    predicted: float | int
    difference: float  # (predicted − logged) / |logged|
    cause: str


@dataclass
class LogCheck:
    """The result of one check: what was read, what was predicted, and the verdict."""

    path: str
    log: StartupLog
    vllm_version: str
    version_from: str  # "log" | "option" | "default"
    model: str | None
    model_from: str | None  # "log" | "option"
    gpu: str | None
    gpu_from: str | None  # "option" | "logged total" | None
    flags: dict[str, Any]
    predicted: dict[str, Any] = field(default_factory=dict)
    items: list[Item] = field(default_factory=list)
    verdict: str = ""
    matches: bool = False
    said: list[str] = field(default_factory=list)  # mismatches of model or card, assumptions
    advice: list[str] = field(default_factory=list)


def read_log(path: Path) -> StartupLog:
    """The file's log figures; InputError (exit 2) when it cannot be read or holds no vLLM start-up line."""
    from wizard.capped_read import TooBig, read_capped

    try:
        if path.is_dir():
            raise InputError("FILE", str(path), "is a folder; expected a vLLM start-up log file")
        raw = read_capped(path, MAX_LOG_BYTES)
    except TooBig:
        raise InputError("FILE", str(path), f"is larger than {MAX_LOG_BYTES // 2**20} MiB; expected a start-up log") from None
    except OSError as e:
        raise InputError("FILE", str(path), f"could not be read ({e.strerror or type(e).__name__})") from None
    except ValueError:
        raise InputError("FILE", repr(str(path)), "expected a file path") from None
    log = parse_log(raw.decode("utf-8", errors="replace"))
    if not log.recognised:
        raise InputError("FILE", str(path), "holds no vLLM start-up line (expected lines such as 'Available KV cache "
                                            "memory: …', 'GPU KV cache size: …' or V0's 'Memory profiling results')")
    return log


def _known(version: str) -> bool:
    try:
        profile_for(version)
    except InputError:
        return False
    return True


def _card(log: StartupLog, gpu_option: str | None, said: list[str]) -> tuple[GpuSpec | None, str | None]:
    from wizard.sources.catalog import find_gpu, gpu_catalog

    total = log.total_gib * GIB if log.total_gib else None
    if gpu_option:
        gpu = find_gpu(gpu_option)
        if total and abs(gpu.memory_reported_bytes - total) > SAME_CARD * total:
            said.append(f"the log's card reports {log.total_gib:.2f} GiB, {gpu.id} {gpu.memory_reported_bytes / GIB:.2f} GiB: "
                        f"a different card than --gpu? The prediction uses the logged total")
        return gpu, "option"
    if total:
        near = [g for g in gpu_catalog() if abs(g.memory_reported_bytes - total) <= SAME_CARD * total]
        if near:
            best = min(near, key=lambda g: abs(g.memory_reported_bytes - total))
            said.append(f"card not named in the log: {best.id}, the catalog card nearest its {log.total_gib:.2f} GiB total"
                        + (f" (also {', '.join(g.id for g in near if g is not best)})" if len(near) > 1 else "")
                        + "; give --gpu to choose")
            return best, "logged total"
    return None, None


def _model(log: StartupLog, option: str | None, said: list[str]) -> tuple[ModelSpec | None, str | None]:
    from wizard.sources.resolve import resolve_model

    name = option or log.model
    if not name:
        said.append("no model in the log: give --model to predict")
        return None, None
    if option and log.model and option.strip().lower() != log.model.strip().lower():
        said.append(f"the log serves {log.model}, --model says {option}: predicting for {option}")
    try:
        return resolve_model(name), "option" if option else "log"
    except InputError as e:
        said.append(f"cannot read the model {name}: {e.accepted}; give --model (a catalog id or a folder with config.json)")
        return None, None


def _context(log: StartupLog, model: ModelSpec) -> int:
    """The run's max_model_len: logged, or the one its error or concurrency line names, else the model's (≤ 8192)."""
    return log.max_model_len or log.needed_len or log.concurrency_tokens or min(model.max_position_embeddings, 8192)


def _kv_dtype(log: StartupLog) -> str:
    return "fp8" if (log.kv_cache_dtype or "auto").startswith("fp8") else "auto"


def _inputs(log: StartupLog, model: ModelSpec, gpu: GpuSpec, version: str) -> SizeInputs:
    engine = profile_for(version)
    context = _context(log, model)
    tokens, seqs = engine.default_batch(gpu, context, model, version)
    kv = _kv_dtype(log)
    return SizeInputs(
        tp=log.tp or 1, pp=log.pp or 1, context_tokens=context, concurrency=1, kv_cache_dtype=kv,
        gpu_memory_utilization=log.gpu_memory_utilization or engine.gpu_memory_utilization,
        max_num_batched_tokens=log.max_num_batched_tokens or tokens, max_num_seqs=log.max_num_seqs or seqs,
        enforce_eager=bool(log.enforce_eager), vllm_version=version, sampler=log.sampler or "auto",
        fp4_marlin=True if log.fp4_kernel == "Marlin" else None,
    )


def _tokens_at_logged_memory(log: StartupLog, model: ModelSpec, version: str,
                             inputs: SizeInputs | None = None) -> Item | None:
    """"GPU KV cache size" from the logged available KV memory and the model's KV bytes per token: a check of the
    per-token arithmetic alone (layers, KV heads, head_dim, dtype, window), which needs no card. None when the log
    states no positive available memory and capacity. The logged GiB has 2 decimals: ±0.005 GiB of rounding."""
    if not log.available_kv_gib or log.available_kv_gib <= 0 or not log.kv_tokens:
        return None
    engine = profile_for(version)
    if inputs is not None:  # the run as check_log sizes it (the card's batch defaults)
        context, batched, kv = inputs.context_tokens, inputs.max_num_batched_tokens or 0, inputs.kv_cache_dtype
    else:  # no card: the logged limits, else the smallest tier's token budget (a sliding layer's in-flight share)
        context = _context(log, model)
        batched = log.max_num_batched_tokens or engine.tiers[-1].tokens
        kv = _kv_dtype(log)
    stages = _logged_stages(log, model, engine, kv, batched)
    if stages is None:
        return None
    pool = int(log.available_kv_gib * GIB)
    laid_out = _laid_out(log, model, stages, pool, context, version)
    if laid_out is not None:  # vLLM's own layout and report (kv_report.py)
        tokens = laid_out.tokens
    else:
        per_token = max(st.bytes_per_token(context) for st in stages)
        if not per_token:
            return None
        tokens = pool // per_token // BLOCK_SIZE * BLOCK_SIZE
    return Item("kv_tokens_at_logged_memory", log.kv_tokens, tokens, (tokens - log.kv_tokens) / log.kv_tokens,
                CAUSES["kv_tokens"])


def _logged_stages(log: StartupLog, model: ModelSpec, engine: Any, kv: str, batched: int) -> tuple | None:
    """The KV layout per PP stage of the run the log shows (its TP/PP, the release's in-flight prefill batches);
    None when the model's shapes do not split that way."""
    try:
        return kv_stages(model, kv, log.tp or 1, log.pp or 1, batched * engine.in_flight_batches(log.pp or 1) or None)
    except (InputError, ZeroDivisionError):
        return None


def _needed_at_logged_length(log: StartupLog, model: ModelSpec, version: str) -> Item | None:
    """A failed start's "X GiB KV cache is needed" for max_model_len, from the model's KV bytes per sequence alone:
    like the per-token check, it needs no card (and no weights: a quantized checkpoint of unknown bytes keeps its
    base model's KV shape). None when the log states no such error."""
    if not log.kv_needed_gib or not log.needed_len:
        return None
    stages = _error_stages(log, model, version)
    if stages is None:
        return None
    gib = round(_checked(log, model, stages, version, log.needed_len) / GIB, 2)
    return Item("kv_needed_gib", log.kv_needed_gib, gib, (gib - log.kv_needed_gib) / log.kv_needed_gib,
                CAUSES["kv_needed_gib"])


def _laid_out(log: StartupLog, model: ModelSpec, stages: tuple, pool: int, length: int, version: str):
    """vLLM's layout (kv_report.py) of `pool` bytes on every GPU of the logged run, for requests of `length`."""
    return logged_pool(model.layer_kinds, stages, stage_layers(model.num_layers, log.pp or 1), [pool] * len(stages),
                       length, profile_for(version), version)


def _error_stages(log: StartupLog, model: ModelSpec, version: str) -> tuple | None:
    engine = profile_for(version)
    return _logged_stages(log, model, engine, _kv_dtype(log), log.max_num_batched_tokens or engine.tiers[-1].tokens)


def _checked(log: StartupLog, model: ModelSpec, stages: tuple, version: str, length: int) -> int:
    """The KV bytes vLLM's start-up check counts for one request of `length` tokens: the heaviest stage's; on
    0.14-0.16 the whole model's groups, as its check counts them (kv_report.py first_group_bytes: for one kind of
    layer every stage's KV together, engines.pp_checks_whole_model)."""
    if pp_checks_whole_model(version):
        laid = _laid_out(log, model, stages, 2**62, length, version)
        return laid.first_group_bytes if laid is not None else sum(st.allocated_bytes(length) for st in stages)
    return max(st.allocated_bytes(length) for st in stages)


def _estimated_len_at_logged_memory(log: StartupLog, model: ModelSpec, version: str) -> Item | None:
    """A failed start's "estimated maximum model length" from the logged available memory and the KV bytes per
    token: the longest whole-block length whose one request fits (vLLM's binary search over the same bytes;
    exact for layers that keep the whole context). None without both figures."""
    if not log.estimated_max_len or not log.available_kv_gib or log.available_kv_gib <= 0 or not log.needed_len:
        return None
    stages = _error_stages(log, model, version)
    if stages is None:
        return None
    per_token = -(-_checked(log, model, stages, version, log.needed_len) // log.needed_len)
    if not per_token:
        return None
    tokens = int(log.available_kv_gib * GIB) // (per_token * BLOCK_SIZE) * BLOCK_SIZE
    return Item("estimated_max_len", log.estimated_max_len, tokens,
                (tokens - log.estimated_max_len) / log.estimated_max_len, CAUSES["estimated_max_len"])


def predicted_figures(r: SizeResult, consumed_line: bool = False) -> dict[str, Any]:
    """The sizing's figures under the log's names (GiB to 2 decimals as vLLM prints, tokens). `consumed_line`: the
    log prints 0.28's "consumed memory (weights + non-torch)" line, whose peak activation holds the CUDA graph
    estimate the budget subtracts (peak_activation_memory = transient peak + applied estimate, gpu_worker.py
    @ v0.33.0; 0.21 printed the torch peak alone)."""
    pool = r.kv_pool_bytes
    per_seq = r.sequence_kv_bytes(r.inputs.context_tokens)
    activation = r.activation.peak + (r.reserve.cuda_graphs if consumed_line else 0)
    return {
        "total_gib": round(r.gpu.memory_reported_bytes / GIB, 2),
        "weights_gib": round(r.weights.per_gpu / GIB, 2),
        "consumed_gib": round((r.weights.per_gpu + r.reserve.base + r.reserve.communication) / GIB, 2),
        "activation_peak_gib": round(activation / GIB, 2),
        "non_torch_gib": round((r.reserve.base + r.reserve.communication) / GIB, 2),
        "cuda_graph_gib": round(r.reserve.cuda_graphs / GIB, 2),
        "available_kv_gib": round(pool / GIB, 2),
        "kv_tokens": r.logged_kv_tokens if r.logged_kv_tokens is not None else r.kv_capacity_tokens,
        "max_concurrency": round(r.max_concurrency, 2),
        "kv_needed_gib": round((r.startup_check[0] if r.startup_check else per_seq) / GIB, 2),
    }


def check_log(path: Path, *, model: str | None = None, gpu: str | None = None, vllm_version: str | None = None,
              concurrency: int | None = None, run: dict[str, Any] | None = None,
              weights_from_log: bool = False) -> LogCheck:
    """Read, predict, compare. `run`: engine arguments the log does not show (tp, max_model_len, ...); the log's
    own win. `weights_from_log`: the model gives the shapes, the log's "Model loading took" the weights (a
    checkpoint the catalog cannot size). Raises InputError for an unreadable file or one that is no vLLM log."""
    return check_startup(read_log(path), str(path), model=model, gpu=gpu, vllm_version=vllm_version,
                         concurrency=concurrency, run=run, weights_from_log=weights_from_log)


def check_startup(log: StartupLog, label: str, *, model: str | None = None, gpu: str | None = None,
                  vllm_version: str | None = None, concurrency: int | None = None, run: dict[str, Any] | None = None,
                  weights_from_log: bool = False) -> LogCheck:
    """check_log over figures already read: a parsed log, or a published report that states the same figures
    (its version, "Available KV cache memory", "GPU KV cache size", weights). `label` names where they came from."""
    said: list[str] = []
    if log.starts > 1:
        said.append(f"the file holds {log.starts} start-ups: the last one that states figures is checked")
    for name, value in (run or {}).items():
        stated = getattr(log, name)
        if stated is None:
            setattr(log, name, value)
        elif stated != value:
            said.append(f"the log shows {name} {stated}; --{name.replace('_', '-')} {value} is not used")
    known = log.version is not None and _known(log.version)
    if log.version and known:
        version, version_from = log.version, "log"
        if vllm_version and profile_for(vllm_version) is not profile_for(log.version):
            said.append(f"the log is vLLM {log.version}, --vllm-version says {vllm_version}: the log's release is used")
    elif vllm_version:
        if log.version:
            said.append(f"the log's vLLM {log.version} has no memory profile here: --vllm-version {vllm_version} is used")
        version, version_from = vllm_version, "option"
    elif log.engine == "V0":
        v0 = profile_for("0.6.0")
        version, version_from = ".".join(map(str, v0.start)), "default"
        said.append(f"no version in the log; its memory lines are V0's: the V0 profile ({v0.versions}) assumed "
                    "(give --vllm-version)")
    else:
        version, version_from = DEFAULT_VLLM_VERSION, "default"
        said.append(f"no version in the log: vLLM {DEFAULT_VLLM_VERSION} assumed (give --vllm-version)")
    if not _known(version):
        said.append(f"vLLM {version} is outside the known releases: {DEFAULT_VLLM_VERSION} assumed")
        version, version_from = DEFAULT_VLLM_VERSION, "default"
    spec, model_from = _model(log, model, said)
    card, gpu_from = _card(log, gpu, said)
    flags = {k: getattr(log, k) for k in ("tp", "pp", "max_model_len", "gpu_memory_utilization", "max_num_seqs",
                                          "max_num_batched_tokens", "quantization", "kv_cache_dtype", "enforce_eager",
                                          "sampler")}
    check = LogCheck(path=label, log=log, vllm_version=version, version_from=version_from,
                     model=spec.id if spec else (model or log.model), model_from=model_from,
                     gpu=card.id if card else None, gpu_from=gpu_from, flags=flags, said=said)
    if spec is None or card is None:
        if card is None:
            said.append("no card: give --gpu (the log states no total memory to match)")
        check.verdict = "no prediction: " + "; ".join(s for s in said if s.startswith(("no ", "cannot")))
        per_token = _tokens_at_logged_memory(log, spec, version) if spec is not None else None
        needed = _needed_at_logged_length(log, spec, version) if spec is not None else None
        if per_token is not None:  # the capacity the logged memory holds: KV bytes per token, whatever the card
            check.items.append(per_token)
            check.matches = abs(per_token.difference) <= TOLERANCE
            check.verdict = (f"KV bytes per token {'match' if check.matches else 'do not match'}: "
                             f"{per_token.predicted:,} tokens fit the logged {log.available_kv_gib} GiB, "
                             f"{per_token.logged:,} logged ({per_token.difference:+.1%}); the budget itself is not "
                             "predicted (no card: give --gpu)")
        elif needed is not None:  # a failed start: one sequence at max_model_len, whatever the card
            check.items.append(needed)
            estimate = _estimated_len_at_logged_memory(log, spec, version) if spec is not None else None
            if estimate is not None:
                check.items.append(estimate)
            check.matches = abs(needed.difference) <= TOLERANCE
            check.verdict = (f"KV bytes per sequence {'match' if check.matches else 'do not match'}: one "
                             f"{log.needed_len:,}-token sequence needs {needed.predicted} GiB, {needed.logged} GiB "
                             f"logged ({needed.difference:+.1%}); the budget itself is not predicted (no card: give "
                             "--gpu)")
            if (log.pp or 1) > 1 and pp_checks_whole_model(version):
                check.verdict += (f"; vLLM {version} counts every pipeline stage's layers in this check, though each "
                                  "GPU holds only its own (0.14-0.16; from 0.17.0 each stage is checked on its own "
                                  "layers)")
        return check
    if log.total_gib:  # the budget's base is the total the run saw
        card = card._replace(memory_reported_bytes=int(log.total_gib * GIB))
    inputs = _inputs(log, spec, card, version)
    if weights_from_log:
        if log.weights_gib:
            inputs = inputs._replace(weights_per_gpu=int(log.weights_gib * GIB))
            said.append(f"weights: the log's {log.weights_gib} GiB per GPU (--weights-from-log); {spec.id} gives the "
                        "shapes")
        else:
            said.append("--weights-from-log: the log states no weights ('Model loading took'): the checkpoint's used")
    for name, value in (("max_num_seqs", log.max_num_seqs), ("max_num_batched_tokens", log.max_num_batched_tokens),
                        ("gpu_memory_utilization", log.gpu_memory_utilization)):
        if value is None:
            said.append(f"{name} not in the log: vLLM {version}'s default {getattr(inputs, name)} assumed")
    if log.sampler is None and profile_for(version).sampler_native_bytes_per_logit is not None:
        kind = resolve_sampler(version)
        said.append(f"sampler not in the log: {SAMPLER_NAMES[kind]} assumed, vLLM {version}'s default "
                    "(give --sampler flashinfer or native)")
    try:
        result = size(spec, card, inputs)
    except InputError as e:  # the run as logged is not one this model and card can be sized for
        said.append(e.line())
        check.verdict = f"no prediction: {e.line()}"
        return check
    check.predicted = predicted_figures(result, consumed_line=log.consumed_gib is not None)
    logged = log.figures()
    for name, cause in CAUSES.items():
        got, want = logged.get(name), check.predicted.get(name)
        if got is None or want is None or (got == 0 and name != "available_kv_gib"):
            continue
        if name == "weights_gib" and inputs.weights_per_gpu:  # taken from the log: nothing to compare
            continue
        base = abs(got)
        if name == "available_kv_gib" and got <= 0.05 * result.usable_bytes / GIB:
            # a failed or nearly failed start: the error is the budget's parts against the budget itself
            base = result.usable_bytes / GIB
        check.items.append(Item(name, got, want, (want - got) / base, cause))
    per_token = _tokens_at_logged_memory(log, spec, version, inputs)
    if per_token is not None:  # separates the per-token arithmetic from the budget
        check.items.append(per_token)
    estimate = _estimated_len_at_logged_memory(log, spec, version)
    if estimate is not None:  # a failed start's own estimate, from its own logged memory
        check.items.append(estimate)
    headline = next((i for i in check.items if i.name == "kv_tokens"), None) or next(
        (i for i in check.items if i.name in ("available_kv_gib", "kv_needed_gib")), None)
    if headline is None:
        check.verdict = "nothing to compare: the log states no KV figure"
    else:
        check.matches = abs(headline.difference) <= TOLERANCE
        off = max((i for i in check.items if i is not headline and i.name != "available_kv_gib"),
                  key=lambda i: abs(i.difference) * max(abs(i.logged), 0.01), default=None)
        check.verdict = (f"{headline.name} {'within' if check.matches else 'off by more than'} {TOLERANCE * 100:.0f} %: "
                         f"predicted {headline.predicted:,} against {headline.logged:,} logged "
                         f"({headline.difference:+.1%})")
        if not check.matches and off is not None and abs(off.difference) > TOLERANCE:
            check.verdict += f"; the largest part off is {off.name} ({off.difference:+.1%}): {off.cause}"
    check.advice = advice(spec, card, inputs, result, log, concurrency)
    return check


def advice(spec: ModelSpec, gpu: GpuSpec, inputs: SizeInputs, r: SizeResult, log: StartupLog,
           concurrency: int | None) -> list[str]:
    """What to change to hold `concurrency` sequences at the logged max_model_len (one, when the start failed)."""
    target = concurrency or (1 if log.failed else None)
    if target is None:
        return [f"at max_model_len {inputs.context_tokens:,} this run holds about {r.max_concurrency:.1f} sequences; "
                "give --concurrency N for what to change to hold N"]
    ctx = inputs.context_tokens
    need = target * r.sequence_kv_bytes(ctx)
    pool = r.kv_pool_bytes
    if pool >= need:
        return [f"{target} sequence(s) at {ctx:,} tokens fit: {r.max_concurrency:.1f} would"]
    out = []
    gmu = (need + r.weights.per_gpu + r.activation.peak + r.reserve.total) / gpu.memory_reported_bytes
    if gmu <= 0.95:
        out.append(f"--gpu-memory-utilization {gmu + 0.005:.2f} holds {target} sequence(s) at {ctx:,} tokens")
    per_token = r.kv.bytes_per_token(ctx)
    if pool > 0 and per_token:
        fits = int(pool // per_token // target) // 16 * 16
        if fits >= 16:
            out.append(f"--max-model-len {fits:,} holds {target} sequence(s) at this utilization")
    if inputs.max_num_seqs and inputs.max_num_seqs > target:
        pinned = size(spec, gpu, inputs._replace(max_num_seqs=target))
        freed = r.activation.peak - pinned.activation.peak
        if freed > 0.01 * GIB:
            out.append(f"--max-num-seqs {target} frees {freed / GIB:.2f} GiB of the sampler warm-up "
                       f"({pinned.max_concurrency:.1f} sequences at {ctx:,} tokens)")
    if resolve_sampler(inputs.vllm_version, inputs.sampler) == "native":
        quick = size(spec, gpu, inputs._replace(sampler="flashinfer"))
        freed = r.activation.peak - quick.activation.peak
        if freed > 0.01 * GIB:
            # before 0.11.1 pip has no FlashInfer (an extra); from it, FlashInfer is installed and its sampler opt-in
            how = ("VLLM_USE_FLASHINFER_SAMPLER=1" if flashinfer_installed(inputs.vllm_version)
                   else f"installing FlashInfer (pip install 'vllm[flashinfer]=={inputs.vllm_version}')")
            out.append(f"{how} frees {freed / GIB:.2f} GiB of the sampler warm-up: FlashInfer's sampler does not "
                       f"sort the vocabulary ({quick.max_concurrency:.1f} sequences at {ctx:,} tokens)")
    try:
        wider = size(spec, gpu, inputs._replace(tp=inputs.tp * 2))
        out.append(f"--tensor-parallel-size {inputs.tp * 2} holds {wider.max_concurrency:.1f} sequences at {ctx:,} tokens "
                   f"(twice the GPUs)")
    except InputError:
        pass
    return out or [f"{target} sequence(s) at {ctx:,} tokens need a larger card or a shorter context"]


def check_json(c: LogCheck) -> dict[str, Any]:
    """The public JSON object of `check-log --json`."""
    keys = ("kv_tokens", "available_kv_gib", "weights_gib", "consumed_gib", "activation_peak_gib", "non_torch_gib",
            "cuda_graph_gib", "max_concurrency", "kv_needed_gib", "total_gib")
    logged = c.log.figures()
    return {
        "file": c.path,
        "vllm_version": c.vllm_version,
        "version_from": c.version_from,
        "model": c.model,
        "model_from": c.model_from,
        "gpu": c.gpu,
        "gpu_from": c.gpu_from,
        "flags": c.flags,
        "logged": {k: logged.get(k) for k in keys},
        "predicted": {k: c.predicted.get(k) for k in keys} if c.predicted else None,
        "items": [{"name": i.name, "logged": i.logged, "predicted": i.predicted, "difference": round(i.difference, 4),
                   "cause": i.cause} for i in c.items],
        "verdict": c.verdict,
        "matches": c.matches,
        "notes": c.said,
        "advice": c.advice,
    }
