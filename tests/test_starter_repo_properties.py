"""Property test: answers with shell and YAML metacharacters give a clear rejection or a repo that passes
every check — user strings are validated (names) or quoted (paths, model ids), never pasted."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from starter_repo import launch_argv, validate_repo
from wizard.artifacts.render import render_repo
from wizard.artifacts.writer import write_repo
from wizard.errors import InputError
from wizard.session.answers import recorded, validate_answers
from wizard.session.plan import build_plan
from wizard.session.session import run_answers

NASTY = st.sampled_from(list(" '\"$`;|&<>(){}[]#*?!\\:\n\t%@,=~^") + ["$(id)", "`id`", "${HOME}", "'; rm -rf / #",
                                                                       "a: b", "- x", "{x: y}", "\x00", "é", "--port"])
TEXT = st.lists(st.one_of(NASTY, st.text(alphabet="abcXYZ019-_./", min_size=1, max_size=4)), min_size=1,
                max_size=6).map("".join)
TINY = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 256, "intermediate_size": 512,
        "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1000,
        "max_position_embeddings": 4096, "torch_dtype": "bfloat16"}


MAYBE = st.one_of(st.none(), st.none(), st.none(), TEXT)  # mostly absent, so most cases reach a written repo


# derandomize: the same examples on every run, so CI is never red by chance; new seeds are explored by hand
# with --hypothesis-seed.
@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(folder=TEXT, served=MAYBE, ops=st.sampled_from(["basic", "kubernetes"]))
def test_metacharacters_are_rejected_or_quoted(tmp_path_factory, folder, served, ops):
    base = tmp_path_factory.mktemp("m")
    model_dir = base / folder.replace("/", "_").replace("\x00", "_")
    try:
        model_dir.mkdir(parents=True)
    except OSError:
        return  # a name the file system itself refuses
    (model_dir / "config.json").write_text(json.dumps(TINY))
    raw = {"model": str(model_dir), "peak_concurrency": 2, "context_tokens": 2048, "ops_capability": ops,
           "data_residency": True, "gpu": "l4-24gb", "daily_requests": 1000}
    if served is not None:
        raw["served_model_name"] = served
    try:
        answers = validate_answers(raw)
        session = run_answers(answers)
        plan = build_plan(session)
        files = render_repo(plan, recorded(session.answers))
    except InputError as e:
        event(f"rejected: {e.field.split(':')[-1].strip()}")
        assert "\n" not in e.line().strip() or "\n" in str(e.value)  # one line (a value may carry its own newline)
        return
    event("repo written and checked")
    repo = write_repo(files, base / "repo")
    validate_repo(repo)
    # the strings arrive intact: what bash and YAML read back is exactly what was given
    argv = launch_argv(repo / "serve" / "launch.sh")
    script = (repo / "serve" / "launch.sh").read_text()
    # bash itself reads the assignment back (the quoted value may span lines)
    assignment = script.split("\nMODEL=", 1)[1].split("\n# shellcheck", 1)[0]
    read_back = subprocess.run(["bash", "-c", f"MODEL={assignment}\nprintf %s \"$MODEL\""], capture_output=True,
                               text=True, check=True).stdout
    assert read_back == str(model_dir)
    assert shlex.split(assignment) == [str(model_dir)]
    assert argv is not None
    if ops == "kubernetes":
        deployment = yaml.safe_load((repo / "k8s" / "deployment.yaml").read_text())
        container = deployment["spec"]["template"]["spec"]["containers"][0]
        # in a pod the local folder is read from the model volume; Kubernetes reads "$$" as a literal "$"
        assert container["args"][0] == f"/models/{model_dir.name}".replace("$", "$$")
        env = {e["name"]: e.get("value") for e in container["env"]}
        assert env["SERVED_MODEL_NAME"] == (served or str(model_dir)).replace("$", "$$")
    assert Path(repo / "answers.yaml").exists()


@settings(max_examples=60, deadline=None, derandomize=True)
@given(app=TEXT, namespace=TEXT)
def test_kubernetes_names_are_dns_labels_or_rejected(app, namespace):
    """app_name and namespace end up as Kubernetes names: anything but a DNS-1123 label is refused by name."""
    import re

    label = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
    for key, value in (("app_name", app), ("namespace", namespace)):
        try:
            validate_answers({"model": "x", key: value})
        except InputError as e:
            assert key in e.field
            continue
        assert label.match(value)
