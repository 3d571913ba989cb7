"""The serving engine the plans target, and the scheduler defaults its memory profile depends on."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from wizard.specs import GpuSpec

VLLM_VERSION = "0.33.0"  # one pinned target: flags are checked against it, images are tagged with it
BLOCK_SIZE = 16  # tokens per KV block (vLLM's CUDA default); capacity is rounded down to whole blocks
GIB = 2**30


def default_max_num_batched_tokens(gpu: GpuSpec) -> int:
    """`vllm serve` default for the V1 engine: 8192 on GPUs with >= 70 GiB that are not A100s, else 2048
    (vllm/engine/arg_utils.py, _set_default_args, usage context OPENAI_API_SERVER)."""
    large = gpu.memory_reported_bytes >= 70 * GIB and "a100" not in gpu.id
    return 8192 if large else 2048


def default_max_num_seqs(gpu: GpuSpec) -> int:
    """`vllm serve` default max_num_seqs: 1024 on the same large GPUs, else 256 (same source)."""
    large = gpu.memory_reported_bytes >= 70 * GIB and "a100" not in gpu.id
    return 1024 if large else 256


REMOVED_ARCHITECTURES = Path(__file__).parent / "data" / "vllm-removed-architectures.json"


@lru_cache(maxsize=1)
def _removed() -> dict:
    return json.loads(REMOVED_ARCHITECTURES.read_text(encoding="utf-8"))


def unserved_reason(architecture: str) -> str:
    """Why vLLM VLLM_VERSION has no native implementation of this config.json architecture ('' when it has).

    From vLLM's own `_PREVIOUSLY_SUPPORTED_MODELS` table and the pull requests that extended it
    (data/vllm-removed-architectures.json, sources there). Most are refused at start-up; a few fall back to
    vLLM's Transformers modelling backend, and a few are served by an out-of-tree plugin — neither path is what
    this wizard sizes or what its launch scripts start.
    """
    data = _removed()
    entry = data["removed"].get(architecture)
    if entry is None:
        return ""
    text = (f"vLLM {VLLM_VERSION} has no native {architecture} (its model registry lists it as served until "
            f"v{entry['last']})")
    if entry.get("plugin"):
        return text + f"; it is served by the out-of-tree plugin {entry['plugin']}"
    if entry.get("transformers_fallback"):
        return text + "; vLLM would try its Transformers modelling backend instead, which is not verified for it"
    return text + " and refuses it at start-up"
