"""Latency and throughput of one replica (wizard.sizing.performance) against hand arithmetic, and monotonicity.

The model under test (module docstring): one engine step with B decode tokens and X prompt tokens takes
    max(memory  (weights read + B × KV of one sequence at the average context P + O/2) / (bandwidth × EFF),
        compute (2 × active params + attention) per token / (peak FLOPS × EFF_FLOPS))
  + TP all-reduce: 2 per layer × (latency + 2 (TP − 1)/TP × tokens × hidden × 2 bytes / interconnect)
  + STEP_OVERHEAD_S;
and the load model turns steps into TTFT/TPOT (mean, P99) at the load. The efficiency constants are read from the
module (they are fitted); every other number below is written out from config.json and the GPU's catalog entry.

Llama-3.1-8B (config.json): hidden 4096, intermediate 14336, 32 layers, 32 heads, 8 KV heads, head_dim 128,
vocab 128256, untied embeddings.
    per layer   q,o 2 × 4096 × 4096 + k,v 2 × 1024 × 4096 = 41,943,040; MLP 3 × 14336 × 4096 = 176,160,768;
                2 norms × 4096 → 218,112,000 params
    total       32 × 218,112,000 + 2 × 128,256 × 4096 (embed + lm_head) + 4096 (final norm) = 8,030,261,248
    active      total − the input embedding lookup (128,256 × 4096 = 525,336,576) = 7,504,924,672
    bf16 bytes  2 × 8,030,261,248 = 16,060,522,496
    KV          32 layers × 2 (K, V) × 8 heads × 128 × 2 bytes = 131,072 bytes per token
    attention   4 × (32 heads × 128) × 32 layers = 524,288 FLOPs per attended token
h100-sxm-80gb (catalog): 3.35e12 B/s HBM, 989e12 bf16 FLOP/s, 1979e12 fp8 FLOP/s, NVLink 450e9 B/s, 8 per
node, 85,061,827,297 bytes reported (≥ 70 GiB, so vLLM's default token budget is 8192).
"""

from __future__ import annotations

import math

import pytest

from wizard.errors import InputError
from wizard.sizing import performance as perf
from wizard.sizing.fit import SizeInputs, size
from wizard.sizing.performance import Workload, performance, weights_read_per_step
from wizard.sources.catalog import find_entry, find_gpu, load_catalog_model

EFF_BW = perf.EFF_BANDWIDTH
EFF_FL = perf.EFF_FLOPS
OVERHEAD = perf.STEP_OVERHEAD_S

# Llama-3.1-8B, written out above
L8_WEIGHTS = 16_060_522_496
L8_ACTIVE = 7_504_924_672
L8_KV_PER_TOKEN = 131_072
L8_ATTN_PER_TOKEN = 4 * 32 * 128 * 32  # FLOPs per attended token, all layers
L8_HIDDEN, L8_LAYERS = 4096, 32
L8_NORM_PARAMS = 32 * 2 * 4096 + 4096  # replicated on every TP rank (266,240)
H100_BW, H100_BF16, H100_FP8, H100_LINK = 3.35e12, 989e12, 1979e12, 450e9


def model(model_id: str):
    return load_catalog_model(find_entry(model_id))


@pytest.fixture(scope="module")
def llama8b():
    return model("meta-llama/Llama-3.1-8B")


@pytest.fixture(scope="module")
def h100():
    return find_gpu("h100-sxm-80gb")


def _close(got: float, want: float, rel: float = 1e-9) -> None:
    assert got == pytest.approx(want, rel=rel), (got, want)


# ------------------------------------------------------------------------------------------- the inputs
def test_the_inputs_the_hand_arithmetic_rests_on(llama8b, h100):
    """Guard: if these change, the formulas below are checked against other numbers than written."""
    assert 2 * 32 * 8 * 128 * 2 == L8_KV_PER_TOKEN
    assert 32 * (2 * 4096 * 4096 + 2 * 1024 * 4096 + 3 * 14336 * 4096 + 2 * 4096) + 2 * 128256 * 4096 + 4096 == 8_030_261_248
    r = size(llama8b, h100, SizeInputs())
    assert r.weights.per_gpu - r.weights.buffers == L8_WEIGHTS == 2 * 8_030_261_248  # checkpoint bytes (+ RoPE cache)
    assert r.params.active == L8_ACTIVE == 8_030_261_248 - 128256 * 4096
    assert r.kv.full_bytes_per_token == L8_KV_PER_TOKEN
    assert r.activation.tokens == 8192  # vLLM's default budget on an H100
    assert (h100.mem_bw_bytes_s, h100.bf16_flops, h100.fp8_flops, h100.interconnect_bytes_s) == (
        H100_BW, H100_BF16, H100_FP8, H100_LINK)


# ------------------------------------------------------------------------------------ one step, by hand


def step_of(r, decodes, prefill, ctx):
    return perf._stage(r, decodes, prefill, ctx)


def test_a_decode_step_overlaps_memory_and_compute(llama8b, h100):
    """One sequence at the average context 1100: the step reads all weights once and one sequence's KV; its FLOPs
    (15.6 GFLOPs) hide under the 4.85 ms memory time — max, not sum (below the ridge point)."""
    r = size(llama8b, h100, SizeInputs())
    step, mem, comp, comm = step_of(r, 1, 0, 1100)
    memory = (L8_WEIGHTS + L8_KV_PER_TOKEN * 1100) / (H100_BW * EFF_BW)  # (16,060,522,496 + 144,179,200) B
    compute = (2 * L8_ACTIVE + L8_ATTN_PER_TOKEN * 1100) / (H100_BF16 * EFF_FL)  # 15,586,566,144 FLOPs
    _close(mem, memory)
    _close(comp, compute)
    assert comm == 0
    _close(step, max(memory, compute) + OVERHEAD)
    assert memory > 50 * compute  # memory-bound: the weights dominate


def test_a_prefill_chunk_is_compute_bound(llama8b, h100):
    """One decode + a 1000-token prompt chunk (attending on average 550 tokens, causal): 15 TFLOPs at 25 % or so of
    989 TFLOP/s — far above the memory time: the step is its compute."""
    r = size(llama8b, h100, SizeInputs())
    step, mem, comp, _ = step_of(r, 1, 1000, 1100)
    flops = (2 * L8_ACTIVE + L8_ATTN_PER_TOKEN * 1100) + 1000 * (2 * L8_ACTIVE + L8_ATTN_PER_TOKEN * 550)
    _close(comp, flops / (H100_BF16 * EFF_FL))
    assert comp > mem
    _close(step, comp + OVERHEAD)


def test_an_idle_replica_answers_in_the_front_end_plus_half_a_step_plus_the_prefill(llama8b, h100):
    """Open loop at a vanishing rate: no queue, no prefill share — TTFT = front end + half the running decode step
    (the mean wait for it) + the prompt's one chunk; TPOT = one decode step; P99 TTFT waits a whole step."""
    r = size(llama8b, h100, SizeInputs())
    p = performance(r, Workload(1, 1000, 200, rate=1e-6))
    dec = step_of(r, 1, 0, 1100)[0]
    chunk = step_of(r, 1, 1000, 1100)[0]
    _close(p.ttft_ms, (perf.FRONTEND_S + dec / 2 + chunk) * 1000, rel=1e-4)
    _close(p.tpot_ms, dec * 1000, rel=1e-4)
    _close(p.ttft_p99_ms, (perf.FRONTEND_S + chunk + chunk) * 1000, rel=1e-4)  # a running step may itself be a chunk


def test_multi_step_without_chunked_prefill_waits_out_the_running_block(llama8b, h100):
    """V0 0.6.5 at an 8,192-token context: no chunked prefill (the budget holds the whole context), so a prompt runs
    as a step of its own and its first token is out at once. With --num-scheduler-steps 12 the scheduler runs once
    per block of 12 steps: an idle replica's request waits half a block of decode steps on average (not half a
    step), a whole block at P99 (one step of which may carry a prompt); TPOT is still one decode step."""
    r = size(llama8b, h100, SizeInputs(vllm_version="0.6.5", scheduler_steps=12))
    assert r.activation.tokens == 8192  # V0: max(max_model_len, 2048)
    p = performance(r, Workload(1, 1000, 200, rate=1e-6))
    dec = step_of(r, 1, 0, 1100)[0]
    prompt = step_of(r, 1, 1000, 1100)[0]
    _close(p.ttft_ms, (perf.FRONTEND_S + 12 * dec / 2 + prompt) * 1000, rel=1e-4)
    _close(p.ttft_p99_ms, (perf.FRONTEND_S + prompt + 11 * dec + prompt) * 1000, rel=1e-4)
    _close(p.tpot_ms, dec * 1000, rel=1e-4)


def test_multi_step_with_chunked_prefill_takes_a_chunk_a_block_and_outputs_at_its_end(llama8b, h100):
    """V0 0.6.5 at a 65,536-token context chunks prompts in a 2,048-token budget (its long-context rule), so under
    --num-scheduler-steps 4 a prompt's chunk joins a block's first step and its first token comes with the block's
    last: P = 5,000 takes ceil(5000 / 2047) = 3 blocks, each a 2,047-token chunk step and 3 decode steps. A closed
    loop's burst of 16 × 1000 tokens takes ceil(16000 / 2032) = 8 such blocks (9 / 2 on average)."""
    r = size(llama8b, h100, SizeInputs(vllm_version="0.6.5", context_tokens=65536, scheduler_steps=4))
    assert r.activation.tokens == 2048
    p = performance(r, Workload(1, 5000, 100, rate=1e-6))
    chunk = step_of(r, 1, 2047, 5050)[0]
    dec = step_of(r, 1, 0, 5050)[0]
    _close(p.ttft_ms, (perf.FRONTEND_S + 4 * dec / 2 + 3 * (chunk + 3 * dec)) * 1000, rel=1e-4)
    r16 = size(llama8b, h100, SizeInputs(vllm_version="0.6.5", context_tokens=65536, concurrency=16, scheduler_steps=4))
    waves = performance(r16, Workload(16, 1000, 200, prompts=100, synchronized=True))
    block = step_of(r16, 16, 2032, 1100)[0] + 3 * step_of(r16, 16, 0, 1100)[0]
    _close(waves.ttft_ms, (perf.FRONTEND_S + (8 + 1) / 2 * block) * 1000, rel=1e-6)


def test_multi_step_prefill_ceiling_is_a_chunk_a_block(llama8b, h100):
    """One prefill step a block: an open loop saturates where prompts arrive at 0.98 × chunk / (chunk step + 11
    decode steps) / prompt a second under --num-scheduler-steps 12, the chunk being the 2,048-token budget less the b
    sequences in flight there — about 0.6 of the single-step ceiling (no 11 decode steps) here. Far beyond it, every
    block's first step carries a chunk and the other 11 decode (f = 1 / 12)."""
    base = SizeInputs(vllm_version="0.6.5", context_tokens=65536, concurrency=4)
    multi = size(llama8b, h100, base._replace(scheduler_steps=12))
    single = size(llama8b, h100, base)

    def threshold(r) -> float:  # the lowest rate the model calls saturated, by bisection
        lo, hi = 0.01, 100.0
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if performance(r, Workload(1, 1000, 10, rate=mid)).saturated else (mid, hi)
        return hi

    r12, r1 = threshold(multi), threshold(single)
    b = performance(multi, Workload(1, 1000, 10, rate=r12 * 0.999)).concurrency
    chunk = 2048 - b
    ceiling = 0.98 * chunk / (step_of(multi, b, chunk, 1005)[0] + 11 * step_of(multi, b, 0, 1005)[0]) / 1000
    _close(r12, ceiling, rel=0.01)
    assert r12 < 0.7 * r1
    flood = performance(multi, Workload(1, 1000, 10, rate=100.0))
    assert flood.saturated
    _close(flood.prefill_share, 1 / 12)
    assert performance(single, Workload(1, 1000, 10, rate=100.0)).prefill_share > 0.97  # at 0.98 of its ceiling


def test_a_prompt_longer_than_the_budget_takes_several_chunks(llama8b, h100):
    """P = 20,000 with budget 8192 − 1 decode = 8191 per chunk: ceil(20000 / 8191) = 3 chunk steps."""
    r = size(llama8b, h100, SizeInputs(context_tokens=32768))
    p = performance(r, Workload(1, 20_000, 100, rate=1e-6))
    chunk = step_of(r, 1, 8191, 20_050)[0]
    dec = step_of(r, 1, 0, 20_050)[0]
    _close(p.ttft_ms, (perf.FRONTEND_S + dec / 2 + 3 * chunk) * 1000, rel=1e-4)


def test_the_load_model_by_hand_closed_loop(llama8b, h100):
    """B = 16 closed loop, P = 1000, O = 200: requests arrive at λ = B / request time; a share f of the steps carries
    prompt tokens, so the average step is s = s_dec + f (s_mix − s_dec); a request decodes through the other 15
    clients' prompts only, TPOT = s_dec + 15/16 f (s_mix − s_dec); a step takes every waiting prompt its budget holds
    (a bulk service), so the load is the share of a full-chunk step's budget the arrivals take, u = λ P s_full / C,
    and a prompt queues u S / (2 (1 − u)) (M/D/1) before its own chunk's step S; P99 TPOT = TPOT + 2.326 √(g (1 − g) / O) (s_mix − s_dec), g = 15/16 f."""
    r = size(llama8b, h100, SizeInputs(concurrency=16))
    p = performance(r, Workload(16, 1000, 200))
    f = p.prefill_share
    tokens = p.prefill_tokens_per_step / f
    s_dec = step_of(r, 16, 0, 1100)[0]
    s_mix = step_of(r, 16, tokens, 1100)[0]
    service = step_of(r, 16, 1000, 1100)[0]
    s_avg = s_dec + f * (s_mix - s_dec)
    g = 15 / 16 * f
    tpot = s_dec + g * (s_mix - s_dec)
    _close(p.tpot_ms, tpot * 1000, rel=1e-4)
    chunk = r.activation.tokens - 16  # the token budget beside 16 decodes
    s_full = step_of(r, 16, chunk, 1100)[0]
    lam = 16 / (p.ttft_ms / 1000 + 200 * tpot)  # Little's law on the closed loop
    u = lam * 1000 * s_full / chunk
    ttft = perf.FRONTEND_S + s_avg / 2 + service + u * service / (2 * (1 - u))
    _close(p.ttft_ms, ttft * 1000, rel=1e-4)
    _close(f, lam * 1000 / tokens * s_avg, rel=1e-4)  # the share of steps the arrivals' prompts need
    _close(p.tpot_p99_ms, (tpot + 2.326 * math.sqrt(g * (1 - g) / 200) * (s_mix - s_dec)) * 1000, rel=1e-4)
    assert p.ttft_p99_ms > p.ttft_ms and p.tpot_p99_ms > p.tpot_ms  # the tail is above the mean


def test_prompts_that_arrive_during_a_step_share_the_next_one(llama8b, h100):
    """B = 40 closed loop, P = 50, O = 20: about three prompts arrive per step, so every step carries them all (f = 1,
    tokens = λ P s > P). The prefill is a bulk service — a step takes every waiting prompt its budget C holds — so
    its load is the share of a full-chunk step's budget the arrivals take, u = λ P s_full / C (about 2/3 here: 50-token
    prompts at some 250 a second), not the share of steps carrying some prompt (1, which read as saturated);
    TTFT = front end + half the running step + the prompt's own chunk S + u S / (2 (1 − u)); below the prefill
    ceiling, nothing is saturated."""
    r = size(llama8b, h100, SizeInputs(concurrency=40))
    p = performance(r, Workload(40, 50, 20))
    f, tokens = p.prefill_share, p.prefill_tokens_per_step / p.prefill_share
    s_mix, service = step_of(r, 40, tokens, 60)[0], step_of(r, 40, 50, 60)[0]
    lam = 40 / (p.ttft_ms / 1000 + 20 * p.tpot_ms / 1000)  # Little's law on the closed loop
    assert f == pytest.approx(1.0) and tokens == pytest.approx(lam * 50 * s_mix, rel=1e-4) and tokens > 1.5 * 50
    chunk = r.activation.tokens - 40
    u = lam * 50 * step_of(r, 40, chunk, 60)[0] / chunk
    assert 0.5 < u < 0.8
    _close(p.ttft_ms, (perf.FRONTEND_S + s_mix / 2 + service + u * service / (2 * (1 - u))) * 1000, rel=1e-4)
    assert not p.saturated


def test_one_client_alone_decodes_through_no_prompt_chunks(llama8b, h100):
    """Closed loop with one client: its only prompt is its own, before its first token, so every decode step is a
    pure decode step (TPOT = s_dec, no tail); an open loop at the same mean load does share steps."""
    r = size(llama8b, h100, SizeInputs(concurrency=1))
    alone = performance(r, Workload(1, 1000, 200))
    s_dec = step_of(r, 1, 0, 1100)[0]
    _close(alone.tpot_ms, s_dec * 1000, rel=1e-9)
    assert alone.tpot_p99_ms == alone.tpot_ms
    rate = 1 / ((alone.ttft_ms + 200 * alone.tpot_ms) / 1000)  # the same requests per second, Poisson
    assert performance(r, Workload(1, 1000, 200, rate=rate)).tpot_ms > alone.tpot_ms


def test_clients_beyond_what_the_engine_admits_wait_for_a_slot(llama8b, h100):
    """64 clients on an engine that runs 16 at a time: the other 48 wait (64 − 16) / 16 request times."""
    r = size(llama8b, h100, SizeInputs(concurrency=16))
    base = performance(r, Workload(16, 1000, 200))
    queued = performance(r, Workload(16, 1000, 200, clients=64))
    request = (base.ttft_ms + 200 * base.tpot_ms) / 1000
    _close(queued.ttft_ms - base.ttft_ms, (64 - 16) / 16 * request * 1000, rel=1e-6)
    _close(queued.tpot_ms, base.tpot_ms)
    # the engine's 16 slots stay busy while the others wait: the same output tokens per second
    _close(queued.output_tokens_per_s, base.output_tokens_per_s, rel=1e-9)


def test_waves_beyond_the_slots_wait_for_a_whole_wave(llama8b, h100, closed_form):
    """The closed form (where the scheduler replay does not answer): identical requests in waves of 16, 64 clients:
    a slot frees when a wave is done — its burst TTFT and its 200 decode steps at the closed loop's TPOT — so the
    other 48 wait (64 − 16) / 16 such waves, on top of the wave's own TTFT."""
    r = size(llama8b, h100, SizeInputs(concurrency=16))
    wave = performance(r, Workload(16, 1000, 200, prompts=100, synchronized=True))
    queued = performance(r, Workload(16, 1000, 200, prompts=100, synchronized=True, clients=64))
    steady = performance(r, Workload(16, 1000, 200, synchronized=True))  # the loop's decode, without the run's ends
    cycle = (wave.ttft_ms + 200 * steady.tpot_ms) / 1000
    _close(queued.ttft_ms - wave.ttft_ms, (64 - 16) / 16 * cycle * 1000, rel=1e-6)
    _close(queued.output_tokens_per_s, wave.output_tokens_per_s, rel=1e-9)


def test_a_benchmark_burst_raises_the_mean_ttft_by_its_share(llama8b, h100):
    """A closed-loop benchmark of 100 prompts starts with 16 at once: 16 × 1000 tokens need 2 chunk steps of 8176
    tokens; that burst weighs 16 / 100 in the mean TTFT."""
    r = size(llama8b, h100, SizeInputs(concurrency=16))
    steady = performance(r, Workload(16, 1000, 200))
    bench = performance(r, Workload(16, 1000, 200, prompts=100))
    full = step_of(r, 16, 8176, 1100)[0]
    burst = perf.FRONTEND_S + (2 + 1) / 2 * full
    _close(bench.ttft_ms, (0.16 * burst + 0.84 * steady.ttft_ms / 1000) * 1000, rel=1e-6)


def test_the_closed_form_takes_every_wave_of_identical_requests_as_a_burst(llama8b, h100, closed_form):
    """Where the scheduler replay does not answer (V0, PP, hybrid models), identical requests (random dataset, range
    ratio 0, --ignore-eos) are taken to finish together, so every wave is the opening burst — 16 × 1000 tokens in 2
    chunk steps of 8176 — and the mean TTFT is the burst's, not 16/100 of it; P99 waits for the whole burst (a bound
    from above: prompts that took steps of their own come back apart)."""
    r = size(llama8b, h100, SizeInputs(concurrency=16))
    waves = performance(r, Workload(16, 1000, 200, prompts=100, synchronized=True))
    full = step_of(r, 16, 8176, 1100)[0]
    _close(waves.ttft_ms, (perf.FRONTEND_S + (2 + 1) / 2 * full) * 1000, rel=1e-6)
    assert waves.ttft_p99_ms >= (perf.FRONTEND_S + 2 * full) * 1000 - 1e-6
    assert waves.ttft_ms > performance(r, Workload(16, 1000, 200, prompts=100)).ttft_ms


def test_identical_requests_whose_prompts_share_a_step_come_back_as_a_burst(llama8b, h100):
    """The scheduler replay: 4 clients of 1,000-token prompts fit one 8,192-token step, so the four get their first
    tokens in that step, end in the same step and are sent again together: every wave of the 40 requests is the
    same step of 4,000 prompt tokens on an idle engine, and every TTFT is the front end and that step."""
    r = size(llama8b, h100, SizeInputs(concurrency=4))
    assert r.activation.tokens == 8192
    p = performance(r, Workload(4, 1000, 200, prompts=40, synchronized=True))
    want = (perf.FRONTEND_S + step_of(r, 0, 4000, 1100)[0]) * 1000
    _close(p.ttft_ms, want, rel=1e-6)
    _close(p.ttft_p99_ms, want, rel=1e-6)


def test_clients_joining_at_a_rate_the_closed_loop_keeps_up_with_run_that_closed_loop(llama8b, h100):
    """bench/run.sh's --request-rate beside --max-concurrency: 16 clients joining at 1.25 × mu (mu = the requests a
    second the closed loop of 16 serves) fill the cap and then run that closed loop — its steady TTFT and TPOT, no
    opening burst — and a run of 160 prompts ends one request time (16 / mu) after its last one starts, at
    max(159 / rate, (160 − 16) / mu). Joining at half of mu, the cap seldom binds: the open loop at that rate."""
    r = size(llama8b, h100, SizeInputs(concurrency=16))
    closed = performance(r, Workload(16, 1000, 200))
    mu = closed.output_tokens_per_s / 200
    rate = 1.25 * mu
    capped = performance(r, Workload(16, 1000, 200, rate=rate, prompts=160, capped=True, synchronized=True))
    assert (capped.ttft_ms, capped.ttft_p99_ms, capped.tpot_ms) == (closed.ttft_ms, closed.ttft_p99_ms, closed.tpot_ms)
    # the 16 clients join over 15 / rate, then each runs its requests back to back
    _close(capped.output_tokens_per_s, 160 * 200 / (15 / rate + 144 / mu + 16 / mu), rel=1e-9)
    burst = performance(r, Workload(16, 1000, 200, prompts=160, synchronized=True))
    assert capped.ttft_p99_ms < burst.ttft_p99_ms  # the waves of bench/run.sh's former closed loop are gone
    slow = performance(r, Workload(16, 1000, 200, rate=mu / 2, prompts=160, capped=True))
    assert slow == performance(r, Workload(1, 1000, 200, rate=mu / 2, prompts=160))
    assert slow.concurrency < 16


def test_clients_joining_faster_than_the_prefill_ceiling_back_up_in_their_first_cycle(llama8b, h100, closed_form):
    """The closed form (varied requests; identical ones where the replay does not answer): 64 clients joining at
    rate R, 640 prompts: the first cycle's 64 prompts arrive at R a second; past the prefill ceiling C the k-th waits
    k (1 / C − 1 / R), (64 + 1) / 2 × that on average. Their phases then spread: only the first cycle waits, 64 of
    the 640 requests (P99: the slowest 1 % of all are the backlog's slowest 10 %, from the ceil(0.9 × 64) = 58th on).
    The wait grows with R and stays below the closed form's burst of all 64 at once every wave."""
    r = size(llama8b, h100, SizeInputs(concurrency=64))
    closed = performance(r, Workload(64, 1000, 200))
    ceiling = perf._under_load(r, Workload(64, 1000, 200), 64, 1000, 200, r.activation.tokens, 1100).ceiling
    waits = []
    for rate in (2 * ceiling, 8 * ceiling):
        p = performance(r, Workload(64, 1000, 200, rate=rate, prompts=640, capped=True, synchronized=True))
        behind = 1 / ceiling - 1 / rate
        _close(p.ttft_ms, closed.ttft_ms + 0.1 * behind * 65 / 2 * 1000, rel=1e-9)
        _close(p.ttft_p99_ms, closed.ttft_p99_ms + behind * 58 * 1000, rel=1e-9)
        waits.append(p.ttft_ms)
        varied = performance(r, Workload(64, 1000, 200, rate=rate, prompts=640, capped=True))
        assert varied == p
    burst = performance(r, Workload(64, 1000, 200, prompts=640, synchronized=True))
    assert waits[0] < waits[1] < burst.ttft_ms


def test_clients_spread_over_replicas_are_replayed_at_the_whole_counts_around_them(llama8b, h100):
    """9 clients on 4 replicas: 2.25 a replica — three quarters of the replicas carry 2, a quarter 3. Output tokens/s
    is the replicas' mix (rounding 2.25 up would count 12 clients' output); the TTFT and TPOT means weigh each kind by
    the requests it serves (its share × its requests a second, in proportion to its output); the P99s are the
    larger; the engine holds all 2.25 on average."""
    r = size(llama8b, h100, SizeInputs(concurrency=3))
    two, three = (performance(r, Workload(c, 1000, 200, prompts=125, synchronized=True)) for c in (2.0, 3.0))
    mixed = performance(r, Workload(2.25, 1000, 200, prompts=125, synchronized=True))
    q2, q3 = 0.75 * two.output_tokens_per_s, 0.25 * three.output_tokens_per_s
    _close(mixed.output_tokens_per_s, q2 + q3, rel=1e-9)
    for name in ("ttft_ms", "tpot_ms"):
        _close(getattr(mixed, name), (q2 * getattr(two, name) + q3 * getattr(three, name)) / (q2 + q3), rel=1e-9)
    _close(mixed.ttft_p99_ms, max(two.ttft_p99_ms, three.ttft_p99_ms), rel=1e-9)
    _close(mixed.concurrency, 2.25, rel=1e-9)
    assert (two.concurrency, three.concurrency) == (2.0, 3.0)


def test_a_replayed_run_the_engine_holds_reports_all_its_clients_in_flight(llama8b, h100):
    """16 clients of 8,000-token prompts and 4-token outputs: each request is prefilled in one step and ends three
    steps later, so no more than a few run at once — but none waits for a slot or blocks (the engine holds all 16
    whole): its concurrency is its 16 clients, as the closed form's, not the few running at a time."""
    r = size(llama8b, h100, SizeInputs(concurrency=16))
    p = performance(r, Workload(16, 8000, 4, prompts=64, synchronized=True))
    assert p.concurrency == 16 and not p.saturated
    # 64 clients on 16 slots: the engine holds 16, the rest wait for a slot (its concurrency reads as that queue)
    few = size(llama8b, h100, SizeInputs(concurrency=16, max_num_seqs=16))
    queued = performance(few, Workload(16, 1000, 200, prompts=128, clients=64, synchronized=True))
    assert queued.concurrency == 16 and queued.saturated
    # a count a hair above a whole number is that number, not one more
    assert perf._client_mix(Workload(3.0000000001, 1000, 200, prompts=100)) == [(1.0, 3)]


def test_identical_requests_joining_past_the_prefill_ceiling_are_replayed(llama8b, h100):
    """Identical requests whose clients join faster than the prefill ceiling back up, and the scheduler's steps set
    their phases from then on: replayed with the clients joining at the rate. At a rate far past the ceiling that is
    the closed loop whose clients start at once (within 10 %: the first prompt is scheduled alone, the others
    arriving a nanosecond later); below the ceiling the arrivals set the phases and the closed form answers."""
    r = size(llama8b, h100, SizeInputs(concurrency=16))
    at_once = performance(r, Workload(16, 1000, 200, prompts=160, synchronized=True))
    fast = performance(r, Workload(16, 1000, 200, rate=1e9, prompts=160, capped=True, synchronized=True))
    for name in ("ttft_ms", "ttft_p99_ms", "tpot_ms"):
        assert abs(getattr(fast, name) / getattr(at_once, name) - 1) < 0.1, name
    assert abs(fast.output_tokens_per_s / at_once.output_tokens_per_s - 1) < 0.01
    ceiling = perf._under_load(r, Workload(16, 1000, 200), 16, 1000, 200, r.activation.tokens, 1100).ceiling
    calls = []
    real = perf.replay
    with pytest.MonkeyPatch.context() as m:
        m.setattr(perf, "replay", lambda *a, **k: calls.append(k) or real(*a, **k))
        perf.performance.cache_clear()
        performance(r, Workload(16, 1000, 200, rate=0.99 * ceiling, prompts=160, capped=True, synchronized=True))
        assert not calls
        performance(r, Workload(16, 1000, 200, rate=1.01 * ceiling, prompts=160, capped=True, synchronized=True))
        assert calls and calls[0]["clients"] == 16 and calls[0]["rate"] == 1.01 * ceiling
    perf.performance.cache_clear()
    # past the ceiling the replay runs on drawn Poisson arrivals: the waits grow with the rate towards the clients
    # all at once — for a decode-bound load (1,000 + 200) and a prefill-bound one (8,000 + 4)
    for clients, prompt, out in ((16, 1000, 200), (16, 8000, 4)):
        rp = size(llama8b, h100, SizeInputs(concurrency=clients, context_tokens=8192 + 64))
        c = perf._under_load(rp, Workload(clients, prompt, out), clients, prompt, out, rp.activation.tokens,
                             prompt + out / 2).ceiling
        runs = [performance(rp, Workload(clients, prompt, out, rate=f * c, prompts=4 * clients, capped=True,
                                         synchronized=True)) for f in (1.0, 1.05, 1.2, 2.0, 10.0)]
        for a, b in zip(runs, runs[1:]):
            assert b.ttft_ms >= a.ttft_ms and b.ttft_p99_ms >= 0.95 * a.ttft_p99_ms
        whole = performance(rp, Workload(clients, prompt, out, prompts=4 * clients, synchronized=True))
        assert runs[-1].ttft_ms <= whole.ttft_ms * 1.05
    # at 1.05 × the ceiling: the mean of the replays on each drawn sequence, not the evenly spaced replay
    w = Workload(16, 1000, 200, rate=1.05 * ceiling, prompts=160, capped=True, synchronized=True)
    state = perf._under_load(r, Workload(16, 1000, 200), 16, 1000, 200, r.activation.tokens, 1100)
    drawn = [perf._replayed(r, w, state, [a]) for a in perf.poisson_runs(w.rate, 160)]
    got = performance(r, w)
    _close(got.ttft_ms, sum(p.ttft_ms for p in drawn) / len(drawn), rel=1e-9)
    _close(got.ttft_p99_ms, sum(p.ttft_p99_ms for p in drawn) / len(drawn), rel=1e-9)
    assert got.ttft_ms != pytest.approx(perf._replayed(r, w, state).ttft_ms, rel=0.01)


def test_replays_on_drawn_arrivals_are_averaged_field_by_field():
    """Two runs' Performance: every figure their mean, saturated if either was."""
    a = perf.Performance(100.0, 10.0, 1000.0, 5.0, 1.0, 0.0, 50.0, 300.0, 12.0, 8.0, 0.2, saturated=False)
    b = perf.Performance(200.0, 20.0, 3000.0, 5.0, 1.0, 0.0, 150.0, 500.0, 16.0, 6.0, 0.4, saturated=True)
    m = perf._mean_of([a, b])
    assert (m.ttft_ms, m.tpot_ms, m.output_tokens_per_s, m.ttft_p99_ms, m.tpot_p99_ms, m.concurrency) == (
        150.0, 15.0, 2000.0, 400.0, 14.0, 7.0)
    assert m.saturated and not perf._mean_of([a, a]).saturated


def test_a_release_or_family_runs_at_its_own_speed_constants():
    """data/vllm-speed.json: DeepSeek-V3/R1 on the 0.7 V0 engine pays a fixed per-step cost and a slow prefill (the
    ROCm build more per step than the CUDA one);
    0.11.0's front end is slower; 0.33 (no benchmark in the data) and other models run at the module defaults."""
    from wizard.sizing.performance import speed_for

    ds = speed_for("0.7.4.dev181+gf35f8e22", "DeepseekV3ForCausalLM", "nvidia")
    assert ds.profile == "deepseek-mla-v0-cuda" and ds.step_overhead_s > 0 and ds.eff_flops < perf.EFF_FLOPS
    rocm = speed_for("0.7.3", "DeepseekV3ForCausalLM", "amd")
    assert rocm.profile == "deepseek-mla-v0-rocm" and rocm.step_overhead_s > ds.step_overhead_s
    assert speed_for("0.7.3", "LlamaForCausalLM").profile == "default"
    assert speed_for("0.11.0", "Qwen3ForCausalLM").frontend_s > perf.FRONTEND_S
    default = speed_for("0.33.0", "DeepseekV3ForCausalLM")
    assert default == perf.Speed(perf.STEP_OVERHEAD_S, perf.FRONTEND_S, None, "default")  # None: by card class


def test_a_front_end_entry_changes_the_ttft_by_its_front_end_and_nothing_else(llama8b, h100):
    """frontend-0.11 (data/vllm-speed.json) names only 0.11.0's front end, so its steps run at the card class's
    constants: an idle replica's TTFT (front end + half a decode step + the prompt's chunk) differs from the default's
    by the two front ends' difference alone when the steps are the same (same model, card and token budget)."""
    speed = perf.speed_for("0.11.0", llama8b.architecture, h100.vendor)
    assert speed.profile == "frontend-0.11" and speed.frontend_s != perf.FRONTEND_S
    assert (speed.eff_flops, speed.eff_bandwidth, speed.step_overhead_s) == (None, None, perf.STEP_OVERHEAD_S)
    pinned = SizeInputs(max_num_batched_tokens=2048, max_num_seqs=256)
    old, new = (size(llama8b, h100, pinned._replace(vllm_version=v)) for v in ("0.11.0", "0.33.0"))
    w = Workload(1, 1000, 200, rate=1e-6)
    for r in (old, new):
        dec, chunk = step_of(r, 1, 0, 1100)[0], step_of(r, 1, 1000, 1100)[0]
        front = perf.speed_for(r.inputs.vllm_version, llama8b.architecture, h100.vendor).frontend_s
        _close(performance(r, w).ttft_ms, (front + dec / 2 + chunk) * 1000, rel=1e-4)
    assert step_of(old, 1, 1000, 1100) == step_of(new, 1, 1000, 1100)
    _close(performance(old, w).ttft_ms - performance(new, w).ttft_ms, (speed.frontend_s - perf.FRONTEND_S) * 1000,
           rel=1e-3)


def test_a_cached_prompt_is_prefilled_from_its_last_full_block_on(llama8b, h100):
    """Workload.cached_prompt_tokens (vLLM's prefix cache holds the prompt from an earlier request): only the rest
    is prefilled. An idle replica's TTFT is then the front end + half a decode step + one step carrying the
    uncached 8 tokens of a 1,000-token prompt (992 cached: 62 whole blocks); the KV it holds, and so its decode
    steps, are the whole prompt's."""
    r = size(llama8b, h100, SizeInputs())
    cold = performance(r, Workload(1, 1000, 200, rate=1e-6))
    warm = performance(r, Workload(1, 1000, 200, rate=1e-6, cached_prompt_tokens=992))
    dec, tail = step_of(r, 1, 0, 1100)[0], step_of(r, 1, 8, 1100)[0]
    _close(warm.ttft_ms, (perf.FRONTEND_S + dec / 2 + tail) * 1000, rel=1e-4)
    assert warm.ttft_ms < cold.ttft_ms
    _close(warm.tpot_ms, cold.tpot_ms, rel=1e-6)
    # at least one token is computed, however much is said to be cached
    whole = performance(r, Workload(1, 1000, 200, rate=1e-6, cached_prompt_tokens=5000))
    _close(whole.ttft_ms, (perf.FRONTEND_S + dec / 2 + step_of(r, 1, 1, 1100)[0]) * 1000, rel=1e-4)


def test_a_gddr_card_runs_at_its_card_class_efficiencies(llama8b):
    """The card class sets the efficiencies (the GDDR fit rows differ from the HBM ones). rtx4090-24gb (catalog):
    GDDR6X, 1.008e12 B/s, 165.2e12 bf16 FLOP/s (FP32 accumulate). One Llama-3.1-8B decode at 1000 + 200 tokens:
        memory  (16,060,522,496 − RoPE cache + 131,072 × 1100) / (1.008e12 × EFF_BANDWIDTH_GDDR)
        compute (2 × 7,504,924,672 + 524,288 × 1100) / (165.2e12 × EFF_FLOPS_GDDR)
    while an H100 (HBM3) runs the same step at EFF_BANDWIDTH and EFF_FLOPS."""
    gpu = find_gpu("rtx4090-24gb")
    assert gpu.memory_type.upper().startswith("GDDR")
    r = size(llama8b, gpu, SizeInputs(context_tokens=1200))
    p = performance(r, Workload(1, 1000, 200))
    read = r.weights.per_gpu - r.weights.buffers
    _close(p.decode_memory_ms, (read + L8_KV_PER_TOKEN * 1100) / (1.008e12 * perf.EFF_BANDWIDTH_GDDR) * 1000)
    _close(p.compute_ms, (2 * L8_ACTIVE + L8_ATTN_PER_TOKEN * 1100) / (165.2e12 * perf.EFF_FLOPS_GDDR) * 1000)
    assert perf.flops_efficiency(find_gpu("h100-sxm-80gb"), perf.speed_for("0.33.0", "LlamaForCausalLM")) == EFF_FL


def test_an_amd_hbm_card_decodes_at_the_rocm_class_bandwidth_share(llama8b):
    """AMD HBM cards are a bandwidth class of their own (EFF_BANDWIDTH_ROCM), on every release: the MI300X on 0.17 and
    on 0.33 alike; an NVIDIA HBM card keeps the HBM default and a GDDR card the GDDR class. mi300x-192gb (catalog):
    5.3e12 B/s. One Llama-3.1-8B decode at 1000 + 200 tokens reads its weights (16,060,522,496 B; the RoPE cache beside
    them is indexed, not streamed) and 131,072 B × 1100 of KV at 5.3e12 × EFF_BANDWIDTH_ROCM."""
    mi300x = find_gpu("mi300x-192gb")
    assert [perf.bandwidth_class(find_gpu(g)) for g in ("mi300x-192gb", "mi355x-288gb", "h100-sxm-80gb",
                                                        "rtx4090-24gb")] == ["rocm", "rocm", "hbm", "gddr"]
    assert perf.EFF_BANDWIDTH_ROCM < perf.EFF_BANDWIDTH
    for version in ("0.17.0", "0.33.0"):
        speed = perf.speed_for(version, "LlamaForCausalLM", "amd")
        assert speed.eff_bandwidth is None  # no entry: the class decides
        assert perf.bandwidth_efficiency(mi300x, speed) == perf.EFF_BANDWIDTH_ROCM
        r = size(llama8b, mi300x, SizeInputs(context_tokens=1200, vllm_version=version))
        assert r.weights.per_gpu - r.weights.buffers == L8_WEIGHTS
        p = performance(r, Workload(1, 1000, 200))
        _close(p.decode_memory_ms, (L8_WEIGHTS + L8_KV_PER_TOKEN * 1100) / (5.3e12 * perf.EFF_BANDWIDTH_ROCM) * 1000)
        # the class is the bandwidth's only: prefill runs at the HBM class's FLOPS efficiency
        assert perf.flops_efficiency(mi300x, speed) == perf.EFF_FLOPS
    h100 = find_gpu("h100-sxm-80gb")
    assert perf.bandwidth_efficiency(h100, perf.speed_for("0.17.0", "LlamaForCausalLM", "nvidia")) == perf.EFF_BANDWIDTH
    # an entry that names its own bandwidth wins over the class: DeepSeek-R1 on 0.7's ROCm V0 engine reads at its
    # entry's share (fitted beside its step cost), and the same architecture on 0.33 falls back to the class
    entry = perf.speed_for("0.7.3", "DeepseekV3ForCausalLM", "amd")
    assert entry.profile == "deepseek-mla-v0-rocm" and entry.eff_bandwidth not in (None, perf.EFF_BANDWIDTH_ROCM)
    assert perf.bandwidth_efficiency(mi300x, entry) == entry.eff_bandwidth
    assert perf.bandwidth_efficiency(mi300x, perf.speed_for("0.33.0", "DeepseekV3ForCausalLM", "amd")) \
        == perf.EFF_BANDWIDTH_ROCM


def test_the_step_overhead_of_a_speed_entry_adds_to_every_step(h100):
    """The same DeepSeek-R1 TP 8 sizing on 0.7.3 and on 0.33: one decode step differs by the entry's step overhead
    plus the prefill efficiency's share (none in a pure decode step below the ridge point)."""
    from wizard.sizing.performance import _stage, speed_for

    m = model("deepseek-ai/DeepSeek-R1")
    h200 = find_gpu("h200-sxm-141gb")
    old = size(m, h200, SizeInputs(tp=8, context_tokens=4096, vllm_version="0.7.3"))
    new = size(m, h200, SizeInputs(tp=8, context_tokens=4096))
    a, b = _stage(old, 4, 0, 2000), _stage(new, 4, 0, 2000)
    assert a[1] > a[2] and b[1] > b[2]  # memory-bound in both: only the overhead differs
    _close(a[0] - b[0], speed_for("0.7.3", m.architecture, "nvidia").step_overhead_s - perf.STEP_OVERHEAD_S,
           rel=1e-6)
    assert a[0] > b[0]


@pytest.fixture
def closed_form(monkeypatch):
    """The closed forms of a run past the engine's slots, which run where the scheduler replay does not (varied
    outputs, V0, PP, hybrid models; test_scheduler_replay.py): here on fixed lengths, for hand arithmetic."""
    monkeypatch.setattr(perf, "_replayable", lambda r, w: False)
    perf.performance.cache_clear()
    yield
    perf.performance.cache_clear()


def _run_and_admitted_open_loop(monkeypatch, r, w, admitted: int):
    """(performance(r, w) of a run past the engine's slots, the open loop of its first `admitted` prompts alone at
    w's rate — their TTFT, as they are admitted on arrival): the load model's own open loop, at the in-flight count
    and drain share the run was computed at (the arguments the overloaded engine is handed)."""
    calls = []
    real = perf._overloaded

    def spy(*args):
        calls.append(args)
        return real(*args)

    monkeypatch.setattr(perf, "_overloaded", spy)
    perf.performance.cache_clear()
    p = performance(r, w)
    monkeypatch.setattr(perf, "_overloaded", real)
    perf.performance.cache_clear()
    assert len(calls) == 1, "the run was not past the engine's slots"
    r_, w_, state, _, prompt, out, budget, ctx, run_b, run_seen = calls[0]
    # the in-flight count and drain share handed over are the ones the run's own open loop was computed at: they
    # give back its whole state (the drain share sets its TPOT), but the in-flight count the run reports
    assert perf._under_load(r_, w_, run_b, prompt, out, budget, ctx, run_seen)._replace(b=state.b) == state
    if admitted >= w.prompts:
        return p, state  # every request admitted on arrival: the run's own open loop
    return p, perf._under_load(r_, w_._replace(prompts=admitted), run_b, prompt, out, budget, ctx, run_seen)


def test_open_loop_sequences_come_from_littles_law(llama8b, h100):
    r = size(llama8b, h100, SizeInputs(concurrency=16))
    p = performance(r, Workload(1, 1000, 200, rate=4.0))
    _close(p.concurrency, 4.0 * (p.ttft_ms + 200 * p.tpot_ms) / 1000, rel=0.02)


def test_an_open_loop_beyond_the_engines_slots_runs_it_full_and_queues_the_rest(llama8b, h100, monkeypatch, closed_form):
    """max_num_seqs 32, arrivals at 40 requests/s of 1,000-token prompts and 200-token outputs: Little's law asks
    for more than 32 sequences, so the engine runs 32 — as a closed loop of 32 clients does, each finished request
    replaced from the queue at once — serving mu = 32 / (its TTFT + 200 TPOT) requests a second. A benchmark of
    N = 2,000 prompts: request k starts at about k / mu and arrived at k / 40, so from k = 33 on it waits
    k (1 / mu − 1 / 40); the mean over the N and the 99th percentile (k = 1,980) join TTFT. The first 32, admitted
    as they arrive, are prefilled as an open loop of those 32 at 40 a second (at least as slowly as the full engine):
    32 / 2,000 of the mean."""
    r = size(llama8b, h100, SizeInputs(concurrency=1, max_num_seqs=32))
    assert perf.engine_slots(r, 1000, 200) == 32  # the KV cache holds far more: max_num_seqs decides
    p, opened = _run_and_admitted_open_loop(monkeypatch, r, Workload(1, 1000, 200, rate=40.0, prompts=2000), 32)
    full = performance(r, Workload(32, 1000, 200))
    mu = 32 / ((full.ttft_ms + 200 * full.tpot_ms) / 1000)
    assert mu < 40 and p.saturated and p.concurrency == 32
    late = 1 / mu - 1 / 40
    base = 32 / 2000 * max(opened.ttft * 1000, full.ttft_ms) + (1 - 32 / 2000) * full.ttft_ms
    _close(p.ttft_ms - base, late * (2000 * 2001 - 32 * 33) / (2 * 2000) * 1000, rel=1e-6)
    _close(p.ttft_p99_ms - full.ttft_p99_ms, late * 1980 * 1000, rel=1e-6)
    _close(p.tpot_ms, full.tpot_ms)
    # the run's output over its whole time: the last request starts once 1,999 have been served at mu a second and
    # holds its slot one in-engine request time (the queue's wait is not the engine's time)
    in_engine = (full.ttft_ms + 200 * full.tpot_ms) / 1000
    _close(p.output_tokens_per_s, 2000 * 200 / (1999 / mu + in_engine), rel=1e-6)
    steady = performance(r, Workload(1, 1000, 200, rate=40.0))  # no N: an unbounded queue, only flagged
    assert steady.saturated and steady.concurrency == 32 and math.isfinite(steady.ttft_ms)
    _close(steady.output_tokens_per_s, full.output_tokens_per_s, rel=1e-9)  # the engine's service rate, mu × 200


def test_requests_the_pool_has_prompt_room_for_wait_in_their_decode_not_their_ttft(llama8b, h100, monkeypatch, closed_form):
    """A pool of 40,320 tokens: sequences of 1,000 prompt + 100 (half the output) tokens, 1,104 in whole 16-token
    blocks, fill it at 36 (the slots), but vLLM admits a request when its prompt's blocks are free — 40 prompts of
    1,000 tokens (1,008 in blocks). 40 requests arriving
    at 200 a second: the first 36 run; requests 37..40 are admitted at arrival too (first token at once) and the
    engine preempts for their outputs, so each waits k (1 / mu − 1 / rate) in its decode: TTFT is the open loop's at
    200 a second (its prompts arrive at that rate), TPOT carries the mean wait / 200 tokens. With 60 requests, those
    beyond the 40 admitted wait for admission until k − 40 have finished, at (k − 40 + 36) / mu, and are then
    prefilled at the full engine's turnover."""
    base = size(llama8b, h100, SizeInputs(concurrency=1, max_num_seqs=256))
    util = 0.9 - (base.kv_pool_bytes - 40_320 * L8_KV_PER_TOKEN) / h100.memory_reported_bytes
    r = size(llama8b, h100, SizeInputs(concurrency=1, max_num_seqs=256, gpu_memory_utilization=util))
    assert abs(r.kv_pool_bytes - 40_320 * L8_KV_PER_TOKEN) < 8 * L8_KV_PER_TOKEN
    slots, admitted = perf.engine_slots(r, 1000, 200), perf.admitted_at_once(r, 1000)
    assert int(slots) == 36 and int(admitted) == 40
    full = performance(r, Workload(slots, 1000, 200))
    mu = slots / ((full.ttft_ms + 200 * full.tpot_ms) / 1000)
    late = 1 / mu - 1 / 200
    p, opened = _run_and_admitted_open_loop(monkeypatch, r, Workload(1, 1000, 200, rate=200.0, prompts=40), 40)
    assert p.saturated
    assert opened.ttft * 1000 > full.ttft_ms  # 40 prompts at 200 a second queue for the chunk budget
    _close(p.ttft_ms, opened.ttft * 1000, rel=1e-9)
    # all 40 admitted: the run's 99th percentile is theirs (never below the full engine's, nor the mean)
    _close(p.ttft_p99_ms, max(opened.ttft99 * 1000, full.ttft_p99_ms, p.ttft_ms), rel=1e-9)
    _close(p.tpot_ms, full.tpot_ms + late * sum(range(37, 41)) / 40 / 200 * 1000, rel=1e-6)
    _close(p.tpot_p99_ms, full.tpot_p99_ms + late * 40 / 200 * 1000, rel=1e-6)  # the 40th's stall, the largest
    # the engine serves at mu whatever the stalls: the last request starts at 39 / mu, one engine time before the end
    _close(p.output_tokens_per_s, 40 * 200 / (39 / mu + slots / mu), rel=1e-6)
    q, opened = _run_and_admitted_open_loop(monkeypatch, r, Workload(1, 1000, 200, rate=200.0, prompts=60), 40)
    ttft_wait = sum(max(0.0, (k - admitted + slots) / mu - k / 200) for k in range(41, 61)) / 60
    # requests 1..40 admitted as they arrive (their prompts' queue: the open loop of those 40), 41..60 later
    _close(q.ttft_ms, 40 / 60 * max(opened.ttft * 1000, full.ttft_ms) + 20 / 60 * full.ttft_ms + ttft_wait * 1000,
           rel=1e-6)
    # the 99th percentile: the larger of the admitted ones' and the 60th request's (the full engine's plus its wait
    # for admission) — and never below the mean
    later99 = full.ttft_p99_ms + max(0.0, (60 - admitted + slots) / mu - 60 / 200) * 1000
    _close(q.ttft_p99_ms, max(opened.ttft99 * 1000, later99, q.ttft_ms), rel=1e-6)
    assert q.ttft_p99_ms >= q.ttft_ms
    total = sum(late * k for k in range(37, 61)) / 60
    _close(q.tpot_ms, full.tpot_ms + (total - ttft_wait) / 200 * 1000, rel=1e-6)
    # P99 over the requests' own stalls (rising to the 40th's, then (40 − slots) / mu after): the largest of the 60
    def stall(k: int) -> float:
        waits_for_admission = max(0.0, (k - admitted + slots) / mu - k / 200) if k > admitted else 0.0
        return late * k - waits_for_admission if k > slots else 0.0

    stalls = sorted(stall(k) for k in range(1, 61))
    _close(q.tpot_p99_ms, full.tpot_p99_ms + stalls[59] / 200 * 1000, rel=1e-6)



def test_an_overrun_runs_ttft_p99_is_never_below_its_mean(llama8b, h100, monkeypatch, closed_form):
    """The run of the test above with 40 prompts (every one admitted on arrival), handed an open loop whose prompts
    queue 100 s on average yet whose P99 is 1 ms (no real queue is so): the run's mean is that 100 s and its P99 is
    raised to the mean, not left at either group's."""
    base = size(llama8b, h100, SizeInputs(concurrency=1, max_num_seqs=256))
    util = 0.9 - (base.kv_pool_bytes - 40_320 * L8_KV_PER_TOKEN) / h100.memory_reported_bytes
    r = size(llama8b, h100, SizeInputs(concurrency=1, max_num_seqs=256, gpu_memory_utilization=util))
    calls = []
    real = perf._overloaded
    monkeypatch.setattr(perf, "_overloaded", lambda *args: calls.append(args) or real(*args))
    perf.performance.cache_clear()
    performance(r, Workload(1, 1000, 200, rate=200.0, prompts=40))
    perf.performance.cache_clear()
    r_, w_, state, *rest = calls[0]
    odd = real(r_, w_, state._replace(ttft=100.0, ttft99=0.001), *rest)
    _close(odd.ttft, 100.0)
    _close(odd.ttft99, 100.0)


def test_varied_outputs_free_slots_from_the_moment_the_engine_is_full(llama8b, h100, monkeypatch, closed_form):
    """The pool of the test above (36 slots, 40 prompts admitted at once), 60 requests at 200 a second, outputs
    exponential about 200 tokens: requests end from the moment the engine is full (36 / 200 s), one every 1 / mu,
    not a request time after they start. Request k arrives at k / 200; it decodes from 36 / 200 + (k − 36) / mu
    (its whole wait) and is admitted — the pool holding 40 prompts — at 36 / 200 + (k − 40) / mu: that part of the
    wait is in its TTFT, the rest in its decode (TPOT)."""
    base = size(llama8b, h100, SizeInputs(concurrency=1, max_num_seqs=256))
    util = 0.9 - (base.kv_pool_bytes - 40_320 * L8_KV_PER_TOKEN) / h100.memory_reported_bytes
    r = size(llama8b, h100, SizeInputs(concurrency=1, max_num_seqs=256, gpu_memory_utilization=util))
    slots, admitted = perf.engine_slots(r, 1000, 200), perf.admitted_at_once(r, 1000)
    full = performance(r, Workload(slots, 1000, 200))
    mu = slots / ((full.ttft_ms + 200 * full.tpot_ms) / 1000)
    q, opened = _run_and_admitted_open_loop(monkeypatch, r, Workload(1, 1000, 200, rate=200.0, prompts=60,
                                                                     varied_output_max=10**6), 40)
    assert q.saturated
    ttft_wait = sum(max(0.0, slots / 200 + (k - admitted) / mu - k / 200) for k in range(41, 61)) / 60
    _close(q.ttft_ms, 40 / 60 * max(opened.ttft * 1000, full.ttft_ms) + 20 / 60 * full.ttft_ms + ttft_wait * 1000,
           rel=1e-6)
    # P99: the larger of the admitted ones' and the 60th request's, never below the mean
    later99 = full.ttft_p99_ms + max(0.0, slots / 200 + (60 - admitted) / mu - 60 / 200) * 1000
    _close(q.ttft_p99_ms, max(opened.ttft99 * 1000, later99, q.ttft_ms), rel=1e-6)
    total = sum(slots / 200 + (k - slots) / mu - k / 200 for k in range(37, 61)) / 60
    _close(q.tpot_ms, full.tpot_ms + (total - ttft_wait) / 200 * 1000, rel=1e-6)
    fixed = performance(r, Workload(1, 1000, 200, rate=200.0, prompts=60))
    assert q.ttft_ms < fixed.ttft_ms and q.tpot_ms < fixed.tpot_ms

def test_a_benchmark_of_n_open_loop_prompts_reports_its_output_over_the_whole_run(llama8b, h100):
    """vllm bench serve divides the output of N = 20 requests at 2 a second by the run's duration: the arrivals span
    19 / 2 s (the first is sent at once) and the last request ends after it has decoded its 200 tokens — below the
    steady state's 2 × 200 tokens/s, and no sooner than at one sequence's step, no later than at the steady state's.
    Without N the steady state stands. One prompt alone: its TTFT, then 200 steps of one sequence."""
    r = size(llama8b, h100, SizeInputs(concurrency=16))
    steady = performance(r, Workload(1, 1000, 200, rate=2.0))
    bench = performance(r, Workload(1, 1000, 200, rate=2.0, prompts=20))
    assert not bench.saturated
    _close(steady.output_tokens_per_s, 2 * 200, rel=1e-3)
    end = 20 * 200 / bench.output_tokens_per_s
    alone = step_of(r, 1, 0, 1100)[0]
    assert 19 / 2 + bench.ttft_ms / 1000 + 200 * alone < end < 19 / 2 + (bench.ttft_ms + 200 * steady.tpot_ms) / 1000
    assert alone * 1000 < bench.tpot_ms < steady.tpot_ms  # the run's first and last requests decode nearly alone
    assert bench.ttft_ms <= steady.ttft_ms  # its queue starts empty
    one = performance(r, Workload(1, 1000, 200, rate=2.0, prompts=1))
    _close(one.tpot_ms, alone * 1000, rel=1e-4)
    _close(one.output_tokens_per_s, 200 / ((one.ttft_ms + 200 * one.tpot_ms) / 1000), rel=1e-3)


def test_the_expected_end_of_a_run_of_varied_outputs_by_hand():
    """Two requests sent at once (span 0), outputs exponential about m = 200 tokens: the run ends with the longer,
    whose expected length is m × (1 + 1/2) — at τ = 20 ms a token after a 0.1 s TTFT, 0.1 + 0.02 × 300 s. When the
    run stops being busy at once (busy = TTFT) the tokens come at the drained τ of 10 ms: 0.1 + 0.01 × 300 s. A cap of
    50 tokens (a sampler's maximum) ends it by 0.1 + 0.02 × 50 s."""
    _close(perf.expected_last_finish(2, 0.0, 0.1, 0.02, 0.02, 1e9, 200, 10**6, points=4000), 0.1 + 0.02 * 300, rel=1e-3)
    _close(perf.expected_last_finish(2, 0.0, 0.1, 0.02, 0.01, 0.1, 200, 10**6, points=4000), 0.1 + 0.01 * 300, rel=1e-3)
    # the last arrival's start, i × span / (n − 1) + ttft at i = n − 1, can land a few ulps before span + ttft: a
    # request that has run 1e-15 s has surely not ended (it raised a math domain error)
    end = perf.expected_last_finish(200, 7.571178868057497, 0.392282259558116, 0.17944424537645964,
                                    0.02610492662131519, 45.28786416591922, 208, 1840)
    assert 7.571178868057497 + 0.392282259558116 < end < 200
    capped = perf.expected_last_finish(2, 0.0, 0.1, 0.02, 0.02, 1e9, 200, 50)
    assert 0.1 + 0.02 * 20 < capped <= 0.1 + 0.02 * 50 + 1e-9


def test_a_run_of_varied_outputs_ends_with_its_longest_request(llama8b, h100):
    """A ShareGPT-like run (outputs vary about the mean) lasts past the arrivals plus one mean request: its output
    a second is below the same run of fixed outputs, and more so at a higher rate (the tail is a larger share)."""
    r = size(llama8b, h100, SizeInputs(concurrency=16))
    shares = []
    for rate in (2.0, 8.0):
        fixed = performance(r, Workload(1, 200, 200, rate=rate, prompts=200))
        varied = performance(r, Workload(1, 200, 200, rate=rate, prompts=200, varied_output_max=1848))
        assert varied.ttft_ms == fixed.ttft_ms
        assert varied.output_tokens_per_s < fixed.output_tokens_per_s
        shares.append(varied.output_tokens_per_s / fixed.output_tokens_per_s)
    assert shares[1] < shares[0]


def test_a_closed_loop_of_identical_requests_runs_in_waves(llama8b, h100):
    """vllm bench serve --max-concurrency 4 with 10 identical requests (fixed lengths, --ignore-eos): the 4 prompts of
    1,000 tokens share one 8,192-token step, so the first 4 go at once (the same run as 4 prompts alone), end
    together and come back together: each later wave of 4 runs as the first did, and the last 2 are a run of their
    own on the idle engine. The run grows with N from the first wave on: 4 < 5 < 8 < 10 prompts take longer and
    longer, 8 take more than the first wave's time and half a request time, and 10 the time of 8 and of 2 alone."""
    r = size(llama8b, h100, SizeInputs(concurrency=4))

    def end(n: int, b: int = 4, synchronized: bool = True) -> float:
        p = performance(r, Workload(b, 1000, 200, prompts=n, synchronized=synchronized))
        return n * 200 / p.output_tokens_per_s

    ends = [end(n) for n in (4, 5, 8, 10)]
    assert ends == sorted(ends) and len(set(ends)) == 4
    steady = performance(r, Workload(4, 1000, 200, prompts=8, synchronized=True))
    assert ends[2] > ends[0] + 0.5 * (steady.ttft_ms + 200 * steady.tpot_ms) / 1000
    _close(ends[3], ends[2] + end(2, 2), rel=1e-9)
    for synchronized in (True, False):  # one more prompt never shortens the run
        assert end(5, synchronized=synchronized) > end(4, synchronized=synchronized)


def test_prompts_sent_at_once_are_one_run_whichever_loop_sends_them(llama8b, h100):
    """64 prompts of 1,000 tokens at once — a closed loop of 64 clients with 64 prompts, or an open loop at an
    unbounded rate — are the same event: prefilled a chunk after another (a full chunk in every step until the last),
    each decoding from its first token; the run ends after its last prompt's first token, and one prompt alone
    is its TTFT (its first token) and 199 decode steps of one sequence."""
    r = size(llama8b, h100, SizeInputs(concurrency=64))
    closed = performance(r, Workload(64, 1000, 200, prompts=64))
    opened = performance(r, Workload(1, 1000, 200, rate=1e9, prompts=64))
    _close(closed.output_tokens_per_s, opened.output_tokens_per_s, rel=0.03)
    assert 64 * 200 / closed.output_tokens_per_s > closed.ttft_p99_ms / 1000
    identical = performance(r, Workload(64, 1000, 200, prompts=64, synchronized=True))
    _close(identical.output_tokens_per_s, closed.output_tokens_per_s, rel=1e-9)  # one wave: nothing to resend
    one = performance(r, Workload(8, 1000, 200, prompts=1))  # 8 clients, one prompt: one sequence
    _close(one.tpot_ms, step_of(r, 1, 0, 1100)[0] * 1000, rel=1e-3)
    # its first token comes with its prompt's step, the other 199 a decode step each (TPOT as vllm bench serve
    # takes it: (latency − TTFT) / (output − 1))
    _close(200 / one.output_tokens_per_s, (one.ttft_ms + 199 * one.tpot_ms) / 1000, rel=1e-9)


def test_a_closed_loop_of_varied_outputs_ends_with_a_drain(llama8b, h100):
    """10 clients, 100 ShareGPT-like requests: a finished request is replaced at once until the last is sent, 90 / 10
    request times in; then the 10 in flight drain, each with an exponential output left (memoryless) — at least the
    longest of 10 (m × H(10) tokens) at one sequence's step, at most one request time at the loaded step for each
    of those tokens."""
    r = size(llama8b, h100, SizeInputs(concurrency=10))
    steady = performance(r, Workload(10, 200, 200))
    run = performance(r, Workload(10, 200, 200, prompts=100, varied_output_max=1848))
    request = (steady.ttft_ms + 200 * steady.tpot_ms) / 1000
    end = 100 * 200 / run.output_tokens_per_s
    longest = 200 * sum(1 / k for k in range(1, 11))
    alone = step_of(r, 1, 0, 300)[0]
    assert 9 * request + longest * alone < end < 9 * request + steady.ttft_ms / 1000 + longest * steady.tpot_ms / 1000
    assert run.output_tokens_per_s < steady.output_tokens_per_s


def test_an_open_loop_of_fewer_prompts_than_slots_holds_them_all_and_no_more(llama8b, h100):
    """40 requests a second of 100 + 2,000 tokens ask Little's law for hundreds of sequences (each decodes for
    seconds): a benchmark of N = 10 never reaches that steady state — 10 arrivals over 9 / 40 s, then a drain — so
    it holds fewer than 10 sequences on average (benchmark_run.run_in_flight; the engine's 1,024 slots are not the
    limit), and its output is 10 × 2,000 over a run that ends with the last request's 2,000 tokens."""
    r = size(llama8b, h100, SizeInputs(concurrency=10, context_tokens=4096))
    p = performance(r, Workload(1, 100, 2000, rate=40.0, prompts=10))
    assert not p.saturated
    request = (p.ttft_ms + 2000 * p.tpot_ms) / 1000
    assert 40 * request > 10  # Little's law at 40 a second would ask for more than 10
    assert 9 < p.concurrency <= 10
    # ten sequences of 100–2,100 tokens decode together: the end is 2,000 such steps after the last first token
    ten = step_of(r, 10, 0, 1100)[0]
    _close(20 * 2000 / p.output_tokens_per_s, 2 * (9 / 40 + p.ttft_ms / 1000 + 2000 * ten), rel=0.02)
    # the steady state at 40 a second decodes a far larger batch, each step longer
    assert performance(r, Workload(1, 100, 2000, rate=40.0)).tpot_ms > p.tpot_ms


# --------------------------------------------------------------------------------------- TP all-reduce
def _llama8b_tp2_weights_per_gpu() -> float:
    """Every matrix split in two, the norms (266,240 params) replicated."""
    return (L8_WEIGHTS - 2 * L8_NORM_PARAMS) / 2 + 2 * L8_NORM_PARAMS


def test_tp2_step_adds_two_all_reduces_per_layer_over_nvlink(llama8b, h100):
    """TP 2, one token: per layer 2 × (latency + 2 × (2 − 1)/2 × 1 token × 4096 × 2 bytes / 450e9), × 32 layers.
    Each rank reads half the matrices and 4 of the 8 KV heads, and does half the FLOPs."""
    r = size(llama8b, h100, SizeInputs(tp=2))
    assert r.weights.per_gpu - r.weights.buffers == _llama8b_tp2_weights_per_gpu() == 8_030_527_488
    p = performance(r, Workload(1, 1000, 200))
    comm = L8_LAYERS * 2 * (perf.ALLREDUCE_LATENCY_S + 2 * (2 - 1) / 2 * 1 * L8_HIDDEN * 2 / H100_LINK)
    memory = (8_030_527_488 + (L8_KV_PER_TOKEN / 2) * 1100) / (H100_BW * EFF_BW)
    compute = (2 * L8_ACTIVE + L8_ATTN_PER_TOKEN * 1100) / 2 / (H100_BF16 * EFF_FL)
    _close(p.comm_ms, comm * 1000)
    _close(p.decode_memory_ms, memory * 1000)
    _close(p.compute_ms, compute * 1000)
    _close(step_of(r, 1, 0, 1100)[0], max(memory, compute) + comm + OVERHEAD)


def test_tp4_all_reduce_over_pcie_takes_the_pcie_latency_and_bandwidth(llama8b):
    """h100-pcie-80gb: no NVLink (ALLREDUCE_LATENCY_PCIE_S per all-reduce, above NVLink's), 64e9 B/s. A decode step
    of B = 4 → 4 tokens per all-reduce; ring factor 2 × (4 − 1)/4 = 1.5."""
    gpu = find_gpu("h100-pcie-80gb")
    assert (gpu.nvlink, gpu.interconnect_bytes_s) == (False, 64e9)
    r = size(llama8b, gpu, SizeInputs(tp=4))
    p = performance(r, Workload(4, 1000, 200))
    tokens = 4
    assert perf.ALLREDUCE_LATENCY_PCIE_S > perf.ALLREDUCE_LATENCY_S
    comm = L8_LAYERS * 2 * (perf.ALLREDUCE_LATENCY_PCIE_S + 1.5 * tokens * L8_HIDDEN * 2 / 64e9)
    _close(p.comm_ms, comm * 1000)


@pytest.mark.parametrize("tp", [2, 4])
def test_tp_without_peer_to_peer_all_reduces_through_host_memory(llama8b, tp):
    """rtx4090-24gb (catalog: pcie_p2p false): each of the 2 all-reduces per layer costs the host latency per level of
    a tree over the ranks, log2(TP) × ALLREDUCE_LATENCY_HOST_S, plus the ring's 2 (TP − 1) / TP of one token's
    4096 × 2 bytes at ALLREDUCE_HOST_BYTES_S; × 32 layers. The same card with peer-to-peer takes the PCIe figures."""
    g = find_gpu("rtx4090-24gb")
    assert not g.pcie_p2p and not g.nvlink
    r = size(llama8b, g, SizeInputs(tp=tp, context_tokens=2048))
    _, _, comm = perf.step_time(r, 1, 0, 1100)
    per = math.log2(tp) * perf.ALLREDUCE_LATENCY_HOST_S + 2 * (tp - 1) / tp * L8_HIDDEN * 2 / perf.ALLREDUCE_HOST_BYTES_S
    _close(comm, L8_LAYERS * 2 * per)
    p2p = size(llama8b, g._replace(pcie_p2p=True), SizeInputs(tp=tp, context_tokens=2048))
    _, _, comm_p2p = perf.step_time(p2p, 1, 0, 1100)
    _close(comm_p2p, L8_LAYERS * 2 * (perf.ALLREDUCE_LATENCY_PCIE_S + 2 * (tp - 1) / tp * L8_HIDDEN * 2 / 32e9))
    # through host memory is the slower path at every TP: its latency grows with log2 TP (the model keeps the
    # peer-to-peer latency flat, fitted at TP 2 only) and it moves the bytes at a tenth of the link's rate
    assert comm > comm_p2p


def test_tp_all_reduce_grows_with_tokens_and_shrinks_with_a_faster_link(llama8b, h100):
    r = size(llama8b, h100, SizeInputs(tp=2))
    one = performance(r, Workload(1, 1000, 200)).comm_ms
    many = performance(r, Workload(64, 1000, 200)).comm_ms
    assert many > one
    fast = size(llama8b, h100._replace(interconnect_bytes_s=2 * H100_LINK), SizeInputs(tp=2))
    assert performance(fast, Workload(64, 1000, 200)).comm_ms < many


# -------------------------------------------------------------------------------------- PP micro-batches
def test_pp2_tpot_is_two_stages_of_half_the_batch_plus_the_hand_off(llama8b, h100):
    """PP 2, B = 4: micro-batches of 2; a decode step is 2 decodes per stage over 16 layers, the stages in turn.
    The heavier (last) stage: 16 layers + final norm + lm_head = 16 × 218,112,000 + 4096 + 525,336,576 params;
    its KV is 16 layers × 2 × 8 × 128 × 2 = 65,536 B/token; hand-off (2 − 1) × 2 tokens × (hidden state + residual:
    2 × 4096 × 2 B) over the network (vLLM's IntermediateTensors carry both)."""
    r = size(llama8b, h100, SizeInputs(pp=2))
    stage_weights = 2 * (16 * 218_112_000 + 4096 + 128256 * 4096)
    assert r.weights.per_gpu - r.weights.buffers == stage_weights == 8_030_265_344
    p = performance(r, Workload(4, 1000, 200))
    memory = (stage_weights + 2 * 65_536 * 1100) / (H100_BW * EFF_BW)
    compute = 2 * (2 * L8_ACTIVE + L8_ATTN_PER_TOKEN * 1100) / 2 / (H100_BF16 * EFF_FL)
    hand_off = 1 * 2 * (2 * L8_HIDDEN * 2) / perf.NETWORK_BYTES_S
    _close(p.decode_memory_ms, memory * 1000)
    _close(p.comm_ms, hand_off * 1000)
    stage = step_of(r, 2, 0, 1100)[0]
    _close(stage, max(memory, compute) + OVERHEAD)
    # the closed loop's TPOT is the decode step (2 stages + the hand-off) plus the prefill share's longer steps
    assert p.tpot_ms >= (2 * stage + hand_off) * 1000


def test_pp_does_not_cut_a_single_requests_ttft(llama8b, h100):
    """A chunk passes the PP stages one after another: PP 2's TTFT for one prompt is not below TP 1's prefill."""
    one = size(llama8b, h100, SizeInputs())
    two = size(llama8b, h100, SizeInputs(pp=2))
    w = Workload(1, 4000, 100, rate=1e-6)
    assert performance(two, w).ttft_ms >= step_of(one, 1, 4000, 4050)[0] * 1000


# ----------------------------------------------------------------------------------- MoE touched experts
@pytest.fixture(scope="module")
def mixtral():
    return model("mistralai/Mixtral-8x7B-v0.1")


# Mixtral-8x7B: 32 layers × 8 experts × 3 × 14336 × 4096 routed weights; attention 41,943,040, router 8 × 4096
# and 2 norms per layer; embeddings 2 × 32000 × 4096; final norm 4096.
MX_EXPERT_BYTES = 2 * 32 * 8 * 3 * 14336 * 4096  # 90,194,313,216
MX_TOTAL_BYTES = 2 * (32 * (41_943_040 + 8 * 3 * 14336 * 4096 + 8 * 4096 + 2 * 4096) + 2 * 32000 * 4096 + 4096)


@pytest.mark.parametrize("tokens", [1, 2, 4, 16, 64])
def test_moe_step_reads_only_the_experts_the_batch_touches(mixtral, tokens):
    """Top-2 of 8: a layer's expert is untouched by one token with probability 1 − 2/8 = 0.75, by B tokens 0.75^B;
    the step reads the dense share of the weights plus (1 − 0.75^B) of the expert share."""
    assert MX_TOTAL_BYTES == 93_405_585_408 == 2 * 46_702_792_704
    r = size(mixtral, find_gpu("h200-sxm-141gb"), SizeInputs())  # TP 1: per GPU = the whole model
    assert r.weights.per_gpu - r.weights.buffers == MX_TOTAL_BYTES
    touched = 1 - (1 - 2 / 8) ** tokens
    dense = MX_TOTAL_BYTES - MX_EXPERT_BYTES
    _close(weights_read_per_step(r, tokens), dense + MX_EXPERT_BYTES * touched)


def test_moe_touched_fraction_examples(mixtral):
    r = size(mixtral, find_gpu("h200-sxm-141gb"), SizeInputs())
    share = MX_EXPERT_BYTES / MX_TOTAL_BYTES
    _close(weights_read_per_step(r, 1), MX_TOTAL_BYTES * (1 - share + share * 0.25))
    _close(weights_read_per_step(r, 4), MX_TOTAL_BYTES * (1 - share + share * 0.68359375))  # 1 − 0.75^4
    assert weights_read_per_step(r, 10_000) == pytest.approx(MX_TOTAL_BYTES, rel=1e-12)


def test_moe_decode_at_one_sequence_reads_a_quarter_of_the_experts_and_computes_the_active_params(mixtral):
    """Mixtral active params: per layer attention 41,943,040 + 2/8 of the experts 352,321,536 + router 32,768 +
    norms 8,192, × 32, + lm_head 32000 × 4096 + final norm 4096 = 12,748,853,248. KV 131,072 B/token."""
    gpu = find_gpu("h200-sxm-141gb")
    r = size(mixtral, gpu, SizeInputs())
    active = 32 * (41_943_040 + 2 * 3 * 14336 * 4096 + 8 * 4096 + 2 * 4096) + 32000 * 4096 + 4096
    assert r.params.active == active == 12_748_853_248
    p = performance(r, Workload(1, 1000, 200))
    read = (MX_TOTAL_BYTES - MX_EXPERT_BYTES) + MX_EXPERT_BYTES * 0.25
    memory = (read + 131_072 * 1100) / (gpu.mem_bw_bytes_s * EFF_BW)
    compute = (2 * active + 4 * 32 * 128 * 32 * 1100) / (gpu.bf16_flops * EFF_FL)
    _close(p.decode_memory_ms, memory * 1000)
    _close(p.compute_ms, compute * 1000)


# ---------------------------------------------------------------------------------- sliding windows
def test_sliding_window_layers_read_only_the_window_in_decode(h100):
    """gemma-2-9b: 42 layers alternating full / sliding (window 4096), 8 KV heads × head_dim 256 × 2 bytes × K,V
    = 8192 B per layer and token. Decoding a sequence at the average context 7000 + 200/2 = 7100 reads
        21 full layers × 8192 × 7100 + 21 sliding layers × 8192 × min(7100, 4096) = 1,926,070,272 B
    (kv_cache.py: "Sliding-window layers keep at most `sliding_window` tokens of each sequence in steady-state
    decode"; attention_flops_per_token caps them at the window too). The engine's allocation budget per request
    (window − 1 + max_num_batched_tokens, in blocks: 7120 tokens here) sizes memory; it is not what decode reads.
    One more sequence adds exactly its KV read to the (dense) memory term."""
    m = model("google/gemma-2-9b-it")
    r = size(m, h100, SizeInputs())
    one = performance(r, Workload(1, 7000, 200)).decode_memory_ms
    two = performance(r, Workload(2, 7000, 200)).decode_memory_ms
    read = 21 * 8192 * 7100 + 21 * 8192 * 4096
    assert read == 1_926_070_272
    _close((two - one) / 1000 * H100_BW * EFF_BW, read, rel=1e-6)


# ------------------------------------------------------------------------------------------ fp8 FLOPS
def test_fp8_weights_use_the_fp8_tensor_core_peak(llama8b, h100):
    """Dynamic FP8 on a 16-bit checkpoint: 1 byte per projection weight, embeddings / lm_head / norms 16-bit;
    compute at the fp8 peak 1979e12."""
    r = size(llama8b, h100, SizeInputs(weight_precision="fp8"))
    p = performance(r, Workload(1, 1000, 200))
    compute = (2 * L8_ACTIVE + L8_ATTN_PER_TOKEN * 1100) / (H100_FP8 * EFF_FL)
    _close(p.compute_ms, compute * 1000)
    # 7 projections × 32 layers at 1 byte + a 4-byte per-tensor scale; the rest 16-bit
    linear = 32 * (2 * 4096 * 4096 + 2 * 1024 * 4096 + 3 * 14336 * 4096)
    fp8_bytes = linear + 32 * 7 * 4 + 2 * (8_030_261_248 - linear)
    assert r.weights.per_gpu - r.weights.buffers == fp8_bytes
    _close(p.decode_memory_ms, (fp8_bytes + L8_KV_PER_TOKEN * 1100) / (H100_BW * EFF_BW) * 1000)


# ------------------------------------------------------------------------------------ monotonicity (#4)
WORKLOADS = [Workload(1, 1000, 200), Workload(8, 1000, 200), Workload(32, 4000, 500), Workload(128, 500, 100),
             Workload(512, 2000, 50)]
LAYOUTS = [("meta-llama/Llama-3.1-8B", 1, 1), ("meta-llama/Llama-3.1-8B", 2, 1), ("meta-llama/Llama-3.1-8B", 1, 2),
           ("mistralai/Mixtral-8x7B-v0.1", 2, 1), ("meta-llama/Llama-3.1-70B", 4, 1), ("meta-llama/Llama-3.1-70B", 8, 2)]


@pytest.mark.parametrize("model_id, tp, pp", LAYOUTS)
@pytest.mark.parametrize("faster", ["bandwidth", "flops", "interconnect", "all"])
def test_a_faster_gpu_never_predicts_slower_decode_or_prefill(h100, model_id, tp, pp, faster):
    changes = {
        "bandwidth": {"mem_bw_bytes_s": 2 * h100.mem_bw_bytes_s},
        "flops": {"bf16_flops": 2 * h100.bf16_flops, "fp8_flops": 2 * h100.fp8_flops},
        "interconnect": {"interconnect_bytes_s": 2 * h100.interconnect_bytes_s},
    }
    fast_gpu = h100._replace(**(changes[faster] if faster != "all" else {k: v for c in changes.values() for k, v in c.items()}))
    m = model(model_id)
    slow = size(m, h100, SizeInputs(tp=tp, pp=pp))
    fast = size(m, fast_gpu, SizeInputs(tp=tp, pp=pp))
    for w in WORKLOADS:
        s, f = performance(slow, w), performance(fast, w)
        assert f.tpot_ms <= s.tpot_ms * (1 + 1e-4), (w, f.tpot_ms, s.tpot_ms)
        assert f.output_tokens_per_s >= s.output_tokens_per_s * (1 - 1e-4), w
        # TTFT at the same arrival rate (open loop): in a closed loop a faster card also brings the next prompts
        # sooner, and their prefill contention may raise TTFT while throughput rises — a real effect, not checked
        rate = 0.5 * s.output_tokens_per_s / w.output_tokens
        so, fo = performance(slow, w._replace(rate=rate)), performance(fast, w._replace(rate=rate))
        assert fo.ttft_ms <= so.ttft_ms * (1 + 1e-4), (w, fo.ttft_ms, so.ttft_ms)
    if faster in ("bandwidth", "all"):  # strictly faster where the step is memory-bound
        assert performance(fast, WORKLOADS[0]).tpot_ms < performance(slow, WORKLOADS[0]).tpot_ms


def test_h200_never_decodes_slower_than_h100(llama8b, h100):
    """Same FLOPS, 4.8e12 vs 3.35e12 B/s."""
    h200 = find_gpu("h200-sxm-141gb")
    a, b = size(llama8b, h100, SizeInputs()), size(llama8b, h200, SizeInputs())
    for w in WORKLOADS:
        assert performance(b, w).tpot_ms <= performance(a, w).tpot_ms * (1 + 1e-4)


@pytest.mark.parametrize("model_id, tp, pp", LAYOUTS)
@pytest.mark.parametrize("prompt, output", [(1000, 200), (8000, 4), (200, 2000), (30000, 100)])
def test_a_larger_batch_never_lowers_tpot_or_ttft(h100, model_id, tp, pp, prompt, output):
    r = size(model(model_id), h100, SizeInputs(tp=tp, pp=pp, context_tokens=32768))
    batches = [1, 1.5, 2, 3, 4, 8, 16, 31, 32, 33, 64, 100, 128, 256, 512, 1000, 2048, 4096, 8000, 8191]
    # Checked while the replica is not saturated: once prompts arrive at the prefill ceiling (every step carrying a
    # full chunk), more decodes leave fewer prompt tokens in the shared token budget and a step can get shorter.
    previous = None
    for b in batches:
        p = performance(r, Workload(b, prompt, output))
        if previous is not None and not p.saturated and not previous.saturated:
            assert p.tpot_ms >= previous.tpot_ms, (b, p.tpot_ms, previous.tpot_ms)
            assert p.ttft_ms >= previous.ttft_ms, (b, p.ttft_ms, previous.ttft_ms)
        previous = p


@pytest.mark.parametrize("model_id, tp, pp", LAYOUTS)
def test_fp8_never_decodes_slower_than_bf16(h100, model_id, tp, pp):
    m = model(model_id)
    for gpu in (h100, find_gpu("a100-sxm-80gb")):  # with and without FP8 tensor cores
        bf16 = size(m, gpu, SizeInputs(tp=tp, pp=pp, weight_precision="bf16"))
        fp8 = size(m, gpu, SizeInputs(tp=tp, pp=pp, weight_precision="fp8"))
        for w in WORKLOADS:  # at the same arrival rate (a closed loop would also bring more prompts to the faster)
            rate = 0.5 * performance(bf16, w).output_tokens_per_s / w.output_tokens
            assert (performance(fp8, w._replace(rate=rate)).tpot_ms
                    <= performance(bf16, w._replace(rate=rate)).tpot_ms * (1 + 1e-4)), (gpu.id, w)


# ---------------------------------------------------------------- memory monotonicity (fits, issue #4)
SIXTEEN_BIT = ["meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.1-70B", "mistralai/Mixtral-8x7B-v0.1",
               "Qwen/Qwen3-30B-A3B", "google/gemma-2-9b-it", "Qwen/Qwen3-Next-80B-A3B-Thinking"]


@pytest.mark.parametrize("model_id", SIXTEEN_BIT)
def test_fp8_never_needs_more_memory_than_bf16(h100, model_id):
    """Weights per GPU and in total, and the whole per-GPU footprint; and so never less KV room."""
    m = model(model_id)
    assert m.quant is None  # a 16-bit checkpoint: bf16, fp8 and int4 are all loadable
    checked = 0
    for tp in (1, 2, 4):
        for pp in (1, 2):
            try:
                bf16 = size(m, h100, SizeInputs(tp=tp, pp=pp, weight_precision="bf16"))
            except InputError:  # a layout the engine rejects (e.g. TP not dividing the heads)
                continue
            fp8 = size(m, h100, SizeInputs(tp=tp, pp=pp, weight_precision="fp8"))
            int4 = size(m, h100, SizeInputs(tp=tp, pp=pp, weight_precision="int4"))
            assert fp8.weights.total <= bf16.weights.total, (tp, pp)
            assert fp8.weights.per_gpu <= bf16.weights.per_gpu, (tp, pp)
            assert fp8.total_bytes <= bf16.total_bytes, (tp, pp)
            assert fp8.kv_capacity_tokens >= bf16.kv_capacity_tokens, (tp, pp)
            assert int4.weights.per_gpu <= fp8.weights.per_gpu, (tp, pp)
            fp8_kv = size(m, h100, SizeInputs(tp=tp, pp=pp, weight_precision="fp8", kv_cache_dtype="fp8"))
            assert fp8_kv.kv_cache_bytes <= fp8.kv_cache_bytes, (tp, pp)
            checked += 1
    assert checked >= 3


@pytest.mark.parametrize("model_id", ["meta-llama/Llama-3.1-8B", "google/gemma-2-9b-it", "openai/gpt-oss-20b",
                                      "Qwen/Qwen3-Next-80B-A3B-Thinking", "deepseek-ai/DeepSeek-V3",
                                      "mistralai/Mixtral-8x7B-v0.1"])
def test_longer_context_never_lowers_kv_bytes(model_id):
    """KV bytes per sequence and for the whole concurrency never fall as the context grows (sliding windows and
    linear-attention state cap growth, never reverse it); the full-context sequences the pool admits never rise."""
    m = model(model_id)
    gpu = find_gpu("mi325x-256gb")
    top = m.max_position_embeddings
    contexts = sorted({c for c in (1, 15, 16, 17, 127, 128, 129, 512, 1000, 4095, 4096, 4097, 8191, 8192, 16384,
                                   32768, 65536, 131072) if c <= top})
    prev = None
    for ctx in contexts:
        tp = 8 if model_id.startswith("deepseek") else 1
        r = size(m, gpu, SizeInputs(tp=tp, context_tokens=ctx, concurrency=4))
        now = (r.kv.bytes_per_sequence(ctx), r.kv_cache_bytes, r.kv_capacity_tokens // ctx)
        if prev is not None:
            assert now[0] >= prev[0], (ctx, now, prev)
            assert now[1] >= prev[1], (ctx, now, prev)
            assert now[2] <= prev[2], (ctx, now, prev)
        prev = now


def test_concurrency_one_to_many_is_linear_in_kv_read(llama8b, h100):
    """The memory term grows by exactly one sequence's KV per extra decode (at the average context)."""
    r = size(llama8b, h100, SizeInputs())
    a = performance(r, Workload(10, 1000, 200)).decode_memory_ms
    b = performance(r, Workload(11, 1000, 200)).decode_memory_ms
    _close(b - a, L8_KV_PER_TOKEN * 1100 / (H100_BW * EFF_BW) * 1000, rel=1e-6)
    assert math.isfinite(a)


def test_pp_does_not_cut_one_requests_ttft():
    """§3: a prompt chunk passes the PP stages one after another, each computing it over its own layers: a
    request's TTFT on TP 4 × PP 2 is not below TP 4 alone (the stages add up; only the hand-off is extra)."""
    from wizard.sizing.fit import SizeInputs, size
    from wizard.sizing.performance import Workload, performance
    from wizard.sources.catalog import find_gpu
    from wizard.sources.resolve import resolve_model

    m, h100 = resolve_model("meta-llama/Llama-3.1-70B-Instruct"), find_gpu("h100-sxm-80gb")
    w = Workload(1, 4000, 200)
    one = performance(size(m, h100, SizeInputs(tp=4, pp=1, context_tokens=8192)), w)
    two = performance(size(m, h100, SizeInputs(tp=4, pp=2, context_tokens=8192)), w)
    assert two.ttft_ms >= 0.95 * one.ttft_ms, (two.ttft_ms, one.ttft_ms)


def test_cpu_step_model_by_hand():
    """§12 CPU serving: TPOT = (weights + sequences × KV) / (307.2 GB/s × 0.5); TTFT = 2 × params × prompt /
    (4.096 TFLOPS × 0.3) + one decode step (wizard/sizing/cpu_performance.py)."""
    from wizard.sizing.cpu_performance import REFERENCE_HOST, cpu_performance

    assert REFERENCE_HOST.memory_bw_bytes_s == 307.2e9 and REFERENCE_HOST.flops == 4.096e12
    p = cpu_performance(weight_bytes=1_000_000_000, params=5e8, kv_bytes_per_sequence=30_000_000, sequences=4,
                        prompt_tokens=1000, output_tokens=200)
    tpot = (1e9 + 4 * 3e7) / (307.2e9 * 0.5)  # 7.29 ms
    ttft = 2 * 5e8 * 1000 / (4.096e12 * 0.3) + tpot  # 813.8 ms + 7.3 ms
    assert p.tpot_ms == pytest.approx(tpot * 1000) and round(p.tpot_ms, 2) == 7.29
    assert p.ttft_ms == pytest.approx(ttft * 1000) and round(p.ttft_ms) == 821
    assert p.output_tokens_per_s == pytest.approx(4 * 200 / (ttft + 200 * tpot))


def test_cpu_serving_is_offered_online_only_when_the_cpu_meets_the_targets():
    from wizard.session.plan import build_plan
    from wizard.session.session import run_answers

    answers = {"model": "Qwen/Qwen3-0.6B", "workload": "online", "peak_concurrency": 4, "context_tokens": 4096,
               "prompt_tokens": 256, "output_tokens": 256, "ttft_p99_ms": 2000, "tpot_p99_ms": 50, "gpu": "l4-24gb",
               "ops_capability": "kubernetes"}
    def fit(plan):
        return next(step.value for step in plan.path if step.node == "fit")

    loose = build_plan(run_answers(answers))
    cpu = next(a for a in loose.alternatives if a.form == "cpu")
    assert fit(loose)["cpu_ok"] is True and cpu.why_not.startswith("possible") and "ms TPOT" in cpu.why_not
    assert any(w.id == "cpu_would_do" for w in loose.warnings)
    # a 150 ms TTFT target: a 256-token prompt alone takes 2 × 0.44 B × 256 / 1.23 TFLOPS ≈ 0.25 s on the host
    tight = build_plan(run_answers({**answers, "ttft_p99_ms": 150}))
    cpu = next(a for a in tight.alternatives if a.form == "cpu")
    assert fit(tight)["cpu_ok"] is False and "the load needs a GPU" in cpu.why_not
    assert not any(w.id == "cpu_would_do" for w in tight.warnings)
    # 20 requests a second of 1,000-token prompts: the host would read 20,000 prompt tokens a second, far beyond
    # 4.1 TFLOPS × 0.3 / (2 × 0.6 B) ≈ 1,000 — the prompts alone overload it, whatever the latency targets
    busy = build_plan(run_answers({**answers, "peak_rps": 20, "prompt_tokens": 1000, "output_tokens": 100}))
    assert fit(busy)["cpu_ok"] is False and fit(busy)["cpu_prefill_pct"] > 100


def test_prompts_beyond_the_prefill_ceiling_wait_instead_of_being_served(h100):
    """400 clients with 8,000-token prompts on one H100: the chunk budget reads prompts at chunk / step tokens per
    second; the throughput cannot exceed that ceiling × output / prompt, and the rest is waiting before the first
    token (an open loop past it is capped and flagged, not served)."""
    m = model("meta-llama/Llama-3.1-8B-Instruct")
    r = size(m, h100, SizeInputs(context_tokens=16384, concurrency=400))
    p = performance(r, Workload(400, 8000, 50))
    chunk = r.activation.tokens - 400
    full = step_of(r, 400, chunk, 8025)[0]
    ceiling = perf.MAX_UTILIZATION * chunk / full / 8000  # requests/s
    assert p.saturated
    assert p.output_tokens_per_s <= ceiling * 50 * (1 + 1e-6)
    _close(p.output_tokens_per_s, ceiling * 50, rel=1e-3)
    assert p.ttft_ms / 1000 == pytest.approx(400 / ceiling - 50 * p.tpot_ms / 1000, rel=1e-3)
    over = performance(size(m, h100, SizeInputs()), Workload(1, 1000, 200, rate=200))
    assert over.saturated and math.isfinite(over.ttft_ms)
