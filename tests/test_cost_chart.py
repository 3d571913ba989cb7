"""Issue #16, the pictures: cost against daily requests (self-hosted replicas as steps, the managed API as a line,
the break-even marked) and the memory bar per GPU — in `plan`'s summary and as cost-chart.svg in a starter repo.

Done means the chart's break-even is the plan's own figure; its steps are one replica's bill each; no managed line
where the data must stay in-house; the SVG is self-contained XML with its marker and labels; the terminal version
fits 80 columns and reads without colour.
"""

from __future__ import annotations

import dataclasses
import math
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from rich.cells import cell_len

from cli_run import run_cli, run_main
from wizard.artifacts.chart_svg import starter_svg
from wizard.artifacts.cost_chart import cost_chart, first_crossing, rounding_slack
from wizard.artifacts.memory_bar import cells, memory_bar
from wizard.sizing.cost import DAYS_PER_MONTH
from wizard.specs.contracts import Cost, Plan, adapter

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "tests" / "scenarios"
ALL = sorted(p.stem for p in SCENARIOS.glob("*.yaml"))
SVG = "{http://www.w3.org/2000/svg}"
STATED = ("average_not_p99", "llama8b_high_traffic")  # a break-even within the plan's capacity


def plan_of(name: str, *sets: str) -> Plan:
    args = ["plan", "--answers", str(SCENARIOS / f"{name}.yaml"), "--json"]
    for s in sets:
        args += ["--set", s]
    r = run_main(*args)
    assert r.code == 0, r.err
    return adapter("plan").validate_json(r.out)


def reaching_the_next_replica(name: str) -> Plan:
    """The scenario's plan at a daily volume whose chart reaches the first replica added: the chart draws it when the
    plan's capacity is within 2.5 times its range, which runs to 2.5 times the volume (cost_chart), so at least
    capacity / 6.25 requests a day — the scenario's own volume where that already holds."""
    plan = plan_of(name)
    capacity = plan.cost.capacity_daily_requests
    daily = plan.step("daily_requests")
    if capacity and isinstance(daily, int) and 6.25 * daily <= capacity:
        plan = plan_of(name, f"daily_requests={math.floor(capacity / 6.25) + 1}")
    return plan


def repo_of(name: str, out: Path) -> Path:
    r = run_main("plan", "--answers", str(SCENARIOS / f"{name}.yaml"), "--out", str(out))
    assert r.code == 0, r.err
    return out


@pytest.mark.parametrize("name", ALL)
def test_the_charts_break_even_is_the_plans_own_figure(name):
    plan = plan_of(name)
    chart = cost_chart(plan)
    c = plan.cost
    if chart is None:  # managed API, offline work, no GPU price: no chart to draw (cost_chart's docstring)
        assert plan.form == "managed_api" or plan.exposure == "none" or not isinstance(c, Cost)
        return
    assert isinstance(c, Cost)
    assert chart.break_even == c.break_even_daily_requests
    crossing = first_crossing(chart)
    if c.break_even_daily_requests is None:
        assert crossing is None  # the series never meet on the chart either
    else:
        assert crossing is not None
        assert abs(crossing - c.break_even_daily_requests) <= rounding_slack(chart, crossing)
    # at the plan's own volume the chart reads the plan's two totals
    daily = chart.daily_requests
    assert daily is not None
    assert chart.self_hosted(daily) == c.total_usd_month
    managed = chart.managed(daily)
    if plan.step("data_residency") is True:
        assert managed is None and chart.break_even is None
    else:
        assert managed is not None and c.managed_total_usd_month is not None
        assert managed == pytest.approx(c.managed_total_usd_month, abs=0.01)


@pytest.mark.parametrize("name", STATED)
def test_the_break_even_is_drawn_where_the_plan_says(name):
    plan = plan_of(name)
    chart = cost_chart(plan)
    assert chart is not None and chart.break_even is not None
    be = chart.break_even
    assert be == plan.cost.break_even_daily_requests
    slack = rounding_slack(chart, be)
    # below it the managed API is cheaper, at and past it (within the plan's rounding) self-hosting is no dearer
    assert chart.self_hosted(be - slack) > chart.managed(be - slack)
    assert chart.self_hosted(be + slack) <= chart.managed(be + slack)
    assert be <= chart.capacity_daily_requests < chart.x_max or be < chart.x_max  # inside the drawn range


@pytest.mark.parametrize("name", ["llama70b_bf16", "average_not_p99", "single_replica_forced"])
def test_each_step_adds_one_replicas_bill_and_one_replicas_capacity(name):
    plan = reaching_the_next_replica(name)
    chart = cost_chart(plan)
    assert chart is not None and len(chart.steps) >= 2, "the first replica added is drawn"
    c = plan.cost
    first = chart.steps[0]
    assert (first.start, first.replicas, first.usd_month) == (0.0, plan.replicas, c.total_usd_month)
    assert first.end == c.capacity_daily_requests
    replica_usd = c.gpu_bill_usd_month / plan.replicas
    for before, after in zip(chart.steps, chart.steps[1:]):
        assert after.replicas == before.replicas + 1
        assert after.usd_month - before.usd_month == pytest.approx(replica_usd)
        assert after.start == before.end
        assert after.end - after.start == pytest.approx(c.capacity_daily_requests / plan.replicas)
    assert chart.steps[-1].end >= chart.x_max
    # staff is priced by exposure, not by replicas: it is in the first step once and never added again
    assert chart.steps[-1].usd_month == pytest.approx(c.total_usd_month + (len(chart.steps) - 1) * replica_usd)


def test_a_crossing_past_the_plans_replicas_is_marked_as_such():
    # the plan states no break-even beyond its own capacity; when a replica at full use costs less than the
    # managed tokens it would carry, the steps do meet the line further on: drawn, and said to need more replicas
    plan = reaching_the_next_replica("single_replica_forced")
    c = plan.cost
    dearer = dataclasses.replace(c, managed_usd_month=round(3 * c.managed_usd_month, 2),
                                 break_even_daily_requests=None, break_even_beyond_capacity=True)
    chart = cost_chart(dataclasses.replace(plan, cost=dearer))
    assert chart is not None and chart.break_even_beyond_capacity
    assert chart.break_even > chart.capacity_daily_requests
    crossing = first_crossing(chart)
    assert crossing is not None and chart.break_even == math.ceil(crossing)
    assert chart.self_hosted(chart.break_even) <= chart.managed(chart.break_even)
    assert chart.self_hosted(chart.break_even - 1) > chart.managed(chart.break_even - 1)
    texts = [e.text for e in ET.fromstring(starter_svg(plan.model, chart, None)).iter(f"{SVG}text")]
    assert f"break-even {chart.break_even:,} requests/day (2 replicas at full use)" in texts


def test_the_managed_line_is_the_plans_price_per_request():
    plan = plan_of("llama70b_bf16")
    chart = cost_chart(plan)
    c = plan.cost
    daily = plan.step("daily_requests")
    assert chart.managed(0) == c.managed_staff_usd_month
    assert chart.managed(2 * daily) - chart.managed(daily) == pytest.approx(c.managed_usd_month)
    assert chart.managed_usd_per_request == pytest.approx(c.managed_usd_month / (daily * DAYS_PER_MONTH))


def test_no_managed_line_where_the_data_must_stay_in_house(tmp_path):
    # the plan still prices the managed API (and here states a break-even): it is not a road for this data
    plan = plan_of("llama8b_high_traffic", "data_residency=true")
    assert plan.cost.break_even_daily_requests is not None
    chart = cost_chart(plan)
    assert chart is not None
    assert chart.managed(1000) is None and chart.break_even is None and first_crossing(chart) is None
    assert "in-house" in chart.managed_note
    root = ET.fromstring(starter_svg(plan.model, chart, memory_bar(plan)))
    ids = {e.get("id") for e in root.iter()}
    assert "self-hosted" in ids and "managed" not in ids and "break-even" not in ids
    assert any("no managed line" in (e.text or "") for e in root.iter(f"{SVG}text"))
    residency = (repo_of("data_residency", tmp_path / "r") / "RATIONALE.md").read_text()
    assert "No managed line: the data must stay in-house" in residency


def test_a_managed_api_ruled_out_for_a_predictable_bill_keeps_its_line_and_says_so():
    plan = plan_of("llama70b_bf16", "needs_predictable_cost=true")
    chart = cost_chart(plan)
    assert chart is not None and chart.managed(0) is not None
    assert chart.break_even == plan.cost.break_even_daily_requests
    assert "predictable bill" in chart.managed_note


@pytest.mark.parametrize("name", ["offline_research", "tiny_offline_cpu", "very_low_traffic", "no_ops_team"])
def test_no_chart_without_a_daily_volume_to_serve_on_replicas_of_its_own(name, tmp_path):
    # offline work is priced per job and per token (§12), a managed-API plan runs no replicas
    plan = plan_of(name)
    assert cost_chart(plan) is None
    repo = repo_of(name, tmp_path / name)
    assert not (repo / "cost-chart.svg").exists()
    assert "cost-chart.svg" not in (repo / "RATIONALE.md").read_text()


def test_the_svg_is_self_contained_xml_with_the_break_even_and_its_labels(tmp_path):
    repo = repo_of("llama8b_high_traffic", tmp_path / "r")
    text = (repo / "cost-chart.svg").read_text()
    root = ET.fromstring(text)
    assert root.tag == f"{SVG}svg"
    # no script, no external font, image or stylesheet: nothing to fetch, nothing to run
    assert not [e for e in root.iter() if e.tag in (f"{SVG}script", f"{SVG}image", f"{SVG}style", f"{SVG}foreignObject")]
    assert not re.search(r"href|url\(|@import|@font-face|https?://(?!www\.w3\.org/2000/svg)", text)
    assert not [a for e in root.iter() for a in e.attrib if a.startswith("on")]
    texts = [e.text or "" for e in root.iter(f"{SVG}text")]
    assert "break-even 3,404,948 requests/day" in texts
    # a replica's daily capacity and the KV cache (so the memory total) come from the load model, whose figures are
    # tested in test_performance.py; the prices and the usable memory do not
    plan = plan_of("llama8b_high_traffic")
    assert plan.cost is not None and plan.cost.capacity_daily_requests and plan.memory is not None
    per_replica = plan.cost.capacity_daily_requests / plan.replicas  # the replicas share the plan's capacity
    total = plan.memory.per_gpu_bytes.total / 2**30
    for label in ("Cost per month against daily requests (guide §8)", "requests a day", "USD a month",
                  "your volume 600,000/day",
                  f"each replica more: +$3,475/month for {per_replica:,.0f} requests/day more"):
        assert label in texts, label
    assert any(t.startswith("managed API with its staff: $750 + $0.23 per 1,000 requests") for t in texts)
    assert any(t.startswith("self-hosted, 6 × 1 × h100-sxm-80gb: $24,599/month") for t in texts)
    assert any(t.startswith(f"Memory per GPU (guide §2), h100-sxm-80gb: {total:.2f} GiB of 71.30 GiB usable") for t in texts)
    ids = {e.get("id") for e in root.iter()}
    assert {"self-hosted", "managed", "break-even", "your-volume", "memory", "memory-weights", "memory-kv-cache",
            "memory-activations", "memory-reserve", "memory-headroom", "usable"} <= ids
    rationale = (repo / "RATIONALE.md").read_text()
    cost = rationale.split("## Cost per month", 1)[1].split("\n## ", 1)[0]
    assert "![cost vs daily requests](cost-chart.svg)" in cost
    assert "Break-even, where the two meet: 3,404,948 requests/day" in cost
    assert "`cost-chart.svg`" in (repo / "README.md").read_text()


def test_the_memory_bar_is_the_plans_memory_section_drawn():
    plan = plan_of("llama70b_bf16")
    bar = memory_bar(plan)
    b = plan.memory.per_gpu_bytes
    assert [p.bytes for p in bar.parts] == [b.weights, b.kv_cache, b.activations, b.reserve]
    assert (bar.total, bar.usable, bar.fits) == (b.total, plan.memory.usable_bytes, True)
    for width in (10, 24, 60):
        drawn = cells(bar, width)
        assert sum(n for _, n in drawn) == width
        assert [p.key for p, n in drawn if p is not None] == ["weights", "kv_cache", "activations", "reserve"]
    root = ET.fromstring(starter_svg(plan.model, cost_chart(plan), bar))
    widths = {e.get("id"): float(e.get("width")) for e in root.iter(f"{SVG}rect") if (e.get("id") or "").startswith("memory-")}
    assert sum(widths.values()) == pytest.approx(680, abs=0.3)  # the bar's span: the usable memory
    assert widths["memory-weights"] / 680 == pytest.approx(b.weights / plan.memory.usable_bytes, abs=0.001)


def test_the_svg_is_byte_stable_and_safe_with_any_model_name():
    plan = plan_of("llama70b_bf16")
    chart, bar = cost_chart(plan), memory_bar(plan)
    assert starter_svg(plan.model, chart, bar) == starter_svg(plan.model, chart, bar)
    hostile = dataclasses.replace(plan, model='evil</text><script>alert(1)</script>&\x01"')
    root = ET.fromstring(starter_svg(hostile.model, chart, bar))  # parses: escaped, controls replaced
    assert not list(root.iter(f"{SVG}script"))


@pytest.mark.parametrize("columns", [80, 60])
def test_the_summary_draws_both_in_the_terminal_width_without_colour(columns):
    r = run_cli("plan", "--answers", str(SCENARIOS / "llama8b_high_traffic.yaml"),
                env={"COLUMNS": str(columns), "NO_COLOR": "1", "FORCE_COLOR": "1"})
    assert r.code == 0, r.err
    assert not re.search(r"\x1b\[[0-9;]*(3[0-9]|4[0-9]|9[0-7])[;m]", r.out), "NO_COLOR: no colour codes"
    plain = re.sub(r"\x1b\[[0-9;]*m", "", r.out)
    assert max(cell_len(line) for line in plain.splitlines()) <= columns
    assert "Cost per month against daily requests (§8)" in plain
    assert "▲" in plain and "break-even 3,404,948 requests/day" in plain and "△" in plain
    assert "█" in plain and "•" in plain  # the steps' area and the managed line, told apart by shape
    # the KV cache (and so the total) follows the batch the load model admits; the usable memory does not
    memory = plan_of("llama8b_high_traffic").memory
    assert memory is not None
    total = memory.per_gpu_bytes.total / 2**30
    assert f"Memory per GPU on h100-sxm-80gb: {total:.2f} GiB of 71.30 GiB usable — fits" in " ".join(plain.split())
    bar_line = next(line for line in plain.splitlines() if line.strip().startswith("WWW"))
    assert re.fullmatch(r"  W+K+A+R+·+", bar_line.rstrip())
    # the chart follows the cost section and the bar the memory section
    assert plain.index("Memory per GPU (§2)") < plain.index("WWW") < plain.index("Throughput and replicas")
    assert plain.index("Cost per month (§8)") < plain.index("Cost per month against") < plain.index("Cold start (§7)")


def test_no_chart_in_the_summary_of_an_offline_plan_but_its_memory_bar():
    r = run_cli("plan", "--answers", str(SCENARIOS / "offline_research.yaml"), env={"COLUMNS": "80"})
    assert r.code == 0, r.err
    assert "Cost per month against daily requests" not in r.out
    assert "Memory per GPU on h100-sxm-80gb" in r.out
