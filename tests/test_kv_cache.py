"""KV cache per token and per sequence (wizard.sizing.kv_cache.kv_shape) against hand arithmetic.

Rules written out here (sizing-notes "KV cache per token"): standard/GQA/MQA keep 2 (K and V) x KV heads x
head_dim x bytes per layer and token; MLA keeps (kv_lora_rank + qk_rope_head_dim) x bytes per layer, no
factor 2 and no heads, replicated on every TP rank; sliding-window layers keep at most `sliding_window`
tokens; linear-attention layers keep a fixed state per sequence. Under TP each rank keeps KV heads / TP
heads, one replicated head when KV heads < TP. KV dtype fp8 is 1 byte, "auto" the 16-bit model dtype.
"""

from __future__ import annotations

import pytest

from hf_configs import from_dict, spec, variant
from wizard.sizing.kv_cache import kv_shape


# --------------------------------------------------------------------------------------- Llama-3.1-8B
def test_llama_8b_bf16_per_token_is_the_reference():
    per_token = 2 * 32 * 8 * 128 * 2  # K and V x 32 layers x 8 KV heads x head_dim 128 x 2 bytes
    assert per_token == 131_072  # sizing-notes reference
    kv = kv_shape(spec("meta-llama__Meta-Llama-3.1-8B"))
    assert kv.bytes_per_token(8192) == per_token
    assert kv.bytes_per_sequence(8192) == per_token * 8192
    assert kv.uncapped_bytes_per_token == per_token


def test_llama_8b_fp8_kv_is_half_of_auto():
    m = spec("meta-llama__Meta-Llama-3.1-8B")
    assert kv_shape(m, "fp8").bytes_per_token(8192) == 2 * 32 * 8 * 128 * 1 == 65_536


@pytest.mark.parametrize("tp, heads_per_rank", [(1, 8), (2, 4), (4, 2), (8, 1), (16, 1)])
def test_llama_8b_kv_heads_split_then_replicate(tp, heads_per_rank):
    # 8 KV heads: TP 2/4/8 split them; TP 16 > 8 heads, so each rank keeps one (replicated) head
    kv = kv_shape(spec("meta-llama__Meta-Llama-3.1-8B"), "auto", tp=tp)
    assert kv.bytes_per_token(4096) == 2 * 32 * heads_per_rank * 128 * 2


def test_mqa_variant_keeps_its_single_head_on_every_rank():
    # Variant: Meta-Llama-3.1-8B's config with num_key_value_heads = 1 (MQA), everything else unchanged
    m = from_dict(variant("meta-llama__Meta-Llama-3.1-8B", num_key_value_heads=1))
    assert m.attention == "mqa"
    one_head = 2 * 32 * 1 * 128 * 2
    assert one_head == 16_384
    assert kv_shape(m).bytes_per_token(1000) == one_head
    assert kv_shape(m, tp=8).bytes_per_token(1000) == one_head  # not 16,384 / 8: the head is replicated


def test_qwen3_8b_uses_explicit_head_dim():
    # 36 layers, 8 KV heads, head_dim 128
    assert kv_shape(spec("Qwen__Qwen3-8B")).bytes_per_token(2048) == 2 * 36 * 8 * 128 * 2 == 147_456


# ------------------------------------------------------------------------------------------ MLA
def test_deepseek_v3_mla_latent_per_token():
    mla = 61 * (512 + 64) * 2  # layers x (kv_lora_rank + qk_rope_head_dim) x 2 bytes, no factor 2
    assert mla == 70_272  # sizing-notes reference
    m = spec("deepseek-ai__DeepSeek-V3")
    assert kv_shape(m).bytes_per_token(8192) == mla
    assert kv_shape(m, "fp8").bytes_per_token(8192) == 61 * 576 * 1 == 35_136
    # 16 sequences x 8k: 9.2 GB (peer calculators report 229 GB, sizing-notes)
    assert kv_shape(m).bytes_per_sequence(8192) * 16 == 70_272 * 8192 * 16
    assert round(70_272 * 8192 * 16 / 1e9, 1) == 9.2


@pytest.mark.parametrize("tp", [1, 2, 8, 16])
def test_mla_latent_does_not_shrink_with_tp(tp):
    assert kv_shape(spec("deepseek-ai__DeepSeek-V3"), tp=tp).bytes_per_token(4096) == 61 * 576 * 2


def test_mla_splits_by_pp_stage():
    # 61 layers over PP 2: vLLM gives [31, 30]; the heaviest GPU holds 31 layers' latents
    assert kv_shape(spec("deepseek-ai__DeepSeek-V3"), pp=2).bytes_per_token(4096) == 31 * 576 * 2


def test_pp_uneven_split_kv_of_the_largest_stage():
    # Llama-3.1-70B: 80 layers over PP 3 -> [27, 27, 26]; 8 KV heads x 128, TP 2 -> 4 heads per rank
    kv = kv_shape(spec("meta-llama__Meta-Llama-3.1-70B"), tp=2, pp=3)
    assert kv.bytes_per_token(4096) == 2 * 27 * 4 * 128 * 2


# ---------------------------------------------------------------------------- sliding windows
def test_gemma_2_sliding_layers_capped_at_the_window():
    m = spec("google__gemma-2-9b-it")
    per_layer = 2 * 8 * 256 * 2  # K and V x 8 KV heads x head_dim 256 x 2 bytes
    full_layers, sliding_layers, window = 21, 21, 4096  # even layers local, odd layers global
    kv = kv_shape(m)
    assert kv.window == window
    assert kv.uncapped_bytes_per_token == 42 * per_layer == 344_064
    # 16 sequences of 8k tokens: 45.10 GB if every layer kept the whole context (V0, most calculators)
    every_layer_full = 16 * 8192 * 42 * per_layer
    assert round(every_layer_full / 1e9, 2) == 45.10  # sizing-notes reference
    assert 16 * kv.uncapped_bytes_per_token * 8192 == every_layer_full
    # 33.82 GB with the 21 local layers capped at 4096 tokens (vLLM V1's hybrid KV cache manager)
    capped = 16 * (full_layers * per_layer * 8192 + sliding_layers * per_layer * window)
    assert round(capped / 1e9, 2) == 33.82  # sizing-notes reference
    assert 16 * kv.bytes_per_sequence(8192) == capped
    # below the window, sliding layers hold every token
    assert kv.bytes_per_sequence(4096) == 42 * per_layer * 4096


def test_gemma_2_pp_heaviest_stage_depends_on_the_context():
    # gemma-2-9b over PP 2: stage 0 holds layers 0..20 (11 sliding: the even ones, 10 full), stage 1 holds
    # layers 21..41 (11 full: the odd ones, 10 sliding). Beyond the 4096-token window stage 1 holds more KV
    # per sequence; the heaviest GPU is stage 1, whatever context the question asks about.
    per_layer = 2 * 8 * 256 * 2
    stage0 = per_layer * (10 * 8192 + 11 * 4096)
    stage1 = per_layer * (11 * 8192 + 10 * 4096)
    assert stage1 > stage0
    assert kv_shape(spec("google__gemma-2-9b-it"), pp=2, context=8192).bytes_per_sequence(8192) == stage1


def test_gpt_oss_layer_types_sliding_128():
    # gpt-oss-20b: layer_types alternate sliding (window 128) and full; 8 KV heads x head_dim 64
    per_layer = 2 * 8 * 64 * 2
    kv = kv_shape(spec("openai__gpt-oss-20b"))
    assert kv.bytes_per_sequence(8192) == 12 * per_layer * 8192 + 12 * per_layer * 128
    assert kv.bytes_per_sequence(100) == 24 * per_layer * 100
    # TP 8: one KV head per rank
    kv8 = kv_shape(spec("openai__gpt-oss-20b"), tp=8)
    assert kv8.bytes_per_sequence(8192) == 12 * (2 * 1 * 64 * 2) * (8192 + 128)


def test_average_per_token_rounds_up():
    # gpt-oss-120b at 8192 tokens: (18 full x 8192 + 18 sliding x 128) x 2048 B over 8192 tokens
    kv = kv_shape(spec("openai__gpt-oss-120b"))
    per_seq = 18 * 2048 * 8192 + 18 * 2048 * 128
    assert kv.bytes_per_sequence(8192) == per_seq
    assert kv.bytes_per_token(8192) == -(-per_seq // 8192)


# --------------------------------------------------------------------------- hybrid linear attention
def test_qwen3_next_full_layers_per_token_linear_layers_per_sequence():
    m = spec("Qwen__Qwen3-Next-80B-A3B-Thinking")
    full = 12 * 2 * 2 * 256 * 2  # 12 full-attention layers x K,V x 2 KV heads x head_dim 256 x 2 bytes
    conv_dim = 2 * 16 * 128 + 32 * 128  # 2 key_dim + value_dim
    state_per_layer = (conv_dim * (4 - 1) + 32 * 128 * 128) * 2  # conv state + recurrent state, 16-bit
    states = 36 * state_per_layer
    kv = kv_shape(m)
    assert kv.bytes_per_sequence(1) == full + states
    assert kv.bytes_per_sequence(32768) == full * 32768 + states
    # TP 2: one KV head and half of each state per rank
    assert kv_shape(m, tp=2).bytes_per_sequence(32768) == full // 2 * 32768 + states // 2
    # TP 4: still one (replicated) KV head per rank; the states split four ways
    assert kv_shape(m, tp=4).bytes_per_sequence(32768) == full // 2 * 32768 + states // 4


def test_qwen3_next_fp8_kv_halves_attention_but_not_the_recurrent_states():
    # --kv-cache-dtype fp8 applies to the attention KV; the DeltaNet conv/recurrent states keep their dtype
    m = spec("Qwen__Qwen3-Next-80B-A3B-Thinking")
    states = 36 * ((2 * 16 * 128 + 32 * 128) * 3 + 32 * 128 * 128) * 2
    assert kv_shape(m, "fp8").bytes_per_sequence(8192) == 12 * 2 * 2 * 256 * 1 * 8192 + states


# --------------------------------------------------------------------------------- consistency
@pytest.mark.parametrize("name", ["meta-llama__Meta-Llama-3.1-8B", "deepseek-ai__DeepSeek-V3",
                                  "google__gemma-2-9b-it", "openai__gpt-oss-20b", "mistralai__Mixtral-8x7B-v0.1"])
@pytest.mark.parametrize("tp", [1, 2])
def test_fp8_kv_is_exactly_half_of_auto(name, tp):
    m = spec(name)
    auto, fp8 = kv_shape(m, "auto", tp=tp), kv_shape(m, "fp8", tp=tp)
    assert fp8.element_bytes == 1 and auto.element_bytes == 2
    assert 2 * fp8.bytes_per_sequence(8192) == auto.bytes_per_sequence(8192)
