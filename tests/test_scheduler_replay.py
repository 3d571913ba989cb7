"""The scheduler replay (wizard/sizing/scheduler_replay.py) traced by hand on small runs, and the load model's use
of it for a closed loop of identical requests and a run past what the engine holds whole, against a public RTX 5090
sweep."""

from __future__ import annotations


import pytest

from wizard.sizing import performance as perf
from wizard.sizing.fit import SizeInputs, size
from wizard.sizing.performance import Workload, performance
from wizard.sizing.scheduler_replay import percentile, replay
from wizard.sources.catalog import find_entry, find_gpu, load_catalog_model


def constant(seconds: float):
    """A step model where every step takes `seconds`."""
    return lambda decodes, prefill: seconds


def test_percentile_interpolates_linearly_as_numpy_does():
    assert percentile([4.0, 1.0, 3.0, 2.0], 99) == pytest.approx(3.97)  # position 0.99 × 3 = 2.97
    assert percentile([5.0], 99) == 5.0
    assert percentile([1.0, 2.0], 50) == pytest.approx(1.5)


def test_one_request_alone_takes_its_prompt_in_chunks_then_decodes():
    """A 100-token prompt on a 64-token budget: a step of 64 prompt tokens (7.4 ms at 1 ms + 0.1 ms a prompt token),
    a step of the other 36 (4.6 ms) that gives the first token, then two decode steps of 1.5 ms (1 ms + 0.5 ms a
    decode). The client sees each token 5 ms (the front end) after its step: TTFT 12 + 5 ms, last token at 15 + 5
    ms, TPOT (20 − 17) / 2 ms."""
    run = replay(lambda d, p: 0.001 + 1e-4 * p + 5e-4 * d, blocks=100, budget=64, max_seqs=8, prompt=100, out=3,
                 n=1, clients=1, frontend_s=0.005)
    assert run.ttft == pytest.approx(0.017)
    assert run.tpot == pytest.approx(0.0015)
    assert run.duration == pytest.approx(0.020)
    assert run.in_flight == pytest.approx(0.015 / 0.020)  # running from the first step to the last
    assert run.prompt_steps == pytest.approx(2 / 4) and run.prompt_tokens_per_step == pytest.approx(50)
    assert run.preemptions == 0 and run.waited == 0


def test_a_client_beyond_max_num_seqs_waits_for_a_slot():
    """max_num_seqs 1, two clients of 4 + 2 tokens, 10 ms steps: A is prefilled (first token at 10 ms) and decodes
    (done at 20 ms); B waits in the engine's queue until A is done, then the same: first token at 30 ms."""
    run = replay(constant(0.01), blocks=100, budget=100, max_seqs=1, prompt=4, out=2, n=2, clients=2)
    assert run.ttft == pytest.approx((0.01 + 0.03) / 2)
    assert run.ttft_p99 == pytest.approx(0.01 + 0.99 * 0.02)
    assert run.tpot == pytest.approx(0.01)
    assert run.duration == pytest.approx(0.04)
    assert run.waited == 1 and run.preemptions == 0


def test_every_request_that_waited_for_a_slot_is_counted():
    """max_num_seqs 2, four clients: the last two wait for the first two to end, both of them, not only the one at
    the head of the queue."""
    run = replay(constant(0.01), blocks=100, budget=100, max_seqs=2, prompt=4, out=2, n=4, clients=4)
    assert run.waited == 2 and run.preemptions == 0
    assert run.ttft == pytest.approx((0.01 + 0.01 + 0.03 + 0.03) / 4)


def test_an_open_loop_request_is_seen_at_the_first_step_after_it_is_sent():
    """Requests sent 1 / 8 s apart, 10 ms steps: A decodes 100 tokens from 10 ms on; B, sent at 125 ms (mid-step),
    is scheduled at the step starting at 130 ms and has its first token at 140 ms: TTFT 15 ms. The decode steps
    before it are taken in strides, which must stop where B arrives."""
    run = replay(constant(0.01), blocks=1000, budget=100, max_seqs=8, prompt=4, out=100, n=2, rate=8.0)
    assert run.ttft == pytest.approx((0.01 + 0.015) / 2)
    # A: first token at step 1, last at step 100; B: first at step 14, last at step 113
    assert run.duration == pytest.approx(1.13)
    assert run.tpot == pytest.approx(0.01)


def test_identical_requests_come_back_as_the_first_wave_left_them():
    """Two clients, four requests of an 8-token prompt (the whole 8-token budget) and 3 output tokens, 10 ms steps.
    Step 1: A's prompt (first token at 10 ms). Step 2: A's decode and 7 of B's prompt. Step 3: A's last token (30
    ms: its client sends A2) and B's last prompt token (B's first, 30 ms). Step 4: B's decode, 7 of A2's prompt.
    Step 5: B ends (50 ms: B2 sent), A2's first token. Steps 6-7: A2's decode and B2's prompt, A2 ends and B2's
    first token at 70 ms; steps 8-9: B2's decodes, the end at 90 ms. TTFTs 10, 30, 20, 20 ms: the second wave is
    sent 20 ms apart, as the first wave's tokens came, not at once."""
    run = replay(constant(0.01), blocks=100, budget=8, max_seqs=8, prompt=8, out=3, n=4, clients=2)
    assert run.ttft == pytest.approx(0.02)
    assert run.ttft_p99 == pytest.approx(0.02 + 0.97 * 0.01)  # position 0.99 × 3 in 10, 20, 20, 30
    assert run.tpot == pytest.approx(0.01)
    assert run.duration == pytest.approx(0.09)
    assert run.waited == 0 and run.preemptions == 0  # B waited for the token budget only


def test_clients_joining_at_a_rate_send_each_request_when_it_has_arrived_and_a_client_is_free():
    """One client, three requests of 4 + 2 tokens (a step of prompt and first token, a step of decode), 10 ms steps.
    Arrivals 15 ms apart: request 1 arrives at 15 ms but waits in the client for request 0 to end (20 ms), request 2
    arrives at 30 and waits for 40: each runs alone, TTFT 10 ms (the client's wait is not in it), the run ends at 60
    ms — where the open loop at that rate sends request 1 at 15 ms into the engine (TTFT 15 ms, end at 50 ms).
    Arrivals 25 ms apart: the client is free first, each is sent as it arrives (25, 50 ms): the end at 70 ms, where
    the closed loop of one client ends at 60."""
    step = constant(0.01)
    capped = replay(step, blocks=100, budget=100, max_seqs=8, prompt=4, out=2, n=3, clients=1, rate=1 / 0.015)
    assert (capped.ttft, capped.duration) == (pytest.approx(0.01), pytest.approx(0.06))
    opened = replay(step, blocks=100, budget=100, max_seqs=8, prompt=4, out=2, n=3, rate=1 / 0.015)
    assert (opened.ttft, opened.duration) == (pytest.approx((0.01 + 0.015 + 0.01) / 3), pytest.approx(0.05))
    later = replay(step, blocks=100, budget=100, max_seqs=8, prompt=4, out=2, n=3, clients=1, rate=1 / 0.025)
    assert (later.ttft, later.duration) == (pytest.approx(0.01), pytest.approx(0.07))
    closed = replay(step, blocks=100, budget=100, max_seqs=8, prompt=4, out=2, n=3, clients=1)
    assert closed.duration == pytest.approx(0.06)


def test_drawn_arrivals_replace_the_rates_even_spacing():
    """Arrival times given: the even spacing they equal gives the same run; three at the same instant to three
    clients are the closed loop's opening burst. poisson_runs draws them as vllm bench serve does: exponential gaps
    (the first request's too), scaled so the last arrives at n / rate; from fixed seeds, a different sequence each,
    the same every call."""
    from wizard.sizing.performance import poisson_runs

    step = constant(0.01)
    even = replay(step, blocks=100, budget=8, max_seqs=8, prompt=8, out=3, n=4, clients=2, rate=50.0)
    given = replay(step, blocks=100, budget=8, max_seqs=8, prompt=8, out=3, n=4, clients=2, rate=50.0,
                   arrivals=[k / 50.0 for k in range(4)])
    assert given == even
    burst = replay(step, blocks=100, budget=8, max_seqs=8, prompt=8, out=3, n=3, clients=3, rate=1.0,
                   arrivals=[0.0, 0.0, 0.0])
    assert burst == replay(step, blocks=100, budget=8, max_seqs=8, prompt=8, out=3, n=3, clients=3)
    runs = poisson_runs(4.0, 2000)
    assert runs == poisson_runs(4.0, 2000) and len({tuple(t) for t in runs}) == len(runs) == 16
    assert all(t[-1] == pytest.approx(500.0) and 0 < t[0] and t == sorted(t) for t in runs)
    gaps = [b - a for t in runs for a, b in zip(t, t[1:])]
    assert abs(sum(gaps) / len(gaps) - 0.25) < 0.01 * 0.25
    # exponential: the gaps' standard deviation is their mean (within 5 % over 16 × 1,999 of them)
    mean = sum(gaps) / len(gaps)
    assert abs((sum((g - mean) ** 2 for g in gaps) / len(gaps)) ** 0.5 / mean - 1) < 0.05


def test_a_preempted_request_recomputes_only_what_the_pool_no_longer_caches():
    """4-token blocks, a pool of 4, two requests of 4 + 8 tokens (3 blocks each at the end), steps of 10 ms + 1 ms a
    prompt token. Step 1 prefills both (18 ms); steps 2–5 decode both (their 5th–8th tokens fill 2 blocks each).
    Step 6: A needs a third block, none is free: B, the last running, is preempted (its 2 blocks go to the free
    queue, still cached) and A takes one of them — the least recently freed, B's tail. A ends at step 8. Step 9: B
    comes back with its first block still cached: it recomputes its other 5 tokens (15 ms), not all 9, then
    decodes twice."""
    run = replay(lambda d, p: 0.01 + 0.001 * p, blocks=4, budget=100, max_seqs=8, prompt=4, out=8, n=2, clients=2,
                 block_tokens=4)
    assert run.preemptions == 1
    assert run.ttft == pytest.approx(0.018)
    a_end, b_end = 0.018 + 7 * 0.01, 0.018 + 7 * 0.01 + 0.015 + 2 * 0.01
    assert run.duration == pytest.approx(b_end)
    assert run.tpot == pytest.approx(((a_end - 0.018) + (b_end - 0.018)) / 7 / 2)
    # without its cached block B would recompute 9 tokens: 4 ms longer
    assert b_end < 0.018 + 7 * 0.01 + 0.019 + 2 * 0.01


def test_a_release_that_reserves_the_whole_prompt_admits_later_and_preempts_less():
    """4-token blocks, a pool of 3 (one whole request of 8 + 4 tokens), a 5-token budget, two clients. Step 1: A's
    first chunk (5 tokens, 2 blocks). Step 2: A's last 3 tokens; B's first chunk (2 tokens) fits the one free block.
    Before 0.19 B is admitted on that chunk; at step 3 A needs a block, and B is preempted. From 0.19 B is admitted
    only when its whole 8-token prompt fits, after A ends. Both ways A ends at step 5 and B has its first token at
    step 7 (10 ms steps): the preemption is what differs."""
    kwargs = dict(blocks=3, budget=5, max_seqs=8, prompt=8, out=4, n=2, clients=2, block_tokens=4)
    chunk = replay(constant(0.01), **kwargs)
    whole = replay(constant(0.01), **kwargs, reserve_whole=True)
    assert chunk.preemptions == 1 and whole.preemptions == 0
    assert whole.waited == 1  # B waited for blocks for its whole prompt, without a preemption
    for run in (chunk, whole):
        assert run.ttft == pytest.approx((0.02 + 0.07) / 2)
        assert run.duration == pytest.approx(0.10)


def test_a_request_preempted_mid_prompt_recomputes_its_unfilled_block():
    """4-token blocks, a pool of 3, a 3-token budget, two requests of 5 + 3 tokens, steps of 10 ms + 1 ms a prompt
    token. Step 1: A's first 3 prompt tokens (13 ms). Step 2: A's last 2 (first token at 26 ms) and B's first one.
    Step 3: A decodes, B takes 2 more (3 computed, 1 block). Step 4: B needs a second block, none is free: B, the last
    running, preempts itself — its one block holds 3 computed tokens, not full, so nothing of it is cached — and A
    ends (48 ms). Step 5 and 6: B's whole prompt again, 3 + 2 tokens (first token at 73 ms); two decode steps end it
    at 93 ms. Had the unfilled block counted as cached, B would have recomputed 1 token and had its first at 59 ms."""
    run = replay(lambda d, p: 0.01 + 0.001 * p, blocks=3, budget=3, max_seqs=8, prompt=5, out=3, n=2, clients=2,
                 block_tokens=4)
    assert run.preemptions == 1
    assert run.ttft == pytest.approx((0.026 + 0.073) / 2)
    assert run.duration == pytest.approx(0.093)
    assert run.waited == 1  # B waited for blocks before its first token


def test_an_earlier_runs_cached_prompt_counts_in_whole_blocks():
    """A 50-token prompt of which 40 are in the prefix cache from an earlier run: two whole 16-token blocks (32
    tokens) are hits, the other 18 are prefilled — one step of 10 ms + 1 ms a prompt token. A 16-token prompt
    fully cached is prefilled whole: its last token must be computed, and the block holding it is not full."""
    step = lambda d, p: 0.01 + 0.001 * p  # noqa: E731
    run = replay(step, blocks=100, budget=100, max_seqs=8, prompt=50, out=2, n=1, clients=1, cached_prompt=40)
    assert run.ttft == pytest.approx(0.028)
    whole = replay(step, blocks=100, budget=100, max_seqs=8, prompt=16, out=2, n=1, clients=1, cached_prompt=16)
    assert whole.ttft == pytest.approx(0.026)


def test_a_request_whose_blocks_were_all_evicted_recomputes_its_earlier_cached_prompt_too():
    """2-token blocks, a pool of 4 (one request of 4 + 4 tokens), a 3-token budget, 10 ms + 1 ms a prompt token; 2
    of each prompt's tokens are cached from an earlier run. Step 1 (13 ms): A from its cached 2 (2 tokens, its first
    token), B from its cached 2 (1 token: 3 of 4). Step 2: A needs a third block: B is preempted, its one full block
    stays cached, and A takes its partial one. Step 3: B's hit (1 block) and chunk (1 block) do not fit the 1 free
    block; A's next two decodes take that free block too (B's cached one) and A ends at 43 ms. Step 4: B has nothing
    cached left — the earlier run's blocks were its own, now evicted — so it prefills its whole prompt: 3 tokens
    (13 ms), then 1 (11 ms): first token at 67 ms, last at 97 ms. Had it taken the earlier run's hit again, it would
    have prefilled 2 tokens and had its first token at 55 ms."""
    run = replay(lambda d, p: 0.01 + 0.001 * p, blocks=4, budget=3, max_seqs=2, prompt=4, out=4, n=2, clients=2,
                 block_tokens=2, cached_prompt=3)
    assert run.preemptions == 1
    assert run.ttft == pytest.approx((0.013 + 0.067) / 2)
    assert run.duration == pytest.approx(0.097)


def test_a_burst_that_waits_only_for_the_token_budget_did_not_wait_for_room():
    """Four 100-token prompts on a 64-token budget take turns for it, but there are slots and blocks for all: no
    request waited for room (what marks a run that overran the engine)."""
    run = replay(constant(0.01), blocks=1000, budget=64, max_seqs=8, prompt=100, out=5, n=8, clients=4)
    assert run.waited == 0 and run.preemptions == 0
    assert run.ttft > 0.02  # the later prompts of each burst did wait for their chunks


def test_decode_strides_change_nothing(monkeypatch):
    """The replay takes stretches of decode steps in which nothing can change in one stride: on random small runs
    (closed and open loops, short pools, preemptions) it gives what stepping one at a time gives."""
    import random

    import wizard.sizing.scheduler_replay as module

    rng = random.Random(20261206)
    cases = []
    for _ in range(300):
        prompt, out, bt = rng.randint(1, 40), rng.randint(1, 40), rng.choice([1, 4, 16])
        blocks = -(-(prompt + out) // bt) + rng.randint(0, 12)
        loop = {"clients": rng.randint(1, 6)} if rng.random() < 0.5 else {"rate": rng.uniform(0.5, 300.0)}
        cases.append(dict(blocks=blocks, budget=rng.randint(1, 64), max_seqs=rng.randint(1, 6), prompt=prompt,
                          out=out, n=rng.randint(1, 10), block_tokens=bt, frontend_s=0.003,
                          reserve_whole=rng.random() < 0.5, **loop))

    def step(d, p):
        return 0.0071 + 0.00013 * d + 0.00029 * p

    strided = [replay(step, **case) for case in cases]
    monkeypatch.setattr(module, "_stride", lambda *args: 1)
    stepped = [replay(step, **case) for case in cases]
    assert sum(run.preemptions > 0 for run in stepped) > 10  # the cases do exercise preemption
    for a, b in zip(strided, stepped):
        assert a.preemptions == b.preemptions and a.waited == b.waited
        for x, y in zip(a, b):
            assert x == pytest.approx(y, rel=1e-9, abs=1e-12)


def test_a_pool_short_of_one_request_is_refused():
    with pytest.raises(ValueError):
        replay(constant(0.01), blocks=2, budget=100, max_seqs=8, prompt=8, out=4, n=1, clients=1, block_tokens=4)


# The load model on a public run: s43 of tests/data/throughput-bench.yaml (cloudrift-ai/deplodock, one RTX 5090,
# QuantTrio/Qwen3-Coder-30B-A3B-Instruct-AWQ sized as Qwen3-30B-A3B at int4, vLLM 0.16.0, --max-model-len 114688,
# --max-num-seqs = the clients, 80 prompts of 4,000 + 4,000 tokens). Measured mean / P99 TTFT (ms):
RTX5090_RUNS = {32: (19298.5, 70497.6), 40: (38886.7, 76350.5)}


@pytest.fixture(scope="module")
def rtx5090_qwen3_moe():
    model = load_catalog_model(find_entry("Qwen/Qwen3-30B-A3B"))
    gpu = find_gpu("rtx5090-32gb")

    def sized(clients: int):
        return size(model, gpu, SizeInputs(context_tokens=8000, concurrency=1, max_num_seqs=clients,
                                           weight_precision="int4", vllm_version="0.16.0"))
    return sized


@pytest.mark.parametrize("clients", sorted(RTX5090_RUNS))
def test_a_run_past_what_the_pool_holds_whole_is_replayed(rtx5090_qwen3_moe, clients):
    """The pool holds about 17 requests of 8,000 tokens; 32 or 40 clients overrun it. vLLM admits them on their
    prompts' room and preempts as the outputs grow: a closed form that makes the clients beyond the 17 wait whole
    request times put the mean TTFT at 2.4–6× the measured; the replay is within 25 % of it."""
    r = rtx5090_qwen3_moe(clients)
    assert perf._held_whole(r, Workload(clients, 4000, 4000)) < clients
    p = performance(r, Workload(float(clients), 4000, 4000, prompts=80, synchronized=True))
    mean, p99 = RTX5090_RUNS[clients]
    assert abs(p.ttft_ms / mean - 1) < 0.25
    assert abs(p.ttft_p99_ms / p99 - 1) < 0.3
    assert p.saturated


def test_identical_requests_the_engine_holds_whole_are_replayed_too(rtx5090_qwen3_moe, monkeypatch):
    """16 clients of 8,000 tokens fit the pool whole (s43's 16-client run: mean TTFT 956.15 ms, P99 3,287.83 ms).
    Each 4,000-token prompt takes two 2,048-token steps, so the first wave's requests get their first tokens two
    steps apart and finish two steps apart: later waves come back one prompt at a time, not as a burst. The closed
    form that sends every wave as a burst puts the mean TTFT at more than twice the measured; the replay is within
    25 % of it. Its P99 is the first wave's last prompts, several times the mean."""
    r = rtx5090_qwen3_moe(16)
    w = Workload(16.0, 4000, 4000, prompts=80, synchronized=True)
    assert perf._held_whole(r, w) >= 16
    perf.performance.cache_clear()
    p = performance(r, w)
    with monkeypatch.context() as m:
        m.setattr(perf, "_replayable", lambda r, w: False)
        perf.performance.cache_clear()
        bursts = performance(r, w)
    perf.performance.cache_clear()
    assert abs(p.ttft_ms / 956.15 - 1) < 0.25
    assert bursts.ttft_ms > 2 * 956.15
    assert not p.saturated  # nothing waited for room: the 16 slots hold every client
    assert p.ttft_p99_ms > 4 * p.ttft_ms


@pytest.mark.parametrize("change", ["varied", "v0", "pp"])
def test_what_the_replay_does_not_follow_keeps_the_closed_form(change, monkeypatch):
    """Varied outputs, V0's scheduler and pipeline stages are not replayed (the closed forms answer)."""
    model = load_catalog_model(find_entry("meta-llama/Llama-3.1-8B-Instruct"))
    gpu = find_gpu("h100-sxm-80gb")
    inputs = SizeInputs(concurrency=1, max_num_seqs=16, pp=2 if change == "pp" else 1,
                        vllm_version="0.6.6" if change == "v0" else SizeInputs().vllm_version)
    r = size(model, gpu, inputs)
    w = Workload(16, 1000, 200, prompts=100, clients=64,
                 varied_output_max=4000 if change == "varied" else None)
    assert not perf._replayable(r, w)
    monkeypatch.setattr(perf, "replay", lambda *a, **k: pytest.fail("replayed"))
    perf.performance.cache_clear()
    performance(r, w)
    perf.performance.cache_clear()
