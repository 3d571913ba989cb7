"""The image encoder in vLLM V1's start-up profile (gemma-3's SigLIP tower), against hand arithmetic.

vLLM V1 encodes a batch of maximum-size dummy images before the text dummy pass (gpu_model_runner profile_run;
vllm/multimodal/encoder_budget.py): items = min(budget // tokens per image, max_num_seqs × images per prompt),
budget = max(max_num_batched_tokens, tokens per image). Their embeddings stay in the encoder cache through the
text and sampler passes; the encoder's temporaries do not. gemma-3 (google/gemma-3-27b-it config.json): 896-px
images, 14-px patches → 4,096 patches; SigLIP hidden 1,152, MLP 4,304; 256 tokens per image; text hidden 5,376.
"""

from __future__ import annotations

from wizard.sizing.activations import activation_peak
from wizard.sizing.fit import SizeInputs, size
from wizard.sources.catalog import find_entry, find_gpu, load_catalog_model
from wizard.sizing.engines import profile_for

V1, V0 = profile_for("0.33.0"), profile_for("0.6.4")

GEMMA3_27B = load_catalog_model(find_entry("google/gemma-3-27b-it"))
PATCHES, HIDDEN, MLP, PIXELS, TOKENS, TEXT_HIDDEN = 4096, 1152, 4304, 3 * 896 * 896, 256, 5376


def per_image(tp: int) -> int:
    # bf16. MLP phase: pixels + 3 hidden states (patch embeddings, residual, layer-norm output) + fc1 and GELU
    # outputs; attention phase: pixels + 4 hidden states + q, k, v, output and their contiguous copies.
    mlp = 3 * PATCHES * HIDDEN + 2 * PATCHES * MLP // tp
    attention = 4 * PATCHES * HIDDEN + 7 * PATCHES * HIDDEN // tp
    return 2 * (PIXELS + max(mlp, attention))


def test_the_config_gives_the_encoder_shape():
    v = GEMMA3_27B.vision_encoder
    assert v is not None
    assert (v.patches_per_item, v.hidden_size, v.intermediate_size, v.pixels_per_item, v.tokens_per_item) == (
        PATCHES, HIDDEN, MLP, PIXELS, TOKENS)


def test_a_small_batch_limit_leaves_the_encoder_as_the_peak():
    # 8,192 batched tokens / 256 per image = 32 images; 32 sequences × (8,192 // 256) images each allow more.
    a = activation_peak(GEMMA3_27B, 1, 8192, 32, V1, 8192)
    assert a.encoder_items == 32
    assert per_image(1) == 108_625_920  # 103.6 MiB: the attention phase is the wider one at TP 1
    assert a.encoder == 32 * per_image(1)
    assert a.encoder_outputs == 32 * TOKENS * TEXT_HIDDEN * 2
    assert a.peak == a.encoder > a.forward + a.encoder_outputs  # 3.24 GiB against a 1.23 GiB text pass


def test_a_large_sampler_pass_outweighs_the_encoder():
    # 2,048 tokens → 8 images (0.81 GiB); 256 sequences × 262,208 vocab × 18 B (vLLM 0.33's sampler pass) =
    # 1.13 GiB of sampler, plus the 8 images' embeddings still held.
    a = activation_peak(GEMMA3_27B, 1, 2048, 256, V1, 8192)
    assert a.encoder_items == 8
    assert V1.sampler_bytes_per_logit == 18
    assert a.sampler == 256 * 262_208 * 18
    assert a.peak == a.sampler + 8 * TOKENS * TEXT_HIDDEN * 2


def test_images_per_prompt_cap_the_items_when_the_context_is_short():
    # max_model_len 300 holds one 256-token image per prompt: 4 sequences → 4 images, not 32.
    assert activation_peak(GEMMA3_27B, 1, 8192, 4, V1, 300).encoder_items == 4


def test_tp_splits_the_encoder_mlp_and_attention_heads():
    assert activation_peak(GEMMA3_27B, 2, 8192, 32, V1, 8192).encoder == 32 * per_image(2)
    assert per_image(2) < per_image(1)


def test_text_models_and_the_v0_engine_have_no_encoder_term():
    llama = load_catalog_model(find_entry("meta-llama/Llama-3.1-8B-Instruct"))
    a = activation_peak(llama, 1, 8192, 32, V1, 8192)
    assert a.encoder == a.encoder_items == a.encoder_outputs == 0 and a.peak == max(a.forward, a.sampler)
    assert activation_peak(GEMMA3_27B, 1, 8192, 32, V0, 8192).encoder_items == 0


def test_size_reports_the_encoder_and_subtracts_it_from_the_kv_pool():
    gpu = find_gpu("h100-sxm-80gb")
    r = size(GEMMA3_27B, gpu, SizeInputs(context_tokens=8192, concurrency=4, max_num_seqs=32))
    assert r.activation.peak == 32 * per_image(1)
    assert any("32 dummy images" in n and "limit-mm-per-prompt" in n for n in r.notes)
    text_only = size(GEMMA3_27B._replace(vision_encoder=None), gpu,
                     SizeInputs(context_tokens=8192, concurrency=4, max_num_seqs=32))
    assert r.kv_capacity_tokens < text_only.kv_capacity_tokens
