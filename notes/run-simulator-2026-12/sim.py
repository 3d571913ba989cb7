import sys, math, random, statistics
from pathlib import Path
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks")); sys.path.insert(0, str(ROOT))
import throughput as t
from wizard.sizing import performance as perf
from wizard.sizing.engines import profile_for

BLOCK = 16

def simulate(r, n, rate, cap, prompt, outs, frontend, seed=0, chunked=True):
    rng = random.Random(seed)
    budget = r.activation.tokens
    seqs = int(perf.max_num_seqs(r))
    blocks_total = r.kv_capacity_tokens // BLOCK
    arr = []
    tt = 0.0
    for k in range(n):
        arr.append(tt)
        if rate != math.inf: tt += rng.expovariate(rate)
    tokens = [prompt] * n  # prompt + outputs so far
    comp = [0] * n
    first = [None] * n; finish = [None] * n; sent = [None] * n
    waiting = []; running = []
    inflight = 0; nxt = 0; now = 0.0; steps = 0; ndone = 0
    held = 0; prev = -1.0
    def blocks(x): return -(-x // BLOCK)
    while ndone < n:
        if steps > 400000: raise RuntimeError("steps")
        # clients: a request arriving during the last step while a slot was free was sent at its arrival; one that
        # found every slot taken is sent now, when a finish at this step's end freed one
        room = cap - held
        while nxt < n and inflight < cap and arr[nxt] <= now + 1e-12:
            if arr[nxt] > prev and room > 0:
                sent[nxt] = arr[nxt]; room -= 1
            else:
                sent[nxt] = max(arr[nxt], now)
            waiting.append(nxt); inflight += 1; nxt += 1
        held = inflight; prev = now
        if not running and not waiting:
            prev = now; now = arr[nxt]; held = inflight
            sent[nxt] = arr[nxt]; waiting.append(nxt); inflight += 1; nxt += 1; held = inflight
            continue
        left = budget
        sched = {}
        used = sum(blocks(comp[i]) for i in running)
        if chunked:
            k = 0
            while k < len(running):
                i = running[k]
                new = min(tokens[i] - comp[i], left)
                if new <= 0: k += 1; continue
                need = blocks(comp[i] + new) - blocks(comp[i])
                while used + need > blocks_total and running[-1] != i:
                    v = running.pop(); used -= blocks(comp[v]); sched.pop(v, None)
                    if v in sched: pass
                    comp[v] = 0; waiting.insert(0, v)
                if used + need > blocks_total:  # preempt itself
                    running.pop(k); used -= blocks(comp[i]); comp[i] = 0; waiting.insert(0, i); continue
                sched[i] = new; left -= new; used += need; k += 1
            while waiting and left > 0 and len(running) < seqs:
                i = waiting[0]
                new = min(tokens[i] - comp[i], left)
                need = blocks(comp[i] + new)
                if used + need > blocks_total: break
                waiting.pop(0); running.append(i); sched[i] = new; left -= new; used += need
        else:  # V0 without chunked prefill: a step of whole prompts when any can be admitted, else decodes
            admitted = []
            while waiting and len(running) + len(admitted) < seqs:
                i = waiting[0]
                new = tokens[i] - comp[i]
                if new > left or used + blocks(tokens[i]) > blocks_total: break
                waiting.pop(0); admitted.append(i); sched[i] = new; left -= new; used += blocks(tokens[i])
            if admitted:
                running.extend(admitted)
            else:
                k = 0
                while k < len(running):
                    i = running[k]
                    need = blocks(comp[i] + 1) - blocks(comp[i])
                    while used + need > blocks_total and running[-1] != i:
                        v = running.pop(); used -= blocks(comp[v]); sched.pop(v, None); comp[v] = 0; waiting.insert(0, v)
                    if used + need > blocks_total:
                        running.pop(k); used -= blocks(comp[i]); comp[i] = 0; waiting.insert(0, i); continue
                    sched[i] = 1; used += need; k += 1
        dec = [i for i, x in sched.items() if x == 1 and comp[i] >= prompt]
        pre = sum(x for i, x in sched.items() if not (x == 1 and comp[i] >= prompt))
        ctx = sum(comp[i] for i in dec) / len(dec) if dec else prompt
        st = perf._stage(r, len(dec), pre, max(1.0, ctx))[0] * r.inputs.pp
        now += st; steps += 1
        for i, x in sched.items():
            comp[i] += x
            if comp[i] >= tokens[i]:
                tokens[i] += 1
                if first[i] is None: first[i] = now
                if tokens[i] - prompt >= outs[i]:
                    finish[i] = now; running.remove(i); inflight -= 1; ndone += 1
    ttft = sorted(first[i] - sent[i] + frontend for i in range(n))
    tpot = [(finish[i] - first[i]) / (outs[i] - 1) for i in range(n) if outs[i] > 1]
    dur = max(finish) + frontend
    q = 0.99 * (n - 1); lo = int(q); p99 = ttft[lo] + (ttft[min(lo + 1, n - 1)] - ttft[lo]) * (q - lo)
    return statistics.mean(ttft) * 1000, p99 * 1000, statistics.mean(tpot) * 1000 if tpot else 0, sum(outs) / dur, steps

def outputs(n, mean, cmax, seed, varied):
    if not varied: return [int(round(mean))] * n
    rng = random.Random(1000 + seed)
    return [max(1, min(cmax, int(round(rng.expovariate(1 / mean))))) for _ in range(n)]
