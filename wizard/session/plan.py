"""The plan at the end of a walk: DESIGN.md's `plan --json` object, every figure traceable to the path."""

from __future__ import annotations

from typing import Any

from wizard.session.session import Session
from wizard.sizing.size_json import size_json
from wizard.tree.schema import ExposureMap, Question, Recommendation, evaluate
from wizard.tree.text import render

FORMS = ("cpu", "single_gpu", "single_node_multi_gpu", "multi_node", "managed_api")


def exposure_of(rec: Recommendation, env: dict[str, Any]) -> str:
    """DOMAIN §6: exposure follows operations capability (a map in the tree) or is fixed by the leaf."""
    if isinstance(rec.exposure, ExposureMap):
        return rec.exposure.map[str(env.get(rec.exposure.var))]
    return rec.exposure


def warnings_for(session: Session) -> list[dict[str, str]]:
    """The tree's warning rules that hold for this walk, each with its DOMAIN §."""
    env = session.state.env
    out = []
    for rule in session.tree.warnings:
        if evaluate(rule.when, env):
            out.append({"id": rule.id, "message": render(rule.message, env), "section": rule.section})
    return out


def alternatives_for(session: Session, chosen: str) -> list[dict[str, str]]:
    """Every form not chosen, with the first reason that applies (DOMAIN §1: the managed API is a parallel road)."""
    env = session.state.env
    out = []
    for alt in session.tree.alternatives:
        if alt.form == chosen:
            continue
        reason = next((r for r in alt.reasons if evaluate(r.when, env)), None)
        if reason is not None:
            out.append({"form": alt.form, "why_not": render(reason.why, env)})
    return out


def path_of(session: Session) -> list[dict[str, Any]]:
    """The nodes visited, in order: the answer or the computed facts, and why the walk went on as it did."""
    out = []
    for step in session.state.path:
        node = session.tree.nodes[step.node]
        if isinstance(node, Question):
            value: Any = step.value
        elif isinstance(node, Recommendation):
            value = node.form
        else:
            value = step.value
        out.append({"node": step.node, "value": value, "why": step.why})
    return out


def build_plan(session: Session) -> dict[str, Any]:
    """The plan as DESIGN.md's JSON (performance, cost and cold start arrive with issue #4)."""
    rec = session.recommendation
    assert rec is not None, "build_plan needs a finished walk"
    env = session.state.env
    layout = session.context.layout if rec.form != "managed_api" else None
    plan: dict[str, Any] = {
        "form": rec.form,
        "exposure": exposure_of(rec, env),
        "title": rec.title,
        "summary": session.state.path[-1].why,
        "model": env.get("model"),
    }
    if layout is not None and rec.form != "cpu":
        replicas = int(env["replicas"])
        plan |= {
            "gpu": layout.gpu.id,
            "tp": layout.tp,
            "pp": layout.pp,
            "replicas": replicas,
            "gpus_per_replica": layout.gpus_per_copy,
            "nodes_per_replica": layout.nodes_per_copy,
            "gpus_total": layout.gpus_per_copy * replicas,
            "concurrency_per_replica": layout.per_copy_concurrency,
            "memory": size_json(layout.result),
        }
    else:
        plan |= {"gpu": None, "tp": 0, "pp": 0, "replicas": 0, "gpus_per_replica": 0, "nodes_per_replica": 0, "gpus_total": 0}
    plan["warnings"] = warnings_for(session)
    plan["path"] = path_of(session)
    plan["alternatives"] = alternatives_for(session, rec.form)
    plan["sections"] = rec.section
    plan["boundary"] = rec.boundary or None
    return plan
