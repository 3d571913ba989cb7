"""Does it fit? weights + KV(concurrency × context) + activations + reserve ≤ GPU memory × utilization (DOMAIN §2).

Per GPU of a TP × PP layout, against the memory the driver reports (not the marketed size), with vLLM's
budget rule for the KV capacity: pool = reported × utilization − weights − activation peak − non-torch memory,
capacity = pool / KV bytes per token, rounded down to whole blocks (sizing-notes "vLLM's budget rule").
"""


from functools import lru_cache
from typing import NamedTuple

from wizard.errors import InputError
from wizard.sizing.activations import ActivationPeak, activation_peak
from wizard.sizing.engine import BLOCK_SIZE, GIB, unserved_reason
from wizard.sizing.engines import (
    DEFAULT_VLLM_VERSION,
    SAMPLERS,
    cuda_graphs_budgeted,
    mxfp4_moe_padding,
    pp_checks_whole_model,
    profile_for,
    resolve_kv_dtype,
    resolve_sampler,
)
from wizard.sizing.headroom import headroom
from wizard.sizing.kv_cache import KvShape, kv_stages
from wizard.sizing.kv_report import LoggedKv, logged_pool
from wizard.sizing.layout import check_layout, stage_layers
from wizard.sizing.params import ParamCount, count_params
from wizard.sizing.precision import KV_DTYPES, WEIGHT_PRECISIONS, WeightFormat, precision_problem, weight_format
from wizard.sizing.reserve import Reserve, framework_reserve
from wizard.sizing.weights import WeightBytes, expert_padding_bytes, weight_bytes
from wizard.specs import GpuSpec, ModelSpec


class SizeInputs(NamedTuple):
    """What a sizing question fixes (units: tokens, sequences, fraction of memory)."""

    tp: int = 1
    pp: int = 1
    context_tokens: int = 8192
    concurrency: int = 1
    weight_precision: str = "auto"
    kv_cache_dtype: str = "auto"
    gpu_memory_utilization: float = 0.90
    max_num_batched_tokens: int | None = None  # None: the engine default for this GPU
    max_num_seqs: int | None = None  # None: the concurrency (the starter repo pins --max-num-seqs to it)
    enforce_eager: bool = False  # no CUDA graphs, so no graph pool in the budget
    # The vLLM release that runs: its generation's budget rules and defaults (engines.py, data/vllm-engines.json).
    vllm_version: str = DEFAULT_VLLM_VERSION
    # The top-k/top-p sampler the profile warms up: "auto" = the release's default (FlashInfer's from 0.21.0:
    # engines.resolve_sampler), "flashinfer", or "native" (PyTorch's, which sorts the vocabulary).
    sampler: str = "auto"
    # MXFP4 MoE through Marlin (its padded experts): None = the release's rule, True/False = what a start-up log says
    fp4_marlin: bool | None = None
    # The planner's typical sequence: KV held on average by one sequence (prompt + half the output), in tokens.
    # None: every sequence holds the whole context (the `size` command, and the guide's conservative bound).
    # Given: one sequence at the full context (room for a P99-length request) and the rest at this length.
    sequence_tokens: int | None = None
    # Bytes of weights vLLM loaded on the first GPU, as its start-up log states them ("Model loading took"): a
    # checkpoint the catalog cannot size (a fine-tune, an unlisted quantization) keeps its architecture's shapes
    # and the log's weights; the other stages scale with it. None: computed from the checkpoint.
    weights_per_gpu: int | None = None
    # V0's --num-scheduler-steps (multi-step scheduling, vLLM 0.6.0 until V0's removal; PR #7000, #8378): the scheduler
    # runs once per block of this many steps and takes new prompts only in a block's first step. 1: every step.
    scheduler_steps: int = 1


class SizeResult(NamedTuple):
    """Everything `size` reports, per GPU, in bytes and tokens."""

    model: ModelSpec
    gpu: GpuSpec
    inputs: SizeInputs
    params: ParamCount
    weights: WeightBytes
    kv: KvShape
    kv_cache_bytes: int  # concurrency sequences of context tokens (or of sequence_tokens, one at the context)
    activation: ActivationPeak
    reserve: Reserve
    usable_bytes: int
    kv_capacity_tokens: int
    notes: tuple[str, ...] = ()  # caveats of this sizing (model caveats first), shown with every figure
    # Where the release checks one max_model_len request against more than this GPU's own layers (PP on 0.14-0.16:
    # every stage's KV against the smallest worker's pool, engines.pp_checks_whole_model): (bytes it needs, bytes
    # it is checked against). None where each worker is checked on its own layers.
    startup_check: tuple[int, int] | None = None
    # vLLM's layout of the pool (kv_report.py; None where it is not modelled: V0, mixed head sizes): blocks, groups,
    # what a request of a given length takes, what it logs
    kv_layout: LoggedKv | None = None

    @property
    def total_bytes(self) -> int:
        return self.weights.per_gpu + self.kv_cache_bytes + self.activation.peak + self.reserve.total

    @property
    def kv_pool_bytes(self) -> int:
        """What vLLM's budget leaves for the KV cache on this GPU: usable − weights − activation peak − reserve
        ("Available KV cache memory"; negative when not even that fits)."""
        return self.usable_bytes - self.weights.per_gpu - self.activation.peak - self.reserve.total

    @property
    def headroom_bytes(self) -> int:
        return self.usable_bytes - self.total_bytes

    @property
    def logged_kv_tokens(self) -> int | None:
        """What vLLM logs as "GPU KV cache size": blocks // groups × block size before 0.21 — for a model of several
        layer kinds not what its pool holds for requests — and max concurrency × max_model_len from 0.21."""
        return self.kv_layout.tokens if self.kv_layout is not None else None

    @property
    def kv_blocks(self) -> LoggedKv | None:
        """vLLM's layout where the sizing counts its blocks: models with layers of several kinds."""
        return self.kv_layout if self.kv_layout is not None and self.kv_layout.groups > 1 else None

    def sequence_kv_bytes(self, length: int) -> int:
        """KV bytes one sequence of `length` tokens takes on the sized GPU: vLLM's whole blocks in every layer group
        (several kinds of layers), else its bytes per token over whole 16-token blocks."""
        return sequence_bytes(self.kv_blocks, self.kv, length)

    @property
    def refused_at_startup(self) -> bool:
        """vLLM refuses to start this layout ("KV cache is needed") though every stage could hold its own share."""
        return self.startup_check is not None and self.startup_check[0] > self.startup_check[1]

    @property
    def fits(self) -> bool:
        return self.headroom_bytes >= 0 and not self.refused_at_startup

    @property
    def kv_bytes_per_token(self) -> int:
        return self.kv.bytes_per_token(self.inputs.context_tokens)

    @property
    def max_concurrency(self) -> float:
        return self.kv_capacity_tokens / self.inputs.context_tokens

    @property
    def gpus(self) -> int:
        return self.inputs.tp * self.inputs.pp


def validate_inputs(i: SizeInputs) -> None:
    """Reject out-of-range inputs by name before any arithmetic."""
    if i.weight_precision not in WEIGHT_PRECISIONS:
        raise InputError("weight_precision", i.weight_precision, "accepted: " + ", ".join(WEIGHT_PRECISIONS))
    if i.kv_cache_dtype not in KV_DTYPES:
        raise InputError("kv_cache_dtype", i.kv_cache_dtype, "accepted: " + ", ".join(KV_DTYPES))
    if not 0.05 <= i.gpu_memory_utilization <= 1.0:
        raise InputError("gpu_memory_utilization", i.gpu_memory_utilization, "expected a fraction in [0.05, 1.0]")
    for name in ("context_tokens", "concurrency"):
        value = getattr(i, name)
        if value < 1:
            raise InputError(name, value, "expected an integer >= 1")
    profile_for(i.vllm_version)  # an unknown release is refused by name
    if i.sampler not in SAMPLERS:
        raise InputError("sampler", i.sampler, "accepted: " + ", ".join(SAMPLERS))
    for name in ("max_num_batched_tokens", "max_num_seqs", "sequence_tokens"):
        value = getattr(i, name)
        if value is not None and value < 1:
            raise InputError(name, value, "expected an integer >= 1")


def check_engine_limits(model: ModelSpec, inputs: SizeInputs) -> None:
    """What vLLM itself refuses: a context beyond the model's, a precision the checkpoint cannot load at."""
    if inputs.context_tokens > model.max_position_embeddings:
        raise InputError(
            "context_tokens", inputs.context_tokens,
            f"{model.id} allows at most {model.max_position_embeddings:,} tokens (max_position_embeddings): vLLM "
            "refuses a longer max_model_len unless rope scaling is configured and VLLM_ALLOW_LONG_MAX_MODEL_LEN=1",
        )
    problem = precision_problem(model, inputs.weight_precision)
    if problem:
        raise InputError("weight_precision", inputs.weight_precision, problem)


def padding_notes(weights: WeightBytes, inputs: SizeInputs, multiples: tuple[int, int] | None) -> tuple[str, ...]:
    """The zeros a kernel's layout adds to the weights, when any (engines.mxfp4_moe_padding)."""
    if not weights.padding or multiples is None:
        return ()
    return (f"vLLM {inputs.vllm_version} runs these MXFP4 experts through Marlin, which allocates them padded "
            f"(intermediate per GPU to a multiple of {multiples[0]}, hidden to {multiples[1]}): "
            f"+ {weights.padding / GIB:.2f} GiB per GPU",)


def sampler_notes(act: ActivationPeak, inputs: SizeInputs) -> tuple[str, ...]:
    """Which top-k/top-p sampler the warm-up was sized for, where the release's profile tells them apart."""
    engine = profile_for(inputs.vllm_version)
    if engine.sampler_native_bytes_per_logit is None:
        return ()
    kind = resolve_sampler(inputs.vllm_version, inputs.sampler)
    how = "given" if inputs.sampler != "auto" else "the release's default"
    return (f"sampler warm-up sized for {'FlashInfer' if kind == 'flashinfer' else 'PyTorch'}'s top-k/top-p ({how}): "
            f"{act.bytes_per_logit} B per logit",)


# vLLM's FP8 weights need compute capability 8.9 (FP8 tensor cores) or 8.0 (Ampere: weight-only FP8 through the
# Marlin kernel); Turing (T4, 7.5) and Volta run none (vLLM's quantization hardware table: "fp8 (W8A8)" and
# "Marlin (GPTQ/AWQ/FP8)" from SM 8.0).
FP8_MIN_COMPUTE = (8, 0)
# NVFP4 runs from compute capability 7.5: FP4 tensor cores on Blackwell, else weight-only Marlin W4A16 (vLLM
# modelopt.py @ v0.33.0 ModelOptNvFp4Config / MixedPrecision get_min_capability 75, marlin_utils_fp4.py); CUDA only.
NVFP4_MIN_COMPUTE = (7, 5)


def check_card_precision(gpu: GpuSpec, fmt: WeightFormat) -> None:
    """InputError for weights the card cannot run: FP8 below compute capability 8.0."""
    cc = gpu.compute_capability
    if fmt.name == "fp8" and cc is not None and tuple(int(x) for x in cc.split(".")) < FP8_MIN_COMPUTE:
        why = (f"{gpu.id} (compute capability {cc}) runs no FP8 weights in vLLM (8.0 or newer: weight-only Marlin on "
               "Ampere, FP8 tensor cores from 8.9)")
        if fmt.from_checkpoint:  # the checkpoint itself is FP8: only another card or another checkpoint serves it
            raise InputError("gpu", gpu.id, why + ": the checkpoint is FP8 — choose a card of 8.0 or newer, or a "
                             "16-bit or int4/int8 checkpoint of the model")
        raise InputError("weight_precision", "fp8", why + ": use bf16/fp16 weights, an int4/int8 checkpoint, or another card")
    if fmt.name == "nvfp4" and (cc is None or tuple(int(x) for x in cc.split(".")) < NVFP4_MIN_COMPUTE):
        where = f"compute capability {cc}" if cc else f"a {gpu.vendor} card"
        raise InputError("gpu", gpu.id, f"{gpu.id} ({where}) runs no NVFP4 weights in vLLM (NVIDIA compute capability "
                         "7.5 or newer): choose such a card, or a 16-bit, FP8 or int4 checkpoint of the model")


def size_notes(model: ModelSpec, gpu: GpuSpec, inputs: SizeInputs, fmt: WeightFormat) -> tuple[str, ...]:
    """Caveats a reviewer needs beside the numbers (each names its rule)."""
    notes = list(model.notes)
    unserved = unserved_reason(model.architecture, inputs.vllm_version)
    if unserved:
        notes.append(unserved + ". The wizard cannot plan it; these figures are memory arithmetic only")
    params = count_params(model)
    if params.exact and params.computed_total and abs(params.total - params.computed_total) > 0.02 * params.computed_total:
        notes.append(f"{params.source} hold {params.total:,} parameters, the config arithmetic {params.computed_total:,} "
                     f"({(params.total - params.computed_total) / params.computed_total:+.1%}): the exact count is used")
    if fmt.bits < 16 and not fmt.from_checkpoint and fmt.name in ("int4", "int8"):
        notes.append(f"{fmt.name} needs a checkpoint quantized to it (AWQ/GPTQ, w8a8) or bitsandbytes in-flight "
                     f"quantization; sized as {'AWQ/GPTQ group 128' if fmt.name == 'int4' else 'per-channel int8'}")
    if fmt.name == "nvfp4" and not gpu.fp4_support:
        notes.append(f"{gpu.id} has no FP4 tensor cores: vLLM runs the NVFP4 weights weight-only (Marlin W4A16: "
                     "4.5 bits a weight in memory, 16-bit compute)")
    if fmt.name == "fp8" and not gpu.fp8_support:
        notes.append(f"{gpu.id} has no FP8 tensor cores: vLLM runs FP8 weights weight-only (Marlin, Ampere or newer)")
    if (model.quant is not None and model.quant.kv_cache_fp8 and inputs.kv_cache_dtype == "auto"
            and resolve_kv_dtype(inputs.vllm_version, model, gpu)[0] == "auto"):
        notes.append("the checkpoint ships FP8 KV-cache scales: --kv-cache-dtype fp8 halves the KV cache")
    if not (gpu.bf16_flops or gpu.fp8_flops):
        notes.append(f"the catalog has no dense FLOPS figure for {gpu.id}: compute-bound estimates assume 100 TFLOPS")
    if inputs.sampler != "auto" and profile_for(inputs.vllm_version).sampler_native_bytes_per_logit is None:
        notes.append(f"--sampler {inputs.sampler} changes nothing on vLLM {inputs.vllm_version}: its profile has one "
                     "sampler figure for both")
    if inputs.gpu_memory_utilization >= 0.95:
        notes.append(f"gpu_memory_utilization {inputs.gpu_memory_utilization} leaves almost no headroom: "
                     "'computing at 100 % — a sure OOM' (guide §2)")
    return tuple(notes)


def encoder_notes(act: ActivationPeak, model: ModelSpec) -> tuple[str, ...]:
    """The image encoder's share of the start-up profile, for towers the core can size (gemma-3's SigLIP)."""
    v = model.vision_encoder
    if not act.encoder_items or v is None:
        return ()
    return (f"image encoder profile (vLLM V1, activations.py): {act.encoder_items} dummy images × "
            f"{act.encoder // act.encoder_items / 2**20:.1f} MiB ({v.patches_per_item:,} patches, hidden "
            f"{v.hidden_size:,}, MLP {v.intermediate_size:,}, from {v.source}) = {act.encoder / GIB:.2f} GiB at its "
            f"peak, then {act.encoder_outputs / GIB:.2f} GiB of their embeddings held through the text pass; the "
            "activation figure is the larger of the two phases. Serving text only? --limit-mm-per-prompt "
            "'{\"image\": 0}' skips it",)


def rope_cache_bytes(m: ModelSpec) -> int:
    """vLLM's RoPE cos/sin cache: max_position_embeddings × rotary dim elements in the model dtype (2 bytes), one
    per GPU, shared by every layer (rotary_embedding/base.py @ v0.33.0 L57-103: `register_buffer("cos_sin_cache")`
    of arange(max_position) × inv_freq, cos and sin concatenated). Llama-3.1-8B: 131,072 × 128 × 2 = 32 MiB, the
    difference between its checkpoint (14.957 GiB) and the 14.9888 GiB vLLM 0.6 logs as loaded. Scaled variants
    (YaRN, linear) hold more positions; not modelled."""
    rotary = m.mla.qk_rope_head_dim if m.mla is not None else m.head_dim
    return m.max_position_embeddings * rotary * 2


def headroom_notes(gpu: GpuSpec, inputs: SizeInputs, graphs: bool) -> tuple[str, ...]:
    """A warning when what vLLM allocates after the KV pool does not fit the headroom the utilization leaves
    (`graphs`: whether this release budgets the graph pool for this model)."""
    engine = profile_for(inputs.vllm_version)
    h = headroom(gpu.memory_reported_bytes, inputs.gpu_memory_utilization, inputs.tp * inputs.pp,
                 graphs, inputs.enforce_eager, engine.budget_counts_device, gpu.nvlink)
    if h.fits:
        return ()
    parts = [f"{b / GIB:.2f} GiB {name}" for name, b in (("of CUDA graphs the budget does not hold", h.graphs),
             ("of CUDA context and communicators held before the profile", h.at_snapshot)) if b]
    return (f"headroom: vLLM {inputs.vllm_version} allocates {' and '.join(parts)} outside the KV budget, but "
            f"gpu_memory_utilization {inputs.gpu_memory_utilization} leaves {h.available / GIB:.2f} GiB of "
            f"{gpu.id}: expect an out-of-memory error after the KV cache is allocated — use at most "
            f"{h.max_utilization:.2f}",)


def sequence_bytes(blocked: LoggedKv | None, stage: KvShape, length: int) -> int:
    """KV bytes one sequence of `length` tokens takes on a GPU of `stage`: vLLM's blocks in every layer group where
    its layout is counted in blocks (several kinds of layers), else the stage's bytes over whole 16-token blocks."""
    return blocked.bytes_for(length) if blocked is not None else stage.allocated_bytes(length)


def layout_notes(blocked: LoggedKv | None, inputs: SizeInputs) -> tuple[str, ...]:
    """How the KV of a model with layers of several kinds was counted: in vLLM's blocks (kv_report.py)."""
    if blocked is None:
        return ()
    ctx = inputs.context_tokens
    parts = f"{blocked.blocks_for(ctx)} blocks a {ctx:,}-token request"
    if inputs.sequence_tokens is not None and inputs.sequence_tokens < ctx:
        parts += f", {blocked.blocks_for(inputs.sequence_tokens)} a {inputs.sequence_tokens:,}-token one"
    state = (f"; a linear-attention state takes {blocked.state_blocks} block(s) in each of its groups"
             if "linear" in blocked.group_kinds else "")
    return (f"KV counted as vLLM {inputs.vllm_version} allocates it: layers in {blocked.groups} groups by kind, "
            f"{blocked.block_size:,}-token blocks of {blocked.block_bytes:,} B on a GPU ({parts}){state}",)


def startup_check_notes(check: tuple[int, int] | None, stages: tuple[KvShape, ...], inputs: SizeInputs) -> tuple[str, ...]:
    """What a release that checks the whole model's KV under PP (0.14-0.16) makes of this layout."""
    if check is None:
        return ()
    need, pool = check
    ctx = inputs.context_tokens
    head = (f"vLLM {inputs.vllm_version} checks at start-up that one {ctx:,}-token request's KV cache of all "
            f"{inputs.pp} stages ({need / GIB:.2f} GiB, as its layer groups count it) fits the smallest stage's KV "
            f"memory ({pool / GIB:.2f} GiB), though each GPU holds only its own stage's layers (releases 0.14-0.16; "
            "fixed in 0.17.0)")
    if need <= pool:
        return (head + ": this layout passes",)
    per_token = sum(st.bytes_per_token(ctx) for st in stages)
    longest = max(0, pool) // per_token // BLOCK_SIZE * BLOCK_SIZE if per_token else 0
    return (head + ": it refuses this layout ('KV cache is needed') — run vLLM 0.17.0 or later"
            + (f", or --max-model-len {longest:,} or less" if longest >= BLOCK_SIZE else "")
            + ", or give each stage more memory",)


@lru_cache(maxsize=4096)
def size(model: ModelSpec, gpu: GpuSpec, inputs: SizeInputs) -> SizeResult:
    """Size one layout of one model on one GPU type. Raises InputError for inputs or layouts an engine rejects.

    A pure function of its (immutable) arguments, remembered: the layout search asks for the same layout again as
    it probes batches, and a sizing it already did is not done twice."""
    validate_inputs(inputs)
    check_engine_limits(model, inputs)
    fmt = weight_format(model, inputs.weight_precision)
    check_card_precision(gpu, fmt)
    aligned = fmt.from_checkpoint and fmt.name in ("int4", "int8", "fp8")
    check_layout(model, inputs.tp, inputs.pp, fmt.name, fmt.group_size if aligned else None, fmt.block if aligned else None)
    params = count_params(model)
    weights = weight_bytes(model, inputs.weight_precision, inputs.tp, inputs.pp)
    # The RoPE cos/sin cache is a buffer every GPU builds at load (counted in vLLM's "Model loading took"), not a
    # checkpoint tensor: it joins the weights per GPU, not the download.
    rope = rope_cache_bytes(model)
    weights = weights._replace(per_stage=tuple(s + rope for s in weights.per_stage), per_gpu=weights.per_gpu + rope,
                               buffers=rope)
    # MXFP4 experts some releases allocate padded to their kernel's tiles (engines.mxfp4_moe_padding): zeros the
    # checkpoint does not hold, counted in "Model loading took" and read at every step.
    multiples = mxfp4_moe_padding(inputs.vllm_version, gpu, inputs.fp4_marlin) if fmt.name == "mxfp4" else None
    pad = (0,) * inputs.pp
    if multiples is not None:
        pad = expert_padding_bytes(model, inputs.weight_precision, inputs.tp, inputs.pp, multiples)
        per_stage = tuple(s + p for s, p in zip(weights.per_stage, pad))
        weights = weights._replace(per_stage=per_stage, per_gpu=max(per_stage))
    if inputs.weights_per_gpu:  # the log's figure holds the buffers and any padding already
        scale = inputs.weights_per_gpu / weights.per_stage[0]
        per_stage = tuple(int(s * scale) for s in weights.per_stage)
        weights = weights._replace(per_stage=per_stage, per_gpu=max(per_stage))
        pad, multiples = (0,) * inputs.pp, None
    engine = profile_for(inputs.vllm_version)
    batched = inputs.max_num_batched_tokens or engine.default_batch(gpu, inputs.context_tokens, model,
                                                                    inputs.vllm_version)[0]
    seqs = min(inputs.max_num_seqs or inputs.concurrency, batched)  # vLLM caps max_num_seqs at the token budget
    act = activation_peak(model, inputs.tp, batched, seqs, engine, inputs.context_tokens,
                          resolve_sampler(inputs.vllm_version, inputs.sampler))
    graphs = cuda_graphs_budgeted(inputs.vllm_version, model.architecture, model.moe is None and model.linear is None)
    reserve = framework_reserve(inputs.tp, inputs.pp, engine, gpu.nvlink, cuda_graphs=graphs and not inputs.enforce_eager)
    usable = int(gpu.memory_reported_bytes * inputs.gpu_memory_utilization)
    ctx = inputs.context_tokens
    # A sliding-window layer's per-request budget holds the window and the in-flight prefill tokens; V0 kept
    # every layer at the full context (engines.py in_flight_batches).
    in_flight = engine.in_flight_batches(inputs.pp)
    kv_dtype, kv_why = resolve_kv_dtype(inputs.vllm_version, model, gpu, inputs.kv_cache_dtype)
    stages = kv_stages(model, kv_dtype, inputs.tp, inputs.pp, batched * in_flight or None)
    if not in_flight:
        stages = tuple(st._replace(window=None, chunk=None) for st in stages)
    # Per PP stage: its weights, its KV pool, its capacity. vLLM keeps the smallest block count across stages;
    # the stage with the least room is the GPU that runs out first, and the one reported.
    pools = [usable - weights.per_stage[s] - act.peak - reserve.total for s in range(inputs.pp)]
    capacities = [
        max(0, pool) // stage.bytes_per_token(ctx) // BLOCK_SIZE * BLOCK_SIZE if stage.bytes_per_token(ctx) else 0
        for pool, stage in zip(pools, stages)
    ]
    # vLLM's own layout of the pools (one page size, layers grouped by kind, the smallest block count of all GPUs):
    # its maximum concurrency is the sequences it admits at this context
    logged = logged_pool(model.layer_kinds, stages, stage_layers(model.num_layers, inputs.pp), pools, ctx, engine,
                         inputs.vllm_version)
    # Layers of several kinds take what vLLM allocates them: whole blocks of the shared page in every group, a linear
    # state's aligned blocks, the padding layers; one kind is its bytes per token over whole blocks.
    blocked = logged if logged is not None and logged.groups > 1 else None

    def held(stage) -> int:  # the KV the concurrency's sequences hold on one stage, in bytes
        if inputs.sequence_tokens is None:
            return sequence_bytes(blocked, stage, ctx) * inputs.concurrency
        typical = min(inputs.sequence_tokens, ctx)
        return sequence_bytes(blocked, stage, ctx) + sequence_bytes(blocked, stage, typical) * (inputs.concurrency - 1)

    load = [weights.per_stage[s] + held(stages[s]) for s in range(inputs.pp)]
    # the GPU that runs out first: vLLM's fewest blocks where its layout counts them, else the least capacity
    heaviest = blocked.stage if blocked is not None else min(range(inputs.pp), key=lambda s: (capacities[s], -load[s]))
    kv = stages[heaviest]
    weights = weights._replace(per_gpu=weights.per_stage[heaviest], padding=pad[heaviest])
    capacity = min(capacities)
    if logged is not None:
        capacity = int(logged.concurrency * ctx)
    kv_bytes = held(kv)
    check = None
    if inputs.pp > 1 and pp_checks_whole_model(inputs.vllm_version):
        whole = logged.first_group_bytes if logged is not None else sum(st.allocated_bytes(ctx) for st in stages)
        check = (whole, min(pools))
    return SizeResult(
        model=model,
        gpu=gpu,
        inputs=inputs,
        params=params,
        weights=weights,
        kv=kv,
        kv_cache_bytes=kv_bytes,
        activation=act,
        reserve=reserve,
        usable_bytes=usable,
        kv_capacity_tokens=capacity,
        notes=size_notes(model, gpu, inputs, fmt) + ((kv_why,) if kv_why else ()) + encoder_notes(act, model)
        + headroom_notes(gpu, inputs, graphs)
        + padding_notes(weights, inputs, multiples) + sampler_notes(act, inputs) + startup_check_notes(check, stages, inputs)
        + layout_notes(blocked, inputs),
        startup_check=check,
        kv_layout=logged,
    )
