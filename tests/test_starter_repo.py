"""`plan --out DIR`: every scenario's starter repo equals its golden copy under snapshots/<scenario>/ and passes
every check (bash -n, shellcheck, kubernetes-validate --strict, the LeaderWorkerSet CRD, the vLLM 0.33.0 flag
table, and the rules no schema catches). Update the golden copies deliberately, reading every diff:
    UPDATE_STARTER_SNAPSHOTS=1 python -m pytest tests/test_starter_repo.py
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import yaml

from cli_run import assert_one_line_error, run_cli
from starter_repo import validate_repo

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = sorted(p.stem for p in (ROOT / "tests" / "scenarios").glob("*.yaml"))
SNAPSHOTS = ROOT / "snapshots"
UPDATE = os.environ.get("UPDATE_STARTER_SNAPSHOTS") == "1"


def generate(name: str, out: Path) -> Path:
    r = run_cli("plan", "--answers", str(ROOT / "tests" / "scenarios" / f"{name}.yaml"), "--out", str(out))
    assert r.code == 0, r.err
    assert "wrote the starter repo" in r.err
    return out


BASE = ".llm-deploy-wizard/base/"  # the copies --update merges against: each equals the file it copies


def tree(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): p.read_text() for p in sorted(folder.rglob("*")) if p.is_file()}


def without_base(files: dict[str, str]) -> dict[str, str]:
    """The repo as a reviewer reads it: the base copies are checked to equal their files, not kept twice."""
    copies = {path.removeprefix(BASE): text for path, text in files.items() if path.startswith(BASE)}
    assert copies, "a starter repo keeps its base copies for --update"
    for path, text in copies.items():
        assert files.get(path) == text, f"{BASE}{path} is not a copy of {path}"
    return {path: text for path, text in files.items() if not path.startswith(BASE)}


@pytest.mark.parametrize("name", SCENARIOS)
def test_starter_repo_matches_its_golden_copy_and_passes_every_check(name, tmp_path):
    repo = generate(name, tmp_path / name)
    validate_repo(repo)
    golden = SNAPSHOTS / name
    if UPDATE:
        shutil.rmtree(golden, ignore_errors=True)
        shutil.copytree(repo, golden, ignore=lambda folder, names: ["base"] if folder.endswith(".llm-deploy-wizard") else [])
    assert golden.is_dir(), f"no golden copy: run with UPDATE_STARTER_SNAPSHOTS=1 and read {golden}"
    got, want = without_base(tree(repo)), tree(golden)
    assert sorted(got) == sorted(want)
    for path in want:
        assert got[path] == want[path], f"{name}/{path} differs from snapshots/{name}/{path}"


def test_only_the_parts_that_fit_the_form_are_written(tmp_path):
    managed = tree(generate("very_low_traffic", tmp_path / "m"))
    assert "client/client.py" in managed and not any(p.startswith(("k8s/", "serve/")) for p in managed)
    offline = tree(generate("offline_research", tmp_path / "o"))
    assert "serve/batch.py" in offline and not any(p.startswith("k8s/") for p in offline)
    multi = tree(generate("very_large_model", tmp_path / "x"))
    assert {"serve/head.sh", "serve/worker.sh", "k8s/lws.yaml"} <= set(multi) and "k8s/deployment.yaml" not in multi
    single = tree(generate("single_replica_forced", tmp_path / "s"))
    assert "k8s/pdb.yaml" not in single  # no PDB for one replica: it would block node drains
    gateway = tree(generate("data_residency", tmp_path / "g"))
    assert "serve/launch.sh" in gateway and not any(p.startswith("k8s/") for p in gateway)


def test_answers_yaml_replays_the_same_plan(tmp_path):
    repo = generate("llama70b_bf16", tmp_path / "r")
    again = run_cli("plan", "--answers", str(repo / "answers.yaml"), "--json")
    assert again.code == 0, again.err
    first = json.loads((repo / "plan.json").read_text())
    second = again.json()
    for key in ("form", "exposure", "gpu", "tp", "pp", "replicas", "memory", "cost", "warnings"):
        assert first[key] == second[key], key


def test_rationale_explains_the_decision_on_its_own(tmp_path):
    repo = generate("llama70b_bf16", tmp_path / "r")
    text = (repo / "RATIONALE.md").read_text()
    per_replica = json.loads((repo / "plan.json").read_text())["concurrency_per_replica"]
    for part in ("## The answers", "## The path through the tree", "## Memory per GPU", "## Throughput and replicas",
                 "## Cost per month", "## Cold start", "## Warnings", "## Ruled out", "§3", "§5", "§8",
                 "TP 4", f"ceil(peak / {per_replica})"):
        assert part in text, part


def test_refuses_a_non_empty_folder_without_force(tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("the user's own file")
    r = run_cli("plan", "--answers", str(ROOT / "tests" / "scenarios" / "tiny_model.yaml"), "--out", str(out))
    assert_one_line_error(r, "--out", "not empty", "--force")
    assert (out / "notes.txt").read_text() == "the user's own file"
    # --force replaces only a starter repo this tool wrote (its marker lists the files): never the user's files.
    forced = run_cli("plan", "--answers", str(ROOT / "tests" / "scenarios" / "tiny_model.yaml"), "--out", str(out),
                     "--force")
    assert_one_line_error(forced, "--out", "no starter repo of this tool")
    assert (out / "notes.txt").read_text() == "the user's own file"
    repo = generate("tiny_model", tmp_path / "repo")
    again = run_cli("plan", "--answers", str(ROOT / "tests" / "scenarios" / "tiny_model.yaml"), "--out", str(repo),
                    "--force")
    assert again.code == 0, again.err


def test_force_never_replaces_the_model_folder_or_the_answers_file(tmp_path):
    # --force into the checkpoint's own folder used to delete config.json and the weights.
    model = tmp_path / "my-model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 2048, "intermediate_size": 8192,
        "num_hidden_layers": 16, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256,
        "max_position_embeddings": 131072}))
    answers = model / "answers.yaml"
    answers.write_text(f"model: {model}\n")
    for out in (model, tmp_path):  # the folder itself, and a folder holding it
        r = run_cli("plan", "--answers", str(answers), "--out", str(out), "--force")
        assert_one_line_error(r, "--out", "which the plan reads")
    assert (model / "config.json").exists() and answers.exists()


@pytest.mark.parametrize(("out", "words"), [
    ("", ["--out", "expected a folder path"]),
    ("{file}/sub", ["--out", "cannot be created"]),
])
def test_bad_out_paths_are_one_clear_line(tmp_path, out, words):
    a_file = tmp_path / "a-file"
    a_file.write_text("not a folder")
    r = run_cli("plan", "--answers", str(ROOT / "tests" / "scenarios" / "tiny_model.yaml"),
                "--out", out.format(file=a_file))
    assert_one_line_error(r, *words)


def test_replacing_keeps_a_users_folder_named_like_the_old_backup(tmp_path):
    # The writer once parked the replaced repo as ".<name>.replaced" and deleted it: a user's folder of that name
    # went with it. It also left the new repo private (0700, mkdtemp's mode).
    out = generate("tiny_model", tmp_path / "repo")
    mine = tmp_path / ".repo.replaced"
    mine.mkdir()
    (mine / "precious.txt").write_text("the user's")
    r = run_cli("plan", "--answers", str(ROOT / "tests" / "scenarios" / "tiny_model.yaml"), "--out", str(out), "--force")
    assert r.code == 0, r.err
    assert (mine / "precious.txt").read_text() == "the user's"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".repo.") and p != mine]  # no leftovers
    umask = os.umask(0)
    os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o777 & ~umask


@pytest.mark.parametrize("failure", [OSError("disk full"), KeyboardInterrupt()])
def test_nothing_half_written_on_failure(tmp_path, monkeypatch, failure):
    from wizard.artifacts import writer
    from wizard.errors import InputError

    out = tmp_path / "existing"
    writer.write_repo({"keep.txt": "previous repo"}, out)
    calls = {"n": 0}
    real = Path.write_text

    def flaky(self, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 3:
            raise failure
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", flaky)
    with pytest.raises(InputError if isinstance(failure, OSError) else type(failure)):  # an OSError is one line
        writer.write_repo({"a.txt": "1", "b/c.txt": "2", "d.txt": "3", "e.txt": "4"}, out, force=True)
    monkeypatch.undo()
    assert (out / "keep.txt").read_text() == "previous repo"  # the replaced folder is back, untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["existing"]  # no staging folder left behind


def test_names_are_validated_not_pasted(tmp_path):
    answers = tmp_path / "a.yaml"
    answers.write_text(yaml.safe_dump({"model": "Qwen/Qwen3-8B", "app_name": "My App; rm -rf /"}))
    assert_one_line_error(run_cli("plan", "--answers", str(answers)), "app_name")
    answers.write_text(yaml.safe_dump({"model": "Qwen/Qwen3-8B", "served_model_name": "x\ny: 1"}))
    assert_one_line_error(run_cli("plan", "--answers", str(answers)), "served_model_name")


def _local_llama(folder: Path, layers: int = 32) -> None:
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
        "num_hidden_layers": layers, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256,
        "max_position_embeddings": 131072}))


def test_a_local_model_is_read_from_the_volume_and_dollar_text_is_literal(tmp_path):
    # Kubernetes expands $(VAR) in args and env values: a folder named "$(VLLM_API_KEY)" would have put the API key
    # into the process arguments. And a host path means nothing inside a pod: it reads the model volume instead.
    model = tmp_path / "models" / "$(VLLM_API_KEY)"
    _local_llama(model)
    answers = tmp_path / "answers.yaml"
    answers.write_text(yaml.safe_dump({"model": str(model), "gpu": "l40s-48gb", "peak_concurrency": 16,
                                       "ops_capability": "kubernetes"}))
    out = tmp_path / "repo"
    r = run_cli("plan", "--answers", str(answers), "--out", str(out))
    assert r.code == 0, r.err
    validate_repo(out)
    docs = list(yaml.safe_load_all((out / "k8s" / "deployment.yaml").read_text()))
    container = docs[0]["spec"]["template"]["spec"]["containers"][0]
    assert container["args"][0] == "/models/$$(VLLM_API_KEY)"  # the pod's path, escaped for the kubelet
    served = next(e for e in container["env"] if e["name"] == "SERVED_MODEL_NAME")
    assert "$(" not in served["value"].replace("$$(", "")
    assert "/models/$(VLLM_API_KEY)" in (out / "README.md").read_text()  # and the README says to copy it there
    assert str(model) in (out / "serve" / "launch.sh").read_text()  # on the machine itself, the folder as it is


def test_a_multi_node_leader_script_reaches_bash_as_written(tmp_path):
    # The LeaderWorkerSet runs its scripts through `bash -c`: every "$" is doubled so the kubelet leaves them alone.
    out = generate("very_large_model", tmp_path / "repo")
    lws = next(yaml.safe_load_all((out / "k8s" / "lws.yaml").read_text()))
    leader = lws["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]["containers"][0]["args"][0]
    worker = lws["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]["args"][0]
    for script in (leader, worker):
        assert "$" in script
        assert script.count("$") == 2 * script.count("$$")  # every "$" is part of a "$$"
