"""A local checkpoint folder: config.json plus safetensors headers give exact sizes without reading weights."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from wizard.errors import InputError
from wizard.sizing.fit import SizeInputs, size
from wizard.sizing.params import count_params
from wizard.sources.catalog import find_gpu
from wizard.sources.local import load_local
from wizard.sources.safetensors_header import read_header

TINY = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 64, "intermediate_size": 128,
    "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100,
    "max_position_embeddings": 512, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
}


def tiny_tensors() -> dict[str, list[int]]:
    h, i, v, kv = 64, 128, 100, 2 * 16
    t = {"model.embed_tokens.weight": [v, h], "model.norm.weight": [h], "lm_head.weight": [v, h]}
    for n in range(2):
        p = f"model.layers.{n}"
        t |= {
            f"{p}.self_attn.q_proj.weight": [h, h], f"{p}.self_attn.k_proj.weight": [kv, h],
            f"{p}.self_attn.v_proj.weight": [kv, h], f"{p}.self_attn.o_proj.weight": [h, h],
            f"{p}.mlp.gate_proj.weight": [i, h], f"{p}.mlp.up_proj.weight": [i, h], f"{p}.mlp.down_proj.weight": [h, i],
            f"{p}.input_layernorm.weight": [h], f"{p}.post_attention_layernorm.weight": [h],
        }
    return t


def write_safetensors(path: Path, tensors: dict[str, tuple[str, list[int]]], bytes_per: dict[str, float]) -> int:
    """Write a real safetensors file (header + zero data); returns the data size in bytes."""
    header, offset = {}, 0
    for name, (dtype, shape) in tensors.items():
        n = 1
        for d in shape:
            n *= d
        size_b = int(n * bytes_per[dtype])
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size_b]}
        offset += size_b
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + b"\0" * offset)
    return offset


def test_exact_params_and_bytes_from_two_shards(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(TINY))
    tensors = {k: ("BF16", s) for k, s in tiny_tensors().items()}
    names = sorted(tensors)
    half = len(names) // 2
    b1 = write_safetensors(tmp_path / "model-00001-of-00002.safetensors", {k: tensors[k] for k in names[:half]}, {"BF16": 2})
    b2 = write_safetensors(tmp_path / "model-00002-of-00002.safetensors", {k: tensors[k] for k in names[half:]}, {"BF16": 2})
    spec = load_local(tmp_path)
    # hand count: embed + lm_head 2 × 100 × 64; per layer q,o 64² each, k,v 32 × 64 each, MLP 3 × 64 × 128, 2 norms
    expected = 2 * 100 * 64 + 64 + 2 * (2 * 64 * 64 + 2 * 32 * 64 + 3 * 64 * 128 + 2 * 64)
    assert spec.exact is not None and spec.exact.params == expected
    assert spec.exact.bytes == b1 + b2 == 2 * expected
    assert count_params(spec).total == expected
    assert count_params(spec).computed_total == expected  # the config arithmetic agrees with the headers
    assert spec.source == "local"


def test_exact_bytes_override_the_arithmetic(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(TINY))
    tensors = {k: ("BF16", s) for k, s in tiny_tensors().items()}
    tensors["extra.weight"] = ("F32", [5000])  # something the config arithmetic cannot know about
    data = write_safetensors(tmp_path / "model.safetensors", tensors, {"BF16": 2, "F32": 4})
    r = size(load_local(tmp_path), find_gpu("l4-24gb"), SizeInputs(context_tokens=256))
    assert r.weights.exact and r.weights.total == data - 5000 * 2  # float32 is served in 16-bit: 2 of 4 bytes
    assert any("the exact count is used" in n for n in r.notes)  # 5,000 parameters the config does not know: +9 %


def test_packed_int4_checkpoint_keeps_computed_params_but_exact_bytes(tmp_path):
    config = dict(TINY, quantization_config={"quant_method": "awq", "bits": 4, "group_size": 32, "zero_point": True,
                                             "version": "gemm"})
    (tmp_path / "config.json").write_text(json.dumps(config))
    tensors = {"model.embed_tokens.weight": ("F16", [100, 64]), "lm_head.weight": ("F16", [100, 64]),
               "model.layers.0.mlp.down_proj.qweight": ("I32", [128, 8]), "model.layers.0.mlp.down_proj.scales": ("F16", [4, 64])}
    data = write_safetensors(tmp_path / "model.safetensors", tensors, {"F16": 2, "I32": 4})
    spec = load_local(tmp_path)
    assert spec.exact is not None and spec.exact.params is None and spec.exact.bytes == data
    assert spec.quant is not None and spec.quant.method == "awq" and spec.quant.group_size == 32


def test_folder_without_config_and_bad_headers(tmp_path):
    with pytest.raises(InputError, match="config.json"):
        load_local(tmp_path)
    bad = tmp_path / "x.safetensors"
    bad.write_bytes(struct.pack("<Q", 10) + b"not json!!")
    with pytest.raises(InputError, match="unreadable header"):
        read_header(bad)
    bad.write_bytes(b"\x01\x02")
    with pytest.raises(InputError, match="truncated"):
        read_header(bad)
