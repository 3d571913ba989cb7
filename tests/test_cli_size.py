"""`llm-deploy-wizard size` as a user runs it: the figures of issue #2's "Done means", JSON shape, errors."""

from __future__ import annotations

import json

import pytest

from cli_run import assert_one_line_error, run_cli

# DESIGN.md "JSON output": size --json prints exactly these fields (performance comes with --prompt-tokens).
SIZE_KEYS = {
    "model", "gpu", "parallel", "inputs", "per_gpu_bytes", "usable_bytes", "headroom_bytes", "fits",
    "kv_bytes_per_token", "kv_capacity_tokens", "max_concurrency", "notes", "vllm_serve", "defaults_assumed", "tips",
}
MODEL_KEYS = {"id", "source", "architecture", "params_total", "params_active", "layers", "attention_heads", "kv_heads",
              "head_dim", "attention", "hidden_size"}


def test_llama_8b_on_h100_offline():
    r = run_cli("size", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "h100-sxm-80gb", "--context", "8192",
                "--concurrency", "16", "--json")
    assert r.code == 0, r.err
    d = r.json()
    assert set(d) == SIZE_KEYS
    assert set(d["model"]) == MODEL_KEYS
    assert set(d["per_gpu_bytes"]) == {"weights", "kv_cache", "activations", "reserve", "total"}
    assert d["model"]["params_total"] == 8_030_261_248
    # 8,030,261,248 × 2 bytes + the RoPE cos/sin cache vLLM builds at load (131,072 positions × 128 × 2 bytes)
    assert d["per_gpu_bytes"]["weights"] == 16_060_522_496 + 33_554_432
    assert d["kv_bytes_per_token"] == 131_072  # 2 × 32 layers × 8 KV heads × 128 × 2 bytes
    assert d["per_gpu_bytes"]["kv_cache"] == 16 * 8192 * 131_072
    assert d["model"]["source"] == "catalog"
    parts = d["per_gpu_bytes"]
    assert parts["total"] == parts["weights"] + parts["kv_cache"] + parts["activations"] + parts["reserve"]
    assert d["headroom_bytes"] == d["usable_bytes"] - parts["total"]
    assert d["fits"] is True
    assert d["usable_bytes"] == int(d["gpu"]["memory_bytes"] * 0.92)  # vLLM 0.33.0's default utilization
    for key in ("weights", "kv_cache", "activations", "reserve", "total"):
        assert isinstance(parts[key], int)


def test_deepseek_v3_mla_kv_per_token():
    base = ("size", "deepseek-ai/DeepSeek-V3", "--gpu", "h200-sxm-141gb", "--tp", "8", "--json")
    bf16 = run_cli(*base)
    assert bf16.code == 0, bf16.err
    assert bf16.json()["kv_bytes_per_token"] == 61 * (512 + 64) * 2 == 70_272
    fp8 = run_cli(*base, "--kv-cache-dtype", "fp8")
    assert fp8.json()["kv_bytes_per_token"] == 35_136
    assert bf16.json()["model"]["params_total"] == 671_026_419_200


def test_gemma2_sliding_layers_budgeted_as_vllm_does():
    # 21 global layers keep the whole context; 21 local (sliding, window 4096) layers are budgeted per request
    # at (ceil(min(window - 1 + max_num_batched_tokens, context) / 16) + 1) blocks of 16 tokens (vLLM V1).
    per_layer = 2 * 8 * 256 * 2  # 2 × 8 KV heads × head_dim 256 × 2 bytes
    r = run_cli("size", "google/gemma-2-9b-it", "--context", "8192", "--concurrency", "16", "--json")
    assert r.code == 0, r.err
    sliding = (8192 // 16 + 1) * 16  # min(4095 + 8192, 8192) = 8192 → 513 blocks: no saving at this context
    assert r.json()["per_gpu_bytes"]["kv_cache"] == 16 * (21 * 8192 + 21 * sliding) * per_layer
    # vLLM 0.33 (V2 runner, async scheduling, PP 1) holds two prefill batches in flight: 4,095 + 2 × 1,024
    small = run_cli("size", "google/gemma-2-9b-it", "--context", "8192", "--concurrency", "16",
                    "--max-num-batched-tokens", "1024", "--json")
    sliding = (-(-(4095 + 2 * 1024) // 16) + 1) * 16  # 6,143 tokens → 385 blocks = 6,160 tokens
    assert small.json()["per_gpu_bytes"]["kv_cache"] == 16 * (21 * 8192 + 21 * sliding) * per_layer
    # vLLM 0.25 budgeted one batch: 4,095 + 2,048
    older = run_cli("size", "google/gemma-2-9b-it", "--context", "8192", "--concurrency", "16",
                    "--max-num-batched-tokens", "2048", "--vllm-version", "0.25.1", "--json")
    sliding = (-(-(4095 + 2048) // 16) + 1) * 16
    assert older.json()["per_gpu_bytes"]["kv_cache"] == 16 * (21 * 8192 + 21 * sliding) * per_layer
    # Steady-state decode holds only the window: sizing-notes.md's 33.82 GB (45.10 GB if every layer were full).
    from wizard.sizing.kv_cache import kv_shape
    from wizard.sources.catalog import find_entry, load_catalog_model

    kv = kv_shape(load_catalog_model(find_entry("google/gemma-2-9b-it")))
    assert abs(16 * kv.bytes_per_sequence(8192) / 1e9 - 33.82) < 0.01
    assert abs(16 * kv.uncapped_bytes_per_token * 8192 / 1e9 - 45.10) < 0.01


def test_qwen3_tied_embeddings_counted_once():
    r = run_cli("size", "Qwen/Qwen3-0.6B", "--json")
    assert r.code == 0, r.err
    h, v, layers, inter = 1024, 151936, 28, 3072
    attn = h * 16 * 128 + 2 * h * 8 * 128 + 16 * 128 * h + 2 * 128  # q, k, v, o, q_norm + k_norm
    per_layer = attn + 3 * h * inter + 2 * h
    assert r.json()["model"]["params_total"] == v * h + layers * per_layer + h  # one embedding matrix, final norm


def test_catalog_ids_are_case_insensitive():
    r = run_cli("size", "META-LLAMA/llama-3.1-8b-instruct", "--json")
    assert r.code == 0, r.err
    assert r.json()["model"]["id"] == "meta-llama/Llama-3.1-8B-Instruct"


def test_rich_table_names_formulas_and_verdict():
    r = run_cli("size", "meta-llama/Llama-3.1-8B-Instruct", "--concurrency", "16")
    assert r.code == 0, r.err
    for text in ("weights", "KV cache", "activations", "reserve", "headroom", "fits", "131,072 B/token", "GPU KV cache size"):
        assert text in r.out, text


def test_tp_that_does_not_divide_heads_is_rejected():
    r = run_cli("size", "meta-llama/Llama-3.1-8B-Instruct", "--tp", "3")
    assert_one_line_error(r, "tp", "3", "num_attention_heads (32)", "1, 2, 4, 8, 16, 32")


def test_broken_config_json_is_one_clear_line(tmp_path):
    (tmp_path / "config.json").write_text('{"hidden_size": 4096,')
    r = run_cli("size", str(tmp_path))
    assert_one_line_error(r, "config.json", "not valid JSON")


def test_brackets_in_a_folder_name_are_printed_not_parsed(tmp_path):
    # rich reads "[...]" as markup: a folder named like a closing tag used to end in a MarkupError traceback.
    folder = tmp_path / "llama[/]8b[bold]"  # the "/" makes a subfolder "llama[" holding "]8b[bold]"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
        "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256,
        "max_position_embeddings": 131072}))
    r = run_cli("size", str(folder), "--gpu", "h100-sxm-80gb")
    assert r.code == 0, r.err
    assert "Traceback" not in r.err and "llama[/]8b[bold]" in r.out
    answers = tmp_path / "answers.yaml"
    answers.write_text(json.dumps({"model": str(folder)}))
    plan = run_cli("plan", "--answers", str(answers))
    assert plan.code == 0, plan.err
    assert "llama[/]8b[bold]" in plan.out


def test_config_missing_a_key_names_the_key(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "llama", "hidden_size": 4096, "vocab_size": 32000}))
    r = run_cli("size", str(tmp_path))
    assert_one_line_error(r, "num_hidden_layers")


def test_unknown_gpu_lists_accepted_ids():
    r = run_cli("size", "Qwen/Qwen3-8B", "--gpu", "h100")
    assert_one_line_error(r, "gpu", "'h100'", "h100-sxm-80gb")


def test_bad_numbers_are_rejected_by_name():
    assert_one_line_error(run_cli("size", "Qwen/Qwen3-8B", "--context", "-5"), "--context", "-5")
    assert_one_line_error(run_cli("size", "Qwen/Qwen3-8B", "--gpu-memory-utilization", "1.5"), "--gpu-memory-utilization")
    assert_one_line_error(run_cli("size", "Qwen/Qwen3-8B", "--weight-precision", "fp4"), "--weight-precision", "fp4")


def test_missing_local_folder_and_bad_id():
    assert_one_line_error(run_cli("size", "./no/such/folder"), "model", "no such folder")
    assert_one_line_error(run_cli("size", "not a model id!"), "model", "Hub repo id")


def test_hub_id_offline_points_to_the_catalog():
    r = run_cli("size", "someone/not-in-the-catalog")
    assert_one_line_error(r, "catalog")


def test_models_and_gpus_list_the_catalogs():
    models = run_cli("models", "--json")
    assert models.code == 0
    ids = {m["id"] for m in models.json()}
    assert "meta-llama/Llama-3.1-8B-Instruct" in ids and "deepseek-ai/DeepSeek-V3" in ids
    gpus = run_cli("gpus", "--json")
    assert gpus.code == 0
    gpu_ids = {g["id"] for g in gpus.json()}
    design_ids = {
        "h100-sxm-80gb", "h100-pcie-80gb", "h100-nvl-94gb", "h200-sxm-141gb", "b200-180gb", "a100-sxm-80gb",
        "a100-sxm-40gb", "a100-pcie-80gb", "a100-pcie-40gb", "l40s-48gb", "l4-24gb", "a10g-24gb", "a10-24gb",
        "t4-16gb", "rtx3090-24gb", "rtx4090-24gb", "rtx6000ada-48gb", "mi300x-192gb", "mi325x-256gb",
    }
    assert design_ids <= gpu_ids
    table = run_cli("gpus")
    assert table.code == 0 and "h100-sxm-80gb" in table.out


def test_table_says_how_many_tokens_sliding_layers_hold():
    # gemma-2-9b: window 4096; vLLM 0.33 budgets ceil(min(4096 − 1 + 2 × 1024, 8192) / 16) + 1 = 385 blocks = 6,160
    # tokens per sequence for each sliding layer (two prefill batches in flight), not "capped at the window".
    r = run_cli("size", "google/gemma-2-9b-it", "--gpu", "h100-sxm-80gb", "--context", "8192",
                "--max-num-batched-tokens", "1024")
    assert r.code == 0, r.err
    text = " ".join(r.out.replace("│", " ").split())
    assert "(window 4,096) hold 6,160 tokens per sequence" in text


def test_size_json_validates_against_the_published_size_schema():
    import jsonschema

    from cli_run import run_main

    schema = run_main("schema", "size")
    assert schema.code == 0
    for extra in ([], ["--prompt-tokens", "500", "--output-tokens", "200"]):
        r = run_main("size", "meta-llama/Llama-3.1-8B-Instruct", "--concurrency", "16", "--json", *extra)
        assert r.code == 0, r.err
        jsonschema.validate(r.json(), json.loads(schema.out))


def test_context_and_concurrency_auto_are_the_largest_that_fit():
    """--context auto (vLLM's --max-model-len -1): the longest whole-block context at which the concurrency fits;
    one block more does not. --concurrency auto: the most sequences at the context; one more does not."""
    from wizard.sizing.fit import SizeInputs, size
    from wizard.sources.catalog import find_entry, find_gpu, load_catalog_model

    m, gpu = load_catalog_model(find_entry("meta-llama/Llama-3.1-8B-Instruct")), find_gpu("l4-24gb")
    r = run_cli("size", m.id, "--gpu", gpu.id, "--concurrency", "4", "--context", "auto", "--json")
    assert r.code == 0, r.err
    ctx, inputs = r.json()["inputs"]["context_tokens"], r.json()["inputs"]
    base = SizeInputs(concurrency=4, gpu_memory_utilization=inputs["gpu_memory_utilization"],
                      max_num_seqs=inputs["max_num_seqs"], max_num_batched_tokens=inputs["max_num_batched_tokens"])
    assert ctx % 16 == 0 and size(m, gpu, base._replace(context_tokens=ctx)).fits
    assert not size(m, gpu, base._replace(context_tokens=ctx + 16)).fits
    r = run_cli("size", m.id, "--gpu", gpu.id, "--context", "8192", "--concurrency", "auto", "--json")
    n = r.json()["inputs"]["concurrency"]
    assert n >= 1 and size(m, gpu, base._replace(context_tokens=8192, concurrency=n)).fits
    assert not size(m, gpu, base._replace(context_tokens=8192, concurrency=n + 1)).fits
    both = run_cli("size", m.id, "--context", "auto", "--concurrency", "auto")
    assert_one_line_error(both, "--concurrency", "not both")


def test_a_plain_vllm_serve_profiles_the_default_max_num_seqs():
    """Without --max-num-seqs, vLLM 0.33 on an H100 (>= 70 GiB, not A100) profiles 1,024 sequences: the sampler pass
    holds 1,024 × 128,256 logits × 18 B = 2.20 GiB, above the forward pass over 8,192 tokens (0.84 GiB); the tip
    says what --max-num-seqs at the concurrency frees, and the modelled command lists the defaults it assumed."""
    r = run_cli("size", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "h100-sxm-80gb", "--concurrency", "16", "--json")
    d = r.json()
    assert d["inputs"]["max_num_seqs"] == 1024 and d["inputs"]["max_num_batched_tokens"] == 8192
    assert d["per_gpu_bytes"]["activations"] == 1024 * 128_256 * 18
    assert d["vllm_serve"] == "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192"
    assert d["defaults_assumed"] == ["--max-num-seqs 1024", "--max-num-batched-tokens 8192",
                                     "--gpu-memory-utilization 0.92"]
    pinned = run_cli("size", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "h100-sxm-80gb", "--concurrency", "16",
                     "--max-num-seqs", "16", "--json").json()
    freed = d["per_gpu_bytes"]["activations"] - pinned["per_gpu_bytes"]["activations"]
    assert d["tips"] == [f"--max-num-seqs 16 frees {freed / 2**30:.1f} GiB (the sampler warm-up profiles 1,024 sequences "
                         f"× 128,256 logits by default): capacity {pinned['kv_capacity_tokens']:,} tokens instead of "
                         f"{d['kv_capacity_tokens']:,}"]
    assert "--max-num-seqs 16" in pinned["vllm_serve"] and pinned["tips"] == []
    # an older release: its own defaults (0.19: utilization 0.9, no graph pool in the budget)
    old = run_cli("size", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "h100-sxm-80gb", "--vllm-version", "0.19.1",
                  "--json").json()
    assert old["inputs"]["gpu_memory_utilization"] == 0.9 and old["inputs"]["vllm_version"] == "0.19.1"
    # 0.19's sampler is PyTorch's unless VLLM_USE_FLASHINFER_SAMPLER=1 (opt-in from 0.11.1 to 0.20): 39 B per logit
    assert old["per_gpu_bytes"]["activations"] == 1024 * 128_256 * 39
    opted = run_cli("size", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "h100-sxm-80gb", "--vllm-version", "0.19.1",
                    "--sampler", "flashinfer", "--json").json()
    assert opted["per_gpu_bytes"]["activations"] == 1024 * 128_256 * 10  # one FlashInfer pass: 10 B per logit


def test_an_unknown_vllm_release_is_one_line():
    assert_one_line_error(run_cli("size", "Qwen/Qwen3-0.6B", "--vllm-version", "0.5.4"), "vllm_version", "0.6.0")
    assert_one_line_error(run_cli("size", "Qwen/Qwen3-0.6B", "--vllm-version", "latest"), "vllm_version", "PEP 440")


def test_headroom_outside_the_budget_is_checked():
    """TP 2 on H100s at utilization 0.98: vLLM holds the CUDA context and NCCL/custom all-reduce buffers (0.35 +
    1.79 GiB per GPU, measured by V0 which counted them) before its profile, outside the budget; 2 % of the card
    does not hold them. At the default 0.92 it does; over PCIe only the context is counted (not measured)."""
    r = run_cli("size", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "h100-sxm-80gb", "--tp", "2",
                "--gpu-memory-utilization", "0.98", "--json")
    note = next(n for n in r.json()["notes"] if n.startswith("headroom:"))
    total = r.json()["gpu"]["memory_bytes"]
    best = int((1 - int(2.14 * 2**30) / total) * 100) / 100
    assert "2.14 GiB of CUDA context and communicators" in note and f"use at most {best:.2f}" in note
    for gpu in ("h100-sxm-80gb", "rtx4090-24gb"):
        ok = run_cli("size", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", gpu, "--tp", "2", "--json")
        assert not any(n.startswith("headroom:") for n in ok.json()["notes"]), gpu
    # before 0.20 the graph pool was not budgeted: it must fit the headroom too
    old = run_cli("size", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "l4-24gb", "--vllm-version", "0.11.0",
                  "--gpu-memory-utilization", "0.99", "--json")
    assert any("0.45 GiB of CUDA graphs the budget does not hold" in n for n in old.json()["notes"])


def test_releases_that_count_the_whole_device_leave_nothing_for_the_headroom():
    """vLLM 0.8.0-0.9.0 subtract every byte in use on the device, the context included, inside the budget
    (gpu_worker.py @ v0.8.4); from 0.9.1 the start-up snapshot leaves the context outside it. Eager mode (no graph
    pool) at utilization 0.99 on an L4: 1 % of the card cannot hold 0.35 GiB of context on 0.9.1, which 0.8.4 had
    already counted."""
    args = ("size", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "l4-24gb", "--gpu-memory-utilization", "0.99",
            "--enforce-eager", "--json")
    later = run_cli(*args, "--vllm-version", "0.9.1").json()["notes"]
    assert any(n.startswith("headroom:") and "0.35 GiB of CUDA context" in n for n in later), later
    assert not any(n.startswith("headroom:") for n in run_cli(*args, "--vllm-version", "0.8.4").json()["notes"])


def test_context_auto_on_v0_gives_each_candidate_its_own_batch():
    """V0 profiled one batch of max(max_model_len, 2048) tokens, or above 32K the 512-token chunk 0.6.4 turned on by
    itself: the context found must be checked with the batch that context brings, or the answer does not fit. On a
    3090 the whole-context batch leaves no room above ~20K, but past 32K the chunk does: the answer is beyond 32K."""
    r = run_cli("size", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "rtx3090-24gb", "--vllm-version", "0.6.4",
                "--context", "auto", "--json")
    d = r.json()
    ctx, budget = d["inputs"]["context_tokens"], d["inputs"]["max_num_batched_tokens"]
    assert d["fits"] is True and budget == (512 if ctx > 32768 else max(ctx, 2048))
    assert ctx > 32768
    whole = run_cli("size", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "rtx3090-24gb", "--vllm-version", "0.6.4",
                    "--context", "32768", "--json").json()
    assert whole["fits"] is False and whole["inputs"]["max_num_batched_tokens"] == 32768


def test_a_token_budget_below_max_num_seqs_is_refused_as_vllm_does():
    assert_one_line_error(run_cli("size", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "h100-sxm-80gb",
                                  "--max-num-batched-tokens", "512"), "--max-num-batched-tokens", "--max-num-seqs (1024)")


@pytest.mark.parametrize("model, version, graphs", [
    ("meta-llama/Llama-3.1-8B-Instruct", "0.23.0", True),   # V1 runner: the pool is in the budget from 0.20
    ("meta-llama/Llama-3.1-8B-Instruct", "0.24.0", False),  # LlamaForCausalLM runs on V2 by default from 0.24 …
    ("Qwen/Qwen2.5-7B-Instruct", "0.24.0", True),           # … Qwen2 is not on 0.24's list …
    ("Qwen/Qwen2.5-7B-Instruct", "0.25.1", False),          # … but every dense model is from 0.25.1
    ("Qwen/Qwen3-30B-A3B", "0.26.0", True),                 # MoE stays on the V1 runner
    ("meta-llama/Llama-3.1-8B-Instruct", "0.28.0", False),  # V2 estimated no graphs until 0.29
    ("meta-llama/Llama-3.1-8B-Instruct", "0.29.0", True),
])
def test_the_graph_pool_is_budgeted_where_the_runner_estimated_it(model, version, graphs):
    d = run_cli("size", model, "--gpu", "h100-sxm-80gb", "--vllm-version", version, "--json").json()
    reserve = d["per_gpu_bytes"]["reserve"]
    pool = int(0.45 * 2**30)  # reserve.py CUDA_GRAPH_BYTES
    assert (reserve >= pool) is graphs, (reserve, pool)


def test_size_check_exits_1_when_it_does_not_fit_for_scripts():
    no = run_cli("size", "meta-llama/Llama-3.1-70B-Instruct", "--gpu", "l4-24gb", "--check", "--json")
    assert no.code == 1 and no.json()["fits"] is False  # printed as usual, then the status says it
    yes = run_cli("size", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "h100-sxm-80gb", "--check", "--json")
    assert yes.code == 0 and yes.json()["fits"] is True
    assert run_cli("size", "meta-llama/Llama-3.1-70B-Instruct", "--gpu", "l4-24gb", "--json").code == 0  # no --check


def test_version_names_the_package_and_the_vllm_release():
    r = run_cli("--version")
    assert r.code == 0 and r.out.startswith("llm-deploy-wizard ") and "vLLM 0.33.0" in r.out


def test_models_is_one_line_per_model_and_leaves_provenance_to_models_id():
    """`models`: id, size, (architecture where it fits), context, checkpoint format, served by the pinned vLLM — one
    row per model, no source essays (`models ID` shows where each figure comes from); --json carries the same."""
    listing = run_cli("models", "--json").json()
    wide = run_cli("models", env={"COLUMNS": "200"})
    assert wide.code == 0
    rows = [line for line in wide.out.splitlines() if line.startswith("│ ") and "·" not in line]
    assert len(rows) == len(listing)  # one line per model, nothing folded at 200 columns
    row = next(line for line in rows if "meta-llama/Llama-3.1-8B-Instruct " in line)
    cells = [c.strip() for c in row.strip("│").split("│")]
    assert cells == ["meta-llama/Llama-3.1-8B-Instruct", "8.0 B", "LlamaForCausalLM", "131,072", "bf16", "yes"]
    assert "aiconfigurator" not in wide.out and "config.json" not in wide.out  # provenance is `models ID`'s
    entry = next(m for m in listing if m["id"] == "meta-llama/Llama-3.1-8B-Instruct")
    assert (entry["max_context_tokens"], entry["checkpoint_format"]) == (131072, "bf16")
    fp4 = next(m for m in listing if m["id"] == "nvidia/Qwen3.6-27B-NVFP4")
    assert fp4["checkpoint_format"] == "nvfp4"
    narrow = run_cli("models", env={"COLUMNS": "80"})
    assert narrow.code == 0 and max(len(line) for line in narrow.out.splitlines()) <= 80
    assert "architecture" not in narrow.out.split("\n", 5)[3]  # dropped where it does not fit beside the ids
    unserved = [m["id"] for m in listing if m["unserved"]]
    for model_id in unserved:
        assert f"does not serve {model_id}" in " ".join(wide.out.split())
