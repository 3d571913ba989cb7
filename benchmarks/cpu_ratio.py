"""CPU cost of whole commands against the cost of merely importing the libraries they need (issue #11's budget):

    plan --json with gpu: auto (the whole search)  /  python -c "import pydantic, yaml, rich, jinja2"   target <= 1.5
    size --json                                    /  python -c "import pydantic, yaml, rich"           target <= 1.0

CPU seconds (user + system of the child) rather than wall time, so a busy machine moves the figures less; the
median of several runs of each, with a cache of validated trees of its own (WIZARD_CACHE_DIR): the first run fills
it, as a user's first run does, and is printed apart ("cold"). Usage: python benchmarks/cpu_ratio.py [--runs N]
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
AUTO_PLAN = "model: meta-llama/Llama-3.1-70B-Instruct\ngpu: auto\npeak_concurrency: 32\n"
SIZE = ["size", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "h100-sxm-80gb", "--concurrency", "16", "--json"]


ENV = {**os.environ, "HF_HUB_OFFLINE": "1"}


def cpu_seconds(argv: list[str]) -> float:
    """User + system CPU seconds of one child process (os.wait4's rusage: this child alone)."""
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {proc.stderr.read().decode() if proc.stderr else ''}")
    return usage.ru_utime + usage.ru_stime


def median_cpu(argv: list[str], runs: int) -> float:
    return statistics.median(cpu_seconds(argv) for _ in range(runs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    compileall.compile_dir(str(ROOT / "wizard"), quiet=1)  # time the program, not the first bytecode compile
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        ENV["WIZARD_CACHE_DIR"] = str(Path(tmp) / "cache")
        answers = Path(tmp) / "auto.yaml"
        answers.write_text(AUTO_PLAN)
        rows = [
            ("plan --json (gpu: auto)", [py, "-m", "wizard", "plan", "--answers", str(answers), "--json"],
             "import pydantic, yaml, rich, jinja2", 1.5),
            ("size --json", [py, "-m", "wizard", *SIZE], "import pydantic, yaml, rich", 1.0),
        ]
        floor = median_cpu([py, "-c", "pass"], args.runs)
        print(f"interpreter alone: {floor * 1000:.0f} ms CPU (median of {args.runs})")
        cold = cpu_seconds(rows[0][1])
        print(f"plan --json, cold cache (validates the tree with pydantic, once): {cold * 1000:.0f} ms CPU")
        for name, command, imports, target in rows:
            # interleaved pairs, so a load that comes and goes weighs on both sides of each ratio alike
            pairs = [(cpu_seconds(command), cpu_seconds([py, "-c", imports])) for _ in range(args.runs)]
            cost = statistics.median(c for c, _ in pairs)
            base = statistics.median(b for _, b in pairs)
            ratio = statistics.median(c / b for c, b in pairs)
            verdict = "ok" if ratio <= target else "over"
            print(f"{name:26s} {cost * 1000:6.0f} ms CPU / `{imports}` {base * 1000:4.0f} ms: ratio {ratio:4.2f}"
                  f" (median of {args.runs} pairs; target <= {target}: {verdict})")


if __name__ == "__main__":
    main()
