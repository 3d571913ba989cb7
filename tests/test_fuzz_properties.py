"""Property tests of issue #10: every input gives exit 0 or exit 2 (2: one line on stderr naming the field, no
traceback), within a few seconds, and nothing is written outside the destination.

Surfaces: answers files, `--set`, session files, config.json, safetensors headers and `--out` paths; the hostile
inputs come from tests/fuzz_inputs.py (shared with benchmarks/fuzz.py, which runs >= 10,000 of them). Each example
runs `wizard.cli.main(argv)` in-process in a forked worker, in a sandbox under a fresh temporary folder (cwd, HOME,
WIZARD_STATE_DIR and HF_HOME inside it, the network switched off): an input that hangs or eats memory is stopped
there, never in the test process.
"""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import fuzz_inputs as fz

TIMEOUT_S = 5.0  # an input still running after this is a hang (the worker is killed 2 s later)
FEW_SECONDS = 3.0  # "each input under a few seconds"

# Bounded: 75 examples per surface, each well under a second once the product refuses cleanly; no shrinking (a
# failing input is already labelled by its mutations, and shrinking would replay hangs), derandomized so CI is never
# red by chance; explore other seeds with benchmarks/fuzz.py --seed.
FUZZ = settings(
    max_examples=75,
    deadline=timedelta(seconds=TIMEOUT_S + 10),
    derandomize=True,
    database=None,
    phases=(Phase.explicit, Phase.generate),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.fixture(scope="module")
def runner():
    r = fz.Runner(timeout=TIMEOUT_S, grace=2.0, slow=FEW_SECONDS, mem_limit=3 * 2**30)
    yield r
    r.close()


def assert_contract(res: fz.Result) -> None:
    """Exit 0 or 2, one stderr line for 2, no traceback, under a few seconds, nothing written outside."""
    why = "\n" + fz.describe(res, full=True)
    assert res.outcome != "hang", "hangs" + why
    assert not res.outcome.startswith("crash"), "kills the process" + why
    assert res.exception is None, "raises instead of exit 2" + why
    assert "Traceback" not in res.stdout + res.stderr, "prints a traceback" + why
    assert res.rc in (0, 2), f"exit status {res.rc}" + why
    if res.rc == 2:
        assert res.stderr_lines == 1, f"exit 2 with {res.stderr_lines} lines on stderr" + why
    assert res.seconds < FEW_SECONDS, f"takes {res.seconds:.1f} s" + why
    assert not res.changed, "writes outside the destination" + why
    assert res.network == 0, "tries the network" + why
    assert res.outcome in fz.OK_OUTCOMES, why


@pytest.mark.parametrize("surface", fz.SURFACES)
@FUZZ
@given(rng=st.randoms(use_true_random=False))
def test_every_input_exits_0_or_2_in_one_line(runner, surface, rng):
    assert_contract(runner.run(fz.generate(surface, rng)))


# The harness itself: it must tell ok from refused from broken, and never point anything outside its sandbox.

def test_harness_accepts_a_scenario_and_refuses_a_bad_set(runner):
    data = dict(dict(fz.scenarios())["tiny_model"])
    files = {fz.ANSWERS: fz.answers_text(data).encode()}
    ok = runner.run(fz.Case("answers", "scenario as is", ["plan", "--answers", fz.ANSWERS, "--json"], files))
    assert ok.outcome == "ok", fz.describe(ok, full=True)
    bad = runner.run(fz.Case("set", "not a number",
                             ["plan", "--answers", fz.ANSWERS, "--set", "peak_concurrency=abc"], files))
    assert bad.outcome == "refused" and "peak_concurrency" in bad.stderr, fz.describe(bad, full=True)


def test_harness_writes_the_repo_only_into_the_destination(runner):
    data = dict(dict(fz.scenarios())["tiny_model"])
    case = fz.Case("out", "a new folder", ["plan", "--answers", fz.ANSWERS, "--out", "dest/new"],
                   {fz.ANSWERS: fz.answers_text(data).encode()}, out="dest/new")
    res = runner.run(case)
    assert res.outcome == "ok" and not res.changed, fz.describe(res, full=True)


def test_harness_sees_a_write_outside_the_destination(tmp_path):
    before = {"c1/in/answers.yaml": ("file", 0o644, 10, 1, 1)}
    after = {**before, "c1/dest/.out.tmp": ("dir", 0o700), "c1/dest/out/README.md": ("file", 0o644, 5, 2, 2)}
    assert fz.changes(before, after, allowed=["c1/dest/out"], protected=["c1/in"]) == ["added c1/dest/.out.tmp"]
    gone = {k: v for k, v in before.items() if k != "c1/in/answers.yaml"}
    assert fz.changes(before, gone, allowed=["c1"], protected=["c1/in"]) == ["removed c1/in/answers.yaml"]
    parents = {**before, "c1/dest/a": ("dir", 0o755), "c1/dest/a/out": ("dir", 0o755), "c1/in/new": ("dir", 0o755)}
    assert fz.changes(before, parents, allowed=["c1/dest/a/out", "c1/in/new"], protected=["c1/in"]) == []


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(rng=st.randoms(use_true_random=False))
def test_generated_out_paths_never_leave_the_sandbox(rng):
    case = fz.gen_out(rng)
    sandbox = "/tmp/llmdw-fuzz-x/w1/c1"
    assert fz.destinations(case, sandbox, sandbox + "/home") is not None, case.out
    for a in case.argv:
        assert not a.startswith(("/", "~")) or a.startswith((fz.SANDBOX, "~/")) or a == "~", a
    for link, target in case.symlinks:
        assert fz.inside(fz.os.path.join(sandbox, fz.os.path.dirname(link), target), sandbox), (link, target)


@pytest.mark.parametrize("surface", fz.SURFACES)
def test_generators_are_deterministic(surface):
    a = fz.generate(surface, random.Random(7))
    b = fz.generate(surface, random.Random(7))
    assert a == b
