"""KV cache bytes per token and per sequence, per GPU (DOMAIN §2: layers × 2 × KV heads × head dim × bytes).

- Standard / GQA / MQA: 2 × kv_heads × head_dim × bytes per full-attention layer; under TP each rank keeps
  kv_heads / TP heads, or one replicated head when kv_heads < TP.
- MLA (DeepSeek): (kv_lora_rank + qk_rope_head_dim) × bytes per layer, no factor 2, replicated on every rank.
- Sliding-window layers keep at most `sliding_window` tokens of each sequence in steady-state decode; vLLM's
  V1 engine budgets them per request at (ceil(min(window − 1 + max_num_batched_tokens, max_model_len) / block)
  + 1) blocks (SlidingWindowSpec.max_memory_usage_bytes: a prefill chunk needs the window behind it), and its
  "Maximum concurrency" uses that budget. Sizing with `batched_tokens` follows the engine; without, steady state.
- Linear-attention / Mamba layers keep a fixed state per sequence, not per token.
Only the layers of one PP stage live on a GPU.
"""


from functools import lru_cache
from typing import NamedTuple

from wizard.sizing.engine import BLOCK_SIZE
from wizard.sizing.layout import stage_layers
from wizard.specs import FULL, LINEAR, SLIDING, ModelSpec


class KvShape(NamedTuple):
    """Per GPU of the heaviest stage: bytes per token of full layers, of sliding layers, and fixed state."""

    full_bytes_per_token: int  # layers that keep the whole context
    sliding_bytes_per_token: int  # layers capped at `window` tokens
    window: int | None
    state_bytes_per_sequence: int  # linear-attention layers
    element_bytes: int
    batched_tokens: int | None = None  # the engine's max_num_batched_tokens: None sizes steady-state decode

    def sliding_tokens(self, context: int) -> int:
        """Tokens a sliding-window layer holds per sequence: the engine's budget, or the window itself."""
        if not self.window:
            return context
        if self.batched_tokens is None:
            return min(context, self.window)
        tokens = min(self.window - 1 + self.batched_tokens, context)
        return (-(-tokens // BLOCK_SIZE) + 1) * BLOCK_SIZE

    def bytes_per_sequence(self, context: int) -> int:
        """KV bytes one sequence of `context` tokens holds on this GPU."""
        return (self.full_bytes_per_token * context + self.sliding_bytes_per_token * self.sliding_tokens(context)
                + self.state_bytes_per_sequence)

    def bytes_per_token(self, context: int) -> int:
        """Average KV bytes per token at this context (equals the plain per-token figure without windows/state)."""
        return -(-self.bytes_per_sequence(context) // context)

    @property
    def uncapped_bytes_per_token(self) -> int:
        """Per-token bytes if every attention layer kept the whole context (what V0 and most calculators assume)."""
        return self.full_bytes_per_token + self.sliding_bytes_per_token


def kv_element_bytes(m: ModelSpec, kv_dtype: str) -> int:
    """Bytes per cached element: fp8 → 1; auto → the model's 16-bit dtype (vLLM's --kv-cache-dtype auto)."""
    return 1 if kv_dtype == "fp8" else m.dtype_bytes


def kv_heads_per_rank(m: ModelSpec, tp: int) -> int:
    """KV heads each TP rank stores: split evenly, or one (replicated) when there are fewer heads than ranks."""
    return max(1, m.num_kv_heads // tp)


@lru_cache(maxsize=256)
def kv_stages(m: ModelSpec, kv_dtype: str = "auto", tp: int = 1, pp: int = 1,
              batched_tokens: int | None = None) -> tuple[KvShape, ...]:
    """KV layout per GPU of each PP stage (stages can differ in layer count and, with interleaved
    attention, in how many of their layers are full, sliding or linear)."""
    e = kv_element_bytes(m, kv_dtype)
    if m.mla is not None:
        per_layer = (m.mla.kv_lora_rank + m.mla.qk_rope_head_dim) * e
    else:
        per_layer = 2 * kv_heads_per_rank(m, tp) * m.head_dim * e
    state = m.linear.state_bytes_per_sequence // tp if m.linear is not None else 0
    stages = []
    for lo, hi in stage_layers(m.num_layers, pp):
        kinds = m.layer_kinds[lo:hi]
        stages.append(
            KvShape(
                full_bytes_per_token=per_layer * kinds.count(FULL),
                sliding_bytes_per_token=per_layer * kinds.count(SLIDING),
                window=m.sliding_window,
                state_bytes_per_sequence=state * kinds.count(LINEAR),
                element_bytes=e,
                batched_tokens=batched_tokens,
            )
        )
    return tuple(stages)


def kv_shape(m: ModelSpec, kv_dtype: str = "auto", tp: int = 1, pp: int = 1, context: int | None = None) -> KvShape:
    """KV layout of the stage that holds the most KV per sequence at `context` tokens (default: the model's
    maximum context)."""
    ctx = context or m.max_position_embeddings
    return max(kv_stages(m, kv_dtype, tp, pp), key=lambda s: s.bytes_per_sequence(ctx))
