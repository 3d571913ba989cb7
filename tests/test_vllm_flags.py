"""`vllm serve` argv checks against the pinned vLLM 0.33.0 flag table (deploy-checklist §1.3, §3.2 items 1, 2, 11)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from wizard.artifacts import vllm_flags
from wizard.artifacts.vllm_flags import check_argv, choices, flag_exists, parse_argv
from wizard.sizing.engine import VLLM_VERSION

MODEL = "meta-llama/Llama-3.1-8B-Instruct"


def one(argv: list[str]) -> str:
    problems = check_argv(argv)
    assert len(problems) == 1, problems
    return problems[0]


def test_table_is_the_pinned_version():
    assert vllm_flags.TABLE.name == f"vllm-serve-flags-{VLLM_VERSION}.json"
    assert vllm_flags.table()["vllm_version"] == VLLM_VERSION


def test_a_typical_generated_argv_passes():
    argv = [MODEL, "--served-model-name", "$(SERVED_MODEL_NAME)", "--host", "0.0.0.0", "--port", "8000",
            "--max-model-len", "8192", "--max-num-seqs", "64", "--gpu-memory-utilization", "0.9",
            "--shutdown-timeout", "30", "--disable-access-log-for-endpoints", "/health,/metrics",
            "--tensor-parallel-size", "2", "--pipeline-parallel-size", "1", "--kv-cache-dtype", "fp8",
            "--quantization", "fp8", "--enable-prefix-caching", "--no-enable-chunked-prefill", "--enforce-eager"]
    assert check_argv(argv) == []


def test_spellings_the_parser_accepts():
    argv = [MODEL, "-tp", "2", "-pp=2", "--max_num_seqs", "16", "--max-model-len=32k",
            "--max-num-batched-tokens", "8k", "--kv-cache-memory-bytes", "1G", "--compilation-config",
            '{"mode": 3}', "--attention-config.backend", "FLASH_ATTN", "-O3", "--hf-token",
            "--max-lora-rank", "64", "--moe-backend", "Deep-GEMM", "--middleware", "a.b", "--middleware", "c.d"]
    assert check_argv(argv) == []
    assert check_argv([MODEL, "--max-model-len", "auto"]) == []
    assert check_argv([MODEL, "--max-model-len", "-1"]) == []
    assert check_argv([MODEL, "--max-model-len", "1.5k"]) == []  # decimals are fine with decimal suffixes


def test_shell_and_kubernetes_variables_are_accepted_for_any_type():
    argv = ["$MODEL", "--max-model-len", '"$MAX_MODEL_LEN"', "--tensor-parallel-size", "${TP}",
            "--nnodes", "$(LWS_GROUP_SIZE)", "--node-rank", "$(LWS_WORKER_INDEX)", "--dtype", "$DTYPE",
            "--master-addr", "$(LWS_LEADER_ADDRESS)", '"$@"']
    assert check_argv(argv) == []


def test_nargs_plus_takes_every_value_up_to_the_next_flag():
    parsed = parse_argv([MODEL, "--served-model-name", "a", "b", "--port", "8000"])
    assert parsed.problems == []
    assert parsed.values["--served-model-name"] == ["a", "b"]
    assert parsed.value("--port") == "8000"
    assert "one or more values" in one([MODEL, "--served-model-name", "--port", "8000"])


def test_unknown_flag_with_suggestion():
    assert one([MODEL, "--max-modle-len", "4096"]) == \
        "--max-modle-len: unknown flag for vllm serve 0.33.0 (did you mean --max-model-len?)"
    assert "unknown flag" in one([MODEL, "--no-such-flag"])


@pytest.mark.parametrize("flag", ["--swap-space", "--task", "--disable-frontend-multiprocessing", "--rope-theta",
                                  "--cuda-graph-sizes", "--enable-mamba-fine-grained-prefix-cache"])
def test_removed_flags_are_reported(flag):
    problem = one([MODEL, flag, "4"] if flag in ("--swap-space", "--rope-theta") else [MODEL, flag])
    assert problem.startswith(f"{flag}: removed from vLLM") and "unrecognized arguments" in problem
    assert not flag_exists(flag)


def test_removed_flag_value_is_not_reported_twice():
    assert "last seen 0.16.0" in one([MODEL, "--swap-space", "4"])
    assert "--runner pooling" in one([MODEL, "--task=embed"])


@pytest.mark.parametrize(("argv", "needle"), [
    (["--model", MODEL], "--model: deprecated for `vllm serve`: pass the model as the first positional argument"),
    ([MODEL, "--disable-log-requests"], "--disable-log-requests: accepted in 0.33.0 only as the inverse"),
    ([MODEL, "--disable-cascade-attn"], "--disable-cascade-attn: deprecated and without effect"),
    ([MODEL, "--mamba-cache-mode", "align"], "--mamba-cache-mode: deprecated"),
    ([MODEL, "--log-config-file", "x.json"], "use --logging-config.pylogging_config_file"),
    ([MODEL, "--dcp-kv-cache-interleave-size", "2"], "superseded by --cp-kv-cache-interleave-size"),
])
def test_deprecated_flags_are_reported(argv, needle):
    assert needle in one(argv)


def test_choices():
    assert one([MODEL, "--dtype", "bf16"]) == \
        "--dtype 'bf16': not one of the choices auto, bfloat16, float, float16, float32, half"
    assert "not one of the choices 1, 8, 16" in one([MODEL, "--max-lora-rank", "7"])
    assert choices("--dtype") == ["auto", "bfloat16", "float", "float16", "float32", "half"]
    assert choices("--port") is None


def test_documented_values_that_the_engine_checks():
    problem = one([MODEL, "--kv-cache-dtype", "fp9"])
    assert problem.startswith("--kv-cache-dtype 'fp9': not one of the values vLLM 0.33.0 knows (auto, bfloat16")
    assert "the engine rejects it at start" in problem
    assert "fp8" in choices("--kv-cache-dtype") and "fp8_e5m2" in choices("kv-cache-dtype")
    assert "awq" in choices("-q")


@pytest.mark.parametrize(("argv", "needle"), [
    ([MODEL, "--tensor-parallel-size", "two"], "--tensor-parallel-size 'two': not an integer"),
    ([MODEL, "-tp", "1.5"], "-tp '1.5': not an integer"),
    ([MODEL, "--gpu-memory-utilization", "high"], "--gpu-memory-utilization 'high': not a number"),
    ([MODEL, "--max-model-len", "8kb"], "not an integer such as 8192, 8k or 1G, or -1/auto"),
    ([MODEL, "--max-num-batched-tokens", "1.5K"], "decimals are not allowed with binary suffixes like K"),
    ([MODEL, "--compilation-config", "{mode: 3}"], "--compilation-config '{mode: 3}': not JSON"),
    ([MODEL, "--port"], "--port: expects a value"),
])
def test_unparseable_values(argv, needle):
    assert needle in one(argv)


def test_a_value_given_to_a_switch():
    assert one([MODEL, "--enforce-eager=true"]).startswith("--enforce-eager: a switch takes no value")
    assert one([MODEL, "--enforce-eager", "true"]) == \
        "--enforce-eager takes no value, but 'true' follows it (argparse: unrecognized arguments)"
    assert "a switch takes no value" in one([MODEL, "--enable-prefix-caching=false"])


def test_enable_booleans_are_negated_with_no_enable():
    assert check_argv([MODEL, "--no-enable-prefix-caching"]) == []
    assert check_argv([MODEL, "--enable-prefix-caching"]) == []
    problem = one([MODEL, "--disable-prefix-caching"])
    assert problem.startswith("--disable-prefix-caching: spell it --no-enable-prefix-caching")
    assert "exists only in vLLM 0.33.0" in problem
    assert flag_exists("--no-enable-prefix-caching") and flag_exists("--disable-prefix-caching")


def test_secrets_stay_off_the_command_line():
    assert "set VLLM_API_KEY from a Secret" in one([MODEL, "--api-key", "sk-123"])
    assert "set HF_TOKEN from a Secret" in one([MODEL, "--hf-token", "hf_abc"])
    assert check_argv([MODEL, "--hf-token"]) == []  # bare: use the token file, no secret in argv


def test_the_model_positional():
    assert "no model" in one([])
    assert "no model" in one(["--port", "8000"])
    assert "should be the first argument" in one(["--port", "8000", MODEL])
    assert "unexpected positional argument 'extra'" in one([MODEL, "extra"])
    assert parse_argv([MODEL]).model == MODEL


def test_duplicates_are_reported():
    assert "given more than once (also as --tensor-parallel-size)" in \
        one([MODEL, "--tensor-parallel-size", "2", "-tp", "4"])
    assert "given more than once" in one([MODEL, "--enable-prefix-caching", "--no-enable-prefix-caching"])


def test_dot_notation_only_for_json_flags():
    assert "dot notation works only for JSON-typed flags" in one([MODEL, "--port.x", "1"])


def test_helpers():
    assert flag_exists("--tensor-parallel-size") and flag_exists("-tp") and flag_exists("max-model-len")
    assert flag_exists("--max_model_len")
    assert not flag_exists("--swap-space") and not flag_exists("--shutdown-drain-timeout")
    with pytest.raises(KeyError):
        choices("--swap-space")


def test_every_table_flag_round_trips():
    """Each option string of the table is accepted by the checker (with a well-typed value where one is needed)."""
    samples = {"int": "1", "float": "0.5"}
    for entry in vllm_flags.table()["flags"]:
        for name in entry["flags"] + entry["hidden_aliases"]:
            if not name.startswith("-") or name in vllm_flags.DEPRECATED or name in vllm_flags.SECRET_FLAGS:
                continue
            flag = vllm_flags._lookup(name)
            if name in flag.inverse:
                continue
            argv = [MODEL, name]
            if flag.kind not in ("switch", "bool"):
                if flag.choices:
                    argv.append(str(next(c for c in flag.choices if c is not None)))
                elif flag.documented:
                    argv.append(flag.documented[0])
                elif flag.is_json:
                    argv.append("{}")
                else:
                    argv.append(samples.get(str(flag.type), "1"))
            assert check_argv(argv) == [], (argv, check_argv(argv))


def test_import_reads_only_json_and_lazily():
    code = ("import sys, time; t=time.perf_counter(); import wizard.artifacts.vllm_flags as v; "
            "dt=time.perf_counter()-t; assert v.table.cache_info().currsize == 0; "
            "heavy=[m for m in ('yaml','pydantic','jsonschema','difflib') if m in sys.modules]; "
            "print(round(dt,3), heavy)")
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root,
                         env=env).stdout.split()
    assert float(out[0]) < 0.5 and out[1] == "[]", out
    assert json.loads(vllm_flags.TABLE.read_text())["vllm_version"] == VLLM_VERSION
