"""Memory outside the weights, KV cache and activations that vLLM subtracts before the KV cache, per GPU.

Two parts, both by engine generation (data/vllm-engines.json, sources there):
- non-torch memory inside the budget (CUDA context, cuBLAS, NCCL, custom all-reduce buffers). V0 took its
  baseline before NCCL init and counted communicators here (0.35 GiB at TP 1, +1.79 GiB per GPU with TP, PR
  #10511); V1 takes it after NCCL init, so only what the profile run adds enters the budget (0.02–0.26 GiB at
  TP 1 in V1 logs; about 1 GiB per GPU over NVLink, 0.21 GiB over PCIe where custom all-reduce is off).
- the CUDA graph pool, subtracted since vLLM 0.20 (PR #38284): about 0.45 GiB for 7–8 B models (estimates of
  0.37 GiB logged by v0.22 and 0.48 GiB by v0.26 for Qwen2.5-7B). Large MoE models under TP log 2–3.5 GiB per
  GPU; a single figure for all models is a known simplification. Older generations captured graphs after
  sizing the cache: their pool must fit the headroom outside gpu_memory_utilization.
"""

from __future__ import annotations

from typing import NamedTuple

from wizard.sizing.engines import EngineProfile

GIB = 2**30
CUDA_GRAPH_BYTES = int(0.45 * GIB)  # between the 0.37 and 0.48 GiB estimates logged for 7B models


class Reserve(NamedTuple):
    """Bytes per GPU held outside the weights, KV cache and activations."""

    base: int  # non-torch memory of one GPU
    communication: int  # what a multi-GPU layout adds to it (NCCL, custom all-reduce)
    cuda_graphs: int

    @property
    def total(self) -> int:
        return self.base + self.communication + self.cuda_graphs


def framework_reserve(tp: int, pp: int, engine: EngineProfile, nvlink: bool, cuda_graphs: bool = True) -> Reserve:
    """Non-torch memory and the CUDA graph pool per GPU for a TP × PP layout on `engine`'s generation.

    `cuda_graphs=False`: --enforce-eager, or a generation that does not budget graphs."""
    single = engine.non_torch_bytes(1, nvlink)
    return Reserve(
        base=single,
        communication=max(0, engine.non_torch_bytes(tp * pp, nvlink) - single) if tp * pp > 1 else 0,
        cuda_graphs=CUDA_GRAPH_BYTES if cuda_graphs else 0,
    )
