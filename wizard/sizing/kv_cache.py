"""KV cache bytes per token and per sequence, per GPU (DOMAIN §2: layers × 2 × KV heads × head dim × bytes).

- Standard / GQA / MQA: 2 × kv_heads × head_dim × bytes per full-attention layer; under TP each rank keeps
  kv_heads / TP heads, or one replicated head when kv_heads < TP.
- MLA (DeepSeek): (kv_lora_rank + qk_rope_head_dim) × bytes per layer, no factor 2, replicated on every rank.
- Sliding-window layers keep at most `sliding_window` tokens of each sequence in steady-state decode; vLLM's
  V1 engine budgets them per request at (ceil(min(window − 1 + max_num_batched_tokens, max_model_len) / block)
  + 1) blocks (SlidingWindowSpec.max_memory_usage_bytes: a prefill chunk needs the window behind it), and its
  "Maximum concurrency" uses that budget. Sizing with `batched_tokens` follows the engine; without, steady state.
- Chunked local attention layers (Llama 4) attend within their attention_chunk_size block; vLLM budgets them per
  request at ceil(min(chunk + in-flight tokens, max_model_len) / block) blocks (ChunkedLocalAttentionSpec).
- Linear-attention / Mamba layers keep a fixed state per sequence, not per token.
- Full-attention layers may have their own head size and KV heads (Gemma 4's global layers: 512 × 2 heads).
- DeepSeek sparse attention adds the indexer's key to every MLA layer: index_head_dim FP8 values plus one fp32
  scale per 128, as uint8, on every rank (DeepseekV32IndexerCache, deepseek_v2.py @ v0.33.0); with an FP8 cache
  the sparse MLA stores the fp8_ds_mla layout: kv_lora_rank FP8 values, one fp32 scale per 128 of them and the
  RoPE key in 16-bit (512 + 16 + 128 = 656 B for DeepSeek-V3.2, flashmla_sparse.py "the 656B layout").
Only the layers of one PP stage live on a GPU.
"""


from functools import lru_cache
from typing import NamedTuple

from wizard.sizing.engine import BLOCK_SIZE, whole_blocks
from wizard.sizing.layout import stage_layers
from wizard.specs import CHUNKED, FULL, LINEAR, SLIDING, ModelSpec

SCALE_GROUP = 128  # FP8 values per fp32 scale in the indexer key and the fp8_ds_mla latent


class KvShape(NamedTuple):
    """Per GPU of the heaviest stage: bytes per token of full layers, of sliding layers, and fixed state."""

    full_bytes_per_token: int  # layers that keep the whole context
    sliding_bytes_per_token: int  # layers capped at `window` tokens
    window: int | None
    state_bytes_per_sequence: int  # linear-attention layers
    element_bytes: int
    batched_tokens: int | None = None  # the engine's max_num_batched_tokens: None sizes steady-state decode
    chunked_bytes_per_token: int = 0  # chunked local attention layers (Llama 4)
    chunk: int | None = None  # their attention_chunk_size
    # layers of each kind on this GPU (full, sliding, linear, chunked): vLLM groups them (kv_report.py)
    layer_counts: tuple[int, int, int, int] = (0, 0, 0, 0)

    def sliding_tokens(self, context: int) -> int:
        """Tokens a sliding-window layer holds per sequence: the engine's budget, or the window itself."""
        if not self.window:
            return context
        if self.batched_tokens is None:
            return min(context, self.window)
        tokens = min(self.window - 1 + self.batched_tokens, context)
        return (-(-tokens // BLOCK_SIZE) + 1) * BLOCK_SIZE

    def chunked_tokens(self, context: int) -> int:
        """Tokens a chunked local layer holds per sequence: the engine's budget (no +1 block: a chunk starts on a
        chunk boundary), or the current chunk at most in steady state."""
        if not self.chunk:
            return context
        if self.batched_tokens is None:
            return min(context, self.chunk)
        return -(-min(self.chunk + self.batched_tokens, context) // BLOCK_SIZE) * BLOCK_SIZE

    def bytes_per_sequence(self, context: int) -> int:
        """KV bytes one sequence of `context` tokens holds on this GPU."""
        return (self.full_bytes_per_token * context + self.sliding_bytes_per_token * self.sliding_tokens(context)
                + self.chunked_bytes_per_token * self.chunked_tokens(context) + self.state_bytes_per_sequence)

    def allocated_bytes(self, length: int) -> int:
        """KV bytes vLLM allocates one sequence of `length` tokens on this GPU: its bytes over whole blocks (what the
        pool admits; bytes_per_sequence is what a decode step reads)."""
        return self.bytes_per_sequence(whole_blocks(length))

    def bytes_per_token(self, context: int) -> int:
        """Average KV bytes per token at this context (equals the plain per-token figure without windows/state)."""
        return -(-self.bytes_per_sequence(context) // context)

    @property
    def uncapped_bytes_per_token(self) -> int:
        """Per-token bytes if every attention layer kept the whole context (what V0 and most calculators assume)."""
        return self.full_bytes_per_token + self.sliding_bytes_per_token + self.chunked_bytes_per_token


def kv_element_bytes(m: ModelSpec, kv_dtype: str) -> int:
    """Bytes per cached element: fp8 (and fp8_e4m3, an architecture's own choice) → 1; auto → the model's 16-bit
    dtype (vLLM's --kv-cache-dtype auto)."""
    return 1 if kv_dtype.startswith("fp8") else m.dtype_bytes


def kv_heads_per_rank(m: ModelSpec, tp: int, kv_heads: int | None = None) -> int:
    """KV heads each TP rank stores: split evenly, or one (replicated) when there are fewer heads than ranks."""
    return max(1, (kv_heads or m.num_kv_heads) // tp)


def mla_bytes_per_token(m: ModelSpec, kv_dtype: str) -> int:
    """One MLA layer's cached latent + RoPE key per token. A sparse (indexer) model's `--kv-cache-dtype fp8` is
    FlashMLA sparse's alias for fp8_ds_mla (flashmla_sparse.py @ v0.33.0: "fp8", "alias for fp8_ds_mla"); the
    fp8_e4m3 an architecture picks itself (GLM-5 on SM10x) is the plain 1-byte layout of FlashInfer's sparse MLA.
    Which backend a card selects for `fp8` is not modelled: the fp8_ds_mla layout is assumed."""
    assert m.mla is not None
    lora, rope = m.mla.kv_lora_rank, m.mla.qk_rope_head_dim
    e = kv_element_bytes(m, kv_dtype)
    if kv_dtype == "fp8" and m.indexer is not None:
        return lora + -(-lora // SCALE_GROUP) * 4 + rope * 2
    return (lora + rope) * e


def indexer_bytes_per_token(m: ModelSpec) -> int:
    """One layer's indexer key per token (0 without DeepSeek sparse attention), whatever --kv-cache-dtype."""
    if m.indexer is None:
        return 0
    d = m.indexer.head_dim
    return d + -(-d // SCALE_GROUP) * 4


@lru_cache(maxsize=256)
def kv_stages(m: ModelSpec, kv_dtype: str = "auto", tp: int = 1, pp: int = 1,
              batched_tokens: int | None = None) -> tuple[KvShape, ...]:
    """KV layout per GPU of each PP stage (stages can differ in layer count and, with interleaved
    attention, in how many of their layers are full, sliding or linear)."""
    e = kv_element_bytes(m, kv_dtype)
    if m.mla is not None:
        per_layer = mla_bytes_per_token(m, kv_dtype) + indexer_bytes_per_token(m)
        full_layer = per_layer
    else:
        per_layer = 2 * kv_heads_per_rank(m, tp) * m.head_dim * e
        full_layer = 2 * kv_heads_per_rank(m, tp, m.full_kv_heads) * (m.full_head_dim or m.head_dim) * e
    state = m.linear.state_bytes_per_sequence // tp if m.linear is not None else 0
    stages = []
    for lo, hi in stage_layers(m.num_layers, pp):
        kinds = m.layer_kinds[lo:hi]
        stages.append(
            KvShape(
                full_bytes_per_token=full_layer * kinds.count(FULL),
                sliding_bytes_per_token=per_layer * kinds.count(SLIDING),
                window=m.sliding_window,
                state_bytes_per_sequence=state * kinds.count(LINEAR),
                element_bytes=e,
                batched_tokens=batched_tokens,
                chunked_bytes_per_token=per_layer * kinds.count(CHUNKED),
                chunk=m.chunk_size,
                layer_counts=(kinds.count(FULL), kinds.count(SLIDING), kinds.count(LINEAR), kinds.count(CHUNKED)),
            )
        )
    return tuple(stages)


def kv_shape(m: ModelSpec, kv_dtype: str = "auto", tp: int = 1, pp: int = 1, context: int | None = None) -> KvShape:
    """KV layout of the stage that holds the most KV per sequence at `context` tokens (default: the model's
    maximum context)."""
    ctx = context or m.max_position_embeddings
    return max(kv_stages(m, kv_dtype, tp, pp), key=lambda s: s.bytes_per_sequence(ctx))
