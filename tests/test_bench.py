"""The loop back from reality: every served starter repo's bench/run.sh runs `vllm bench serve` at the plan's peak,
and `check-bench` compares the saved result with the plan's predictions and P99 targets."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

import artifact_checks as checks
from cli_run import assert_one_line_error, run_main
from wizard.artifacts.render import render_repo
from wizard.artifacts.writer import write_repo
from wizard.session.answers import recorded, validate_answers
from wizard.session.plan import build_plan
from wizard.session.session import run_answers

FLAGS = set(json.loads((Path(__file__).resolve().parent.parent / "wizard" / "artifacts" / "data"
                        / "vllm-bench-serve-flags.json").read_text())["flags"])
ONLINE = {"model": "meta-llama/Llama-3.1-8B-Instruct", "workload": "online", "peak_concurrency": 48,
          "context_tokens": 8192, "prompt_tokens": 1000, "output_tokens": 200, "ttft_p99_ms": 2000,
          "tpot_p99_ms": 60, "ops_capability": "kubernetes", "gpu": "h100-sxm-80gb"}


def make_repo(raw: dict, out: Path):
    session = run_answers(validate_answers(raw))
    plan = build_plan(session)
    return plan, write_repo(render_repo(plan, recorded(session.answers)), out)


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    return make_repo(ONLINE, tmp_path_factory.mktemp("bench") / "repo")


def fake_vllm(tmp_path: Path) -> Path:
    """A `vllm` on PATH that records its argv and environment, one JSON line per call."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "vllm"
    script.write_text('#!/usr/bin/env python3\nimport json, os, sys\nwith open(os.environ["FAKE_VLLM_LOG"], "a") as f:\n'
                      '    f.write(json.dumps({"argv": sys.argv[1:], "key": os.environ.get("OPENAI_API_KEY")}) + "\\n")\n')
    script.chmod(0o755)
    return bin_dir


def bench_process(repo_path: Path, tmp_path: Path, *args: str, env: dict[str, str] | None = None
                  ) -> tuple[subprocess.CompletedProcess, Path]:
    """bench/run.sh run with a fake `vllm` on PATH: the process and the log of the fake's calls."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    log = tmp_path / "calls.jsonl"
    env = {**os.environ, "PATH": f"{fake_vllm(tmp_path)}:{os.environ['PATH']}", "FAKE_VLLM_LOG": str(log),
           "VLLM_API_KEY": "sk-test", **(env or {})}
    r = subprocess.run(["bash", str(repo_path / "bench" / "run.sh"), *args], cwd=repo_path, env=env,
                       capture_output=True, text=True, timeout=60)
    return r, log


def run_bench(repo_path: Path, tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> dict:
    r, log = bench_process(repo_path, tmp_path, *args, env=env)
    assert r.returncode == 0, r.stderr
    return json.loads(log.read_text().splitlines()[-1])


def value(argv: list[str], flag: str) -> str:
    return argv[argv.index(flag) + 1]


def test_bench_script_passes_bash_n_and_shellcheck(repo):
    _, path = repo
    checks.check_bash(path / "bench" / "run.sh")
    assert os.access(path / "bench" / "run.sh", os.X_OK)


def test_its_argv_is_the_planned_load_with_flags_the_client_has(repo, tmp_path):
    plan, path = repo
    call = run_bench(path, tmp_path, "http://gateway.example:8000")
    argv = call["argv"]
    assert argv[:2] == ["bench", "serve"]
    assert {a for a in argv if a.startswith("--")} <= FLAGS
    fit = next(s.value for s in plan.path if s.node == "fit")
    assert value(argv, "--max-concurrency") == "48"  # the peak across the endpoint (closed loop)
    # the clients join at 1.25 × the requests/s the plan predicts at the peak (three digits, rounded up), so the cap
    # binds without an opening burst of 48 prompts at once
    served = plan.performance.at_peak.tokens_per_s_per_replica * plan.replicas / 200
    assert float(value(argv, "--request-rate")) == pytest.approx(1.25 * served, rel=0.01)
    assert float(value(argv, "--request-rate")) >= 1.25 * served
    assert value(argv, "--random-input-len") == str(fit["typical_prompt_tokens"]) == "1000"
    assert value(argv, "--random-output-len") == str(fit["typical_output_tokens"]) == "200"
    assert value(argv, "--base-url") == "http://gateway.example:8000"
    assert int(value(argv, "--num-prompts")) >= 10 * 48
    assert value(argv, "--metric-percentiles") == "50,99" and "--save-result" in argv
    assert call["key"] == "sk-test"  # the server's key reaches the client as OPENAI_API_KEY


def test_every_run_sends_new_prompts_unless_a_seed_is_given(repo, tmp_path):
    """vllm bench serve draws its random prompts from --seed (default 0): the same prompts every run, whose KV the
    server still holds from the last run (prefix caching is on by default), so a re-run's TTFT would measure almost
    no prefill. bench/run.sh passes a fresh seed each run, says which on stderr and in the result's metadata, and
    BENCH_SEED=N repeats one on purpose; anything but a whole number numpy accepts as a seed (below 2^32) is refused
    before the client starts."""
    _, path = repo
    argvs = [run_bench(path, tmp_path / str(i))["argv"] for i in range(3)]
    seeds = [value(argv, "--seed") for argv in argvs]
    assert all(s.isdigit() for s in seeds) and len(set(seeds)) == 3  # 2^30 seeds: a repeat is one in a billion
    assert [value(argv, "--metadata") for argv in argvs] == [f"bench_seed={s}" for s in seeds]
    pinned = run_bench(path, tmp_path / "pinned", env={"BENCH_SEED": "1234", "SEED": "99"})["argv"]
    assert value(pinned, "--seed") == "1234"  # a SEED the shell happens to export pins nothing
    for i, bad in enumerate(("1; rm -rf /", "", "4294967296", "00000000000000000001")):
        r, log = bench_process(path, tmp_path / f"refused{i}", env={"BENCH_SEED": bad})
        if bad == "":  # empty is unset: a fresh seed
            assert r.returncode == 0 and "prompts: seed" in r.stderr, r.stderr
            continue
        assert r.returncode == 2 and "BENCH_SEED must be a whole number" in r.stderr and not log.exists(), bad


def test_a_peak_request_rate_is_run_open_loop(tmp_path):
    _, path = make_repo({**ONLINE, "peak_rps": 12.5}, tmp_path / "repo")
    argv = run_bench(path, tmp_path)["argv"]
    assert value(argv, "--request-rate") == "12.5" and "--max-concurrency" not in argv
    assert value(argv, "--base-url") == "http://127.0.0.1:8000"


def test_offline_and_managed_repos_have_no_bench(tmp_path):
    for extra in ({"workload": "offline"}, {"ops_capability": "none", "traffic_pattern": "bursty"}):
        plan, path = make_repo({**ONLINE, **extra}, tmp_path / str(len(list(tmp_path.iterdir()))))
        if plan.form == "managed_api" or plan.exposure == "none":
            assert not (path / "bench").exists()


def result_like(plan) -> dict:
    p = plan.performance
    return {"max_concurrency": 48, "num_prompts": 480, "mean_ttft_ms": p.ttft_ms, "p99_ttft_ms": p.ttft_p99_ms,
            "mean_tpot_ms": p.tpot_ms, "p99_tpot_ms": p.tpot_p99_ms,
            "output_throughput": p.tokens_per_s_per_replica * plan.replicas, "completed": 480}


def predicted(path: Path, tmp_path: Path, result: dict) -> dict:
    """check-bench's predictions for a result at this load (read from its JSON)."""
    f = tmp_path / "probe.json"
    f.write_text(json.dumps(result))
    out = run_main("check-bench", str(f), "--plan", str(path / "plan.json"), "--json").json()
    return {m["key"]: m["predicted"] for m in out["metrics"]}


def sized(plan, concurrency: int):
    """The plan's layout sized by hand from its recorded inputs at `concurrency` (what check-bench should reuse)."""
    from wizard.sizing.fit import SizeInputs, size
    from wizard.sources.catalog import find_gpu
    from wizard.sources.resolve import resolve_model

    i = plan.memory.inputs
    return size(resolve_model(plan.model), find_gpu(plan.gpu), SizeInputs(
        context_tokens=i.context_tokens, concurrency=concurrency, gpu_memory_utilization=i.gpu_memory_utilization,
        max_num_seqs=i.max_num_seqs, max_num_batched_tokens=i.max_num_batched_tokens, sequence_tokens=i.sequence_tokens))


def test_a_result_equal_to_the_prediction_passes(repo, tmp_path):
    plan, path = repo
    load = {"max_concurrency": 48, "num_prompts": 480}
    pred = predicted(path, tmp_path, {**load, "mean_ttft_ms": 1.0, "mean_tpot_ms": 1.0})
    result = tmp_path / "result.json"
    result.write_text(json.dumps({**load, **pred}))
    r = run_main("check-bench", str(result), "--plan", str(path / "plan.json"), "--json")
    assert r.code == 0, r.out + r.err
    out = r.json()
    assert out["targets_hold"] and out["advice"] == [] and out["notes"] == []
    assert {m["key"]: m["verdict"] for m in out["metrics"]}["p99_tpot_ms"] == "ok"
    assert all(m["difference"] == 0 for m in out["metrics"])


def test_the_prediction_is_at_the_benchmarks_load_not_the_plans_batch(repo, tmp_path):
    """48 clients over 2 replicas is 24 per replica, with a 480-prompt run's opening burst: the sizing core at that
    load, not the plan's figures at its batch of 48 per replica (which a plain copy would compare against)."""
    plan, path = repo
    assert plan.replicas == 2 and plan.performance.max_batch == 48
    from wizard.sizing.performance import Workload, performance

    r = sized(plan, 24)
    want = performance(r, Workload(24, 1000, 200, prompts=240))
    got = predicted(path, tmp_path, {"max_concurrency": 48, "num_prompts": 480, "mean_ttft_ms": 1.0, "mean_tpot_ms": 1.0})
    assert got["p99_ttft_ms"] == pytest.approx(want.ttft_p99_ms) and got["mean_tpot_ms"] == pytest.approx(want.tpot_ms)
    assert got["output_throughput"] == pytest.approx(2 * want.output_tokens_per_s)
    assert got["p99_ttft_ms"] != pytest.approx(plan.performance.ttft_p99_ms, rel=0.01)


def test_a_p99_tpot_three_times_the_target_fails_naming_tpot(repo, tmp_path):
    plan, path = repo
    result = tmp_path / "result.json"
    data = result_like(plan)
    data["p99_tpot_ms"] = 3 * ONLINE["tpot_p99_ms"]
    result.write_text(json.dumps(data))
    r = run_main("check-bench", str(result), "--plan", str(path / "plan.json"), "--json")
    assert r.code == 1
    out = r.json()
    assert out["failed"] == ["TPOT P99 (ms)"]
    advice = " ".join(out["advice"])
    assert "TPOT P99" in advice and "revisit max-num-seqs" in advice
    implied = -(-plan.replicas * data["p99_tpot_ms"] // ONLINE["tpot_p99_ms"])
    assert f"about {int(implied)} replica(s) instead of {plan.replicas}" in advice
    text = run_main("check-bench", str(result), "--plan", str(path / "plan.json"))
    assert text.code == 1 and "TPOT P99 (ms) over the target" in " ".join(text.out.split())


@pytest.mark.parametrize("content", ["[]", "{}", "not json", '{"mean_ttft_ms": "fast"}'])
def test_a_file_that_is_no_result_exits_2(repo, tmp_path, content):
    _, path = repo
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    assert_one_line_error(run_main("check-bench", str(bad), "--plan", str(path / "plan.json")), "RESULT")


def test_a_result_of_identical_requests_is_replayed_as_such(repo, tmp_path):
    """bench/run.sh's requests all have the plan's lengths (random dataset, range ratio 0, --ignore-eos): the result's
    output total is a whole multiple of its requests (480 × 200), and check-bench then replays them through the
    scheduler as identical requests: the 24 clients a replica send prompts of 1,000 tokens that share their steps,
    end together and come back together, wave after wave — a higher mean TTFT than the same mean lengths with varied
    outputs (one token more in the total), whose phases spread."""
    plan, path = repo
    load = {"max_concurrency": 48, "num_prompts": 480, "mean_ttft_ms": 1.0, "mean_tpot_ms": 1.0, "completed": 480,
            "total_input_tokens": 480 * 1000}
    varied = predicted(path, tmp_path, {**load, "total_output_tokens": 480 * 200 + 1})
    same = predicted(path, tmp_path, {**load, "total_output_tokens": 480 * 200})
    assert same["mean_ttft_ms"] > varied["mean_ttft_ms"]
    # per-request lengths (--save-detailed): equal outputs but prompts that differ (a dataset's prompts with a fixed
    # --*-output-len) are no identical requests: predicted as the varied ones; equal prompts are
    outputs = {"total_output_tokens": 480 * 200, "output_lens": [200] * 480}
    prompts_vary = predicted(path, tmp_path, {**load, **outputs, "input_lens": [900, 1100] * 240})
    prompts_same = predicted(path, tmp_path, {**load, **outputs, "input_lens": [1000] * 480})
    assert prompts_same == same and prompts_vary["mean_ttft_ms"] < same["mean_ttft_ms"]


def test_a_run_past_the_engines_slots_is_predicted_by_the_scheduler_replay(repo, tmp_path, monkeypatch):
    """200 clients over 2 replicas is 100 each, on engines of 48 slots (the plan's --max-num-seqs): the run overruns
    them, and check-bench's figures are the scheduler replay's at that load (100 clients, 400 prompts a replica) —
    clients waiting in vLLM's queue, so a mean TTFT above the plan's."""
    from wizard.sizing import performance as perf

    plan, path = repo
    assert plan.memory.inputs.max_num_seqs == 48
    calls = []
    real = perf.replay
    monkeypatch.setattr(perf, "replay", lambda *a, **k: calls.append((a, k)) or real(*a, **k))
    perf.performance.cache_clear()
    got = predicted(path, tmp_path, {"max_concurrency": 200, "num_prompts": 800, "mean_ttft_ms": 1.0,
                                     "mean_tpot_ms": 1.0, "completed": 800, "total_input_tokens": 800 * 1000,
                                     "total_output_tokens": 800 * 200})
    perf.performance.cache_clear()
    assert len(calls) == 1
    args, kwargs = calls[0]
    assert kwargs["clients"] == 100 and args[3:7] == (48, 1000, 200, 400)  # max_num_seqs, lengths, prompts
    assert got["mean_ttft_ms"] > 2 * plan.performance.ttft_ms
    f = tmp_path / "overrun.json"
    f.write_text(json.dumps({"max_concurrency": 200, "num_prompts": 800, "mean_ttft_ms": 1.0, "mean_tpot_ms": 1.0}))
    notes = " ".join(run_main("check-bench", str(f), "--plan", str(path / "plan.json"), "--json").json()["notes"])
    assert "kept 100 requests in flight on its busiest replica, more than the engine holds to their last token (48:" \
        in notes
    assert "--max-num-seqs 48" in notes
    # a TTFT over its target there is a queue for room: the advice counts the replicas that hold 200 requests whole
    # (48 each: 5), not a latency scaled linearly (which would ask for dozens)
    f.write_text(json.dumps({"max_concurrency": 200, "num_prompts": 800, "mean_ttft_ms": 1.0, "mean_tpot_ms": 1.0,
                             "p99_ttft_ms": 100_000.0}))
    advice = run_main("check-bench", str(f), "--plan", str(path / "plan.json"), "--json").json()["advice"]
    p99 = next(line for line in advice if line.startswith("TTFT P99"))
    assert "holding its 200 requests in flight without that queue takes about 5 replica(s) instead of 2" in p99
    assert "latency taken as linear" not in p99


def test_the_queue_note_needs_a_known_closed_loop_load(repo, tmp_path):
    """No note from a result that names neither its clients nor its prompts (its load is unknown), nor from a
    rate-capped run (its arrivals, not its cap, set what is in flight); 97 clients on 2 replicas put 49 on the busier.
    A whole-number float count (200.0) is read as the count."""
    _, path = repo

    def notes(result: dict) -> str:
        f = tmp_path / "r.json"
        f.write_text(json.dumps({"mean_ttft_ms": 1.0, "mean_tpot_ms": 1.0, **result}))
        return " ".join(run_main("check-bench", str(f), "--plan", str(path / "plan.json"), "--json").json()["notes"])

    lengths = {"completed": 10, "total_input_tokens": 10 * 1000, "total_output_tokens": 10 * 200}
    assert "in flight" not in notes(lengths)
    assert "in flight" not in notes({**lengths, "max_concurrency": 200, "request_rate": 1.0, "num_prompts": 100})
    assert "kept 49 requests in flight on its busiest replica" in notes({"max_concurrency": 97, "num_prompts": 970})
    assert "kept 100 requests in flight" in notes({"max_concurrency": 200.0, "num_prompts": 800})


def test_a_run_without_concurrency_or_rate_sends_every_prompt_at_once(repo, tmp_path):
    """vllm bench serve without --max-concurrency at rate inf sends all its prompts at once: 800 over 2 replicas is
    400 clients each on engines of 48 slots — the rest queue in vLLM — not 48 clients (the engine's batch)."""
    from wizard.sizing.performance import Workload, performance

    plan, path = repo
    result = {"num_prompts": 800, "request_rate": "inf", "mean_ttft_ms": 1.0, "mean_tpot_ms": 1.0, "completed": 800,
              "total_input_tokens": 800 * 1000, "total_output_tokens": 800 * 200}
    got = predicted(path, tmp_path, result)
    want = performance(sized(plan, 48), Workload(48, 1000, 200, prompts=400, clients=400.0, synchronized=True))
    assert got["mean_ttft_ms"] == pytest.approx(want.ttft_ms) and got["mean_tpot_ms"] == pytest.approx(want.tpot_ms)
    batch = performance(sized(plan, 48), Workload(48, 1000, 200, prompts=400, synchronized=True))
    assert got["mean_ttft_ms"] > 2 * batch.ttft_ms  # the queue of the 352 beyond the slots
    f = tmp_path / "all-at-once.json"
    f.write_text(json.dumps(result))
    out = run_main("check-bench", str(f), "--plan", str(path / "plan.json"), "--json").json()
    assert out["load"].startswith("800 requests sent at once")
    # one prompt over two replicas: the busier has it (not none, which would predict a full engine)
    f.write_text(json.dumps({**result, "num_prompts": 1, "completed": 1, "total_input_tokens": 1000,
                             "total_output_tokens": 200}))
    one = run_main("check-bench", str(f), "--plan", str(path / "plan.json"), "--json").json()
    alone = performance(sized(plan, 1), Workload(1, 1000, 200, prompts=1, synchronized=True))
    assert one["load"].startswith("1 request sent at once")
    assert {m["key"]: m["predicted"] for m in one["metrics"]}["mean_ttft_ms"] == pytest.approx(alone.ttft_ms)


SNAPSHOTS = Path(__file__).resolve().parent.parent / "snapshots"
SERVED = sorted(p.name for p in SNAPSHOTS.iterdir() if (p / "bench" / "run.sh").is_file())


def result_of_argv(argv: list[str]) -> dict:
    """The load fields `vllm bench serve --save-result` writes for this argv (request_rate "inf" when none is given),
    every request at the random dataset's fixed lengths."""
    n, prompt, output = (int(value(argv, f)) for f in ("--num-prompts", "--random-input-len", "--random-output-len"))
    rate = float(value(argv, "--request-rate")) if "--request-rate" in argv else "inf"
    conc = int(value(argv, "--max-concurrency")) if "--max-concurrency" in argv else None
    return {"request_rate": rate, "max_concurrency": conc, "num_prompts": n, "completed": n,
            "total_input_tokens": n * prompt, "total_output_tokens": n * output, "mean_ttft_ms": 1.0, "mean_tpot_ms": 1.0}


@pytest.fixture(scope="module")
def rate_repos(tmp_path_factory):
    """Repos whose peak is a request rate: as given, and below the daily average (which the replicas then carry)."""
    base = tmp_path_factory.mktemp("rate")
    return {"peak_rps": make_repo({**ONLINE, "peak_rps": 12.5}, base / "rps")[1],
            "daily_average": make_repo({**ONLINE, "peak_rps": 2, "daily_requests": 2_000_000}, base / "daily")[1]}


def test_a_rate_peak_below_the_daily_average_is_benched_at_the_average(rate_repos, tmp_path):
    """2 requests/s given, 2,000,000 a day (23.1 a second on average): the plan carries the average (§2), its
    at-peak figures are the open loop at that rate, and bench/run.sh sends it (rounded up to three digits)."""
    path = rate_repos["daily_average"]
    at_peak = json.loads((path / "plan.json").read_text())["performance"]["at_peak"]
    assert at_peak["requests_per_s"] == pytest.approx(2_000_000 / 86400, rel=1e-4)
    argv = run_bench(path, tmp_path)["argv"]
    assert value(argv, "--request-rate") == "23.2" and "--max-concurrency" not in argv


@pytest.mark.parametrize("name", SERVED + ["peak_rps", "daily_average"])
def test_every_starter_repos_bench_passes_a_result_equal_to_its_prediction(name, tmp_path, rate_repos):
    """For every golden starter repo with a server, and two whose peak is a request rate, the load bench/run.sh
    sends (its argv, run with a fake `vllm`) is predicted within the plan's P99 targets, as the plan's own figures at
    the peak are: a result equal to that prediction passes check-bench, with the plan's at-peak figures as the
    prediction (same sizing, same load)."""
    repo_path = rate_repos.get(name) or SNAPSHOTS / name
    plan = json.loads((repo_path / "plan.json").read_text())
    argv = run_bench(repo_path, tmp_path)["argv"]
    load = result_of_argv(argv)
    pred = predicted(repo_path, tmp_path, load)
    result = tmp_path / "result.json"
    result.write_text(json.dumps({**load, **pred}))
    r = run_main("check-bench", str(result), "--plan", str(repo_path / "plan.json"), "--json")
    assert r.code == 0, r.out + r.err
    # the planned peak fits the engines: no request waits in vLLM's queue for room
    assert not [n for n in r.json()["notes"] if "more than the engine holds" in n]
    at_peak = plan["performance"]["at_peak"]
    assert ("--max-concurrency" in argv) == (at_peak.get("requests_per_s") is None)
    # the peak over the replicas (whole clients, or a rate rounded up to three digits): the at-peak figures
    assert pred["p99_ttft_ms"] == pytest.approx(at_peak["ttft_p99_ms"], rel=0.02)
    assert pred["p99_tpot_ms"] == pytest.approx(at_peak["tpot_p99_ms"], rel=0.02)
    assert pred["output_throughput"] == pytest.approx(at_peak["tokens_per_s_per_replica"] * plan["replicas"], rel=0.15)


def test_a_benchmark_of_other_lengths_is_predicted_at_its_own_and_says_so(repo, tmp_path):
    """A team's ShareGPT run (200 prompts at 4 requests/s, 205 prompt and 216.7 output tokens a request on average,
    outputs stopped at EOS) against a plan sized for 1,000 + 200: the prediction is the sizing core at the run's own
    lengths, with varied outputs (the run ends with its longest, at most the context after the prompt), and a
    note says the targets were set for other requests."""
    plan, path = repo
    from wizard.sizing.performance import Workload, performance

    result = {"request_rate": 4.0, "max_concurrency": None, "num_prompts": 200, "completed": 200,
              "total_input_tokens": 41_000, "total_output_tokens": 43_344, "mean_ttft_ms": 1.0, "mean_tpot_ms": 1.0}
    i = plan.memory.inputs
    r = sized(plan, 1)
    want = performance(r, Workload(1, 205, 217, rate=2.0, prompts=100, varied_output_max=i.context_tokens - 205))
    fixed = performance(r, Workload(1, 205, 217, rate=2.0, prompts=100))
    assert want.output_tokens_per_s < fixed.output_tokens_per_s  # the longest reply ends the run: not a no-op
    f = tmp_path / "sharegpt.json"
    f.write_text(json.dumps(result))
    out = run_main("check-bench", str(f), "--plan", str(path / "plan.json"), "--json").json()
    got = {m["key"]: m["predicted"] for m in out["metrics"]}
    assert got["mean_ttft_ms"] == pytest.approx(want.ttft_ms) and got["mean_tpot_ms"] == pytest.approx(want.tpot_ms)
    assert got["output_throughput"] == pytest.approx(2 * want.output_tokens_per_s)
    assert out["lengths"] == {"prompt_tokens": 205, "output_tokens": 217, "source": "result", "varied_outputs": True,
                              "varied_prompts": False}
    assert "205 prompt + 217 output tokens on average" in out["load"]
    notes = " ".join(out["notes"])
    assert "the plan's typical request 1,000 + 200" in notes and "targets were set for the plan's workload" in notes
    text = " ".join(run_main("check-bench", str(f), "--plan", str(path / "plan.json")).out.split())
    assert "note: the benchmark's requests averaged 205 prompt + 217 output tokens" in text


def test_the_plans_lengths_stand_in_for_a_result_without_totals(repo, tmp_path):
    plan, path = repo
    f = tmp_path / "bare.json"
    f.write_text(json.dumps({"max_concurrency": 48, "num_prompts": 480, "mean_ttft_ms": 1.0, "mean_tpot_ms": 1.0}))
    out = run_main("check-bench", str(f), "--plan", str(path / "plan.json"), "--json").json()
    assert out["lengths"] == {"prompt_tokens": 1000, "output_tokens": 200, "source": "plan", "varied_outputs": False,
                              "varied_prompts": False}
    assert "on average" not in out["load"] and out["notes"] == []


def test_varied_prompts_are_read_from_per_request_lengths_within_a_block():
    """input_lens that differ by more than a 16-token block (or 1 % of their mean) are varied prompts; the random
    dataset's re-encoded prompts, a few tokens off their target, are not; failed requests (output 0) are left out;
    without input_lens prompts count as equal."""
    from wizard.session.check_bench import varied_prompts

    assert varied_prompts({"input_lens": [900, 1100, 1000]})
    assert not varied_prompts({"input_lens": [1000, 1001, 998, 1000]})
    assert not varied_prompts({"input_lens": [1000, 1000, 3000], "output_lens": [200, 200, 0]})
    assert varied_prompts({"input_lens": [1000, 1000, 3000], "output_lens": [200, 200, 200]})
    assert not varied_prompts({"input_lens": [4000, 4030]})  # within 1 % of 4,015
    assert not varied_prompts({"input_lens": [100, 110]})  # short prompts: within one 16-token block
    assert not varied_prompts({"completed": 3, "total_input_tokens": 3000})


def test_varied_outputs_are_read_from_per_request_lengths_or_the_totals():
    from wizard.session.check_bench import bench_lengths, varied_outputs

    assert varied_outputs({"output_lens": [200, 180, 200], "completed": 3, "total_output_tokens": 600}, 200)
    assert not varied_outputs({"output_lens": [200, 200], "completed": 2, "total_output_tokens": 401}, 200)
    # a failed request is written as 0: the others still ran identical outputs
    assert not varied_outputs({"output_lens": [200] * 478 + [0, 0], "completed": 478}, 200)
    assert varied_outputs({"completed": 480, "total_output_tokens": 480 * 200 - 9_000}, 200)
    assert not varied_outputs({"completed": 480, "total_output_tokens": 480 * 200}, 200)
    # without per-request lengths, an even total of other than the plan's output is no proof of identical outputs
    assert varied_outputs({"completed": 200, "total_output_tokens": 200 * 217}, 200)
    assert varied_outputs({}, 200)
    assert bench_lengths({"completed": 200, "total_input_tokens": 41_000, "total_output_tokens": 43_344}) == (205, 217)
    assert bench_lengths({"completed": 0, "total_input_tokens": 1, "total_output_tokens": 1}) is None
    assert bench_lengths({"completed": True, "total_input_tokens": 5, "total_output_tokens": 5}) is None
    assert bench_lengths({"completed": 2, "total_input_tokens": "many", "total_output_tokens": 1}) is None


def test_a_plan_that_cannot_be_sized_here_says_its_figures_are_its_own(repo, tmp_path):
    """The fallback: the plan's own figures, at its typical request — so no lengths of the result are claimed."""
    plan, path = repo
    data = json.loads((path / "plan.json").read_text())
    data["gpu"] = "no-such-card"
    bad_plan = tmp_path / "plan.json"
    bad_plan.write_text(json.dumps(data))
    f = tmp_path / "r.json"
    f.write_text(json.dumps({"request_rate": 4.0, "num_prompts": 200, "completed": 200, "total_input_tokens": 41_000,
                             "total_output_tokens": 43_344, "mean_ttft_ms": 1.0, "mean_tpot_ms": 1.0}))
    out = run_main("check-bench", str(f), "--plan", str(bad_plan), "--json").json()
    assert out["lengths"] is None and "on average" not in out["load"]
    assert len(out["notes"]) == 1 and "could not be sized here" in out["notes"][0]
    assert {m["key"]: m["predicted"] for m in out["metrics"]}["mean_tpot_ms"] == pytest.approx(plan.performance.tpot_ms)


def test_a_rate_with_a_cap_that_does_not_bind_keeps_the_varied_run_end(repo, tmp_path):
    """4 requests/s with at most 48 in flight: the cap does not bind, so the prediction is the open loop's, the
    longest reply ending the run as without the cap."""
    _, path = repo
    run = {"request_rate": 4.0, "num_prompts": 200, "completed": 200, "total_input_tokens": 41_000,
           "total_output_tokens": 43_344, "mean_ttft_ms": 1.0, "mean_tpot_ms": 1.0}
    free = predicted(path, tmp_path, run)
    capped = predicted(path, tmp_path, {**run, "max_concurrency": 48})
    assert capped["output_throughput"] == pytest.approx(free["output_throughput"])
    assert capped["mean_ttft_ms"] == pytest.approx(free["mean_ttft_ms"])
