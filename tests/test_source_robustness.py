"""Issue #10, the model source: no local folder, config.json or safetensors file crashes, hangs or misleads.

The contract (DESIGN.md): every bad input is one line on stderr naming the field, the value and what is
accepted, exit status 2, never a traceback, never a hang, never a silently wrong figure. Each case runs
`llm-deploy-wizard size MODEL --json` in-process, in a thread with a time limit (a hang fails the test instead
of stalling the run); a few run as a separate process, as a user would. The Hub's share is in test_hub.py.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import struct
import threading
import time
from pathlib import Path

import pytest

from wizard.cli import main
from wizard.sources.local import load_local

from cli_run import assert_one_line_error, run_cli

TINY = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 64, "intermediate_size": 128,
    "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100,
    "max_position_embeddings": 512, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
}
# One BF16 tensor of 4 × 8 elements: 64 bytes of data.
TENSOR = {"w": {"dtype": "BF16", "shape": [4, 8], "data_offsets": [0, 64]}}


def size_run(model: str, limit: float = 10.0) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of `size MODEL --json` in-process; fails if it takes over `limit` seconds."""
    result: dict = {}

    def target() -> None:
        out, err = io.StringIO(), io.StringIO()
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                result["code"] = main(["size", model, "--json"])
        except BaseException as e:  # noqa: BLE001  (re-raised below: a traceback is a failure)
            result["error"] = e
        result["out"], result["err"] = out.getvalue(), err.getvalue()

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(limit)
    assert not worker.is_alive(), f"size {model!r} still running after {limit} s: a hang"
    if "error" in result:
        raise result["error"]
    return result["code"], result["out"], result["err"]


def refused(model: str | Path, *words: str, limit: float = 10.0) -> str:
    """The one error line of `size MODEL`: exit 2, nothing on stdout, one line naming `words`, no traceback."""
    code, out, err = size_run(str(model), limit)
    assert code == 2, (code, err, out[:300])
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err and out == ""
    for w in words:
        assert w in lines[0], (w, lines[0])
    return lines[0]


def folder(tmp_path: Path, config: dict | bytes | None = None, **files: bytes | dict) -> Path:
    """A model folder: config.json (TINY by default; bytes are written as they are) and other files."""
    d = tmp_path / "model"
    d.mkdir(exist_ok=True)
    config = TINY if config is None else config
    (d / "config.json").write_bytes(config if isinstance(config, bytes) else json.dumps(config).encode())
    for name, content in files.items():
        name = name.replace("__", ".")
        (d / name).write_bytes(content if isinstance(content, bytes) else json.dumps(content).encode())
    return d


def with_(**changes) -> dict:
    """TINY with some keys changed (a value of None removes the key)."""
    config = {**TINY, **changes}
    return {k: v for k, v in config.items() if v is not None}


def safetensors(header: dict | list | bytes, data: int | None = None) -> bytes:
    """8-byte length + header (a dict is JSON-encoded) + `data` zero bytes (default: what the offsets need)."""
    raw = header if isinstance(header, bytes) else json.dumps(header).encode()
    if data is None:
        spans = [v["data_offsets"][1] for k, v in header.items() if k != "__metadata__"] if isinstance(header, dict) else [0]
        data = max(spans, default=0)
    return struct.pack("<Q", len(raw)) + raw + bytes(data)


# ---------------------------------------------------------------- config.json: types and bounds


BAD_CONFIGS = [
    # (id, config changes, words the error line must contain)
    ("hidden-string", with_(hidden_size="64"), ["hidden_size", "'64'", "integer"]),
    ("hidden-float", with_(hidden_size=64.0), ["hidden_size", "64.0"]),
    ("hidden-bool", with_(hidden_size=True), ["hidden_size", "True"]),
    ("hidden-list", with_(hidden_size=[64]), ["hidden_size", "[64]"]),
    ("hidden-null", with_(hidden_size=None), ["hidden_size", "missing"]),
    ("hidden-zero", with_(hidden_size=0), ["hidden_size", "'0'", "from 1"]),
    ("hidden-huge", with_(hidden_size=10**30), ["hidden_size", "1,000,000"]),
    ("layers-huge", with_(num_hidden_layers=10**9), ["num_hidden_layers", "1000000000", "10,000"]),
    ("layers-zero", with_(num_hidden_layers=0), ["num_hidden_layers"]),
    ("layers-negative", with_(num_hidden_layers=-3), ["num_hidden_layers", "-3"]),
    ("vocab-huge", with_(vocab_size=10**12), ["vocab_size", "100,000,000"]),
    ("vocab-zero", with_(vocab_size=0), ["vocab_size"]),
    ("context-huge", with_(max_position_embeddings=10**30), ["max_position_embeddings", "100,000,000"]),
    ("intermediate-string", with_(intermediate_size="128"), ["intermediate_size"]),
    ("experts-huge", with_(num_local_experts=10**9, num_experts_per_tok=2), ["num_local_experts", "100,000"]),
    ("experts-per-token-above-experts", with_(num_local_experts=4, num_experts_per_tok=8),
     ["num_experts_per_tok", "'8'", "to 4"]),
    ("head-dim-not-derivable", with_(hidden_size=65),
     ["head_dim", "missing", "hidden_size (65)", "num_attention_heads (4)"]),
    ("head-dim-zero", with_(head_dim=0), ["head_dim", "'0'"]),
    ("head-dim-string", with_(head_dim="16"), ["head_dim"]),
    ("kv-heads-above-heads", with_(num_key_value_heads=8), ["num_key_value_heads", "'8'", "divisor", "(4)"]),
    ("kv-heads-not-a-divisor", with_(num_attention_heads=4, num_key_value_heads=3), ["num_key_value_heads", "'3'"]),
    ("kv-heads-zero", with_(num_key_value_heads=0), ["num_key_value_heads"]),
    ("architectures-string", with_(architectures="LlamaForCausalLM"), ["architectures", "list of class names"]),
    ("architectures-ints", with_(architectures=[1]), ["architectures"]),
    ("model-type-int", with_(model_type=7), ["model_type", "string"]),
    ("tie-string", with_(tie_word_embeddings="yes"), ["tie_word_embeddings", "true or false"]),
    ("dtype-list", with_(torch_dtype=["bf16"]), ["torch_dtype"]),
    ("text-config-list", with_(text_config=[1]), ["text_config", "JSON object"]),
    ("text-config-string", with_(text_config="llama"), ["text_config"]),
    ("text-config-number", with_(text_config=5), ["text_config"]),
    ("vision-config-list", with_(text_config=dict(TINY), vision_config=[1]), ["vision_config", "JSON object"]),
    ("vision-patch-above-image", with_(text_config=dict(TINY), vision_config={
        "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1, "patch_size": 500, "image_size": 224}),
     ["vision_config.image_size", "'224'", "500"]),
    ("mllama-aspect-ratios-int", with_(model_type="mllama", text_config=dict(TINY, model_type="mllama_text_model"),
                                       vision_config={"model_type": "mllama_vision_model", "hidden_size": 32,
                                                      "intermediate_size": 64, "num_hidden_layers": 1,
                                                      "supported_aspect_ratios": 5}),
     ["supported_aspect_ratios"]),
    ("cross-attention-bools", with_(cross_attention_layers=[True]), ["cross_attention_layers", "layer indices"]),
    ("cross-attention-out-of-range", with_(cross_attention_layers=[2]), ["cross_attention_layers", "0 to 1"]),
    ("layer-types-dict", with_(layer_types={"a": 1}), ["layer_types", "one type per layer (2)"]),
    ("layer-types-wrong-length", with_(layer_types=["full_attention"]), ["layer_types", "1 entries"]),
    ("layer-types-ints", with_(layer_types=[1, 2]), ["layer_types[0]", "full_attention"]),
    ("sliding-window-zero", with_(model_type="mistral", sliding_window=0), ["sliding_window", "'0'"]),
    ("sliding-window-huge", with_(model_type="mistral", sliding_window=10**30), ["sliding_window", "100,000,000"]),
    ("sliding-pattern-zero", with_(model_type="gemma3_text", sliding_window=16, sliding_window_pattern=0),
     ["sliding_window_pattern"]),
    ("mlp-only-layers-string", with_(model_type="qwen2_moe", num_experts=4, num_experts_per_tok=2,
                                     moe_intermediate_size=32, mlp_only_layers="0"), ["mlp_only_layers"]),
    ("mlp-only-layers-int", with_(model_type="qwen2_moe", num_experts=4, num_experts_per_tok=2,
                                  moe_intermediate_size=32, mlp_only_layers=5), ["mlp_only_layers"]),
    ("first-k-dense-negative", with_(model_type="deepseek_v3", n_routed_experts=4, num_experts_per_tok=2,
                                     moe_intermediate_size=32, first_k_dense_replace=-1), ["first_k_dense_replace"]),
    ("mla-rank-huge", with_(model_type="deepseek_v3", kv_lora_rank=10**20, qk_nope_head_dim=8, qk_rope_head_dim=8,
                            v_head_dim=8), ["kv_lora_rank", "1,000,000"]),
    # quantization_config
    ("quant-list", with_(quantization_config=[1]), ["quantization_config", "JSON object"]),
    ("quant-method-int", with_(quantization_config={"quant_method": 5}), ["quant_method", "string"]),
    ("fp8-block-zero", with_(quantization_config={"quant_method": "fp8", "weight_block_size": [0, 0]}),
     ["weight_block_size", "[0, 0]", "[rows, cols]"]),
    ("fp8-block-strings", with_(quantization_config={"quant_method": "fp8", "weight_block_size": ["a", "b"]}),
     ["weight_block_size"]),
    ("fp8-block-one-number", with_(quantization_config={"quant_method": "fp8", "weight_block_size": [128]}),
     ["weight_block_size"]),
    ("fp8-block-dict", with_(quantization_config={"quant_method": "fp8", "weight_block_size": {"r": 1}}),
     ["weight_block_size"]),
    ("awq-group-zero", with_(quantization_config={"quant_method": "awq", "bits": 4, "group_size": 0}),
     ["group_size", "'0'", "-1"]),
    ("awq-group-negative", with_(quantization_config={"quant_method": "awq", "bits": 4, "group_size": -64}),
     ["group_size", "-64"]),
    ("awq-group-string", with_(quantization_config={"quant_method": "awq", "bits": 4, "group_size": "128"}),
     ["group_size"]),
    ("awq-group-float", with_(quantization_config={"quant_method": "awq", "bits": 4, "group_size": -1.0}),
     ["group_size"]),
    ("awq-bits-zero", with_(quantization_config={"quant_method": "awq", "bits": 0}), ["bits", "'0'"]),
    ("gptq-bits-32", with_(quantization_config={"quant_method": "gptq", "bits": 32}), ["bits", "to 8"]),
    ("gptq-bits-string", with_(quantization_config={"quant_method": "gptq", "bits": "4"}), ["bits"]),
    ("skip-string", with_(quantization_config={"quant_method": "fp8", "ignored_layers": "lm_head"}),
     ["ignored_layers", "list of module names"]),
    ("skip-ints", with_(quantization_config={"quant_method": "fp8", "modules_to_not_convert": [5]}),
     ["modules_to_not_convert"]),
    ("skip-dict", with_(quantization_config={"quant_method": "awq", "bits": 4, "modules_to_not_convert": {"a": 1}}),
     ["modules_to_not_convert"]),
    ("ct-groups-list", with_(quantization_config={"quant_method": "compressed-tensors", "config_groups": [1]}),
     ["config_groups", "JSON object"]),
    ("ct-group-string", with_(quantization_config={"quant_method": "compressed-tensors", "config_groups": {"g": "x"}}),
     ["config_groups.g"]),
    ("ct-weights-list", with_(quantization_config={"quant_method": "compressed-tensors",
                                                   "config_groups": {"g": {"weights": [8]}}}), ["weights"]),
    ("ct-bits-string", with_(quantization_config={"quant_method": "compressed-tensors",
                                                  "config_groups": {"g": {"weights": {"num_bits": "x"}}}}),
     ["num_bits", "'x'"]),
    ("ct-bits-zero", with_(quantization_config={"quant_method": "compressed-tensors",
                                                "config_groups": {"g": {"weights": {"num_bits": 0}}}}), ["num_bits"]),
    ("ct-group-size-missing", with_(quantization_config={
        "quant_method": "compressed-tensors",
        "config_groups": {"g": {"weights": {"num_bits": 4, "strategy": "group"}}}}), ["group_size", "missing"]),
    ("ct-group-size-zero", with_(quantization_config={
        "quant_method": "compressed-tensors",
        "config_groups": {"g": {"weights": {"num_bits": 4, "strategy": "group", "group_size": 0}}}}), ["group_size"]),
    ("ct-block-zero", with_(quantization_config={
        "quant_method": "compressed-tensors",
        "config_groups": {"g": {"weights": {"num_bits": 8, "block_structure": [0, 128]}}}}), ["block_structure"]),
]


@pytest.mark.parametrize(("config", "words"), [c[1:] for c in BAD_CONFIGS], ids=[c[0] for c in BAD_CONFIGS])
def test_bad_config_values_are_one_line(tmp_path, config, words):
    line = refused(folder(tmp_path, config), *words, limit=5.0)
    assert "config.json." in line  # the field is named with its file: <folder>/config.json.<key>


def test_huge_dimensions_are_refused_before_any_allocation(tmp_path):
    start = time.monotonic()
    refused(folder(tmp_path, with_(num_hidden_layers=10**9, layer_types=None)), "num_hidden_layers", "10,000")
    assert time.monotonic() - start < 2  # refused by the bound, not after building a billion-entry tuple


@pytest.mark.parametrize(
    ("quant", "words"),
    [
        ({"quantization": [1]}, ["hf_quant_config.json.quantization", "JSON object"]),
        ({"quantization": {"quant_algo": "FP8", "exclude_modules": "lm_head"}}, ["exclude_modules"]),
        ({"quantization": {"quant_algo": "NVFP4", "group_size": 0}}, ["group_size"]),
        ({"quantization": {"quant_algo": 8}}, ["quant_algo", "string"]),
        ([1, 2], ["hf_quant_config.json", "JSON object"]),
    ],
)
def test_bad_hf_quant_config_is_one_line(tmp_path, quant, words):
    refused(folder(tmp_path, hf_quant_config__json=json.dumps(quant).encode()), *words)


def test_values_real_checkpoints_use_are_still_accepted(tmp_path):
    # GPTQ without groups (group_size -1), 3-bit GPTQ, a null group, no experts (num_experts 0) all load.
    for quant in ({"quant_method": "gptq", "bits": 4, "group_size": -1, "desc_act": True},
                  {"quant_method": "gptq", "bits": 3, "group_size": 128},
                  {"quant_method": "awq", "bits": 4, "group_size": None}):
        spec = load_local(folder(tmp_path, with_(quantization_config=quant)))
        assert spec.quant is not None and spec.quant.bits == quant["bits"]
        assert spec.quant.group_size == (None if quant["group_size"] in (-1, None) else 128)
    assert load_local(folder(tmp_path, with_(num_experts=0))).moe is None
    # The bounds hold real maxima with room: 10,000 layers and a 100-million-token context are accepted.
    spec = load_local(folder(tmp_path, with_(num_hidden_layers=10_000, max_position_embeddings=100_000_000)))
    assert spec.num_layers == 10_000 and len(spec.layer_kinds) == 10_000
    code, out, err = size_run(str(folder(tmp_path, with_(num_hidden_layers=10_000))))
    assert code == 0 and json.loads(out)  # and sizing copes with them


# ---------------------------------------------------------------- config.json: the file itself


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        (b"[" * 100_000 + b"]" * 100_000, ["config.json", "nested too deeply"]),  # json.loads: RecursionError
        (b'{"a": ' * 100_000 + b"1" + b"}" * 100_000, ["config.json", "nested too deeply"]),
        (b'{"hidden_size": ' + b"9" * 5000 + b"}", ["config.json", "not valid JSON"]),  # int() digit limit
        (b'{"hidden_size": NaN}', ["hidden_size", "nan"]),
        (b'{"hidden_size": Infinity}', ["hidden_size", "inf"]),
        (b"[]", ["config.json", "not a JSON object"]),
        (b"", ["config.json", "not valid JSON"]),
        (b"\xff\xfe{}", ["config.json", "not valid JSON"]),
        (bytes(64), ["config.json", "not valid JSON"]),  # a NUL-filled file
    ],
    ids=["nested-lists", "nested-objects", "5000-digit-int", "nan", "infinity", "list", "empty", "not-utf8", "nul"],
)
def test_broken_config_files_are_one_line(tmp_path, raw, words):
    refused(folder(tmp_path, raw), *words)


def test_huge_config_is_refused_without_reading_it(tmp_path):
    d = folder(tmp_path)
    with (d / "config.json").open("r+b") as f:
        f.truncate(4 * 2**30)  # 4 GiB, sparse: reading it whole would take seconds and the memory
    start = time.monotonic()
    refused(d, "config.json", "16 MiB", "4,294,967,296 bytes")
    assert time.monotonic() - start < 2


def test_fifo_named_config_json_does_not_block(tmp_path):
    d = tmp_path / "model"
    d.mkdir()
    os.mkfifo(d / "config.json")  # opening it for reading would wait for a writer forever
    refused(d, "config.json", "FIFO", limit=5.0)
    run = run_cli("size", str(d), "--json")  # as a user runs it: a real process, one line, exit 2
    assert_one_line_error(run, "config.json", "FIFO")


@pytest.mark.parametrize("name", ["hf_quant_config.json", "model.safetensors", "model.safetensors.index.json"])
def test_fifo_beside_config_json_does_not_block(tmp_path, name):
    d = folder(tmp_path)
    os.mkfifo(d / name)
    refused(d, name, "FIFO", limit=5.0)


def test_config_json_that_is_a_folder(tmp_path):
    d = tmp_path / "model"
    (d / "config.json").mkdir(parents=True)
    refused(d, "config.json", "is a folder")


def test_symlink_loop_and_broken_link(tmp_path):
    d = tmp_path / "model"
    d.mkdir()
    (d / "config.json").symlink_to(d / "config.json")
    refused(d, "config.json", "could not be read", "symbolic links")
    (d / "config.json").unlink()
    (d / "config.json").write_text(json.dumps(TINY))
    (d / "model.safetensors").symlink_to(d / "gone.safetensors")  # a cache snapshot whose blob is missing
    refused(d, "model.safetensors", "could not be read", "No such file")


def test_unreadable_config_json(tmp_path, monkeypatch):
    # The tests run as root, which reads any file: the PermissionError is simulated at os.open.
    d = folder(tmp_path)
    real_open = os.open

    def deny(path, flags, *args, **kwargs):
        if str(path).endswith("config.json"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", deny)
    refused(d, "config.json", "could not be read", "Permission denied")


def test_unreadable_folder(tmp_path, monkeypatch):
    d = folder(tmp_path)

    def deny(path="."):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(os, "scandir", deny)
    refused(d, "model", "could not be listed", "Permission denied")


def test_folder_that_cannot_be_checked(tmp_path, monkeypatch):
    def deny(self):
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "is_dir", deny)
    refused(tmp_path / "model", "model", "could not be checked", "Permission denied")


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_config_json_by_mode(tmp_path):
    d = folder(tmp_path)
    (d / "config.json").chmod(0)
    try:
        refused(d, "config.json", "could not be read", "Permission denied")
    finally:
        (d / "config.json").chmod(0o644)


# ---------------------------------------------------------------- model paths


def test_path_component_too_long(tmp_path):
    name = str(tmp_path / ("a" * 300) / "model")  # Path.is_dir raises ENAMETOOLONG instead of returning False
    refused(name, "model", "could not be checked", "File name too long")
    refused("b" * 300, "model")  # relative, no '/': same


def test_unknown_user_home(tmp_path):
    refused("~nosuchuser_llm_wizard/x", "model", "nosuchuser_llm_wizard", "full path")


def test_a_file_instead_of_a_folder(tmp_path):
    d = folder(tmp_path)
    refused(d / "config.json", "model", "is a file, not a folder", "give the folder that holds it")
    (tmp_path / "notes.txt").write_text("hi")
    refused(tmp_path / "notes.txt", "model", "is a file, not a folder")


def test_nul_character_in_the_model_name():
    refused("bad\0name", "model", "expected a Hub repo id")


# ---------------------------------------------------------------- safetensors headers


BAD_HEADERS = [
    # (id, file bytes, words)
    ("shape-int", safetensors({"w": {"dtype": "BF16", "shape": 32, "data_offsets": [0, 64]}}), ["tensor w", "dimensions"]),
    ("shape-strings", safetensors({"w": {"dtype": "BF16", "shape": ["4", "8"], "data_offsets": [0, 64]}}),
     ["tensor w", "dimensions"]),
    ("shape-bools", safetensors({"w": {"dtype": "BF16", "shape": [True, 8], "data_offsets": [0, 16]}}), ["tensor w"]),
    ("shape-negative", safetensors({"w": {"dtype": "BF16", "shape": [-4, 8], "data_offsets": [0, 64]}}), ["tensor w"]),
    ("shape-floats", safetensors({"w": {"dtype": "BF16", "shape": [4.0, 8], "data_offsets": [0, 64]}}), ["tensor w"]),
    ("shape-missing", safetensors({"w": {"dtype": "BF16", "data_offsets": [0, 64]}}), ["tensor w"]),
    ("dtype-unknown", safetensors({"w": {"dtype": "Q9", "shape": [4, 8], "data_offsets": [0, 64]}}),
     ["tensor w", "known dtype"]),
    ("dtype-int", safetensors({"w": {"dtype": 16, "shape": [4, 8], "data_offsets": [0, 64]}}), ["tensor w"]),
    ("dtype-list", safetensors({"w": {"dtype": ["BF16"], "shape": [4, 8], "data_offsets": [0, 64]}}), ["tensor w"]),
    ("dtype-object", safetensors({"w": {"dtype": {"BF16": 1}, "shape": [4, 8], "data_offsets": [0, 64]}}), ["tensor w"]),
    ("tensor-not-object", safetensors({"w": [1, 2]}, 0), ["tensor w", "dtype, shape, data_offsets"]),
    ("offsets-string", safetensors({"w": {"dtype": "BF16", "shape": [4, 8], "data_offsets": "0-64"}}, 64),
     ["tensor w", "data_offsets"]),
    ("offsets-one", safetensors({"w": {"dtype": "BF16", "shape": [4, 8], "data_offsets": [64]}}, 64),
     ["tensor w", "data_offsets"]),
    ("offsets-backwards", safetensors({"w": {"dtype": "BF16", "shape": [4, 8], "data_offsets": [64, 0]}}, 64),
     ["tensor w", "begin <= end"]),
    ("offsets-bools", safetensors({"w": {"dtype": "BF16", "shape": [1], "data_offsets": [False, True]}}, 2),
     ["tensor w", "data_offsets"]),
    ("offsets-wrong-length", safetensors({"w": {"dtype": "BF16", "shape": [4, 8], "data_offsets": [0, 60]}}),
     ["tensor w", "expected 64 bytes"]),
    ("offsets-gap", safetensors({"a": {"dtype": "BF16", "shape": [4], "data_offsets": [0, 8]},
                                 "b": {"dtype": "BF16", "shape": [4], "data_offsets": [16, 24]}}),
     ["data_offsets [16, 24]", "without gaps"]),
    ("offsets-overlap", safetensors({"a": {"dtype": "BF16", "shape": [4], "data_offsets": [0, 8]},
                                     "b": {"dtype": "BF16", "shape": [4], "data_offsets": [4, 12]}}),
     ["without gaps or overlaps"]),
    ("shape-absurd", safetensors({"w": {"dtype": "BF16", "shape": [10**9, 10**9], "data_offsets": [0, 2 * 10**18]}}, 0),
     ["tensor w", "1,000,000,000,000,000 elements"]),
    ("shape-huge-dim", safetensors({"w": {"dtype": "BF16", "shape": [10**30, 0], "data_offsets": [0, 0]}}, 0),
     ["tensor w", "elements"]),
    ("rank-65", safetensors({"w": {"dtype": "BF16", "shape": [1] * 65, "data_offsets": [0, 2]}}), ["tensor w", "64 dimensions"]),
    ("header-list", safetensors(b"[1, 2]", 0), ["JSON object of tensors"]),
    ("header-nested", safetensors(b"[" * 100_000 + b"]" * 100_000, 0), ["unreadable header", "nested"]),
    ("header-not-json", safetensors(b"not json!!", 0), ["unreadable header"]),
    ("metadata-string", safetensors({"__metadata__": "pt", **TENSOR}), ["__metadata__", "JSON object of strings"]),
    ("metadata-ints", safetensors({"__metadata__": {"format": 1}, **TENSOR}), ["__metadata__"]),
    ("header-longer-than-file", struct.pack("<Q", 10_000) + b"{}", ["header of 10,000 bytes in a file of 10 bytes"]),
    ("header-length-huge", struct.pack("<Q", 2**63) + b"{}", ["under 100 MB"]),
    ("nul-filled", bytes(4096), ["header length of 0", "zero-filled"]),
    ("truncated-data", safetensors(TENSOR, 10), ["truncated", "an interrupted download"]),
    ("trailing-data", safetensors(TENSOR, 100), ["longer than its header says"]),
    ("too-short", b"\x01\x02", ["truncated"]),
    ("lfs-pointer", b"version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 123\n", ["git lfs pull"]),
]


@pytest.mark.parametrize(("content", "words"), [c[1:] for c in BAD_HEADERS], ids=[c[0] for c in BAD_HEADERS])
def test_bad_safetensors_headers_are_one_line(tmp_path, content, words):
    refused(folder(tmp_path, model__safetensors=content), *words)


def test_valid_header_still_counts(tmp_path):
    d = folder(tmp_path, model__safetensors=safetensors({"__metadata__": {"format": "pt"}, **TENSOR}))
    spec = load_local(d)
    assert spec.exact is not None and (spec.exact.params, spec.exact.bytes) == (32, 64)


# ---------------------------------------------------------------- model.safetensors.index.json and shard names


SHARD = safetensors(TENSOR)


@pytest.mark.parametrize(
    ("index", "words"),
    [
        ({"weight_map": ["model-00001-of-00001.safetensors"]}, ["weight_map", "non-empty mapping"]),
        ({"weight_map": {}}, ["weight_map", "non-empty mapping"]),
        ({"metadata": {}}, ["weight_map", "missing"]),
        ({"weight_map": {"w": 5}}, ["weight_map['w']", "'5'"]),
        ({"weight_map": {"w": ["a.safetensors"]}}, ["weight_map['w']"]),
        ({"weight_map": {"w": "../outside.safetensors"}}, ["weight_map['w']", "../outside.safetensors", "no / or .."]),
        ({"weight_map": {"w": "/etc/passwd"}}, ["weight_map['w']", "/etc/passwd"]),
        ({"weight_map": {"w": "sub/model.safetensors"}}, ["weight_map['w']"]),
        ({"weight_map": {"w": ".."}}, ["weight_map['w']"]),
        ({"weight_map": {"w": "C:model.safetensors"}}, ["weight_map['w']"]),
        ({"weight_map": {"w": "config.json"}}, ["weight_map['w']", ".safetensors shard"]),
        ({"weight_map": {f"t{i}": f"s{i}.safetensors" for i in range(100_001)}}, ["weight_map", "100,000 shards"]),
    ],
    ids=["list", "empty", "missing", "int", "list-value", "dotdot", "absolute", "subfolder", "parent", "drive",
         "not-safetensors", "too-many-shards"],
)
def test_bad_index_is_one_line(tmp_path, index, words):
    refused(folder(tmp_path, model__safetensors__index__json=index, model__safetensors=SHARD), *words)


def test_broken_index_file(tmp_path):
    refused(folder(tmp_path, model__safetensors__index__json=b"[" * 100_000), "model.safetensors.index.json", "nested")
    refused(folder(tmp_path, model__safetensors__index__json=b"{"), "model.safetensors.index.json", "not valid JSON")


def test_index_shards_are_the_checkpoint(tmp_path):
    # vLLM loads the shards the index names: a consolidated.safetensors beside them is not counted twice.
    d = folder(tmp_path, model__safetensors__index__json={"weight_map": {"w": "model-00001-of-00001.safetensors"}})
    (d / "model-00001-of-00001.safetensors").write_bytes(SHARD)
    (d / "consolidated.safetensors").write_bytes(SHARD)
    spec = load_local(d)
    assert spec.exact is not None and spec.exact.bytes == 64 and "1 file(s)" in spec.exact.source


def test_shard_name_claiming_99_999_999_parts(tmp_path):
    d = folder(tmp_path)
    (d / "model-00001-of-99999999.safetensors").write_bytes(SHARD)
    start = time.monotonic()
    refused(d, "model-00001-of-99999999.safetensors", "100,000")  # never enumerates a hundred million names
    assert time.monotonic() - start < 2


@pytest.mark.parametrize(
    ("names", "words"),
    [
        (["model-00003-of-00002.safetensors"], ["model-00003-of-00002.safetensors", "1 <= i <= n"]),
        (["model-00000-of-00002.safetensors"], ["model-00000-of-00002.safetensors"]),
        (["model-00001-of-00000.safetensors"], ["model-00001-of-00000.safetensors"]),
        (["model-00001-of-00002.safetensors", "model-00002-of-00003.safetensors"],
         ["same shard total", "model-00001-of-00002.safetensors (2)"]),
    ],
    ids=["index-above-total", "index-zero", "total-zero", "totals-disagree"],
)
def test_inconsistent_shard_names(tmp_path, names, words):
    d = folder(tmp_path)
    for name in names:
        (d / name).write_bytes(SHARD)
    refused(d, *words)


def test_shard_names_still_find_a_partial_download(tmp_path):
    d = folder(tmp_path)
    (d / "model-00001-of-00003.safetensors").write_bytes(SHARD)
    spec = load_local(d)
    assert spec.exact is None and any("2 safetensors shard(s) are missing" in n for n in spec.notes)


# ---------------------------------------------------------------- as a user runs it


@pytest.mark.parametrize(
    ("config", "words"),
    [
        (b"[" * 100_000 + b"]" * 100_000, ["config.json", "nested too deeply"]),
        (json.dumps(with_(num_hidden_layers=10**9)).encode(), ["num_hidden_layers", "10,000"]),
        (json.dumps(with_(quantization_config={"quant_method": "fp8", "weight_block_size": [0, 0]})).encode(),
         ["weight_block_size"]),
    ],
    ids=["nested", "layers", "block-zero"],
)
def test_cli_process_prints_one_line(tmp_path, config, words):
    assert_one_line_error(run_cli("size", str(folder(tmp_path, config)), "--json"), *words)


def test_the_bounds_are_stated_in_the_messages():
    # The bounds themselves, so that a change to them is a deliberate one (hf_config.py says why these).
    from wizard.sources import hf_config, local, safetensors_header

    assert (hf_config.MAX_LAYERS, hf_config.MAX_WIDTH, hf_config.MAX_VOCAB, hf_config.MAX_EXPERTS,
            hf_config.MAX_CONTEXT) == (10_000, 1_000_000, 100_000_000, 100_000, 100_000_000)
    assert (local.MAX_JSON_BYTES, local.MAX_SHARDS) == (16 * 2**20, 100_000)
    assert (safetensors_header.MAX_ELEMENTS, safetensors_header.MAX_RANK) == (10**15, 64)
