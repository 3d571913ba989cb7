"""The full-screen wizard's speed (issue #6 targets: first screen under 1 s, side-panel recomputation under 50 ms).

Prints: the whole-process import + app start to the first question screen (headless, textual's test driver),
and the side panel's recomputation after each answer of a walkthrough. Usage: python benchmarks/tui.py
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("WIZARD_STATE_DIR", tempfile.mkdtemp())

FIRST_SCREEN = """
import asyncio, time
t0 = time.perf_counter()
from wizard.tui.app import WizardApp
from wizard.tui.screens import QuestionScreen
async def main():
    app = WizardApp(resume=False)
    async with app.run_test(size=(100, 32)) as pilot:
        while not isinstance(app.screen, QuestionScreen):
            await pilot.pause()
        print(time.perf_counter() - t0)
asyncio.run(main())
"""


def first_screen_s() -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", FIRST_SCREEN], check=True, capture_output=True, cwd=ROOT,
                   env={**os.environ, "PYTHONPATH": str(ROOT)})
    return time.perf_counter() - start


def recompute_ms() -> list[float]:
    from wizard.session import preview as pv
    from wizard.session.session import Session

    answers = ["meta-llama/Llama-3.1-70B-Instruct", "auto", 8192, None, None, "online", False, False, False, 100000,
               32, 2000, 60, "diurnal", "kubernetes", "pay_as_you_go", "auto", "auto", 0.9]
    s = Session()
    times = []
    for value in answers:
        if s.question is None:
            break
        s.answer(value)
        pv._cache.clear()  # measure the computation, not the cache
        start = time.perf_counter()
        pv.preview(s)
        times.append((time.perf_counter() - start) * 1000)
    return times


def main() -> None:
    import compileall

    import wizard

    compileall.compile_dir(wizard.__path__[0], quiet=1)  # as pip does at install time (see startup.py)
    starts = [first_screen_s() for _ in range(3)]
    print(f"first screen, whole process: median {statistics.median(starts):.2f} s (runs: "
          + ", ".join(f"{x:.2f}" for x in starts) + ")")
    times = recompute_ms()
    print(f"side-panel recomputation over a 70B walkthrough: median {statistics.median(times):.1f} ms, "
          f"max {max(times):.1f} ms ({len(times)} answers)")


if __name__ == "__main__":
    main()
