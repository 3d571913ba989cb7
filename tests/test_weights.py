"""Weight bytes (wizard.sizing.weights.weight_bytes) against hand arithmetic from each config's fields.

Storage rules written out here (sizing-notes "Quantized checkpoints"): 16-bit = 2 bytes per parameter;
embeddings, lm_head, norms, routers and biases stay 16-bit; FP8 block-quantized linears carry 1 byte per
weight plus one fp32 scale per 128 x 128 block (ceil on both sides); int4 at group 128 carries 0.5 byte per
weight plus, per group of 128 input weights of each output row, a fp16 scale and a 4-bit zero; MXFP4 carries
0.5 byte per weight plus one 1-byte shared exponent per 32 weights. Under TP, matrices and vocab-parallel
embeddings split evenly; norms, biases, routers and MLA's ReplicatedLinear down-projections are replicated.
"""

from __future__ import annotations

import pytest

from hf_configs import replace, spec
from wizard.sizing.params import count_params
from wizard.sizing.weights import weight_bytes
from wizard.specs import ExactWeights


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def fp8_block(rows: int, cols: int) -> int:
    """1 byte per weight + one fp32 scale per 128 x 128 block (DeepSeek-V3 / Qwen3 FP8 weight_scale_inv)."""
    return rows * cols + cdiv(rows, 128) * cdiv(cols, 128) * 4


def int4_g128(rows: int, cols: int) -> int:
    """AWQ/GPTQ int4 at group 128: packed 4-bit values, fp16 scale and 4-bit zero per group of each row."""
    groups = cdiv(cols, 128) * rows
    return rows * cols // 2 + groups * 2 + groups // 2


def mxfp4(rows: int, cols: int) -> int:
    """OCP MXFP4: 4-bit values, one 8-bit exponent per 32 input weights."""
    return rows * cols // 2 + cdiv(cols, 32) * rows


# ------------------------------------------------------------------ Llama-3.1-8B (16-bit checkpoint)
LLAMA8_LINEARS = [(4096, 4096), (1024, 4096), (1024, 4096), (4096, 4096),  # q, k, v, o (out, in)
                  (14336, 4096), (14336, 4096), (4096, 14336)]  # gate, up, down
LLAMA8_EMBED = 128256 * 4096
LLAMA8_VECTORS = 32 * 2 * 4096 + 4096  # the norms: replicated under TP


def test_llama_8b_bf16_is_two_bytes_per_parameter():
    w = weight_bytes(spec("meta-llama__Meta-Llama-3.1-8B"), "auto")
    assert w.total == 2 * 8_030_261_248
    assert w.per_gpu == w.total and w.per_stage == (w.total,)
    assert w.format.name == "bf16" and not w.exact


def test_llama_8b_tp2_halves_all_but_the_replicated_norms():
    m = spec("meta-llama__Meta-Llama-3.1-8B")
    total = 2 * 8_030_261_248
    replicated = 2 * LLAMA8_VECTORS
    assert weight_bytes(m, "bf16", tp=2).per_gpu == (total - replicated) // 2 + replicated
    assert weight_bytes(m, "bf16", tp=8).per_gpu == (total - replicated) // 8 + replicated
    # per GPU at TP 2 is half of TP 1 up to the replicated vectors (a few hundred kB)
    one, two = weight_bytes(m, "bf16", tp=1).per_gpu, weight_bytes(m, "bf16", tp=2).per_gpu
    assert 0 <= two - one / 2 <= replicated


def test_llama_8b_fp8_dynamic_one_byte_per_linear_weight():
    # vLLM --quantization fp8 on a 16-bit checkpoint: linears 1 byte + a fp32 per-tensor scale;
    # embeddings, lm_head and norms stay 16-bit
    linears = 32 * sum(r * c + 4 for r, c in LLAMA8_LINEARS)
    expected = linears + 2 * (2 * LLAMA8_EMBED + LLAMA8_VECTORS)
    w = weight_bytes(spec("meta-llama__Meta-Llama-3.1-8B"), "fp8")
    assert w.total == expected
    assert w.format.name == "fp8"


def test_llama_8b_int4_group_128_carries_scales_and_zeros():
    linears = 32 * sum(int4_g128(r, c) for r, c in LLAMA8_LINEARS)
    expected = linears + 2 * (2 * LLAMA8_EMBED + LLAMA8_VECTORS)
    w = weight_bytes(spec("meta-llama__Meta-Llama-3.1-8B"), "int4")
    assert w.total == expected
    # the group overhead is 0.3125 bit per weight: 2.5 bytes per 128 weights
    linear_weights = 32 * sum(r * c for r, c in LLAMA8_LINEARS)
    assert linears == linear_weights // 2 + linear_weights // 128 * 5 // 2


def test_precision_ordering_int4_lt_fp8_lt_bf16():
    m = spec("meta-llama__Meta-Llama-3.1-8B")
    int4, fp8, bf16 = (weight_bytes(m, p).total for p in ("int4", "fp8", "bf16"))
    assert int4 < fp8 < bf16
    assert weight_bytes(m, "fp16").total == bf16


def test_llama_8b_pp2_puts_embedding_first_and_head_last():
    per_layer = sum(r * c for r, c in LLAMA8_LINEARS) + 2 * 4096
    w = weight_bytes(spec("meta-llama__Meta-Llama-3.1-8B"), "bf16", pp=2)
    first = 2 * (LLAMA8_EMBED + 16 * per_layer)  # layers 0..15 + embed_tokens
    last = 2 * (16 * per_layer + 4096 + LLAMA8_EMBED)  # layers 16..31 + final norm + lm_head
    assert w.per_stage == (first, last)
    assert w.per_gpu == max(first, last)


def test_llama_70b_pp3_uneven_split_largest_stage_rules():
    # 80 layers over 3 stages: vLLM gives [27, 27, 26] (the remainder goes to the stages before the last)
    per_layer = 8192 * 8192 * 2 + 2 * 8192 * 1024 + 3 * 8192 * 28672 + 2 * 8192
    embed = 128256 * 8192
    w = weight_bytes(spec("meta-llama__Meta-Llama-3.1-70B"), "bf16", pp=3)
    expected = (2 * (embed + 27 * per_layer), 2 * 27 * per_layer, 2 * (26 * per_layer + 8192 + embed))
    assert w.per_stage == expected
    assert w.per_gpu == expected[0]


def test_tied_embedding_needs_a_copy_on_the_last_stage():
    # gemma-2-9b: tied; with PP 2 the output head lives on the last stage as a second copy of the matrix
    per_layer = 3584 * 4096 * 2 + 2 * 3584 * 2048 + 3 * 3584 * 14336 + 4 * 3584
    embed = 256000 * 3584
    m = spec("google__gemma-2-9b-it")
    assert weight_bytes(m, "bf16").total == 2 * 9_241_705_984  # counted once in the whole model
    w = weight_bytes(m, "bf16", pp=2)
    assert w.per_stage == (2 * (embed + 21 * per_layer), 2 * (21 * per_layer + 3584 + embed))


# --------------------------------------------------------------------- FP8 block-quantized checkpoints
def test_qwen3_32b_fp8_block_scales_and_16bit_head():
    # hidden 5120, 64 heads x 128, 8 KV heads, intermediate 25600, 64 layers, vocab 151936, untied
    linears = (fp8_block(8192, 5120) + 2 * fp8_block(1024, 5120) + fp8_block(5120, 8192)
               + 2 * fp8_block(25600, 5120) + fp8_block(5120, 25600))
    vectors = 2 * 5120 + 2 * 128  # norms, q/k norms
    embed = 151936 * 5120
    expected = 64 * (linears + 2 * vectors) + 2 * 5120 + 2 * (2 * embed)  # embeddings and lm_head 16-bit
    m = spec("Qwen__Qwen3-32B-FP8")
    w = weight_bytes(m, "auto")
    assert w.format.name == "fp8" and w.format.block == (128, 128)
    assert w.total == expected
    assert weight_bytes(m, "fp8").total == expected  # "fp8" on an fp8 checkpoint is the checkpoint's format
    # about half of the 16-bit size: 32.8 B parameters -> ~34.3 GB
    assert 34.2e9 < expected < 34.4e9


def test_qwen3_30b_a3b_fp8_experts_carry_block_scales():
    # hidden 2048, 32 heads x 128, 4 KV heads, 128 experts of width 768; router, norms, q/k norms,
    # embeddings and lm_head stay 16-bit (modules_to_not_convert lists lm_head, the norms and mlp.gate)
    attention = fp8_block(4096, 2048) + 2 * fp8_block(512, 2048) + fp8_block(2048, 4096)
    experts = 128 * (2 * fp8_block(768, 2048) + fp8_block(2048, 768))
    sixteen_bit = 2 * (128 * 2048 + 2 * 2048 + 2 * 128)
    embed = 151936 * 2048
    expected = 48 * (attention + experts + sixteen_bit) + 2 * (2 * embed + 2048)
    w = weight_bytes(spec("Qwen__Qwen3-30B-A3B-FP8"), "auto")
    assert w.format.name == "fp8" and w.format.block == (128, 128)
    assert w.total == expected
    assert expected < weight_bytes(spec("Qwen__Qwen3-30B-A3B"), "auto").total / 2 + 2 * 2 * embed


def test_deepseek_v3_fp8_and_mla_replication_under_tp():
    h = 7168
    attn_q = fp8_block(1536, h) + fp8_block(128 * 192, 1536)  # q_a_proj (replicated), q_b_proj
    kv_a = fp8_block(576, h)  # kv_a_proj_with_mqa (replicated)
    attn_rest = fp8_block(128 * 256, 512) + fp8_block(h, 128 * 128)  # kv_b_proj, o_proj
    q_a = fp8_block(1536, h)
    dense_mlp = 2 * fp8_block(18432, h) + fp8_block(h, 18432)
    expert = 2 * fp8_block(2048, h) + fp8_block(h, 2048)
    vectors = 2 * (1536 + 512 + 2 * h)  # q_a_layernorm, kv_a_layernorm, two norms (16-bit)
    router = 2 * (256 * h + 256)  # gate + e_score_correction_bias (16-bit)
    embed = 2 * 129280 * h
    attention = attn_q + kv_a + attn_rest
    total = (embed + 3 * (attention + vectors + dense_mlp) + 58 * (attention + vectors + router + 257 * expert)
             + 2 * h + embed)
    w1 = weight_bytes(spec("deepseek-ai__DeepSeek-V3"), "auto")
    assert w1.total == total
    # TP 8: every matrix splits except q_a_proj and kv_a_proj_with_mqa; vectors and routers replicate
    replicated = 61 * (q_a + kv_a + vectors) + 58 * router + 2 * h
    w8 = weight_bytes(spec("deepseek-ai__DeepSeek-V3"), "auto", tp=8)
    assert abs(w8.per_gpu - ((total - replicated) / 8 + replicated)) <= 1


def test_modelopt_fp8_with_hf_quant_config():
    # nvidia/Llama-3.1-70B-Instruct-FP8: quant_algo FP8 (per-tensor), exclude_modules [lm_head]
    m = spec("nvidia__Llama-3.1-70B-Instruct-FP8",
             quant_config_file="nvidia__Llama-3.1-70B-Instruct-FP8.hf_quant_config.json")
    assert m.quant is not None and m.quant.method == "modelopt" and m.quant.kv_cache_fp8
    linear_weights = 80 * (2 * 8192 * 8192 + 2 * 8192 * 1024 + 3 * 8192 * 28672)
    sixteen_bit = 2 * (2 * 128256 * 8192 + 80 * 2 * 8192 + 8192)  # embed, lm_head (excluded), norms
    tensors = 80 * 7
    w = weight_bytes(m, "auto")
    assert w.format.name == "fp8" and w.format.block is None
    # each linear carries fp32 per-tensor scales: a weight_scale (and an input_scale in the checkpoint)
    assert linear_weights + sixteen_bit + 4 * tensors <= w.total <= linear_weights + sixteen_bit + 8 * tensors


# ---------------------------------------------------------------------------------------- MXFP4 gpt-oss
@pytest.mark.parametrize("name, layers, experts", [("openai__gpt-oss-20b", 24, 32), ("openai__gpt-oss-120b", 36, 128)])
def test_gpt_oss_mxfp4_experts_everything_else_16bit(name, layers, experts):
    # modules_to_not_convert: self_attn, router, embed_tokens, lm_head -> 16-bit; experts MXFP4
    h = 2880
    experts_bytes = experts * (2 * mxfp4(2880, h) + mxfp4(h, 2880))  # gate, up (2880 x 2880 each), down
    expert_biases = experts * (2 * 2880 + h)
    attn = h * 4096 + 2 * h * 512 + 4096 * h + (4096 + 512 + 512 + h) + 64  # weights, biases, sinks
    router = experts * h + experts
    norms = 2 * h
    embed = 201088 * h
    expected = layers * (experts_bytes + 2 * (expert_biases + attn + router + norms)) + 2 * (2 * embed + h)
    w = weight_bytes(spec(name), "auto")
    assert w.format.name == "mxfp4"
    assert w.total == expected
    # OpenAI's model card: gpt-oss-120b fits one 80 GB GPU, gpt-oss-20b runs within 16 GB of memory
    assert expected < (80e9 if experts == 128 else 16e9)


def test_gpt_oss_attention_is_not_quantized():
    # the same model with modules_to_not_convert emptied would quantize attention; the real list must not
    m = spec("openai__gpt-oss-20b")
    quantized_attention = replace(m, quant=replace(m.quant, not_converted=()))
    assert weight_bytes(quantized_attention, "auto").total < weight_bytes(m, "auto").total


# -------------------------------------------------------------------------------------- exact override
def test_exact_safetensors_bytes_override_and_keep_the_split():
    m = spec("meta-llama__Meta-Llama-3.1-8B")
    header_bytes = 16_060_600_000  # a made-up header total, 77,504 bytes above the arithmetic
    exact = replace(m, exact=ExactWeights(params=None, bytes=header_bytes, source="safetensors headers"))
    w = weight_bytes(exact, "auto", tp=2)
    assert w.exact and w.total == header_bytes
    computed = weight_bytes(m, "auto", tp=2)
    # the headers' total is split across GPUs as the structure splits it
    assert abs(w.per_gpu - computed.per_gpu * header_bytes / computed.total) <= 1
    # the headers describe the checkpoint as stored: a conversion (fp8 at load) ignores them
    converted = weight_bytes(exact, "fp8")
    assert not converted.exact and converted.total == weight_bytes(m, "fp8").total
    # and the parameter count is not overridden when the headers give none (packed formats)
    assert count_params(exact).total == 8_030_261_248


def test_moe_tp_splits_experts():
    # Mixtral-8x7B at TP 2: experts split by TP (intermediate dimension), routers and norms replicated
    m = spec("mistralai__Mixtral-8x7B-v0.1")
    total = 2 * 46_702_792_704
    replicated = 2 * (32 * (8 * 4096 + 2 * 4096) + 4096)
    assert weight_bytes(m, "auto").total == total
    assert weight_bytes(m, "auto", tp=2).per_gpu == (total - replicated) // 2 + replicated


def test_official_qwen2_5_7b_awq_is_the_checkpoint_to_the_byte():
    # Qwen/Qwen2.5-7B-Instruct-AWQ (catalog; bits 4, group_size 128, zero_point, GEMM). AutoAWQ stores per linear
    # (in -> out): qweight int32 [in, out/8], qzeros int32 [in/128, out/8], scales fp16 [in/128, out].
    # Qwen2.5-7B: hidden 3584, 4 KV heads × 128, intermediate 18944, 28 layers, vocab 152064, untied.
    linears = [(3584, 3584), (3584, 512), (3584, 512), (3584, 3584), (3584, 18944), (3584, 18944), (18944, 3584)]
    int32 = 28 * sum(i * o // 8 + (i // 128) * (o // 8) for i, o in linears)
    fp16 = (28 * sum((i // 128) * o for i, o in linears)  # scales
            + 28 * (3584 + 512 + 512)  # q/k/v biases
            + 28 * 2 * 3584 + 3584  # norms
            + 2 * 152064 * 3584)  # embed_tokens, lm_head
    # The checkpoint's safetensors headers ("stored" element counts of the Hub API, recorded in GitHub
    # Khaeldur/overflowml tests/test_inspect.py @ eff69efefa8f61b6e67b70ba76b70ccaba99edf9, AWQ_7B):
    assert (int32, fp16) == (822_033_408, 1_141_306_880)
    from wizard.sources.catalog import find_entry, load_catalog_model

    w = weight_bytes(load_catalog_model(find_entry("Qwen/Qwen2.5-7B-Instruct-AWQ")), "auto")
    assert w.per_gpu == 4 * int32 + 2 * fp16 == 5_570_747_392


# ------------------------------------------------------------ MXFP4 experts padded for Marlin (vLLM 0.10.x)
def test_marlin_pads_gpt_oss_experts_to_its_tiles_by_hand():
    """vLLM 0.10.1 on H100 runs gpt-oss's MXFP4 experts through Marlin, allocated with the intermediate size per
    TP partition rounded up to 128 and the hidden size to 256 (quantization/mxfp4.py @ v0.10.1): 2880 -> 2944
    and 2880 -> 3072. By hand, per expert: gate and up (2944 x 3072) and down (3072 x 2944) against 2880 x 2880."""
    from wizard.sizing.weights import expert_padding_bytes

    m = spec("openai__gpt-oss-120b")
    per_expert = 3 * (mxfp4(2944, 3072) - mxfp4(2880, 2880))
    assert per_expert == 3 * 398_208
    assert expert_padding_bytes(m, "auto", 1, 1, (128, 256)) == (36 * 128 * per_expert,)
    # TP 2: 1440 per partition -> 1536, so each GPU holds half of 2 x 1536 rows, the hidden size still 3072
    tp2 = 3 * (mxfp4(2 * 1536, 3072) - mxfp4(2880, 2880)) // 2
    assert expert_padding_bytes(m, "auto", 2, 1, (128, 256)) == (36 * 128 * tp2,)


def test_the_logged_marlin_weights_are_the_checkpoint_plus_its_padding():
    """The 0.10.1 log of gpt-oss-120b on H100 (vllm-project/vllm#23278) says 'Model loading took 65.9651 GiB';
    the checkpoint alone is 60.8 GiB. With the padding (and the RoPE cache) the sizing is within 0.2 %, and a
    release or card that does not pad (0.11.1 on; B200 in 0.10.1) adds nothing."""
    from wizard.sizing.fit import SizeInputs, size
    from wizard.sources.catalog import find_gpu

    m = spec("openai__gpt-oss-120b")
    h100, b200 = find_gpu("h100-sxm-80gb"), find_gpu("b200-180gb")
    at = SizeInputs(context_tokens=8192, vllm_version="0.10.1")
    logged = 65.9651 * 2**30
    r = size(m, h100, at)
    assert r.weights.padding == 36 * 128 * 3 * 398_208
    assert abs(r.weights.per_gpu - logged) / logged < 0.002
    assert size(m, h100, at._replace(vllm_version="0.11.1")).weights.padding == 0
    assert size(m, b200, at).weights.padding == 0
