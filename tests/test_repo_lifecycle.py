"""A starter repo's lifecycle, as copier's: `plan --out DIR --dry-run | --diff | --update` regenerate a repo the
user edited (their edits survive, a conflict is marked), and the user's defaults.yaml under the answers file."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from cli_run import assert_one_line_error, run_main
from starter_repo import validate_repo
from wizard.artifacts.writer import MARKER, read_marker
from wizard.session.merge3 import merge2, merge3
from wizard.session.repo_update import BASE_DIR

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "tests" / "scenarios" / "llama8b_high_traffic.yaml"  # Kubernetes, 6 replicas, an HPA
MINE = "\nOur on-call rota: see the wiki.\n"  # the user's edit of README.md, a file the new plan does not change


def files_of(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def write_answers(path: Path, **changes: object) -> Path:
    answers = {**yaml.safe_load(SCENARIO.read_text()), **changes}
    path.write_text(yaml.safe_dump(answers, sort_keys=False))
    return path


@pytest.fixture
def edited(tmp_path):
    """A starter repo written from an answers file, then edited: a line added to README.md (the new plan leaves
    that file alone), the grace period of k8s/deployment.yaml raised (far from the lines the new plan changes)
    and the HPA's maxReplicas (the very line it changes); the answers then raise peak_concurrency."""
    answers = write_answers(tmp_path / "answers.yaml")
    repo = tmp_path / "repo"
    r = run_main("plan", "--answers", str(answers), "--out", str(repo))
    assert r.code == 0, r.err
    with open(repo / "README.md", "a") as f:
        f.write(MINE)
    deployment = repo / "k8s" / "deployment.yaml"
    deployment.write_text(deployment.read_text().replace("terminationGracePeriodSeconds: 60",
                                                         "terminationGracePeriodSeconds: 90"))
    write_answers(answers, peak_concurrency=512)  # 6 → 11 replicas
    return answers, repo


def edit_hpa(repo: Path) -> None:
    hpa = repo / "k8s" / "hpa.yaml"
    assert "  maxReplicas: 6\n" in hpa.read_text()
    hpa.write_text(hpa.read_text().replace("  maxReplicas: 6\n", "  maxReplicas: 8\n"))


def states(out: str) -> dict[str, str]:
    return {line.split()[1]: line.split()[0] for line in out.splitlines()}


# ----------------------------------------------------------------------------------------------- the base copy


def test_a_new_repo_keeps_a_base_copy_of_each_file_it_writes_and_force_still_replaces_it(tmp_path):
    repo = tmp_path / "repo"
    assert run_main("plan", "--answers", str(SCENARIO), "--out", str(repo)).code == 0
    files = files_of(repo)
    generated = {p for p in files if p != MARKER and not p.startswith(".llm-deploy-wizard/")}
    assert {"README.md", "k8s/deployment.yaml", "k8s/hpa.yaml", "serve/launch.sh"} <= generated
    for path in generated:
        assert files[f"{BASE_DIR}/{path}"] == files[path], path
        assert not (repo / BASE_DIR / path).stat().st_mode & 0o111, path  # a copy is never run by mistake
    assert set(read_marker(repo)) == {*files}  # listed, so --force knows it wrote them
    r = run_main("plan", "--answers", str(SCENARIO), "--set", "peak_concurrency=512", "--out", str(repo), "--force")
    assert r.code == 0, r.err


# -------------------------------------------------------------------------------------------- --dry-run, --diff


def test_dry_run_lists_every_file_with_its_state_and_writes_nothing(edited):
    answers, repo = edited
    edit_hpa(repo)
    before = files_of(repo)
    r = run_main("plan", "--answers", str(answers), "--out", str(repo), "--dry-run")
    assert r.code == 0, r.err
    got = states(r.out)
    assert got["README.md"] == "user-edited"  # yours, and the new plan writes the same as before
    assert got["k8s/deployment.yaml"] == "merged"  # yours and the plan's, on different lines
    assert got["k8s/hpa.yaml"] == "conflict"  # both changed maxReplicas
    assert got["answers.yaml"] == got["plan.json"] == got["bench/run.sh"] == "changed"
    assert got["k8s/service.yaml"] == "unchanged"
    assert set(got) == {p for p in before if p != MARKER and not p.startswith(".llm-deploy-wizard/")}
    assert "nothing was written" in r.err and "conflict 1" in r.err and "k8s/hpa.yaml" in r.err
    assert files_of(repo) == before


def test_diff_shows_what_update_would_change_and_never_undoes_the_users_edit(edited):
    answers, repo = edited
    edit_hpa(repo)
    before = files_of(repo)
    r = run_main("plan", "--answers", str(answers), "--out", str(repo), "--diff")
    assert r.code == 0, r.err  # like `git diff`: differences are no failure
    assert files_of(repo) == before
    out = r.out
    assert "--- a/answers.yaml\n+++ b/answers.yaml\n" in out
    assert "-peak_concurrency: 256\n+peak_concurrency: 512\n" in out
    assert "+# meta-llama/Llama-3.1-8B-Instruct on 11 replica(s)" in out  # the plan's change of deployment.yaml
    assert "terminationGracePeriodSeconds" not in out  # the user's line is kept: no change to show
    assert "README.md" not in out and "on-call rota" not in out
    assert "+<<<<<<< yours\n" in out and "+>>>>>>> llm-deploy-wizard\n" in out  # what --update writes in hpa.yaml
    assert "k8s/service.yaml" not in out


# ------------------------------------------------------------------------------------------------------ --update


def test_update_keeps_edits_merges_replaces_untouched_files_and_leaves_a_valid_repo(edited):
    answers, repo = edited
    r = run_main("plan", "--answers", str(answers), "--out", str(repo), "--update")
    assert r.code == 0, r.err
    assert r.out  # the plan, as with --out
    readme = (repo / "README.md").read_text()
    assert readme.endswith(MINE)
    deployment = (repo / "k8s" / "deployment.yaml").read_text()
    assert "terminationGracePeriodSeconds: 90" in deployment  # yours
    assert "on 11 replica(s)" in deployment and "(2-11)" in deployment  # and the plan's
    assert "maxReplicas: 11" in (repo / "k8s" / "hpa.yaml").read_text()  # untouched by you: replaced
    assert yaml.safe_load((repo / "answers.yaml").read_text())["peak_concurrency"] == 512
    assert json.loads((repo / "plan.json").read_text())["replicas"] == 11
    for line in ("user-edited  README.md", "merged       k8s/deployment.yaml", "changed      k8s/hpa.yaml"):
        assert line in r.err, line
    assert "updated the starter repo" in r.err and "conflict" not in r.err
    assert (repo / "serve" / "launch.sh").stat().st_mode & 0o111
    # the base is now the new render: the README edit is still yours, the rest is the tool's
    base = repo / BASE_DIR
    assert "terminationGracePeriodSeconds: 60" in (base / "k8s" / "deployment.yaml").read_text()
    assert not (base / "README.md").read_text().endswith(MINE)
    again = run_main("plan", "--answers", str(answers), "--out", str(repo), "--dry-run")
    assert set(states(again.out).values()) == {"unchanged", "user-edited"}
    validate_repo(repo)


def test_update_marks_a_conflict_when_both_changed_the_same_line_and_exits_1(edited):
    answers, repo = edited
    edit_hpa(repo)
    r = run_main("plan", "--answers", str(answers), "--out", str(repo), "--update")
    assert r.code == 1, r.err
    hpa = (repo / "k8s" / "hpa.yaml").read_text()
    assert "<<<<<<< yours\n  maxReplicas: 8\n=======\n  maxReplicas: 11\n>>>>>>> llm-deploy-wizard\n" in hpa
    assert hpa.count("<<<<<<<") == 1 and "minReplicas: 2" in hpa  # only the conflicting line is marked
    assert "conflict     k8s/hpa.yaml" in r.err and "conflicts in k8s/hpa.yaml" in r.err
    assert (repo / "README.md").read_text().endswith(MINE)  # the rest is updated as without the conflict
    assert "on 11 replica(s)" in (repo / "k8s" / "deployment.yaml").read_text()
    # resolved by the user, keeping theirs: an edit of theirs from then on, kept by the next update
    (repo / "k8s" / "hpa.yaml").write_text(hpa.replace("<<<<<<< yours\n", "")
                                           .replace("=======\n  maxReplicas: 11\n>>>>>>> llm-deploy-wizard\n", ""))
    again = run_main("plan", "--answers", str(answers), "--out", str(repo), "--update")
    assert again.code == 0 and "user-edited  k8s/hpa.yaml" in again.err
    assert "maxReplicas: 8" in (repo / "k8s" / "hpa.yaml").read_text()


def test_the_repos_own_answers_yaml_edited_then_replayed_keeps_your_comments(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    assert run_main("plan", "--answers", str(SCENARIO), "--out", str(repo)).code == 0
    answers = repo / "answers.yaml"
    answers.write_text("# the 8B endpoint of the search team\n"
                       + answers.read_text().replace("peak_concurrency: 256", "peak_concurrency: 512  # launch week"))
    monkeypatch.chdir(repo)
    r = run_main("plan", "--answers", "answers.yaml", "--out", ".", "--update")
    assert r.code == 0, r.err
    assert "user-edited  answers.yaml" in r.err  # it records the answers the plan used: yours, comments and all
    assert answers.read_text().startswith("# the 8B endpoint") and "# launch week" in answers.read_text()
    assert json.loads((repo / "plan.json").read_text())["replicas"] == 11
    again = run_main("plan", "--answers", "answers.yaml", "--set", "ttft_p99_ms=1500", "--out", ".", "--update")
    assert again.code == 0, again.err
    assert "merged       answers.yaml" in again.err and "ttft_p99_ms: 1500\n" in answers.read_text()
    assert "# launch week" in answers.read_text()


def test_files_the_new_plan_no_longer_writes_go_unless_you_edited_them(edited):
    answers, repo = edited
    with open(repo / "k8s" / "pdb.yaml", "a") as f:
        f.write("# ours: keep\n")
    r = run_main("plan", "--answers", str(answers), "--set", "replicas=1", "--out", str(repo), "--update")
    assert r.code == 0, r.err
    assert not (repo / "k8s" / "hpa.yaml").exists() and not (repo / "autoscaling").exists()  # folder left empty: gone
    assert (repo / "k8s" / "pdb.yaml").read_text().endswith("# ours: keep\n")
    assert "removed      k8s/hpa.yaml" in r.err and "kept         k8s/pdb.yaml" in r.err
    assert "k8s/pdb.yaml" in read_marker(repo)  # still the tool's, so --force may replace the folder
    assert not (repo / BASE_DIR / "k8s" / "hpa.yaml").exists()
    back = run_main("plan", "--answers", str(answers), "--out", str(repo), "--dry-run")
    assert states(back.out)["k8s/hpa.yaml"] == "new"
    assert states(back.out)["k8s/pdb.yaml"] == "conflict"  # yours, where the plan writes one again: no base copy


def test_a_file_you_deleted_stays_deleted_unless_the_new_plan_changes_it(edited):
    answers, repo = edited
    (repo / "k8s" / "service.yaml").unlink()  # the new plan writes the same service
    (repo / "k8s" / "hpa.yaml").unlink()  # the new plan changes it
    r = run_main("plan", "--answers", str(answers), "--out", str(repo), "--update")
    assert r.code == 1, r.err
    assert not (repo / "k8s" / "service.yaml").exists() and "deleted      k8s/service.yaml" in r.err
    assert "maxReplicas: 11" in (repo / "k8s" / "hpa.yaml").read_text() and "conflict     k8s/hpa.yaml" in r.err


def test_update_touches_only_the_tools_files_and_works_in_the_current_folder(edited, monkeypatch):
    answers, repo = edited
    (repo / ".git").mkdir()
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (repo / "k8s" / "my-ingress.yaml").write_text("kind: Ingress\n")
    monkeypatch.chdir(repo)
    r = run_main("plan", "--answers", str(answers), "--out", ".", "--update")
    assert r.code == 0, r.err
    assert (repo / ".git" / "HEAD").read_text() == "ref: refs/heads/main\n"
    assert (repo / "k8s" / "my-ingress.yaml").read_text() == "kind: Ingress\n"
    assert "k8s/my-ingress.yaml" not in read_marker(repo)
    assert not [p for p in files_of(repo) if "llmdw" in p]  # no temporary file left


def test_a_link_is_never_written_through(edited, tmp_path):
    answers, repo = edited
    elsewhere = tmp_path / "shared-hpa.yaml"
    elsewhere.write_text("kind: HorizontalPodAutoscaler\n")
    (repo / "k8s" / "hpa.yaml").unlink()
    (repo / "k8s" / "hpa.yaml").symlink_to(elsewhere)
    r = run_main("plan", "--answers", str(answers), "--out", str(repo), "--update")
    assert r.code == 1, r.err
    assert "skipped      k8s/hpa.yaml" in r.err and "not updated: k8s/hpa.yaml" in r.err
    assert elsewhere.read_text() == "kind: HorizontalPodAutoscaler\n" and (repo / "k8s" / "hpa.yaml").is_symlink()


def test_a_repo_written_before_the_base_copy_existed_is_compared_two_way(edited):
    answers, repo = edited
    for p in sorted((repo / BASE_DIR).rglob("*"), reverse=True):
        p.unlink() if p.is_file() else p.rmdir()
    (repo / ".llm-deploy-wizard" / "base").rmdir()
    (repo / ".llm-deploy-wizard").rmdir()
    marker = json.loads((repo / MARKER).read_text())
    marker["files"] = [f for f in marker["files"] if not f.startswith(".llm-deploy-wizard/")]
    (repo / MARKER).write_text(json.dumps(marker))
    r = run_main("plan", "--answers", str(answers), "--out", str(repo), "--update")
    assert r.code == 1, r.err
    got = {line.split()[1]: line.split()[0] for line in r.err.splitlines()[:-1]}
    assert got["k8s/service.yaml"] == "unchanged" and got["k8s/hpa.yaml"] == "conflict"
    assert got["README.md"] == "conflict" and "no base copy" in r.err
    readme = (repo / "README.md").read_text()  # your lines against none: nothing says the tool did not drop them
    assert readme.endswith(f"<<<<<<< yours\n{MINE}=======\n>>>>>>> llm-deploy-wizard\n"), readme[-200:]
    assert (repo / BASE_DIR / "k8s" / "hpa.yaml").is_file()  # from now on there is a base


# ----------------------------------------------------------------------------------------------- refusals


@pytest.mark.parametrize("flag", ["--update", "--diff", "--dry-run"])
def test_the_lifecycle_options_work_only_on_a_folder_this_tool_wrote(tmp_path, flag):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "README.md").write_text("my project\n")
    for out, words in ((mine, "no starter repo of this tool"), (tmp_path / "nowhere", "no such folder")):
        r = run_main("plan", "--answers", str(SCENARIO), "--out", str(out), flag)
        assert_one_line_error(r, "--out", str(out), words, flag)
    assert files_of(mine) == {"README.md": b"my project\n"} and not (tmp_path / "nowhere").exists()
    assert_one_line_error(run_main("plan", "--answers", str(SCENARIO), flag), flag, "--out DIR")


@pytest.mark.parametrize("flags", [("--update", "--force"), ("--diff", "--update"), ("--dry-run", "--diff"),
                                   ("--dry-run", "--force")])
def test_the_lifecycle_options_exclude_each_other_and_force(tmp_path, flags):
    r = run_main("plan", "--answers", str(SCENARIO), "--out", str(tmp_path / "r"), *flags)
    assert_one_line_error(r, "not allowed with")
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("flag", ["--diff", "--dry-run"])
def test_a_preview_prints_the_changes_not_the_plan_json(tmp_path, flag):
    assert_one_line_error(run_main("plan", "--answers", str(SCENARIO), "--out", str(tmp_path), flag, "--json"),
                          "--json", flag)


def test_a_base_copy_that_is_a_link_is_refused_in_one_line(edited, tmp_path):
    answers, repo = edited
    (repo / BASE_DIR / "k8s" / "hpa.yaml").unlink()
    (repo / BASE_DIR / "k8s" / "hpa.yaml").symlink_to(tmp_path / "elsewhere")
    before = files_of(repo)
    r = run_main("plan", "--answers", str(answers), "--out", str(repo), "--update")
    assert_one_line_error(r, "--out", f"{BASE_DIR}/k8s/hpa.yaml", "symbolic link")
    assert files_of(repo) == before and not (tmp_path / "elsewhere").exists()


# ----------------------------------------------------------------------------------------------- merges


def test_merge3_takes_each_sides_change_and_marks_only_the_lines_both_changed():
    base = "a\nb\nc\nd\ne\nf\ng\n"
    assert merge3(base, "a\nB\nc\nd\ne\nf\ng\n", "a\nb\nc\nd\ne\nF\ng\n") == ("a\nB\nc\nd\ne\nF\ng\n", 0)
    assert merge3(base, "a\nX\nc\nd\ne\nf\ng\n", "a\nX\nc\nd\ne\nf\ng\n") == ("a\nX\nc\nd\ne\nf\ng\n", 0)  # alike
    assert merge3(base, base, "x\n") == ("x\n", 0) and merge3(base, "y\n", base) == ("y\n", 0)
    got = merge3(base, "a\nmine\nc\nd\ne\nf\ng\n", "a\nnew\nc\nd\ne\nf\nG\n")
    assert got == ("a\n<<<<<<< yours\nmine\n=======\nnew\n>>>>>>> llm-deploy-wizard\nc\nd\ne\nf\nG\n", 1)
    assert merge3("a", "b", "c").text == "<<<<<<< yours\nb\n=======\nc\n>>>>>>> llm-deploy-wizard\n"  # no final \n


def test_merge2_keeps_the_shared_lines_and_marks_every_difference():
    got = merge2("a\nb\nc\nmine\n", "a\nB\nc\n")
    assert got == ("a\n<<<<<<< yours\nb\n=======\nB\n>>>>>>> llm-deploy-wizard\nc\n"
                   "<<<<<<< yours\nmine\n=======\n>>>>>>> llm-deploy-wizard\n", 2)
    assert merge2("same\n", "same\n") == ("same\n", 0)


# ----------------------------------------------------------------------------------------- defaults.yaml


def defaults(text: str) -> Path:
    path = Path(os.environ["XDG_CONFIG_HOME"]) / "llm-deploy-wizard" / "defaults.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_a_namespace_from_the_defaults_file_reaches_the_manifests_and_is_recorded(tmp_path):
    path = defaults("namespace: team-ml\nstorage_class: fast-rwx\nstaff_usd_month: 2000\n")
    repo = tmp_path / "repo"
    r = run_main("plan", "--answers", str(SCENARIO), "--out", str(repo))
    assert r.code == 0, r.err
    assert yaml.safe_load((repo / "k8s" / "kustomization.yaml").read_text())["namespace"] == "team-ml"
    assert "fast-rwx" in (repo / "k8s" / "pvc.yaml").read_text()
    recorded = yaml.safe_load((repo / "answers.yaml").read_text())  # replays without the defaults file
    assert recorded["namespace"] == "team-ml" and recorded["staff_usd_month"] == 2000
    assert f"from your defaults ({path}): namespace, storage_class, staff_usd_month" in r.err


def test_the_answers_file_and_set_win_over_the_defaults_file(tmp_path):
    defaults("namespace: team-ml\ngpu_hour_usd: 1.5\n")
    answers = write_answers(tmp_path / "a.yaml", namespace="inference")
    r = run_main("plan", "--answers", str(answers), "--set", "gpu_hour_usd=2", "--json")
    assert r.code == 0, r.err
    assert "defaults" not in r.err  # nothing came from it
    repo = tmp_path / "repo"
    assert run_main("plan", "--answers", str(answers), "--out", str(repo)).code == 0
    assert yaml.safe_load((repo / "k8s" / "kustomization.yaml").read_text())["namespace"] == "inference"
    assert r.json()["cost"]["gpu_price"]["usd_per_gpu_hour"] == 2


@pytest.mark.parametrize(("text", "words"), [
    ("namespce: team-ml\n", ["namespce", "unknown key", "did you mean namespace"]),
    ("namespace: Team_ML\n", ["namespace", "Team_ML", "DNS-1123"]),
    ("gpu_hour_usd: cheap\n", ["gpu_hour_usd", "cheap"]),
    ("model: Qwen/Qwen3-8B\n", ["model", "names one deployment"]),
    ("- a list\n", ["expected a mapping"]),
    ("namespace: [unclosed\n", ["not valid YAML"]),
])
def test_a_bad_defaults_file_is_one_line_naming_the_file_and_the_key(tmp_path, text, words):
    path = defaults(text)
    r = run_main("plan", "--answers", str(SCENARIO), "--out", str(tmp_path / "repo"))
    assert_one_line_error(r, str(path), *words)
    assert not (tmp_path / "repo").exists()


def test_the_defaults_file_is_looked_for_under_xdg_config_home_else_the_home_folder(tmp_path, monkeypatch):
    from wizard.session.answers import defaults_file

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    assert defaults_file() == tmp_path / "cfg" / "llm-deploy-wizard" / "defaults.yaml"
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for unset in ("", "relative/path"):  # the XDG spec: an empty or relative value is ignored
        monkeypatch.setenv("XDG_CONFIG_HOME", unset)
        assert defaults_file() == tmp_path / "home" / ".config" / "llm-deploy-wizard" / "defaults.yaml"
    monkeypatch.delenv("XDG_CONFIG_HOME")
    (tmp_path / "home" / ".config" / "llm-deploy-wizard").mkdir(parents=True)
    (tmp_path / "home" / ".config" / "llm-deploy-wizard" / "defaults.yaml").write_text("namespace: from-home\n")
    r = run_main("plan", "--answers", str(SCENARIO), "--json")
    assert r.code == 0 and "namespace" in r.err
