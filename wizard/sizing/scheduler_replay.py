"""A benchmark run of N identical requests replayed step by step through vLLM's V1 scheduler (§5, §9 Q3).

In a closed loop of identical requests, the requests that got their first token in the same step finish in the same
step, so a wave returns as the scheduler's steps left the one before: a burst where its prompts shared a step,
a prompt's chunks apart where each took steps of its own. In a run that overruns the engine — more requests in
flight than its KV pool holds whole, or than max_num_seqs — each request's TTFT and TPOT are also decided by when it
is admitted, when it is preempted and how much it recomputes. No steady-state closed form follows either. The
replay does what the scheduler does, one step at a time
(vllm/v1/core/sched/scheduler.py Scheduler.schedule, the V1 engine):
- a step has a token budget (max_num_batched_tokens); the running requests go first, in order: a decode takes one
  token, a prompt in progress its remaining tokens up to what is left of the budget;
- a running request that needs a KV block the pool has not got preempts the last running request (first come, first
  served: `running.pop()`), which frees its blocks and goes back to the front of the waiting queue — itself, when
  it is the last;
- only in a step without a preemption are waiting requests admitted, in order, while the budget, max_num_seqs and
  the free blocks allow — blocks for the chunk it is given now, and from vLLM 0.19 for its whole sequence so far
  (`reserve_whole`); the first that does not fit stops it;
- prefix caching (on by default in V1): a freed block keeps its tokens until it is handed out again; the free queue
  hands out the least recently freed block first, and a request's blocks are freed tail first, so a preempted
  request admitted again finds the head of its tokens still cached and recomputes only the rest (at least its last
  token; only full blocks are cached, so a block its computed tokens had not filled is recomputed too).
A step lasts `step_s(decodes, prompt tokens)` seconds (the step model). The client sees a token `frontend_s` after
its step ends (the API server); a closed loop's client sends its next request as it sees the last token. A request's
TTFT runs from its sending to its first token; its TPOT is (latency − TTFT) / (output − 1) and percentiles are
interpolated linearly, as vllm bench serve reports them (vllm/benchmarks/serve.py, numpy.percentile). An open loop's
requests arrive at even spacing 1 / rate, the expectation of the benchmark's Poisson arrivals; with clients as well
(a rate beside --max-concurrency) each is sent when it has arrived and a client is free, the k-th freed client taking
the k-th request past the first `clients` (the benchmark's semaphore, first come first served).
"""

import math
from collections import deque
from collections.abc import Callable, Sequence
from typing import NamedTuple

from wizard.sizing.bisection import largest


class Replay(NamedTuple):
    """What a replayed run measures (seconds; means over its requests unless named P99)."""

    ttft: float
    ttft_p99: float
    tpot: float
    tpot_p99: float
    duration: float  # from the run's start (time 0: its first sending, or before its first drawn arrival, as vllm
    #                  bench serve times it) to the last request's last token at the client
    in_flight: float  # requests in the engine (running), averaged over the run's time
    peak: int  # the most requests the engine ran at once
    preemptions: int  # times a running request was preempted
    waited: int  # requests that waited for room (a free slot or free blocks) before their first token
    prompt_steps: float  # share of the steps that carried prompt tokens
    prompt_tokens_per_step: float  # prompt tokens such a step carried, on average


class _Request:
    __slots__ = ("sent", "computed", "generated", "first", "done", "blocks", "cached", "full", "started", "stops",
                 "held")

    def __init__(self, sent: float) -> None:
        self.sent = sent  # s: when its client sent it
        self.computed = 0  # tokens whose KV it holds computed
        self.generated = 0
        self.first: float | None = None  # s: its first token at the client
        self.done = 0.0  # s: its last token at the client
        self.blocks = 0  # KV blocks it holds
        self.cached: list | None = None  # preempted: its free-queue entry [owner, blocks still cached]
        self.full = 0  # preempted: the blocks its computed tokens had filled (only those are cached)
        self.started = False  # admitted once (an earlier run's cached prompt is then among its own blocks)
        self.stops = 0  # the run's stops for room when it joined the waiting queue
        self.held = False  # it waited for room (a slot or blocks) before its first token


class _Step:
    """What one step schedules: the requests and their tokens, its decodes and prompt tokens, the budget left."""

    __slots__ = ("scheduled", "decodes", "prefill", "left", "prompt")

    def __init__(self, budget: int, prompt: int) -> None:
        self.scheduled: list[tuple[_Request, int]] = []
        self.decodes = 0  # one token of a request past its prompt
        self.prefill = 0  # every other token: prompts, and what a preempted request recomputes
        self.left = budget
        self.prompt = prompt

    def book(self, req: _Request, new: int) -> None:
        """Schedule `new` tokens of `req` in this step."""
        self.scheduled.append((req, new))
        if new == 1 and req.computed >= self.prompt:
            self.decodes += 1
        else:
            self.prefill += new
        self.left -= new


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0–100) by linear interpolation between the sorted values (numpy's default)."""
    xs = sorted(values)
    pos = q / 100 * (len(xs) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


class _Pool:
    """The KV blocks: a count of free ones and vLLM's free queue, least recently freed first, whose entries
    [owner, count] keep a preempted request's blocks cached for it until they are handed out."""

    def __init__(self, blocks: int) -> None:
        self.free = blocks
        self.queue: deque[list] = deque([[None, blocks]])

    def take(self, count: int) -> None:
        """Hand out `count` free blocks from the head of the queue, evicting what they cached."""
        assert 0 <= count <= self.free
        self.free -= count
        while count:
            entry = self.queue[0]
            used = min(count, entry[1])
            entry[1] -= used
            count -= used
            if entry[1] == 0:
                self.queue.popleft()
                if entry[0] is not None:
                    entry[0].cached = None

    def release(self, req: _Request, keep: bool) -> None:
        """Free a request's blocks to the tail of the queue; `keep`: they stay cached for it (preemption)."""
        if req.blocks:
            entry = [req if keep else None, req.blocks]
            self.queue.append(entry)
            req.cached = entry if keep else None
            self.free += req.blocks
        req.blocks = 0

    def reclaim(self, req: _Request, count: int) -> None:
        """Give a readmitted request back `count` of its cached blocks (a prefix hit); the rest stay free, plain."""
        entry = req.cached
        assert entry is not None and count <= entry[1]
        entry[0], req.cached = None, None
        entry[1] -= count
        self.free -= count
        if entry[1] == 0:
            self.queue.remove(entry)
        req.blocks = count


def replay(step_s: Callable[[int, int], float], blocks: int, budget: int, max_seqs: int, prompt: int, out: int,
           n: int, *, clients: int | None = None, rate: float | None = None, frontend_s: float = 0.0,
           cached_prompt: int = 0, block_tokens: int = 16, reserve_whole: bool = False,
           arrivals: Sequence[float] | None = None) -> Replay:
    """Replay a run of `n` requests of `prompt` + `out` tokens — a closed loop of `clients`, an open loop at `rate`
    requests/s, or both (clients joining at `rate`: request k arrives at k / rate and is sent when one of the
    `clients` is free, vllm bench serve's --request-rate beside --max-concurrency) — on a pool of `blocks` KV blocks
    of `block_tokens` tokens; `arrivals` (s, ascending, one a request) replaces the even spacing of `rate` (a drawn
    Poisson run). `cached_prompt` tokens of each prompt are in the prefix cache from an earlier run (whole blocks;
    the pool holds them too). `reserve_whole`: a waiting request is admitted only when the free blocks hold its
    whole sequence so far (0.19 on), not only its chunk."""
    assert n >= 1 and out >= 1 and prompt >= 1 and blocks >= 1 and budget >= 1 and max_seqs >= 1
    assert (clients is not None or rate is not None) and (rate is None or rate > 0)
    assert arrivals is None or (len(arrivals) >= n and all(a <= b for a, b in zip(arrivals, arrivals[1:])))
    if blocks < -(-(prompt + out) // block_tokens):
        raise ValueError(f"a pool of {blocks} blocks cannot hold one request of {prompt + out} tokens")

    def need(tokens: int) -> int:
        return -(-tokens // block_tokens)

    pool = _Pool(blocks)
    earlier = min(cached_prompt, prompt - 1) // block_tokens * block_tokens  # an earlier run's prefix hit
    pending: deque[_Request] = deque()  # sent, not yet seen by the scheduler (in order of sending)

    def arrives(k: int) -> float:  # s: when request k reaches the client (all at once without a rate)
        if arrivals is not None:
            return arrivals[k]
        return k / rate if rate is not None else 0.0

    pending.extend(_Request(arrives(k)) for k in range(min(clients or n, n)))
    sent = len(pending)
    waiting: deque[_Request] = deque()
    running: list[_Request] = []
    finished: list[_Request] = []
    now = busy = 0.0
    steps = prompt_steps = prompt_tokens = preemptions = 0
    room_stops = 0  # steps whose admission stopped for room (a slot, blocks, a preemption), not the token budget
    peak = 0
    while len(finished) < n:
        if not running and not waiting and pending[0].sent > now:
            now = pending[0].sent  # idle until the next request
        while pending and pending[0].sent <= now:
            req = pending.popleft()
            req.stops = room_stops
            waiting.append(req)
        step = _Step(budget, prompt)
        scheduled = step.scheduled
        preempted = False
        i = 0
        while i < len(running) and step.left > 0:  # the running requests first, in order
            req = running[i]
            new = prompt + req.generated - req.computed
            if new > step.left:
                new = step.left
            want = (req.computed + new + block_tokens - 1) // block_tokens - req.blocks
            itself = False
            while want > pool.free and not itself:  # preempt the last running request (it may be this one)
                victim = running.pop()
                preemptions += 1
                preempted = True
                victim.full = victim.computed // block_tokens
                pool.release(victim, keep=True)
                victim.computed = 0
                waiting.appendleft(victim)
                itself = victim is req
            if itself:
                break
            if want:
                pool.take(want)
                req.blocks += want
            step.book(req, new)
            i += 1
        if not preempted:  # then the waiting ones, in order, while they fit
            while waiting and step.left > 0 and len(running) < max_seqs:
                req = waiting[0]
                tokens = prompt + req.generated
                if req.cached is not None:  # its own full blocks still cached: the head of its tokens, less the last
                    have = min(req.cached[1], req.full, (tokens - 1) // block_tokens)
                    hit = have * block_tokens
                else:  # nothing of its own cached: an earlier run's prompt, the first time only
                    hit, have = (0 if req.started else earlier), 0
                new = min(tokens - hit, step.left)
                want = need(hit + new) - have
                # the check counts the hit blocks it takes back from the free queue as blocks to allocate
                # (get_num_blocks_to_allocate: a computed block with ref_cnt 0 is evictable)
                if want + have > pool.free or (reserve_whole and need(tokens) > pool.free):
                    break
                waiting.popleft()
                if req.cached is not None:
                    pool.reclaim(req, have)
                pool.take(want)
                req.blocks += want
                req.computed = hit
                req.started = True
                req.held = req.held or (req.first is None and room_stops > req.stops)
                running.append(req)
                step.book(req, new)
        peak = max(peak, len(running))
        if waiting and (preempted or step.left > 0):
            room_stops += 1  # stopped for room (a slot, blocks), not for the step's token budget
        dt = step_s(step.decodes, step.prefill)
        if dt <= 0:
            raise ValueError(f"a step of {step.decodes} decodes and {step.prefill} prompt tokens takes {dt} s")
        stride = 1
        if not step.prefill and not preempted and scheduled and all(req.first is not None for req, _ in scheduled):
            # a stretch of decode steps in which nothing changes — no block short, no request ending, nothing sent,
            # no room for a waiting request (there was none now, and decoding only uses blocks up) — in one stride
            stride = _stride(running, out, pool.free, need)
            if pending:
                stride = min(stride, max(1, math.ceil((pending[0].sent - now) / dt)))
            for req in running:
                grow = need(req.computed + stride) - req.blocks
                if grow:
                    pool.take(grow)
                    req.blocks += grow
        now += dt * stride
        busy += dt * stride * len(running)
        steps += stride
        if step.prefill:
            prompt_steps += 1
            prompt_tokens += step.prefill
        ended = False
        for req, new in scheduled:
            req.computed += new + stride - 1
            if req.computed < prompt + req.generated:
                continue  # a prompt chunk: no token yet
            req.generated += stride
            if req.first is None:
                req.first = now + frontend_s
            if req.generated >= out:
                req.done = now + frontend_s
                ended = True
                pool.release(req, keep=False)
                finished.append(req)
                if clients is not None and sent < n:  # its client sends the next as it sees the last token
                    pending.append(_Request(max(req.done, arrives(sent))))  # (or as that one arrives)
                    sent += 1
        if ended:
            running = [req for req in running if not req.done]
    ttfts = [(req.first or 0.0) - req.sent for req in finished]
    # vllm bench serve takes a TPOT of the requests with more than one output token
    tpots = [(req.done - (req.first or 0.0)) / (out - 1) for req in finished] if out > 1 else [0.0]
    duration = max(req.done for req in finished)
    return Replay(
        ttft=sum(ttfts) / n, ttft_p99=percentile(ttfts, 99), tpot=sum(tpots) / len(tpots),
        tpot_p99=percentile(tpots, 99),
        duration=duration, in_flight=busy / duration if duration else 0.0, peak=peak, preemptions=preemptions,
        waited=sum(1 for req in finished if req.held), prompt_steps=prompt_steps / steps if steps else 0.0,
        prompt_tokens_per_step=prompt_tokens / prompt_steps if prompt_steps else 0.0)


def _stride(running: list[_Request], out: int, free: int, need: Callable[[int], int]) -> int:
    """Decode steps (this one included) every running request can take before one ends or a block runs short."""
    hi = out - max(req.generated for req in running)

    def fits(s: int) -> bool:
        return sum(need(req.computed + s) - req.blocks for req in running) <= free

    return hi if fits(hi) else max(1, largest(1, hi - 1, fits))  # one step always fits: its blocks are taken
