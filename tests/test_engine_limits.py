"""What vLLM itself refuses or does differently, and the notes that keep every figure honest."""

from __future__ import annotations

import json
import struct

import pytest

from cli_run import assert_one_line_error, run_cli
from wizard.errors import InputError
from wizard.sizing.fit import SizeInputs, size
from wizard.sizing.weights import weight_bytes
from wizard.sources.catalog import find_entry, find_gpu, load_catalog_model
from wizard.sources.local import load_local
from wizard.sources.safetensors_header import read_header


def catalog(model_id: str):
    return load_catalog_model(find_entry(model_id))


def test_context_beyond_the_model_is_refused():
    assert_one_line_error(run_cli("size", "google/gemma-2-9b-it", "--context", "100000"),
                          "context_tokens", "8,192", "max_position_embeddings")


def test_default_context_is_capped_at_the_model_maximum():
    r = run_cli("size", "google/gemma-2-2b-it", "--json")
    assert r.code == 0, r.err
    assert r.json()["inputs"]["context_tokens"] == 8192
    # Mixtral-8x22B allows 65,536: the default stays 8,192
    assert run_cli("size", "mistralai/Mixtral-8x22B-v0.1", "--tp", "8", "--json").json()["inputs"]["context_tokens"] == 8192


def test_quantized_checkpoint_loads_only_in_its_own_format():
    assert_one_line_error(run_cli("size", "Qwen/Qwen3-32B-FP8", "--weight-precision", "bf16"),
                          "weight_precision", "stored as fp8")
    assert_one_line_error(run_cli("size", "openai/gpt-oss-120b", "--weight-precision", "int4"),
                          "weight_precision", "mxfp4")
    ok = run_cli("size", "Qwen/Qwen3-32B-FP8", "--weight-precision", "fp8", "--json")
    assert ok.code == 0, ok.err


def test_int4_on_a_16_bit_checkpoint_says_what_it_needs():
    r = size(catalog("Qwen/Qwen3-8B"), find_gpu("l4-24gb"), SizeInputs(weight_precision="int4", context_tokens=4096))
    assert any("AWQ/GPTQ" in n for n in r.notes)


def test_fp8_on_a_card_without_fp8_tensor_cores_is_noted():
    r = size(catalog("Qwen/Qwen3-8B"), find_gpu("a100-sxm-80gb"), SizeInputs(weight_precision="fp8"))
    assert any("no FP8 tensor cores" in n for n in r.notes)


def test_modelopt_fp8_kv_scales_are_pointed_out_before_0_14():
    """Before 0.14.0 `--kv-cache-dtype auto` ignored the checkpoint's FP8 KV scales: the note points at the flag."""
    r = size(catalog("nvidia/Llama-3.1-70B-Instruct-FP8"), find_gpu("h100-sxm-80gb"),
             SizeInputs(tp=2, vllm_version="0.13.0"))
    assert any("--kv-cache-dtype fp8" in n for n in r.notes)
    assert r.kv.element_bytes == 2


def test_modelopt_fp8_kv_cache_is_the_default_from_0_14():
    """From 0.14.0 (PR #30785) auto resolves to the checkpoint's kv_cache_quant_algo FP8: 80 layers × 2 × 8 KV heads
    / TP 2 × 128 × 1 byte = 81,920 B per token, half the 16-bit figure, and the note says why."""
    model, gpu = catalog("nvidia/Llama-3.1-70B-Instruct-FP8"), find_gpu("h100-sxm-80gb")
    new = size(model, gpu, SizeInputs(tp=2, vllm_version="0.14.0"))
    old = size(model, gpu, SizeInputs(tp=2, vllm_version="0.13.0"))
    assert new.kv.element_bytes == 1 and new.kv.full_bytes_per_token == 80 * 2 * 4 * 128 * 1
    assert old.kv.full_bytes_per_token == 2 * new.kv.full_bytes_per_token
    assert any("reads --kv-cache-dtype auto as the checkpoint's FP8 KV cache" in n for n in new.notes)
    assert not any("halves the KV cache" in n for n in new.notes)


def test_utilization_near_one_is_noted():
    r = size(catalog("Qwen/Qwen3-8B"), find_gpu("h100-sxm-80gb"), SizeInputs(gpu_memory_utilization=0.99))
    assert any("sure OOM" in n for n in r.notes)


def test_pp_capacity_is_the_smallest_stage():
    # Qwen3-0.6B, 28 layers over PP 3 → 9, 10, 9 layers (vLLM gives the remainder to the stages before the last).
    # The middle stage holds 10 layers of 2 × 8 KV heads × 128 × 2 B = 40,960 B per token and limits capacity.
    m = catalog("Qwen/Qwen3-0.6B")
    gpu = find_gpu("l4-24gb")
    r = size(m, gpu, SizeInputs(pp=3, context_tokens=1024))
    assert r.kv_bytes_per_token == 10 * 2 * 8 * 128 * 2
    stage_weights = weight_bytes(m, "auto", 1, 3).per_stage
    rope = 40_960 * 128 * 2  # each stage's RoPE cos/sin cache: max_position_embeddings × head_dim × 2 B
    pool = r.usable_bytes - stage_weights[1] - rope - r.activation.peak - r.reserve.total
    assert r.kv_capacity_tokens == pool // 40_960 // 16 * 16


@pytest.mark.parametrize(("version", "refused"), [("0.13.0", False), ("0.14.0", True), ("0.16.0", True),
                                                  ("0.17.0", False), ("0.33.0", False)])
def test_pp_on_0_14_to_0_16_is_checked_against_the_whole_model(version, refused):
    """vLLM 0.14-0.16 check one max_model_len request's KV of every stage against the smallest worker's memory
    (kv_cache_utils.py get_kv_cache_configs in those wheels). Llama-3.1-8B at PP 2 on RTX 3090s, 131,072 tokens:
    each stage's 16 layers hold 16 × 2 × 8 KV heads × 128 × 2 B = 65,536 B a token, 8 GiB a request, which its pool
    holds; the check counts all 32 layers, 16 GiB, and refuses the layout."""
    m = catalog("meta-llama/Llama-3.1-8B-Instruct")
    r = size(m, find_gpu("rtx3090-24gb"), SizeInputs(pp=2, context_tokens=131_072, vllm_version=version))
    assert r.kv.bytes_per_sequence(131_072) == 16 * 2 * 8 * 128 * 2 * 131_072 == 8 * 2**30
    assert r.kv_pool_bytes >= 8 * 2**30 and r.headroom_bytes >= 0  # every stage holds its own share
    assert r.refused_at_startup is refused and r.fits is not refused
    if refused:
        need, pool = r.startup_check
        assert need == 32 * 2 * 8 * 128 * 2 * 131_072 == 16 * 2**30 and pool < need
        longest = pool // (32 * 2 * 8 * 128 * 2 * 16) * 16
        assert any(f"--max-model-len {longest:,} or less" in n for n in r.notes), r.notes
    else:
        assert not any("stages" in n and "start-up" in n for n in r.notes)


def test_size_json_states_the_whole_model_check_and_check_exits_1():
    args = ("size", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "rtx3090-24gb", "--pp", "2", "--context", "131072",
            "--vllm-version", "0.15.1")
    out = json.loads(run_cli(*args, "--json").out)
    assert out["fits"] is False and out["headroom_bytes"] > 0
    assert out["startup_kv_check"]["needed_bytes"] == 16 * 2**30 and out["startup_kv_check"]["refused"] is True
    assert run_cli(*args, "--check").code == 1
    later = json.loads(run_cli(*args[:-1], "0.17.0", "--json").out)
    assert later["fits"] is True and "startup_kv_check" not in later


def test_the_planner_never_picks_a_layout_vllm_refuses_and_says_why_a_forced_one_fails(tmp_path):
    """The same Llama-3.1-8B at 131,072 tokens on RTX 3090s, vLLM 0.15.1: the planner chooses TP 2 (PP 2 would be
    refused at start-up), and a forced PP 2 is one line naming vLLM's check, exit 2."""
    answers = tmp_path / "answers.yaml"
    answers.write_text("model: meta-llama/Llama-3.1-8B-Instruct\npeak_concurrency: 2\ncontext_tokens: 131072\n"
                       "gpu: rtx3090-24gb\nvllm_version: 0.15.1\n", encoding="utf-8")
    plan = json.loads(run_cli("plan", "--answers", str(answers), "--json").out)
    assert (plan["tp"], plan["pp"]) == (2, 1), (plan["tp"], plan["pp"])
    assert_one_line_error(run_cli("plan", "--answers", str(answers), "--set", "pp=2"), "pp", "refuses TP 1 × PP 2",
                          "0.17.0")


def _write(path, header: bytes) -> None:
    path.write_bytes(struct.pack("<Q", len(header)) + header)


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"[1, 2]", "JSON object"),
        (json.dumps({"a": {"dtype": "BF16", "shape": [2, "x"], "data_offsets": [0, 4]}}).encode(), "dimensions"),
        (json.dumps({"a": {"dtype": "Q9", "shape": [2], "data_offsets": [0, 4]}}).encode(), "known dtype"),
    ],
)
def test_malformed_headers_are_one_clear_error(tmp_path, content, words):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "llama", "hidden_size": 64, "intermediate_size": 128,
                                                      "num_hidden_layers": 1, "num_attention_heads": 4, "vocab_size": 100}))
    _write(tmp_path / "model.safetensors", content)
    with pytest.raises(InputError, match=words):
        load_local(tmp_path)


def test_lfs_pointer_and_folder_named_like_a_shard(tmp_path):
    pointer = tmp_path / "model.safetensors"
    pointer.write_text("version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 123\n")
    with pytest.raises(InputError, match="git lfs pull"):
        read_header(pointer)
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "llama", "hidden_size": 64, "intermediate_size": 128,
                                                      "num_hidden_layers": 1, "num_attention_heads": 4, "vocab_size": 100}))
    pointer.unlink()
    (tmp_path / "model.safetensors").mkdir()
    assert load_local(tmp_path).exact is None  # a folder is not a shard


def test_partial_download_is_sized_from_the_config(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "llama", "hidden_size": 64, "intermediate_size": 128,
                                                      "num_hidden_layers": 1, "num_attention_heads": 4, "vocab_size": 100}))
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps(
        {"weight_map": {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}}))
    _write(tmp_path / "model-00001-of-00002.safetensors",
           json.dumps({"a": {"dtype": "BF16", "shape": [2], "data_offsets": [0, 4]}}).encode())
    spec = load_local(tmp_path)
    assert spec.exact is None
    assert any("missing" in n for n in spec.notes)


def test_partial_download_without_an_index_is_caught_by_the_shard_names(tmp_path):
    # Only shard 1 of 4 and no model.safetensors.index.json: the names say three are missing.
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "llama", "hidden_size": 64, "intermediate_size": 128,
                                                      "num_hidden_layers": 1, "num_attention_heads": 4, "vocab_size": 100}))
    _write(tmp_path / "model-00001-of-00004.safetensors",
           json.dumps({"a": {"dtype": "BF16", "shape": [6], "data_offsets": [0, 12]}}).encode())
    spec = load_local(tmp_path)
    assert spec.exact is None  # sized from config.json, not from the 12 bytes present
    assert any("3 safetensors shard(s) are missing" in n and "model-00002-of-00004.safetensors" in n
               for n in spec.notes)


def test_v0_chunks_a_long_context_by_default_as_its_release_did():
    """V0 turned chunked prefill on by itself above a 32K max_model_len (0.6.4's arg_utils.py; the tokens from its
    config.py): 512 a step before 0.6.5, 2048 from 0.6.5 — and from 0.6.5 not on ROCm, never for a multimodal model.
    Otherwise one batch of max(max_model_len, 2048) tokens. The profile run then profiles that budget, not the context:
    Llama-3.1-8B at 131,072 tokens on an H100 under 0.6.4 profiles 512 tokens."""
    from wizard.sizing.engines import profile_for

    llama = catalog("meta-llama/Llama-3.1-8B-Instruct")
    vision = catalog("meta-llama/Llama-3.2-90B-Vision-Instruct")
    h100, mi300x = find_gpu("h100-sxm-80gb"), find_gpu("mi300x-192gb")
    assert vision.vision_params and not llama.vision_params and llama.sliding_window is None
    v0 = profile_for("0.6.4")
    assert v0.default_batch(h100, 131072, llama, "0.6.4")[0] == 512
    assert v0.default_batch(h100, 131072, llama, "0.7.0")[0] == 2048
    assert v0.default_batch(h100, 131072, llama, "0.7.4.dev181+gf35f8e22")[0] == 2048
    assert v0.default_batch(mi300x, 131072, llama, "0.6.4")[0] == 512  # ROCm too, before 0.6.5
    assert v0.default_batch(mi300x, 131072, llama, "0.7.3")[0] == 131072  # not on ROCm from 0.6.5
    assert v0.default_batch(h100, 32768, llama, "0.7.0")[0] == 32768  # not above 32K: one whole batch
    assert v0.default_batch(h100, 131072, vision, "0.7.0")[0] == 131072
    assert v0.default_batch(h100, 131072)[0] == 131072  # without the model the rule cannot apply
    assert v0.default_batch(find_gpu("gaudi3-128gb"), 131072, llama, "0.6.4")[0] == 131072  # not a "cuda" device
    assert profile_for("0.33.0").default_batch(h100, 131072, llama, "0.33.0")[0] == 8192  # V1 and later: the tiers
    r = size(llama, h100, SizeInputs(context_tokens=131072, vllm_version="0.6.4"))
    assert r.activation.tokens == 512
