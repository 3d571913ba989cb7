"""Generate a scenario's starter repo and run every check on it (shared by the snapshot and property tests).

validate_repo runs the product's checks (wizard.artifacts.repo_checks.check_repo, what `llm-deploy-wizard check
DIR` runs): every group must pass and none may be skipped (the test extra installs the validators; nginx may be
missing outside CI, test_gateway.py runs it there). Then the properties of what the generator writes that a
user's edit may legitimately change, so `check` does not require them.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

from wizard.artifacts.repo_checks import check_repo, load_docs

# the groups a repo must have run, by what it holds (a group that does not apply is left out of the report)
NEEDS = {"k8s/kustomization.yaml": {"kubernetes-validate", "kustomization", "checklist", "plan vs manifests", "yaml",
                                    "yamllint"},
         "serve/launch.sh": {"bash -n", "shellcheck", "vllm flags"}, "serve/head.sh": {"bash -n", "shellcheck", "vllm flags"},
         "bench/run.sh": {"bash -n", "shellcheck"}, "gateway/keys.sh": {"bash -n", "shellcheck"},
         "gateway/compose.yaml": {"compose", "vllm flags", "yamllint"}, "gateway/nginx.conf": {"nginx -t"},
         "client/client.py": {"python"}, "serve/batch.py": {"python"}}


def validate_repo(repo: Path) -> None:
    """Every generated file passes its tools, plus the rules no schema catches."""
    report = check_repo(repo)
    text = "\n".join(report.lines())
    assert report.passed, text
    skipped = {c.name for c in report.skipped}
    if "nginx -t" in skipped and os.environ.get("CI") != "true":
        skipped.discard("nginx -t")  # nginx is a system package: CI installs it (.ci/run), a laptop may not
    assert not skipped, text
    ran = {c.name for c in report.checks}
    assert {"plan.json", "answers.yaml", "yaml", "yamllint"} <= ran, text
    for path, groups in NEEDS.items():
        if (repo / path).exists():
            assert groups <= ran, (path, groups - ran, text)
    # What the generator itself promises beyond the checks:
    scripts = sorted([*repo.glob("serve/*.sh"), *repo.glob("bench/*.sh")])
    for script in scripts:
        assert script.stat().st_mode & 0o111, f"{script.name} is not executable"
    manifests = sorted(p for p in repo.glob("k8s/*.yaml") if p.name != "kustomization.yaml")
    if manifests:
        docs = load_docs(manifests)
        workload = next(d for d in docs if d["kind"] in ("Deployment", "LeaderWorkerSet"))
        if workload["kind"] == "Deployment":
            pod = workload["spec"]["template"]["spec"]
        else:
            pod = workload["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]
        assert pod["terminationGracePeriodSeconds"] > 15 + 30  # the preStop sleep + --shutdown-timeout it writes
        service = next(d for d in docs if d["kind"] == "Service")
        assert service["metadata"]["name"] != "vllm"


def launch_argv(script: Path) -> list[str] | None:
    """The argv after `vllm serve` in a generated script, variables left as written."""
    text = script.read_text()
    if "vllm serve" not in text:
        return None
    tail = text.split("exec vllm serve", 1)[1]
    lines = [line.strip().rstrip("\\").strip() for line in tail.splitlines()]
    words: list[str] = []
    for line in lines:
        if not line or line.startswith("#"):
            continue
        words += shlex.split(line, posix=True) if "$" not in line else line.split()
        if line == '"$@"':
            break
    return [w.strip('"') for w in words if w != '"$@"']


if __name__ == "__main__":  # python tests/starter_repo.py DIR: check a generated repo by hand (or: llm-deploy-wizard check DIR)
    validate_repo(Path(sys.argv[1]))
    print("ok")
