"""Render the starter repo from templates/ (Jinja2): which files fit the plan's form, and their text.

Filters quote every user string for its target: `shq` (shell, shlex.quote) and `yq` (YAML: a JSON string is a
valid YAML scalar, so quotes, colons, '#', newlines and '{' cannot change the document's structure).
StrictUndefined turns a missing value into an error instead of an empty string.
"""

from __future__ import annotations

import json
import re
import shlex
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml
from jinja2 import Environment, FileSystemLoader, StrictUndefined

from wizard.artifacts.chart_svg import caption, starter_svg
from wizard.artifacts.context import IMAGES, autoscaled, build_context, on_cluster, self_built_gateway
from wizard.artifacts.cost_chart import cost_chart
from wizard.artifacts.memory_bar import memory_bar
from wizard.artifacts.plan_sections import plan_sections
from wizard.errors import InputError
from wizard.specs.contracts import Plan, to_json

PACKAGE_TEMPLATES = Path(__file__).resolve().parent.parent / "templates"  # inside the wheel (force-included)
SOURCE_TEMPLATES = Path(__file__).resolve().parent.parent.parent / "templates"  # a source checkout


def template_dir() -> Path:
    for folder in (PACKAGE_TEMPLATES, SOURCE_TEMPLATES):
        if (folder / "RATIONALE.md.j2").is_file():
            return folder
    raise FileNotFoundError("templates/ is missing from this installation")


def one_line(value: Any) -> str:
    return "".join(c if c.isprintable() else "?" for c in str(value))


# What Markdown could read as markup in the middle of a line: code spans, links, table cells, and a "<" or "&"
# only where it starts raw HTML, an autolink or an entity (CommonMark 6.5-6.6, 2.5); not emphasis, not "< 100".
MD_SPECIAL = re.compile(r"[\\`\[\]|]|<(?=[A-Za-z/!?])|&(?=[A-Za-z#])")


def md_text(value: Any) -> str:
    """User text in Markdown prose: one line, every character Markdown could read as markup backslash-escaped, so
    a model id can never become raw HTML, a link (`javascript:`) or a table cell break."""
    return MD_SPECIAL.sub(lambda m: "\\" + m.group(0), one_line(value))


def md_code(value: Any) -> str:
    """User text as a Markdown code span, fenced by more backticks than it contains (CommonMark 6.1)."""
    text = one_line(value)
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def yaml_scalar(value: Any) -> str:
    """A value as a YAML flow scalar that cannot break out of its place."""
    return json.dumps(value, ensure_ascii=False)


@lru_cache(maxsize=1)
def environment() -> Environment:
    env = Environment(loader=FileSystemLoader(str(template_dir())), undefined=StrictUndefined,
                      keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True, autoescape=False)
    env.filters["shq"] = lambda v: shlex.quote(str(v))
    env.filters["yq"] = yaml_scalar
    # Kubernetes expands $(VAR) in a container's command, args and env values ("$$" is a literal "$"): text taken
    # from the user (a model path) or a whole shell script must reach the process as written.
    env.filters["k8s_literal"] = lambda v: str(v).replace("$", "$$")
    # For comments and prose: every non-printable character (newlines, and U+2028/U+0085 that YAML also breaks
    # lines at) becomes "?", so a model id can never end a comment and start code.
    env.filters["oneline"] = one_line
    env.filters["docstring"] = lambda v: one_line(v).replace("\\", "\\\\").replace('"', '\\"')
    env.filters["mdline"] = md_text
    env.filters["mdcode"] = md_code
    env.filters["gib"] = lambda n: f"{n / 2**30:,.2f} GiB"
    env.filters["usd"] = lambda x: "—" if x is None else f"${x:,.0f}"
    env.filters["num"] = lambda n: f"{n:,}" if isinstance(n, int) else f"{n:,.1f}"
    return env


def files_for(plan: Plan, answers: dict[str, Any] | None = None) -> list[tuple[str, str]]:
    """(output path, template) pairs for the parts that fit the form (DESIGN.md "The starter repo")."""
    platform = (answers or {}).get("ops_capability") == "platform"  # a gateway team on its own cluster (§6)
    out = [("README.md", "README.md.j2"), ("RATIONALE.md", "RATIONALE.md.j2")]
    form, exposure = plan.form, plan.exposure
    if form == "managed_api":
        return out + [("client/client.py", "client/client.py.j2"), ("client/README.md", "client/README.md.j2")]
    if exposure == "none":  # offline / research: a batch job, no server, no probes (§12)
        out.append(("serve/batch.py", "serve/batch.py.j2"))
        if form == "multi_node":
            out += [("serve/head.sh", "serve/head.sh.j2"), ("serve/worker.sh", "serve/worker.sh.j2")]
        return out
    if form == "multi_node":
        out += [("serve/head.sh", "serve/head.sh.j2"), ("serve/worker.sh", "serve/worker.sh.j2")]
        k8s = ["lws.yaml", "service.yaml", "secret-example.yaml", "pvc.yaml", "networkpolicy.yaml"]
    else:
        out.append(("serve/launch.sh", "serve/launch.sh.j2"))
        k8s = ["deployment.yaml", "service.yaml", "secret-example.yaml", "pvc.yaml", "networkpolicy.yaml"]
        if autoscaled(plan, answers):  # room to scale: an autoscaler, and the adapter that feeds it the queue
            k8s.append("hpa.yaml")
            out.append(("autoscaling/prometheus-adapter-values.yaml", "autoscaling/prometheus-adapter-values.yaml.j2"))
    if cost_chart(plan) is not None:  # a priced server: cost against daily requests, and the memory bar (§2, §8)
        out.insert(2, ("cost-chart.svg", "cost-chart.svg.j2"))  # beside RATIONALE.md, which links it
    out.append(("bench/run.sh", "bench/run.sh.j2"))  # every repo with a server: the loop back from reality
    if plan.replicas >= 2:
        k8s.append("pdb.yaml")
    if self_built_gateway(plan, answers):  # a basic team's own gateway in front of the replicas (§6)
        out += [("gateway/README.md", "gateway/README-nginx.md.j2"), ("gateway/nginx.conf", "gateway/nginx.conf.j2"),
                ("gateway/compose.yaml", "gateway/compose.yaml.j2"), ("gateway/keys.sh", "gateway/keys.sh.j2"),
                ("gateway/.gitignore", "gateway/gitignore.j2")]
    elif platform:
        out.append(("gateway/README.md", "gateway/README.md.j2"))
    if on_cluster(plan, answers):
        if plan.memory is None or plan.memory.model.source != "local":  # a Hub checkpoint: downloaded once, by a Job
            k8s.append("preseed-job.yaml")
        out += [(f"k8s/{name}", f"k8s/{name}.j2") for name in k8s]
        out.append(("k8s/kustomization.yaml", "k8s/kustomization.yaml.j2"))
    return out


# Plans a repo would not start for: vLLM would load something other than what was sized. Their warning (the tree's)
# names the ways out; the writer refuses with it rather than write a repo that runs out of memory.
UNSERVABLE_WARNINGS = {"needs_quantized_checkpoint": "weight_precision"}


def refuse_unservable(plan: Plan, answers: dict[str, Any]) -> None:
    """InputError (one line, nothing written) when the plan is sized for weights vLLM would not load as sized."""
    if plan.gpu_vendor is not None and plan.gpu_vendor not in IMAGES:
        raise InputError("gpu", plan.gpu, f"no starter repo for {plan.gpu_vendor} cards: they run a separate vLLM fork, "
                         "image and runtime this tool does not write (Intel Gaudi: vllm-gaudi, habana.ai/gaudi) — "
                         "choose an NVIDIA or AMD card, or take the plan's numbers (plan --json) to your own pod spec")
    for w in plan.warnings or ():
        field = UNSERVABLE_WARNINGS.get(w.id)
        if field is not None:
            raise InputError(field, answers.get(field), "no starter repo for it: " + w.message)


def render_repo(plan: Plan, answers: dict[str, Any]) -> dict[str, str]:
    """Every file of the starter repo: path → text. answers.yaml and plan.json replay and record the plan;
    RATIONALE.md writes the plan's sections (plan_sections), the same figures `plan` prints."""
    refuse_unservable(plan, answers)
    ctx = build_context(plan, answers)
    ctx["sections"] = plan_sections(plan, answers)
    pairs = files_for(plan, answers)
    ctx["files"] = [path for path, _ in pairs]
    ctx["k8s_files"] = sorted(p.removeprefix("k8s/") for p, _ in pairs if p.startswith("k8s/") and not p.endswith("kustomization.yaml"))
    chart = cost_chart(plan) if "cost-chart.svg" in ctx["files"] else None
    if chart is not None:  # drawn in Python (wizard/artifacts/chart_svg.py): the template writes it as it is
        bar = memory_bar(plan)
        ctx["cost_chart_svg"] = starter_svg(plan.model, chart, bar)
        ctx["cost_chart_caption"] = caption(chart, bar)
    env = environment()
    files = {path: env.get_template(name).render(**ctx) for path, name in pairs}
    files["answers.yaml"] = yaml.safe_dump(answers, sort_keys=False, allow_unicode=True)
    files["plan.json"] = json.dumps(to_json(plan), indent=2, default=str) + "\n"
    return files
