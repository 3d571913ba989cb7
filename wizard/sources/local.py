"""A local checkpoint folder: config.json (+ hf_quant_config.json), and exact sizes from *.safetensors headers."""

from __future__ import annotations

import json
import re
from pathlib import Path

from wizard.errors import InputError
from wizard.sources.hf_config import parse_config
from wizard.sources.safetensors_header import count_tensors, read_header
from wizard.specs import ExactWeights, ModelSpec

# Tensor name endings that are quantization metadata, not weights: present means header elements are not params.
QUANT_METADATA = ("scale_inv", "weight_scale", "input_scale", ".scales", ".qzeros", ".g_idx", ".qweight", "_blocks", "_scales")


def read_json(path: Path, what: str) -> dict:
    """Parse a JSON file, turning every failure into one line that names the file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise InputError(what, str(path), f"could not be read ({e.strerror})") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InputError(what, str(path), f"is not valid JSON ({e})") from None
    if not isinstance(data, dict):
        raise InputError(what, str(path), "expected a JSON object")
    return data


def exact_from_headers(headers: list[dict], config: dict, where: str) -> ExactWeights:
    """Exact bytes (and params, when the tensors are unpacked weights) from safetensors headers.

    float32 tensors are counted at 2 bytes: vLLM serves a float32 checkpoint in 16-bit (dtype auto)."""
    text = config.get("text_config") or config
    first_extra = text.get("num_hidden_layers") if text.get("num_nextn_predict_layers") else None
    params, total, by_dtype = count_tensors(headers, first_extra if isinstance(first_extra, int) else None)
    total -= by_dtype.get("F32", 0) // 2 + by_dtype.get("F64", 0) * 3 // 4
    packed = any(name.endswith(QUANT_METADATA) for h in headers for name in h)
    return ExactWeights(params=None if packed else params, bytes=total, source=f"safetensors headers ({where})")


SHARD_NAME = re.compile(r"^(?P<stem>.+)-(?P<i>\d+)-of-(?P<n>\d+)\.safetensors$")


def missing_shards(folder: Path) -> list[str]:
    """Shards that model.safetensors.index.json lists, or that the shard names count ("-00002-of-00004"), but
    the folder lacks: a partial download."""
    index = folder / "model.safetensors.index.json"
    if not index.is_file():
        expected: set[str] = set()
        for f in folder.glob("*.safetensors"):
            m = SHARD_NAME.match(f.name)
            if m:
                width, n = len(m.group("i")), int(m.group("n"))
                expected |= {f"{m.group('stem')}-{i:0{width}d}-of-{m.group('n')}.safetensors" for i in range(1, n + 1)}
        return sorted(e for e in expected if not (folder / e).is_file())
    weight_map = read_json(index, "model.safetensors.index.json").get("weight_map") or {}
    if not isinstance(weight_map, dict):
        raise InputError("model.safetensors.index.json", "weight_map", "expected a mapping of tensor names to files")
    return sorted({f for f in weight_map.values() if not (folder / str(f)).is_file()})


def load_local(folder: Path) -> ModelSpec:
    """ModelSpec of a checkpoint folder; reads only config files and safetensors headers."""
    config_path = folder / "config.json"
    if not config_path.is_file():
        raise InputError("model", str(folder), "a local folder must contain config.json")
    config = read_json(config_path, "config.json")
    quant_path = folder / "hf_quant_config.json"
    quant = read_json(quant_path, "hf_quant_config.json") if quant_path.is_file() else None
    spec = parse_config(
        config,
        model_id=str(folder),
        source="local",
        source_detail=str(config_path),
        quant_config=quant,
        where=str(config_path),
    )
    files = sorted(f for f in folder.glob("*.safetensors") if f.is_file())
    if not files:
        return spec
    missing = missing_shards(folder)
    if missing:
        note = (f"{len(missing)} safetensors shard(s) are missing (e.g. {missing[0]}): an incomplete download? "
                "Sized from config.json")
        return spec._replace(notes=(*spec.notes, note))
    headers = [read_header(f) for f in files]
    exact = exact_from_headers(headers, config, f"{len(files)} file(s) in {folder}")
    return spec._replace(exact=exact)

