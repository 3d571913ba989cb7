"""The serving engine the plans target, and the scheduler defaults its memory profile depends on."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from wizard.sizing.engines import DEFAULT_VLLM_VERSION, profile_for, release
from wizard.specs import GpuSpec

VLLM_VERSION = DEFAULT_VLLM_VERSION  # one pinned target: flags are checked against it, images are tagged with it
BLOCK_SIZE = 16  # tokens per KV block (vLLM's CUDA default); capacity is rounded down to whole blocks
GIB = 2**30


def whole_blocks(tokens: int) -> int:
    """Tokens a sequence of `tokens` occupies in the KV pool: vLLM allocates its cache in whole blocks of
    BLOCK_SIZE (a 1,100-token request holds 69 blocks, 1,104 tokens)."""
    return -(-tokens // BLOCK_SIZE) * BLOCK_SIZE


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


ADDED_ARCHITECTURES = Path(__file__).parent / "data" / "vllm-added-architectures.json"


@lru_cache(maxsize=1)
def _added() -> dict:
    return json.loads(ADDED_ARCHITECTURES.read_text(encoding="utf-8"))["added"]


def unserved_reason(architecture: str, version: str = VLLM_VERSION) -> str:
    """Why vLLM `version` has no native implementation of this config.json architecture ('' when it has): one the
    registry gained after that release (data/vllm-added-architectures.json), or one VLLM_VERSION no longer serves.

    From vLLM's own `_PREVIOUSLY_SUPPORTED_MODELS` table and the pull requests that extended it
    (data/vllm-removed-architectures.json, sources there). Most are refused at start-up; a few fall back to
    vLLM's Transformers modelling backend, and a few are served by an out-of-tree plugin — neither path is what
    this wizard sizes or what its launch scripts start.
    """
    added = _added().get(architecture)
    if added is not None and version != VLLM_VERSION:
        r = release(version)
        if r <= release(added["absent"]):
            return (f"vLLM {version} has no {architecture}: its model registry gained it in v{added['first']} "
                    f"(v{added['absent']}'s lists none)")
        if r < release(added["first"]):
            return (f"vLLM {version} may not serve {architecture}: its model registry lists it from v{added['first']}, "
                    f"not in v{added['absent']}, and this release was not checked")
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
