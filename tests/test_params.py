"""Parameter counts (wizard.sizing.params.count_params) against hand arithmetic from each config's fields.

Every expected number below is written out from the config.json keys (shapes follow the transformers
modelling code of the family); where a public reference count exists (sizing-notes "Reference counts",
model cards) it is asserted too. Active parameters follow the convention the core documents: routed experts
count k/E of their copies, the input embedding (a lookup) is not active, lm_head is. The gpt-oss model card
uses the same convention (its "active" 5.13B / 3.61B include the unembedding, not the embedding).
"""

from __future__ import annotations

import pytest

from hf_configs import from_dict, llama_3_2_11b_vision, load, replace, spec, variant
from wizard.sizing.params import count_params
from wizard.sizing.tensors import inventory
from wizard.specs import ExactWeights


# ----------------------------------------------------------------------------------------------- dense Llama
def test_llama_3_1_8b_total_is_the_reference_count():
    # hidden 4096, 32 layers, 32 heads, 8 KV heads, head_dim 4096/32 = 128, intermediate 14336, vocab 128256
    q = 4096 * (32 * 128)
    k = v = 4096 * (8 * 128)
    o = (32 * 128) * 4096
    mlp = 3 * 4096 * 14336  # gate, up, down (SwiGLU)
    norms = 2 * 4096  # input_layernorm, post_attention_layernorm
    per_layer = q + k + v + o + mlp + norms
    embed = 128256 * 4096
    lm_head = 128256 * 4096  # tie_word_embeddings: false
    expected = embed + 32 * per_layer + 4096 + lm_head
    assert expected == 8_030_261_248  # sizing-notes reference
    p = count_params(spec("meta-llama__Meta-Llama-3.1-8B"))
    assert p.total == expected
    assert p.computed_total == expected and not p.exact
    assert p.active == expected - embed  # dense: everything but the embedding lookup


def test_llama_3_1_70b_total_is_the_reference_count():
    # hidden 8192, 80 layers, 64 heads, 8 KV heads, head_dim 128, intermediate 28672, vocab 128256
    q = 8192 * (64 * 128)
    k = v = 8192 * (8 * 128)
    o = (64 * 128) * 8192
    per_layer = q + k + v + o + 3 * 8192 * 28672 + 2 * 8192
    expected = 2 * 128256 * 8192 + 80 * per_layer + 8192
    assert expected == 70_553_706_496  # sizing-notes reference
    assert count_params(spec("meta-llama__Meta-Llama-3.1-70B")).total == expected


# ------------------------------------------------------------------------------------- Qwen2.5: q/k/v biases
def test_qwen2_5_7b_counts_the_qkv_biases_and_no_o_bias():
    # qwen2: q, k, v projections carry biases, o_proj does not (modeling_qwen2). hidden 3584, 28 heads,
    # 4 KV heads, head_dim 3584/28 = 128, intermediate 18944, vocab 152064, untied
    q = 3584 * 3584
    k = v = 3584 * (4 * 128)
    o = 3584 * 3584
    qkv_bias = 3584 + 2 * (4 * 128)
    per_layer = q + k + v + o + qkv_bias + 3 * 3584 * 18944 + 2 * 3584
    expected = 2 * 152064 * 3584 + 28 * per_layer + 3584
    assert expected == 7_615_616_512  # sizing-notes reference
    m = spec("Qwen__Qwen2.5-7B-Instruct")
    assert m.qkv_bias and not m.o_bias
    assert count_params(m).total == expected


# ------------------------------------------------------------------ Qwen3: qk-norm, explicit head_dim, tied
def test_qwen3_0_6b_tied_embedding_counted_once():
    # head_dim 128 is explicit (hidden 1024 / 16 heads would give 64); q_norm and k_norm are head_dim wide
    q = 1024 * (16 * 128)
    k = v = 1024 * (8 * 128)
    o = (16 * 128) * 1024
    qk_norm = 2 * 128
    per_layer = q + k + v + o + qk_norm + 3 * 1024 * 3072 + 2 * 1024
    embed = 151936 * 1024
    expected = embed + 28 * per_layer + 1024  # tie_word_embeddings: true -> no separate lm_head
    assert expected == 596_049_920  # Qwen3-0.6B's published 0.6B
    m = spec("Qwen__Qwen3-0.6B")
    assert m.head_dim == 128 and m.tie_word_embeddings and m.qk_norm
    p = count_params(m)
    assert p.total == expected
    assert p.total != expected + embed  # the +26 % double count sizing-notes warns about
    assert not any(t.name == "lm_head" for t in inventory(m))


@pytest.mark.parametrize("name", ["Qwen__Qwen3-0.6B", "google__gemma-2-9b-it"])
def test_tied_output_head_is_active(name):
    # With tie_word_embeddings the one matrix is also the output head, a matmul every token goes through.
    # Under the core's own convention (lm_head active, the embedding lookup not) it must count as active
    # once, exactly as the untied lm_head of Llama does: active = total for a tied dense model.
    p = count_params(spec(name))
    assert p.active == p.total


def test_qwen3_8b_explicit_head_dim_and_qk_norm():
    # hidden 4096, 32 heads, head_dim 128 (explicit), 8 KV heads, intermediate 12288, 36 layers, untied
    per_layer = (4096 * 4096 + 2 * 4096 * 1024 + 4096 * 4096) + 2 * 128 + 3 * 4096 * 12288 + 2 * 4096
    expected = 2 * 151936 * 4096 + 36 * per_layer + 4096
    assert count_params(spec("Qwen__Qwen3-8B")).total == expected
    assert round(expected / 1e9, 1) == 8.2  # Qwen3-8B model card: 8.2B


# -------------------------------------------------------------- gemma-2: head_dim 256, 4 norms, tied
def test_gemma_2_9b_head_dim_256_four_norms_tied():
    # head_dim 256 explicit (3584 / 16 = 224 would be wrong); 16 heads, 8 KV heads, intermediate 14336,
    # 42 layers, vocab 256000; gemma2 keeps pre/post attention and pre/post feed-forward norms (4 per layer)
    q = 3584 * (16 * 256)
    k = v = 3584 * (8 * 256)
    o = (16 * 256) * 3584
    per_layer = q + k + v + o + 3 * 3584 * 14336 + 4 * 3584
    expected = 256000 * 3584 + 42 * per_layer + 3584  # tied (gemma default): one embedding matrix
    assert expected == 9_241_705_984  # sizing-notes reference (tied)
    m = spec("google__gemma-2-9b-it")
    assert m.head_dim == 256 and m.norms_per_layer == 4 and m.tie_word_embeddings
    assert count_params(m).total == expected


# ------------------------------------------------------------------------------------- Mixtral: MoE
def test_mixtral_8x7b_total_and_active():
    # 8 experts of width 14336 (intermediate_size is per expert), 2 per token, router 8 x 4096, no biases
    attn = 4096 * 4096 + 2 * 4096 * 1024 + 4096 * 4096
    expert = 3 * 4096 * 14336
    router = 8 * 4096
    norms = 2 * 4096
    lm_head = 32000 * 4096
    expected_total = 32000 * 4096 + 32 * (attn + 8 * expert + router + norms) + 4096 + lm_head
    assert expected_total == 46_702_792_704  # sizing-notes reference
    expected_active = 32 * (attn + 2 * expert + router + norms) + 4096 + lm_head
    p = count_params(spec("mistralai__Mixtral-8x7B-v0.1"))
    assert p.total == expected_total
    assert p.active == expected_active  # 12.75 B; Mistral's "12.9B active" also counts the embedding
    assert p.active + 32000 * 4096 == 12_879_925_248


# ------------------------------------------------------------------------------------ Qwen3 MoE
def test_qwen3_30b_a3b_total_and_active():
    # hidden 2048, 48 layers, 32 heads x 128, 4 KV heads, 128 experts of width 768 (moe_intermediate_size),
    # 8 per token, no shared expert, router 128 x 2048 without bias, q/k norms, untied
    attn = 2048 * (32 * 128) + 2 * 2048 * (4 * 128) + (32 * 128) * 2048 + 2 * 128
    expert = 3 * 2048 * 768
    router = 128 * 2048
    norms = 2 * 2048
    embed = lm_head = 151936 * 2048
    expected_total = embed + 48 * (attn + 128 * expert + router + norms) + 2048 + lm_head
    assert expected_total == 30_532_122_624  # "30.5B in total" (Qwen3-30B-A3B model card)
    expected_active = 48 * (attn + 8 * expert + router + norms) + 2048 + lm_head
    p = count_params(spec("Qwen__Qwen3-30B-A3B"))
    assert p.total == expected_total
    assert p.active == expected_active
    # The model card's "3.3B activated" adds the input embedding, which this convention leaves out
    assert 3.3e9 <= expected_active + embed < 3.4e9


def test_qwen3_235b_a22b_total_and_active():
    # hidden 4096, 94 layers, 64 heads x 128, 4 KV heads, 128 experts of width 1536, 8 per token
    attn = 4096 * (64 * 128) + 2 * 4096 * (4 * 128) + (64 * 128) * 4096 + 2 * 128
    expert = 3 * 4096 * 1536
    router = 128 * 4096
    norms = 2 * 4096
    lm_head = 151936 * 4096
    expected_total = 151936 * 4096 + 94 * (attn + 128 * expert + router + norms) + 4096 + lm_head
    expected_active = 94 * (attn + 8 * expert + router + norms) + 4096 + lm_head
    p = count_params(spec("Qwen__Qwen3-235B-A22B"))
    assert p.total == expected_total
    assert p.active == expected_active
    assert round(expected_total / 1e9) == 235 and round(expected_active / 1e9) == 22


# ------------------------------------------------------------------- DeepSeek-V3: MLA + MoE + dense layers
def _deepseek_v3_parts():
    h, heads = 7168, 128
    q_lora, kv_lora, nope, rope, v_dim = 1536, 512, 128, 64, 128
    attn = (
        q_lora * h  # q_a_proj
        + q_lora  # q_a_layernorm
        + heads * (nope + rope) * q_lora  # q_b_proj
        + (kv_lora + rope) * h  # kv_a_proj_with_mqa
        + kv_lora  # kv_a_layernorm
        + heads * (nope + v_dim) * kv_lora  # kv_b_proj
        + h * heads * v_dim  # o_proj
    )
    norms = 2 * h
    dense_mlp = 3 * h * 18432  # first_k_dense_replace = 3 layers keep intermediate_size 18432
    expert = 3 * h * 2048  # moe_intermediate_size 2048
    router = 256 * h
    correction_bias = 256  # e_score_correction_bias (topk_method noaux_tc)
    shared = 1 * expert  # n_shared_experts = 1, same width
    embed = lm_head = 129280 * h
    return attn, norms, dense_mlp, expert, router, correction_bias, shared, embed, lm_head


def test_deepseek_v3_total_is_the_reference_count():
    attn, norms, dense_mlp, expert, router, bias, shared, embed, lm_head = _deepseek_v3_parts()
    dense_layer = attn + norms + dense_mlp
    moe_layer = attn + norms + router + bias + 256 * expert + shared
    expected = embed + 3 * dense_layer + 58 * moe_layer + 7168 + lm_head  # 61 layers, MTP layer excluded
    assert expected == 671_026_419_200  # sizing-notes reference
    m = spec("deepseek-ai__DeepSeek-V3")
    assert m.mla is not None and m.moe is not None
    assert m.moe.dense_layers == (0, 1, 2) and m.moe.shared_experts == 1 and m.moe.router_bias
    assert count_params(m).total == expected


def test_deepseek_v3_active_counts_shared_expert_and_dense_layers():
    attn, norms, dense_mlp, expert, router, bias, shared, embed, lm_head = _deepseek_v3_parts()
    dense_layer = attn + norms + dense_mlp
    moe_active = attn + norms + router + bias + 8 * expert + shared  # 8 routed of 256 + the shared one
    expected = 3 * dense_layer + 58 * moe_active + 7168 + lm_head
    assert count_params(spec("deepseek-ai__DeepSeek-V3")).active == expected
    assert round(expected / 1e9) == 37  # DeepSeek-V3's "37B activated"


# -------------------------------------------------------------------------------------------- gpt-oss
def _gpt_oss(layers: int, experts: int) -> tuple[int, int]:
    # hidden 2880, 64 heads x head_dim 64, 8 KV heads, attention_bias true (q, k, v and o biases),
    # one learned sink per head; experts: gate_up (2 x 2880 x 2880) + down (2880 x 2880) with biases
    # 2*2880 and 2880; router 2880 -> E with bias; 4 experts per token; untied, vocab 201088
    h = 2880
    attn = h * 4096 + 2 * h * 512 + 4096 * h + (4096 + 512 + 512 + h) + 64
    expert = 2 * h * 2880 + 2880 * h + 2 * 2880 + h
    router = experts * h + experts
    norms = 2 * h
    embed = lm_head = 201088 * h
    total = embed + layers * (attn + experts * expert + router + norms) + h + lm_head
    active = layers * (attn + 4 * expert + router + norms) + h + lm_head
    return total, active


def test_gpt_oss_20b_total_and_active_match_the_model_card():
    total, active = _gpt_oss(layers=24, experts=32)
    p = count_params(spec("openai__gpt-oss-20b"))
    assert p.total == total
    assert p.active == active
    assert round(total / 1e9, 2) == 20.91 and round(active / 1e9, 2) == 3.61  # gpt-oss model card, Table 1


def test_gpt_oss_120b_total_and_active_match_the_model_card():
    total, active = _gpt_oss(layers=36, experts=128)
    m = spec("openai__gpt-oss-120b")
    assert m.attention_sinks and m.qkv_bias and m.o_bias and m.moe is not None and m.moe.expert_bias
    assert m.intermediate_size == 0  # no dense MLP: intermediate_size is the expert width
    p = count_params(m)
    assert p.total == total
    assert p.active == active
    assert round(total / 1e9, 2) == 116.83 and round(active / 1e9, 2) == 5.13  # gpt-oss model card


# ----------------------------------------------------------------------- hybrid linear attention: Qwen3-Next
def test_qwen3_next_hybrid_layers():
    # 48 layers; full_attention_interval 4 -> layers 3, 7, ..., 47 are gated full attention (12), the other
    # 36 are Gated DeltaNet. Full attention: q_proj emits query and gate (2 x 16 heads x head_dim 256),
    # 2 KV heads, o_proj from 16 x 256, q/k norms of head_dim. DeltaNet (transformers Qwen3NextGatedDeltaNet):
    # key_dim = 16 x 128, value_dim = 32 x 128, conv_dim = 2 key_dim + value_dim, kernel 4.
    h = 2048
    full_attn = h * (2 * 16 * 256) + 2 * h * (2 * 256) + (16 * 256) * h + 2 * 256
    key_dim, value_dim = 16 * 128, 32 * 128
    conv_dim = 2 * key_dim + value_dim
    deltanet = (
        h * (2 * key_dim + 2 * value_dim)  # in_proj_qkvz
        + h * (2 * 32)  # in_proj_ba
        + conv_dim * 4  # depthwise conv1d weight, no bias
        + 32 + 32  # dt_bias, A_log
        + 128  # gated RMSNorm over one value head
        + value_dim * h  # out_proj
    )
    # MoE in every layer: 512 experts of width 512, 10 per token, one shared expert of width 512 with a
    # sigmoid gate (1 x hidden), router 512 x hidden
    expert = 3 * h * 512
    moe_static = 512 * h + 3 * h * 512 + h  # router + shared expert + shared_expert_gate
    norms = 2 * h
    lm_head = 151936 * h
    expected_total = (151936 * h + 12 * (full_attn + norms + moe_static + 512 * expert)
                      + 36 * (deltanet + norms + moe_static + 512 * expert) + h + lm_head)
    expected_active = (12 * (full_attn + norms + moe_static + 10 * expert)
                       + 36 * (deltanet + norms + moe_static + 10 * expert) + h + lm_head)
    m = spec("Qwen__Qwen3-Next-80B-A3B-Thinking")
    assert m.linear is not None and m.linear.params_per_layer == deltanet
    p = count_params(m)
    assert p.total == expected_total
    assert p.active == expected_active
    assert round(expected_total / 1e9) == 80 and 3e9 <= expected_active < 4e9  # "80B ... 3B activated"


# ----------------------------------------------------------------------------------------- MQA variant
def test_mqa_variant_shrinks_k_and_v_only():
    # Variant: Meta-Llama-3.1-8B's config with num_key_value_heads = 1 (MQA), everything else unchanged.
    m = from_dict(variant("meta-llama__Meta-Llama-3.1-8B", num_key_value_heads=1))
    assert m.attention == "mqa"
    per_layer = 4096 * 4096 + 2 * 4096 * (1 * 128) + 4096 * 4096 + 3 * 4096 * 14336 + 2 * 4096
    expected = 2 * 128256 * 4096 + 32 * per_layer + 4096
    assert count_params(m).total == expected
    assert expected == 8_030_261_248 - 32 * 2 * 4096 * (8 - 1) * 128  # 7 KV heads fewer in k and v


# --------------------------------------------------------------------------------- multimodal text_config
def _multimodal_config() -> dict:
    # A small LLaVA-style config built here: the language model sits in text_config (a Llama), a
    # SigLIP-like ViT in vision_config. Not a real checkpoint.
    return {
        "architectures": ["LlavaForConditionalGeneration"],
        "model_type": "llava",
        "tie_word_embeddings": False,
        "text_config": {
            "model_type": "llama", "hidden_size": 1024, "num_hidden_layers": 4, "num_attention_heads": 16,
            "num_key_value_heads": 4, "intermediate_size": 2816, "vocab_size": 32064,
            "max_position_embeddings": 4096,
        },
        "vision_config": {
            "model_type": "siglip_vision_model", "hidden_size": 1152, "intermediate_size": 4304,
            "num_hidden_layers": 27, "patch_size": 14, "image_size": 384,
        },
    }


def test_multimodal_reads_the_language_model_from_text_config():
    m = from_dict(_multimodal_config())
    assert (m.hidden_size, m.num_layers, m.num_attention_heads, m.num_kv_heads, m.head_dim) == (1024, 4, 16, 4, 64)
    assert m.model_type == "llama" and m.vocab_size == 32064
    # language model: head_dim 1024 / 16 = 64
    per_layer = 1024 * 1024 + 2 * 1024 * (4 * 64) + 1024 * 1024 + 3 * 1024 * 2816 + 2 * 1024
    text_total = 2 * 32064 * 1024 + 4 * per_layer + 1024
    # vision tower (ViT): per layer q, k, v, o with biases, fc1/fc2 with biases, two LayerNorms (w + b);
    # patch conv 3 x 14 x 14 x h + bias, (384 / 14)^2 = 27^2 position embeddings, post LayerNorm
    vh, vi = 1152, 4304
    tower = (27 * (4 * vh * vh + 4 * vh + vh * vi + vi + vi * vh + vh + 2 * 2 * vh)
             + 3 * 14 * 14 * vh + vh + 27 * 27 * vh + 2 * vh)
    projector_max = (vh * 1024 + 1024) + (1024 * 1024 + 1024)  # at most a 2-layer MLP projector
    assert tower <= m.vision_params <= tower + projector_max
    p = count_params(m)
    assert p.total == text_total + m.vision_params
    assert p.active == text_total - 32064 * 1024  # the tower does no per-text-token work
    assert any("multimodal" in n for n in m.notes)


# -------------------------------------------------------------------------------------- exact override
def test_exact_params_override_the_arithmetic_but_keep_the_computed_figure():
    m = spec("meta-llama__Meta-Llama-3.1-8B")
    exact = replace(m, exact=ExactWeights(params=8_030_000_000, bytes=16_060_000_000, source="headers"))
    p = count_params(exact)
    assert p.total == 8_030_000_000 and p.exact and p.source == "headers"
    assert p.computed_total == 8_030_261_248


@pytest.mark.parametrize("name", ["meta-llama__Meta-Llama-3.1-8B", "Qwen__Qwen3-30B-A3B", "openai__gpt-oss-20b",
                                  "deepseek-ai__DeepSeek-V3", "Qwen__Qwen3-Next-80B-A3B-Thinking"])
def test_active_never_exceeds_total(name):
    p = count_params(spec(name))
    assert 0 < p.active < p.total


# ------------------------------------------------------------------------- Llama 3.2 Vision (mllama): towers
def mllama_vision_tower_by_hand() -> int:
    # transformers MllamaVisionModel: hidden 1280, intermediate 5120, 560-px tiles of 14-px patches
    # (40² + 1 class token = 1601 positions), 4 tiles, 8 aspect ratios + 1 padding id, 32 local + 8 global layers.
    h, inter, positions, tiles, ratio_ids = 1280, 5120, 40 * 40 + 1, 4, 8 + 1
    layer = 4 * h * h + (h * inter + inter) + (inter * h + h) + 2 * (2 * h)  # q,k,v,o (no bias), fc1, fc2, 2 LNs
    encoders = 32 * layer + 8 * (layer + 2)  # global layers add gate_attn and gate_ffn
    patch_conv = 3 * 14 * 14 * h
    position = 1 + positions * h + ratio_ids * tiles * positions * h  # gate, embedding, tile embedding
    aspect = 2 * (ratio_ids * tiles * h + 1)  # pre/post tile aspect-ratio embeddings with their gates
    tower = patch_conv + h + position + aspect + 2 * (2 * h) + encoders  # + class embedding, LN pre/post
    projector = 7680 * 4096 + 4096  # vision_output_dim -> text hidden, with bias
    return tower + projector


def test_llama_3_2_11b_vision_is_the_safetensors_count():
    # Text: embed_tokens has vocab + 8 rows (image tokens); 32 self-attention + 8 cross-attention layers, the latter
    # with q_norm/k_norm (head_dim 128 each) and two tanh gates; untied lm_head.
    h, kv, inter, vocab = 4096, 8 * 128, 14336, 128256
    self_layer = 2 * h * h + 2 * h * kv + 3 * h * inter + 2 * h
    cross_layer = self_layer + 2 * 128 + 2
    text = (vocab + 8) * h + 32 * self_layer + 8 * cross_layer + h + vocab * h
    expected = text + mllama_vision_tower_by_hand()
    # HfApi().get_safetensors_metadata("meta-llama/Llama-3.2-11B-Vision-Instruct").parameter_count["BF16"], as
    # recorded in GitHub floschne/gimmick src/gimmick/models/__init__.py @ 81c06a5e04ee936534f8519d1f13591505f5182b
    assert expected == 10_670_220_835
    assert count_params(from_dict(llama_3_2_11b_vision())).total == expected


def test_llama_3_2_90b_vision_counts_the_same_tower():
    # hidden 8192, intermediate 28672, 100 layers (20 cross-attention), 64 heads, 8 KV heads, head_dim 128
    h, kv, inter, vocab = 8192, 8 * 128, 28672, 128256
    self_layer = 2 * h * h + 2 * h * kv + 3 * h * inter + 2 * h
    cross_layer = self_layer + 2 * 128 + 2
    projector_11b, projector_90b = 7680 * 4096 + 4096, 7680 * 8192 + 8192
    text = (vocab + 8) * h + 80 * self_layer + 20 * cross_layer + h + vocab * h
    expected = text + mllama_vision_tower_by_hand() - projector_11b + projector_90b
    assert count_params(from_dict(load("meta-llama__Llama-3.2-90B-Vision-Instruct"))).total == expected


@pytest.mark.parametrize(("model_id", "count"), [
    ("Qwen/Qwen2.5-0.5B-Instruct", 494_032_768),
    ("Qwen/Qwen2.5-1.5B-Instruct", 1_543_714_304),
    ("Qwen/Qwen2.5-3B-Instruct", 3_085_938_688),
    ("Qwen/Qwen2.5-7B-Instruct", 7_615_616_512),
    ("Qwen/Qwen2.5-32B-Instruct", 32_763_876_352),
    ("Qwen/Qwen2.5-72B-Instruct", 72_706_203_648),
])
def test_qwen2_5_catalog_counts_are_the_safetensors_counts(model_id, count):
    # HF safetensors metadata parameter_count["BF16"] of each checkpoint, as recorded in GitHub floschne/gimmick
    # src/gimmick/models/__init__.py @ 81c06a5e04ee936534f8519d1f13591505f5182b (get_model_sizes).
    from wizard.sources.catalog import find_entry, load_catalog_model

    entry = find_entry(model_id)
    assert entry is not None
    spec = load_catalog_model(entry)
    assert count_params(spec).total == count
    assert count_params(spec._replace(exact=None)).total == count  # the config arithmetic alone agrees
