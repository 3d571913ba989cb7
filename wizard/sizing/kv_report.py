"""vLLM's own reading of a KV pool: its block size, block count, "GPU KV cache size" and "Maximum concurrency".

vLLM V1 lays the pool out in pages of one size for every layer (kv_cache_utils.py
_get_kv_cache_config_uniform_page_size @ v0.10.2; kv_cache_planning.py @ v0.33.0):
- A hybrid model's attention block grows until its page holds a linear-attention (Mamba, Gated DeltaNet) layer's
  state: block = 16 × ceil(state page / (16 × attention bytes per token)), and the state page is padded to it
  (HybridAttentionMambaModelConfig, model_executor/models/config.py @ v0.10.2, v0.15.0).
- Layers are grouped by kind in groups of the smallest kind's layer count (a kind not divisible by it is padded:
  "Add N padding layers"); there are group-size pools, each shared by one layer of every group, so
  blocks = pool // page // group size.
- One request holds, per group: full attention ceil(max_model_len / block); sliding window
  ceil(min(window − 1 + in-flight tokens, max_model_len) / block) + 1; chunked local
  ceil(min(chunk + in-flight tokens, max_model_len) / block); linear attention 1 block, or 2 where prefix caching
  keeps the state aligned to blocks (data/vllm-engines.json hybrid_kv_layout). Maximum concurrency = blocks over
  that sum (get_max_concurrency_for_kv_cache_config).
- "GPU KV cache size" is blocks // groups × block until 0.20, max concurrency × max_model_len from 0.21
  (the profile's kv_tokens_reported).
A model whose attention kinds differ in bytes per token (Gemma 4's global layers) is unified otherwise: None.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

from wizard.sizing.engine import BLOCK_SIZE
from wizard.sizing.engines import EngineProfile, release
from wizard.sizing.kv_cache import KvShape

ENGINES_FILE = Path(__file__).parent / "data" / "vllm-engines.json"


class LoggedKv(NamedTuple):
    """The KV pool as vLLM lays it out and logs it (tokens, blocks)."""

    block_size: int  # tokens per attention block
    num_blocks: int
    groups: int
    blocks_per_request: int  # one max_model_len request, every group
    tokens: int  # "GPU KV cache size: N tokens"
    concurrency: float  # "Maximum concurrency for max_model_len tokens per request"


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


@lru_cache(maxsize=1)
def _layout_rules() -> dict:
    return json.loads(ENGINES_FILE.read_text(encoding="utf-8"))["hybrid_kv_layout"]


def state_blocks_per_request(version: str) -> int:
    """Blocks one request's linear-attention state takes in each of its groups on this release: 1, or 2 once prefix
    caching (on by default) keeps hybrid models' states aligned to blocks (mamba_cache_mode "align")."""
    blocks = 1
    for rule in _layout_rules()["state_blocks_per_request"]:
        if release(version) >= release(rule["from"]):
            blocks = int(rule["blocks"])
    return blocks


def logged_kv(stage: KvShape, pool_bytes: int, max_model_len: int, engine: EngineProfile, version: str) -> LoggedKv | None:
    """How vLLM (V1 and later) lays out `pool_bytes` of one GPU's KV memory for `stage`'s layers, and what it logs;
    None for V0 and for layouts it unifies otherwise."""
    if engine.runner == "v0" or pool_bytes <= 0:
        return None
    full, sliding, linear, chunked = stage.layer_counts
    attention = [(n, b // n) for n, b in ((full, stage.full_bytes_per_token), (sliding, stage.sliding_bytes_per_token),
                                          (chunked, stage.chunked_bytes_per_token)) if n]
    if not attention or len({per_token for _, per_token in attention}) > 1:
        return None
    per_token = attention[0][1]  # one attention layer's bytes per token
    block = BLOCK_SIZE
    if linear:
        state_page = stage.state_bytes_per_sequence // linear
        block = BLOCK_SIZE * _cdiv(state_page, BLOCK_SIZE * per_token)
    page = block * per_token
    counts = [n for n in (full, sliding, linear, chunked) if n]
    group_size = min(counts)
    in_flight = stage.batched_tokens or 0
    whole = _cdiv(max_model_len, block)
    # blocks one request holds in one group of each kind (a window or chunk caps them only where the engine budgets
    # the in-flight tokens: stage.batched_tokens is set)
    capped = stage.batched_tokens is not None
    window = (_cdiv(min(stage.window - 1 + in_flight, max_model_len), block) + 1) if stage.window and capped else whole
    chunk = _cdiv(min(stage.chunk + in_flight, max_model_len), block) if stage.chunk and capped else whole
    groups = need = 0
    for n, blocks in ((full, whole), (sliding, window), (linear, state_blocks_per_request(version)), (chunked, chunk)):
        if n:
            groups += _cdiv(n, group_size)
            need += _cdiv(n, group_size) * blocks
    num_blocks = pool_bytes // page // group_size
    concurrency = num_blocks / need
    tokens = int(concurrency * max_model_len) if engine.kv_tokens_reported == "concurrency" else num_blocks // groups * block
    return LoggedKv(block_size=block, num_blocks=num_blocks, groups=groups, blocks_per_request=need, tokens=tokens,
                    concurrency=concurrency)
