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
- Image models (V1): before the text pass vLLM encodes a batch of maximum-size dummy images and keeps their
  embeddings in the encoder cache until the profile ends (vllm/v1/worker/gpu_model_runner.py profile_run and
  Model Runner V2's encoder_runner.py; item count from vllm/multimodal/encoder_budget.py). The peak is the
  larger of the encoder pass and the text/sampler pass plus the held embeddings. Modelled for towers with a
  fixed image size (gemma-3's SigLIP); derived from that code, not yet checked against a log that shows the
  encoder's share separately (notes/research-vllm-memory.md §5).
"""


from typing import NamedTuple

from wizard.sizing.engines import EngineProfile
from wizard.specs import ModelSpec, VisionEncoderSpec

ACT_BYTES = 2  # activations are 16-bit whatever the weight format
DEFAULT_MM_LIMIT = 999  # --limit-mm-per-prompt default per modality (vLLM 0.33.0)


class ActivationPeak(NamedTuple):
    """Bytes per GPU: the forward pass, the sampler pass, the image encoder's pass, and the peak."""

    forward: int
    sampler: int
    tokens: int  # max_num_batched_tokens profiled
    sequences: int  # max_num_seqs profiled
    bytes_per_logit: int
    encoder: int = 0  # the image encoder over `encoder_items` dummy images (0: no modelled encoder)
    encoder_items: int = 0
    encoder_outputs: int = 0  # their embeddings, kept in the encoder cache through the text and sampler passes

    @property
    def peak(self) -> int:
        # The encoder runs first and frees its temporaries; its outputs stay while the text passes run.
        return max(self.encoder, max(self.forward, self.sampler) + self.encoder_outputs)


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


def encoder_items(v: VisionEncoderSpec, max_num_batched_tokens: int, max_num_seqs: int, max_model_len: int) -> int:
    """Dummy images vLLM's V1 profile encodes at once (vllm/multimodal/encoder_budget.py, _get_max_items).

    budget = max(max_num_batched_tokens, tokens per image) (the encoder compute budget and cache size default to
    it; neither is a `vllm serve` flag in 0.33.0); items = min(budget // tokens per image, max_num_seqs × images
    one prompt can hold (min(999, max_model_len // tokens per image), at least 1)), at least 1. Tokens per image
    is the model's embeddings per image (gemma-3: 256); older builds also counted the begin/end-of-image tokens
    (a v0.11 log: 31 images at 8,192 tokens, not 32), so this may count one image more: the safe side.
    """
    per_item = v.tokens_per_item
    budget = max(max_num_batched_tokens, per_item)
    per_prompt = max(1, min(DEFAULT_MM_LIMIT, max_model_len // per_item))
    return max(1, min(budget // per_item, max_num_seqs * per_prompt))


def encoder_bytes_per_item(v: VisionEncoderSpec, tp: int) -> int:
    """Live bytes per dummy image at the encoder's widest point, per TP rank (vLLM siglip.py, bf16).

    MLP phase: the pixels, 3 hidden states (the patch embeddings kept for the whole pass, the residual, the
    layer-norm output) and fc1's output with its GELU (2 × intermediate / TP). Attention phase: the pixels,
    4 hidden states and q, k, v, the output and their contiguous copies (7 × hidden / TP); flash or
    memory-efficient attention keeps no S² score matrix. The larger phase is the peak.
    """
    s, h = v.patches_per_item, v.hidden_size
    mlp = 3 * s * h + 2 * s * v.intermediate_size // tp
    attention = 4 * s * h + 7 * s * h // tp
    return ACT_BYTES * (v.pixels_per_item + max(mlp, attention))


def activation_peak(m: ModelSpec, tp: int, max_num_batched_tokens: int, max_num_seqs: int,
                    engine: EngineProfile, max_model_len: int = 0, sampler_kind: str = "flashinfer") -> ActivationPeak:
    """Peak activation bytes per GPU of vLLM's profile run for these scheduler limits, as `engine`'s generation
    profiles it (the sampler's rows and bytes per logit: data/vllm-engines.json) with this top-k/top-p sampler
    ("flashinfer" or "native")."""
    forward = max_num_batched_tokens * forward_bytes_per_token(m, tp)
    rows = engine.sampler_sequences(max_num_seqs, max_num_batched_tokens)
    per_logit = engine.sampler_bytes(sampler_kind)
    sampler = rows * m.vocab_size * per_logit
    encoder = items = outputs = 0
    v = m.vision_encoder
    if v is not None and engine.encoder_profile:  # V1 profiles the image encoder before the text pass
        items = encoder_items(v, max_num_batched_tokens, max_num_seqs, max_model_len or m.max_position_embeddings)
        encoder = items * encoder_bytes_per_item(v, tp)
        outputs = items * v.tokens_per_item * m.hidden_size * ACT_BYTES
    return ActivationPeak(forward=forward, sampler=sampler, tokens=max_num_batched_tokens, sequences=rows,
                          bytes_per_logit=per_logit, encoder=encoder, encoder_items=items,
                          encoder_outputs=outputs)
