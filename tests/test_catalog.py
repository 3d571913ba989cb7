"""The bundled catalogs: every entry loads, sizes, and agrees with the counts its sources state."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import TypeAdapter

from wizard.errors import InputError
from wizard.sizing.fit import SizeInputs, size
from wizard.sizing.params import count_params
from wizard.sources.catalog import DATA, find_entry, find_gpu, gpu_catalog, load_catalog_model, model_entries
from wizard.specs import GpuSpec

ENTRIES = model_entries()


def test_ids_and_aliases_are_unique_case_insensitively():
    seen: set[str] = set()
    for e in ENTRIES:
        for name in (e.id, *e.aliases):
            assert name.lower() not in seen, name
            seen.add(name.lower())


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.id for e in ENTRIES])
def test_every_catalog_model_parses_and_sizes(entry):
    spec = load_catalog_model(entry)
    params = count_params(spec)
    assert params.total > 10**8 and params.active <= params.total
    assert entry.source, "every entry names where its config came from"
    # Stated counts (sizing-notes.md) must equal the arithmetic from the config, to the parameter.
    if entry.params:
        assert params.computed_total == entry.params
    gpu = find_gpu("b200-180gb")
    results = []
    for tp in (8, 4, 2, 1):  # the largest TP of one node that the model's shapes allow
        try:
            results.append(size(spec, gpu, SizeInputs(tp=tp, context_tokens=4096)))
        except InputError:
            continue
    assert results, "no TP in 1, 2, 4, 8 is valid"
    r = results[0]
    assert r.weights.per_gpu > 0 and r.kv_bytes_per_token > 0


def test_config_files_are_verbatim_json():
    for e in ENTRIES:
        json.loads((DATA / "models" / "configs" / e.config).read_text())


def test_configs_with_a_published_digest_still_hash_to_it():
    # Entries whose source states "SHA-256 <hex>" are byte-identical to the Hub file; a reformat would break that.
    import hashlib
    import re

    checked = 0
    for e in ENTRIES:
        m = re.search(r"(\d[\d,]*) bytes, SHA-256 ([0-9a-f]{64})", e.source)
        if m is None:
            continue
        data = (DATA / "models" / "configs" / e.config).read_bytes()
        assert len(data) == int(m.group(1).replace(",", "")), e.id
        assert hashlib.sha256(data).hexdigest() == m.group(2), e.id
        checked += 1
    assert checked >= 4  # Qwen2.5-7B-Instruct-AWQ, Qwen2.5-0.5B, Qwen2.5-1.5B, Mixtral-8x22B-Instruct-v0.1


def test_mixtral_8x22b_instruct_config_arithmetic_is_its_safetensors_count():
    # vocab 32768 (not the base's 32000): the config's count must equal the stated safetensors count by itself.
    e = find_entry("mistralai/Mixtral-8x22B-Instruct-v0.1")
    spec = load_catalog_model(e)
    assert count_params(spec._replace(exact=None)).total == e.params == 140_630_071_296


def test_gpu_catalog_validates_against_the_spec():
    raw = json.loads((DATA / "gpus.json").read_text())["gpus"]
    adapter = TypeAdapter(GpuSpec)
    for g in raw:
        fields = {k: g.get(k) for k in GpuSpec._fields}
        adapter.validate_python(fields, strict=False)
        assert g["memory_reported_source"].startswith(("observed:", "estimated:")), g["id"]
        assert g["memory_reported_bytes"] <= max(g["memory_marketed_bytes"], 256 * 2**30)
        assert g["sources"], g["id"]
    assert len(gpu_catalog()) == len(raw)


def test_h100_memory_is_what_the_driver_reports_not_the_marketed_size():
    h100 = find_gpu("h100-sxm-80gb")
    assert abs(h100.memory_reported_bytes / 2**30 - 79.22) < 0.005  # vLLM logs: total_gpu_memory 79.22 GiB
    assert h100.memory_marketed_bytes == 80 * 10**9


def test_sibling_configs_are_labelled():
    e = find_entry("meta-llama/Llama-3.1-405B-Instruct")
    assert e is not None and "base" in e.note.lower()
    assert "base" in " ".join(load_catalog_model(e).notes).lower()


def test_quantized_checkpoints_are_in_the_catalog():
    methods = {load_catalog_model(e).quant.method for e in ENTRIES if load_catalog_model(e).quant}
    assert {"awq", "gptq", "fp8", "modelopt", "mxfp4"} <= methods


def test_hybrid_and_multimodal_models_are_recognised():
    nxt = load_catalog_model(find_entry("Qwen/Qwen3-Next-80B-A3B-Instruct"))
    assert "hybrid-linear" in nxt.attention and nxt.linear is not None
    gemma3 = load_catalog_model(find_entry("google/gemma-3-27b-it"))
    assert gemma3.vision_params > 0 and "sliding-window" in gemma3.attention
    assert Path(DATA).is_dir()
