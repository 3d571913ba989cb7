import sys, math, time
sys.path.insert(0, str(__import__('pathlib').Path(__file__).resolve().parent))
from sim import *
rows = t.bench_rows()
store = {}
def grab(r, w):
    store['rw'] = (r, w); return perf.performance(r, w)
t.performance = grab
SEEDS = int(sys.argv[1]) if len(sys.argv) > 1 else 3
res = []  # (id, metric, sim, ana, meas, fit, gpu)
T = time.time()
for row in rows:
    t1 = time.time()
    store.clear()
    out = t.predict_bench(row)
    if not out or 'rw' not in store: continue
    r, w = store['rw']
    n = w.prompts
    if not n or r.inputs.scheduler_steps > 1:
        for o in out: res.append((o[0], o[1], o[2], o[2], o[3], o[4], o[5]))
        continue
    rate = w.rate if w.rate is not None else math.inf
    cap = n if w.rate is not None else int(w.clients or w.concurrency)
    sp = perf.speed_for(r.inputs.vllm_version, r.model.architecture, r.gpu.vendor)
    chunked = not profile_for(r.inputs.vllm_version).no_chunked_prefill or w.prompt_tokens > r.activation.tokens
    acc = []
    for s in range(SEEDS):
        sg = str(row.get('dataset','')).startswith('sharegpt')
        varied = w.varied_output_max is not None or sg
        outs = outputs(n, w.output_tokens, w.varied_output_max or (2048 - w.prompt_tokens if sg else 10**9), s, varied)
        acc.append(simulate(r, n, rate, cap, w.prompt_tokens, outs, sp.frontend_s, seed=s, chunked=chunked))
    m = [sum(a[i] for a in acc)/len(acc) for i in range(4)]
    print(row["id"], "%.2f s" % (time.time()-t1), acc[0][4], flush=True)
    simv = {'ttft_mean_ms': m[0], 'ttft_p99_ms': m[1], 'tpot_mean_ms': m[2], 'output_tok_s': m[3]}
    for o in out:
        res.append((o[0], o[1], simv[o[1]], o[2], o[3], o[4], o[5]))
print('time %.1f s' % (time.time()-T))
import collections
def within(p, m): return abs(p/m - 1) <= 0.25
for metric in ('ttft_mean_ms','ttft_p99_ms','tpot_mean_ms','output_tok_s'):
    h = [x for x in res if x[1]==metric and not x[5]]
    print(metric, 'sim %d/%d' % (sum(within(x[2],x[4]) for x in h), len(h)), 'ana %d/%d' % (sum(within(x[3],x[4]) for x in h), len(h)))
by = collections.defaultdict(lambda: [0,0,0])
for x in res:
    if x[5]: continue
    k=(x[6],x[1]); by[k][0]+=within(x[2],x[4]); by[k][1]+=within(x[3],x[4]); by[k][2]+=1
for k in sorted(by): print(k, 'sim %d ana %d of %d' % tuple(by[k]))
import json; json.dump(res, open('/tmp/run-simulator-res.json','w'))
