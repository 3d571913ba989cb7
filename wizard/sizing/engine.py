"""The serving engine the plans target, and the scheduler defaults its memory profile depends on."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from wizard.sizing.engines import DEFAULT_VLLM_VERSION, profile_for
from wizard.specs import GpuSpec

VLLM_VERSION = DEFAULT_VLLM_VERSION  # one pinned target: flags are checked against it, images are tagged with it
BLOCK_SIZE = 16  # tokens per KV block (vLLM's CUDA default); capacity is rounded down to whole blocks
GIB = 2**30


def default_max_num_batched_tokens(gpu: GpuSpec, version: str = VLLM_VERSION) -> int:
    """`vllm serve` default token budget of that release on this card (engines.py, by card memory and name)."""
    return profile_for(version).default_batch(gpu, 0)[0]


def default_max_num_seqs(gpu: GpuSpec, version: str = VLLM_VERSION) -> int:
    """`vllm serve` default max_num_seqs of that release on this card (same source)."""
    return profile_for(version).default_batch(gpu, 0)[1]


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
