"""Generate a scenario's starter repo and run every check on it (shared by the snapshot and property tests)."""

from __future__ import annotations

import json
import py_compile
import sys
from pathlib import Path

import yaml

import artifact_checks as checks
from wizard.artifacts.vllm_flags import check_argv


def validate_repo(repo: Path) -> None:
    """Every generated file passes its tools, plus the rules no schema catches (deploy-checklist §4)."""
    plan = json.loads((repo / "plan.json").read_text())
    yaml.safe_load((repo / "answers.yaml").read_text())
    scripts = sorted([*repo.glob("serve/*.sh"), *repo.glob("bench/*.sh")])
    if scripts:
        checks.check_bash(*scripts)
        for script in scripts:
            assert script.stat().st_mode & 0o111, f"{script.name} is not executable"
    if (repo / "gateway" / "keys.sh").exists():
        checks.check_bash(repo / "gateway" / "keys.sh")
    if (repo / "gateway" / "compose.yaml").exists():
        checks.check_compose(repo / "gateway" / "compose.yaml")
    for py in [*repo.glob("serve/*.py"), *repo.glob("client/*.py")]:
        py_compile.compile(str(py), doraise=True, cfile=str(py) + "c.tmp")
        Path(str(py) + "c.tmp").unlink()
    manifests = sorted(p for p in repo.glob("k8s/*.yaml") if p.name != "kustomization.yaml")
    if manifests:
        checks.check_yaml_lint([*manifests, repo / "k8s" / "kustomization.yaml"])
        docs = checks.check_manifests(manifests)
        for doc in docs:
            if doc.get("kind") == "LeaderWorkerSet":
                checks.check_lws(doc)
        checks.custom_checks(docs)
        check_kustomization(repo / "k8s")
        check_plan_against_manifests(plan, docs)
    for launcher in (repo / "serve" / "launch.sh", repo / "serve" / "head.sh"):
        if launcher.exists():
            argv = launch_argv(launcher)
            if argv is not None:
                problems = check_argv(argv)
                assert not problems, f"{launcher.name}: {problems}"


def launch_argv(script: Path) -> list[str] | None:
    """The argv after `vllm serve` in a generated script, variables left as written."""
    text = script.read_text()
    if "vllm serve" not in text:
        return None
    tail = text.split("exec vllm serve", 1)[1]
    lines = [line.strip().rstrip("\\").strip() for line in tail.splitlines()]
    words: list[str] = []
    import shlex

    for line in lines:
        if not line or line.startswith("#"):
            continue
        words += shlex.split(line, posix=True) if "$" not in line else line.split()
        if line == '"$@"':
            break
    return [w.strip('"') for w in words if w != '"$@"']


def check_kustomization(folder: Path) -> None:
    k = yaml.safe_load((folder / "kustomization.yaml").read_text())
    assert k["kind"] == "Kustomization" and k["apiVersion"] == "kustomize.config.k8s.io/v1beta1"
    for name in k["resources"]:
        assert (folder / name).is_file(), name
    assert "secret-example.yaml" not in k["resources"]  # an empty Secret is never applied


def check_plan_against_manifests(plan: dict, docs: list[dict]) -> None:
    """GPUs per pod group = TP × PP; replicas; startup budget ≥ the plan's cold start (DOMAIN §7)."""
    tp, pp, nodes = plan["tp"], plan["pp"], plan["nodes_per_replica"]
    workload = next(d for d in docs if d["kind"] in ("Deployment", "LeaderWorkerSet"))
    hpa = next((d for d in docs if d["kind"] == "HorizontalPodAutoscaler"), None)
    if hpa is not None:  # the autoscaler owns the count: no fixed replicas that each `kubectl apply` would reset
        assert "replicas" not in workload["spec"]
        assert hpa["spec"]["maxReplicas"] == plan["replicas"]
    else:
        assert workload["spec"]["replicas"] == plan["replicas"]
    if workload["kind"] == "Deployment":
        pod = workload["spec"]["template"]["spec"]
        size = 1
    else:
        pod = workload["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]
        size = workload["spec"]["leaderWorkerTemplate"]["size"]
        assert size == nodes
    container = pod["containers"][0]
    gpus = int(next(v for k, v in container["resources"]["limits"].items() if k.endswith("/gpu")))
    assert gpus * size == tp * pp, (gpus, size, tp, pp)
    probe = container["startupProbe"]
    budget = probe["periodSeconds"] * probe["failureThreshold"]
    in_container = sum(s["seconds"] for s in plan["cold_start"]["stages"] if s["name"] != "image pull")
    assert budget >= in_container, (budget, in_container)
    assert pod["terminationGracePeriodSeconds"] > 15 + 30  # preStop sleep + --shutdown-timeout
    service = next(d for d in docs if d["kind"] == "Service")
    assert service["metadata"]["name"] != "vllm"


if __name__ == "__main__":  # python tests/starter_repo.py DIR: check a generated repo by hand
    validate_repo(Path(sys.argv[1]))
    print("ok")
