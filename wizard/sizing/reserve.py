"""Memory outside PyTorch's allocator that vLLM subtracts before the KV cache (CUDA context, cuBLAS, NCCL).

Figures from shared/reference/vllm-kv-logs-dev.yaml ("non_torch_memory"), copied into tests/data/:
- one GPU: 0.35 GiB (kv-001, RTX 3090) — also within the spread of 0.16 GiB (kv-019, eager) and the
  accounting of kv-015 (1.79 GiB, a development build that counted more of the context as non-torch);
- TP > 1: + 1.79 GiB per GPU for NCCL communicators and custom all-reduce buffers (kv-016 at TP 2: 3.58 GiB
  against kv-015 at TP 1: 1.79 GiB, same build, same model). Applied to PP too, which builds NCCL groups.
"""

from __future__ import annotations

from dataclasses import dataclass

GIB = 2**30
BASE_NON_TORCH_BYTES = int(0.35 * GIB)
COMM_NON_TORCH_BYTES = int(1.79 * GIB)


@dataclass(frozen=True, slots=True)
class Reserve:
    """Bytes per GPU held outside the weights, KV cache and activations."""

    base: int
    communication: int

    @property
    def total(self) -> int:
        return self.base + self.communication


def framework_reserve(tp: int, pp: int) -> Reserve:
    """Non-torch memory per GPU for a TP × PP layout."""
    return Reserve(base=BASE_NON_TORCH_BYTES, communication=COMM_NON_TORCH_BYTES if tp * pp > 1 else 0)
