"""`tree lint` passes on the bundled tree and names the node of every defect planted in a copy of it."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from cli_run import run_cli
from wizard.errors import InputError
from wizard.session.answers import accepted_values
from wizard.session.computes import FUNCTIONS
from wizard.tree.lint import lint
from wizard.tree.loader import default_tree_path, load_tree, tree_json_schema, validate_tree

RAW = yaml.safe_load(default_tree_path().read_text())


def lint_raw(raw: dict):
    return lint(validate_tree(raw, "tree"), FUNCTIONS, accepted_values())


def mutated(fn) -> dict:
    raw = copy.deepcopy(RAW)
    fn(raw)
    return raw


def test_bundled_tree_is_clean_and_reaches_every_recommendation():
    report = lint(load_tree(), FUNCTIONS, accepted_values())
    assert report.errors == []
    recommendations = {k for k, n in RAW["nodes"].items() if n["kind"] == "recommendation"}
    assert set(report.reached) == recommendations
    # the first answers that reach a recommendation lead there when replayed through the real engine
    assert report.reached["managed_low_traffic"]["daily_requests"] < 100


def test_cli_lint_ok_and_show_and_paths():
    r = run_cli("tree", "lint")
    assert r.code == 0 and "tree lint: ok" in r.out
    show = run_cli("tree", "show")
    assert show.code == 0 and "managed_low_traffic" in show.out and "layout_form = single_gpu" in show.out
    paths = run_cli("tree", "paths")
    assert paths.code == 0 and "multi_node" in paths.out and "→" in paths.out


def test_typo_in_a_compared_choice_names_the_node():
    def typo(raw):
        raw["nodes"]["ops_capability"]["next"][0]["when"]["all"][0]["value"] = "nonne"

    with pytest.raises(InputError, match=r"nodes\.ops_capability\.next\[0\].*nonne"):
        lint_raw(mutated(typo))


def test_unreachable_node():
    def orphan(raw):
        raw["nodes"]["orphan"] = copy.deepcopy(raw["nodes"]["managed_no_ops"])

    assert any("node orphan: unreachable" in e for e in lint_raw(mutated(orphan)).errors)


def test_dead_end_when_the_catch_all_is_removed():
    def no_catch_all(raw):
        raw["nodes"]["fit"]["next"].pop()  # multi_node was the fallback

    errors = lint_raw(mutated(no_catch_all)).errors
    assert any(e.startswith("node fit: dead end") for e in errors)
    assert any("recommendation multi_node: no probe walk reaches it" in e for e in errors)


def test_cycle_is_named():
    def loop(raw):
        raw["nodes"]["gpu"]["next"] = [{"goto": "model"}]

    assert any(e.startswith("cycle:") and "gpu" in e for e in lint_raw(mutated(loop)).errors)


def test_edge_after_catch_all():
    def after(raw):
        raw["nodes"]["workload"]["next"].append({"goto": "data_residency"})

    assert any("node workload: edge 1 after the catch-all" in e for e in lint_raw(mutated(after)).errors)


def test_condition_reading_a_variable_not_set_on_every_path():
    def early(raw):  # the offline road reaches `gpu` without ever asking ops_capability
        raw["nodes"]["gpu"]["next"].insert(0, {"when": {"var": "ops_capability", "op": "eq", "value": "none"},
                                               "goto": "kv_cache_dtype"})

    assert any("node gpu: edge 0 reads 'ops_capability'" in e for e in lint_raw(mutated(early)).errors)


def test_shadowed_recommendation_is_unreachable():
    def shadow(raw):
        raw["nodes"]["never"] = copy.deepcopy(raw["nodes"]["single_gpu"])
        raw["nodes"]["fit"]["next"].insert(-1, {"when": {"var": "layout_form", "op": "eq", "value": "single_gpu"},
                                                "goto": "never"})

    assert any("recommendation never: no probe walk reaches it" in e for e in lint_raw(mutated(shadow)).errors)


def test_unknown_function_and_key_and_template_variable():
    def bad(raw):
        raw["nodes"]["fit"]["function"] = "fitt"
        raw["nodes"]["single_gpu"]["summary"] = "{{ undefined_thing }}"

    errors = lint_raw(mutated(bad)).errors
    assert any("unknown compute function 'fitt'" in e for e in errors)
    assert any("recommendation single_gpu: summary uses 'undefined_thing'" in e for e in errors)
    # a question asking for a key the answers table lacks cannot even load: its rules would be nowhere
    with pytest.raises(InputError, match=r"nodes\.kv_cache_dtype\.var.*kv_dtype.*under answers"):
        lint_raw(mutated(lambda r: r["nodes"]["kv_cache_dtype"].update(var="kv_dtype")))


def test_unknown_key_in_a_node_is_a_load_error(tmp_path):
    raw = mutated(lambda r: r["nodes"]["model"].update({"promt": "typo"}))
    f = tmp_path / "tree.yaml"
    f.write_text(yaml.safe_dump(raw))
    r = run_cli("tree", "lint", "--tree", str(f))
    assert r.code == 2 and "promt" in r.err and "Traceback" not in r.err


def test_broken_tree_fails_lint_from_the_command_line(tmp_path):
    f = tmp_path / "tree.yaml"
    f.write_text(yaml.safe_dump(mutated(lambda r: r["nodes"]["fit"]["next"].pop())))
    r = run_cli("tree", "lint", "--tree", str(f))
    assert r.code == 1 and "node fit: dead end" in r.out


def test_published_json_schema_is_current():
    import json

    committed = json.loads((Path(default_tree_path()).parent / "deployment.schema.json").read_text())
    assert committed == tree_json_schema()


def test_a_compute_result_must_be_what_its_node_declares(monkeypatch):
    """Checked compute contracts: a fact the function stops returning, adds silently or returns with another type
    is an error of the walk and of `tree lint`, naming the function and the fact."""
    from cli_run import run_main
    from wizard.session import computes
    from wizard.session.session import ContractError, run_answers

    real = computes.FUNCTIONS["model_facts"]
    answers = {"model": "Qwen/Qwen3-0.6B", "gpu": "l4-24gb"}
    assert run_answers(answers).recommendation is not None  # the real one keeps its contract
    facts = lambda env, ctx: real(env, ctx).facts  # noqa: E731
    cases = [
        (lambda env, ctx: computes.Computed({k: v for k, v in facts(env, ctx).items() if k != "tiny_model"}),
         "tiny_model: declared but not returned"),
        (lambda env, ctx: computes.Computed({**facts(env, ctx), "surprise": 1}), "surprise: returned but not declared"),
        (lambda env, ctx: computes.Computed({**facts(env, ctx), "tiny_model": 1}), "tiny_model: 1 is not a bool"),
        (lambda env, ctx: computes.Computed({**facts(env, ctx), "checkpoint_format": "fp3"}),
         "checkpoint_format: 'fp3' is not a choice"),
    ]
    for broken, words in cases:
        monkeypatch.setitem(computes.FUNCTIONS, "model_facts", broken)
        with pytest.raises(ContractError, match="compute model_facts: .*" + words.split(":")[0]):
            run_answers(answers)
        r = run_main("tree", "lint")
        assert r.code == 1 and words in r.out, r.out


def test_every_example_lint_prints_reaches_its_recommendation_through_plan(tmp_path):
    """Issue #12: the answers `tree lint` prints for each recommendation, written to an answers file and planned
    with `plan --answers`, reach that recommendation (the symbolic walk alone would show an 8B model on a TP road)."""
    from cli_run import run_main
    from wizard.session.tree_replay import replay

    tree = load_tree()
    report = lint(tree, FUNCTIONS, accepted_values())
    examples, problems = replay(tree, report.reached)
    assert problems == [] and set(examples) == set(report.reached)
    for leaf, answers in examples.items():
        path = tmp_path / f"{leaf}.yaml"
        path.write_text(yaml.safe_dump({k: v for k, v in answers.items() if v is not None}))
        r = run_main("plan", "--answers", str(path), "--json")
        assert r.code == 0, (leaf, r.err)
        assert r.json()["path"][-1]["node"] == leaf, (leaf, answers)


def test_a_recommendation_no_example_reaches_is_a_lint_error():
    """Without the questions' `examples`, the symbolic answers for a CPU batch job (64 sequences in flight) never
    reach it through the engine (CPU serving is for at most 4): lint says so instead of printing them."""
    from dataclasses import replace

    from wizard.session.tree_replay import replay
    from wizard.tree.schema import Question

    tree = load_tree()
    report = lint(tree, FUNCTIONS, accepted_values())
    bare = replace(tree, nodes={k: replace(n, examples=[]) if isinstance(n, Question) else n
                                for k, n in tree.nodes.items()})
    examples, problems = replay(bare, {"cpu_batch": report.reached["cpu_batch"]})
    assert "cpu_batch" not in examples
    assert problems == ["recommendation cpu_batch: none of 1 example answer sets reaches it through the engine "
                        "(add `examples:` values to a question node that decides it)"]
