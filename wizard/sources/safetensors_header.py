"""Exact parameter counts and bytes from safetensors headers, without reading any weights.

A .safetensors file starts with an 8-byte little-endian header length, then a JSON object mapping tensor
names to {dtype, shape, data_offsets} (https://github.com/huggingface/safetensors, format spec).
"""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path

from wizard.errors import InputError

DTYPE_BITS = {
    "F64": 64, "F32": 32, "F16": 16, "BF16": 16, "I64": 64, "I32": 32, "I16": 16, "I8": 8, "U8": 8,
    "BOOL": 8, "F8_E4M3": 8, "F8_E5M2": 8, "F8_E8M0": 8, "U16": 16, "U32": 32, "U64": 64, "F4": 4,
}
MAX_HEADER = 100 * 2**20  # the format caps headers at 100 MB
# Tensors that are not part of the served language model (DeepSeek's multi-token-prediction layer is
# counted separately; sizing-notes: "V3 main model 671,026,419,200 params without the MTP layer").
SKIP_PREFIXES = ("model.mtp.",)


def read_header(path: Path) -> dict:
    """The JSON header of one .safetensors file."""
    if head_bytes(path) is None:
        raise InputError(str(path), "not a file", "expected a safetensors file")
    with path.open("rb") as f:
        head = f.read(8)
        if head == b"version ":  # a git-lfs pointer file ("version https://git-lfs...") in place of the weights
            raise InputError(str(path), "a git-lfs pointer", "expected the real file: run `git lfs pull`")
        if len(head) != 8:
            raise InputError(str(path), "truncated", "expected a safetensors file (8-byte header length)")
        (n,) = struct.unpack("<Q", head)
        if n > MAX_HEADER:
            raise InputError(str(path), f"header of {n} bytes", "expected a safetensors header under 100 MB")
        raw = f.read(n)
    try:
        header = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InputError(str(path), "unreadable header", f"expected JSON ({e.__class__.__name__})") from None
    if not isinstance(header, dict):
        raise InputError(str(path), "unreadable header", "expected a JSON object of tensors")
    return header


def count_tensors(headers: list[dict], skip_layers_from: int | None = None) -> tuple[int, int, dict[str, int]]:
    """(elements, bytes, bytes per dtype) over the tensors of several headers.

    Packed formats store several values per element (int32 AWQ/GPTQ words, uint8 mxfp4 pairs), so `elements`
    counts stored elements, not logical weights; `bytes` is exact whatever the packing.
    `skip_layers_from`: layer index from which tensors belong to MTP layers (num_hidden_layers for DeepSeek-V3).
    """
    params = 0
    total = 0
    by_dtype: dict[str, int] = {}
    for header in headers:
        for name, info in header.items():
            if name == "__metadata__" or not isinstance(info, dict):
                continue
            if name.startswith(SKIP_PREFIXES) or _is_extra_layer(name, skip_layers_from):
                continue
            dtype = info.get("dtype")
            shape = info.get("shape")
            if dtype not in DTYPE_BITS or not isinstance(shape, list) or not all(
                isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape
            ):
                raise InputError(f"safetensors tensor {name}", f"{dtype} {shape}",
                                 "expected a known dtype and a list of non-negative integer dimensions")
            n = math.prod(shape)
            b = n * DTYPE_BITS[dtype] // 8
            params += n
            total += b
            by_dtype[dtype] = by_dtype.get(dtype, 0) + b
    return params, total, by_dtype


def _is_extra_layer(name: str, first_extra: int | None) -> bool:
    if first_extra is None or not name.startswith("model.layers."):
        return False
    index = name.split(".", 3)[2]
    return index.isdigit() and int(index) >= first_extra


def head_bytes(path: Path) -> int | None:
    """Size of a regular file, None for anything else (a folder named *.safetensors, a broken link)."""
    try:
        return path.stat().st_size if path.is_file() else None
    except OSError:
        return None
