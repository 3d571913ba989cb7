"""Replicas (wizard.sizing.replicas, DOMAIN §5, §10): the batch one replica carries, and ceil(peak / batch) + 1.

max_batch: the largest batch ≤ the peak that fits the KV cache and keeps TTFT and TPOT within the P99 targets;
plan_replicas: ceil(peak / batch) copies, + 1 for online traffic (a single replica is an outage at every
restart, §10), none for offline work, a forced count kept as given. Latencies are checked against
`performance` run independently at the returned batch and at one more sequence.

Llama-3.1-8B on h100-sxm-80gb at 8192 tokens, KV pool written out (vLLM's budget rule):
    usable       int(85,061,827,297 × 0.90)                           = 76,555,644,567
    − weights    2 × 8,030,261,248                                     = 16,060,522,496
    − activation 8192 tokens × 2 B × (3 × 14336 + 3 × 4096)            =    905,969,664
    − reserve    int(0.35 GiB) + int(0.45 GiB) (non-torch, CUDA graphs) =   858,993,458
    = 58,730,158,949 B / 131,072 B per token = 448,075 tokens → whole 16-token blocks: 448,064
    full-context sequences: 448,064 // 8192 = 54; at 131,072 tokens: 3
"""

from __future__ import annotations

import math

import pytest

from wizard.sizing.fit import SizeInputs, size
from wizard.sizing.performance import Performance, Workload, performance
from wizard.sizing.replicas import BatchLimit, Targets, max_batch, peak_sequences, plan_replicas
from wizard.sources.catalog import find_entry, find_gpu, load_catalog_model

W = Workload(1, 1000, 200)
GIB = 2**30


def model(model_id: str):
    return load_catalog_model(find_entry(model_id))


@pytest.fixture(scope="module")
def llama8b():
    return model("meta-llama/Llama-3.1-8B")


@pytest.fixture(scope="module")
def h100():
    return find_gpu("h100-sxm-80gb")


def perf_at(m, gpu, base: SizeInputs, w: Workload, b: int):
    r = size(m, gpu, base._replace(concurrency=b))
    return performance(r, w._replace(concurrency=b)), r


# ----------------------------------------------------------------------------------- KV-limited batch
def test_kv_batch_is_the_pool_over_full_context_sequences(llama8b, h100):
    # vLLM 0.33: the RoPE cache (131,072 × 128 × 2 B) loads with the weights; non-torch inside the budget 0.04 GiB
    # at TP 1 (V1 logs), CUDA graph pool 0.45 GiB
    pool = int(85_061_827_297 * 0.90) - 2 * 8_030_261_248 - 131_072 * 128 * 2 - 8192 * 2 * (3 * 14336 + 3 * 4096) \
        - int(0.04 * GIB) - int(0.45 * GIB)
    assert pool == 59_029_464_483
    tokens = pool // 131_072 // 16 * 16
    assert tokens == 450_352
    limit = max_batch(llama8b, h100, SizeInputs(), W, Targets(None, None), cap=10_000)
    assert limit.kv_batch == tokens // 8192 == 54
    assert (limit.batch, limit.limited_by) == (54, "kv cache")
    long = max_batch(llama8b, h100, SizeInputs(context_tokens=131_072), W, Targets(None, None), cap=100)
    assert (long.kv_batch, long.batch, long.limited_by) == (tokens // 131_072, 3, "kv cache")


def test_no_targets_and_a_small_peak_carries_the_peak(llama8b, h100):
    limit = max_batch(llama8b, h100, SizeInputs(), W, Targets(None, None), cap=7)
    assert (limit.batch, limit.limited_by) == (7, "peak load")
    assert limit.result.inputs.concurrency == 7
    want, _ = perf_at(llama8b, h100, SizeInputs(), W, 7)
    assert limit.performance == want


# ------------------------------------------------------------------------------------- latency targets
@pytest.mark.parametrize("tpot_ms", [7.0, 8.0, 10.0, 12.5, 20.0, 25.0])
def test_max_batch_is_the_largest_within_the_tpot_target(llama8b, h100, tpot_ms):
    """P99 TPOT at the returned batch ≤ target, at one more sequence > target (unless KV or the peak stops it first):
    the P99 targets are held against the P99 figures under load, not the means."""
    base = SizeInputs()
    limit = max_batch(llama8b, h100, base, W, Targets(None, tpot_ms), cap=512)
    b = limit.batch
    assert b >= 1
    at, r = perf_at(llama8b, h100, base, W, b)
    assert at.tpot_p99_ms <= tpot_ms
    assert r.fits
    assert limit.performance == at
    if b < min(512, limit.kv_batch):
        nxt, _ = perf_at(llama8b, h100, base, W, b + 1)
        assert nxt.tpot_p99_ms > tpot_ms, (b, nxt.tpot_p99_ms)
        assert limit.limited_by == "tpot target"
    else:
        assert limit.limited_by in ("kv cache", "peak load")


@pytest.mark.parametrize("ttft_ms", [150.0, 170.0, 200.0])
def test_max_batch_is_the_largest_within_the_ttft_target(llama8b, h100, ttft_ms):
    base = SizeInputs()
    limit = max_batch(llama8b, h100, base, W, Targets(ttft_ms, None), cap=512)
    b = limit.batch
    assert b >= 1
    at, _ = perf_at(llama8b, h100, base, W, b)
    assert at.ttft_p99_ms <= ttft_ms
    assert b < limit.kv_batch  # these targets bind before the KV cache (54)
    nxt, _ = perf_at(llama8b, h100, base, W, b + 1)
    assert nxt.ttft_p99_ms > ttft_ms
    assert limit.limited_by == "ttft target"


def test_both_targets_the_tighter_one_binds(llama8b, h100):
    base = SizeInputs()
    tpot_only = max_batch(llama8b, h100, base, W, Targets(None, 10.0), cap=512).batch
    ttft_only = max_batch(llama8b, h100, base, W, Targets(70.0, None), cap=512).batch
    both = max_batch(llama8b, h100, base, W, Targets(70.0, 10.0), cap=512)
    assert both.batch == min(tpot_only, ttft_only)


def test_a_target_no_batch_meets_gives_batch_zero(llama8b, h100):
    """TPOT at one sequence is (16,060,522,496 + 131,072 × 1100) B / (3.35e12 × EFF_BANDWIDTH) + compute > 5 ms."""
    limit = max_batch(llama8b, h100, SizeInputs(), W, Targets(None, 5.0), cap=64)
    assert limit.batch == 0
    assert limit.limited_by == "tpot target"
    assert limit.performance.tpot_ms > 5.0


# ---------------------------------------------------------------------------------------- plan_replicas
def _limit(batch: int) -> BatchLimit:
    p = Performance(100.0, 10.0, 1000.0, 9.0, 1.0, 0.0, 0.0)
    return BatchLimit(batch, 54, "tpot target", p, None)


@pytest.mark.parametrize("peak, batch, online, for_load, replicas", [
    (50, 7, True, 8, 9),  # ceil(50 / 7) = 8, + 1 online
    (50, 7, False, 8, 8),  # offline: no redundancy
    (49, 7, True, 7, 8),  # exactly 7 × 7
    (1, 7, True, 1, 2),  # one replica is an outage at every restart: 2
    (1, 7, False, 1, 1),
    (7.2, 1, True, 8, 9),  # a fractional peak (Little's law) rounds up
    (200, 16, True, 13, 14),  # ceil(12.5)
])
def test_replicas_are_ceil_peak_over_batch_plus_one_online(peak, batch, online, for_load, replicas):
    plan = plan_replicas(_limit(batch), peak, online)
    assert plan.for_load == for_load == math.ceil(peak / batch)
    assert plan.redundancy == (1 if online else 0)
    assert plan.replicas == replicas
    assert plan.max_batch == batch
    assert plan.peak_sequences == peak


@pytest.mark.parametrize("forced", [1, 3, 40])
def test_a_forced_replica_count_is_kept(forced):
    plan = plan_replicas(_limit(7), 50, True, forced=forced)
    assert plan.replicas == forced
    assert plan.for_load == 8  # what the load needs is still reported beside it


@pytest.mark.parametrize("concurrency, rps, seconds, want", [
    (10, None, 4.0, 10.0),
    (10, 1.0, 4.0, 10.0),  # 1 request/s × 4 s = 4 in flight < 10
    (10, 5.0, 4.0, 20.0),  # Little's law: 5 × 4 = 20 > 10
    (1, 2.5, 12.0, 30.0),
])
def test_peak_sequences_is_the_larger_of_concurrency_and_littles_law(concurrency, rps, seconds, want):
    assert peak_sequences(concurrency, rps, seconds) == pytest.approx(want)


# ---------------------------------------------------------------------------------- monotonicity (#4)
LAYOUTS = [("meta-llama/Llama-3.1-8B", "h100-sxm-80gb", 1, Targets(None, 10.0)),
           ("meta-llama/Llama-3.1-8B", "l40s-48gb", 1, Targets(2000.0, 40.0)),
           ("meta-llama/Llama-3.1-70B", "h100-sxm-80gb", 4, Targets(1000.0, 30.0)),
           ("mistralai/Mixtral-8x7B-v0.1", "h100-sxm-80gb", 2, Targets(None, None))]


@pytest.mark.parametrize("model_id, gpu_id, tp, targets", LAYOUTS)
@pytest.mark.parametrize("online", [True, False])
def test_more_traffic_never_needs_fewer_replicas(model_id, gpu_id, tp, targets, online):
    """As the layout search sizes a layout: batch capped at the peak, then ceil(peak / batch) (+ 1 online)."""
    m, gpu, base = model(model_id), find_gpu(gpu_id), SizeInputs(tp=tp)
    previous = 0
    for peak in [1, 2, 3, 5, 8, 9, 10, 16, 17, 30, 54, 55, 64, 100, 150, 400]:
        limit = max_batch(m, gpu, base, W, targets, cap=peak)
        assert limit.batch >= 1
        replicas = plan_replicas(limit, peak, online).replicas
        assert replicas >= previous, (peak, replicas, previous)
        previous = replicas


def test_a_faster_gpu_never_carries_a_smaller_batch(llama8b, h100):
    fast = h100._replace(mem_bw_bytes_s=2 * h100.mem_bw_bytes_s, bf16_flops=2 * h100.bf16_flops)
    for t in (Targets(None, 8.0), Targets(None, 12.0), Targets(70.0, None), Targets(200.0, 20.0)):
        slow_b = max_batch(llama8b, h100, SizeInputs(), W, t, cap=512).batch
        fast_b = max_batch(llama8b, fast, SizeInputs(), W, t, cap=512).batch
        assert fast_b >= slow_b, (t, fast_b, slow_b)
    # and with a TPOT target the doubled bandwidth carries strictly more
    assert max_batch(llama8b, fast, SizeInputs(), W, Targets(None, 10.0), cap=512).batch > \
        max_batch(llama8b, h100, SizeInputs(), W, Targets(None, 10.0), cap=512).batch


@pytest.mark.parametrize("model_id, tp", [("meta-llama/Llama-3.1-8B", 1), ("meta-llama/Llama-3.1-70B", 4)])
def test_fp8_never_needs_more_replicas_than_bf16(h100, model_id, tp):
    m = model(model_id)
    for t in (Targets(None, None), Targets(None, 15.0), Targets(500.0, 30.0)):
        for peak in (4, 40, 400):
            bf16 = max_batch(m, h100, SizeInputs(tp=tp, weight_precision="bf16"), W, t, cap=peak)
            fp8 = max_batch(m, h100, SizeInputs(tp=tp, weight_precision="fp8"), W, t, cap=peak)
            assert fp8.kv_batch >= bf16.kv_batch
            assert fp8.batch >= bf16.batch, (t, peak)
            if bf16.batch:
                assert plan_replicas(fp8, peak, True).replicas <= plan_replicas(bf16, peak, True).replicas, (t, peak)
