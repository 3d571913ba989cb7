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
    assert validate_answers({"peak_concurrency": "12", "data_residency": True}) == {"peak_concurrency": 12,
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
