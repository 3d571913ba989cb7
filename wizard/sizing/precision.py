"""Deployed weight precision: resolve `auto` against the checkpoint and describe the storage format (DOMAIN §2)."""


import re
from typing import NamedTuple

from wizard.specs import ModelSpec

WEIGHT_PRECISIONS = ("auto", "bf16", "fp16", "fp8", "int8", "int4")
KV_DTYPES = ("auto", "fp8")


class WeightFormat(NamedTuple):
    """How quantizable linear weights are stored. Bytes are exact per format (sizing-notes "Quantized checkpoints")."""

    name: str  # bf16, fp16, fp8, int8, int4, mxfp4 (shown to the user)
    bits: int  # bits per weight value
    group_size: int | None = None  # one scale (and zero) per this many input weights
    scale_bytes: int = 2  # bytes per group scale (fp16 for AWQ/GPTQ, 1 for MX e8m0, 4 for fp32 FP8 block scales)
    zero_bits: int = 0  # bits per group zero point (AWQ/GPTQ pack 4-bit zeros)
    block: tuple[int, int] | None = None  # FP8 block quantization (rows, cols) with one fp32 scale per block
    per_channel_scale: bool = False  # one 16-bit scale per output row (int8 w8a8 channel-wise)
    g_idx: bool = False  # GPTQ act-order: one int32 per input channel
    from_checkpoint: bool = False  # the format is the checkpoint's own (no conversion at load)
    tensor_scale_bytes: int = 0  # per-tensor scales beside the group scales (NVFP4: fp32 weight_scale_2 + input_scale)


# NVFP4 (ModelOpt): E2M1 values, one FP8 E4M3 scale per 16 inputs, fp32 weight_scale_2 and input_scale per tensor
# (vLLM modelopt.py @ v0.33.0 ModelOptNvFp4LinearMethod.create_weights): 4.5 bits a weight plus 8 bytes a tensor.
NVFP4 = WeightFormat("nvfp4", 4, group_size=16, scale_bytes=1, tensor_scale_bytes=8, from_checkpoint=True)
# ModelOpt FP8 per tensor: one fp32 weight scale (scale_bytes) and one fp32 input scale.
MODELOPT_FP8 = WeightFormat("fp8", 8, scale_bytes=4, tensor_scale_bytes=4, from_checkpoint=True)


def weight_format(m: ModelSpec, precision: str) -> WeightFormat:
    """The storage format vLLM would use for `precision` on this checkpoint; `auto` means the checkpoint's own."""
    q = m.quant
    if precision == "auto":
        if q is None:
            return WeightFormat("bf16", 16, from_checkpoint=True)
        return _checkpoint_format(q)
    if q is not None and _checkpoint_format(q).name == precision:
        return _checkpoint_format(q)
    if precision in ("bf16", "fp16"):
        return WeightFormat(precision, 16, from_checkpoint=q is None)
    if precision == "fp8":  # vLLM --quantization fp8 on a 16-bit checkpoint: dynamic, per-tensor scale
        return WeightFormat("fp8", 8, scale_bytes=4)
    if precision == "int8":  # w8a8 / GPTQ-8bit style: one 16-bit scale per output channel
        return WeightFormat("int8", 8, per_channel_scale=True)
    if precision == "int4":  # AWQ/GPTQ defaults: group 128, fp16 scales, 4-bit zeros
        return WeightFormat("int4", 4, group_size=128, scale_bytes=2, zero_bits=4)
    raise ValueError(precision)


_LAYER_PREFIX = re.compile(r"^model\.layers\.\d+\.")


def module_format(name: str, q) -> WeightFormat | None:
    """The format of one tensor of a ModelOpt MIXED_PRECISION checkpoint: its module kind's entry, or None
    (16-bit) when the kind is not listed. A fused entry ("mlp.experts") covers the projections below it."""
    kind = _LAYER_PREFIX.sub("", name)  # the tool's tensor names: model.layers.N.<kind>, experts unnumbered
    for pattern, fmt, group in q.mixed:
        if kind == pattern or kind.startswith(pattern + "."):
            return NVFP4._replace(group_size=group or 16) if fmt == "nvfp4" else MODELOPT_FP8
    return None


def _checkpoint_format(q) -> WeightFormat:
    if q.fp4 == "nvfp4":
        return NVFP4._replace(group_size=q.group_size or 16)
    if q.method == "mxfp4":
        return WeightFormat("mxfp4", 4, group_size=32, scale_bytes=1, from_checkpoint=True)
    if q.bits == 8 and q.method in ("fp8", "modelopt") or (q.method == "compressed-tensors" and q.bits == 8 and q.block_size):
        return WeightFormat("fp8", 8, block=q.block_size, scale_bytes=4, from_checkpoint=True)
    if q.bits == 8:
        if q.group_size:
            return WeightFormat("int8", 8, group_size=q.group_size, scale_bytes=2, from_checkpoint=True)
        return WeightFormat("int8", 8, per_channel_scale=True, from_checkpoint=True)
    if q.method == "bitsandbytes":  # NF4: one fp32 absmax per 64 weights (before double quantization)
        return WeightFormat("int4", 4, group_size=q.group_size or 64, scale_bytes=4, from_checkpoint=True)
    return WeightFormat(
        "int4",
        q.bits,
        group_size=q.group_size,
        scale_bytes=2,
        zero_bits=q.bits if q.method in ("awq", "gptq") else 0,
        g_idx=q.desc_act,
        from_checkpoint=True,
    )


def precision_problem(m: ModelSpec, precision: str) -> str | None:
    """Why vLLM cannot serve this checkpoint at `precision`, or None. A quantized checkpoint loads in its own
    format: it is not dequantized to 16-bit nor re-quantized to another format at load."""
    if m.quant is None or precision == "auto":
        return None
    own = _checkpoint_format(m.quant).name
    if precision != own:
        return f"the checkpoint is stored as {own} and vLLM loads it as {own}: use auto (or {own})"
    return None
