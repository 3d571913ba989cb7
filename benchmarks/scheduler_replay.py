"""Time the load model takes for a closed-loop benchmark run of identical requests, which it replays step by step
through vLLM's scheduler (wizard/sizing/scheduler_replay.py): `check-bench` pays it once per result it reads.

Prints, for runs the engine holds whole and runs past its slots, from a starter repo's bench size to a long
overload, the seconds one `performance()` call takes
(the median of several, the cache cleared between them) and the figures it returns.
Usage: python benchmarks/scheduler_replay.py [--runs N]
"""

from __future__ import annotations

import argparse
import statistics
import time

from wizard.sizing import performance as perf
from wizard.sizing.fit import SizeInputs, size
from wizard.sizing.performance import Workload
from wizard.sources.catalog import find_entry, find_gpu, load_catalog_model

# (max_num_seqs, clients, prompts, prompt tokens, output tokens) on Llama-3.1-8B-Instruct, one H100 SXM
CASES = [(64, 64, 10_000, 1000, 200), (256, 16, 100_000, 4000, 4000),  # held whole
         (48, 100, 400, 1000, 200), (256, 1000, 10_000, 1000, 200), (1024, 4000, 20_000, 2000, 2000)]  # past the slots


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    model = load_catalog_model(find_entry("meta-llama/Llama-3.1-8B-Instruct"))
    gpu = find_gpu("h100-sxm-80gb")
    print(f"{'seqs':>5} {'clients':>7} {'prompts':>7} {'lengths':>11} {'median s':>9} {'max s':>7}  figures")
    for seqs, clients, prompts, prompt, out in CASES:
        r = size(model, gpu, SizeInputs(concurrency=1, max_num_seqs=seqs))
        w = Workload(float(seqs), prompt, out, prompts=prompts, clients=float(clients), synchronized=True)
        times = []
        for _ in range(args.runs):
            perf.performance.cache_clear()
            start = time.perf_counter()
            p = perf.performance(r, w)
            times.append(time.perf_counter() - start)
        print(f"{seqs:>5} {clients:>7} {prompts:>7} {f'{prompt}+{out}':>11} {statistics.median(times):>9.3f} "
              f"{max(times):>7.3f}  TTFT {p.ttft_ms:,.0f} ms, TPOT {p.tpot_ms:.1f} ms, "
              f"{p.output_tokens_per_s:,.0f} tok/s")


if __name__ == "__main__":
    main()
