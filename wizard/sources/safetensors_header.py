"""Exact parameter counts and bytes from safetensors headers, without reading any weights.

A .safetensors file starts with an 8-byte little-endian header length, then a JSON object mapping tensor
names to {dtype, shape, data_offsets}, then the tensors' bytes (https://github.com/huggingface/safetensors,
format spec). A header is checked as the safetensors library checks it before loading: every tensor has a known
dtype, a list of non-negative integer dimensions and offsets [begin, end] whose length is its byte size; the
tensors tile the data buffer from 0 without gaps; the file ends where the last tensor does. Anything else is one
InputError, never a silently wrong count.

Files are opened with `open_regular`: a FIFO, device or socket is refused after `fstat` instead of blocking on
a read, and callers cap how much they read.
"""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path

from wizard.capped_read import open_regular
from wizard.errors import InputError

DTYPE_BITS = {
    "F64": 64, "F32": 32, "F16": 16, "BF16": 16, "I64": 64, "I32": 32, "I16": 16, "I8": 8, "U8": 8,
    "BOOL": 8, "F8_E4M3": 8, "F8_E5M2": 8, "F8_E8M0": 8, "U16": 16, "U32": 32, "U64": 64, "F4": 4,
}
MAX_HEADER = 100 * 2**20  # the format caps headers at 100 MB
# Sanity bounds, far above any real checkpoint (the largest real tensors have ~10**11 elements and 2-4
# dimensions): they stop absurd headers before any arithmetic on them.
MAX_ELEMENTS = 10**15  # per tensor
MAX_RANK = 64  # dimensions per tensor
# Tensors that are not part of the served language model (DeepSeek's multi-token-prediction layer is
# counted separately; sizing-notes: "V3 main model 671,026,419,200 params without the MTP layer").
SKIP_PREFIXES = ("model.mtp.",)


def read_header(path: Path) -> dict:
    """The JSON header of one .safetensors file, checked against the file's size."""
    where = str(path)
    f, size = open_regular(path, "safetensors file")
    with f:
        try:
            head = f.read(8)
            if head == b"version ":  # a git-lfs pointer file ("version https://git-lfs...") in place of the weights
                raise InputError(where, "a git-lfs pointer", "expected the real file: run `git lfs pull`")
            if len(head) != 8:
                raise InputError(where, "truncated", "expected a safetensors file (8-byte header length)")
            (n,) = struct.unpack("<Q", head)
            check_header_length(n, where, size)
            raw = f.read(n)
        except OSError as e:
            raise InputError(where, "unreadable", f"could not be read ({e.strerror or type(e).__name__})") from None
    if len(raw) != n:
        raise InputError(where, "truncated", f"expected a header of {n:,} bytes, the file has {len(raw):,}")
    header = parse_header(raw, where)
    data = data_size(header, where)
    if 8 + n + data != size:
        state = "truncated" if 8 + n + data > size else "longer than its header says"
        raise InputError(where, f"{size:,} bytes, {state}",
                         f"expected {8 + n + data:,} bytes (8 + a {n:,}-byte header + {data:,} bytes of tensors): "
                         "an interrupted download?")
    return header


def check_header_length(n: int, where: str, file_size: int | None = None) -> None:
    """The 8-byte length prefix: not 0 (a zero-filled file), at most 100 MB, and inside the file."""
    if n == 0:
        raise InputError(where, "a header length of 0", "expected a safetensors file (a zero-filled file?)")
    if n > MAX_HEADER:
        raise InputError(where, f"header of {n} bytes", "expected a safetensors header under 100 MB")
    if file_size is not None and 8 + n > file_size:
        raise InputError(where, f"header of {n:,} bytes in a file of {file_size:,} bytes",
                         "expected a complete safetensors file (truncated? not a safetensors file?)")


def parse_header(raw: bytes, where: str) -> dict:
    """Decode and check one header (see the module docstring); errors name the file."""
    try:
        header = json.loads(raw.decode("utf-8"))
    except RecursionError:
        raise InputError(where, "unreadable header", "expected JSON nested a few levels deep, not thousands") from None
    except MemoryError:
        raise InputError(where, "unreadable header", "expected a header that fits in memory") from None
    except (UnicodeDecodeError, ValueError) as e:  # JSONDecodeError, or an integer of thousands of digits
        raise InputError(where, "unreadable header", f"expected JSON ({e.__class__.__name__})") from None
    if not isinstance(header, dict):
        raise InputError(where, "unreadable header", "expected a JSON object of tensors")
    check_header(header, where)
    return header


def check_header(header: dict, where: str) -> None:
    """Types and bounds of every entry, before any arithmetic on them."""
    meta = header.get("__metadata__")
    if meta is not None and not (isinstance(meta, dict) and all(isinstance(v, str) for v in meta.values())):
        raise InputError(f"{where}: __metadata__", meta, "expected a JSON object of strings")
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if not isinstance(info, dict):
            raise InputError(f"{where}: tensor {name}", info, "expected an object {dtype, shape, data_offsets}")
        dtype = info.get("dtype")
        shape = info.get("shape")
        if not isinstance(dtype, str) or dtype not in DTYPE_BITS or not isinstance(shape, (list, tuple)) or not all(
            isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape
        ):
            raise InputError(f"{where}: tensor {name}", f"{dtype} {shape}",
                             "expected a known dtype and a list of non-negative integer dimensions")
        if len(shape) > MAX_RANK or any(d > MAX_ELEMENTS for d in shape) or math.prod(shape) > MAX_ELEMENTS:
            raise InputError(f"{where}: tensor {name}", f"shape {shape}",
                             f"expected at most {MAX_RANK} dimensions and {MAX_ELEMENTS:,} elements")
        offsets = info.get("data_offsets")
        if (not isinstance(offsets, (list, tuple)) or len(offsets) != 2
                or not all(isinstance(o, int) and not isinstance(o, bool) for o in offsets)
                or not 0 <= offsets[0] <= offsets[1]):
            raise InputError(f"{where}: tensor {name}", f"data_offsets {offsets}",
                             "expected [begin, end], two integers with 0 <= begin <= end")
        expected = -(-math.prod(shape) * DTYPE_BITS[dtype] // 8)
        if offsets[1] - offsets[0] != expected:
            raise InputError(f"{where}: tensor {name}", f"data_offsets {list(offsets)}",
                             f"expected {expected:,} bytes for {dtype} {list(shape)}")


def data_size(header: dict, where: str) -> int:
    """Bytes of the data buffer: the tensors must tile it from 0 without gaps or overlaps (as safetensors checks)."""
    spans = sorted(tuple(info["data_offsets"]) for name, info in header.items() if name != "__metadata__")
    end = 0
    for begin, stop in spans:
        if begin != end:
            raise InputError(where, f"data_offsets [{begin}, {stop}]",
                             f"expected the tensors to follow each other without gaps or overlaps (next at {end:,})")
        end = stop
    return end


def count_tensors(headers: list[dict], skip_layers_from: int | None = None) -> tuple[int, int, dict[str, int]]:
    """(elements, bytes, bytes per dtype) over the tensors of several headers (checked by `check_header`).

    Packed formats store several values per element (int32 AWQ/GPTQ words, uint8 mxfp4 pairs), so `elements`
    counts stored elements, not logical weights; `bytes` is exact whatever the packing.
    `skip_layers_from`: layer index from which tensors belong to MTP layers (num_hidden_layers for DeepSeek-V3).
    """
    params = 0
    total = 0
    by_dtype: dict[str, int] = {}
    for header in headers:
        check_header(header, "safetensors header")  # read_header / the Hub checked it already: cheap
        for name, info in header.items():
            if name == "__metadata__":
                continue
            if name.startswith(SKIP_PREFIXES) or _is_extra_layer(name, skip_layers_from):
                continue
            dtype = info["dtype"]
            n = math.prod(info["shape"])
            b = n * DTYPE_BITS[dtype] // 8
            params += n
            total += b
            by_dtype[dtype] = by_dtype.get(dtype, 0) + b
    return params, total, by_dtype


def _is_extra_layer(name: str, first_extra: int | None) -> bool:
    if first_extra is None or not name.startswith("model.layers."):
        return False
    index = name.split(".", 3)[2]
    return index.isdigit() and len(index) < 12 and int(index) >= first_extra


def head_bytes(path: Path) -> int | None:
    """Size of a regular file, None for anything else (a folder named *.safetensors, a broken link)."""
    try:
        return path.stat().st_size if path.is_file() else None
    except (OSError, ValueError):
        return None
