"""How many copies (DOMAIN §5): per-replica capacity at the latency targets, N+1 online, warm minimum (§7, §10).

A replica carries the largest batch that both fits its KV cache and keeps TTFT and TPOT within the P99
targets (more sequences per step make every step slower, §9 Q3). Peak load in sequences is the larger of the
peak concurrency given and what peak requests per second imply (Little's law: arrivals × time in system); the
session also raises it to the average the daily volume implies, when that is higher (§2: not the average).
"""

import math
from typing import NamedTuple

from wizard.sizing.fit import SizeInputs, SizeResult, size
from wizard.sizing.performance import Performance, Workload, performance


class Targets(NamedTuple):
    """P99 latency targets in ms (None: no target)."""

    ttft_ms: float | None
    tpot_ms: float | None


class ReplicaPlan(NamedTuple):
    """Copies of one layout for a peak load: ceil(peak / batch), and at least enough copies that the peak's
    sequences all fit at the full P99 context (§2, the conservative bound), whichever is more; +1 online."""

    max_batch: int  # sequences one replica carries within the targets and its KV cache
    kv_batch: int  # what the KV cache alone would admit at the full context
    limited_by: str  # "kv cache", "tpot target", "ttft target" or "peak load"
    for_load: int  # ceil(peak / max_batch)
    redundancy: int  # +1 online: one replica is an outage at every restart (§10)
    replicas: int
    performance: Performance  # one replica at max_batch
    peak_sequences: float  # the load the replicas are sized for
    set_by: str = "batch"  # "batch" (ceil(peak / batch)), "p99 bound" (ceil(peak / full-context sequences)),
    # or "deadline" (offline: copies enough to finish the job in time)


def peak_sequences(peak_concurrency: int, peak_rps: float | None, seconds_per_request: float) -> float:
    """Sequences in flight at peak: the concurrency given, or more if the peak request rate implies it."""
    implied = (peak_rps or 0) * seconds_per_request
    return max(float(peak_concurrency), implied)


def _meets(p: Performance, t: Targets) -> bool:
    """The P99 targets against the P99 figures under load (performance.py's load model), not the means."""
    return (t.tpot_ms is None or p.tpot_p99_ms <= t.tpot_ms) and (t.ttft_ms is None or p.ttft_p99_ms <= t.ttft_ms)


class BatchLimit(NamedTuple):
    """The batch one replica can carry, what limits it, and the replica's performance and memory there."""

    batch: int
    kv_batch: int  # full-context sequences the KV cache alone admits (the guide's conservative bound, §2)
    limited_by: str  # "peak load", "kv cache", "tpot target" or "ttft target"
    performance: Performance
    result: SizeResult
    kv_batch_typical: int = 0  # sequences of typical length the KV cache admits, one of them at the full context


def max_batch(model, gpu, base: SizeInputs, w: Workload, t: Targets, cap: int) -> BatchLimit:
    """Largest batch ≤ cap that fits the KV cache and meets the targets (binary search: latency grows with it).

    With base.sequence_tokens (the typical length) the KV cache holds one full-context sequence and the rest at the
    typical length: that sets --max-num-seqs; kv_batch stays the full-context count for the replicas' P99 bound."""
    probe = size(model, gpu, base._replace(concurrency=1))
    kv_batch = probe.kv_capacity_tokens // base.context_tokens
    typical = base.sequence_tokens
    kv_typical = (1 + max(0, probe.kv_capacity_tokens - base.context_tokens) // max(1, min(typical, base.context_tokens))
                  if typical and kv_batch >= 1 else kv_batch)
    hi = min(cap, kv_typical)

    def run(b: int) -> tuple[Performance, SizeResult]:
        r = size(model, gpu, base._replace(concurrency=b))
        return performance(r, w._replace(concurrency=b)), r

    def latency_limit(p: Performance) -> str:
        return "tpot target" if t.tpot_ms is not None and p.tpot_p99_ms > t.tpot_ms else "ttft target"

    if hi < 1:
        p, r = run(1)
        return BatchLimit(0, kv_batch, "kv cache", p, r, kv_typical)
    p, r = run(hi)
    if _meets(p, t) and r.fits:
        return BatchLimit(hi, kv_batch, "peak load" if cap <= kv_typical else "kv cache", p, r, kv_typical)
    p1, r1 = run(1)
    if not r1.fits:  # not even one sequence (or vLLM refuses the layout at start-up)
        return BatchLimit(0, kv_batch, "kv cache", p1, r1, kv_typical)
    if not _meets(p1, t):
        return BatchLimit(0, kv_batch, latency_limit(p1), p1, r1, kv_typical)
    best = (1, p1, r1)
    lo, high = 2, hi - 1
    while lo <= high:
        mid = (lo + high) // 2
        pm, rm = run(mid)
        if _meets(pm, t) and rm.fits:
            best = (mid, pm, rm)
            lo = mid + 1
        else:
            high = mid - 1
    # what stops the batch is what the first batch beyond it misses (at the cap a target met by the best batch may
    # fail too, and naming it would blame the wrong target)
    pf, rf = run(best[0] + 1) if best[0] + 1 < hi else (p, r)
    limited = latency_limit(pf) if rf.fits and not _meets(pf, t) else "kv cache"
    return BatchLimit(best[0], kv_batch, limited, best[1], best[2], kv_typical)


def plan_replicas(limit: BatchLimit, peak: float, online: bool, forced: int | None = None) -> ReplicaPlan:
    """ceil(peak / batch) copies, +1 for online traffic (§10); a forced count is kept as given."""
    by_batch = math.ceil(peak / limit.batch) if limit.batch else 0
    # online only: offline work has no P99 request to keep whole (availability doesn't matter, §12; vLLM preempts)
    by_bound = math.ceil(peak / limit.kv_batch) if limit.kv_batch and online else 0
    for_load, set_by = (by_bound, "p99 bound") if by_bound > by_batch else (by_batch, "batch")
    redundancy = 1 if online else 0
    replicas = forced if forced else for_load + redundancy
    return ReplicaPlan(limit.batch, limit.kv_batch, limit.limited_by, for_load, redundancy, replicas,
                       limit.performance, peak, set_by)
