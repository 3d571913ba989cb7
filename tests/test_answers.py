"""The answers file is checked before any work: unknown keys, wrong types, out-of-range values → exit 2 by name."""

from __future__ import annotations

import pytest

from cli_run import assert_one_line_error, run_main
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
        ("model: Qwen/Qwen3-8B\ncold_start: {compile_s: 1e300}\n", ["cold_start.compile_s", "86,400"]),
        ("model: Qwen/Qwen3-8B\ncold_start: {network_bytes_s: 1e-300}\n", ["cold_start.network_bytes_s"]),
        ("model: Qwen/Qwen3-8B\npeak_rps: 1e300\n", ["peak_rps", "1,000,000"]),
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
    assert_one_line_error(run_main("plan", "--answers", str(f)), *words)


def test_bad_set_and_missing_file(tmp_path):
    f = tmp_path / "answers.yaml"
    f.write_text("model: Qwen/Qwen3-8B\n")
    assert_one_line_error(run_main("plan", "--answers", str(f), "--set", "tp"), "--set", "KEY=VALUE")
    assert_one_line_error(run_main("plan", "--answers", str(f), "--set", "tp=zero"), "tp", "zero")
    assert_one_line_error(run_main("plan", "--answers", str(tmp_path / "nope.yaml")), "--answers", "could not be read")


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


# DESIGN's answers-file contract: at least these keys, with these names, in this order.
DESIGN_KEYS = (
    "model", "weight_precision", "kv_cache_dtype", "context_tokens", "peak_concurrency", "peak_rps", "daily_requests",
    "prompt_tokens", "output_tokens", "ttft_p99_ms", "tpot_p99_ms", "streaming", "traffic_pattern", "workload",
    "data_residency", "needs_predictable_cost", "needs_latency_control", "ops_capability", "budget_mode",
    "monthly_budget_usd", "gpu", "gpu_hour_usd", "managed_usd_per_mtok", "gpu_memory_utilization", "tp", "pp",
    "replicas",
)


def test_the_trees_answers_table_has_the_design_keys_in_order():
    from wizard.session.answers import keys

    assert keys()[:len(DESIGN_KEYS)] == DESIGN_KEYS


def test_a_question_node_cannot_restate_its_keys_rule(tmp_path):
    # One source of truth: bounds live in `answers:`; a node that writes its own minimum is refused at load.
    import yaml

    from wizard.tree.loader import default_tree_path, load_tree

    raw = yaml.safe_load(default_tree_path().read_text())
    raw["nodes"]["context_tokens"]["minimum"] = 1
    bad = tmp_path / "tree.yaml"
    bad.write_text(yaml.safe_dump(raw, sort_keys=False))
    with pytest.raises(InputError, match="answers.context_tokens"):
        load_tree(bad)


def probes(rule) -> list:
    """Values around every bound and choice of a rule: each must be accepted or refused alike everywhere."""
    if rule.type == "bool":
        return [True, False, "maybe", 1]
    if rule.type == "number":
        out = [7, 0.5, -1, 10**400]
        for bound in (rule.minimum, rule.maximum):
            if bound is not None:
                out += [bound, bound - 1, bound + 1, bound - 0.01, bound + 0.01]
        return out
    if rule.type == "choice":
        from wizard.session.answer_rules import choice_values

        return [*choice_values(rule), "nope", 3]
    return ["Qwen/Qwen3-8B", "a\u2028b", "x" * 301]


def as_typed_text(value) -> str:
    """What a person types for a value in the wizard or `ask`."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def outcome(fn, *args):
    try:
        return ("ok", fn(*args))
    except InputError:
        return ("refused", None)


def test_every_question_accepts_and_refuses_the_same_values_everywhere():
    """The answers file, --set, the full-screen wizard and `ask` (both through coerce) agree on every probe of every
    question node: context_tokens 8 is refused by all, 16 accepted by all (the drift the issue found)."""
    import yaml

    from wizard.session.questions import coerce
    from wizard.tree.loader import bundled_tree
    from wizard.tree.schema import Question

    tree = bundled_tree()
    checked = 0
    for node in tree.nodes.values():
        if not isinstance(node, Question):
            continue
        rule = tree.answers[node.var]
        for value in probes(rule):
            in_file = outcome(lambda var, v: validate_answers({var: v})[var], node.var, value)
            text = value if isinstance(value, str) and rule.type == "text" else yaml.safe_dump(value).strip()
            text = text.removesuffix("\n...").strip()
            by_set = outcome(lambda var, t: parse_set([f"{var}={t}"])[var], node.var, text)
            typed = outcome(coerce, node, as_typed_text(value))
            if isinstance(value, int) and not isinstance(value, bool) and value > 10**300:
                typed = outcome(coerce, node, value)  # no one types 400 digits; the TUI passes numbers too
            assert in_file[0] == by_set[0] == typed[0], (node.var, value, in_file, by_set, typed)
            if in_file[0] == "ok" and rule.type != "bool" or isinstance(value, bool):
                assert in_file == by_set == typed, (node.var, value, in_file, by_set, typed)
            checked += 1
    assert checked > 150
    refused = outcome(validate_answers, {"context_tokens": 8})
    assert refused[0] == "refused" and outcome(coerce, tree.nodes["context_tokens"], "8")[0] == "refused"


def test_set_takes_text_keys_verbatim():
    # YAML would read "a #b" as "a" (a comment) and "123" as a number: text keys keep what was typed.
    assert parse_set(["model=/data/models/a #b", "served_model_name=1.10"]) == {
        "model": "/data/models/a #b", "served_model_name": "1.10"}
    assert parse_set(["peak_concurrency=16", "gpu_hour_usd=1e1"]) == {"peak_concurrency": 16, "gpu_hour_usd": 10.0}


def test_typical_lengths_cannot_exceed_the_context(tmp_path):
    f = tmp_path / "answers.yaml"
    f.write_text("model: meta-llama/Llama-3.1-8B-Instruct\ncontext_tokens: 8192\n")
    r = run_main("plan", "--answers", str(f), "--set", "prompt_tokens=9000", "--set", "output_tokens=5000")
    assert_one_line_error(r, "prompt_tokens + output_tokens", "14000", "8,192")


@pytest.mark.parametrize("raw", ["inf", "-inf", "nan", "1e309"])
def test_a_typed_number_must_be_finite(raw):
    # The TUI and `ask` pass typed text through coerce(): int(float("inf")) used to crash both.
    from wizard.session.questions import coerce
    from wizard.tree.loader import load_tree

    with pytest.raises(InputError, match="context_tokens"):
        coerce(load_tree().nodes["context_tokens"], raw)


def test_schema_answers_is_generated_from_the_same_rules():
    """`schema answers` validates every scenario, and refuses what the answers file refuses (same bounds)."""
    import json
    from pathlib import Path

    import jsonschema
    import yaml

    r = run_main("schema", "answers")
    assert r.code == 0
    schema = json.loads(r.out)
    jsonschema.Draft202012Validator.check_schema(schema)
    for f in sorted((Path(__file__).parent / "scenarios").glob("*.yaml")):
        jsonschema.validate(yaml.safe_load(f.read_text()), schema)
    for bad in ({"model": "x", "context_tokens": 8}, {"model": "x", "peak_concurency": 4},
                {"model": "x", "params_b": 0}, {"model": "x", "gpu": "h100"}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)
        with pytest.raises(InputError):
            validate_answers(bad)
