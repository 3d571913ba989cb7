"""The checks of generated starter repos, for tests: the product's wizard.artifacts.repo_checks (what
`llm-deploy-wizard check DIR` runs), with `check_*` functions that raise AssertionError listing the tool output
or the problems; the `*_problems` functions return the list instead (for tests that assert on one problem).

Item numbers ("[item 13]") are those of the starter-repo checklist the product's messages name. In the tests a
missing validator is a failure, never a skip: `pip install -e '.[test]'` installs them (the test extra includes
the `check` extra's pins).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from wizard.artifacts import repo_checks, vllm_flags
from wizard.artifacts.repo_checks import (  # noqa: F401  re-exported for the tests
    CRD_DIR, CRDS, ENGINE_READY_DEFAULT_S, HISTOGRAM_SUFFIXES, K8S_VERSION, KEDA_CRD, LWS_CRD, VLLM_METRICS,
    YAMLLINT_CONFIG, CheckError, Pod, Problem, Serving, ToolMissing, compose_problems, compose_strings,
    compose_variables, cr_problems, crd_validators, custom_problems, env_values, extended_problems, gpu_resources,
    gpu_shm_problems, load_docs as _load_docs, lws_problems, manifest_problems as _manifest_problems, nginx_binary,
    pods, prestop_sleep_s, quantity, resolve, script_serve_argvs, serve_command, startup_budget_s, vllm_containers)


def _fail(title: str, problems: Iterable[Problem | str]) -> None:
    lines = [f"{p.path}: {p.message}" if isinstance(p, Problem) else str(p) for p in problems]
    if lines:
        raise AssertionError(f"{title}:\n" + "\n".join(lines))


def _tool_required(e: ToolMissing) -> AssertionError:
    return AssertionError(f"{e.tool} not found: pip install -e '.[test]' ({e.install})")


def check_bash(path: str | Path, *more: str | Path) -> None:
    """`bash -n` (syntax) and `shellcheck -s bash -S style -f gcc` on one or more scripts (one shellcheck run)."""
    paths = [path, *more]
    try:
        problems = repo_checks.bash_syntax_problems(paths) + repo_checks.shellcheck_problems(paths)
    except ToolMissing as e:
        raise _tool_required(e) from None
    _fail("bash -n / shellcheck -s bash -S style", problems)


def check_yaml_lint(paths: Iterable[str | Path]) -> None:
    """yamllint with the relaxed config; errors fail (e.g. duplicate keys), warnings don't."""
    try:
        _fail("yamllint", repo_checks.yaml_lint_problems(paths))
    except ToolMissing as e:
        raise _tool_required(e) from None


def load_docs(paths: Iterable[str | Path]) -> list[dict[str, Any]]:
    """Every non-empty YAML document of the files, in order (AssertionError on one that is no mapping)."""
    try:
        return _load_docs(paths)
    except CheckError as e:
        raise AssertionError(str(e)) from None


def manifest_problems(docs: list[dict[str, Any]], *, allow_unvalidated: Iterable[str] = ()) -> list[str]:
    try:
        return _manifest_problems(docs, allow_unvalidated=allow_unvalidated)
    except ToolMissing as e:
        raise _tool_required(e) from None


def check_lws(doc: dict[str, Any]) -> None:
    """Raise AssertionError listing every problem of a LeaderWorkerSet (schema and startupPolicy)."""
    _fail("LeaderWorkerSet", lws_problems(doc))


def check_scaled_object(doc: dict[str, Any]) -> None:
    """Raise AssertionError listing every schema problem of a KEDA ScaledObject (bundled CRD)."""
    _fail("ScaledObject", cr_problems(doc, KEDA_CRD))


def check_manifests(paths: Iterable[str | Path], *, allow_unvalidated: Iterable[str] = ()) -> list[dict[str, Any]]:
    """Validate every document of the manifest files (see manifest_problems); returns the parsed documents."""
    docs = load_docs(paths)
    _fail("manifest schema problems", manifest_problems(docs, allow_unvalidated=allow_unvalidated))
    return docs


def check_vllm_args(argv: list[str]) -> None:
    """Raise AssertionError listing the problems of a `vllm serve` argv (wizard.artifacts.vllm_flags)."""
    problems = vllm_flags.check_argv(argv)
    if problems:
        raise AssertionError(f"vllm serve {' '.join(map(str, argv))}\n" + "\n".join(f" - {p}" for p in problems))


def custom_checks(docs: list[dict[str, Any]], serve_argv: list[str] | None = None) -> None:
    """Raise AssertionError listing every custom_problems() finding."""
    _fail("checklist rules", (f" - {p}" for p in custom_problems(docs, serve_argv)))


def extended_checks(docs: list[dict[str, Any]], serve_argv: list[str] | None = None) -> None:
    """Raise AssertionError listing every extended_problems() finding."""
    _fail("checklist (extended)", (f" - {p}" for p in extended_problems(docs, serve_argv)))


def compose_interpolate(text: str, env: dict[str, str]) -> str:
    """A compose value as Compose reads it with `env` (AssertionError where compose refuses it)."""
    try:
        return repo_checks.compose_interpolate(text, env)
    except CheckError as e:
        raise AssertionError(str(e)) from None


def check_compose(path: str | Path, env: dict[str, str] | None = None) -> dict[str, Any]:
    """yamllint, then compose_problems; returns the parsed document."""
    check_yaml_lint([path])
    doc = load_docs([path])[0]
    _fail("compose.yaml", (f" - {p}" for p in compose_problems(doc, env)))
    return doc


def nginx_argv(config: str | Path, prefix: str | Path, *extra_global: str) -> list[str]:
    """nginx for an unprivileged run: the prefix, pid and error log inside `prefix` (-p, -g, -e), config as given."""
    try:
        return repo_checks.nginx_argv(config, prefix, *extra_global)
    except ToolMissing:
        raise AssertionError("nginx not found (CI installs nginx-light, .ci/run)") from None


def check_nginx(config: str | Path, prefix: str | Path) -> None:
    """The real `nginx -t` on a configuration (its includes must exist): syntax, directives, contexts, upstreams."""
    nginx_argv(config, prefix)  # nginx installed, or AssertionError
    out = repo_checks.nginx_test(config, prefix)
    if out is not None:
        raise AssertionError(f"-c {config}: {out}")
