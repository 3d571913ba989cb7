"""What vLLM allocates outside its budget, checked against the headroom the utilization leaves (§2 reserve).

The KV pool takes total × gpu_memory_utilization minus what the profile counted. What the profile did not
count must fit in the rest of the card, (1 − utilization) × total, or the server dies after "KV cache
allocated" — the failure users report most:
- the CUDA graph pool, where the generation does not budget it (before vLLM 0.20) — CUDA_GRAPH_BYTES;
- memory held before the profile's snapshot (V1 from 0.9.1 takes one at start-up, after NCCL init from 0.11; V0 and
  V1 before 0.9.1 count every byte on the device instead, so nothing is left over): the CUDA context and, with more
  than one GPU over NVLink, the NCCL communicators and custom all-reduce buffers. Their size is the V0
  non-torch figure, which counted exactly these (0.35 GiB at TP 1, +1.79 GiB per GPU at TP 2 on H100, PR
  #10511): a physical size of the same libraries, not a budget constant of another generation. Over PCIe it
  was not measured — and two RTX 3090s at TP 2 start at the default 0.92 (tests/data/vllm_logs, club-3090
  #232), which a 1.79 GiB figure would forbid — so only the context is counted there.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from wizard.sizing.engines import profiles
from wizard.sizing.reserve import CUDA_GRAPH_BYTES

GIB = 2**30


class Headroom(NamedTuple):
    """Bytes per GPU outside the budget: what must fit, what the utilization leaves, and a utilization that fits."""

    needed: int
    available: int
    graphs: int  # CUDA graphs the budget does not hold
    at_snapshot: int  # context + communicators held before the profile
    max_utilization: float  # the highest gpu_memory_utilization (2 decimals) whose headroom holds `needed`

    @property
    def fits(self) -> bool:
        return self.needed <= self.available


def headroom(total_bytes: int, utilization: float, gpus: int, graphs_budgeted: bool, enforce_eager: bool,
             budget_counts_device: bool, nvlink: bool) -> Headroom:
    """The post-budget allocations of one GPU of a `gpus`-rank layout against (1 − utilization) × total."""
    v0 = profiles()[0]  # the generation whose non-torch figure measured context + communicators
    graphs = 0 if graphs_budgeted or enforce_eager else CUDA_GRAPH_BYTES
    measured = gpus if nvlink else 1  # PCIe communicators: not measured (module docstring)
    # V0 and V1 before 0.9.1 counted them inside the budget
    at_snapshot = 0 if budget_counts_device else v0.non_torch_bytes(measured, True)
    needed = graphs + at_snapshot
    available = int(total_bytes * (1 - utilization))
    best = math.floor((1 - needed / total_bytes) * 100) / 100
    return Headroom(needed=needed, available=available, graphs=graphs, at_snapshot=at_snapshot, max_utilization=best)
