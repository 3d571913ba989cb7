"""One cost (issue #11): every figure a plan shows for the same layout is the same number, wherever it is shown.

The plan's headline (cost.total_usd_month), the fit facts the tree's texts quote (plan_usd_month, best_*_usd),
the alternatives, the warnings, the terminal summary and RATIONALE.md are compared for every scenario of
tests/scenarios/ and for variants that reach the other roads (offline with an fp8 option, a gateway team, a fixed
budget, gpu: auto, managed plans with estimated, listed and given prices). Expected figures are never pinned
from the tool: each check compares two places of one plan, or a figure with its formula.

    same layout  → same total:    best_<form>_usd == plan_usd_month == round(total) when <form>'s best is the plan
    budget       → over_budget  ⇔ total > monthly_budget_usd
    a saving     → always > 0, and = the dearer total − the cheaper one
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from rich.console import Console

from wizard.artifacts.render import render_repo
from wizard.report import plan_renderables
from wizard.session.answers import load_answers_file, recorded, validate_answers
from wizard.session.computes import layout_exposure
from wizard.session.plan import build_plan, exposure_of
from wizard.session.session import run_answers
from wizard.specs.contracts import adapter, json_schema, to_json
from wizard.sizing.cost import STAFF_PERSON_MONTHS, STAFF_USD_PER_PERSON_MONTH
from wizard.tree.loader import load_tree
from wizard.tree.schema import ExposureMap, Recommendation

SCENARIOS = Path(__file__).parent / "scenarios"
NAMES = sorted(p.stem for p in SCENARIOS.glob("*.yaml"))

# Variants that reach what the scenarios alone do not: (name, scenario, changes).
VARIANTS = [
    # offline with a 16-bit checkpoint on gpu: auto: staff of exposure "none" and an fp8 option (issue #11:
    # "an offline plan offers fp8 'saving $248' that costs more")
    ("offline_fp8_option", "offline_research", {"model": "meta-llama/Llama-3.1-8B-Instruct", "gpu": "auto",
                                                "weight_precision": "auto"}),
    ("offline_fp8_h100", "offline_research", {"weight_precision": "auto"}),
    ("tp_with_fp8_option", "llama70b_bf16", {"weight_precision": "auto"}),
    ("gateway_auto", "data_residency", {"gpu": "auto"}),
    ("platform_team", "llama8b_high_traffic", {"ops_capability": "platform"}),
    ("basic_team_tp", "llama70b_bf16", {"ops_capability": "basic", "weight_precision": "auto"}),
    ("fixed_budget", "data_residency", {"budget_mode": "fixed", "monthly_budget_usd": 5000}),
    ("fp8_over_budget", "fp8_checkpoint_as_bf16", {"weight_precision": "auto", "kv_cache_dtype": "fp8",
                                                   "gpu_memory_utilization": 0.9, "budget_mode": "fixed",
                                                   "monthly_budget_usd": 1000}),
    ("bf16_over_budget", "llama70b_bf16", {"weight_precision": "auto", "budget_mode": "fixed",
                                           "monthly_budget_usd": 1000}),
    ("no_daily_volume", "llama8b_high_traffic", {"daily_requests": None}),
    ("managed_given_price", "no_ops_team", {"managed_usd_per_mtok": {"input": 0.5, "output": 1.5}}),
    ("managed_unlisted_low_traffic", "very_low_traffic", {"model": "Qwen/Qwen3-8B"}),
    ("managed_high_volume", "no_ops_team", {"daily_requests": 200_000,
                                            "managed_usd_per_mtok": {"input": 3.0, "output": 15.0}}),
    ("staff_given", "llama8b_high_traffic", {"staff_usd_month": 1234}),
    # a TTFT target met at the batch that the next batch's TPOT stops (the margin row names the target that stops it)
    ("tight_ttft_met", "llama8b_high_traffic", {"ttft_p99_ms": 300}),
    # a TTFT target no batch meets: the margin row is one sequence's figures, over 100 %
    ("ttft_unmet", "very_large_model", {"ttft_p99_ms": 300}),
]


def plan_of(answers: dict) -> tuple[dict, str, str]:
    """The plan (its JSON), its terminal summary (one line per item, no wrapping) and its RATIONALE.md, in-process."""
    session = run_answers(answers)
    plan = build_plan(session)
    out = io.StringIO()
    console = Console(file=out, width=1000, color_system=None)
    for item in plan_renderables(plan, session.answers):
        console.print(item, highlight=False)
    rationale = render_repo(plan, recorded(session.answers))["RATIONALE.md"]
    return to_json(plan), out.getvalue(), rationale


def answers_for(name: str) -> dict:
    for variant, scenario, changes in VARIANTS:
        if variant == name:
            base = load_answers_file(SCENARIOS / f"{scenario}.yaml")
            merged = {**base, **changes}
            return validate_answers({k: v for k, v in merged.items() if v is not None}, where=name)
    return load_answers_file(SCENARIOS / f"{name}.yaml")


ALL = NAMES + [v[0] for v in VARIANTS]
_cache: dict[str, tuple[dict, str, str]] = {}


def plan(name: str) -> tuple[dict, str, str]:
    if name not in _cache:
        _cache[name] = plan_of(answers_for(name))
    return _cache[name]


def usd(x: float) -> str:
    return f"${round(x):,}"


def fit_facts(p: dict) -> dict:
    return next((s["value"] for s in p["path"] if s["node"] == "fit"), {})


def layout_of(p: dict) -> str:
    """The chosen layout as the fit facts name a form's best one ("2 × TP 1 × PP 1 on l40s-48gb")."""
    return f"{p['replicas']} × TP {p['tp']} × PP {p['pp']} on {p['gpu']}"


# ------------------------------------------------------------------------------------------------ one cost
@pytest.mark.parametrize("name", ALL)
def test_the_same_layout_shows_the_same_total_everywhere(name):
    p, text, rationale = plan(name)
    cost, facts = p.get("cost") or {}, fit_facts(p)
    if p["form"] in ("cpu", "managed_api") or cost.get("total_usd_month") is None:
        return
    total = cost["total_usd_month"]
    # the headline: bill + staff, the staff of the exposure the plan really has
    assert total == pytest.approx(cost["gpu_bill_usd_month"] + cost["staff_usd_month"], abs=0.02)
    # the facts the tree's texts quote
    assert facts["plan_usd_month"] == round(total)
    for key in ("single", "tp", "multi"):
        if facts[f"best_{key}_layout"] == layout_of(p):  # this form's cheapest layout is the plan itself
            assert facts[f"best_{key}_usd"] == round(total), key
    # every "against $X" in the alternatives is the plan's own total
    for alt in p["alternatives"]:
        for figure in re.findall(r"against \$([\d,]+)", alt["why_not"]):
            assert figure == f"{round(total):,}", (alt["form"], alt["why_not"])
    for w in p["warnings"]:
        if w["id"] == "over_budget":
            assert f"about {usd(total)}/month" in w["message"]
    # the terminal summary and RATIONALE.md
    headline = next(line for line in text.splitlines() if line.startswith("Cost per month"))
    assert f"= {usd(total)};" in headline or headline.endswith(f"= {usd(total)}")
    assert f"| **total** | **{usd(total)}** |" in rationale
    # the alternatives' figure for a form's best layout is that candidate's own total: the plan of the same
    # answers forced onto that layout shows it as its headline (checked where the layout differs: TP vs single)
    if facts["best_tp_layout"] and facts["best_tp_layout"] != layout_of(p) and p["form"] != "multi_node":
        m = re.fullmatch(r"(\d+) × TP (\d+) × PP (\d+) on (\S+)", facts["best_tp_layout"])
        forced = plan_of({**answers_for(name), "tp": int(m[2]), "pp": int(m[3]), "gpu": m[4]})[0]
        if forced["replicas"] == int(m[1]):
            assert round(forced["cost"]["total_usd_month"]) == facts["best_tp_usd"]


@pytest.mark.parametrize("name", ALL)
def test_staff_is_the_exposure_the_plan_really_has(name):
    p, _, _ = plan(name)
    cost = p.get("cost") or {}
    if "staff_usd_month" not in cost or "staff_usd_month" in answers_for(name):
        return
    months = STAFF_PERSON_MONTHS[p["exposure"]]  # the assumption, labelled: person-months a month × $15,000
    assert cost["staff_usd_month"] == pytest.approx(months * STAFF_USD_PER_PERSON_MONTH)


def test_the_offline_fp8_option_saves_what_it_says():
    """Issue #11: an offline plan (staff $1,500, exposure none) offered fp8 'saving $248' at a total priced with
    Kubernetes staff ($3,750) that exceeded its own headline. Both sides now carry $1,500: the option's total is
    below the headline, and the saving is the difference of the two bills. (The 70B on H100: with gpu auto an 8B
    offline job now goes to the card cheapest per token, a B200, where no fp8 plan costs less.)"""
    p, text, rationale = plan("offline_fp8_h100")
    q, cost = p["quantized_option"], p["cost"]
    assert p["exposure"] == "none" and cost["staff_usd_month"] == pytest.approx(0.1 * 15_000)
    assert q["total_usd_month"] < cost["total_usd_month"]
    assert q["saving_usd_month"] == pytest.approx(cost["total_usd_month"] - q["total_usd_month"], abs=0.01)
    assert f"would cost {usd(q['total_usd_month'])}/month, saving {usd(q['saving_usd_month'])}" in text
    assert f"would cost {usd(q['total_usd_month'])}/month, saving {usd(q['saving_usd_month'])}" in rationale


def test_data_residency_headline_and_alternative_agree():
    """Issue #11: `data_residency.yaml` printed "staff $7,500 = $9,544" and then "would cost $7,838/month against
    $5,794" (both priced with $3,750 of Kubernetes staff). The basic team's exposure is a gateway (0.5 × $15,000 =
    $7,500) in the headline and in the alternative: 2 × L40S at $1.40/h × 730 h = $2,044 + $7,500 = $9,544, and
    the TP alternative 4 × $1.40 × 730 = $4,088 + $7,500 = $11,588."""
    p, text, _ = plan("data_residency")
    assert p["cost"]["total_usd_month"] == pytest.approx(2 * 1.4 * 730 + 7500, abs=0.01)
    tp = next(a for a in p["alternatives"] if a["form"] == "single_node_multi_gpu")["why_not"]
    assert "would cost $11,588/month on 4 GPUs against $9,544 on 2" in tp


# -------------------------------------------------------------------------------------------------- budget
@pytest.mark.parametrize("name", ["fixed_budget", "fp8_over_budget", "bf16_over_budget"])
def test_over_budget_exactly_when_the_total_exceeds_it(name):
    total = plan(name)[0]["cost"]["total_usd_month"]
    for budget, over in ((total - 1, True), (total, False), (total + 1, False), (0, True)):
        p = plan_of({**answers_for(name), "monthly_budget_usd": budget})[0]
        assert fit_facts(p)["over_budget"] is over, budget
        assert ("over_budget" in {w["id"] for w in p["warnings"]}) is over, budget


def test_budget_advice_never_proposes_what_the_plan_already_does():
    # fp8 checkpoint, fp8 KV: neither quantization is proposed; a 16-bit plan gets fp8 with the option's figure
    levers = fit_facts(plan("fp8_over_budget")[0])["budget_levers"]
    assert "fp8" not in levers and "shorter context" in levers
    p = plan("bf16_over_budget")[0]
    levers, q = fit_facts(p)["budget_levers"], p["quantized_option"]
    assert f"fp8 weights ({usd(q['total_usd_month'])}/month" in levers and "fp8 KV" in levers
    # the managed API only where nothing rules it out: data residency does
    assert "managed" not in fit_facts(plan("fixed_budget")[0])["budget_levers"]
    assert "managed API (about" in levers


def test_the_over_budget_warning_of_an_fp8_plan_does_not_say_quantize():
    p = plan("fp8_over_budget")[0]
    message = next(w["message"] for w in p["warnings"] if w["id"] == "over_budget")
    assert "fp8" not in message and "quantize" not in message


# ------------------------------------------------------------------------------------------------- savings
def _savings(obj, where=""):
    if isinstance(obj, dict):
        for k, v in obj.items():
            if "saving" in k:
                yield f"{where}.{k}", v
            yield from _savings(v, f"{where}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _savings(v, f"{where}[{i}]")


@pytest.mark.parametrize("name", ALL)
def test_no_negative_or_misdirected_saving_anywhere(name):
    p, text, rationale = plan(name)
    for where, value in _savings(p):
        assert value is not None and value > 0, where
    for page in (text, rationale):
        assert not re.search(r"sav\w* (?:\$-|-\$|—)", page), re.search(r"sav\w* .{0,20}", page)
    q = p.get("quantized_option")
    if q:  # offered only to a 16-bit plan, and only when it costs less
        assert p["checkpoint_format"] == "bf16" and answers_for(name).get("weight_precision", "auto") == "auto"
        assert q["total_usd_month"] < p["cost"]["total_usd_month"]
    cost = p.get("cost") or {}
    if "self_host_usd_month" in cost and cost.get("total_usd_month") is not None:
        dearer = cost["self_host_usd_month"] - cost["total_usd_month"]
        key = "saving_usd_month" if dearer > 0 else "managed_extra_usd_month"
        assert cost[key] == pytest.approx(abs(dearer), abs=0.01)


def test_a_managed_plan_dearer_than_self_hosting_says_so():
    """200,000 requests a day at $3 / $15 per million tokens: 200,000 × 30.4 × (2,048 × 3 + 512 × 15) / 1e6 =
    $84,050 a month, far above a few GPUs: no saving is claimed, what the managed API costs more is named."""
    p, text, _ = plan("managed_high_volume")
    cost = p["cost"]
    assert cost["managed_usd_month"] == pytest.approx(200_000 * 30.4 * (2048 * 3 + 512 * 15) / 1e6, abs=0.01)
    assert "saving_usd_month" not in cost and cost["managed_extra_usd_month"] > 0
    assert f"{usd(cost['managed_extra_usd_month'])}/month less than the managed API" in text


# --------------------------------------------------------------------------------------- exposure from the tree
def test_layout_exposure_is_what_every_self_hosted_leaf_gives():
    """computes.layout_exposure prices the search; it must be the exposure of the leaf a layout reaches."""
    tree = load_tree()
    leaves = [n for n in tree.nodes.values() if isinstance(n, Recommendation)
              and n.form in ("single_gpu", "single_node_multi_gpu", "multi_node")]
    assert leaves
    for leaf in leaves:
        online = isinstance(leaf.exposure, ExposureMap)
        for ops in ("none", "basic", "kubernetes", "platform"):
            env = {"workload": "online" if online else "offline", "ops_capability": ops}
            assert layout_exposure(env) == exposure_of(leaf, env), (leaf.title, ops)


def test_a_managed_plans_self_hosting_figure_is_that_plans_own_headline():
    """no_ops_team's "self-hosting the same load would cost $X" is the headline of the self-hosted plan the same
    answers give once data residency excludes the managed API (same load, gpu auto, gateway exposure)."""
    managed = plan("no_ops_team")[0]["cost"]
    own = plan_of({**answers_for("no_ops_team"), "data_residency": True})[0]
    assert managed["self_host_exposure"] == own["exposure"] == "gateway"
    assert managed["self_host_layout"] == (f"{own['replicas']} × {own['gpus_per_replica']} × {own['gpu']} "
                                           f"(TP {own['tp']}, PP {own['pp']})")
    assert managed["self_host_usd_month"] == own["cost"]["total_usd_month"]


# ------------------------------------------------------------------------------------------- managed prices
MANAGED = ["bursty_pay_as_you_go", "no_ops_team", "very_low_traffic", "managed_given_price",
           "managed_unlisted_low_traffic", "managed_high_volume"]


@pytest.mark.parametrize("name", ALL)
def test_every_managed_plan_is_checked_below(name):
    assert (plan(name)[0]["form"] == "managed_api") == (name in MANAGED)


@pytest.mark.parametrize("name", MANAGED)
def test_every_managed_plan_has_a_bill_with_its_basis(name):
    p, text, rationale = plan(name)
    cost, price = p["cost"], p["cost"]["managed_price"]
    assert price["usd_per_mtok_input"] > 0 and price["usd_per_mtok_output"] > 0
    assert price["basis"] in ("listed", "estimated", "given")
    if price["basis"] == "estimated":
        assert price["estimated_from"] and price["note"] and price["date"]
        assert f"estimated from {', '.join(price['estimated_from'])}" in text
    assert cost["managed_usd_month"] is not None and cost["total_usd_month"] is not None
    assert cost["total_usd_month"] == pytest.approx(cost["managed_usd_month"] + cost["staff_usd_month"], abs=0.01)
    bill = cost["managed_usd_month"]
    assert f"managed API bill {f'${bill:,.2f}' if bill < 1 else usd(bill)} " in " ".join(text.split())  # cents below $1
    assert "managed bill + staff" in rationale
    # the client's budget guard prices usage at the plan's own figure, rendered from the plan's JSON read back
    typed = adapter("plan").validate_python(json.loads(json.dumps(p)))
    client = render_repo(typed, recorded(answers_for(name)))["client/client.py"]
    assert f"PRICE_IN, PRICE_OUT = {price['usd_per_mtok_input']}, {price['usd_per_mtok_output']}\n" in client


def test_a_given_managed_price_overrides_the_estimate():
    """managed_usd_per_mtok {input 0.5, output 1.5}: 20,000 requests a day of 2,048 + 512 tokens (no lengths in
    the answers: a quarter of the 8,192 context, at most 2,048, and 512) cost 20,000 × 30.4 × (2,048 × 0.5 + 512 ×
    1.5) / 1e6 = 608,000 × 0.001792 = $1,089.54 a month."""
    cost = plan("managed_given_price")[0]["cost"]
    assert cost["managed_price"]["basis"] == "given"
    assert cost["managed_usd_month"] == pytest.approx(1089.54, abs=0.01)


# ------------------------------------------------------------------------------------------------ the published schema
@pytest.mark.parametrize("name", ALL)
def test_every_plan_validates_against_the_published_plan_schema(name):
    """plan.json is a Plan (extra keys forbidden): `schema plan` is what the plans really are."""
    import jsonschema

    p = plan(name)[0]
    adapter("plan").validate_python(p)
    jsonschema.validate(p, json_schema("plan"))


# ------------------------------------------------------------------------------------------------ one presenter
@pytest.mark.parametrize("name", ALL)
def test_the_terminal_and_rationale_show_every_figure_of_the_plan_sections(name):
    """One presenter (issue #11): each figure of plan_sections — value and basis — is printed by `plan` and written
    in RATIONALE.md as the same text; neither keeps a list of facts of its own."""
    from wizard.artifacts.plan_sections import plan_sections
    from wizard.artifacts.render import md_text

    session = run_answers(answers_for(name))
    typed = build_plan(session)
    _, text, rationale = plan(name)
    flat = " ".join(text.split())
    sections = plan_sections(typed, session.answers)
    assert {s.key for s in sections} >= {"warnings", "alternatives", "path"}
    for s in sections:
        assert s.title in flat and s.title in rationale, s.title
        for row in s.rows:
            for part in (row.value, row.basis):
                assert " ".join(part.split()) in flat, (s.key, part)
                assert md_text(part) in rationale, (s.key, part)
    # and the figures are the plan's own: the cost section's total is the headline total
    cost = next((s for s in sections if s.key == "cost"), None)
    if cost is not None and typed.cost.total_usd_month is not None:
        total = next(r for r in cost.rows if r.label == "total")
        assert total.strong and total.value == usd(typed.cost.total_usd_month) or typed.cost.total_usd_month < 1


@pytest.mark.parametrize("name", ALL)
def test_the_margin_to_the_targets_is_the_plans_p99_against_its_answers(name):
    """RATIONALE's "margin to the targets" row: each P99 target answered, against the plan's own P99 figure at its
    batch, and their ratio. A plan that meets its targets never shows more than 100 %, and the target it says its
    batch stops at is one the next batch misses (near 100 % where the model's latency grows smoothly); a plan that
    meets none says so, at one sequence."""
    from wizard.artifacts.plan_sections import plan_sections

    session = run_answers(answers_for(name))
    typed = build_plan(session)
    section = next((s for s in plan_sections(typed, session.answers) if s.key == "throughput"), None)
    row = next((r for r in section.rows if r.label == "margin to the targets"), None) if section else None
    asked = [k for k in ("ttft_p99_ms", "tpot_p99_ms") if typed.step(k)]
    if section is None or not asked:
        assert row is None
        return
    assert row is not None
    shown = re.findall(r"P99 (TTFT|TPOT) ([\d,.]+) of ([\d,]+) ms \((\d+) %\)", row.value)
    assert [m[0] for m in shown] == [k[:4].upper() for k in asked]
    p = typed.performance
    assert row.value.endswith(f" at {p.max_batch or 1} sequence{'s' if (p.max_batch or 1) > 1 else ''}")
    met = typed.fit_facts().get("targets_met") and p.max_batch > 0
    for metric, value, target, share in shown:
        predicted = p.ttft_p99_ms if metric == "TTFT" else p.tpot_p99_ms
        answer = typed.step(f"{metric.lower()}_p99_ms")
        assert float(value.replace(",", "")) == pytest.approx(predicted, abs=0.5 if metric == "TTFT" else 0.05)
        assert float(target.replace(",", "")) == answer
        assert int(share) == round(predicted / answer * 100)
        if met:
            assert predicted <= answer
    if not met:
        assert "no batch meets them: these are one sequence" in row.basis and "near 100 %" not in row.basis
        assert any(int(share) > 100 for *_, share in shown)
    elif p.limited_by.endswith("target"):
        assert f"so the {p.limited_by} it stops at" in row.basis
        limiting = p.ttft_p99_ms if p.limited_by == "ttft target" else p.tpot_p99_ms
        assert limiting >= 0.8 * typed.step(p.limited_by[:4] + "_p99_ms"), row.value
