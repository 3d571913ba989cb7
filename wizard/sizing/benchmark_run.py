"""A benchmark run of N open-loop prompts as it unfolds: the ramp while they arrive, the plateau, the drain (§9 Q3).

`vllm bench serve --request-rate R --num-prompts N` sends N requests over S = (N − 1) / R seconds and reports the
mean over its requests of each one's TPOT, and its output over the whole run (which ends with its last request).
Neither is the steady state of an endless stream: a request sent into the plateau decodes beside many, one sent
late finishes nearly alone, and with varied outputs (ShareGPT) the run lasts until its longest request is done.

The run is followed as a fluid: every request decodes one token per engine step, a step takes the decode time of
the requests still running (plus, while prompts arrive, the prefill chunks they bring), and a request of varied
output is still running after k tokens with probability e^(−k / mean) (exponential lengths up to the sampler's cap;
coefficient of variation 1, an assumption, not fitted). From the steps' times: each request's TPOT (its decode
time over its output), their mean and 99th percentile over the run, and the expected end of the last request.
"""

import bisect
import itertools
import math
from collections import deque
from collections.abc import Callable
from functools import lru_cache
from typing import NamedTuple

COHORTS = 200  # arrivals are followed in at most this many groups (each starting at its members' mean time)
LENGTH_POINTS = 16  # output lengths a varied request is averaged over: quantiles (j + ½) / 16 of its distribution
ITERATIONS = 400  # about this many time steps cover the arrival window, and as many the drain
END_INTERVALS = 100  # the expected end of the last request is integrated over about this many intervals
MAX_WINDOW_STEPS = 20_000  # at most this many time steps while prompts arrive


class RunShape(NamedTuple):
    """What a benchmark run reports, from the fluid: seconds."""

    tpot: float  # mean over the requests of decode time / output tokens
    tpot_p99: float  # 99th percentile of the same
    end: float  # expected time the last request ends, from the first arrival
    peak: float  # most requests decoding at once


def run_in_flight(rate: float, prompts: int, request_s: float) -> tuple[float, float, float]:
    """A benchmark run of N = `prompts` arrivals at `rate` a second, one each 1 / rate of a span S = N / rate (the
    fluid's picture of N arrivals 0, 1 / rate, …, (N − 1) / rate), each in flight for T = `request_s` seconds, as
    one of its requests sees it: (mean requests in flight, peak, share of `rate` that
    arrives while it is in flight). The count climbs for min(S, T), holds at rate × min(S, T) and drains; weighted by
    the time each request spends at it, its mean is rate × ∫m(t)² dt / (S × T) = rate × s × (1 − s / (3 l)),
    s = min(S, T), l = max(S, T) — Little's law's rate × T when the run is long (S ≫ T), N when every request is in
    flight at once (T ≫ S); m(t) is the count over rate, the length of [max(0, t − T), min(t, S)] in seconds. A
    request arriving at a (uniform over S) overlaps the arrivals for min(T, S − a): on average T (1 − T / (2S)) when
    T ≤ S, S / 2 when T ≥ S — the share of its decode steps that others' prompts reach."""
    if prompts <= 1 or request_s <= 0:
        return 1.0, 1.0, 0.0
    if math.isinf(rate):  # every prompt at once: all in flight together, no arrivals after any of them
        return float(prompts), float(prompts), 0.0
    span = prompts / rate
    short, long = min(span, request_s), max(span, request_s)
    seen = 1 - request_s / (2 * span) if request_s <= span else span / (2 * request_s)
    return max(1.0, rate * short * (1 - short / (3 * long))), max(1.0, rate * short), seen


def fluid_run(prompts: int, rate: float, ttft: float, output: float, cap: float | None,
              decode_step: Callable[[float], float], prefill_extra: float) -> RunShape:
    """The run of `prompts` requests arriving at `rate` a second, each decoding from `ttft` s after its arrival:
    `output` tokens each (`cap` None), or exponential up to `cap` tokens with mean `output` (the exponential's own
    mean a little above it: the cap cuts its tail). `decode_step(B)` is the step time (s) with B requests decoding;
    while prompts arrive (until the last group of arrivals starts decoding) a step takes `prefill_extra` s more on
    average, for the prompt chunks it carries."""
    assert prompts >= 1 and rate > 0 and output > 0
    if cap is not None and cap < output + 1:  # no room for a tail: every request has its mean length
        cap = None
    mean = output
    if cap is not None:  # the exponential whose capped mean is `output`: m (1 − e^(−cap / m)) = output, by bisection
        lo, hi = output, output  # the capped mean rises with m, to cap / 2 at m = cap / 2 and towards cap after
        while hi * -math.expm1(-cap / hi) < output:
            hi *= 2
        for _ in range(200):
            mean = (lo + hi) / 2
            lo, hi = (mean, hi) if mean * -math.expm1(-cap / mean) < output else (lo, mean)
            if hi - lo < 1e-9 * hi:
                break
        mean = (lo + hi) / 2
    n = prompts
    # the first N − 1 in groups, the last alone (it sets when the run ends); a group's members arrive at i / rate
    # for i in its range and it starts decoding at their mean arrival + ttft
    groups = min(n, COHORTS)
    size = [((n - 1) * (c + 1) // (groups - 1)) - ((n - 1) * c // (groups - 1)) for c in range(groups - 1)] + [1]
    first = list(itertools.accumulate(size, initial=0))
    starts = [(first[c] + (size[c] - 1) / 2) / rate + ttft for c in range(groups)]
    varied = cap is not None
    # tokens a request may still be decoding after: all of them (fixed lengths), else where even the longest of the
    # N has ended but with probability < 1e-9 (N e^(−L/mean) < 1e-9) or the cap
    horizon = min(cap, mean * (math.log(n) + 21)) if cap is not None else output

    def alive(tokens: float) -> float:  # P(a request still decodes after `tokens`)
        if tokens < 0:
            return 1.0
        if not varied:
            return 1.0 if tokens < output else 0.0
        return math.exp(-tokens / mean) if tokens < horizon else 0.0

    window = starts[-1]  # prompts arrive (and bring prefill chunks) until the last one's first token
    dt_window = max(window / ITERATIONS, 1e-6)
    least_dt = window / MAX_WINDOW_STEPS  # however short the outputs: a bound on the work of a long run
    drain_steps = max(1.0, horizon / ITERATIONS)  # steps per time step once every prompt has arrived
    window_steps = max(1.0, min(horizon, mean) / 20)
    t, k = 0.0, 0.0  # seconds since the first arrival; steps since then (tokens of a request decoding throughout)
    begun: list[float] = []  # k at each group's (mean) start, in group order (they start in order)
    times, steps = [0.0], [0.0]
    peak = 0.0
    # The requests decoding: they start one every 1 / rate from ttft on (as a fluid: 1 + (t − ttft) × rate by t),
    # each time step's newcomers a slice (k at their start, how many); decoding = Σ over slices of count ×
    # alive(k − k0), kept as a running sum over the slices not yet past the horizon (they pass it in the order they
    # began): Σ count (fixed lengths), Σ count e^(k0 / mean) taken at e^(−k / mean) (exponential lengths), rebased at
    # `base` so that the exponentials stay within a double's range.
    slices: deque[tuple[float, float]] = deque()
    weight, base, entered = 0.0, 0.0, 0.0

    def scale(k0: float) -> float:
        return math.exp((k0 - base) / mean) if varied else 1.0

    while True:
        if varied and k - base > 100 * mean:
            weight, base = weight * math.exp((base - k) / mean), k
        target = 0.0 if t < ttft else min(float(n), 1 + (t - ttft) * rate)
        if target > entered:
            slices.append((k, target - entered))
            weight += (target - entered) * scale(k)
            entered = target
        while slices and k - slices[0][0] >= horizon:
            k0, count = slices.popleft()
            weight -= count * scale(k0)
        decoding = max(0.0, weight * (math.exp((base - k) / mean) if varied else 1.0))
        peak = max(peak, decoding)
        if len(begun) == groups and k - begun[-1] >= horizon:
            break  # every request has ended
        step = decode_step(max(1.0, decoding)) + (prefill_extra if t < window else 0.0)
        # a time step spans at most a 20th of a request's output while prompts arrive (so that requests which do
        # not overlap are not counted together), a 400th of the horizon after
        dt = max(least_dt, min(dt_window, step * window_steps)) if t < window else step * drain_steps
        while len(begun) < groups and starts[len(begun)] <= t + dt:  # a group's mean start within this step
            begun.append(k + max(0.0, starts[len(begun)] - t) / step)
        t, k = t + dt, k + dt / step
        times.append(t)
        steps.append(k)

    def time_at(kk: float) -> float:  # when the engine had run kk steps (linear between the recorded ones)
        j = min(max(bisect.bisect_left(steps, kk), 1), len(steps) - 1)
        k1, k2, t1, t2 = steps[j - 1], steps[j], times[j - 1], times[j]
        return t1 + (t2 - t1) * (kk - k1) / (k2 - k1) if k2 > k1 else t2

    # Each group's TPOT at output lengths spread over the distribution (the fixed length alone otherwise)
    if varied:
        assert cap is not None
        qs = [(j + 0.5) / LENGTH_POINTS for j in range(LENGTH_POINTS)]
        lengths = [min(cap, max(2.0, -mean * math.log(1 - q))) for q in qs]
    else:
        lengths = [max(1.0, output)]
    samples = []  # (tpot s, weight)
    for c, k0 in enumerate(begun):
        t0 = time_at(k0)
        for length in lengths:
            samples.append(((time_at(k0 + length) - t0) / length, size[c] / len(lengths)))
    tpot = sum(x * wt for x, wt in samples) / n
    samples.sort()
    acc, p99 = 0.0, samples[-1][0]
    for x, wt in samples:
        acc += wt
        if acc >= 0.99 * n:
            p99 = x
            break
    last = time_at(begun[-1])
    if not varied:  # every request as long: the last to start is the last to end
        return RunShape(tpot=tpot, tpot_p99=p99, end=time_at(begun[-1] + output), peak=peak)
    # E[last end] = t_last_start + ∫ P(some request still decodes at x) dx, by the midpoint rule on the recorded
    # steps after it (merged into at most END_INTERVALS intervals)
    after = [j for j in range(len(steps)) if times[j] > last]
    stride = max(1, len(after) // END_INTERVALS)
    end, lo, lo_k = last, last, begun[-1]
    for j in after[stride - 1::stride] + ([after[-1]] if len(after) % stride else []):
        x = 0.5 * (lo_k + steps[j])
        done = 1.0
        for c in range(groups - 1, -1, -1):  # newest first: once a group has surely ended, every older one has
            left = alive(x - begun[c])
            if left < 1e-18:
                break
            done *= (1 - left) ** size[c]
        end += (1 - done) * (times[j] - lo)
        lo, lo_k = times[j], steps[j]
    return RunShape(tpot=tpot, tpot_p99=p99, end=end, peak=peak)


def _phi(x: float) -> float:
    return math.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)


def _cdf(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2))


def max_mean(t: float, delta: float, var: float) -> float:
    """E[M_t]: the mean running maximum over t seconds of a Brownian motion with drift −delta and variance `var`
    a second, σ√t (φ(a) − a Φ(−a)) + σ² / (2δ) (Φ(a) − Φ(−a)) with a = δ√t / σ (the level of the reflected motion
    started at 0, which it equals in law)."""
    if t <= 0:
        return 0.0
    s, a = math.sqrt(var * t), delta * math.sqrt(t / var)
    return s * (_phi(a) - a * _cdf(-a)) + var / (2 * delta) * (_cdf(a) - _cdf(-a))


def max_tail(x: float, t: float, delta: float, var: float) -> float:
    """P(M_t > x) for the same motion: Φ((−x − δt) / (σ√t)) + e^(−2δx / σ²) Φ((−x + δt) / (σ√t))."""
    if t <= 0:
        return 0.0
    s = math.sqrt(var * t)
    return _cdf((-x - delta * t) / s) + math.exp(-2 * delta * x / var) * _cdf((-x + delta * t) / s)


@lru_cache(maxsize=4096)
def run_wait(u: float, service: float, span: float) -> tuple[float, float]:
    """(mean, 99th percentile) of the queueing wait of prompts arriving over `span` seconds of a run, each a share
    of the steady state's (M/D/1 at load `u`, service `service` s): a run starts with an empty queue, and near full
    load the queue takes longer than a short run to build up. In the heavy-traffic (diffusion) picture the work
    waiting is a Brownian motion with drift −(1 − u) and variance u × service a second, reflected at 0: from an
    empty queue its level at t is distributed as the running maximum M_t (max_mean, max_tail), tending to the steady
    state's mean σ² / (2δ) (M/D/1's mean wait exactly) and tail e^(−2δx / σ²). Averaged over arrivals uniform over
    the span; the shares scale the exact M/D/1 figures."""
    if u <= 0.01 or service <= 0:
        return 1.0, 1.0
    if span <= 0:
        return 0.0, 0.0
    delta, var = 1 - u, u * service  # drift (s of work per s) and variance (s² per s)
    steady = var / (2 * delta)
    # the trapezoid rule on times spaced evenly in log t from span × 1e-6 (the queue rises fastest early on)
    points = 48
    ts = [0.0] + [span * 10 ** (-6 + 6 * j / (points - 1)) for j in range(points)]
    weights = [(ts[min(j + 1, points)] - ts[max(j - 1, 0)]) / (2 * span) for j in range(points + 1)]
    mean = sum(wt * max_mean(t, delta, var) for t, wt in zip(ts, weights, strict=True))
    far = steady * math.log(100)  # the steady state's 99th percentile in this picture
    lo, hi = 0.0, far
    for _ in range(30):
        mid = (lo + hi) / 2
        if sum(wt * max_tail(mid, t, delta, var) for t, wt in zip(ts, weights, strict=True)) > 0.01:
            lo = mid
        else:
            hi = mid
    return min(1.0, mean / steady), min(1.0, hi / far)
