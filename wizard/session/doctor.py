"""The doctor session (`llm-deploy-wizard doctor`): from a §11 symptom through trees/doctor.yaml to a cause and fix.

Answers come from `--answer KEY=VALUE`, from a terminal (wizard/doctor_ui.py asks), or, for every check a plan can
settle, from plan.json: `plan_facts` reads the plan's own figures (its layout, the facts of its `fit` step, its
replicas, cold start and cost) and says where each answer comes from. An answer given by the user wins over the
plan's: the user knows the running system, the plan only what was planned. `plan_figures` gives the leaf texts
their numbers. Pure functions: no printing, no prompts.

What plan.json settles (check → the plan's figures it reads):
    fits_one_gpu      the fit step's fits_one_gpu (with single_need_gib / usable_gib)
    parallelism       tp × pp > 1: split; 1: copies
    tp_across_nodes   the fit step's tp_exceeds_node; else tp against gpus_per_node
    intra_node_link   the GPU's nvlink flag in the bundled catalog
    pipeline          pp > 1
    multi_node        nodes_per_replica > 1
    fits_one_node     the fit step's fits_one_node
    cold_vs_ramp      the fit step's cold_start_exceeds_ramp (cold_start_s against ramp_s, ramp_s > 0)
    warm_floor        min_replicas against replicas
    peak_measured     the fit step's peak_below_average (or the average_not_p99 warning): "no" only
    replicas_online   replicas of an online plan
    spare_replica     N + 1 unless the replicas were forced; forced: replicas against ceil(peak / per_copy)
    utilization       cost.idle_usd_month / cost.gpu_bill_usd_month (idle > half: below_half)
    replicas_follow_traffic  the bill prices every GPU for 730 h a month (§8): always_on
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from wizard.errors import InputError
from wizard.tree.doctor import PLAN_FIGURES, Cause, Check, DoctorTree, Symptom
from wizard.tree.schema import evaluate
from wizard.tree.text import render

if TYPE_CHECKING:
    from wizard.specs.contracts import Plan

MAX_PLAN_BYTES = 4 * 2**20  # a plan.json is ~10 kB
Source = Literal["plan.json", "answer"]


class Fact(NamedTuple):
    """A check's answer read from the plan, and the plan's figures that give it."""

    value: str
    why: str


class Step(NamedTuple):
    node: str
    value: str
    why: str
    source: Source


class Diagnosis(NamedTuple):
    """A walk that reached a cause: the path, and the cause's texts rendered over the answers and the plan."""

    symptom: Symptom
    path: tuple[Step, ...]
    leaf: str
    node: Cause
    cause: str
    fix: str

    def to_json(self) -> dict[str, Any]:
        return {
            "symptom": self.symptom.id,
            "path": [s._asdict() for s in self.path],
            "leaf": self.leaf,
            "title": self.node.title,
            "found": self.node.found,
            "cause": self.cause,
            "fix": self.fix,
            "section": self.node.section,
        }


class Pending(NamedTuple):
    """A walk that stopped at a check nobody answered (neither --answer nor the plan)."""

    symptom: Symptom
    path: tuple[Step, ...]
    node: str
    check: Check

    def accepted(self) -> str:
        return "|".join(c.value for c in self.check.choices)

    def to_json(self) -> dict[str, Any]:
        return {"symptom": self.symptom.id, "path": [s._asdict() for s in self.path],
                "next": {"node": self.node, "prompt": " ".join(self.check.prompt.split()),
                         "accepted": [c.value for c in self.check.choices]}}


# -- answers and symptoms given on the command line


def find_symptom(tree: DoctorTree, symptom_id: str) -> Symptom:
    symptom = tree.symptom(symptom_id)
    if symptom is None:
        raise InputError("--symptom", symptom_id, "expected one of " + ", ".join(s.id for s in tree.symptoms))
    return symptom


def missing_symptom(tree: DoctorTree) -> InputError:
    """The one line said when no symptom is given and there is no terminal to ask on."""
    listed = "; ".join(f"{s.id} ({s.label})" for s in tree.symptoms)
    return InputError("--symptom", "missing", f"which symptom of §11? expected one of {listed} (without a terminal "
                      "give --symptom ID, or --plan plan.json to check the plan alone)")


def parse_answers(tree: DoctorTree, items: list[str]) -> dict[str, str]:
    """`--answer KEY=VALUE` pairs: KEY a check's id, VALUE one of its choices; anything else is one InputError."""
    import difflib

    checks = tree.checks
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key, value = key.strip(" \t"), value.strip(" \t")
        if not sep or not key:
            raise InputError("--answer", item, "expected KEY=VALUE, e.g. --answer fits_one_gpu=yes")
        check = checks.get(key)
        if check is None:
            close = difflib.get_close_matches(key, list(checks), n=1, cutoff=0.75)
            accepted = f"unknown check; did you mean {close[0]}?" if close else \
                "unknown check; expected one of " + ", ".join(sorted(checks))
            raise InputError("--answer", key, accepted)
        values = [c.value for c in check.choices]
        if value not in values:
            raise InputError(f"--answer {key}", value, "expected one of " + ", ".join(values))
        if key in out and out[key] != value:
            raise InputError(f"--answer {key}", value, f"given twice ({out[key]} and {value}); expected one answer")
        out[key] = value
    return out


def missing_answer(pending: Pending) -> InputError:
    """The one line said when a walk needs an answer and there is no terminal to ask on."""
    prompt = " ".join(pending.check.prompt.split())
    return InputError(f"--answer {pending.node}", "missing",
                      f"{pending.symptom.id} asks next: {prompt} expected --answer {pending.node}={pending.accepted()} "
                      "(no terminal to ask on)")


# -- plan.json


def read_plan(path: Path) -> Plan:
    """plan.json (the output of `plan --json`, or a starter repo's) → a validated Plan; every problem one InputError
    naming the file, the key and what is accepted."""
    from wizard.capped_read import TooBig, read_capped

    try:
        if path.is_dir():
            raise InputError("--plan", str(path), "is a folder; expected a plan.json file (a starter repo has one)")
        raw = read_capped(path, MAX_PLAN_BYTES)
    except TooBig:
        raise InputError("--plan", str(path), f"is larger than {MAX_PLAN_BYTES // 2**20} MiB; expected a plan.json") from None
    except OSError as e:
        raise InputError("--plan", str(path), f"could not be read ({e.strerror or type(e).__name__})") from None
    except ValueError:  # a NUL character in the path
        raise InputError("--plan", repr(str(path)), "expected a file path") from None
    name = path.name or "plan.json"
    expected = "expected the JSON object of `llm-deploy-wizard plan --json` (a starter repo's plan.json)"
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise InputError(name, str(path), f"is not UTF-8 text; {expected}") from None
    except json.JSONDecodeError as e:
        raise InputError(name, str(path), f"is not JSON ({e.msg} at line {e.lineno} column {e.colno}); {expected}") from None
    except RecursionError:
        raise InputError(name, str(path), f"is nested too deeply; {expected}") from None
    if not isinstance(data, dict):
        raise InputError(name, f"a JSON {type(data).__name__}", expected)
    from pydantic import ValidationError

    from wizard.specs.contracts import adapter

    try:
        return adapter("plan").validate_python(data)
    except ValidationError as e:
        err = e.errors()[0]
        # the key as written in the file: union members' class names (Cost, ManagedCost) are not keys
        where = ".".join(str(p) for p in err["loc"] if not (isinstance(p, str) and p[:1].isupper()))
        value = "missing" if err["type"] == "missing" else err.get("input", "")
        msg = "unknown key" if err["type"] == "unexpected_keyword_argument" else err["msg"][0].lower() + err["msg"][1:]
        raise InputError(f"{name}: {where or 'plan'}", value, f"{msg} (`llm-deploy-wizard schema plan` "
                         "prints what is accepted)") from None


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _whole(x: float | None) -> int | None:
    """Seconds as the texts show them: whole, rounded like the facts' `:,.0f`."""
    return None if x is None else round(x)


def _online(plan: Plan) -> bool:
    workload = plan.step("workload")
    return workload == "online" if isinstance(workload, str) else plan.exposure != "none"


def _layout(plan: Plan) -> str | None:
    if not plan.gpu or plan.tp < 1:
        return None
    split = f"TP {plan.tp}" + (f" × PP {plan.pp}" if plan.pp > 1 else "")
    return f"{plan.replicas} replica(s) of {split} on {plan.gpu} ({plan.gpus_total} GPUs)"


def _catalog_gpu(gpu_id: str | None):  # noqa: ANN202 (a GpuSpec or None)
    if not gpu_id:
        return None
    from wizard.sources.catalog import gpu_catalog

    return next((g for g in gpu_catalog() if g.id == gpu_id.lower()), None)


def plan_facts(plan: Plan) -> dict[str, Fact]:
    """The checks plan.json answers by itself, each with the plan's figures that give the answer."""
    facts: dict[str, Fact] = {}
    fit = plan.fit_facts()
    gpu_plan = bool(plan.gpu) and plan.tp >= 1  # a self-hosted GPU plan (not cpu, not managed_api)
    if gpu_plan:
        layout = f"TP {plan.tp}" + (f" × PP {plan.pp}" if plan.pp > 1 else "") + f" on {plan.gpu}"
        if isinstance(fit.get("fits_one_gpu"), bool):
            need, usable = _num(fit.get("single_need_gib")), _num(fit.get("usable_gib"))
            size = f" ({need:g} GiB of {usable:g} GiB usable at TP 1)" if need and usable else ""
            facts["fits_one_gpu"] = (Fact("yes", f"{layout}; the model fits one card{size}") if fit["fits_one_gpu"]
                                     else Fact("no", f"{layout}; the model does not fit one card{size}"))
        gpus = plan.tp * plan.pp
        facts["parallelism"] = (
            Fact("split", f"{plan.replicas} replica(s) of TP {plan.tp} × PP {plan.pp} = {gpus} GPUs each") if gpus > 1
            else Fact("copies", f"{plan.replicas} replica(s) of 1 GPU each (TP 1)"))
        per_node = fit.get("gpus_per_node")
        if isinstance(fit.get("tp_exceeds_node"), bool) and isinstance(per_node, int):
            facts["tp_across_nodes"] = (
                Fact("yes", f"TP {plan.tp} is more than the {per_node} GPUs of one {plan.gpu} node") if fit["tp_exceeds_node"]
                else Fact("no", f"TP {plan.tp} stays inside one node of {per_node} × {plan.gpu}"))
        gpu = _catalog_gpu(plan.gpu)
        if gpu is not None:
            facts["intra_node_link"] = Fact("nvlink" if gpu.nvlink else "pcie",
                                            f"{gpu.id}: {gpu.interconnect} (the bundled GPU catalog)")
        facts["pipeline"] = (Fact("yes", f"PP {plan.pp}: {plan.pp} pipeline stages") if plan.pp > 1
                             else Fact("no", "PP 1: no pipeline stages"))
        nodes = plan.nodes_per_replica
        facts["multi_node"] = (Fact("yes", f"one replica spans {nodes} nodes ({layout})") if nodes > 1
                               else Fact("no", f"one replica runs on one node ({layout})"))
        if isinstance(fit.get("fits_one_node"), bool):
            facts["fits_one_node"] = (
                Fact("yes", f"the model fits one node of {per_node} × {plan.gpu}" if per_node else "the model fits one node")
                if fit["fits_one_node"] else Fact("no", f"the model does not fit one node of {per_node} × {plan.gpu}"
                                                  if per_node else "the model does not fit one node"))
    _scaling_facts(plan, fit, facts)
    _cost_facts(plan, facts)
    return facts


def _scaling_facts(plan: Plan, fit: dict[str, Any], facts: dict[str, Fact]) -> None:
    """Cold start against the ramp, the warm minimum, the peak, the replicas (§5, §7, §10)."""
    online = _online(plan) and plan.replicas >= 1 and bool(plan.gpu)
    cold = _num(fit.get("cold_start_s"))
    if plan.cold_start is not None:
        cold = plan.cold_start.total_s
    ramp = _num(fit.get("ramp_s"))
    pattern = plan.step("traffic_pattern") if isinstance(plan.step("traffic_pattern"), str) else "the"
    if online and cold is not None and ramp:
        slower = fit.get("cold_start_exceeds_ramp")
        slower = slower if isinstance(slower, bool) else cold > ramp
        relation = "longer than" if slower else "within"
        facts["cold_vs_ramp"] = Fact("slower" if slower else "faster",
                                     f"a new replica needs about {cold:,.0f} s to serve, {relation} the {ramp:,.0f} s "
                                     f"in which {pattern} traffic is assumed to climb (the plan's assumption)")
    if online and plan.min_replicas is not None:
        low, total = plan.min_replicas, plan.replicas
        value = "all" if low >= total else "none" if low == 0 else "fewer"
        facts["warm_floor"] = Fact(value, f"the autoscaler's minimum keeps {low} of {total} replica(s) warm")
    peak, implied = plan.step("peak_concurrency"), _num(fit.get("implied_concurrency"))
    if fit.get("peak_below_average") is True or any(w.id == "average_not_p99" for w in plan.warnings):
        shown = f" of {implied:g}" if implied is not None else ""
        facts["peak_measured"] = Fact("no", f"a peak of {peak} sequences is below the average{shown} the daily volume "
                                      "implies in flight")
    if online:
        facts["replicas_online"] = (Fact("one", "1 replica serves online traffic") if plan.replicas == 1
                                    else Fact("several", f"{plan.replicas} replicas serve online traffic"))
    per_copy = fit.get("per_copy")
    if online and plan.replicas >= 2:
        forced = fit.get("forced_replicas")
        if forced == 0:
            facts["spare_replica"] = Fact("yes", f"{plan.replicas} replicas: one more than the peak needs (N + 1 for "
                                          "online traffic)")
        elif isinstance(per_copy, int) and per_copy > 0 and isinstance(peak, (int, float)):
            load = max(float(peak), implied or 0.0)
            needed = math.ceil(load / per_copy)
            if plan.replicas <= needed:  # `needed` is a lower bound: a peak request rate may raise the load
                facts["spare_replica"] = Fact("no", f"the {plan.replicas} replicas asked for are what a load of "
                                              f"{load:g} sequences at {per_copy} per replica needs: none is spare")


def _cost_facts(plan: Plan, facts: dict[str, Fact]) -> None:
    """The idle share of the bill and how the bill counts the GPUs (§8)."""
    from wizard.specs.contracts import Cost

    cost = plan.cost
    if not isinstance(cost, Cost):
        return
    if plan_kind(plan) == "offline":
        # The plan's "no idle" holds only while the job runs (§12): whether the cards are kept after it is the
        # user's to say, so the walk asks it rather than reading the plan's 100 % as busy cards.
        facts["work_kind"] = Fact("job", "an offline plan (§12): the GPUs run a batch job")
        return
    facts["work_kind"] = Fact("service", "an online plan: replicas serve live traffic")
    if not cost.gpu_bill_usd_month or cost.idle_usd_month is None:
        return
    bill, idle = cost.gpu_bill_usd_month, cost.idle_usd_month
    share = idle / bill
    basis = f", {cost.utilization_basis}" if cost.utilization_basis else ""
    facts["utilization"] = Fact("below_half" if share > 0.5 else "above_half",
                                f"${idle:,.0f} of the ${bill:,.0f} monthly GPU bill is idle ({share * 100:.0f} %): average "
                                f"utilization about {(1 - share) * 100:.0f} % (the plan's estimate{basis})")
    facts["replicas_follow_traffic"] = Fact("always_on", f"the bill counts all {plan.gpus_total} GPUs on for 730 h "
                                            "a month (always-on cards, §8)")


def plan_figures(plan: Plan | None) -> dict[str, Any] | None:
    """The plan's numbers the leaf texts quote (`plan.<name>`): exactly PLAN_FIGURES, None where absent."""
    if plan is None:
        return None
    from wizard.specs.contracts import Cost

    fit = plan.fit_facts()
    gpu = _catalog_gpu(plan.gpu)
    cost = plan.cost
    priced = isinstance(cost, Cost) and bool(cost.gpu_bill_usd_month)
    figures: dict[str, Any] = {
        "model": plan.model,
        "form": plan.form,
        "gpu": plan.gpu,
        "layout": _layout(plan),
        "tp": plan.tp or None,
        "pp": plan.pp or None,
        "replicas": plan.replicas or None,
        "min_replicas": plan.min_replicas,
        "gpus_per_replica": plan.gpus_per_replica or None,
        "gpus_total": plan.gpus_total or None,
        "nodes_per_replica": plan.nodes_per_replica or None,
        "gpus_per_node": fit.get("gpus_per_node") if isinstance(fit.get("gpus_per_node"), int) else None,
        "interconnect": gpu.interconnect if gpu is not None else None,
        "per_copy": plan.concurrency_per_replica or (fit.get("per_copy") if isinstance(fit.get("per_copy"), int) else None),
        "peak_concurrency": plan.step("peak_concurrency") if isinstance(plan.step("peak_concurrency"), int) else None,
        "implied_concurrency": _num(fit.get("implied_concurrency")),
        "cold_start_s": _whole(plan.cold_start.total_s if plan.cold_start is not None else _num(fit.get("cold_start_s"))),
        "ramp_s": _whole(_num(fit.get("ramp_s"))) or None,
        "traffic_pattern": plan.step("traffic_pattern") if isinstance(plan.step("traffic_pattern"), str) else None,
        "gpu_bill_usd_month": cost.gpu_bill_usd_month if priced and isinstance(cost, Cost) else None,
        "idle_usd_month": cost.idle_usd_month if priced and isinstance(cost, Cost) else None,
        "idle_share": (cost.idle_usd_month / cost.gpu_bill_usd_month
                       if priced and isinstance(cost, Cost) and cost.idle_usd_month is not None
                       and cost.gpu_bill_usd_month else None),
        "total_usd_month": cost.total_usd_month if cost is not None else None,
        "managed_total_usd_month": cost.managed_total_usd_month if isinstance(cost, Cost) else None,
    }
    figures["tp_reason"] = fit.get("tp_reason") if isinstance(fit.get("tp_reason"), str) else None
    figures["job_hours"] = cost.job_hours if isinstance(cost, Cost) else None
    figures["job_usd"] = cost.job_usd if isinstance(cost, Cost) else None
    assert tuple(figures) == PLAN_FIGURES, "plan_figures and PLAN_FIGURES list the same names"
    return figures


# -- the walk


def _why(check: Check, value: str, fact: Fact | None) -> str:
    label = next(c.label for c in check.choices if c.value == value)
    if fact is not None and fact.value != value:
        return f"{label} (plan.json says {fact.value}: {fact.why})"
    return label


def diagnose(tree: DoctorTree, symptom: Symptom, answers: dict[str, str], facts: dict[str, Fact] | None = None,
             figures: dict[str, Any] | None = None) -> Diagnosis | Pending:
    """Walk from the symptom's start: each check takes the user's answer, else the plan's, else the walk stops there
    (Pending). A cause reached is rendered over the answers and the plan's figures."""
    facts = facts or {}
    env: dict[str, Any] = {k: None for k in tree.checks}
    path: list[Step] = []
    node_id = symptom.start
    for _ in range(len(tree.nodes) + 1):
        node = tree.nodes[node_id]
        if isinstance(node, Cause):
            env["plan"] = figures
            return Diagnosis(symptom, tuple(path), node_id, node, render(node.cause, env), render(node.fix, env))
        fact = facts.get(node_id)
        source: Source
        if node_id in answers:
            value, why, source = answers[node_id], _why(node, answers[node_id], fact), "answer"
        elif fact is not None:
            value, why, source = fact.value, fact.why, "plan.json"
        else:
            return Pending(symptom, tuple(path), node_id, node)
        env[node_id] = value
        edge = next((e for e in node.next if evaluate(e.when, env)), None)
        if edge is None:  # integrity (walks) rules this out for the bundled tree
            raise InputError(f"doctor tree: nodes.{node_id}", value, "no edge takes this answer")
        path.append(Step(node_id, value, why, source))
        node_id = edge.goto
    raise InputError("doctor tree", tree.title, "the walk does not end (a cycle)")


PLAN_KINDS = {"online": "an online service", "offline": "an offline batch job", "managed": "a managed API"}


def plan_kind(plan: Plan | None) -> str | None:
    """What a plan runs: "managed" (a managed API), "offline" (a batch job, exposure none) or "online"."""
    if plan is None:
        return None
    if plan.form == "managed_api":
        return "managed"
    return "offline" if plan.exposure == "none" else "online"


def applicable(tree: DoctorTree, plan: Plan | None) -> list[Symptom]:
    """The symptoms that can happen to this plan (all of them without one)."""
    kind = plan_kind(plan)
    return [s for s in tree.symptoms if kind is None or kind in s.applies]


def not_applicable(tree: DoctorTree, symptom: Symptom, plan: Plan | None) -> InputError | None:
    """The one-line refusal of a symptom that cannot happen to this plan, or None."""
    kind = plan_kind(plan)
    if kind is None or kind in symptom.applies:
        return None
    accepted = ", ".join(s.id for s in applicable(tree, plan)) or "none"
    return InputError("--symptom", symptom.id, f"does not happen to {PLAN_KINDS[kind]} (the plan); accepted for it: "
                      f"{accepted}")


def scan(tree: DoctorTree, answers: dict[str, str], facts: dict[str, Fact],
         figures: dict[str, Any] | None, symptoms: list[Symptom] | None = None) -> list[Diagnosis | Pending]:
    """Every symptom (that can happen to the plan) walked with what is known: what plan.json shows by itself."""
    return [diagnose(tree, s, answers, facts, figures) for s in (tree.symptoms if symptoms is None else symptoms)]


def unused_answers(tree: DoctorTree, answers: dict[str, str], results: list[Diagnosis | Pending]) -> list[str]:
    """Answers given whose checks no walk here met (a check of another symptom, or past a different answer)."""
    met = {s.node for r in results for s in r.path}
    return sorted(k for k in answers if k not in met)
