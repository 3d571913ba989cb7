"""Choose a layout in DOMAIN §1's fixed order: one GPU, else TP inside one node, else TP inside + PP across nodes.

For each candidate layout the KV room decides how many sequences one copy holds at the full context; the
peak concurrency then needs ceil(peak / per copy) copies (§5: replicas carry load, parallelism makes a model
fit). A model that fits one card stays on one card unless a TP layout inside the node serves the same peak
with strictly fewer GPUs (a card so full of weights that it holds only a few sequences is "fits, but
throughput is short": §9, first line).
"""

import math
from typing import NamedTuple

from wizard.errors import InputError
from wizard.sizing.fit import SizeInputs, SizeResult, size
from wizard.sizing.layout import divisors
from wizard.specs import GpuSpec, ModelSpec

SINGLE, ONE_NODE, MULTI_NODE = "single_gpu", "single_node_multi_gpu", "multi_node"
FORM_ORDER = {SINGLE: 0, ONE_NODE: 1, MULTI_NODE: 2}
MAX_PP = 16  # pipeline stages tried before declaring that no catalog node count holds the model


class LayoutOption(NamedTuple):
    """One way to hold the model: a TP × PP group of GPUs, sized at the sequences one copy can carry."""

    form: str
    gpu: GpuSpec
    tp: int
    pp: int
    per_copy_concurrency: int  # full-context sequences one copy holds (capped at the peak)
    copies_for_peak: int  # ceil(peak concurrency / per copy)
    result: SizeResult  # sized at per_copy_concurrency

    @property
    def gpus_per_copy(self) -> int:
        return self.tp * self.pp

    @property
    def gpus_for_peak(self) -> int:
        return self.copies_for_peak * self.gpus_per_copy

    @property
    def nodes_per_copy(self) -> int:
        return math.ceil(self.gpus_per_copy / self.gpu.gpus_per_node)


def option(model: ModelSpec, gpu: GpuSpec, base: SizeInputs, tp: int, pp: int, peak: int) -> LayoutOption | None:
    """Size one layout; None when the engine rejects it or not even one full-context sequence fits."""
    try:
        probe = size(model, gpu, base._replace(tp=tp, pp=pp, concurrency=1))
    except InputError:
        return None
    per_copy = min(peak, probe.kv_capacity_tokens // base.context_tokens)
    while per_copy >= 1:
        r = size(model, gpu, base._replace(tp=tp, pp=pp, concurrency=per_copy))
        if r.fits:
            form = SINGLE if tp * pp == 1 else ONE_NODE if tp * pp <= gpu.gpus_per_node and pp == 1 else MULTI_NODE
            return LayoutOption(form, gpu, tp, pp, per_copy, math.ceil(peak / per_copy), r)
        per_copy -= 1  # the sampler profile grows with max_num_seqs: step down until it fits
    return None


def layout_options(model: ModelSpec, gpu: GpuSpec, base: SizeInputs, peak: int) -> list[LayoutOption]:
    """Every layout that fits on this GPU type: one GPU, each valid TP inside a node, TP × PP across nodes."""
    found: list[LayoutOption] = []
    node = gpu.gpus_per_node
    for tp in [d for d in divisors(node)]:
        o = option(model, gpu, base, tp, 1, peak)
        if o is not None:
            found.append(o)
    if not any(o.form in (SINGLE, ONE_NODE) for o in found):
        tp = max(d for d in divisors(node) if d <= node)
        for pp in range(2, MAX_PP + 1):  # TP inside the node, PP across nodes (§3): never TP across nodes
            o = option(model, gpu, base, tp, pp, peak)
            if o is not None:
                found.append(o)
                break
    return found


def best_option(options: list[LayoutOption]) -> LayoutOption | None:
    """§1 order, then fewest GPUs for the peak; a TP layout displaces one GPU only by needing fewer GPUs."""
    if not options:
        return None
    simplest = min(FORM_ORDER[o.form] for o in options)
    if simplest == FORM_ORDER[SINGLE]:
        single = next(o for o in options if o.form == SINGLE)
        in_node = [o for o in options if o.form == ONE_NODE and o.gpus_for_peak < single.gpus_for_peak]
        return min(in_node, key=lambda o: (o.gpus_for_peak, o.tp)) if in_node else single
    candidates = [o for o in options if FORM_ORDER[o.form] == simplest]
    return min(candidates, key=lambda o: (o.gpus_for_peak, o.tp * o.pp))


def choose_gpu(model: ModelSpec, gpus: list[GpuSpec], base: SizeInputs, peak: int) -> LayoutOption | None:
    """With `gpu: auto`: the simplest form first (§1), then the fewest GPUs, then the smallest card."""
    best: list[LayoutOption] = []
    for g in gpus:
        o = best_option(layout_options(model, g, base, peak))
        if o is not None:
            best.append(o)
    if not best:
        return None
    return min(best, key=lambda o: (FORM_ORDER[o.form], o.gpus_for_peak, o.gpu.memory_reported_bytes))


def datacenter_gpus(gpus: tuple[GpuSpec, ...]) -> list[GpuSpec]:
    """Candidates for `gpu: auto`: GeForce cards are left out (NVIDIA's GeForce driver licence excludes
    data-centre deployment); a user can still name one."""
    return [g for g in gpus if "geforce" not in g.name.lower()]
