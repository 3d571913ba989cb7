"""Memory per GPU as one stacked bar (§2): weights, KV cache, activations and reserve against the usable memory —
the figures of the plan's memory section (plan.memory), drawn. Pure: the terminal and the SVG both read `bars`.

The bar's scale is the larger of the usable memory and the total, so a layout that does not fit shows where the
usable memory ends and by how much the parts overrun it.
"""

from __future__ import annotations

from typing import NamedTuple

from wizard.specs.contracts import Plan

# one letter per part, as the wizard's side panel draws it, so the bar reads without colour
PARTS = (("weights", "weights", "W", "#5b8def"), ("kv_cache", "KV cache", "K", "#3fb950"),
         ("activations", "activations", "A", "#d29922"), ("reserve", "reserve", "R", "#a371f7"))
FREE_COLOUR = "#d0d7de"
OVER_COLOUR = "#cf222e"


class Part(NamedTuple):
    key: str
    label: str
    letter: str
    colour: str
    bytes: int


class MemoryBar(NamedTuple):
    gpu: str
    parts: tuple[Part, ...]
    total: int
    usable: int
    headroom: int
    """usable − total: negative when it does not fit"""
    fits: bool
    heaviest_stage: bool
    """PP > 1: the figures are the heaviest pipeline stage's GPU"""

    @property
    def scale(self) -> int:
        return max(self.usable, self.total) or 1


def memory_bar(plan: Plan) -> MemoryBar | None:
    """The bar of the plan's sized GPU (None for a plan that sized none: a managed API, a CPU)."""
    m = plan.memory
    if m is None:
        return None
    b = m.per_gpu_bytes
    parts = tuple(Part(key, label, letter, colour, getattr(b, key)) for key, label, letter, colour in PARTS)
    return MemoryBar(gpu=m.gpu.id, parts=parts, total=b.total, usable=m.usable_bytes, headroom=m.headroom_bytes,
                     fits=m.fits, heaviest_stage=m.parallel.pp > 1)


def cells(bar: MemoryBar, width: int) -> list[tuple[Part | None, int]]:
    """The bar in `width` character cells: (part, cells) in order, then (None, free cells). A part too small for
    half a cell still gets one (it is there), taken from the largest part."""
    counts = [max(1, round(p.bytes / bar.scale * width)) if p.bytes > 0 else 0 for p in bar.parts]
    while sum(counts) > width and max(counts) > 1:
        counts[counts.index(max(counts))] -= 1
    used = sum(counts)
    out: list[tuple[Part | None, int]] = [(p, n) for p, n in zip(bar.parts, counts) if n]
    if used < width:
        out.append((None, width - used))
    return out


def usable_cell(bar: MemoryBar, width: int) -> int:
    """The cell where the usable memory ends (the bar's end when everything fits)."""
    return round(bar.usable / bar.scale * width)
