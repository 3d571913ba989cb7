"""A local checkpoint folder: config.json (+ hf_quant_config.json), and exact sizes from *.safetensors headers.

Every file is opened with `open_regular` (a FIFO or device named config.json is refused, never read) and JSON
files are capped at MAX_JSON_BYTES before they are read. With model.safetensors.index.json, the shards it names
are the checkpoint (as vLLM filters them: a consolidated.safetensors beside them is not counted twice); without
one, every *.safetensors file is, and shard names ("-00002-of-00004") say which are missing.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from wizard.errors import InputError
from wizard.sources.hf_config import parse_config
from wizard.capped_read import open_regular
from wizard.sources.safetensors_header import count_tensors, read_header
from wizard.specs import ExactWeights, ModelSpec

# Tensor name endings that are quantization metadata, not weights: present means header elements are not params.
QUANT_METADATA = ("scale_inv", "weight_scale", "input_scale", ".scales", ".qzeros", ".g_idx", ".qweight", "_blocks", "_scales")
# config.json, hf_quant_config.json and model.safetensors.index.json of real models are kilobytes (an index of
# a 1,000-shard checkpoint with 100k tensors is ~10 MB): anything larger is not one of them.
MAX_JSON_BYTES = 16 * 2**20
# The most shards a checkpoint may have (the largest real ones have a few hundred).
MAX_SHARDS = 100_000
INDEX = "model.safetensors.index.json"


def read_json(path: Path, what: str) -> dict:
    """Parse a JSON file of at most MAX_JSON_BYTES, turning every failure into one line that names the file."""
    f, size = open_regular(path, what)
    with f:
        if size > MAX_JSON_BYTES:
            raise InputError(what, str(path), f"is {size:,} bytes; expected a JSON file of at most 16 MiB")
        try:
            raw = f.read(MAX_JSON_BYTES + 1)  # some files (/proc) report size 0: cap the read itself
        except OSError as e:
            raise InputError(what, str(path), f"could not be read ({e.strerror or type(e).__name__})") from None
    if len(raw) > MAX_JSON_BYTES:
        raise InputError(what, str(path), "is larger than 16 MiB; expected a JSON file of at most 16 MiB")
    return parse_json(raw, what, str(path))


def parse_json(raw: bytes, what: str, shown: str) -> dict:
    """A JSON object from bytes; RecursionError (thousands of nested brackets) and MemoryError in words."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except RecursionError:
        raise InputError(what, shown, "is nested too deeply (thousands of [ or {); expected a JSON config file") from None
    except MemoryError:
        raise InputError(what, shown, "is too large to parse; expected a JSON config file") from None
    except (UnicodeDecodeError, ValueError) as e:  # JSONDecodeError, or an integer of thousands of digits
        raise InputError(what, shown, f"is not valid JSON ({_short(e)})") from None
    if not isinstance(data, dict):
        raise InputError(what, shown, "is not a JSON object; expected {...} at the top level")
    return data


def _short(e: BaseException) -> str:
    text = str(e).splitlines()[0] if str(e) else type(e).__name__
    return text if len(text) <= 100 else text[:97] + "..."


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


def index_shards(index: dict, where: str) -> list[str]:
    """The shard files a model.safetensors.index.json names: plain file names beside it, at most MAX_SHARDS."""
    weight_map = index.get("weight_map")
    if not isinstance(weight_map, dict) or not weight_map:
        raise InputError(f"{where}: weight_map", "missing" if weight_map is None else weight_map,
                         "expected a non-empty mapping of tensor names to shard files")
    shards: set[str] = set()
    for tensor, name in weight_map.items():
        if not isinstance(name, str) or not plain_file_name(name) or not name.endswith(".safetensors"):
            raise InputError(f"{where}: weight_map[{tensor!r}]", name,
                             "expected the file name of a .safetensors shard in the same folder (no / or ..)")
        shards.add(name)
        if len(shards) > MAX_SHARDS:
            raise InputError(f"{where}: weight_map", f"more than {MAX_SHARDS:,} shard files",
                             f"expected at most {MAX_SHARDS:,} shards")
    return sorted(shards)


def plain_file_name(name: str) -> bool:
    """A name that stays in its folder: no separator, not '.' or '..', no NUL, not absolute, not a drive."""
    return bool(name) and name not in (".", "..") and not any(c in name for c in "/\\\0") and ":" not in name[:2]


def named_shards(names: list[str]) -> list[str]:
    """Every shard the "-00002-of-00004" names of `names` imply (at most MAX_SHARDS; totals must agree)."""
    totals: dict[str, tuple[str, int]] = {}
    for name in names:
        m = SHARD_NAME.match(name)
        if not m:
            continue
        stem, i, n = m.group("stem"), int(m.group("i")), int(m.group("n"))
        if not 1 <= n <= MAX_SHARDS or not 1 <= i <= n:
            raise InputError("safetensors shard", name,
                             f"expected a name -<i>-of-<n> with 1 <= i <= n <= {MAX_SHARDS:,}")
        seen = totals.setdefault(stem, (name, n))
        if seen[1] != n:
            raise InputError("safetensors shard", name,
                             f"expected the same shard total as {seen[0]} ({seen[1]}): files of two downloads mixed?")
    expected: set[str] = set()
    for name in names:
        m = SHARD_NAME.match(name)
        if m:
            width, total = len(m.group("i")), m.group("n")
            expected |= {f"{m.group('stem')}-{i:0{width}d}-of-{total}.safetensors" for i in range(1, int(total) + 1)}
    return sorted(expected)


def missing_shards(folder: Path) -> list[str]:
    """Shards that model.safetensors.index.json lists, or that the shard names count ("-00002-of-00004"), but
    the folder lacks: a partial download."""
    return checkpoint_files(folder)[1]


def checkpoint_files(folder: Path, entries: dict[str, str] | None = None) -> tuple[list[Path], list[str]]:
    """(safetensors files of the checkpoint that are present, names of the ones that are missing)."""
    entries = list_folder(folder) if entries is None else entries
    index = folder / INDEX
    if INDEX in entries:
        names = index_shards(read_json(index, INDEX), INDEX)
    else:
        present = sorted(n for n, kind in entries.items() if n.endswith(".safetensors") and kind != "dir")
        names = sorted(set(present) | set(named_shards(present)))
    files = [folder / n for n in names if entries.get(n) not in (None, "dir")]
    missing = [n for n in names if entries.get(n) in (None, "dir")]
    return files, missing


def list_folder(folder: Path) -> dict[str, str]:
    """{name: "file" | "dir" | "other"} of a folder's entries (a broken link or a FIFO is "other")."""
    out: dict[str, str] = {}
    try:
        with os.scandir(folder) as it:
            for entry in it:
                try:
                    kind = "dir" if entry.is_dir() else "file" if entry.is_file() else "other"
                except OSError:
                    kind = "other"
                out[entry.name] = kind
    except OSError as e:
        raise InputError("model", str(folder), f"the folder could not be listed ({e.strerror or type(e).__name__})") from None
    return out


def load_local(folder: Path) -> ModelSpec:
    """ModelSpec of a checkpoint folder; reads only config files and safetensors headers."""
    entries = list_folder(folder)
    config_path = folder / "config.json"
    if "config.json" not in entries:
        raise InputError("model", str(folder), "a local folder must contain config.json")
    config = read_json(config_path, "config.json")
    quant_path = folder / "hf_quant_config.json"
    quant = read_json(quant_path, "hf_quant_config.json") if "hf_quant_config.json" in entries else None
    spec = parse_config(
        config,
        model_id=str(folder),
        source="local",
        source_detail=str(config_path),
        quant_config=quant,
        where=str(config_path),
    )
    files, missing = checkpoint_files(folder, entries)
    if missing:
        note = (f"{len(missing)} safetensors shard(s) are missing (e.g. {missing[0]}): an incomplete download? "
                "Sized from config.json")
        return spec._replace(notes=(*spec.notes, note))
    if not files:
        return spec
    headers = [read_header(f) for f in files]
    exact = exact_from_headers(headers, config, f"{len(files)} file(s) in {folder}")
    return spec._replace(exact=exact)
