"""The answers file is checked before any work: unknown keys, wrong types, out-of-range values → exit 2 by name."""

from __future__ import annotations

import pytest

from cli_run import assert_one_line_error, run_cli
from wizard.errors import InputError
from wizard.session.answers import dump_answers, parse_set, validate_answers


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ("model: Qwen/Qwen3-8B\npeak_concurency: 4\n", ["peak_concurency", "unknown key"]),
        ("model: Qwen/Qwen3-8B\npeak_concurrency: many\n", ["peak_concurrency", "many"]),
        ("model: Qwen/Qwen3-8B\npeak_concurrency: -3\n", ["peak_concurrency", "-3"]),
        ("model: Qwen/Qwen3-8B\ngpu_memory_utilization: 1.5\n", ["gpu_memory_utilization", "1.5"]),
        ("model: Qwen/Qwen3-8B\nops_capability: kubernets\n", ["ops_capability", "kubernets"]),
        ("model: Qwen/Qwen3-8B\ngpu: h100\n", ["gpu", "h100-sxm-80gb"]),
        ("model: Qwen/Qwen3-8B\nmanaged_usd_per_mtok: {input: 1}\n", ["managed_usd_per_mtok.output"]),
        ("- just\n- a list\n", ["expected a mapping"]),
        ("model: [unclosed\n", ["not valid YAML"]),
        ("workload: online\n", ["model"]),
        # a yes/no is not a number, nor text a number, nor a number a yes/no (YAML would coerce them silently)
        ("model: Qwen/Qwen3-8B\npeak_concurrency: true\n", ["peak_concurrency", "True", "whole number"]),
        ("model: Qwen/Qwen3-8B\npeak_concurrency: '16'\n", ["peak_concurrency", "16", "whole number"]),
        ("model: Qwen/Qwen3-8B\ndata_residency: 1\n", ["data_residency", "true or false"]),
        ("model: Qwen/Qwen3-8B\ncold_start: {weights_cached: 1}\n", ["cold_start.weights_cached", "true or false"]),
        # finite, bounded numbers: .inf or 1e309 used to end in an OverflowError traceback
        ("model: Qwen/Qwen3-8B\npeak_rps: .inf\n", ["peak_rps", "finite"]),
        ("model: Qwen/Qwen3-8B\ngpu_hour_usd: 1e309\n", ["gpu_hour_usd", "finite"]),
        ("model: Qwen/Qwen3-8B\nmanaged_usd_per_mtok: {input: .nan, output: 1}\n", ["managed_usd_per_mtok.input"]),
        ("model: Qwen/Qwen3-8B\ncold_start: {compile_s: 1e300}\n", ["cold_start.compile_s", "86400"]),
        ("model: Qwen/Qwen3-8B\ncold_start: {network_bytes_s: 1e-300}\n", ["cold_start.network_bytes_s"]),
        ("model: Qwen/Qwen3-8B\npeak_rps: 1e300\n", ["peak_rps", "1000000"]),
        # a key written twice: YAML keeps the last silently
        ("model: meta-llama/Llama-3.1-8B-Instruct\ngpu: l4-24gb\nmodel: Qwen/Qwen3-0.6B\n", ["duplicate key 'model'"]),
        # Kubernetes names: a Service name must start with a letter and fit 63 characters with its "-api"
        ("model: Qwen/Qwen3-8B\napp_name: 9lives\n", ["app_name", "9lives", "starting with a letter"]),
        ("model: Qwen/Qwen3-8B\napp_name: " + "a" * 51 + "\n", ["app_name", "at most 50"]),
    ],
)
def test_bad_answers_files(tmp_path, content, words):
    f = tmp_path / "answers.yaml"
    f.write_text(content)
    assert_one_line_error(run_cli("plan", "--answers", str(f)), *words)


def test_bad_set_and_missing_file(tmp_path):
    f = tmp_path / "answers.yaml"
    f.write_text("model: Qwen/Qwen3-8B\n")
    assert_one_line_error(run_cli("plan", "--answers", str(f), "--set", "tp"), "--set", "KEY=VALUE")
    assert_one_line_error(run_cli("plan", "--answers", str(f), "--set", "tp=zero"), "tp", "zero")
    assert_one_line_error(run_cli("plan", "--answers", str(tmp_path / "nope.yaml")), "--answers", "could not be read")


def test_values_are_typed_and_only_given_keys_are_kept():
    assert validate_answers({"peak_concurrency": 12, "data_residency": True}) == {"peak_concurrency": 12,
                                                                                "data_residency": True}
    assert parse_set(["managed_usd_per_mtok={input: 0.5, output: 1.5}"]) == {
        "managed_usd_per_mtok": {"input": 0.5, "output": 1.5}}
    with pytest.raises(InputError, match="tp"):
        validate_answers({"tp": 0})


def test_dump_keeps_design_order_and_round_trips():
    text = dump_answers({"tp": 2, "model": "Qwen/Qwen3-8B", "peak_concurrency": 4})
    assert text.splitlines()[0] == "model: Qwen/Qwen3-8B"
    import yaml

    assert validate_answers(yaml.safe_load(text)) == {"model": "Qwen/Qwen3-8B", "peak_concurrency": 4, "tp": 2}


def test_keys_follow_the_schema_in_design_order():
    from wizard.session.answers import KEYS
    from wizard.session.answers_model import Answers

    assert KEYS == tuple(Answers.model_fields)


def test_set_takes_text_keys_verbatim():
    # YAML would read "a #b" as "a" (a comment) and "123" as a number: text keys keep what was typed.
    assert parse_set(["model=/data/models/a #b", "served_model_name=1.10"]) == {
        "model": "/data/models/a #b", "served_model_name": "1.10"}
    assert parse_set(["peak_concurrency=16", "gpu_hour_usd=1e1"]) == {"peak_concurrency": 16, "gpu_hour_usd": 10.0}


def test_typical_lengths_cannot_exceed_the_context(tmp_path):
    f = tmp_path / "answers.yaml"
    f.write_text("model: meta-llama/Llama-3.1-8B-Instruct\ncontext_tokens: 8192\n")
    r = run_cli("plan", "--answers", str(f), "--set", "prompt_tokens=9000", "--set", "output_tokens=5000")
    assert_one_line_error(r, "prompt_tokens + output_tokens", "14000", "8,192")


@pytest.mark.parametrize("raw", ["inf", "-inf", "nan", "1e309"])
def test_a_typed_number_must_be_finite(raw):
    # The TUI and `ask` pass typed text through coerce(): int(float("inf")) used to crash both.
    from wizard.session.questions import coerce
    from wizard.tree.loader import load_tree

    with pytest.raises(InputError, match="context_tokens"):
        coerce(load_tree().nodes["context_tokens"], raw)
