"""Latency and throughput of one replica: a roofline of vLLM's mixed decode/prefill steps (DOMAIN §5, §9 Q3).

One engine step of a replica serving B sequences with P-token prompts and O-token outputs (closed loop,
chunked prefill) carries B decode tokens plus, on average, (B − 1)·P/O prompt tokens of the requests that
replace finished ones (a sequence's own prompt is not prefilled during its own decode). Its time is
    memory:  (active weights read once + every sequence's KV) / (bandwidth × EFF_BANDWIDTH)
  + compute: (2 × active params + attention) × tokens / (peak FLOPS × EFF_FLOPS)
  + TP all-reduce: 2 per layer of tokens × hidden × 2 bytes over the interconnect (DOMAIN §3–4)
  + STEP_OVERHEAD (scheduler, sampling, kernel launches)
Memory and compute are added, not overlapped: in a mixed step attention and the GEMMs run one after
another, and the calibration below measures the sum. MoE reads only the experts the batch touches:
E × (1 − (1 − k/E)^B) per layer. PP: a token crosses every stage in turn; the batch is split into PP
micro-batches that keep the stages busy (§3: bubbles are filled by larger in-flight batches).
TPOT = step time; TTFT = the steps a prompt needs at the token budget left beside the decodes;
output tokens/s = B × O / (TTFT + O × TPOT).

Efficiencies are calibrated on shared/reference/throughput-dev.yaml (copied to tests/data/): the vLLM rows
on one H100 (Qwen3-32B at several prompt/output lengths, Llama-3.1-8B at concurrency 1–4). The fit is
printed row by row by `python benchmarks/throughput.py`.
"""

from functools import lru_cache
from typing import NamedTuple

from wizard.sizing.fit import SizeResult
from wizard.sizing.precision import WeightFormat
from wizard.sizing.tensors import LINEAR_W, inventory
from wizard.sizing.weights import tensor_bytes
from wizard.specs import FULL, SLIDING, GpuSpec, ModelSpec

# Calibrated by `python benchmarks/throughput.py --fit` in two stages, each on the rows that isolate it:
EFF_BANDWIDTH = 0.75  # achieved / peak HBM bandwidth: decode-bound rows (tp-023, Llama-3.1-8B, concurrency 1 and 4)
STEP_OVERHEAD_S = 0.0  # per-step scheduling/sampling beyond the roofline: the same rows find none to add
EFF_FLOPS = 0.25  # achieved / peak dense FLOPS in mixed prefill+decode steps: tp-011, tp-015..018 (Qwen3-32B, H100)
ALLREDUCE_LATENCY_S = 10e-6  # per NCCL all-reduce of a small message over NVLink; twice that over PCIe (not calibrated)
NETWORK_BYTES_S = 50e9  # 400 Gb/s InfiniBand/RoCE per GPU between nodes (PP hand-offs), not calibrated


class Workload(NamedTuple):
    """The load one replica carries: sequences in flight (may be fractional, a time average) and lengths (tokens)."""

    concurrency: float
    prompt_tokens: int
    output_tokens: int


class Performance(NamedTuple):
    """One replica at that load. Times in ms, throughput in output tokens per second."""

    ttft_ms: float
    tpot_ms: float
    output_tokens_per_s: float
    decode_memory_ms: float  # reading weights and KV per step
    compute_ms: float  # GEMMs and attention of the step's tokens
    comm_ms: float  # TP all-reduces and PP hand-offs
    prefill_tokens_per_step: float


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
    memory = (weights_read_per_step(r, tokens) + kv_read) / (g.mem_bw_bytes_s * EFF_BANDWIDTH)
    active = r.params.active / (i.tp * i.pp)
    attn = attention_flops_per_token(m, avg_context) / (i.tp * i.pp)
    prefill_attn = attention_flops_per_token(m, avg_context / 2) / (i.tp * i.pp)  # causal: half on average
    flops = (2 * active + attn) * decodes + (2 * active + prefill_attn) * prefill
    compute = flops / (flops_per_gpu(g, r.weights.format) * EFF_FLOPS)
    comm = 0.0
    if i.tp > 1:
        link = g.interconnect_bytes_s or 32e9
        latency = ALLREDUCE_LATENCY_S * (1 if g.nvlink else 2)
        if i.tp > g.gpus_per_node:  # TP across nodes: every all-reduce crosses the network (DOMAIN §4)
            link, latency = NETWORK_BYTES_S, ALLREDUCE_LATENCY_S * 5
        per_layer = 2 * (latency + 2 * (i.tp - 1) / i.tp * tokens * m.hidden_size * 2 / link)
        comm = per_layer * m.num_layers / i.pp
    return memory, compute, comm


def performance(r: SizeResult, w: Workload) -> Performance:
    """TTFT, TPOT and output tokens/s of one replica of `r`'s layout at workload `w`."""
    i = r.inputs
    b = max(1.0, w.concurrency)
    budget = r.activation.tokens  # max_num_batched_tokens: decodes first, prompt chunks fill the rest
    prefill = min((b - 1) * w.prompt_tokens / w.output_tokens, max(0, budget - b))
    avg_context = w.prompt_tokens + w.output_tokens / 2
    micro = b / i.pp  # PP keeps pp micro-batches in flight
    mem, comp, comm = step_time(r, micro, prefill / i.pp, avg_context)
    hand_off = (i.pp - 1) * micro * r.model.hidden_size * 2 / NETWORK_BYTES_S if i.pp > 1 else 0.0
    stage = mem + comp + comm + STEP_OVERHEAD_S
    tpot = stage * i.pp + hand_off
    # TTFT: the prompt is cut into chunks of the token budget left beside the decodes.
    chunk = max(1.0, budget - b)
    steps = -(-w.prompt_tokens // int(chunk))
    # A chunk passes the PP stages one after another (DOMAIN §3): every stage computes the whole chunk over its
    # layers, so PP does not cut a single request's TTFT (it only keeps more micro-batches in flight).
    c_mem, c_comp, c_comm = step_time(r, micro, min(chunk, w.prompt_tokens), avg_context)
    ttft = steps * ((c_mem + c_comp + c_comm + STEP_OVERHEAD_S) * i.pp + hand_off)
    per_request = ttft + w.output_tokens * tpot
    return Performance(
        ttft_ms=ttft * 1000,
        tpot_ms=tpot * 1000,
        output_tokens_per_s=b * w.output_tokens / per_request,
        decode_memory_ms=mem * 1000,
        compute_ms=comp * 1000,
        comm_ms=(comm * i.pp + hand_off) * 1000,
        prefill_tokens_per_step=prefill,
    )

