"""`llm-deploy-wizard doctor`: the guide's §11 troubleshooting as a tree (trees/doctor.yaml) and a command.

§11 of the guide, the table the tree starts from (symptom → cause → fix):
    fast on one card, slower on several   TP used though the model fits        replicas instead, remove parallelism (§5)
    multi-node start-up hangs             communication group failed, version  check image/driver/ports per machine;
                                          mismatch                             a minimal communication test first (§4)
    still overwhelmed after scaling out   cold start slower than traffic ramp  minimum replicas, warm pool, managed
                                                                               fallback (§7, §10)
    many 5xx during rolling upgrade       traffic before readiness             readiness with a real inference,
                                                                               graceful shutdown (§7; §10: one replica)
    bill far above expectation            many idle replicas, low utilization  look at average utilization, scale by
                                                                               time of day (§8)
The expected leaves and § below are written from that table and the sections it cites; the plan.json detections
derive their expected figures from the plan under test, not from the doctor's output.
"""

from __future__ import annotations

import copy
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from tests.cli_run import assert_one_line_error, run_main
from wizard.cli import DOCTOR_SYMPTOMS
from wizard.doctor_ui import run_doctor, symptom_choices
from wizard.errors import InputError
from wizard.session.doctor import plan_facts, plan_figures, read_plan
from wizard.session.plan import build_plan
from wizard.session.session import run_answers
from wizard.specs.contracts import to_json
from wizard.tree.doctor import PLAN_FIGURES, Cause, Check, bundled_doctor_tree, default_doctor_path, \
    validate_doctor_tree, walks
from wizard.tree.text import render

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "tests" / "scenarios"
TREE = bundled_doctor_tree()
ENTER, DOWN, CTRL_C = "\r", "\x1b[B", "\x03"


@pytest.fixture(autouse=True)
def no_terminal(monkeypatch):
    """The command line as a script or CI runs it: stdin is not a terminal (the interactive tests pass input)."""
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def scenario(name: str, **changes) -> dict:
    return {**yaml.safe_load((SCENARIOS / f"{name}.yaml").read_text()), **changes}


def plan_json(answers: dict) -> dict:
    return to_json(build_plan(run_answers(answers)))


def fit_of(plan: dict) -> dict:
    return next(s["value"] for s in plan["path"] if s["node"] == "fit")


@pytest.fixture(scope="module")
def plans(tmp_path_factory) -> dict[str, tuple[Path, dict]]:
    """Real plans built in-process, written as a starter repo's plan.json is."""
    folder = tmp_path_factory.mktemp("plans")
    built = {
        "tp_forced": scenario("llama8b_tp_forced"),
        # self-hosted (data stays in-house) bursty traffic: a burst climbs faster than a replica starts
        "bursty": scenario("llama8b_high_traffic", traffic_pattern="bursty", data_residency=True),
        "diurnal": scenario("llama8b_high_traffic"),
        "single": scenario("single_replica_forced"),
        # 8 M requests a day at 2,048-token contexts: the replicas carry their load (idle share below half)
        "busy": scenario("average_not_p99", context_tokens=2048, output_tokens=256, daily_requests=8_000_000),
        "multi_node": scenario("very_large_model"),
        "managed": scenario("no_ops_team"),
    }
    out = {}
    for name, answers in built.items():
        data = plan_json(answers)
        path = folder / name / "plan.json"
        path.parent.mkdir()
        path.write_text(json.dumps(data, indent=2))
        out[name] = (path, data)
    return out


def doctor(*args: str):
    return run_main("doctor", *args)


def doctor_json(*args: str) -> dict:
    run = doctor(*args, "--json")
    assert run.code == 0, run.err
    assert run.err == ""
    return run.json()


def answer_args(answers: dict[str, str]) -> list[str]:
    return [a for k, v in answers.items() for a in ("--answer", f"{k}={v}")]


def flat(text: str) -> str:
    return " ".join(text.split())


# -- the tree: data that cannot be wrong in silence


def test_the_tree_starts_from_the_five_symptoms_of_section_11():
    assert [s.id for s in TREE.symptoms] == ["slower_on_more_gpus", "multi_node_hang", "overwhelmed_after_scale_out",
                                             "errors_during_rollout", "bill_too_high"]
    assert all(s.section == "§11" for s in TREE.symptoms)
    assert list(DOCTOR_SYMPTOMS) == [s.id for s in TREE.symptoms]  # what `doctor --help` lists
    assert "--symptom" in doctor("--help").out and "bill_too_high" in doctor("--help").out


def test_every_goto_exists_and_every_leaf_states_cause_fix_and_section():
    for node_id, node in TREE.nodes.items():
        if isinstance(node, Check):
            assert len(node.choices) >= 2, node_id
            assert all(e.goto in TREE.nodes for e in node.next), node_id
            assert "§" in node.section and node.prompt.strip() and node.help.strip(), node_id
        else:
            assert isinstance(node, Cause)
            assert node.cause.strip() and node.fix.strip() and node.title.strip(), node_id
            assert node.section.startswith("§"), node_id


def test_every_walk_of_every_symptom_ends_at_a_cause_and_reaches_every_node():
    every = walks(TREE)
    causes = {k for k, n in TREE.nodes.items() if isinstance(n, Cause)}
    assert {w.leaf for w in every} == causes
    assert {k for w in every for k, _ in w.answers} == set(TREE.checks)
    for s in TREE.symptoms:
        mine = [w for w in every if w.symptom == s.id]
        assert mine, s.id
        assert all(isinstance(TREE.nodes[w.leaf], Cause) for w in mine)
        assert any(TREE.nodes[w.leaf].found for w in mine), f"{s.id} reaches none of §11's causes"


def test_every_answer_of_every_check_is_taken_by_an_edge():
    from wizard.tree.schema import evaluate

    for node_id, check in TREE.checks.items():
        for choice in check.choices:
            assert any(evaluate(e.when, {node_id: choice.value}) for e in check.next), (node_id, choice.value)


def test_leaf_texts_render_with_a_plan_without_one_and_with_a_plan_lacking_figures(plans):
    _, data = plans["tp_forced"]
    full = plan_figures(read_plan(plans["tp_forced"][0]))
    assert full is not None and tuple(full) == PLAN_FIGURES and full["gpus_total"] == data["gpus_total"]
    empty = dict.fromkeys(PLAN_FIGURES)
    for node_id, node in TREE.nodes.items():
        if not isinstance(node, Cause):
            continue
        for figures in (None, full, empty):
            env = {**dict.fromkeys(TREE.checks), "plan": figures}
            for text in (node.cause, node.fix):
                shown = render(text, env)
                assert "None" not in shown and "{" not in shown and "  " not in shown, (node_id, shown)


def test_plan_facts_answer_only_checks_of_the_tree_with_their_own_choices(plans):
    for name, (path, _) in plans.items():
        facts = plan_facts(read_plan(path))
        for key, fact in facts.items():
            assert key in TREE.checks, (name, key)
            assert fact.value in [c.value for c in TREE.checks[key].choices], (name, key, fact)
            assert fact.why.strip(), (name, key)


RAW = yaml.safe_load(default_doctor_path().read_text())


def broken(edit) -> dict:
    raw = copy.deepcopy(RAW)
    edit(raw)
    return raw


def _set(path: list, value):
    def edit(raw):
        target = raw
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return edit


def _delete(path: list):
    def edit(raw):
        target = raw
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]
    return edit


def _add_orphan(raw):
    raw["nodes"]["orphan"] = {"kind": "cause", "title": "t", "cause": "c", "fix": "f", "section": "§1"}


BROKEN_TREES = [
    ("goto to nowhere", _set(["nodes", "parallelism", "next", 1, "goto"], "nowhere"),
     ["nodes.parallelism.next[1].goto", "nowhere", "expected the id of a node"]),
    ("an unquoted yes is YAML's true, not the answer yes", _set(["nodes", "balanced", "choices", 0, "value"], True),
     ["nodes.balanced.choices.0.value", "valid string"]),
    ("a compared value that is no choice", _set(["nodes", "fits_one_gpu", "next", 0, "when", "value"], "maybe"),
     ["nodes.fits_one_gpu.next[0]: fits_one_gpu", "maybe", "yes, no, unsure"]),
    ("a condition on something that is not a check", _set(["nodes", "parallelism", "next", 0, "when", "var"], "tp"),
     ["nodes.parallelism.next[0]: tp", "expected the id of a check"]),
    ("an answer no edge takes", _delete(["nodes", "parallelism", "next", 1]),
     ["nodes.parallelism.choices", "copies", "no edge takes this answer"]),
    ("the catch-all before another edge", lambda raw: raw["nodes"]["fits_one_gpu"]["next"].reverse(),
     ["nodes.fits_one_gpu.next[0]", "catch-all"]),
    ("a cycle", _set(["nodes", "balanced", "next", 1, "goto"], "fits_one_gpu"), ["a cycle", "fits_one_gpu"]),
    ("a leaf without its fix", _delete(["nodes", "tp_when_fits", "fix"]), ["nodes.tp_when_fits.fix", "missing"]),
    ("a section without §", _set(["nodes", "tp_when_fits", "section"], "section 5"),
     ["nodes.tp_when_fits.section", "§"]),
    ("an unknown key in a node", _set(["nodes", "tp_when_fits", "severity"], "high"),
     ["nodes.tp_when_fits.severity"]),
    ("a text reading an unknown name", _set(["nodes", "tp_when_fits", "fix"], "use {{ replicas }} replicas"),
     ["nodes.tp_when_fits.fix", "replicas", "check ids and plan"]),
    ("a text reading an unknown plan figure", _set(["nodes", "tp_when_fits", "fix"], "{{ plan.gpu_count }}"),
     ["nodes.tp_when_fits.fix", "plan.gpu_count", "plan.gpus_total"]),
    ("a node no symptom reaches", _add_orphan, ["nodes.orphan", "no symptom's walk reaches"]),
    ("a symptom starting nowhere", _set(["symptoms", 0, "start"], "nowhere"), ["symptoms[0].start", "nowhere"]),
    ("a check id that is no plain --answer key", lambda raw: raw["nodes"].__setitem__("Fits One", {}),
     ["nodes", "Fits One"]),
]


@pytest.mark.parametrize("edit,words", [(e, w) for _, e, w in BROKEN_TREES], ids=[n for n, _, _ in BROKEN_TREES])
def test_a_broken_tree_is_one_line_naming_the_node(edit, words):
    with pytest.raises(InputError) as caught:
        validate_doctor_tree(broken(edit), "doctor.yaml")
    line = caught.value.line()
    assert "\n" not in line and line.startswith("doctor.yaml")
    for w in words:
        assert w in line, (w, line)


# -- every symptom walked to a cause and its fix, non-interactively


WALKS = [
    # symptom, answers, leaf, a § the guide gives it, words of the fix
    ("slower_on_more_gpus", {"fits_one_gpu": "yes", "parallelism": "split"}, "tp_when_fits", "§5", ["replicas of 1 GPU"]),
    ("slower_on_more_gpus", {"fits_one_gpu": "yes", "parallelism": "copies", "balanced": "no"}, "unbalanced", "§5",
     ["load balancer"]),
    ("slower_on_more_gpus", {"fits_one_gpu": "no", "tp_across_nodes": "yes"}, "tp_spans_nodes", "§3",
     ["TP within a node, PP across nodes"]),
    ("slower_on_more_gpus", {"fits_one_gpu": "no", "tp_across_nodes": "no", "intra_node_link": "pcie"}, "tp_on_pcie",
     "§3", ["smallest split that fits"]),
    ("slower_on_more_gpus", {"fits_one_gpu": "no", "tp_across_nodes": "no", "intra_node_link": "nvlink",
                             "pipeline": "yes"}, "pipeline_bubbles", "§3", ["larger in-flight batches"]),
    ("multi_node_hang", {"multi_node": "yes", "fits_one_node": "yes"}, "avoid_multi_node", "§4",
     ["don't go multi-node"]),
    ("multi_node_hang", {"multi_node": "yes", "fits_one_node": "no", "same_stack": "unsure"}, "stack_mismatch", "§4",
     ["image, driver and ports machine by machine", "minimal communication test"]),
    ("multi_node_hang", {"multi_node": "yes", "fits_one_node": "no", "same_stack": "yes", "ports_open": "no"},
     "ports_blocked", "§11", ["6379"]),
    ("multi_node_hang", {"multi_node": "yes", "fits_one_node": "no", "same_stack": "yes", "ports_open": "yes",
                         "node_network": "ib_roce", "nccl_ifname": "no"}, "wrong_interface", "§11",
     ["NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME", "VLLM_HOST_IP"]),
    ("multi_node_hang", {"multi_node": "yes", "fits_one_node": "no", "same_stack": "yes", "ports_open": "yes",
                         "node_network": "one_ethernet", "join_order": "no"}, "start_order", "§4", ["serve/head.sh first"]),
    ("multi_node_hang", {"multi_node": "yes", "fits_one_node": "no", "same_stack": "yes", "ports_open": "yes",
                         "node_network": "several_ethernet", "nccl_ifname": "yes", "join_order": "yes"}, "comm_test",
     "§11", ["minimal communication test"]),
    ("overwhelmed_after_scale_out", {"cold_vs_ramp": "slower"}, "cold_start_vs_ramp", "§7",
     ["minimum of replicas warm", "managed API fallback"]),
    ("overwhelmed_after_scale_out", {"cold_vs_ramp": "faster", "warm_floor": "none"}, "scale_to_zero", "§7",
     ["minimum replica count"]),
    ("overwhelmed_after_scale_out", {"cold_vs_ramp": "faster", "warm_floor": "fewer", "scale_signal": "cpu"},
     "wrong_scale_signal", "§7", ["vllm:num_requests_waiting"]),
    ("overwhelmed_after_scale_out", {"cold_vs_ramp": "faster", "warm_floor": "all", "peak_measured": "no"},
     "sized_on_average", "§2", ["P99"]),
    ("errors_during_rollout", {"replicas_online": "one"}, "single_replica", "§10", ["at least two replicas"]),
    ("errors_during_rollout", {"replicas_online": "several", "readiness_inference": "no"}, "readiness_not_inference",
     "§7", ["real inference", "liveness only checks the process"]),
    ("errors_during_rollout", {"replicas_online": "several", "readiness_inference": "yes", "graceful_shutdown": "no"},
     "no_graceful_shutdown", "§11", ["preStop", "--shutdown-timeout"]),
    ("errors_during_rollout", {"replicas_online": "several", "readiness_inference": "yes", "graceful_shutdown": "yes",
                               "spare_replica": "no"}, "no_spare_replica", "§5", ["N + 1"]),
    ("bill_too_high", {"work_kind": "service", "utilization": "below_half", "replicas_follow_traffic": "always_on"},
     "idle_share", "§8", ["average utilization", "time of day"]),
    ("bill_too_high", {"work_kind": "service", "utilization": "below_half", "replicas_follow_traffic": "follow"},
     "oversized_cards", "§8", ["better-fitting card type"]),
    ("bill_too_high", {"work_kind": "service", "utilization": "above_half"}, "gpu_hours", "§8",
     ["throughput per card"]),
    ("bill_too_high", {"work_kind": "job", "cards_after_job": "whole_month"}, "idle_between_jobs", "§12",
     ["release them when it ends", "managed batch API"]),
    ("bill_too_high", {"work_kind": "job", "cards_after_job": "released"}, "gpu_hours", "§8",
     ["throughput per card"]),
]


@pytest.mark.parametrize("symptom,answers,leaf,section,words", WALKS, ids=[f"{w[0]}-{w[2]}" for w in WALKS])
def test_each_symptom_walks_to_its_cause_and_fix(symptom, answers, leaf, section, words):
    out = doctor_json("--symptom", symptom, *answer_args(answers))
    assert out["symptom"] == symptom and out["leaf"] == leaf and out["found"] is True
    assert section in out["section"]
    assert [(s["node"], s["value"], s["source"]) for s in out["path"]] == [(k, v, "answer") for k, v in answers.items()]
    labels = {c.value: c.label for c in TREE.checks[out["path"][0]["node"]].choices}
    assert out["path"][0]["why"] == labels[out["path"][0]["value"]]  # the answer's own label
    assert out["cause"] and "plan" not in out
    for w in words:
        assert w in out["fix"], (w, out["fix"])


def test_every_walk_of_the_tree_gives_the_same_leaf_through_the_command_line():
    for w in walks(TREE):
        out = doctor_json("--symptom", w.symptom, *answer_args(dict(w.answers)))
        assert out["leaf"] == w.leaf, w
        assert [s["node"] for s in out["path"]] == [k for k, _ in w.answers]


def test_human_output_says_symptom_path_cause_and_fix():
    run = doctor("--symptom", "errors_during_rollout", "--answer", "replicas_online=one")
    assert run.code == 0 and run.err == ""
    text = flat(run.out)
    assert text.startswith("Symptom: Many 5xx / errors during a rolling upgrade (§11)")
    assert "replicas_online = one — answer: One" in text
    assert "Cause (§5, §10, §11): One replica: every restart is an outage" in text
    assert "Fix: Run at least two replicas" in text


def test_answers_off_the_walk_are_said():
    out = doctor_json("--symptom", "bill_too_high", "--answer", "work_kind=service", "--answer", "utilization=above_half",
                      "--answer", "pipeline=yes")
    assert out["leaf"] == "gpu_hours" and out["unused_answers"] == ["pipeline"]
    assert "answers not used on this walk: pipeline" in flat(doctor(
        "--symptom", "bill_too_high", "--answer", "work_kind=service", "--answer", "utilization=above_half",
        "--answer", "pipeline=yes").out)


# -- plan.json answers every check it can


def test_tp_when_the_model_fits_is_found_from_plan_json_alone(plans):
    path, data = plans["tp_forced"]
    fit = fit_of(data)
    assert fit["fits_one_gpu"] is True and data["tp"] == 4  # the scenario: TP 4 forced on a model that fits
    out = doctor_json("--symptom", "slower_on_more_gpus", "--plan", str(path))
    assert out["leaf"] == "tp_when_fits" and out["plan"] == str(path)
    assert [(s["node"], s["value"], s["source"]) for s in out["path"]] == [
        ("fits_one_gpu", "yes", "plan.json"), ("parallelism", "split", "plan.json")]
    assert out["path"][0]["why"].startswith(f"TP 4 on {data['gpu']}; the model fits one card")
    assert f"{data['gpus_total']} replicas of 1 GPU (TP 1)" in out["fix"]
    human = flat(doctor("--symptom", "slower_on_more_gpus", "--plan", str(path)).out)
    assert f"fits_one_gpu = yes — from plan.json: TP 4 on {data['gpu']}; the model fits one card" in human


def test_cold_start_slower_than_the_ramp_is_found_from_plan_json_alone(plans):
    path, data = plans["bursty"]
    fit = fit_of(data)
    cold, ramp = data["cold_start"]["total_s"], fit["ramp_s"]
    assert data["form"] != "managed_api" and cold > ramp > 0  # a burst climbs faster than a replica starts
    out = doctor_json("--symptom", "overwhelmed_after_scale_out", "--plan", str(path))
    assert out["leaf"] == "cold_start_vs_ramp"
    step = out["path"][0]
    assert (step["node"], step["value"], step["source"]) == ("cold_vs_ramp", "slower", "plan.json")
    assert f"about {cold:,.0f} s" in step["why"] and f"{ramp:,.0f} s" in step["why"] and "bursty" in step["why"]
    assert f"about {round(cold):,} s" in out["cause"] and f"about {round(ramp):,} s" in out["cause"]
    assert f"the {data['replicas']} replicas of the plan" in out["fix"]


def test_a_low_warm_minimum_with_a_long_cold_start_keeps_more_warm(plans, tmp_path):
    path, data = plans["bursty"]
    edited = {**data, "min_replicas": 1}  # a user lowered the autoscaler's minimum in the plan
    (tmp_path / "plan.json").write_text(json.dumps(edited))
    out = doctor_json("--symptom", "overwhelmed_after_scale_out", "--plan", str(tmp_path / "plan.json"))
    assert out["leaf"] == "cold_start_vs_ramp"
    assert f"at the {data['replicas']} replicas of the plan, whose minimum is 1" in out["fix"]
    # new replicas in time, but none kept warm: a whole cold start on the first load
    path, data = plans["diurnal"]
    (tmp_path / "plan.json").write_text(json.dumps({**data, "min_replicas": 0}))
    out = doctor_json("--symptom", "overwhelmed_after_scale_out", "--plan", str(tmp_path / "plan.json"))
    assert [s["value"] for s in out["path"]] == ["faster", "none"] and out["leaf"] == "scale_to_zero"
    assert f"about {round(data['cold_start']['total_s']):,} s" in out["cause"]


def test_a_plan_that_cannot_settle_a_check_stops_there_in_one_line(plans):
    path, data = plans["diurnal"]
    assert data["min_replicas"] < data["replicas"] and fit_of(data)["cold_start_exceeds_ramp"] is False
    run = doctor("--symptom", "overwhelmed_after_scale_out", "--plan", str(path))
    assert_one_line_error(run, "--answer scale_signal", "queue|cpu", "What does the autoscaler scale on?")
    out = doctor_json("--symptom", "overwhelmed_after_scale_out", "--plan", str(path), "--answer", "scale_signal=queue",
                      "--answer", "peak_measured=yes")
    assert [(s["node"], s["source"]) for s in out["path"]] == [
        ("cold_vs_ramp", "plan.json"), ("warm_floor", "plan.json"), ("scale_signal", "answer"), ("peak_measured", "answer")]
    assert out["path"][1]["why"] == f"the autoscaler's minimum keeps {data['min_replicas']} of {data['replicas']} replica(s) warm"
    assert out["leaf"] == "overwhelmed_beyond" and out["found"] is False


def test_a_single_replica_is_found_from_plan_json_alone(plans):
    path, data = plans["single"]
    assert data["replicas"] == 1
    out = doctor_json("--symptom", "errors_during_rollout", "--plan", str(path))
    assert out["leaf"] == "single_replica"
    assert out["path"] == [{"node": "replicas_online", "value": "one", "why": "1 replica serves online traffic",
                            "source": "plan.json"}]
    assert f"takes {data['gpus_per_replica']} more GPU(s)" in out["fix"]


def test_the_idle_share_is_found_from_plan_json_alone(plans):
    path, data = plans["tp_forced"]
    bill, idle = data["cost"]["gpu_bill_usd_month"], data["cost"]["idle_usd_month"]
    assert idle / bill > 0.5  # 8 always-on GPUs for a light load
    out = doctor_json("--symptom", "bill_too_high", "--plan", str(path))
    assert out["leaf"] == "idle_share" and [s["source"] for s in out["path"]] == ["plan.json"] * 3
    assert out["path"][0]["value"] == "service"
    assert out["path"][1]["why"].startswith(f"${idle:,.0f} of the ${bill:,.0f} monthly GPU bill is idle "
                                            f"({idle / bill * 100:.0f} %)")
    assert f"${idle:,.2f} of the ${bill:,.2f} monthly GPU bill is idle" in out["cause"]
    assert f"{data['gpus_total']} GPUs on for 730 h" in out["path"][2]["why"]
    # a busy plan: the same symptom is GPU hours of real work, not idle
    path, data = plans["busy"]
    assert data["cost"]["idle_usd_month"] / data["cost"]["gpu_bill_usd_month"] < 0.5
    out = doctor_json("--symptom", "bill_too_high", "--plan", str(path))
    assert out["leaf"] == "gpu_hours" and out["path"][1]["value"] == "above_half"


def test_a_multi_node_plan_answers_what_it_knows_and_asks_the_rest(plans):
    path, data = plans["multi_node"]
    assert data["nodes_per_replica"] > 1
    run = doctor("--symptom", "multi_node_hang", "--plan", str(path))
    assert_one_line_error(run, "--answer same_stack", "yes|no|unsure")
    out = doctor_json("--symptom", "multi_node_hang", "--plan", str(path), "--answer", "same_stack=no")
    assert [(s["node"], s["value"], s["source"]) for s in out["path"]] == [
        ("multi_node", "yes", "plan.json"), ("fits_one_node", "no", "plan.json"), ("same_stack", "no", "answer")]
    assert out["leaf"] == "stack_mismatch"


def test_an_answer_wins_over_the_plan_and_says_what_the_plan_said(plans):
    path, _ = plans["tp_forced"]
    out = doctor_json("--symptom", "slower_on_more_gpus", "--plan", str(path), "--answer", "parallelism=copies",
                      "--answer", "balanced=no")
    step = out["path"][1]
    assert (step["node"], step["value"], step["source"]) == ("parallelism", "copies", "answer")
    assert "plan.json says split" in step["why"]
    assert out["leaf"] == "unbalanced"


def test_plan_json_alone_lists_the_causes_it_shows(plans):
    path, _ = plans["tp_forced"]
    out = doctor_json("--plan", str(path))
    assert {f["leaf"] for f in out["findings"]} == {"tp_when_fits", "idle_share"}
    assert all(s["source"] == "plan.json" for f in out["findings"] for s in f["path"])
    assert [r["leaf"] for r in out["ruled_out"]] == ["not_multi_node"]  # one node per replica
    assert {n["symptom"]: n["next"]["node"] for n in out["needs_answers"]} == {
        "overwhelmed_after_scale_out": "peak_measured", "errors_during_rollout": "readiness_inference"}
    human = flat(doctor("--plan", str(path)).out)
    assert "Causes plan.json names by itself (2)" in human and "Tensor parallelism for a model that fits one card" in human
    assert "--symptom errors_during_rollout --answer readiness_inference=yes|no" in human
    single = doctor_json("--plan", str(plans["single"][0]))
    assert "single_replica" in {f["leaf"] for f in single["findings"]}


def test_a_managed_api_plan_shows_no_self_hosting_cause(plans):
    path, data = plans["managed"]
    assert data["form"] == "managed_api"
    out = doctor_json("--plan", str(path))  # §11 is about self-hosted serving: the vendor runs the rest (§6)
    assert out["applies"] is False and "managed API" in out["reason"] and "findings" not in out


# -- bad input: one line, exit 2


def _write(tmp_path: Path, content: bytes | str, name: str = "plan.json") -> str:
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return str(path)


def test_a_bad_plan_json_is_one_line_naming_the_file_and_key(plans, tmp_path):
    _, data = plans["tp_forced"]
    cases = [
        (_write(tmp_path, "{not json"), ["plan.json", "is not JSON", "line 1"]),
        (_write(tmp_path, b"\xff\xfe{}", "latin.json"), ["latin.json", "not UTF-8"]),
        (_write(tmp_path, "[1, 2]", "list.json"), ["list.json", "a JSON list", "plan --json"]),
        (_write(tmp_path, json.dumps({**data, "tp": "four"}), "tp.json"),
         ["tp.json: tp", "'four'", "valid integer", "schema plan"]),
        (_write(tmp_path, json.dumps({**data, "cost": {**data["cost"], "idle_usd_month": [1]}}), "cost.json"),
         ["cost.json: cost.idle_usd_month", "valid number"]),
        (_write(tmp_path, json.dumps({**data, "colour": "red"}), "extra.json"), ["extra.json: colour", "unknown key"]),
        (_write(tmp_path, json.dumps({k: v for k, v in data.items() if k != "replicas"}), "short.json"),
         ["short.json: replicas", "missing", "field required"]),
        (str(tmp_path / "absent.json"), ["--plan", "absent.json", "could not be read"]),
        (str(tmp_path), ["--plan", "is a folder"]),
    ]
    for path, words in cases:
        run = doctor("--symptom", "bill_too_high", "--plan", path)
        assert_one_line_error(run, *words)


def test_a_plan_json_fifo_without_writer_does_not_hang(tmp_path):
    import os

    fifo = tmp_path / "plan.json"
    os.mkfifo(fifo)
    run = subprocess.run([sys.executable, "-m", "wizard", "doctor", "--symptom", "bill_too_high", "--plan", str(fifo)],
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert run.returncode == 2 and len(run.stderr.strip().splitlines()) == 1 and "is not JSON" in run.stderr


@pytest.mark.parametrize("args,words", [
    (["--answer", "nope=yes"], ["--answer", "'nope'", "unknown check", "fits_one_gpu", "utilization"]),
    (["--answer", "utilisation=below_half"], ["'utilisation'", "did you mean utilization?"]),
    (["--answer", "fits_one_gpu=maybe"], ["--answer fits_one_gpu", "'maybe'", "yes, no, unsure"]),
    (["--answer", "fits_one_gpu=True"], ["'True'", "yes, no, unsure"]),
    (["--answer", "fits_one_gpu"], ["--answer", "expected KEY=VALUE"]),
    (["--answer", "fits_one_gpu=yes", "--answer", "fits_one_gpu=no"], ["given twice"]),
    (["--symptom", "slow"], ["--symptom", "'slow'", "slower_on_more_gpus", "bill_too_high"]),
])
def test_bad_answers_and_symptoms_are_one_line_naming_what_is_accepted(args, words):
    if "--symptom" not in args:
        args = ["--symptom", "slower_on_more_gpus", *args]
    assert_one_line_error(doctor(*args), *words)


def test_without_a_terminal_and_without_answers_it_says_the_question_and_exits_2():
    for args, words in [
        ([], ["--symptom", "'missing'", *DOCTOR_SYMPTOMS]),
        (["--symptom", "multi_node_hang"], ["--answer multi_node", "several machines?", "multi_node=yes|no"]),
        (["--symptom", "bill_too_high", "--answer", "work_kind=service", "--answer", "utilization=below_half"],
         ["--answer replicas_follow_traffic", "always_on|follow"]),
    ]:
        run = subprocess.run([sys.executable, "-m", "wizard", "doctor", *args], stdin=subprocess.DEVNULL,
                             capture_output=True, text=True, timeout=60, cwd=ROOT)
        assert run.returncode == 2, run
        assert run.stdout == "" and "Traceback" not in run.stderr
        lines = run.stderr.strip().splitlines()
        assert len(lines) == 1, run.stderr
        for w in words:
            assert w in lines[0], (w, lines[0])


def test_json_never_prompts_even_on_a_terminal(monkeypatch):
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(sys, "stdin", Tty(""))
    assert_one_line_error(doctor("--symptom", "bill_too_high", "--json"), "--answer work_kind")


# -- on a terminal: questions, Back, Ctrl+C


def interact(keys: str, *args, symptom=None, plan=None, answers=()) -> tuple[int, str]:
    buf = io.StringIO()
    with create_pipe_input() as pipe:
        pipe.send_text(keys)
        code = run_doctor(symptom, plan, list(answers), False, interactive=True, input=pipe, output=DummyOutput(),
                          console=Console(file=buf, width=200))
    return code, flat(buf.getvalue())


def test_a_terminal_asks_the_symptom_and_each_check():
    # symptom: the first (slower on several); fits one card: yes (first); split (first)
    code, text = interact(ENTER + ENTER + ENTER)
    assert code == 0, text
    assert "which symptom do you see?" in text
    assert "[1] Is the model small enough to fit one card? Weights + KV cache" in text and "[see §2, §5]" in text
    assert "[2] How do the several cards serve the model" in text
    assert "Cause (§5, §10, §11): Tensor parallelism for a model that fits one card" in text


def test_back_returns_to_the_previous_check_and_then_to_the_symptom():
    keys = (ENTER  # slower on several
            + ENTER  # fits one card: yes
            + DOWN + DOWN + ENTER  # at "split or copied": ← back
            + DOWN + DOWN + DOWN + ENTER  # at "fits one card": ← back (yes, no, unsure, back) → the symptom again
            + DOWN * 4 + ENTER  # bill far above expectation
            + ENTER  # an online service
            + DOWN + ENTER)  # utilization: half or more
    code, text = interact(keys)
    assert code == 0, text
    assert "back to: Is the model small enough to fit one card?" in text and "back to: the symptom" in text
    assert "Cause (§8): Busy cards: the bill is GPU hours" in text


def test_a_terminal_takes_the_plans_answers_without_asking(plans):
    path, _ = plans["tp_forced"]
    code, text = interact(ENTER, plan=str(path))  # only the symptom is asked: the plan answers both checks
    assert code == 0, text
    assert "fits_one_gpu = yes — from plan.json" in text and "[1]" not in text
    assert "Tensor parallelism for a model that fits one card" in text
    plan = read_plan(path)
    marked = [sid for label, sid in symptom_choices(TREE, {}, plan_facts(plan), plan_figures(plan))
              if label.endswith("— plan.json shows a cause")]
    assert marked == ["slower_on_more_gpus", "bill_too_high"]
    assert all(not label.endswith("cause") for label, _ in symptom_choices(TREE, {}, {}, None))


def test_ctrl_c_on_a_terminal_exits_130_without_a_traceback():
    code, text = interact(ENTER + CTRL_C)
    assert code == 130 and "doctor: interrupted" in text and "Traceback" not in text
    code, text = interact(CTRL_C, symptom="bill_too_high", answers=["work_kind=service", "utilization=below_half"])
    assert code == 130 and "[1] Do the replicas follow the traffic" in text


def test_a_plan_offers_only_the_symptoms_that_can_happen_to_it(tmp_path):
    """A batch job has no rolling upgrade and no autoscaler: with an offline plan.json those symptoms are not walked,
    and asking for one is one line naming those that apply; a managed API plan is out of §11's scope (§6)."""
    from cli_run import run_main
    from wizard.session.plan import build_plan
    from wizard.session.session import run_answers
    from wizard.specs.contracts import to_json

    def plan_file(name: str) -> str:
        answers = yaml.safe_load((Path(__file__).parent / "scenarios" / f"{name}.yaml").read_text())
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(to_json(build_plan(run_answers(answers)))))
        return str(path)

    offline = plan_file("offline_research")
    r = run_main("doctor", "--plan", offline, "--json")
    assert r.code == 0, r.err
    out = r.json()
    walked = {item["symptom"] for key in ("findings", "ruled_out", "needs_answers") for item in out[key]}
    assert walked and not walked & {"errors_during_rollout", "overwhelmed_after_scale_out"}
    refused = run_main("doctor", "--symptom", "errors_during_rollout", "--plan", offline)
    assert refused.code == 2 and len(refused.err.strip().splitlines()) == 1
    assert "offline batch job" in refused.err and "bill_too_high" in refused.err
    # the bill of a batch job: the plan's "no idle" holds while the job runs; whether the cards are kept after it
    # is asked, not read from the plan's 100 % as busy cards (§8, §12)
    bill = run_main("doctor", "--symptom", "bill_too_high", "--plan", offline, "--json")
    assert bill.code == 2 and "--answer cards_after_job" in bill.err and "whole_month|released" in bill.err
    kept = run_main("doctor", "--symptom", "bill_too_high", "--plan", offline, "--answer", "cards_after_job=whole_month",
                    "--json").json()
    assert kept["leaf"] == "idle_between_jobs" and kept["path"][0]["source"] == "plan.json"
    # with a described job the cause quotes its hours and bill against the month's (§8)
    answers = yaml.safe_load((Path(__file__).parent / "scenarios" / "offline_research.yaml").read_text())
    job = tmp_path / "job.json"
    job.write_text(json.dumps(to_json(build_plan(run_answers({**answers, "job_requests": 200_000})))))
    job_plan = json.loads(job.read_text())
    assert job_plan["cost"]["job_hours"] > 0
    cause = run_main("doctor", "--symptom", "bill_too_high", "--plan", str(job), "--answer",
                     "cards_after_job=whole_month", "--json").json()["cause"]
    assert f"on its {job_plan['gpus_total']} GPUs for about $" in cause and "kept all month" in cause
    managed = run_main("doctor", "--plan", plan_file("no_ops_team"), "--json")
    assert managed.code == 0 and managed.json()["applies"] is False and "§6" in managed.json()["reason"]
