"""Activation peak of vLLM's start-up profile run, per GPU (the memory KV cache cannot use).

vLLM measures the peak of one forward pass over max_num_batched_tokens tokens and of one sampler pass over
max_num_seqs × vocab logits; the two phases do not overlap, so the peak is the larger (sizing-notes "vLLM's
budget rule"). Calibrated on shared/reference/vllm-kv-logs-dev.yaml (copied to tests/data/):
- kv-001 / kv-002 (Llama-3.1-8B, 20,000 and 29,000 batched tokens): the forward peak grows by
  (17.98 − 17.06) GiB / 9,000 tokens = 109,760 B/token ≈ 2 bytes × (3 × intermediate + 3 × hidden) = 110,592
  — the gate/up output, the activated product, and three hidden-size buffers (residual, hidden, normed input).
- kv-015 / kv-016 (Llama-3-8B, 8,192 tokens, 256 sequences): 1.26 GiB at TP 1 and at TP 2, above the forward
  estimate (0.84 GiB) and not split by TP: the sampler over gathered full-vocabulary logits dominates,
  1.26 GiB / (256 × 128,256) ≈ 41 bytes per logit in that V0 build (fp32 logits, probabilities, sort values,
  int64 indices).
- The V1 engine (the target, vLLM 0.33) samples lighter: a v0.26 start-up log of Qwen2.5-7B-AWQ on an RTX 4080
  (2,048 batched tokens, forward 0.33 GiB, 256 sequences) shows a 1.04 GiB peak = 256 × 152,064 × 28.7 B
  (notes/research-vllm-memory.md, table row 1).
"""


from typing import NamedTuple

from wizard.specs import ModelSpec

ACT_BYTES = 2  # activations are 16-bit whatever the weight format
# Bytes per logit of the profile's sampler pass, by engine generation (see module docstring).
SAMPLER_BYTES_PER_LOGIT = {"v0": 41, "v1": 29}


class ActivationPeak(NamedTuple):
    """Bytes per GPU: the forward pass, the sampler pass, and the peak (the larger)."""

    forward: int
    sampler: int
    tokens: int  # max_num_batched_tokens profiled
    sequences: int  # max_num_seqs profiled
    bytes_per_logit: int

    @property
    def peak(self) -> int:
        return max(self.forward, self.sampler)


def forward_bytes_per_token(m: ModelSpec, tp: int) -> int:
    """Live activation bytes per batched token at the widest point of a layer, per TP rank."""
    h = m.hidden_size
    widths = [m.intermediate_size] if m.intermediate_size else []
    moe = m.moe
    if moe is not None:  # fused MoE: every routed copy of the token, plus the shared expert
        widths.append(moe.experts_per_token * moe.expert_intermediate_size + moe.shared_experts * moe.shared_intermediate_size)
    mlp = 3 * max(widths) // tp if m.gated_mlp else 2 * max(widths) // tp
    if m.mla is not None:  # MLA prefill expands the latent into per-head k and v
        n = m.num_attention_heads // tp
        attn = n * (2 * (m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim) + m.mla.v_head_dim)
    else:
        attn = (m.num_attention_heads + 2 * m.num_kv_heads) * m.head_dim // tp + m.num_attention_heads * m.head_dim // tp
    return ACT_BYTES * (max(mlp, attn) + 3 * h)


def activation_peak(m: ModelSpec, tp: int, max_num_batched_tokens: int, max_num_seqs: int,
                    engine: str = "v1") -> ActivationPeak:
    """Peak activation bytes per GPU of vLLM's profile run for these scheduler limits."""
    forward = max_num_batched_tokens * forward_bytes_per_token(m, tp)
    sampler = max_num_seqs * m.vocab_size * SAMPLER_BYTES_PER_LOGIT[engine]
    return ActivationPeak(forward=forward, sampler=sampler, tokens=max_num_batched_tokens, sequences=max_num_seqs,
                          bytes_per_logit=SAMPLER_BYTES_PER_LOGIT[engine])
