"""Plan search: GPU types × TP × PP × replicas, in DOMAIN §1's fixed order, cheapest first within a form.

For every GPU type and every layout an engine accepts — one GPU; TP over the GPUs of one node; TP inside a
node and PP across nodes (§3: never TP across nodes) — a replica carries the largest batch that fits its KV
cache and meets the P99 latency targets (replicas.py); the peak then needs ceil(peak / batch) replicas, +1
online (§10), and the plan costs price × GPUs × 730 h + staff (cost.py), priced once by `layout_cost` at the staff
cost of the exposure the plan really gets (Load.exposure): the ranking, the budget check, the alternatives, the
quantized option and the plan's headline all read that one Cost. Among the layouts that meet the P99 targets the
simplest form wins (§1: single GPU before TP before multi-node; §5: "if it fits, use replicas, if it doesn't fit,
use parallelism") even where TP would need fewer GPUs — the plan shows that TP layout as an alternative with its
figures; within a form the cheapest monthly total, then the fewest GPUs. TP is chosen when no single card holds
the model, when no single-GPU layout meets the targets (TP shortens every step), or when the user insists.
"""

import math
from typing import NamedTuple

from wizard.errors import InputError
from wizard.sizing.cost import Cost, monthly_cost, offline_cost
from wizard.sizing.fit import SizeInputs, size
from wizard.sizing.layout import divisors
from wizard.sizing.performance import Performance, Workload
from wizard.sizing.replicas import BatchLimit, ReplicaPlan, Targets, max_batch, plan_replicas
from wizard.sizing.weights import weight_bytes
from wizard.specs import GpuPrice, GpuSpec, ManagedPrice, ModelSpec

SINGLE, ONE_NODE, MULTI_NODE = "single_gpu", "single_node_multi_gpu", "multi_node"
FORM_ORDER = {SINGLE: 0, ONE_NODE: 1, MULTI_NODE: 2}
MAX_PP = 16  # pipeline stages tried before declaring that no node count holds the model


class Load(NamedTuple):
    """What the replicas must carry, and what the cost depends on."""

    peak_sequences: float
    workload: Workload  # typical prompt / output tokens (concurrency is set per candidate)
    targets: Targets
    online: bool
    exposure: str  # the exposure these answers give a self-hosted layout (§6): whose staff cost the totals carry
    daily_requests: float | None
    pattern: str
    managed: ManagedPrice | None = None
    forced_replicas: int | None = None
    staff_usd_month: float | None = None
    job_requests: int | None = None  # offline: the requests the job processes in total
    deadline_s: float | None = None  # offline: the job must finish within this many seconds


class Candidate(NamedTuple):
    """One layout of one GPU type, with its batch, replicas and monthly cost."""

    form: str
    gpu: GpuSpec
    tp: int
    pp: int
    limit: BatchLimit
    replicas: ReplicaPlan
    cost: Cost

    @property
    def gpus_per_copy(self) -> int:
        return self.tp * self.pp

    @property
    def nodes_per_copy(self) -> int:
        return math.ceil(self.gpus_per_copy / self.gpu.gpus_per_node)

    @property
    def gpus_total(self) -> int:
        return self.replicas.replicas * self.gpus_per_copy

    @property
    def meets_targets(self) -> bool:
        return self.limit.batch >= 1

    def offline_rank(self) -> tuple:
        """§12 offline work: "availability, cold start and cost structure don't matter" — the cheapest per million
        output tokens at full use, then the shortest job, then the fewest GPUs."""
        per_mtok = self.cost.usd_per_mtok
        return (per_mtok is None, per_mtok or 0.0, self.cost.job_hours or 0.0, self.gpus_total)

    def rank(self) -> tuple:
        """§1's order of forms (§5: replicas before parallelism), then the monthly total, then the GPU count."""
        total = self.cost.total_usd_month
        return (FORM_ORDER[self.form], total is None, total or 0.0, self.gpus_total, self.gpu.memory_reported_bytes)


def form_of(tp: int, pp: int, gpu: GpuSpec) -> str:
    """DOMAIN §1 forms count machines: one GPU, one node (TP, or TP × PP that fits its GPUs), several nodes."""
    if tp * pp == 1:
        return SINGLE
    return ONE_NODE if tp * pp <= gpu.gpus_per_node else MULTI_NODE


def uneven_ranks(gpu: GpuSpec, tp: int, pp: int) -> bool:
    """TP × PP ranks that do not split evenly over the nodes they need: the pods of a multi-node group are identical
    (a LeaderWorkerSet's), so 5 ranks on 4-GPU nodes would ask 3 + 3 GPUs and bill one nobody uses."""
    ranks = tp * pp
    nodes = math.ceil(ranks / gpu.gpus_per_node)
    return nodes > 1 and ranks % nodes != 0


def evaluate(model: ModelSpec, gpu: GpuSpec, base: SizeInputs, tp: int, pp: int, load: Load,
             price: GpuPrice | None) -> Candidate | None:
    """One layout, or None when the engine rejects it or not one full-context sequence fits."""
    inputs = base._replace(tp=tp, pp=pp)
    if uneven_ranks(gpu, tp, pp):
        return None
    usable = gpu.memory_reported_bytes * base.gpu_memory_utilization
    if weight_bytes(model, base.weight_precision).total > usable * tp * pp:  # the weights alone cannot fit
        return None
    try:
        if size(model, gpu, inputs._replace(concurrency=1)).refused_at_startup:  # vLLM would not start it (0.14-0.16 PP)
            return None
    except InputError:
        return None
    cap = max(1, math.ceil(load.peak_sequences))
    limit = max_batch(model, gpu, inputs, load.workload, load.targets, cap)
    if limit.kv_batch < 1:
        return None
    if limit.batch < 1:  # targets out of reach on this layout: size it at one sequence, flagged by meets_targets
        limit = limit._replace(batch=0)
    carried = max(limit.batch, 1)
    replicas = plan_replicas(limit._replace(batch=carried), load.peak_sequences, load.online, load.forced_replicas)
    if not load.online and load.job_requests and load.deadline_s and not load.forced_replicas:
        # §12: copies enough to finish the job before its deadline (one copy's hours / the hours allowed)
        one_copy_s = load.job_requests * load.workload.output_tokens / max(limit.performance.output_tokens_per_s, 1e-9)
        needed = math.ceil(one_copy_s / load.deadline_s)
        if needed > replicas.replicas:
            replicas = replicas._replace(replicas=needed, for_load=needed, set_by="deadline")
    cost = layout_cost(load, price, replicas.replicas * tp * pp, replicas.replicas * carried, limit.performance,
                       copies=replicas.replicas)
    return Candidate(form_of(tp, pp, gpu), gpu, tp, pp, limit, replicas, cost)


def layout_cost(load: Load, price: GpuPrice | None, gpus: int, capacity_sequences: int, performance: Performance,
                copies: int = 1) -> Cost:
    """The one monthly cost of a layout (DOMAIN §8): `gpus` always-on cards at `price`, carrying
    `capacity_sequences` at the roofline's request time (TTFT + output tokens × TPOT), plus the staff of
    load.exposure. Every figure the plan shows for a layout is this Cost, computed once per candidate."""
    w = load.workload
    if not load.online:
        return offline_cost(gpus=gpus, copies=copies, price=price, exposure=load.exposure, managed=load.managed,
                            tokens_per_s_per_copy=performance.output_tokens_per_s, output_tokens=w.output_tokens,
                            job_requests=load.job_requests, staff_override=load.staff_usd_month)
    seconds = (performance.ttft_ms + w.output_tokens * performance.tpot_ms) / 1000
    return monthly_cost(
        gpus=gpus, price=price, exposure=load.exposure,
        capacity_sequences=capacity_sequences, peak_sequences=load.peak_sequences,
        daily_requests=load.daily_requests, seconds_per_request=seconds, pattern=load.pattern,
        prompt_tokens=w.prompt_tokens, output_tokens=w.output_tokens, managed=load.managed,
        staff_override=load.staff_usd_month,
    )


def candidates_for(model: ModelSpec, gpu: GpuSpec, base: SizeInputs, load: Load, price: GpuPrice | None) -> list[Candidate]:
    """Every accepted layout of one GPU type: TP over the divisors of a node, then TP × PP across nodes."""
    found = []
    node = gpu.gpus_per_node
    for tp in divisors(node):
        c = evaluate(model, gpu, base, tp, 1, load, price)
        if c is not None:
            found.append(c)
    if not any(c.meets_targets for c in found):
        # PP stages: with the largest TP inside a node that the engine accepts (§3: never TP across nodes);
        # TP × PP may still fit one node when a node's TP is refused (e.g. KV heads that TP cannot split).
        # Weights alone need at least total / (GPUs per node × usable) nodes: start the PP search there.
        usable = gpu.memory_reported_bytes * base.gpu_memory_utilization
        first = max(2, math.ceil(weight_bytes(model, base.weight_precision).total / (node * usable)))
        for pp in range(first, MAX_PP + 1):
            c = next((c for tp in sorted(divisors(node), reverse=True)
                      if (c := evaluate(model, gpu, base, tp, pp, load, price)) is not None), None)
            if c is not None:
                found.append(c)
                if c.meets_targets:
                    break
    return found


def search(model: ModelSpec, gpus: list[GpuSpec], base: SizeInputs, load: Load,
           prices: dict[str, GpuPrice]) -> list[Candidate]:
    """All candidates over the GPU types, best first: meets the targets, then (online) §1 form order, cost, GPU
    count, or (offline, §12) cost per million tokens and the job's duration."""
    found = [c for g in gpus for c in candidates_for(model, g, base, load, prices.get(g.id))]
    return sorted(found, key=order(load))


def order(load: Load):
    """The sort key of candidates for this load: the ones meeting the targets first, then rank or offline_rank."""
    return lambda c: (not c.meets_targets, *(c.rank() if load.online else c.offline_rank()))


def forced_layout(model: ModelSpec, gpus: list[GpuSpec], base: SizeInputs, tp: int, pp: int, load: Load,
                  prices: dict[str, GpuPrice]) -> list[Candidate]:
    """The user insists on a layout (§5, §10: keep it, and let the warnings say where the rules disagree)."""
    if gpus and all(uneven_ranks(g, tp, pp) for g in gpus):
        g = gpus[0]
        nodes = math.ceil(tp * pp / g.gpus_per_node)
        raise InputError("pp", pp, f"TP {tp} × PP {pp} = {tp * pp} ranks do not split evenly over the {nodes} nodes of "
                         f"{g.gpus_per_node} {g.id} they need (a multi-node group's pods are identical): choose TP × PP "
                         f"a multiple of {nodes}, or fewer ranks")
    found = [c for g in gpus if (c := evaluate(model, g, base, tp, pp, load, prices.get(g.id))) is not None]
    return sorted(found, key=order(load))


def datacenter_gpus(gpus: tuple[GpuSpec, ...]) -> list[GpuSpec]:
    """Candidates for `gpu: auto`: NVIDIA data-centre cards. GeForce cards are left out (NVIDIA's GeForce driver
    licence excludes data-centre deployment), AMD and Intel cards too (the starter repo pins the CUDA image of
    vLLM; their prices in the catalog are also undated), and cards without a dense FLOPS figure (no performance
    estimate to rank them by). A user can still name any of them."""
    return [g for g in gpus if g.vendor == "nvidia" and "geforce" not in g.name.lower() and (g.bf16_flops or g.fp8_flops)]
