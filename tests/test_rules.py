"""The guide's decision rules on trap scenarios (tests/rules/): each file states, before it was run, the answer the
guide gives and its §, as `expect:` beside the `answers:`; this test plans the answers and checks every expectation.

Expectation keys: form, tp, replicas (a number or [min, max]), cost (key → value or {max}), cost_present (cost keys
with a figure), facts (fit facts of the path), warnings_include,
warnings_exclude, path_excludes (nodes not visited), path_value (node → value), alternative (form → text in its
reason), summary_contains, warning_names_fact (warning id → fact whose value its message names),
replicas_as_without (an answer whose removal must not change the replicas), error (field, contains).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from cli_run import run_main

RULES = Path(__file__).parent / "rules"
KNOWN = {"form", "tp", "replicas", "facts", "cost", "cost_present", "warnings_include", "warnings_exclude", "path_excludes", "path_value",
         "alternative", "summary_contains", "warning_names_fact", "replicas_as_without", "error"}


def cases() -> list[str]:
    return sorted(p.stem for p in RULES.glob("*.yaml"))


def plan_of(answers: dict, tmp_path: Path, name: str = "answers.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(answers))
    return run_main("plan", "--answers", str(path), "--json")


def facts_of(plan: dict) -> dict:
    return next((s["value"] for s in plan["path"] if isinstance(s["value"], dict) and "forced_replicas" in s["value"]),
                {})


def test_every_rule_file_states_its_section_and_known_expectations():
    assert len(cases()) >= 9
    for name in cases():
        text = (RULES / f"{name}.yaml").read_text()
        assert text.startswith("# §"), name  # the rule it tests, first
        data = yaml.safe_load(text)
        assert set(data) == {"expect", "answers"}, name
        assert set(data["expect"]) <= KNOWN and data["expect"], name


@pytest.mark.parametrize("name", cases())
def test_the_plan_follows_the_rule(name, tmp_path):
    data = yaml.safe_load((RULES / f"{name}.yaml").read_text())
    expect, answers = data["expect"], data["answers"]
    r = plan_of(answers, tmp_path)
    if "error" in expect:
        assert r.code == 2 and r.out == "", (r.code, r.out)
        line = r.err.strip()
        assert len(line.splitlines()) == 1 and expect["error"]["field"] in line and expect["error"]["contains"] in line
        return
    assert r.code == 0, r.err
    plan = r.json()
    facts = facts_of(plan)
    warnings = {w["id"]: w["message"] for w in plan["warnings"]}
    visited = {s["node"]: s["value"] for s in plan["path"]}
    assert plan["form"] == expect.get("form", plan["form"])
    if "tp" in expect:
        assert plan["tp"] == expect["tp"]
    if "replicas" in expect:
        lo, hi = expect["replicas"] if isinstance(expect["replicas"], list) else (expect["replicas"],) * 2
        assert lo <= plan["replicas"] <= hi, plan["replicas"]
    cost = plan.get("cost") or {}
    for key, value in expect.get("cost", {}).items():
        if isinstance(value, dict):
            assert cost[key] is not None and cost[key] <= value["max"], (key, cost[key])
        else:
            assert cost[key] == value, (key, cost[key])
    for key in expect.get("cost_present", []):
        assert cost.get(key) is not None, key
    for key, value in expect.get("facts", {}).items():
        assert facts[key] == value, (key, facts[key])
    for wid in expect.get("warnings_include", []):
        assert wid in warnings, (wid, sorted(warnings))
    for wid in expect.get("warnings_exclude", []):
        assert wid not in warnings, (wid, warnings.get(wid))
    for node in expect.get("path_excludes", []):
        assert node not in visited, node
    for node, value in expect.get("path_value", {}).items():
        assert visited.get(node) == value, (node, visited.get(node))
    for form, words in expect.get("alternative", {}).items():
        reason = next(a["why_not"] for a in plan["alternatives"] if a["form"] == form)
        assert words in reason, reason
    if "summary_contains" in expect:
        assert expect["summary_contains"] in plan["summary"], plan["summary"]
    for wid, fact in expect.get("warning_names_fact", {}).items():
        assert facts[fact] and str(facts[fact]) in warnings[wid], (facts[fact], warnings[wid])
        assert "0 sequence" not in warnings[wid]
    if "replicas_as_without" in expect:
        key = expect["replicas_as_without"]
        other = plan_of({k: v for k, v in answers.items() if k != key}, tmp_path, "without.yaml")
        assert other.code == 0, other.err
        assert other.json()["replicas"] == plan["replicas"]
