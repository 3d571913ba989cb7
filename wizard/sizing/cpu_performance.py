"""Latency and throughput of a very small model on a CPU host (§12: "very small model ... even a CPU may do").

A CPU decode step is bound by DRAM bandwidth the way a GPU's is by HBM: every step reads every weight once and
each sequence's KV, so
    TPOT = (weight bytes + sequences × KV bytes per sequence) / (host bandwidth × CPU_EFF_BANDWIDTH)
and a prompt is compute-bound on the vector units:
    TTFT = 2 × parameters × prompt tokens / (host FLOPS × CPU_EFF_FLOPS) + one decode step.
The host is a stated reference machine (REFERENCE_HOST, figures from its datasheet arithmetic) unless the user
gives the bandwidth of theirs. Both efficiencies are assumptions, not calibrated: the project has no CPU serving
benchmark yet; the plan shows them beside the figures they produce.
"""

from __future__ import annotations

from typing import NamedTuple


class CpuHost(NamedTuple):
    """A CPU serving host: peak DRAM bandwidth (bytes/s) and peak vector FLOPS (fp32, FLOP/s)."""

    name: str
    memory_bw_bytes_s: float
    flops: float
    source: str


# One socket of a 4th-generation Xeon Scalable (Sapphire Rapids), 32 cores at 2.0 GHz: 8 DDR5-4800 channels ×
# 4,800 MT/s × 8 bytes = 307.2 GB/s; 2 AVX-512 FMA units × 16 fp32 lanes × 2 FLOP = 64 FLOP/cycle/core →
# 32 × 2.0e9 × 64 = 4.1 TFLOPS fp32 (Intel's product specifications: 8 memory channels, DDR5-4800, two FMA units
# on Platinum parts). AMX bf16 tiles are faster for prompts; the fp32 figure is the conservative side.
REFERENCE_HOST = CpuHost(
    name="one 32-core Xeon (Sapphire Rapids) socket, 8 × DDR5-4800",
    memory_bw_bytes_s=8 * 4800e6 * 8,
    flops=32 * 2.0e9 * 64,
    source="Intel 4th-gen Xeon Scalable specifications: 8 × DDR5-4800 channels, 2 AVX-512 FMA units per core",
)
CPU_EFF_BANDWIDTH = 0.5  # achieved / peak DRAM bandwidth in decode: an assumption (no CPU benchmark calibrates it)
CPU_EFF_FLOPS = 0.3  # achieved / peak fp32 FLOPS in prefill: an assumption, likewise
# The most of the host's time prompts may take: beyond half, the decode steps the TPOT figure assumes would get too
# little of the CPU (prefill and decode share the same cores). An assumption.
CPU_MAX_PREFILL_LOAD = 0.5


class CpuPerformance(NamedTuple):
    """One CPU host at a load: times in ms, output tokens per second."""

    ttft_ms: float
    tpot_ms: float
    output_tokens_per_s: float
    host: CpuHost
    prefill_load: float = 0.0  # share of the host's time spent reading prompts at this load (≥ 1: it cannot keep up)


def cpu_performance(*, weight_bytes: int, params: float, kv_bytes_per_sequence: int, sequences: float,
                    prompt_tokens: int, output_tokens: int, host: CpuHost = REFERENCE_HOST) -> CpuPerformance:
    """TTFT, TPOT and output tokens/s of `sequences` in flight on `host` (weights in bytes, KV per sequence in bytes
    at the typical length, lengths in tokens)."""
    b = max(1.0, sequences)
    tpot = (weight_bytes + b * kv_bytes_per_sequence) / (host.memory_bw_bytes_s * CPU_EFF_BANDWIDTH)
    prefill = 2 * params * prompt_tokens / (host.flops * CPU_EFF_FLOPS)
    ttft = prefill + tpot
    request = ttft + output_tokens * tpot
    # b sequences in flight finish b / request requests per second, each prompt taking `prefill` of the host
    load = b / request * prefill
    return CpuPerformance(ttft_ms=ttft * 1000, tpot_ms=tpot * 1000, output_tokens_per_s=b * output_tokens / request,
                          host=host, prefill_load=load)
