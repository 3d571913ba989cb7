"""serve/batch.py of the offline starter repos (DOMAIN §12), run for real against a fake `vllm` package: the engine
gets the limits the plan sized, chat rows go through the chat template, results stream to the output and resume
after an interruption without duplicates, and the plan's copies split the rows disjointly and completely."""

from __future__ import annotations

import json
import os
import py_compile
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from wizard.artifacts.render import render_repo
from wizard.artifacts.vllm_flags import flag_exists
from wizard.artifacts.writer import write_repo
from wizard.session.answers import recorded, validate_answers
from wizard.session.plan import build_plan
from wizard.session.session import run_answers
from wizard.sizing.engine import default_max_num_batched_tokens
from wizard.sources.catalog import find_gpu

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "tests" / "scenarios"
OFFLINE = {
    "offline_research": {},
    "tiny_offline_cpu": {},
    "offline_deadline": {"job_requests": 2_000_000, "job_deadline_hours": 24},  # offline_research with copies
    "offline_fp8_kv": {"kv_cache_dtype": "fp8", "weight_precision": "fp8"},
}

FAKE_VLLM = '''
"""A stand-in for vllm: records the LLM keywords and every call in $FAKE_VLLM_LOG (JSON lines); with
$FAKE_VLLM_DIE_AT=N the process dies (os._exit, as on SIGKILL) at the N-th generate/chat call."""
import json
import os


def _log(entry):
    with open(os.environ["FAKE_VLLM_LOG"], "a", encoding="utf-8") as f:
        f.write(json.dumps(entry) + "\\n")


class SamplingParams:
    def __init__(self, **kwargs):
        self.kwargs = kwargs


class _Completion:
    def __init__(self, text):
        self.text = text
        self.finish_reason = "length"


class _Output:
    def __init__(self, text):
        self.outputs = [_Completion(text)]


class LLM:
    calls = 0

    def __init__(self, **kwargs):
        _log({"init": kwargs})

    def _call(self, kind, items, params, use_tqdm):
        LLM.calls += 1
        if os.environ.get("FAKE_VLLM_DIE_AT") == str(LLM.calls):
            os._exit(137)
        _log({"call": kind, "n": len(items), "params": params.kwargs, "use_tqdm": use_tqdm})

    def generate(self, prompts, sampling_params=None, use_tqdm=True):
        assert all(isinstance(p, str) for p in prompts)
        self._call("generate", prompts, sampling_params, use_tqdm)
        return [_Output("gen:" + p) for p in prompts]

    def chat(self, messages, sampling_params=None, use_tqdm=True):
        assert all(isinstance(m, list) and all("role" in x for x in m) for m in messages)
        self._call("chat", messages, sampling_params, use_tqdm)
        return [_Output("chat:" + m[-1]["content"]) for m in messages]
'''


def build(name: str, extra: dict[str, Any], out: Path) -> tuple[Any, Path]:
    base = "offline_research" if name.startswith("offline_") and name not in ("offline_research",) else name
    raw = {**yaml.safe_load((SCENARIOS / f"{base}.yaml").read_text()), **extra}
    session = run_answers(validate_answers(raw))
    plan = build_plan(session)
    return plan, write_repo(render_repo(plan, recorded(session.answers)), out)


@pytest.fixture(scope="module")
def repos(tmp_path_factory) -> dict[str, tuple[Any, Path]]:
    base = tmp_path_factory.mktemp("offline")
    return {name: build(name, extra, base / name) for name, extra in OFFLINE.items()}


@pytest.fixture(scope="module")
def fake_vllm(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("fake")
    (folder / "vllm").mkdir()
    (folder / "vllm" / "__init__.py").write_text(FAKE_VLLM)
    return folder


class Job:
    def __init__(self, repo: Path, fake: Path, work: Path) -> None:
        self.repo, self.fake, self.work = repo, fake, work
        self.log = work / "vllm-log.jsonl"

    def run(self, *args: str, die_at: int | None = None) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "PYTHONPATH": str(self.fake), "FAKE_VLLM_LOG": str(self.log)}
        env.pop("FAKE_VLLM_DIE_AT", None)
        if die_at is not None:
            env["FAKE_VLLM_DIE_AT"] = str(die_at)
        return subprocess.run([sys.executable, str(self.repo / "serve" / "batch.py"), *args], cwd=self.work, env=env,
                              capture_output=True, text=True, timeout=60, check=False)

    def entries(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]


def write_input(path: Path, n: int, *, chat_every: int | None = 3) -> list[dict[str, Any]]:
    rows = []
    for i in range(n):
        if chat_every and i % chat_every == 0:
            rows.append({"messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": f"q{i}"}],
                         "tag": i})
        else:
            rows.append({"prompt": f"p{i}", "tag": i})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return rows


def outputs(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def expected_engine(plan: Any) -> dict[str, Any]:
    """The limits the plan sized, as LLM keywords: what `vllm serve` gets in launch.sh, and the serve default of
    max_num_batched_tokens the memory was sized with."""
    want: dict[str, Any] = {"model": plan.model}
    if plan.memory is None:  # CPU: no sizing of GPU memory
        return want
    inputs = plan.memory.inputs
    want |= {"max_model_len": inputs.context_tokens, "max_num_seqs": plan.concurrency_per_replica,
             "gpu_memory_utilization": inputs.gpu_memory_utilization,
             "max_num_batched_tokens": default_max_num_batched_tokens(find_gpu(plan.gpu))}
    if plan.tp > 1:
        want["tensor_parallel_size"] = plan.tp
    if plan.pp > 1:
        want["pipeline_parallel_size"] = plan.pp
    if inputs.kv_cache_dtype == "fp8":
        want["kv_cache_dtype"] = "fp8"
    if inputs.weight_precision == "fp8" and plan.checkpoint_format == "bf16":
        want["quantization"] = "fp8"  # dynamic FP8 of a 16-bit checkpoint, as launch.sh
    return want


# ------------------------------------------------------------------------------------------------ the file


@pytest.mark.parametrize("name", list(OFFLINE))
def test_batch_py_compiles_and_is_ruff_clean(repos, name):
    _, repo = repos[name]
    script = repo / "serve" / "batch.py"
    py_compile.compile(str(script), doraise=True, cfile=str(script) + "c.tmp")
    Path(str(script) + "c.tmp").unlink()
    ruff = Path(sys.executable).parent / "ruff"
    r = subprocess.run([str(ruff), "check", "--isolated", "--select", "E,F,W,B,UP", "--target-version", "py310",
                        "--line-length", "120", str(script)], capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("name", list(OFFLINE))
def test_the_engine_gets_the_limits_the_plan_sized(repos, fake_vllm, tmp_path, name):
    plan, repo = repos[name]
    job = Job(repo, fake_vllm, tmp_path)
    write_input(tmp_path / "in.jsonl", 4)
    r = job.run("in.jsonl", "out.jsonl", "--shards", "1")
    assert r.returncode == 0, r.stderr
    init = [e["init"] for e in job.entries() if "init" in e]
    assert len(init) == 1
    kwargs = init[0]
    assert {k: v for k, v in kwargs.items() if k != "distributed_executor_backend"} == {
        **expected_engine(plan), **({"max_model_len": 2048, "max_num_seqs": 2} if plan.memory is None else {})}
    if plan.form == "cpu":
        assert "gpu_memory_utilization" not in kwargs
    # every keyword is an engine argument of vLLM 0.33.0 (flag --x-y <-> keyword x_y)
    for name_ in kwargs:
        assert name_ == "model" or flag_exists(f"--{name_.replace('_', '-')}"), name_
    if name == "offline_fp8_kv":
        assert kwargs["kv_cache_dtype"] == "fp8" and kwargs["quantization"] == "fp8"


def test_a_multi_node_job_uses_ray(fake_vllm, tmp_path):
    plan, repo = build("very_large_model", {"workload": "offline"}, tmp_path / "repo")
    assert plan.form == "multi_node"
    job = Job(repo, fake_vllm, tmp_path)
    write_input(tmp_path / "in.jsonl", 2)
    r = job.run("in.jsonl", "out.jsonl", "--shards", "1")
    assert r.returncode == 0, r.stderr
    kwargs = next(e["init"] for e in job.entries() if "init" in e)
    assert kwargs["distributed_executor_backend"] == "ray" and kwargs["pipeline_parallel_size"] == plan.pp


# ------------------------------------------------------------------------------------------------ running it


def test_chat_rows_use_the_chat_template_and_prompt_rows_generate(repos, fake_vllm, tmp_path):
    _, repo = repos["offline_research"]
    job = Job(repo, fake_vllm, tmp_path)
    rows = write_input(tmp_path / "in.jsonl", 7)
    r = job.run("in.jsonl", "out.jsonl", "--max-tokens", "5")
    assert r.returncode == 0, r.stderr
    out = outputs(tmp_path / "out.jsonl")
    assert [o["tag"] for o in out] == [row["tag"] for row in rows]  # input order, other keys kept
    assert [o["id"] for o in out] == list(range(1, 8))  # line numbers when rows have no id
    for o, row in zip(out, rows):
        if "messages" in row:
            assert o["output"] == "chat:" + row["messages"][-1]["content"] and o["messages"] == row["messages"]
        else:
            assert o["output"] == "gen:" + row["prompt"]
        assert o["finish_reason"] == "length"
    calls = [e for e in job.entries() if "call" in e]
    assert {c["call"] for c in calls} == {"generate", "chat"}
    assert sum(c["n"] for c in calls if c["call"] == "chat") == 3
    assert all(c["params"] == {"max_tokens": 5, "temperature": 0.0} for c in calls)
    assert "7/7 rows" in r.stderr


def test_output_streams_per_chunk_and_a_killed_job_resumes_without_duplicates(repos, fake_vllm, tmp_path):
    _, repo = repos["offline_research"]
    job = Job(repo, fake_vllm, tmp_path)
    write_input(tmp_path / "in.jsonl", 10, chat_every=None)  # prompts only: one engine call per chunk
    killed = job.run("in.jsonl", "out.jsonl", "--chunk-size", "4", die_at=2)  # dies in the second chunk
    assert killed.returncode == 137
    first = outputs(tmp_path / "out.jsonl")
    assert [o["id"] for o in first] == [1, 2, 3, 4]  # the first chunk was on disk before the second started
    assert "4/10 rows" in killed.stderr
    resumed = job.run("in.jsonl", "out.jsonl", "--chunk-size", "4")
    assert resumed.returncode == 0, resumed.stderr
    assert "4/10 rows already in" in resumed.stderr
    ids = [o["id"] for o in outputs(tmp_path / "out.jsonl")]
    assert sorted(ids) == list(range(1, 11)) and len(ids) == len(set(ids))
    before = (tmp_path / "out.jsonl").read_text()
    inits = len([e for e in job.entries() if "init" in e])
    again = job.run("in.jsonl", "out.jsonl", "--chunk-size", "4")
    assert again.returncode == 0 and "10/10 rows already in" in again.stderr and "0 to do" in again.stderr
    assert (tmp_path / "out.jsonl").read_text() == before
    assert len([e for e in job.entries() if "init" in e]) == inits  # nothing to do: the model is not even loaded


def test_a_line_cut_off_by_a_crash_is_redone(repos, fake_vllm, tmp_path):
    _, repo = repos["tiny_offline_cpu"]
    job = Job(repo, fake_vllm, tmp_path)
    rows = [{"id": f"r{i}", "prompt": f"p{i}"} for i in range(5)]
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert job.run("in.jsonl", "out.jsonl", "--chunk-size", "2").returncode == 0
    text = (tmp_path / "out.jsonl").read_text()
    lines = text.splitlines(keepends=True)
    (tmp_path / "out.jsonl").write_text("".join(lines[:3]) + lines[3][:10])  # row r3 half written
    r = job.run("in.jsonl", "out.jsonl", "--chunk-size", "2")
    assert r.returncode == 0, r.stderr
    assert [o["id"] for o in outputs(tmp_path / "out.jsonl")] == ["r0", "r1", "r2", "r3", "r4"]
    assert (tmp_path / "out.jsonl").read_text() == text


@pytest.mark.parametrize("shards", [2, 3])
def test_shards_split_the_rows_disjointly_and_completely(repos, fake_vllm, tmp_path, shards):
    _, repo = repos["offline_research"]
    job = Job(repo, fake_vllm, tmp_path)
    write_input(tmp_path / "in.jsonl", 11)
    parts = []
    for i in range(shards):
        r = job.run("in.jsonl", "out.jsonl", "--shard", str(i), "--shards", str(shards), "--chunk-size", "2")
        assert r.returncode == 0, r.stderr
        part = tmp_path / f"out.{i}-of-{shards}.jsonl"
        parts.append([o["id"] for o in outputs(part)])
        assert parts[-1] == [n + 1 for n in range(11) if n % shards == i]
    every = [i for part in parts for i in part]
    assert sorted(every) == list(range(1, 12)) and len(every) == len(set(every))
    assert not (tmp_path / "out.jsonl").exists()


def test_the_plans_copies_are_the_default_shards_and_the_docs_launch_them(repos, fake_vllm, tmp_path):
    plan, repo = repos["offline_deadline"]
    assert plan.replicas > 1
    text = (repo / "serve" / "batch.py").read_text()
    assert f"SHARDS = {plan.replicas}" in text
    readme = (repo / "README.md").read_text()
    for i in range(plan.replicas):
        assert f"--shard {i} --shards {plan.replicas}" in readme and f"--shard {i} --shards {plan.replicas}" in text
    gpus = plan.tp * plan.pp
    devices = [line.split("CUDA_VISIBLE_DEVICES=")[1].split()[0] for line in readme.splitlines()
               if "CUDA_VISIBLE_DEVICES=" in line]
    assert len(devices) == plan.replicas and all(len(d.split(",")) == gpus for d in devices)
    job = Job(repo, fake_vllm, tmp_path)
    write_input(tmp_path / "in.jsonl", 30)
    r = job.run("in.jsonl", "out.jsonl", "--shard", "1")  # --shards defaults to the plan's copies
    assert r.returncode == 0, r.stderr
    part = tmp_path / f"out.1-of-{plan.replicas}.jsonl"
    assert [o["id"] for o in outputs(part)] == [n + 1 for n in range(30) if n % plan.replicas == 1]


@pytest.mark.parametrize(("lines", "args", "words"), [
    (['{"prompt": "a"}', "not json"], [], ["in.jsonl:2", "not JSON"]),
    (['{"prompt": "a", "messages": []}'], [], ["in.jsonl:1", "exactly one of"]),
    (['{"text": "a"}'], [], ["in.jsonl:1", "exactly one of"]),
    (['{"messages": "hi"}'], [], ["in.jsonl:1", "non-empty list"]),
    (['{"prompt": 3}'], [], ["in.jsonl:1", "must be a string"]),
    (['{"id": 1, "prompt": "a"}', '{"id": 1, "prompt": "b"}'], [], ["in.jsonl:2", "appears twice"]),
    (['["a"]'], [], ["in.jsonl:1", "expected an object"]),
    (['{"prompt": "a"}'], ["--shard", "2", "--shards", "2"], ["--shard 2", "0 .. 1"]),
    (['{"prompt": "a"}'], ["--shards", "0"], ["--shards 0"]),
    (['{"prompt": "a"}'], ["--chunk-size", "0"], ["--chunk-size 0"]),
    (['{"prompt": "a"}'], ["--shard", "x"], ["--shard", "invalid int"]),
])
def test_bad_input_is_one_clear_error_before_the_model_loads(repos, fake_vllm, tmp_path, lines, args, words):
    _, repo = repos["tiny_offline_cpu"]
    job = Job(repo, fake_vllm, tmp_path)
    (tmp_path / "in.jsonl").write_text("\n".join(lines) + "\n")
    r = job.run("in.jsonl", "out.jsonl", *args)
    assert r.returncode == 2
    for word in words:
        assert word in r.stderr, (word, r.stderr)
    assert "Traceback" not in r.stderr
    assert not [e for e in job.entries() if "init" in e]


def test_a_missing_input_file_is_a_clear_error(repos, fake_vllm, tmp_path):
    _, repo = repos["tiny_offline_cpu"]
    r = Job(repo, fake_vllm, tmp_path).run("nope.jsonl", "out.jsonl")
    assert r.returncode == 2 and "nope.jsonl: no such file" in r.stderr
