"""vLLM's own reading of a KV pool: its block size, block count, "GPU KV cache size" and "Maximum concurrency".

vLLM V1 lays the pool out in pages of one size for every layer (kv_cache_utils.py
_get_kv_cache_config_uniform_page_size @ v0.10.2, get_kv_cache_configs @ v0.11.0-v0.19.0; kv_cache_planning.py
@ v0.33.0):
- A hybrid model's attention block grows until its page holds a linear-attention (Mamba, Gated DeltaNet) layer's
  state: block = 16 × ceil(state page / (16 × attention bytes per token)), and the state page is padded to it
  (HybridAttentionMambaModelConfig, model_executor/models/config.py @ v0.10.2, v0.15.0). From 0.15 the multiple is
  32 on compute capability 10.x cards for head size 256 with FlashInfer (Qwen3.5 and Qwen3-Next on B200/B300), 64
  or 128 for MLA: not modelled, 16 assumed.
- Layers are grouped by kind, in order of first appearance, in groups of the smallest kind's layer count — from
  0.12 the largest kind's when it is under 1.25 × the smallest (1.5 × from 0.18), to pad less; a kind not
  divisible by it is padded ("Add N padding layers"). From 0.11 the groups are formed on the whole model (group i
  of a kind takes its layers i, i + groups, ...) and each pipeline stage keeps its share of every group; before,
  each stage grouped its own layers. A GPU has group-size pools (its longest group), each shared by one layer of
  every group: blocks = pool // page // group size; vLLM keeps the smallest block count of all GPUs.
- One request holds, per group: full attention ceil(max_model_len / block); sliding window
  ceil(min(window − 1 + in-flight tokens, max_model_len) / block) + 1; chunked local
  ceil(min(chunk + in-flight tokens, max_model_len) / block); linear attention 1 block, or 2 where prefix caching
  keeps the state aligned to blocks (data/vllm-engines.json hybrid_kv_layout). Maximum concurrency = blocks over
  that sum, every group counted (get_max_concurrency_for_kv_cache_config).
- "GPU KV cache size" is blocks // groups × block until 0.20, max concurrency × max_model_len from 0.21 (the
  profile's kv_tokens_reported).
- 0.14-0.16 check one max_model_len request against the smallest GPU's memory as group size × page × the blocks of
  the first group's kind alone (_max_memory_usage_bytes_from_groups @ v0.16.0): for one kind of layer that is
  the whole model's KV (engines.pp_checks_whole_model).
A model whose attention kinds differ in bytes per token (Gemma 4's global layers) is unified otherwise: None.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

from wizard.sizing.engine import BLOCK_SIZE
from wizard.sizing.engines import EngineProfile, release, rule
from wizard.sizing.kv_cache import KvShape
from wizard.specs import CHUNKED, FULL, LINEAR, SLIDING

KINDS = (FULL, SLIDING, LINEAR, CHUNKED)  # the order of KvShape.layer_counts


class LoggedKv(NamedTuple):
    """The KV pool as vLLM lays it out and logs it (tokens, blocks)."""

    block_size: int  # tokens per attention block
    num_blocks: int  # the smallest GPU's
    groups: int
    blocks_per_request: int  # one max_model_len request, every group
    tokens: int  # "GPU KV cache size: N tokens"
    concurrency: float  # "Maximum concurrency for max_model_len tokens per request"
    first_group_bytes: int  # 0.14-0.16's start-up check: group size × page × the first group's blocks
    block_bytes: int = 0  # one block id across the pools of the GPU with the fewest blocks (page × its pool count)
    group_kinds: tuple[str, ...] = ()  # the kind of each group
    window: int | None = None  # sliding layers' window, chunked layers' chunk, the in-flight tokens the engine
    chunk: int | None = None  # budgets them with (None: steady state), and the blocks a linear state holds
    in_flight: int | None = None
    state_blocks: int = 1
    stage: int = 0  # the PP stage whose GPU holds the fewest blocks (the one that runs out first)

    def blocks_for(self, length: int) -> int:
        """Blocks one request of `length` tokens holds, every group counted (as vLLM allocates them)."""
        return sum(_kind_blocks(k, length, self.block_size, self.window, self.chunk, self.in_flight, self.state_blocks)
                   for k in self.group_kinds)

    def bytes_for(self, length: int) -> int:
        """Bytes of KV memory one request of `length` tokens takes on that GPU."""
        return self.blocks_for(length) * self.block_bytes


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _kind_blocks(kind: str, length: int, block: int, window: int | None, chunk: int | None, in_flight: int | None,
                 state_blocks: int) -> int:
    """Blocks one request of `length` tokens holds in one group of this kind."""
    if kind == SLIDING and window:
        return (_cdiv(min(window - 1 + in_flight, length), block) + 1) if in_flight is not None else _cdiv(min(window, length), block)
    if kind == CHUNKED and chunk:
        return _cdiv(min(chunk + in_flight, length), block) if in_flight is not None else _cdiv(min(chunk, length), block)
    if kind == LINEAR:
        return state_blocks
    return _cdiv(length, block)


def _layout_rules() -> dict:
    return rule("hybrid_kv_layout")


def _from(version: str, rules: list[dict], key: str):
    """The value of the last rule whose `from` release the version has reached."""
    value = None
    for entry in rules:
        if release(version) >= release(entry["from"]):
            value = entry[key]
    return value


@lru_cache(maxsize=64)
def state_blocks_per_request(version: str) -> int:
    """Blocks one request's linear-attention state takes in each of its groups on this release: 1, or 2 once prefix
    caching (on by default) keeps hybrid models' states aligned to blocks (mamba_cache_mode "align")."""
    return int(_from(version, _layout_rules()["state_blocks_per_request"], "blocks"))


def group_size(counts: list[int], version: str) -> int:
    """Layers per group for kinds of these layer counts on this release (the smallest count, or the largest when
    it is close enough: hybrid_kv_layout.group_size_largest_below)."""
    smallest, largest = min(counts), max(counts)
    ratio = _from(version, _layout_rules()["group_size_largest_below"], "ratio")
    return largest if ratio and largest < smallest * ratio else smallest


def logged_pool(kinds: tuple[str, ...], stages: tuple[KvShape, ...], bounds: list[tuple[int, int]], pools: list[int],
                max_model_len: int, engine: EngineProfile, version: str) -> LoggedKv | None:
    """How vLLM (V1 and later) lays out the KV memory `pools` (bytes per GPU of each PP stage, whose layers are
    `kinds[lo:hi]` for `bounds`) and what it logs; None for V0, a pool of no bytes, or layouts it unifies otherwise."""
    if engine.runner == "v0" or min(pools) <= 0:
        return None
    per_layer: dict[str, int] = {}
    for st in stages:
        for kind, n, total in zip(KINDS, st.layer_counts, (st.full_bytes_per_token, st.sliding_bytes_per_token,
                                                            st.state_bytes_per_sequence, st.chunked_bytes_per_token)):
            if n:
                per_layer.setdefault(kind, total // n)
    attention = {per_layer[k] for k in (FULL, SLIDING, CHUNKED) if k in per_layer}
    if len(attention) != 1:
        return None
    per_token = attention.pop()  # one attention layer's bytes per token
    state_page = per_layer.get(LINEAR, 0)
    block = BLOCK_SIZE * _cdiv(state_page, BLOCK_SIZE * per_token) if state_page else BLOCK_SIZE
    page = block * per_token
    st0 = stages[0]
    ctx = max_model_len
    state_blocks = state_blocks_per_request(version)

    def blocks(kind: str) -> int:  # what one max_model_len request holds in one group of this kind
        return _kind_blocks(kind, ctx, block, st0.window, st0.chunk, st0.batched_tokens, state_blocks)

    grouping = _grouping(kinds, tuple(bounds), version)
    if isinstance(grouping[0], tuple):  # one grouping per stage (before 0.11): the smallest block count is kept
        num_blocks, size, groups, stage = min(((pool // page // n, n, g, s) for s, (pool, (n, g))
                                               in enumerate(zip(pools, grouping))), key=lambda x: x[0])
        pools_here = size
    else:
        size, groups, per_gpu = grouping
        num_blocks, pools_here, stage = min((pool // page // max(1, n), max(1, n), s)
                                            for s, (pool, n) in enumerate(zip(pools, per_gpu)))
    need = sum(blocks(k) for k in groups)
    concurrency = num_blocks / need
    tokens = int(concurrency * ctx) if engine.kv_tokens_reported == "concurrency" else num_blocks // len(groups) * block
    return LoggedKv(block_size=block, num_blocks=num_blocks, groups=len(groups), blocks_per_request=need,
                    tokens=tokens, concurrency=concurrency, first_group_bytes=size * page * blocks(groups[0]),
                    block_bytes=page * pools_here, group_kinds=tuple(groups), window=st0.window, chunk=st0.chunk,
                    in_flight=st0.batched_tokens, state_blocks=state_blocks, stage=stage)


@lru_cache(maxsize=1024)
def _grouping(kinds: tuple[str, ...], bounds: tuple[tuple[int, int], ...], version: str):
    """vLLM's groups of these layers: (group size, the kind of each group, each GPU's pool count), or before 0.11
    with several stages one (group size, kinds of its groups) per stage. Kinds in order of first appearance."""
    order = list(dict.fromkeys(kinds))
    layers = {k: [i for i, x in enumerate(kinds) if x == k] for k in order}
    if release(version) >= release(_layout_rules()["whole_model_groups_from"]) or len(bounds) == 1:
        size = group_size([len(v) for v in layers.values()], version)
        # group j of a kind: its layers j, j + groups, ... (0.11 on; one stage: any split gives the same sizes)
        groups = [(k, layers[k][j::_cdiv(len(layers[k]), size)]) for k in order for j in range(_cdiv(len(layers[k]), size))]
        per_gpu = tuple(max(sum(lo <= i < hi for i in g) for _, g in groups) for lo, hi in bounds)
        return size, tuple(k for k, _ in groups), per_gpu
    per_stage = []
    for lo, hi in bounds:  # each stage's own layers, in contiguous runs
        own = [len([i for i in v if lo <= i < hi]) for v in layers.values()]
        kinds_here = [k for k, n in zip(order, own) if n]
        n = group_size([x for x in own if x], version)
        per_stage.append((n, tuple(k for k, c in zip(kinds_here, [x for x in own if x]) for _ in range(_cdiv(c, n)))))
    return tuple(per_stage)
