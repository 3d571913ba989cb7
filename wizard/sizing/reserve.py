"""Memory outside PyTorch's allocator that vLLM subtracts before the KV cache (CUDA context, cuBLAS, NCCL).

Figures from shared/reference/vllm-kv-logs-dev.yaml ("non_torch_memory"), copied into tests/data/:
- one GPU: 0.35 GiB (kv-001, RTX 3090) — also within the spread of 0.16 GiB (kv-019, eager) and the
  accounting of kv-015 (1.79 GiB, a development build that counted more of the context as non-torch);
- TP > 1: + 1.79 GiB per GPU for NCCL communicators and custom all-reduce buffers (kv-016 at TP 2: 3.58 GiB
  against kv-015 at TP 1: 1.79 GiB, same build, same model). Applied to PP too, which builds NCCL groups.
- CUDA graphs: since vLLM 0.21 the V1 engine subtracts its estimate of the CUDA graph pool from the KV budget
  ("Estimated CUDA graph memory: 0.37 GiB total" for Qwen2.5-7B on v0.22, 0.48 GiB for Qwen2.5-7B-AWQ on
  v0.26; notes/research-vllm-memory.md). The V0 logs above predate that and did not count graphs.
  Large MoE models under TP log 2–3.5 GiB per GPU; a single figure for all models is a known simplification.
"""


from typing import NamedTuple

GIB = 2**30
BASE_NON_TORCH_BYTES = int(0.35 * GIB)
COMM_NON_TORCH_BYTES = int(1.79 * GIB)
CUDA_GRAPH_BYTES = int(0.45 * GIB)  # between the 0.37 and 0.48 GiB estimates logged for 7B models


class Reserve(NamedTuple):
    """Bytes per GPU held outside the weights, KV cache and activations."""

    base: int
    communication: int
    cuda_graphs: int

    @property
    def total(self) -> int:
        return self.base + self.communication + self.cuda_graphs


def framework_reserve(tp: int, pp: int, cuda_graphs: bool = True) -> Reserve:
    """Non-torch memory and the CUDA graph pool per GPU for a TP × PP layout.

    `cuda_graphs=False`: --enforce-eager, or an engine older than vLLM 0.21 that did not budget graphs."""
    return Reserve(
        base=BASE_NON_TORCH_BYTES,
        communication=COMM_NON_TORCH_BYTES if tp * pp > 1 else 0,
        cuda_graphs=CUDA_GRAPH_BYTES if cuda_graphs else 0,
    )
