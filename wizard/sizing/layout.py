"""Parallel layouts: which TP × PP splits an engine accepts for a model, and how PP splits the layers (DOMAIN §3)."""

from __future__ import annotations

from wizard.errors import InputError
from wizard.specs import ModelSpec


def stage_layers(layers: int, pp: int) -> list[tuple[int, int]]:
    """Layer ranges [lo, hi) per PP stage, as vLLM's get_pp_indices splits them: the remainder goes to the
    stages before the last (the last also holds lm_head)."""
    base = [layers // pp] * pp
    for i in range(2, layers % pp + 2):
        base[-i] += 1
    out, lo = [], 0
    for n in base:
        out.append((lo, lo + n))
        lo += n
    return out


def divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def check_layout(m: ModelSpec, tp: int, pp: int, weight_format_name: str = "bf16", group: int | None = None,
                 block: tuple[int, int] | None = None) -> None:
    """Raise InputError naming the first rule a TP × PP layout breaks (sizing-notes "Parallel layouts")."""
    if tp < 1:
        raise InputError("tp", tp, "expected an integer >= 1")
    if pp < 1:
        raise InputError("pp", pp, "expected an integer >= 1")
    heads = m.num_attention_heads
    if heads % tp:
        ok = ", ".join(str(d) for d in divisors(heads))
        raise InputError("tp", tp, f"TP must divide num_attention_heads ({heads}): accepted {ok}")
    kv = m.num_kv_heads
    if m.mla is None and kv % tp and tp % kv:
        raise InputError("tp", tp, f"num_key_value_heads ({kv}) must be divisible by TP, or TP by it (replication)")
    if pp > m.num_layers:
        raise InputError("pp", pp, f"PP cannot exceed the number of layers ({m.num_layers})")
    if m.linear is not None and (m.linear.key_heads % tp or m.linear.value_heads % tp):
        raise InputError(
            "tp", tp,
            f"TP must divide the linear-attention heads ({m.linear.key_heads} key, {m.linear.value_heads} value)",
        )
    # Quantized kernels need every TP-split dimension aligned to the quantization group or block
    # (vLLM: "The input size is not aligned with the quantized weight shape" / "not divisible by block_n").
    align = block[0] if block else group
    if align:
        for name, width in _split_widths(m):
            if width % tp or (width // tp) % align:
                raise InputError(
                    "tp", tp,
                    f"{name} ({width}) / TP = {width / tp:g} is not a multiple of the {weight_format_name} "
                    f"{'block' if block else 'group'} size {align}: vLLM rejects this layout",
                )


def _split_widths(m: ModelSpec) -> list[tuple[str, int]]:
    widths = []
    if m.intermediate_size and (m.moe is None or m.moe.dense_layers):
        widths.append(("intermediate_size", m.intermediate_size))
    # MoE experts are not checked: vLLM 0.33 refines FP8 block scales to a finer block (>= 32) or pads the
    # TP shard (resolve_fp8_moe_weight_block_shape), so e.g. Qwen3-30B-A3B-FP8 at TP 4 (192 per rank) loads.
    return widths
