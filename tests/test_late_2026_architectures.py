"""The architecture features of the late-2025/2026 families, each computed by hand from its config.json (the
catalog copy) and compared with the sizing core: Gated DeltaNet state (Qwen3.5/3.6), DeepSeek sparse attention's
indexer (DeepSeek-V3.2, GLM-5), chunked local attention and interleaved MoE (Llama 4), Gemma 4's two attention
geometries, multi-token-prediction layers, NVFP4/MXFP4 scales, ModelOpt mixed precision and FP8 KV caches."""

from __future__ import annotations

import re

import pytest
import yaml

from cli_run import assert_one_line_error, run_main
from wizard.errors import InputError
from wizard.sizing.fit import SizeInputs, size
from wizard.sizing.kv_cache import kv_stages
from wizard.sizing.params import count_params
from wizard.sizing.precision import weight_format
from wizard.sizing.tensors import LINEAR_W, Tensor, inventory
from wizard.sizing.weights import tensor_bytes, weight_bytes
from wizard.sources.catalog import find_entry, find_gpu, load_catalog_model
from wizard.specs import CHUNKED, FULL, LINEAR, SLIDING


def catalog(model_id: str):
    entry = find_entry(model_id)
    assert entry is not None, model_id
    return load_catalog_model(entry)


def tensors(m, layer: int) -> dict[str, Tensor]:
    """The tool's tensors of one layer by their name below model.layers.N."""
    prefix = f"model.layers.{layer}."
    return {t.name.removeprefix(prefix): t for t in inventory(m) if t.layer == layer}


# --- Qwen3.5 / Qwen3.6: Gated DeltaNet hybrids --------------------------------------------------------------------

def test_qwen35_gated_deltanet_state_is_float32_as_its_config_says():
    """Qwen3.5-27B text_config: linear_num_key_heads 16, linear_num_value_heads 48, key/value head dims 128, conv
    kernel 4, mamba_ssm_dtype float32; 48 linear_attention layers and 16 full_attention ones (layer_types)."""
    m = catalog("Qwen/Qwen3.5-27B")
    assert m.layer_kinds.count(LINEAR) == 48 and m.layer_kinds.count(FULL) == 16
    conv_dim = 2 * 16 * 128 + 48 * 128  # q, k and v channels the depthwise conv runs over
    conv_state = conv_dim * (4 - 1) * 2  # kernel − 1 columns, model dtype
    recurrent = 48 * 128 * 128 * 4  # one value × key matrix per value head, float32
    assert (conv_state, recurrent) == (61_440, 3_145_728)
    shape = kv_stages(m)[0]
    assert shape.state_bytes_per_sequence == 48 * (conv_state + recurrent) == 153_944_064
    assert shape.full_bytes_per_token == 16 * 2 * 4 * 256 * 2  # 4 KV heads × head_dim 256, 16-bit
    # TP 2: vLLM splits the heads and the conv channels (mamba_utils gated_delta_net_state_shape divides by TP)
    assert kv_stages(m, "auto", 2)[0].state_bytes_per_sequence == 153_944_064 // 2


def test_qwen3_next_without_mamba_ssm_dtype_keeps_its_state_16_bit():
    m = catalog("Qwen/Qwen3-Next-80B-A3B-Instruct")
    assert m.linear is not None and m.linear.recurrent_state_bytes == 2


def test_qwen35_projections_shape_by_shape_and_the_gated_attention():
    """hidden 5120: in_proj_qkv 10240 × 5120, in_proj_z 6144 × 5120, in_proj_b/a 48 × 5120 each, conv 10240 × 4,
    dt_bias + A_log 96, norm 128, out_proj 5120 × 6144; q_proj of a full layer also emits the output gate."""
    m = catalog("Qwen/Qwen3.5-27B")
    per_layer = 10240 * 5120 + 6144 * 5120 + 2 * 48 * 5120 + 10240 * 4 + 96 + 128 + 5120 * 6144
    assert m.linear is not None and m.linear.params_per_layer == per_layer == 115_876_064
    linear = tensors(m, 0)
    assert linear["linear_attn.in_proj_qkv"].rows == 10240 and linear["linear_attn.in_proj_z"].rows == 6144
    full = tensors(m, 3)  # layer_types[3] is full_attention
    assert full["self_attn.q_proj"].rows == 2 * 24 * 256  # 24 heads × 256, doubled by attn_output_gate
    assert "1 multi-token-prediction layer(s)" in " ".join(m.notes)  # mtp_num_hidden_layers 1, not counted


def test_qwen36_mixed_precision_sizes_each_kind_of_projection_in_its_own_format():
    """hf_quant_config.json MIXED_PRECISION: mlp.* and lm_head W4A16_NVFP4 (group 16), self_attn.* and the Gated
    DeltaNet in_proj_qkv / in_proj_z / out_proj FP8; in_proj_b / in_proj_a are not listed: 16-bit."""
    m = catalog("nvidia/Qwen3.6-27B-NVFP4")
    fmt = weight_format(m, "auto")
    assert fmt.name == "nvfp4" and m.quant is not None and m.quant.mixed
    layer0 = tensors(m, 0)
    def nvfp4(rows: int, cols: int) -> int:  # E2M1 + one E4M3 scale per 16 + two fp32 tensor scales
        return rows * cols // 2 + rows * cols // 16 + 8

    def fp8(rows: int, cols: int) -> int:  # one byte a weight, fp32 weight and input scales
        return rows * cols + 4 + 4

    assert tensor_bytes(layer0["mlp.gate_proj"], fmt, m) == nvfp4(17408, 5120) == 50_135_048
    assert tensor_bytes(layer0["linear_attn.in_proj_qkv"], fmt, m) == fp8(10240, 5120)
    assert tensor_bytes(layer0["linear_attn.in_proj_b"], fmt, m) == 48 * 5120 * 2
    head = next(t for t in inventory(m) if t.name == "lm_head")
    assert tensor_bytes(head, fmt, m) == nvfp4(248320, 5120)
    # kv_cache_quant_algo FP8: vLLM 0.33 sizes auto as 1 byte (16 full layers × 2 × 4 heads × 256)
    r = size(m, find_gpu("h100-sxm-80gb"), SizeInputs(context_tokens=32768))
    assert r.kv.full_bytes_per_token == 16 * 2 * 4 * 256 * 1


# --- DeepSeek sparse attention: DeepSeek-V3.2, GLM-5 -------------------------------------------------------------

def test_deepseek_v32_indexer_keeps_its_own_key_per_token_beside_mla():
    """61 MLA layers: latent 512 + rope 64 at 2 bytes, plus the indexer key: index_head_dim 128 FP8 values and one
    fp32 scale per 128 = 132 bytes (vLLM DeepseekV32IndexerCache), on every rank whatever the TP."""
    m = catalog("deepseek-ai/DeepSeek-V3.2")
    assert m.indexer is not None and (m.indexer.heads, m.indexer.head_dim, m.indexer.topk) == (64, 128, 2048)
    per_token = 61 * ((512 + 64) * 2 + 128 + 4)
    assert kv_stages(m)[0].full_bytes_per_token == per_token == 78_324
    assert kv_stages(m, "auto", 8)[0].full_bytes_per_token == per_token  # MLA and indexer are replicated
    # --kv-cache-dtype fp8 is fp8_ds_mla: 512 FP8 values + 4 fp32 scales + the 64 RoPE dims at 16-bit = 656 B
    assert kv_stages(m, "fp8")[0].full_bytes_per_token == 61 * (512 + 4 * 4 + 64 * 2 + 132) == 48_068


def test_the_indexer_adds_its_weights_to_deepseek_v3_shapes():
    """DeepSeek-V3.2 has DeepSeek-V3's shapes plus, per layer, wq_b (q_lora_rank 1536 → 64 × 128), wk (7168 → 128),
    weights_proj (7168 → 64) and the k LayerNorm's weight and bias."""
    v32, v3 = catalog("deepseek-ai/DeepSeek-V3.2"), catalog("deepseek-ai/DeepSeek-V3")
    indexer = 1536 * 64 * 128 + 7168 * 128 + 7168 * 64 + 2 * 128
    assert count_params(v32).computed_total - count_params(v3).computed_total == 61 * indexer


def test_glm5_on_blackwell_gets_the_fp8_kv_cache_vllm_picks_for_it():
    """GlmMoeDsaForCausalLM on a 10.x card: vLLM 0.33 turns auto into fp8_e4m3 (models/config.py): 78 layers ×
    (512 + 64) × 1 byte + the indexer's 132 B; on Hopper auto stays 16-bit."""
    m = catalog("zai-org/GLM-5-FP8")
    b200 = size(m, find_gpu("b200-180gb"), SizeInputs(tp=8, context_tokens=8192))
    h200 = size(m, find_gpu("h200-sxm-141gb"), SizeInputs(tp=8, context_tokens=8192))
    assert b200.kv.full_bytes_per_token == 78 * ((512 + 64) * 1 + 132)
    assert h200.kv.full_bytes_per_token == 78 * ((512 + 64) * 2 + 132)
    assert any("FP8 KV cache on compute capability 10.x" in n for n in b200.notes)


# --- Llama 4: chunked local attention, interleaved MoE -----------------------------------------------------------

def test_llama4_chunked_local_layers_hold_one_chunk_plus_the_in_flight_tokens():
    """Scout: attention_chunk_size 8192; no_rope_layers absent, so every 4th layer is global NoPE attention
    (configuration_llama4: interval 4) and the other 36 chunked. 8 KV heads × 128 × 2 bytes × 2 = 4096 B a layer."""
    m = catalog("meta-llama/Llama-4-Scout-17B-16E-Instruct")
    assert m.layer_kinds.count(CHUNKED) == 36 and m.layer_kinds[3] == FULL and m.chunk_size == 8192
    shape = kv_stages(m, "auto", 1, 1, 2 * 8192)[0]  # two in-flight batches of 8192 tokens (vLLM 0.33 at PP 1)
    assert shape.full_bytes_per_token == 12 * 4096 and shape.chunked_bytes_per_token == 36 * 4096
    # ChunkedLocalAttentionSpec: ceil(min(chunk + in-flight, max_model_len) / 16) blocks, no extra block
    held = -(-min(8192 + 16384, 32768) // 16) * 16
    assert held == 24576
    assert shape.bytes_per_sequence(32768) == 12 * 4096 * 32768 + 36 * 4096 * held
    assert shape.bytes_per_sequence(4096) == 48 * 4096 * 4096  # a short request holds its whole context


def test_llama4_maverick_interleaves_moe_and_dense_layers():
    """interleave_moe_layer_step 2: layers 1, 3, ..., 47 are MoE (128 experts of 8192 + one shared expert of 8192,
    router 128 × 5120), the other 24 dense with intermediate_size_mlp 16384."""
    m = catalog("meta-llama/Llama-4-Maverick-17B-128E-Instruct")
    h = 5120
    attention = 40 * 128 * h * 2 + 8 * 128 * h * 2 + 2 * h  # q, o; k, v; two norms (use_qk_norm false)
    dense = 3 * h * 16384
    moe = 128 * h + 128 * 3 * h * 8192 + 3 * h * 8192
    total = 48 * attention + 24 * dense + 24 * moe + 2 * 202048 * h + h  # untied embeddings, final norm
    assert count_params(m).computed_total == total
    assert "mlp.experts.gate_proj" in tensors(m, 1) and "mlp.experts.gate_proj" not in tensors(m, 0)


# --- Gemma 4: two attention geometries, dense MLP beside the experts ---------------------------------------------

def test_gemma4_full_layers_have_their_own_head_size_and_kv_heads():
    """gemma-4-26B-A4B: 25 sliding layers of 8 KV heads × 256 and 5 full layers of num_global_key_value_heads 2 ×
    global_head_dim 512; attention_k_eq_v: full layers ship no v_proj, but vLLM caches K and V both."""
    m = catalog("google/gemma-4-26B-A4B")
    assert m.layer_kinds.count(SLIDING) == 25 and m.layer_kinds.count(FULL) == 5 and m.sliding_window == 1024
    shape = kv_stages(m)[0]
    assert shape.sliding_bytes_per_token == 25 * 2 * 8 * 256 * 2
    assert shape.full_bytes_per_token == 5 * 2 * 2 * 512 * 2
    full = tensors(m, 5)  # layer_types[5] is full_attention
    assert "self_attn.v_proj" not in full and full["self_attn.k_proj"].rows == 2 * 512
    assert full["self_attn.q_proj"].rows == 16 * 512
    sliding = tensors(m, 0)
    assert sliding["self_attn.v_proj"].rows == 8 * 256
    # every layer: the dense MLP (2112) and 128 experts of 704, 8 per token, routed by proj + two scale vectors
    assert sliding["mlp.gate_proj"].rows == 2112 and sliding["experts.gate_proj"].copies == 128
    assert sliding["experts.gate_proj"].rows == 704


def test_gemma4_nvfp4_quantizes_the_experts_and_keeps_the_dense_mlp_as_excluded():
    """exclude_modules lists model.language_model.layers.N.mlp*, .router* and .self_attn*: the experts
    (layers.N.experts) alone are NVFP4."""
    m = catalog("nvidia/Gemma-4-26B-A4B-NVFP4")
    fmt = weight_format(m, "auto")
    layer = tensors(m, 0)
    gate = layer["experts.gate_proj"]
    assert tensor_bytes(gate, fmt, m) == (704 * 2816 // 2 + 704 * 2816 // 16 + 8) * 128
    assert tensor_bytes(layer["mlp.gate_proj"], fmt, m) == 2112 * 2816 * 2


# --- formats: NVFP4 and MXFP4 scales, MTP layers --------------------------------------------------------------------

def test_fp4_formats_count_their_scales():
    """A 4096 × 4096 projection: NVFP4 = 4 bits + one E4M3 byte per 16 + 8 bytes of fp32 tensor scales; MXFP4
    (gpt-oss) = 4 bits + one E8M0 byte per 32."""
    t = Tensor("model.layers.0.mlp.experts.gate_proj", 4096, 4096, LINEAR_W, 0)
    nv = weight_format(catalog("nvidia/MiniMax-M2.7-NVFP4"), "auto")
    mx = weight_format(catalog("openai/gpt-oss-20b"), "auto")
    assert (nv.name, mx.name) == ("nvfp4", "mxfp4")
    m = catalog("nvidia/MiniMax-M2.7-NVFP4")
    assert tensor_bytes(t, nv, m) == 4096 * 4096 // 2 + 4096 * 4096 // 16 + 8 == 9_437_192
    assert tensor_bytes(t, mx, catalog("openai/gpt-oss-20b")) == 4096 * 4096 // 2 + 4096 * 4096 // 32


def test_mtp_layers_are_counted_only_as_a_note():
    """DeepSeek-V3.2 num_nextn_predict_layers 1, MiniMax-M2.7 num_mtp_modules 3 (use_mtp): not in the weights, since
    vLLM loads them only with --speculative-config method mtp."""
    assert catalog("deepseek-ai/DeepSeek-V3.2").mtp_layers == 1
    minimax = catalog("MiniMaxAI/MiniMax-M2.7")
    assert minimax.mtp_layers == 3 and any("3 multi-token-prediction" in n for n in minimax.notes)
    assert count_params(minimax).computed_total < 230e9  # the published 230 B total excludes the MTP modules


def test_minimax_m2_qk_norms_span_all_heads():
    """qk_norm_type per_layer: one RMSNorm over 48 × 128 q channels and one over 8 × 128 k channels per layer."""
    layer = tensors(catalog("MiniMaxAI/MiniMax-M2.7"), 0)
    assert layer["self_attn.qk_norm"].rows == 48 * 128 + 8 * 128


def test_nvfp4_runs_from_compute_capability_7_5_only_on_nvidia():
    m = catalog("nvidia/Qwen3.6-35B-A3B-NVFP4")
    r = size(m, find_gpu("h100-sxm-80gb"), SizeInputs())
    assert any("no FP4 tensor cores" in n for n in r.notes)  # Hopper: Marlin W4A16
    with pytest.raises(InputError) as e:
        size(m, find_gpu("mi300x-192gb"), SizeInputs())
    assert e.value.field == "gpu"


@pytest.mark.parametrize("model_id", [
    "Qwen/Qwen3.5-9B", "Qwen/Qwen3.5-27B", "nvidia/Qwen3.6-35B-A3B-NVFP4", "Qwen/Qwen3.5-122B-A10B",
    "Qwen/Qwen3.5-397B-A17B", "Qwen/Qwen3-Coder-480B-A35B-Instruct", "google/gemma-4-26B-A4B",
    "nvidia/Gemma-4-31B-IT-NVFP4",
])
def test_the_size_in_the_model_name_is_the_config_arithmetic(model_id):
    """Model names state their rounded total and active billions ("35B-A3B"): the config arithmetic must round to
    them (total within 2 % or half a billion, the rounding of a small name; active within 12 %: vendors round the
    active share loosely). A guard against a layer kind counted twice or left out."""
    found = re.search(r"-(\d+(?:\.\d+)?)B(?:-A(\d+)B)?", model_id)
    assert found is not None
    p = count_params(catalog(model_id))
    named = float(found.group(1))
    assert abs(p.total / 1e9 - named) <= max(0.5, 0.02 * named), p.total
    if found.group(2):
        assert abs(p.active / 1e9 - int(found.group(2))) / int(found.group(2)) < 0.12, p.active


def test_weights_of_a_mixed_checkpoint_fit_between_its_fp4_and_fp8_bounds():
    m = catalog("nvidia/Qwen3.6-27B-NVFP4")
    whole = weight_bytes(m, "auto").total
    params = count_params(m).total
    assert params * 0.5 < whole < params * 1.1  # mostly 4.5-bit MLPs, 8-bit attention, 16-bit embeddings


def test_a_release_older_than_the_architecture_says_it_cannot_serve_it(tmp_path):
    """Gemma4ForConditionalGeneration is in vLLM 0.19.0's registry, not 0.18.0's (the wheels' registry.py): sized
    with that caveat on 0.18.0, and the planner refuses it there in one line."""
    m = catalog("google/gemma-4-26B-A4B")
    old = size(m, find_gpu("a100-sxm-80gb"), SizeInputs(vllm_version="0.18.0"))
    new = size(m, find_gpu("a100-sxm-80gb"), SizeInputs(vllm_version="0.19.0"))
    assert any("has no Gemma4ForConditionalGeneration" in n and "v0.19.0" in n for n in old.notes)
    assert not any("Gemma4ForConditionalGeneration" in n for n in new.notes)
    answers = tmp_path / "a.yaml"
    answers.write_text(yaml.safe_dump({"model": "google/gemma-4-26B-A4B", "peak_concurrency": 4, "ttft_p99_ms": 2000,
                                       "tpot_p99_ms": 100, "ops_capability": "kubernetes", "vllm_version": "0.18.0"}))
    assert_one_line_error(run_main("plan", "--answers", str(answers)), "model", "v0.19.0")
