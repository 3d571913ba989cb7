"""In-process time of the priced plan search over the whole GPU catalog (issue #4 target: well under 100 ms),
and the whole-process time of `plan --answers` for every scenario. Usage: python benchmarks/plan_search.py"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from wizard.session.computes import Context, plan_search  # noqa: E402
from wizard.sizing.fit import size  # noqa: E402

MODELS = ["meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-70B-Instruct", "deepseek-ai/DeepSeek-V3",
          "meta-llama/Llama-3.1-405B-Instruct", "Qwen/Qwen3-30B-A3B"]


def main() -> None:
    for model in MODELS:
        env = {"model": model, "peak_concurrency": 32, "context_tokens": 8192, "ttft_p99_ms": 2000,
               "tpot_p99_ms": 60, "daily_requests": 100000, "workload": "online"}
        times, cached = [], []
        for _ in range(5):
            ctx = Context()  # a fresh context each run: model resolution is outside the search
            ctx.model(model)
            size.cache_clear()  # sizings are remembered within a process: time the search itself
            start = time.perf_counter()
            ranked, everything, _, _ = plan_search(env, ctx)
            times.append(time.perf_counter() - start)
            start = time.perf_counter()
            plan_search(env, ctx)  # the same search again in the process (the fp8 option, the average's second pass)
            cached.append(time.perf_counter() - start)
        best = ranked[0]
        print(f"{model:40s} search first {times[0] * 1000:4.0f} ms, then median {statistics.median(times[1:]) * 1000:4.0f} ms"
              f" (repeated in-process {statistics.median(cached) * 1000:3.0f} ms)"
              f" over {len(everything):3d} layouts "
              f"→ {best.replicas.replicas} × TP {best.tp} × PP {best.pp} on {best.gpu.id}")
    for f in sorted((ROOT / "tests" / "scenarios").glob("*.yaml")):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "wizard", "plan", "--answers", str(f), "--json"], check=True,
                       capture_output=True, cwd=ROOT)
        print(f"plan --answers {f.name:32s} whole process {(time.perf_counter() - start) * 1000:5.0f} ms")


if __name__ == "__main__":
    main()
