"""Latency and throughput of one replica under load, as benchmarks measure it (§5, §9 Q3).

One engine step of a replica with B sequences in flight carries B decode tokens and, when a prompt is waiting,
a prefill chunk of up to (max_num_batched_tokens − B) prompt tokens (chunked prefill). Its time overlaps memory
and compute (a roofline: below the ridge point decode FLOPs are nearly free):
    max(memory:  (active weights read once + every sequence's KV) / (bandwidth × EFF_BANDWIDTH[card class]),
        compute: (2 × active params + attention) × tokens / (peak FLOPS × EFF_FLOPS))
  + TP all-reduce: 2 per layer of tokens × hidden × 2 bytes over the interconnect (§3–4)
  + STEP_OVERHEAD (scheduler, sampling, kernel launches)
MoE reads only the experts the batch touches: E × (1 − (1 − k/E)^B) per layer. PP: a token crosses every stage
in turn; the batch is split into PP micro-batches that keep the stages busy; a prompt chunk passes the stages one
after another, so PP does not cut a single request's TTFT (§3).

The load (load model): requests arrive at λ per second — closed loop (a benchmark's --max-concurrency B, the
planner's peak concurrency): λ = B / request time; open loop (--request-rate R, Poisson): λ = R and B = λ ×
request time (Little's law), at most the sequences the engine holds (max_num_seqs, the KV cache): beyond them it
runs full and the rest wait (a benchmark of N prompts: in its queue, their waits in TTFT — but those whose prompts the
KV pool still has room for are admitted at once and preempted later, their waits in TPOT, their prompts queued as
they arrive at the run's rate). A share of the steps carries prefill chunks (λ × prompt / chunk steps per second);
those are longer, so
    TPOT mean = the average step a request decodes through — it shares steps with the others' prompt chunks only
    (closed loop: the other B − 1 clients' share of the arrivals); TPOT P99 = mean + 2.33 σ of that average over
    its output steps;
    TTFT mean = front end + half the running step + the prompt's chunks + queueing for the chunk budget (M/D/1 at
    the share of that budget the arrivals take: a step takes every waiting prompt its budget holds);
    TTFT P99 = front end + a whole running step + the chunks + the M/D/1 99th-percentile wait.
A prompt whose KV the engine already holds (the prefix cache: Workload.cached_prompt_tokens) is prefilled from
its last cached block on; its KV still counts whole.
A benchmark's closed loop starts with all B requests at once: that burst waits for B prompts' chunks in turn and
weighs B / prompts in its mean TTFT (Workload.prompts; the planner's steady state has none). When every request has
the same lengths (Workload.synchronized: vllm bench serve's random dataset, range ratio 0, --ignore-eos) the
requests that got their first token in the same step also finish together, so later waves arrive as the first
one's steps left them (the scheduler replay below follows that); where the replay does not answer, the closed form
takes every wave as such a burst, its bound from above. Its output over the whole run: the first B prompts
are one run sent at once (benchmark_run), each later request holds a slot the closed loop's request time, and
identical requests end in a last, smaller wave. V0's multi-step scheduling (--num-scheduler-steps n)
takes new prompts only at the start of a block of n steps: a new request waits out half a block on average (a whole
one at P99); with chunked prefill a prompt's chunks are one a block and its first token comes with the block's end;
the prefill ceiling is a chunk per block. A benchmark of N open-loop prompts (Workload.prompts) never reaches the
steady state: its queue starts empty, the k-th of prompts sent faster than the prefill ceiling waits k (1 / ceiling −
1 / rate), a request shares the engine with the run's mean in flight (its ramp and drain, not Little's law), and its
TPOT and its output over the whole run — which ends with its last request, with varied outputs (ShareGPT) most
likely a long one — follow the run step by step as it fills and drains (benchmark_run); past the engine's slots it
runs full and the rest queue (expected_last_finish).
A benchmark run of identical requests (fixed lengths) is no steady state either: in a closed loop, which prompts
share a step decides how its waves stagger (a burst of prompts that fit one step returns as a burst; prompts of
several chunks each return a prompt's chunks apart); one that overruns the engine — more in flight than its KV pool
holds at their full length, or than max_num_seqs — also has which requests are admitted when, which are preempted
and how much they recompute decide its TTFT, TPOT and duration. On V1's scheduler (one PP stage, no
linear-attention layers) a closed loop of identical requests (or of any fixed lengths when every prompt is sent at
once, or when it overruns the engine), an open loop that overruns the engine, and identical requests whose clients
join past the prefill ceiling (capped_load) are replayed step by step on this step model (scheduler_replay.py; below
those loads an open loop keeps its Poisson queueing, which the replay's evenly spaced arrivals would leave out); the
closed forms above answer elsewhere (varied outputs, V0, PP, linear-attention models). The replay
counts a request's KV in blocks of its own footprint at its full length, so a sliding-window model's (whose
windowed layers stop growing) is taken as growing evenly.
Poisson arrivals capped at B in flight (--request-rate with --max-concurrency, the starter repo's bench/run.sh) join
one by one: at a rate the closed loop of B keeps up with, the cap binds and the engine runs that closed loop without
its opening burst; below it, the open loop.

Efficiencies are fitted by `python benchmarks/throughput.py --fit` on the rows marked fit: true of
tests/data/throughput-bench.yaml and tests/data/throughput-dev.yaml, and reported on the rest.
"""

import bisect
import json
import math
import random
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

from wizard.sizing.benchmark_run import fluid_run, run_in_flight, run_wait
from wizard.sizing.engine import BLOCK_SIZE
from wizard.sizing.engines import profile_for, release, reserves_whole_sequence
from wizard.sizing.fit import SizeResult
from wizard.sizing.precision import WeightFormat
from wizard.sizing.scheduler_replay import Replay, replay
from wizard.sizing.tensors import LINEAR_W, inventory
from wizard.sizing.weights import tensor_bytes
from wizard.specs import FULL, LINEAR, SLIDING, GpuSpec, ModelSpec

# Fitted by `python benchmarks/throughput.py --fit` (each on the rows that isolate it; that script prints the rows):
EFF_BANDWIDTH = 0.75  # achieved / peak HBM bandwidth in decode: tp-023 (Llama-3.1-8B, one H100, concurrency 1 and 4)
EFF_BANDWIDTH_GDDR = 0.8  # achieved / peak GDDR bandwidth in decode: the GDDR fit rows of throughput-bench.yaml
#                          (RTX 3090, 4090, 5090)
# The same on AMD HBM cards (Instinct, ROCm builds): their one fit sweep without an entry of its own (gpt-oss-120b on
# one MI300X, vLLM 0.17.0, 64 and 256 clients). Its two rows err in opposite directions, so the fit's score is flat
# from 0.27 to 0.35: the grid's first on a tie, from the HBM default down, is 0.35. The held-out MI300X rows of other
# ROCm builds (a Dec 2024 build's Llama-3.1-70B at TP 2 and 8, a 2026 image's Qwen3-8B) decode at 0.2–0.55 of peak,
# all below the HBM default; the MI325X and MI355X have no rows and take the class's figure.
EFF_BANDWIDTH_ROCM = 0.35
STEP_OVERHEAD_S = 0.0  # per-step scheduling/sampling beyond the roofline: tp-023 finds none to add
EFF_FLOPS = 0.265  # achieved / peak dense FLOPS in prompt-carrying steps on HBM (datacenter) cards: the HBM bench fit
#                  rows and the prefill-bound rows tp-015..017 (Qwen3-32B, one H100, 2,000–32,000-token prompts)
EFF_FLOPS_GDDR = 0.6  # the same on GDDR (consumer, workstation) cards: the one-card GDDR fit rows of
#                      throughput-bench.yaml the load model does not saturate
FRONTEND_S = 0.005  # API server per request (tokenisation, detokenisation, HTTP) where no release entry names one: the
#                    fit rows with a mean TTFT at it — 0.8.5 on one H100 PCIe and one RTX 4090, and a Mistral-7B sweep
#                    on one RTX 4090 of no stated release
# The three fitted together (benchmarks/throughput.py prefill_stage): a row's mean TTFT is its front end plus its
# prefill, and a release's front end is told apart from the prefill across the cards that ran it.
# Releases and model families measured to run otherwise (0.11.0's 50 ms front end, DeepSeek MLA on the 0.7 V0 engine):
# data/vllm-speed.json; 0.33 has no benchmark in the data and runs at these defaults
ALLREDUCE_LATENCY_S = 10e-6  # per NCCL all-reduce of a small message over NVLink (not calibrated)
# Per all-reduce between cards with PCIe peer-to-peer and no NVLink: fitted on the TP fit rows of such cards
# (throughput-bench.yaml s40, the one such sweep: an FP8-dynamic Llama-3.1-70B at TP 2 on two H100 PCIe Gen5, 0.8.5,
# one and 16 requests a second, on TPOT) — 2.5× the twice-NVLink figure it replaces. Its rows quantize activations to
# FP8 per token in every layer, a cost this figure may carry too. Other PCIe cards (L40S, L4, A100 PCIe: Gen4) and
# TP above 2 are extrapolated: vLLM's custom all-reduce serves at most two PCIe-only GPUs, beyond that NCCL's rings,
# whose latency grows with TP, which this flat figure does not follow.
ALLREDUCE_LATENCY_PCIE_S = 50e-6
# Per all-reduce on cards without PCIe peer-to-peer (GeForce RTX 4090/5090), where NCCL stages it through host
# memory: this × log2 TP, a form chosen empirically (the TP 2/4/8 rows at one request a second imply about 27, 27
# and 19 µs per level, where NCCL's rings would grow with TP − 1; the TP 8 fit row stays about 40 % above it).
# Fitted on the TP fit rows of such cards at one request a second (throughput-bench.yaml s22-s28, decode-bound)
ALLREDUCE_LATENCY_HOST_S = 60e-6
# Bytes/s an all-reduce moves through host memory on such cards (the ring's 2 (TP − 1) / TP of the tokens' hidden
# states): fitted on their TP fit rows above one request a second (their steps carry more sequences, and prompt
# chunks where the prompts are not cached)
ALLREDUCE_HOST_BYTES_S = 4e9
NETWORK_BYTES_S = 50e9  # 400 Gb/s InfiniBand/RoCE per GPU between nodes (PP hand-offs), not calibrated
Z99 = 2.326  # the normal 99th percentile
MAX_UTILIZATION = 0.98  # the prefill budget's utilization is capped here: beyond it the queue grows without bound


SPEED_FILE = Path(__file__).parent / "data" / "vllm-speed.json"


class Speed(NamedTuple):
    """The constants one sizing runs at: the defaults above, or a release's (data/vllm-speed.json)."""

    step_overhead_s: float
    frontend_s: float
    eff_flops: float | None  # None: the card's memory technology's (EFF_FLOPS, EFF_FLOPS_GDDR)
    profile: str  # the entry's id, or "default"
    eff_bandwidth: float | None = None  # None: the card class's (EFF_BANDWIDTH, _GDDR, _ROCM)


@lru_cache(maxsize=1)
def _speed_entries() -> tuple[dict, ...]:
    return tuple(json.loads(SPEED_FILE.read_text(encoding="utf-8"))["entries"])


@lru_cache(maxsize=64)
def speed_for(version: str, architecture: str, vendor: str = "nvidia") -> Speed:
    """The speed constants of this vLLM release for this architecture on this vendor's cards: the first entry of
    data/vllm-speed.json whose release range (and architectures and vendors, where it names some) holds it, else
    the module's defaults."""
    r = release(version)
    for e in _speed_entries():
        if release(e["from"]) <= r < release(e["until"]) and (not e.get("architectures") or architecture in e["architectures"]) and (
                not e.get("vendors") or vendor in e["vendors"]):
            return Speed(e.get("step_overhead_s", STEP_OVERHEAD_S), e.get("frontend_s", FRONTEND_S),
                         e.get("eff_flops"), e["id"], e.get("eff_bandwidth"))
    return Speed(STEP_OVERHEAD_S, FRONTEND_S, None, "default")


class Workload(NamedTuple):
    """The load one replica carries: sequences in flight (may be fractional, a time average) and lengths (tokens).

    `rate` (requests/s, open loop) replaces the concurrency when given; `prompts` is a benchmark's request count
    (its closed loop starts with a burst of `concurrency` requests)."""

    concurrency: float
    prompt_tokens: int
    output_tokens: int
    rate: float | None = None
    prompts: int | None = None
    clients: float | None = None  # closed loop: requests kept in flight by the clients, when above `concurrency`
    # Closed loop of identical requests (a random dataset at range ratio 0 with --ignore-eos, as the starter repo's
    # bench/run.sh sends): those that started together finish together, so later waves keep the first one's shape
    # (replayed where the scheduler replay answers; else every wave taken as the opening burst, its prompts' chunks
    # in turn).
    synchronized: bool = False
    # Poisson arrivals at `rate` with at most `concurrency` in flight (vllm bench serve --request-rate with
    # --max-concurrency): the requests beyond wait in the client, outside TTFT (see `capped_load`).
    capped: bool = False
    # A benchmark whose output lengths vary as a conversation dataset's do (ShareGPT): the longest output in the run
    # sets when it ends, short ones live in the crowd (benchmark_run.fluid_run; past the engine's slots,
    # `expected_last_finish`); the lengths are taken as exponential with mean output_tokens (an assumption:
    # coefficient of variation 1, not fitted) up to this many tokens (the sampler's cap). None: every request has
    # output_tokens.
    varied_output_max: int | None = None
    # Prompt tokens whose KV the engine already holds (vLLM's prefix cache: the same prompt served before and still in
    # the pool): they are not prefilled, only the rest. vLLM caches whole blocks and computes at least a prompt's last
    # token (V1 KVCacheManager.get_computed_blocks), so at most the prompt's full blocks before its last token.
    cached_prompt_tokens: int = 0


class Performance(NamedTuple):
    """One replica at that load. Times in ms, throughput in output tokens per second."""

    ttft_ms: float
    tpot_ms: float
    output_tokens_per_s: float
    decode_memory_ms: float  # reading weights and KV per step
    compute_ms: float  # GEMMs and attention of the step's tokens
    comm_ms: float  # TP all-reduces and PP hand-offs
    prefill_tokens_per_step: float
    ttft_p99_ms: float = 0.0
    tpot_p99_ms: float = 0.0
    concurrency: float = 0.0  # sequences in flight (open loop: from Little's law; a replayed run: see _replayed)
    prefill_share: float = 0.0  # share of steps that carry a prefill chunk
    # a queue, not the steps, sets TTFT: prompts arrive at (or beyond) the prefill ceiling, or a run overran the
    # engine's slots or KV blocks (requests waited for room, or were preempted)
    saturated: bool = False


UNKNOWN_FLOPS = 1e14  # cards the catalog has no dense figure for (kept out of `gpu: auto`; a note says so)


def flops_per_gpu(gpu: GpuSpec, fmt: WeightFormat) -> float:
    """Dense peak FLOP/s for the deployed format: FP8 tensor cores for fp8 weights where present, else bf16."""
    base = gpu.bf16_flops or (gpu.fp8_flops or 0) / 2 or UNKNOWN_FLOPS
    if fmt.name == "fp8" and gpu.fp8_flops:
        return gpu.fp8_flops
    return base


@lru_cache(maxsize=64)
def _expert_share(m: ModelSpec, fmt: WeightFormat) -> float:
    """Share of weight bytes that sit in routed experts (read only when a token routes there)."""
    tensors = inventory(m)
    total = sum(tensor_bytes(t, fmt, m) for t in tensors)
    experts = sum(tensor_bytes(t, fmt, m) for t in tensors if t.role == LINEAR_W and t.copies > 1)
    return experts / total if total else 0.0


def weights_read_per_step(r: SizeResult, tokens: float) -> float:
    """Bytes of weights one step reads per GPU: everything dense, and for MoE the experts the batch touches."""
    m = r.model
    read = r.weights.per_gpu - r.weights.buffers  # the RoPE cache is indexed, not streamed
    if m.moe is None:
        return read
    share = _expert_share(m, r.weights.format)
    e, k = m.moe.num_experts, m.moe.experts_per_token
    touched = 1 - (1 - k / e) ** max(tokens, 1)
    return read * (1 - share + share * touched)


def attention_flops_per_token(m: ModelSpec, context: float) -> float:
    """QK^T and PV over the cached context: 4 × heads × head_dim × attended tokens per layer."""
    if m.mla is not None:
        width = m.num_attention_heads * (m.mla.kv_lora_rank + m.mla.qk_rope_head_dim)  # absorbed MLA in decode
    else:
        width = m.num_attention_heads * m.head_dim
    full = m.layer_kinds.count(FULL)
    sliding = m.layer_kinds.count(SLIDING)
    window = min(context, m.sliding_window or context)
    return 4 * width * (full * context + sliding * window)


def step_time(r: SizeResult, decodes: float, prefill: float, avg_context: float) -> tuple[float, float, float]:
    """(memory s, compute s, communication s) of one step with `decodes` + `prefill` tokens, per PP stage."""
    g, i, m = r.gpu, r.inputs, r.model
    tokens = decodes + prefill
    # Decode reads what a sequence holds in steady state: sliding layers only their window (not the engine's
    # per-request budget, which covers a prefill chunk).
    kv_read = decodes * r.kv._replace(batched_tokens=None).bytes_per_sequence(max(1, int(avg_context)))
    speed = speed_for(i.vllm_version, m.architecture, g.vendor)
    memory = (weights_read_per_step(r, tokens) + kv_read) / (g.mem_bw_bytes_s * bandwidth_efficiency(g, speed))
    active = r.params.active / (i.tp * i.pp)
    attn = attention_flops_per_token(m, avg_context) / (i.tp * i.pp)
    prefill_attn = attention_flops_per_token(m, avg_context / 2) / (i.tp * i.pp)  # causal: half on average
    flops = (2 * active + attn) * decodes + (2 * active + prefill_attn) * prefill
    compute = flops / (flops_per_gpu(g, r.weights.format) * flops_efficiency(g, speed))
    comm = 0.0
    if i.tp > 1:
        link = g.interconnect_bytes_s or 32e9
        latency = ALLREDUCE_LATENCY_S if g.nvlink else ALLREDUCE_LATENCY_PCIE_S
        if allreduce_through_host(g):
            # no peer-to-peer: each all-reduce goes through host memory (vLLM's custom all-reduce is off)
            latency, link = ALLREDUCE_LATENCY_HOST_S * math.log2(i.tp), ALLREDUCE_HOST_BYTES_S
        if i.tp > g.gpus_per_node:  # TP across nodes: every all-reduce also crosses the network (§4): the slower path
            link, latency = min(link, NETWORK_BYTES_S), max(latency, ALLREDUCE_LATENCY_S * 5)
        per_layer = 2 * (latency + 2 * (i.tp - 1) / i.tp * tokens * m.hidden_size * 2 / link)
        comm = per_layer * m.num_layers / i.pp
    return memory, compute, comm


def pp_hand_off_bytes(hidden_size: int) -> int:
    """Bytes one token hands to the next PP stage: the hidden states and the residual, 16-bit each (vLLM's
    IntermediateTensors {"hidden_states", "residual"}, models/llama.py @ v0.33.0 L444-448)."""
    return 2 * hidden_size * 2


def pp_hand_off_s(r: SizeResult, micro: float) -> float:
    """Seconds a step spends handing `micro` sequences' tokens from each PP stage to the next (none at PP 1)."""
    pp = r.inputs.pp
    return (pp - 1) * micro * pp_hand_off_bytes(r.model.hidden_size) / NETWORK_BYTES_S if pp > 1 else 0.0


def md1_wait_p99(u: float, service: float) -> float:
    """99th percentile of the wait in an M/D/1 queue (Poisson arrivals, a deterministic service `service` s, load u):
    P(W > t) ≈ u·e^(−θt), θ the positive root of λ(e^(θS) − 1) = θ (the Cramér–Lundberg exponent of M/G/1 with
    deterministic service), so t99 = ln(100 u) / θ. Prefill times are near-deterministic: the M/M/1 tail (exponential
    service) would overstate them several-fold."""
    if u <= 0.01 or service <= 0:
        return 0.0
    # x = θS solves u (e^x − 1) = x with x > 0; bisection (the left side is convex, the root is unique)
    lo, hi = 1e-9, 1.0
    while u * math.expm1(hi) < hi:
        hi *= 2
    for _ in range(48):
        mid = (lo + hi) / 2
        if u * math.expm1(mid) < mid:
            lo = mid
        else:
            hi = mid
    return max(0.0, math.log(100 * u) * service / hi)


def allreduce_through_host(g: GpuSpec) -> bool:
    """Cards with neither NVLink nor PCIe peer-to-peer (GeForce RTX 4090/5090): NCCL stages a TP all-reduce through
    host memory."""
    return not g.nvlink and not g.pcie_p2p


def is_gddr(g: GpuSpec) -> bool:
    """A GDDR card (consumer, workstation): its own efficiency class."""
    return g.memory_type.upper().startswith("GDDR")


def bandwidth_class(g: GpuSpec) -> str:
    """The card class decode bandwidth is calibrated per: GDDR cards (consumer, workstation, any vendor), AMD cards
    of other memory (the Instinct HBM parts, ROCm builds), and every other card — NVIDIA's HBM parts, and the LPDDR
    and Gaudi parts the data has no rows of, at the HBM default."""
    return "gddr" if is_gddr(g) else "rocm" if g.vendor.lower() == "amd" else "hbm"


def bandwidth_efficiency(g: GpuSpec, speed: Speed | None = None) -> float:
    """Achieved share of peak memory bandwidth in decode: a release's or model family's entry where it names one,
    else the card class's."""
    if speed is not None and speed.eff_bandwidth is not None:
        return speed.eff_bandwidth
    return {"gddr": EFF_BANDWIDTH_GDDR, "rocm": EFF_BANDWIDTH_ROCM, "hbm": EFF_BANDWIDTH}[bandwidth_class(g)]


def flops_efficiency(g: GpuSpec, speed: Speed) -> float:
    """Achieved share of peak dense FLOPS in prompt-carrying steps: a release's entry where it names one, else by
    memory technology (the card class: HBM datacenter parts, GDDR consumer and workstation parts)."""
    if speed.eff_flops is not None:
        return speed.eff_flops
    return EFF_FLOPS_GDDR if is_gddr(g) else EFF_FLOPS


def _affine_stage(r: SizeResult, decodes: float, chunk: float, avg_context: float
                  ) -> tuple[Callable[[float], float], tuple[float, float, float]]:
    """One PP stage's step (s) with `decodes` decodes and p prompt tokens, 0 ≤ p ≤ chunk, and its (memory,
    compute, communication) s at p = 0. The three are affine in p (exactly for dense models; MoE's touched experts
    grow slower than linearly, so this is the safe side): two evaluations give every p."""
    m0, c0, k0 = step_time(r, decodes, 0.0, avg_context)
    m1, c1, k1 = step_time(r, decodes, chunk, avg_context)
    overhead = speed_for(r.inputs.vllm_version, r.model.architecture, r.gpu.vendor).step_overhead_s

    def at(prefill: float) -> float:
        x = prefill / chunk
        return max(m0 + (m1 - m0) * x, c0 + (c1 - c0) * x) + (k0 + (k1 - k0) * x) + overhead

    return at, (m0, c0, k0)


def _stage(r: SizeResult, decodes: float, prefill: float, avg_context: float) -> tuple[float, float, float, float]:
    """(step s, memory s, compute s, communication s) of one PP stage: memory and compute overlap."""
    mem, comp, comm = step_time(r, decodes, prefill, avg_context)
    return max(mem, comp) + comm + speed_for(r.inputs.vllm_version, r.model.architecture, r.gpu.vendor).step_overhead_s, mem, comp, comm


@lru_cache(maxsize=8192)
def performance(r: SizeResult, w: Workload) -> Performance:
    """TTFT and TPOT (mean and P99) and output tokens/s of one replica of `r`'s layout under load `w`.

    A pure function of immutable arguments, remembered: the layout search asks the same batch again across its
    rounds (the Little's-law average, the fp8 option)."""
    if w.capped and w.rate is not None:
        return capped_load(r, w)
    prompt, out = w.prompt_tokens, max(1, w.output_tokens)
    budget = r.activation.tokens  # max_num_batched_tokens: decodes first, prompt chunks fill the rest
    avg_context = prompt + out / 2
    b = max(1.0, w.concurrency)
    if w.rate is None and w.prompts:
        b = min(b, float(w.prompts))  # a closed loop of N prompts has at most N in flight
    slots = engine_slots(r, prompt, out)
    if w.rate is None and _replayable(r, w) and (
            w.synchronized or _run_clients(w) >= (w.prompts or 1) or _run_clients(w) > _held_whole(r, w)):
        # a closed loop of identical requests (which prompts share a step decides how its waves stagger), one wave
        # (every prompt sent at once), or a run past what the engine holds whole (admission, preemption and recompute
        # decide it)
        return _replayed(r, w, _under_load(r, w, b, prompt, out, budget, avg_context))
    # an open loop of N prompts (a benchmark) never has more than N in flight, whatever Little's law asks
    cap = min(slots, float(w.prompts)) if w.rate is not None and w.prompts else slots
    state, peak, seen = None, 0.0, 1.0
    for _ in range(8):  # closed loop: fixed b; open loop: b from Little's law at the request time just computed
        state = _under_load(r, w, b, prompt, out, budget, avg_context, seen)
        run_b, run_seen = b, seen  # what `state` was computed at
        if w.rate is None:
            break
        want, peak, seen_now = state.b, state.b, 1.0
        if w.prompts:  # a benchmark of N prompts: its ramp and drain, not the steady state
            # prompts start at most at the prefill ceiling; one waiting behind those holds no KV yet
            want, peak, seen_now = run_in_flight(min(w.rate, state.ceiling), w.prompts,
                                                 state.ttft - state.backlog + out * state.tpot)
        if abs(min(cap, want) - b) < 0.01 * b and abs(seen_now - seen) < 0.01:
            break
        b, seen = max(1.0, min(cap, want)), seen_now
    assert state is not None
    if w.rate is not None and w.prompts:
        state = state._replace(b=b)  # the run's mean in flight, not the steady state's
    if w.rate is not None and peak > _held_whole(r, w) and _replayable(r, w):
        # an open-loop run whose requests in flight outgrow what the engine holds whole: as the scheduler runs it
        return _replayed(r, w, state)
    if w.rate is not None and peak > slots * 1.01:
        # it runs full, the rest queue
        state = _overloaded(r, w, state, slots, prompt, out, budget, avg_context, run_b, run_seen)
    in_engine = state.in_engine(out)  # s a request holds one of the b slots
    throughput = state.b * out / in_engine
    if w.rate is not None and w.prompts and peak <= slots * 1.01:
        # A benchmark of N prompts the engine holds: its ramp, plateau and drain (benchmark_run), each request's
        # TPOT at the steps it decodes through; its output over the whole run (vllm bench serve: total output
        # tokens / duration), which ends with its last request. Prompts beyond the prefill ceiling start at it.
        # (the prompts' backlog is in the later start of the prompts prefilled at the ceiling)
        shape = fluid_run(w.prompts, min(w.rate, state.ceiling), state.ttft - state.admit - state.backlog, out,
                          w.varied_output_max, _decode_steps(r, w.prompts, avg_context), state.prefill_extra)
        noise = state.tpot99 - state.tpot  # the prompt chunks' spread over a request's steps
        state = state._replace(tpot=shape.tpot, tpot99=max(shape.tpot_p99, shape.tpot + noise))
        throughput = w.prompts * out / shape.end
    elif w.rate is not None and w.prompts:
        # A benchmark of N prompts past the engine's slots (the engine runs full, the rest queue: _overloaded),
        # reported over the whole run (vllm bench serve: total output tokens / duration): the last request starts
        # when it arrives, (N − 1) / rate after the first, or when the requests before it have left it a slot —
        # N − 1 of them served at b per in-engine time (with varied outputs, N − slots from the moment the engine is
        # full) — and ends its in-engine time later, or with the longest output of the run.
        starts = (w.prompts - 1) / w.rate
        if state.saturated:  # past the slots: the last starts when N − 1 (varied outputs: N − slots) have ended
            full = slots if w.varied_output_max is not None else 1.0  # requests in before the first can end
            starts = max(starts, (full - 1) / w.rate + (w.prompts - full) * in_engine / state.b)
        end = starts + in_engine
        if w.varied_output_max is not None and w.prompts > 1:
            # the run lasts until its last request ends, most likely a long one: decoding at the loaded step while
            # the run is busy (its arrivals and their mean request time), then nearly alone as the batch drains
            alone = performance(r, Workload(1, prompt, out)).tpot_ms / 1000
            # from its start in the engine (`starts`): its TTFT and TPOT without the waits before that start
            end = max(end, expected_last_finish(w.prompts, starts, state.ttft - state.admit,
                                                state.tpot - state.stalled / out, alone, end, out,
                                                w.varied_output_max))
        throughput = w.prompts * out / end
    elif w.rate is None and w.prompts:
        # A closed-loop benchmark of N prompts through b clients (b ≤ N), reported over the whole run too. Its
        # first min(N, b) prompts go at once: an open loop at the prefill ceiling (prefilled one chunk after another,
        # each first token a prompt's own time later, a chunk in every step — every block's first under multi-step —
        # until the last): benchmark_run. Each later request takes a slot as one ends and holds it the closed loop's
        # request time: N − b more at b per request time; identical requests (synchronized) end in a last wave of the
        # N mod b left, a run of its own. The run so grows with N from its first wave on.
        first = min(w.prompts, max(1, round(b)))
        steps_per_block = max(1, r.inputs.scheduler_steps)
        shape = fluid_run(first, state.ceiling, state.first_token, out,
                          None if w.synchronized else w.varied_output_max,
                          _decode_steps(r, first, avg_context), state.chunk_extra / steps_per_block)
        later = w.prompts - first
        if w.synchronized and later:
            waves, left = divmod(later, first)
            end = shape.end + waves * in_engine
            if left:
                tail = performance(r, w._replace(concurrency=float(left), prompts=left, clients=None))
                end += left * out / tail.output_tokens_per_s
        else:
            end = shape.end + later / b * in_engine
        tpot = (first * shape.tpot + later * state.tpot) / w.prompts  # the first wave's, the later requests' own
        state = state._replace(tpot=tpot, tpot99=max(shape.tpot_p99, tpot + state.tpot99 - state.tpot))
        throughput = w.prompts * out / end
    return Performance(
        ttft_ms=state.ttft * 1000,
        tpot_ms=state.tpot * 1000,
        output_tokens_per_s=throughput,
        decode_memory_ms=state.mem * 1000,
        compute_ms=state.comp * 1000,
        comm_ms=state.comm * 1000,
        prefill_tokens_per_step=state.f * state.mix_tokens,
        ttft_p99_ms=state.ttft99 * 1000,
        tpot_p99_ms=state.tpot99 * 1000,
        concurrency=state.b,
        prefill_share=state.f,
        saturated=state.saturated,
    )


def _replayable(r: SizeResult, w: Workload) -> bool:
    """A benchmark run the scheduler replay follows: N identical requests (varied outputs are not: their prompts
    vary too, which the workload does not describe), one PP stage and one scheduler step a block, on a release
    with V1's scheduler (chunked prefill, prefix caching on: not for models with linear-attention or Mamba layers,
    whose prefix caching 0.16 turns off and 0.10 runs on V0), and a KV pool that holds one whole request (vLLM
    refuses to start below that)."""
    i = r.inputs
    return (bool(w.prompts) and w.varied_output_max is None and i.pp == 1
            and i.scheduler_steps <= 1 and profile_for(i.vllm_version).runner != "v0"
            and LINEAR not in r.model.layer_kinds
            and r.kv_pool_bytes >= r.sequence_kv_bytes(w.prompt_tokens + max(1, w.output_tokens)))


def kv_requests(r: SizeResult, tokens: float) -> float:
    """Sequences of `tokens` tokens the KV pool holds (whole blocks; a sliding window or a linear layer's state
    counted as the engine budgets them)."""
    per_sequence = r.sequence_kv_bytes(max(1, round(tokens)))
    return r.kv_pool_bytes / per_sequence if per_sequence else math.inf


def _held_whole(r: SizeResult, w: Workload) -> float:
    """Requests the engine holds to their last token at once: max_num_seqs, and what the KV pool holds of
    requests at their full length (prompt + output)."""
    return min(max_num_seqs(r), kv_requests(r, w.prompt_tokens + max(1, w.output_tokens)))


def _run_clients(w: Workload) -> int:
    """A closed-loop run's clients: those that send (`clients`, else the engine's `concurrency`), at most its N
    prompts, whole (a fractional count — clients spread over replicas — is rounded up: its busiest replica)."""
    return int(min(w.prompts or 1, math.ceil(w.clients or w.concurrency)))


def _client_mix(w: Workload) -> list[tuple[float, int]]:
    """[(share of the replicas, whole clients on each)]: a fractional closed loop (clients spread over replicas, as
    check-bench spreads a run's --max-concurrency) is its replicas with the clients rounded down and, for the
    fraction, one more; at most its N prompts. (The clients are not pinned to replicas: the gateway sends each
    request to the least busy one, so over the run each replica carries the average.)"""
    want = min(float(w.prompts or 1), w.clients or w.concurrency)
    whole = int(want)
    extra = want - whole
    if abs(want - round(want)) < 1e-9 or whole < 1:  # a whole count (to float precision), or below one client
        return [(1.0, max(1, round(want)))]
    return [(1 - extra, whole), (extra, whole + 1)]


POISSON_RUNS = 16  # drawn arrival sequences a replay of Poisson arrivals averages (fixed seeds: the same figures)


def poisson_runs(rate: float, n: int, runs: int = POISSON_RUNS) -> list[list[float]]:
    """`runs` sequences of n arrival times (s) at `rate` a second, as vllm bench serve draws them (its default
    burstiness 1: vllm/benchmarks/serve.py get_request): each request's gap exponential, the first's too, summed,
    then scaled so that the last arrives at n / rate; each sequence from its own fixed seed."""
    out = []
    for seed in range(runs):
        draw, t, times = random.Random(seed), 0.0, []
        for _ in range(n):
            t += draw.expovariate(rate)
            times.append(t)
        scale = n / rate / times[-1]
        out.append([x * scale for x in times])
    return out


def _mean_of(results: Iterable[Performance]) -> Performance:
    """The mean of replays of one load on drawn arrivals, field by field; saturated if any was."""
    runs = list(results)
    fields = {name: sum(getattr(p, name) for p in runs) / len(runs) for name in Performance._fields
              if name != "saturated"}
    return Performance(**fields, saturated=any(p.saturated for p in runs))


def _replayed(r: SizeResult, w: Workload, state: "_Load", draws: Sequence[Sequence[float]] = ()) -> Performance:
    """A run of `w.prompts` identical requests replayed through V1's scheduler (scheduler_replay), on the step model
    of this layout: the pool in blocks of the requests' own footprint (a request of prompt + output tokens takes
    its whole blocks, whatever kinds of layers it has), the release's token budget, max_num_seqs and front end.
    A closed loop of fractional clients is replayed at the whole counts around it (_client_mix): output tokens/s
    weighted by the share of replicas that carry each, TTFT and TPOT means by the requests each serves (that share
    × its requests a second); its P99s are the larger of the two (at least the mix's: more than 1 % of all requests
    cannot lie above both). A closed loop's `concurrency` is what the engine holds of its clients: all of them where
    it holds them whole (a prefill-bound run may never have them all running at once), else the most it ran at
    once; a loop with arrivals (open, or clients joining at a rate), the most it ran at once. `draws`: sequences of
    drawn arrival times (s) in place of the rate's even spacing, one replay each, their figures averaged
    (_mean_of)."""
    prompt, out = w.prompt_tokens, max(1, w.output_tokens)
    length = prompt + out
    per_request = -(-length // BLOCK_SIZE)
    blocks = max(1, int(r.kv_pool_bytes * per_request // max(1, r.sequence_kv_bytes(length))))
    budget = r.activation.tokens
    avg_context = prompt + out / 2
    speed = speed_for(r.inputs.vllm_version, r.model.architecture, r.gpu.vendor)
    stages: dict[int, Callable[[float], float]] = {}  # by the step's decodes

    def step_s(decodes: int, prefill: int) -> float:
        if decodes not in stages:
            stages[decodes] = _affine_stage(r, decodes, budget, avg_context)[0]
        return stages[decodes](prefill)

    closed = w.rate is None or w.capped  # clients (joining at the rate when capped), else an open loop
    mix: list[tuple[float, int | None]] = list(_client_mix(w)) if closed else [(1.0, None)]
    held = _held_whole(r, w)

    def one(arrivals: Sequence[float] | None) -> Performance:
        runs = [(share, replay(step_s, blocks, budget, int(max_num_seqs(r)), prompt, out, w.prompts or 1,
                               clients=clients, rate=w.rate, frontend_s=speed.frontend_s,
                               cached_prompt=w.cached_prompt_tokens, block_tokens=BLOCK_SIZE,
                               reserve_whole=reserves_whole_sequence(r.inputs.vllm_version), arrivals=arrivals))
                for share, clients in mix]

        def mean(f: Callable[[Replay], float]) -> float:  # over the replicas
            return sum(share * f(run) for share, run in runs)

        served = [share / run.duration for share, run in runs]  # each kind's requests a second, in proportion

        def by_requests(f: Callable[[Replay], float]) -> float:
            return sum(q * f(run) for q, (_, run) in zip(served, runs, strict=True)) / sum(served)

        return Performance(
            ttft_ms=by_requests(lambda x: x.ttft) * 1000, tpot_ms=by_requests(lambda x: x.tpot) * 1000,
            output_tokens_per_s=mean(lambda x: (w.prompts or 1) * out / x.duration),
            decode_memory_ms=state.mem * 1000, compute_ms=state.comp * 1000, comm_ms=state.comm * 1000,
            prefill_tokens_per_step=mean(lambda x: x.prompt_steps * x.prompt_tokens_per_step),
            ttft_p99_ms=max(x.ttft_p99 for _, x in runs) * 1000, tpot_p99_ms=max(x.tpot_p99 for _, x in runs) * 1000,
            concurrency=sum(share * (min(c, max(x.peak, held)) if c is not None and w.rate is None else x.peak)
                            for (share, c), (_, x) in zip(mix, runs, strict=True)),
            prefill_share=mean(lambda x: x.prompt_steps),
            saturated=any(x.preemptions > 0 or x.waited > 0 for _, x in runs))  # it ran out of room: slots or blocks

    return _mean_of(one(a) for a in draws) if draws else one(None)


def expected_last_finish(n: int, span: float, ttft: float, tpot: float, tpot_alone: float, busy: float,
                         mean_out: float, cap: int, points: int = 160) -> float:
    """Expected end (s) of a run of n requests arriving evenly over `span` seconds, each taking `ttft` and then
    decoding its output — exponential about `mean_out` tokens, at most `cap` — at `tpot` s a token until `busy`
    s and at `tpot_alone` after: E[max_i finish_i] = x0 + the integral from x0 of P(some request ends after x),
    x0 = span + ttft (the last arrival's first token), by Simpson's rule on `points` (even) intervals up to where
    every request has ended but with a negligible probability."""
    assert points % 2 == 0 and n >= 1 and tpot > 0 and tpot_alone > 0
    if n == 1 or cap < 1:  # one request, or no room for output: no tail to integrate
        return span + ttft + max(0, min(mean_out, cap)) * tpot

    def p_done(x: float) -> float:  # P(every request has ended by x)
        log_p = 0.0
        # from the last arrival back: an earlier request has had at least as many tokens' time, so once one has
        # surely ended (its cap reached, or e^(−tokens/mean) below a double's precision) every earlier one has too
        for i in range(n - 1, -1, -1):
            t0 = i * span / (n - 1) + ttft
            if x <= t0:
                return 0.0
            edge = max(busy, t0)
            tokens = (x - t0) / tpot if x <= edge else max(0.0, busy - t0) / tpot + (x - edge) / tpot_alone
            if tokens <= 0:
                return 0.0
            if tokens >= cap or tokens > 40 * mean_out:
                break
            left = math.exp(-tokens / mean_out)
            if left >= 1.0:  # a few ulps past its start: it has surely not ended
                return 0.0
            log_p += math.log1p(-left)
        return math.exp(log_p)

    x0 = span + ttft
    # past x1 every request has ended but with probability < 1e-9: n × e^(−L/m) < 1e-9 at L = m (ln n + 21)
    x1 = x0 + min(cap, mean_out * (math.log(n) + 21)) * max(tpot, tpot_alone)
    h = (x1 - x0) / points
    total = sum((1 if k in (0, points) else 4 if k % 2 else 2) * (1 - p_done(x0 + k * h)) for k in range(points + 1))
    return x0 + total * h / 3


def capped_load(r: SizeResult, w: Workload) -> Performance:
    """Poisson arrivals at `w.rate` with at most `w.concurrency` (b) in flight; the client holds the rest, and their
    wait is not in TTFT. When the rate reaches mu, the requests a second the closed loop of b serves, the cap binds
    once the clients have joined — over (b − 1) / rate — and the engine runs that closed loop, each client's
    requests a request time (b / mu) apart; a run of N prompts ends when its last request, started at
    (min(N, b) − 1) / rate + (N − b) / mu, is done. The b prompts of the first cycle arrive at `rate` a second:
    beyond the prefill ceiling C they back up, the k-th waiting k (1 / C − 1 / rate). Varied requests then spread
    their phases: only the first cycle waits, b / N of the requests. Identical requests (`synchronized`) keep the
    phases the scheduler's steps gave them as they backed up — those completed in one step end in one step and come
    back together, each cycle — so a run of them past C is replayed (scheduler_replay: the clients joining at
    Poisson arrivals drawn from fixed seeds, the replays' figures averaged: poisson_runs); below C their phases are
    the arrivals', random, which the closed loop's queueing stands for. Below mu the cap seldom binds: the open loop
    at that rate, while Little's law keeps it within b."""
    assert w.rate is not None
    prompt, out = w.prompt_tokens, max(1, w.output_tokens)
    b, n = max(1.0, w.concurrency), w.prompts
    cached = w.cached_prompt_tokens
    closed = performance(r, Workload(b, prompt, w.output_tokens, clients=w.clients, cached_prompt_tokens=cached))
    mu = closed.output_tokens_per_s / out  # requests a second
    if w.rate < mu:
        opened = performance(r, Workload(1, prompt, w.output_tokens, rate=w.rate, prompts=n,
                                         varied_output_max=w.varied_output_max, cached_prompt_tokens=cached))
        if opened.concurrency <= b:
            return opened
    loaded = _under_load(r, Workload(b, prompt, w.output_tokens, cached_prompt_tokens=cached), b, prompt, out,
                         r.activation.tokens, prompt + out / 2)
    ceiling = loaded.ceiling
    if w.synchronized and n and w.rate >= ceiling and _replayable(r, w):
        # identical requests backed up past the ceiling: the steps set their phases from then on (the first cycle's
        # Poisson clusters too: they come back together every cycle) — replayed on drawn Poisson arrivals
        return _replayed(r, w, loaded, poisson_runs(w.rate, n))
    behind = max(0.0, 1 / ceiling - 1 / w.rate)
    share = min(1.0, b / n) if n else 0.0  # the first cycle's prompts
    ttft, ttft99 = closed.ttft_ms / 1000 + share * behind * (b + 1) / 2, closed.ttft_p99_ms / 1000
    if share > 0.01:  # the slowest 1 % of all requests are the backlog's slowest 0.01 / share
        ttft99 += behind * math.ceil((1 - 0.01 / share) * b - 1e-9)
    result = closed._replace(ttft_ms=ttft * 1000, ttft_p99_ms=ttft99 * 1000)
    if not n:
        return result
    last = max((n - 1) / w.rate, (min(n, b) - 1) / w.rate + max(0.0, n - b) / mu)
    return result._replace(output_tokens_per_s=n * out / (last + b / mu))


def engine_slots(r: SizeResult, prompt: int, out: int) -> float:
    """Sequences the engine runs at once: at most max_num_seqs (pinned, else the release's default for the card)
    and what the KV pool holds of sequences of prompt + half the output (a sliding window or a linear layer's state
    counted as the engine budgets them); requests beyond wait in its queue, not in the decode batch."""
    return min(max_num_seqs(r), max(1.0, kv_requests(r, prompt + out / 2)))


def max_num_seqs(r: SizeResult) -> float:
    """The engine's --max-num-seqs: pinned, else the release's default for the card."""
    i = r.inputs
    return float(i.max_num_seqs or profile_for(i.vllm_version).default_batch(r.gpu, i.context_tokens, r.model,
                                                                              i.vllm_version)[1])


def admitted_at_once(r: SizeResult, prompt: int) -> float:
    """Requests the engine takes in before its KV pool is out of room for their prompts: vLLM admits a waiting
    request when the free blocks hold its prompt (V1 KVCacheManager.allocate_slots; V0 BlockSpaceManager.can_allocate,
    less a 1 % watermark not counted here), and makes room for the outputs later by preempting (recompute), at most
    max_num_seqs."""
    return min(max_num_seqs(r), kv_requests(r, prompt))


def _overloaded(r: SizeResult, w: Workload, state: "_Load", slots: float, prompt: int, out: int, budget: int,
                avg_context: float, run_b: float, run_seen: float) -> "_Load":
    """An open loop with more requests in flight than the engine holds (engine_slots): it runs full and the rest
    wait in its queue. The running ones decode as a closed loop of `slots` clients does, each finished request
    replaced from the queue at once, serving mu = slots / (time a request holds a slot) requests a second.

    A benchmark of N prompts (Workload.prompts) arriving at rate > mu: request k starts when k − slots have
    finished, at about k / mu (the first finish after one request time, slots / mu), and arrived at k / rate, so it
    waits k × (1 / mu − 1 / rate) from k = slots + 1 on — in TTFT when it waits for admission, in TPOT when the pool
    had room for its prompt and it waits preempted (admitted_at_once); means over the N requests, P99s their 99th
    percentiles. With varied outputs (exponential, memoryless) the requests do not finish a request time after they
    start but from the moment the engine is full (at slots / rate), one every 1 / mu: request k (arrived at k / rate)
    starts decoding at slots / rate + (k − slots) / mu, a wait of (k − slots) (1 / mu − 1 / rate), and is admitted
    at slots / rate + (k − admitted) / mu, a wait of (k − admitted) / mu − (k − slots) / rate when positive (its TTFT
    share). The requests admitted as they arrive send their prompts at the run's rate, whatever the engine's
    turnover: they queue for the chunk budget as an open loop of just those prompts does (`state` is the open loop of
    the run at `run_b` in flight and `run_seen`), never less than the full engine's; the later ones, admitted as others
    end, take the full engine's; the run's TTFT P99 is taken as about the larger of the two groups', never below the
    mean. Without N (a steady open loop) the queue has no bound: the open loop's own figure stays, marked
    saturated."""
    full = _under_load(r, w._replace(rate=None, concurrency=slots, prompts=None), slots, prompt, out, budget,
                       avg_context)
    mu = slots / full.in_engine(out)
    n = w.prompts or 0
    assert w.rate is not None
    if n > slots and w.rate > mu:
        late = 1 / mu - 1 / w.rate
        # The first requests the pool has room for (their prompts) are admitted as they arrive and get their first
        # token; the engine then preempts for their outputs, so their wait is in their decode (TPOT), not their
        # TTFT. A request beyond them is admitted once k − admitted have finished, at (k − admitted + slots) / mu;
        # the rest of its wait (the k / mu above) is again in its decode.
        admitted = max(slots, admitted_at_once(r, prompt))
        k99, rate = math.ceil(0.99 * n), w.rate

        varied = w.varied_output_max is not None

        def ttft_wait(k: int) -> float:
            if k <= admitted:
                return 0.0
            if varied:
                return max(0.0, (k - admitted) / mu - (k - slots) / rate)
            return max(0.0, (k - admitted + slots) / mu - k / rate)

        def total_wait(k: int) -> float:
            return late * (k - slots if varied else k) if k > slots else 0.0

        first = sum(ttft_wait(k) for k in range(1, n + 1)) / n
        # each request's stall in its decode: rises to `admitted`, then falls (fixed lengths) or levels (varied)
        stalls = sorted(total_wait(k) - ttft_wait(k) for k in range(1, n + 1))
        rest = sum(stalls) / n
        tpot, tpot99 = full.tpot + rest / out, full.tpot99 + stalls[k99 - 1] / out
        n_admitted = min(n, math.floor(admitted))  # admitted as they arrive (k ≤ admitted)
        opened = state if n_admitted >= n else _under_load(r, w._replace(prompts=n_admitted), run_b, prompt, out,
                                                           budget, avg_context, run_seen)
        share = n_admitted / n
        ttft = share * max(opened.ttft, full.ttft) + (1 - share) * full.ttft + first
        # the run's 99th percentile, taken as about the larger of the two groups' (the admitted ones' P99; a later
        # request's at the run's 99th place in arrival order, exact when the later ones hold the slowest 1 %), and
        # never below the mean
        late99 = full.ttft99 + ttft_wait(k99) if k99 > n_admitted else 0.0
        ttft99 = max(opened.ttft99, full.ttft99, late99, ttft)
        # the prompt queue beyond the full engine's is spent holding a slot that the full engine's turnover (mu) does
        # not count: kept out of the slot time (in_engine) with the admission wait
        return full._replace(ttft=ttft, ttft99=ttft99, admit=full.admit + ttft - full.ttft,
                             tpot=tpot, tpot99=max(tpot99, tpot), stalled=rest, saturated=True)
    # without N the wait has no bound: the open loop's own figure stands, as a wait for a slot (the engine's time,
    # and so its output a second, is the closed loop's)
    ttft = max(state.ttft, full.ttft)
    return full._replace(ttft=ttft, ttft99=max(state.ttft99, full.ttft99), admit=full.admit + ttft - full.ttft,
                         saturated=True)


class _Load(NamedTuple):
    b: float
    ttft: float
    ttft99: float
    tpot: float
    tpot99: float
    f: float  # share of steps that carry prompt tokens
    mix_tokens: float  # prompt tokens such a step carries
    mem: float
    comp: float
    comm: float
    saturated: bool = False
    admit: float = 0.0  # s of TTFT outside the slot time: the wait for a slot (clients beyond b; past the slots, that
    #                     and the admitted prompts' queue beyond the full engine's)
    stalled: float = 0.0  # s a request spends preempted, in its decode (admitted beyond the slots), in tpot
    ceiling: float = math.inf  # requests/s the chunk budget prefills at most (the prefill ceiling)
    prefill_extra: float = 0.0  # s the prompt chunks add to a step on average (at the arrivals' rate)
    backlog: float = 0.0  # s a run's prompt waits on average behind those that came faster than the ceiling
    first_token: float = 0.0  # s from a prompt's arrival to its first token when nothing waits (front end, chunks)
    chunk_extra: float = 0.0  # s a full prompt chunk adds to a step

    def in_engine(self, out: int) -> float:
        """Seconds a request of `out` output tokens holds one of the engine's slots: its TTFT but the wait for a
        slot, and its decode steps but the time it spent preempted."""
        return self.ttft - self.admit + out * self.tpot - self.stalled


def _decode_steps(r: SizeResult, most: int, avg_context: float) -> Callable[[float], float]:
    """The whole decode step (all PP stages, s) as a function of the sequences decoding, 1 to `most`: the step model
    at powers of two, linear between (memory and compute are affine in the batch; their max is convex)."""
    i = r.inputs
    points = [1.0]
    while points[-1] < most:
        points.append(min(float(most), points[-1] * 2))

    def whole(b: float) -> float:
        return _stage(r, b / i.pp, 0.0, avg_context)[0] * i.pp + pp_hand_off_s(r, b / i.pp)

    values = [whole(b) for b in points]

    def at(b: float) -> float:
        if len(points) == 1:
            return values[0]
        j = min(max(bisect.bisect_left(points, b), 1), len(points) - 1)
        b1, b2 = points[j - 1], points[j]
        return values[j - 1] + (values[j] - values[j - 1]) * (b - b1) / (b2 - b1)

    return at


def _under_load(r: SizeResult, w: Workload, b: float, prompt: int, out: int, budget: int, avg_context: float,
                seen: float = 1.0) -> _Load:
    """The load model of the module docstring for `b` sequences in flight (one replica); an open loop's arrivals
    reach a share `seen` of a request's decode (1: a steady stream; less in a benchmark run's drain)."""
    i = r.inputs
    # Only a prompt's uncached tokens are prefilled: its length for the KV it holds (avg_context, the slots), these
    # for the steps that carry it (Workload.cached_prompt_tokens)
    prompt = max(1, prompt - w.cached_prompt_tokens)
    speed = speed_for(i.vllm_version, r.model.architecture, r.gpu.vendor)
    frontend = speed.frontend_s
    chunk = max(1.0, budget - b)  # prompt tokens a step can carry beside the decodes
    micro = b / i.pp  # PP keeps pp micro-batches in flight
    hand_off = pp_hand_off_s(r, micro)

    # every step the fixed point below needs, from a stage's step affine in its prompt tokens
    stage, (mem, comp, comm) = _affine_stage(r, micro, chunk, avg_context)

    def step(prefill: float) -> float:  # a whole step (all PP stages) with `prefill` prompt tokens beside the decodes
        return stage(prefill) * i.pp + hand_off

    s_dec = step(0.0)
    # Multi-step scheduling (V0's --num-scheduler-steps n): the scheduler runs once per block of n steps. With
    # chunked prefill a prompt's chunk joins a block's first step, the other n − 1 decode (PR #8378), and its first
    # token reaches the client with the block's last step (LLMEngine.step processes a block's outputs at its end);
    # without it (the budget holds the whole context) V0 runs a prompt as a step of its own, output at once.
    n = max(1, i.scheduler_steps)
    block_tail = (n - 1) * s_dec if budget < i.context_tokens else 0.0
    alone = min(chunk, float(prompt))  # one prompt's chunk
    # TTFT of one prompt alone: its chunks pass the stages one after another (PP does not cut it), one a block
    chunks = -(-prompt // int(chunk))
    service = chunks * (step(alone) + block_tail)
    request = frontend + service + out * s_dec
    # The prefill ceiling: with every step (every block's first step) carrying a full chunk, prompts are read at
    # chunk / (step + the block's decode steps) tokens per second; arrivals beyond it cannot be served, whatever the
    # queue (a closed loop then waits, an open loop is overloaded).
    block = step(chunk) + (n - 1) * s_dec  # a block whose first step carries a full chunk (n = 1: that step)
    lam_max = MAX_UTILIZATION * chunk / block / max(1, prompt)
    lam = min(lam_max, w.rate if w.rate is not None else b / request)
    # A request's own decode steps carry the prompts of the others only: in a closed loop each of the b clients
    # sends one request per cycle, so while one decodes the other b − 1 arrive at (b − 1) / b of the rate (one
    # client alone never shares a step); Poisson arrivals do not depend on who is decoding.
    others = seen if w.rate is not None else (b - 1) / b
    s_avg, f, tokens, s_mix, s_seen = s_dec, 0.0, alone, step(alone), s_dec
    # a benchmark's N open-loop prompts arrive over (N − 1) / rate: its queue starts empty (benchmark_run.run_wait)
    window = (w.prompts - 1) / w.rate if w.rate and w.prompts else math.inf
    run_share = run_wait(min(MAX_UTILIZATION, lam * prompt * block / chunk), service, window) \
        if window < math.inf else (1.0, 1.0)
    # ... and when they arrive faster than the prefill ceiling, the k-th waits k (1 / ceiling − 1 / rate) more
    behind = max(0.0, 1 / lam_max - 1 / w.rate) if window < math.inf and w.rate else 0.0
    backlog = behind * (w.prompts - 1) / 2 if w.prompts and behind else 0.0
    for _ in range(80):
        # a prefill step carries the prompt tokens that arrived during a step (a block of n steps under multi-step
        # scheduling), at least one prompt's chunk
        tokens = min(chunk, max(alone, lam * prompt * n * s_avg))
        s_mix = step(tokens)
        f = min(1.0 / n, lam * prompt / tokens * s_avg)  # share of steps that carry prompt tokens
        s_new = s_dec + f * (s_mix - s_dec)
        s_seen = s_dec + others * f * (s_mix - s_dec)  # the steps one request decodes through: its TPOT
        # A prefill step takes every prompt waiting for it while the token budget holds them (V1's scheduler fills
        # each step's budget from the waiting queue; under multi-step, a block's one prefill step): a bulk service,
        # whose load is the share of a full-chunk block's budget the arrivals take, not the share of time spent in
        # steps that carry some prompt (which reaches 1 as soon as every step carries one)
        u = min(MAX_UTILIZATION, lam * prompt * block / chunk)
        wait = u * service / (2 * (1 - u)) * run_share[0]  # M/D/1 at that load (the share a run's window reaches)
        ttft = frontend + n * s_new / 2 + service + wait + backlog  # it waits out half the running step (block)
        request = ttft + out * s_seen
        # damped: a closed loop's arrivals and its queue settle together (an undamped step can jump between them)
        lam_new = min(lam_max, w.rate if w.rate is not None else 0.5 * lam + 0.5 * b / request)
        done = abs(s_new - s_avg) < 1e-6 * s_new and abs(lam_new - lam) < 1e-6 * max(lam, 1e-9)
        s_avg, lam = s_new, lam_new
        if done:
            break
    b_out = lam * request if w.rate is not None else b
    g = others * f  # share of a request's decode steps that carry others' prompt chunks
    tpot99 = min(s_mix, s_seen + Z99 * math.sqrt(g * (1 - g) / out) * (s_mix - s_dec)) if out > 1 else s_seen
    wait99 = md1_wait_p99(u, service) * run_share[1]
    ttft99 = frontend + s_mix + (n - 1) * s_dec + service + max(wait99, wait)
    if backlog and w.prompts:
        ttft99 += behind * (math.ceil(0.99 * w.prompts) - 1)
    if w.rate is None and lam >= lam_max * (1 - 1e-9) and b / lam > request:
        # prefill-bound closed loop: the b clients share lam_max requests/s, so each request takes b / lam_max; the
        # difference over the steps' own time is waiting for the chunk budget, before the first token
        queue = b / lam - request
        ttft, ttft99, request = ttft + queue, ttft99 + queue, b / lam
    if w.rate is None and (w.synchronized or (w.prompts and w.prompts > 0)):
        # a closed-loop benchmark begins with all b requests at once: their prompts take the chunk budget in turn
        burst_steps = -(-int(b * prompt) // int(chunk))
        full = step(min(chunk, b * prompt)) + block_tail  # a chunk's step and, multi-step, its block's decodes
        burst = frontend + (burst_steps + 1) / 2 * full
        share = 1.0 if w.synchronized or not w.prompts else min(1.0, b / w.prompts)
        ttft = share * burst + (1 - share) * ttft
        if share > 0.01:
            # the slowest 1 % of all requests are the burst's slowest 0.01 / share: the prompts of its last steps
            q = 1 - 0.01 / share
            ttft99 = max(ttft99, frontend + math.ceil(q * burst_steps - 1e-9) * full)
        request = ttft + out * s_seen  # a slot frees when a request (or a whole wave) is done
    admit = 0.0
    if w.clients and w.rate is None and w.clients > b:
        # more clients than the engine admits (max_num_seqs or the KV cache): the rest wait in vLLM's queue for a
        # slot — Little's law on the waiting room: (clients − b) / (b / request time); after the burst's own wait,
        # which it comes on top of (a wave waits for a slot, then for its prompts' chunks). The engine's b slots stay
        # busy meanwhile: the wait is the client's, not the engine's time (throughput leaves it out).
        # a benchmark of N prompts has at most N clients waiting
        clients = min(w.clients, float(w.prompts)) if w.prompts else w.clients
        admit = max(0.0, clients - b) / b * request
        ttft, ttft99 = ttft + admit, ttft99 + admit
    saturated = lam >= lam_max * (1 - 1e-9)  # at the prefill ceiling (every step carrying a prompt is not)
    return _Load(b=b_out, ttft=ttft, ttft99=ttft99, tpot=s_seen, tpot99=max(tpot99, s_seen), f=f, mix_tokens=tokens,
                 mem=mem, comp=comp, comm=comm * i.pp + hand_off, saturated=saturated, admit=admit, ceiling=lam_max,
                 prefill_extra=f * (s_mix - s_dec), backlog=backlog, first_token=frontend + service,
                 chunk_extra=step(chunk) - s_dec)
