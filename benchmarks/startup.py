"""Whole-process time of `llm-deploy-wizard size --json` (target: well under 0.2 s on 2 cores).

Prints the median and spread of several runs for a few catalog models, and which modules the process
imported, so a slow import shows up by name. Usage: python benchmarks/startup.py [--runs N]
"""

from __future__ import annotations

import argparse
import compileall
import statistics
import subprocess
import sys
import time

CASES = [
    ["size", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "h100-sxm-80gb", "--context", "8192", "--concurrency", "16", "--json"],
    ["size", "deepseek-ai/DeepSeek-V3", "--gpu", "h200-sxm-141gb", "--tp", "8", "--json"],
    ["size", "google/gemma-2-9b-it", "--concurrency", "16", "--json"],
]
HEAVY = ("pydantic", "rich", "textual", "huggingface_hub", "yaml", "jinja2", "questionary")


def time_once(args: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "wizard", *args], check=True, capture_output=True)
    return time.perf_counter() - start


def heavy_imports(args: list[str]) -> list[str]:
    code = (
        "import sys, runpy; sys.argv=['wizard', *sys.argv[1:]]\n"
        "try:\n    runpy.run_module('wizard', run_name='__main__')\nexcept SystemExit: pass\n"
        f"print('HEAVY:' + ','.join(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr)"
    )
    p = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=True)
    line = next((x for x in p.stderr.splitlines() if x.startswith("HEAVY:")), "HEAVY:")
    return [m for m in line.removeprefix("HEAVY:").split(",") if m]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args().runs
    # pip writes bytecode at install time; a source checkout under PYTHONDONTWRITEBYTECODE=1 would
    # recompile every module on every run (~25 ms here), which no installed user pays.
    import wizard

    compileall.compile_dir(wizard.__path__[0], quiet=1)
    python_only = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        python_only.append(time.perf_counter() - start)
    print(f"python -c pass: median {statistics.median(python_only) * 1000:.0f} ms (interpreter start-up floor)")
    for args in CASES:
        time_once(args)  # warm the bytecode cache
        times = [time_once(args) for _ in range(runs)]
        med = statistics.median(times)
        print(
            f"{' '.join(args[:2]):45s} median {med * 1000:6.0f} ms  min {min(times) * 1000:5.0f}  "
            f"max {max(times) * 1000:5.0f}  ({runs} runs)  heavy imports: {heavy_imports(args) or 'none'}"
        )


if __name__ == "__main__":
    main()
