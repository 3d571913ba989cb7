"""Weight bytes at the deployed precision, whole and per GPU of a TP × PP layout (DOMAIN §2: params × bits / 8).

Only projection matrices are quantized; embeddings, norms, routers, biases and towers stay 16-bit, as do
modules the checkpoint lists in modules_to_not_convert. Group scales/zeros, FP8 block scales and GPTQ g_idx
are counted exactly from the storage format.
"""


import fnmatch
from functools import lru_cache
from typing import NamedTuple

from wizard.sizing.layout import stage_layers
from wizard.sizing.precision import WeightFormat, module_format, weight_format
from wizard.sizing.tensors import LINEAR_W, LM_HEAD, REPLICATED_W, ROUTER, VECTOR, VECTOR_W, VISION, Tensor, inventory
from wizard.specs import ModelSpec

QUANTIZABLE = (LINEAR_W, REPLICATED_W)
NOT_SPLIT = (VECTOR, ROUTER, REPLICATED_W, VISION, VECTOR_W)  # replicated on every TP rank


class WeightBytes(NamedTuple):
    """Bytes of weights: the whole model, and one GPU of the layout (its PP stage, its TP share)."""

    total: int
    per_gpu: int  # the heaviest stage's; `size` sets it to the stage of the GPU that runs out first
    format: WeightFormat
    exact: bool  # scaled to the byte count of the safetensors headers
    per_stage: tuple[int, ...]  # per GPU of each PP stage
    buffers: int = 0  # per GPU, in per_gpu and per_stage: built at load, not read from the checkpoint (RoPE cache)
    padding: int = 0  # per GPU, in per_gpu and per_stage: zeros a kernel's layout adds to the experts at load


def tensor_bytes(t: Tensor, fmt: WeightFormat, m: ModelSpec) -> int:
    """Bytes of one tensor stored in `fmt` (16-bit when it is not a quantizable projection)."""
    n = t.rows * t.cols
    if m.quant is not None and m.quant.mixed and fmt.from_checkpoint:  # ModelOpt MIXED_PRECISION: per module kind
        own = module_format(t.name, m.quant) if t.role in (*QUANTIZABLE, LM_HEAD) else None
        if own is None:
            return n * 2 * t.copies
        fmt = own
    elif t.role not in QUANTIZABLE or fmt.bits >= 16 or _not_converted(t.name, m):
        return n * 2 * t.copies
    b = n * fmt.bits // 8
    if fmt.group_size:  # one scale (+ zero) per group of input weights, per output row
        groups = -(-t.cols // fmt.group_size) * t.rows
        b += groups * fmt.scale_bytes + groups * fmt.zero_bits // 8
    if fmt.block:  # one fp32 scale per (block rows × block cols) tile
        b += -(-t.rows // fmt.block[0]) * -(-t.cols // fmt.block[1]) * fmt.scale_bytes
    elif fmt.per_channel_scale:
        b += t.rows * 2
    elif not fmt.group_size:
        b += fmt.scale_bytes  # per-tensor scale
    if fmt.g_idx:
        b += t.cols * 4
    b += fmt.tensor_scale_bytes
    return b * t.copies


def _not_converted(name: str, m: ModelSpec) -> bool:
    """modules_to_not_convert / exclude_modules patterns: exact names, prefixes, or globs ('model.layers.*.self_attn')."""
    if m.quant is None or not m.quant.not_converted:
        return False
    if name == "lm_head" and m.quant.method in ("awq", "gptq", "fp8", "modelopt", "compressed-tensors", "mxfp4"):
        return True  # these loaders keep lm_head unquantized even when the list omits it
    for pattern in m.quant.not_converted:
        if name == pattern or name.startswith(pattern + ".") or fnmatch.fnmatch(name, pattern) or fnmatch.fnmatch(name, pattern + ".*"):
            return True
    return False


@lru_cache(maxsize=64)
def _bytes_by_place(m: ModelSpec, precision: str) -> tuple[tuple[int, bool, int | None, str, str], ...]:
    """Per tensor: (bytes in the deployed format, split by TP?, layer, role, name) — independent of the layout."""
    fmt = weight_format(m, precision)
    return tuple((tensor_bytes(t, fmt, m), t.role not in NOT_SPLIT, t.layer, t.role, t.name) for t in inventory(m))


@lru_cache(maxsize=256)
def weight_bytes(m: ModelSpec, precision: str, tp: int = 1, pp: int = 1) -> WeightBytes:
    """Total weight bytes and the bytes on the heaviest GPU of a TP × PP layout."""
    fmt = weight_format(m, precision)
    stage_of = [s for s, (lo, hi) in enumerate(stage_layers(m.num_layers, pp)) for _ in range(lo, hi)]
    whole = 0
    per_stage = [0.0] * pp
    for b, split, layer, role, name in _bytes_by_place(m, precision):
        whole += b
        share = b / tp if split else b
        if layer is None:  # embeddings on the first stage; final norm, lm_head on the last; towers first
            stage = pp - 1 if role == LM_HEAD or name == "model.norm" else 0
            if role == "embedding" and m.tie_word_embeddings and pp > 1:
                per_stage[pp - 1] += share  # the tied head is a second copy on the last stage
        else:
            stage = stage_of[layer]
        per_stage[stage] += share
    exact = False
    if m.exact is not None and m.exact.bytes and fmt.from_checkpoint and whole:
        scale = m.exact.bytes / whole  # the headers are the truth; keep the structure's split across GPUs
        per_stage = [s * scale for s in per_stage]
        whole = m.exact.bytes
        exact = True
    rounded = tuple(int(round(s)) for s in per_stage)
    return WeightBytes(total=whole, per_gpu=max(rounded), format=fmt, exact=exact, per_stage=rounded)


def _round_up(x: int, multiple: int) -> int:
    return -(-x // multiple) * multiple


@lru_cache(maxsize=64)
def expert_padding_bytes(m: ModelSpec, precision: str, tp: int, pp: int, multiples: tuple[int, int]) -> tuple[int, ...]:
    """Bytes per GPU of each PP stage that padding the routed experts adds: the kernel allocates each expert with
    its intermediate size per TP partition rounded up to `multiples[0]` and the hidden size to `multiples[1]`
    (vLLM's Marlin MXFP4 layout, engines.mxfp4_moe_padding). Their bf16 biases are left out (< 0.1 % of them)."""
    moe = m.moe
    if moe is None:
        return (0,) * pp
    fmt = weight_format(m, precision)
    w, h = moe.expert_intermediate_size, m.hidden_size
    w_pad, h_pad = _round_up(w // tp, multiples[0]) * tp, _round_up(h, multiples[1])
    stage_of = [s for s, (lo, hi) in enumerate(stage_layers(m.num_layers, pp)) for _ in range(lo, hi)]
    per_stage = [0] * pp
    for t in inventory(m):
        if t.role != LINEAR_W or t.copies == 1 or t.layer is None:  # routed experts: one tensor, E copies
            continue
        rows, cols = (h_pad, w_pad) if t.rows == h and t.cols == w else (w_pad, h_pad)
        extra = tensor_bytes(t._replace(rows=rows, cols=cols), fmt, m) - tensor_bytes(t, fmt, m)
        per_stage[stage_of[t.layer]] += extra // tp
    return tuple(per_stage)
