"""Check a `vllm serve` argv against the pinned flag table of the target vLLM version (no network, no vLLM).

The table `data/vllm-serve-flags-<VLLM_VERSION>.json` is a verbatim copy of
shared/reference/vllm-serve-flags-0.33.0.json: every option string of `vllm serve` in vLLM 0.33.0 with its type,
nargs, action, choices and documented values, extracted statically from the 0.33.0 wheel (sha256 in the file).
The table is the truth for what exists; the deprecation and removal lists below are the curated ones of
deploy-checklist §1.3 (the JSON has no deprecation field: its help texts mention deprecation only in passing).

Parser behaviour mirrored here (vllm/utils/argparse_utils.py FlexibleArgumentParser, per the table's header):
* `--foo_bar` is accepted as `--foo-bar` (underscores normalised before `=` and `.`);
* JSON-typed flags accept dot notation: `--compilation-config.mode 3`;
* `-O3`, `-O 3` and `-O=3` are rewritten to `--optimization-level 3`;
* `--flag=value` and `--flag value` are equivalent; `nargs='+'` takes every following non-option token;
* a token such as `-1` is a value, not an option (the parser has no numeric-looking options).

Values that are shell or Kubernetes variables (`$VAR`, `"$VAR"`, `${VAR}`, `$(VAR)`) are filled in at run time,
so they are accepted for any type. `"$@"` and `"${ARGS[@]}"` pass-through expansions are accepted anywhere.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from wizard.sizing.engine import VLLM_VERSION

TABLE = Path(__file__).parent / "data" / f"vllm-serve-flags-{VLLM_VERSION}.json"

# deploy-checklist §1.3 (and the REMOVED list at the end of vllm-serve-flags-0.33.0.txt): accepted by an older
# release, rejected by the 0.33.0 parser ("unrecognized arguments" -> CrashLoopBackOff).
REMOVED: dict[str, str] = {
    "--swap-space": "last seen 0.16.0, gone from 0.18.0",
    "--task": "last seen 0.12.0, gone from 0.14.0; use --runner pooling / --convert embed|classify|reward",
    "--disable-frontend-multiprocessing": "gone from 0.20.0",
    "--no-disable-frontend-multiprocessing": "gone from 0.20.0",
    "--max-num-partial-prefills": "gone from 0.30.0",
    "--max-long-partial-prefills": "gone from 0.30.0",
    "--calculate-kv-scales": "gone from 0.30.0",
    "--no-calculate-kv-scales": "gone from 0.30.0",
    "--override-attention-dtype": "gone from 0.30.0",
    "--logits-processor-pattern": "gone from 0.18.0",
    "--cuda-graph-sizes": "gone from 0.14.0; use --cudagraph-capture-sizes",
    "--disable-mm-preprocessor-cache": "gone from 0.14.0",
    "--enable-multimodal-encoder-data-parallel": "gone from 0.14.0; use --mm-encoder-tp-mode data",
    "--rope-scaling": "gone from 0.12.0; rope settings go through --hf-overrides",
    "--rope-theta": "gone from 0.12.0; rope settings go through --hf-overrides",
    "--override-pooler-config": "gone from 0.12.0; use --pooler-config",
    "--num-lookahead-slots": "gone from 0.12.0",
    "--num-redundant-experts": "gone from 0.12.0; use --eplb-config",
    "--eplb-window-size": "gone from 0.12.0; use --eplb-config",
    "--eplb-step-interval": "gone from 0.12.0; use --eplb-config",
    "--eplb-log-balancedness": "gone from 0.12.0; use --eplb-config",
    "--no-eplb-log-balancedness": "gone from 0.12.0; use --eplb-config",
    "--lora-extra-vocab-size": "gone from 0.12.0",
    "--enable-lora-bias": "gone from 0.12.0",
    "--no-enable-lora-bias": "gone from 0.12.0",
    "--enable-mamba-fine-grained-prefix-cache": "gone from 0.32.0",
    "--no-enable-mamba-fine-grained-prefix-cache": "gone from 0.32.0",
    "--no-disable-log-requests": "gone from 0.18.0",
}

# deploy-checklist §1.3 "still accepted in 0.33 but deprecated" (+ the .txt list): a generator must not emit them.
DEPRECATED: dict[str, str] = {
    "--model": "deprecated for `vllm serve`: pass the model as the first positional argument",
    "--log-config-file": "deprecated: use --logging-config.pylogging_config_file",
    "--mamba-cache-mode": "deprecated and without effect (removal announced for 0.33.0)",
    "--disable-cascade-attn": "deprecated and without effect: cascade attention was removed",
    "--enable-cascade-attn": "deprecated and without effect: cascade attention was removed",
    "--no-disable-cascade-attn": "deprecated and without effect: cascade attention was removed",
    "--ir-op-priority": "deprecated: removal announced for 0.34.0",
    "--dcp-kv-cache-interleave-size": "superseded by --cp-kv-cache-interleave-size",
    "--show-hidden-metrics-for-version": "a temporary escape hatch that re-enables deprecated Prometheus metrics",
    "--disable-log-requests": "accepted in 0.33.0 only as the inverse of --enable-log-requests (absent 0.18-0.32); "
                              "request logging is off by default, so omit it",
}

# Secrets never go on the command line (checklist item 11): argv is visible in `ps`, pod specs and logs.
SECRET_FLAGS: dict[str, str] = {
    "--api-key": "the API key must not be on the command line: set VLLM_API_KEY from a Secret (secretKeyRef)",
    "--hf-token": "the Hugging Face token must not be on the command line: set HF_TOKEN from a Secret "
                  "(secretKeyRef)",
}

_SHELL_VAR = re.compile(r"\$(\{[^}]+\}|\([A-Za-z_][A-Za-z0-9_]*\)|[A-Za-z_][A-Za-z0-9_]*|[@*#?0-9])")
_PASS_THROUGH = re.compile(r'^"?\$(@|\{@\}|\{[A-Za-z_][A-Za-z0-9_]*\[@\]\})"?$')
_NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")
_HUMAN_INT = re.compile(r"(\d+(?:\.\d+)?)([kKmMgGtT])")
_OPT_LEVEL = re.compile(r"^-O(=?)(.*)$")


@dataclass(frozen=True)
class Flag:
    """One argparse action: its option strings and how it parses its value."""

    primary: str
    names: tuple[str, ...]  # every accepted spelling, hidden aliases included
    kind: str  # "switch" (store_true), "bool" (BooleanOptionalAction), "value", "append"
    type: str | None
    nargs: str | None
    choices: tuple[Any, ...] | None  # argparse-enforced
    documented: tuple[str, ...] | None  # documented values argparse does not enforce (validated at engine start)
    optional: bool  # optional_type: 'None' and '' parse to None
    inverse: frozenset[str]  # generated `--disable-x` spellings of an `--enable-x` bool (only in 0.33.0)

    @property
    def is_json(self) -> bool:
        return self.type is not None and "json" in self.type


@dataclass
class ParsedArgv:
    """The result of reading one argv: the positional model, the flags by primary name, and the problems."""

    model: str | None = None
    values: dict[str, list[str]] = field(default_factory=dict)  # primary flag -> values of its last use ([] = switch)
    used: dict[str, str] = field(default_factory=dict)  # primary flag -> spelling used last
    problems: list[str] = field(default_factory=list)

    def value(self, primary: str, default: str | None = None) -> str | None:
        """The (first) value of a flag by its primary name, or `default` when it was not given."""
        got = self.values.get(primary)
        if got is None:
            return default
        return got[0] if got else default


@lru_cache(maxsize=1)
def table() -> dict[str, Any]:
    """The raw flag table (read once)."""
    with TABLE.open(encoding="utf-8") as f:
        return json.load(f)


@lru_cache(maxsize=1)
def _index() -> tuple[dict[str, Flag], dict[str, Flag]]:
    """(option string -> Flag, primary -> Flag); the positional `model_tag` is left out."""
    by_name: dict[str, Flag] = {}
    by_primary: dict[str, Flag] = {}
    for entry in table()["flags"]:
        names = [n for n in entry["flags"] if n.startswith("-")]
        if not names:
            continue
        action = str(entry.get("action") or "")
        if action == "store_true":
            kind = "switch"
        elif action.endswith("BooleanOptionalAction"):
            kind = "bool"
        elif action == "append":
            kind = "append"
        else:
            kind = "value"
        inverse: set[str] = set()
        if kind == "bool":
            first = names[0]
            for pre, inv in (("--enable-", "--disable-"), ("--disable-", "--enable-")):
                if first.startswith(pre) and inv + first[len(pre):] in names:
                    inverse.add(inv + first[len(pre):])
        choices = entry.get("choices")
        documented = None
        if isinstance(entry.get("metavar"), list):
            documented = tuple(entry["metavar"])
        elif entry.get("known_values"):
            documented = tuple(entry["known_values"])
        flag = Flag(primary=names[0], names=tuple(names + list(entry.get("hidden_aliases") or [])), kind=kind,
                    type=entry.get("type"), nargs=entry.get("nargs"),
                    choices=tuple(choices) if choices else None, documented=documented,
                    optional=bool(entry.get("optional")), inverse=frozenset(inverse))
        by_primary[flag.primary] = flag
        for name in flag.names:
            by_name[name] = flag
    return by_name, by_primary


def _normalise(name: str) -> str:
    """`--max_model_len` -> `--max-model-len` (vLLM normalises underscores in the option part)."""
    if name.startswith("--"):
        return "--" + name[2:].replace("_", "-")
    return name


def _lookup(name: str) -> Flag | None:
    by_name, _ = _index()
    return by_name.get(_normalise(name))


def flag_exists(name: str) -> bool:
    """True when `vllm serve` of the pinned version accepts this option string (`--x`, `-tp`, `--no-enable-x`).
    Removed flags are False; deprecated ones that are still accepted are True."""
    if not name.startswith("-"):
        name = "--" + name
    return _lookup(name) is not None


def choices(name: str) -> list[Any] | None:
    """The values a flag accepts: argparse `choices` when it has them, else its documented values (which vLLM
    checks at engine start, e.g. --kv-cache-dtype, --quantization, --load-format), else None (free-form).
    Raises KeyError for a flag that does not exist."""
    if not name.startswith("-"):
        name = "--" + name
    flag = _lookup(name)
    if flag is None:
        raise KeyError(name)
    if flag.choices is not None:
        return [c for c in flag.choices if not (isinstance(c, str) and c.startswith("<"))]
    if flag.documented is not None:
        return list(flag.documented)
    return None


def is_variable(value: str) -> bool:
    """A value filled in at run time: `$VAR`, `"$VAR"`, `${VAR}`, `$(VAR)` (Kubernetes), also inside a string."""
    return bool(_SHELL_VAR.search(value))


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def _type_problem(flag: Flag, used: str, value: str) -> str | None:
    """Why `value` does not parse as the flag's type (None when it does, or when it is a run-time variable)."""
    if is_variable(value):
        return None
    raw = _unquote(value)
    if flag.optional and raw in ("", "None"):
        return None
    t = flag.type or "str"
    try:
        if t == "int":
            int(raw)
        elif t == "float":
            float(raw)
        elif t.startswith("human_readable_int"):
            v = raw.strip()
            if t.startswith("human_readable_int_or_auto") and (v == "-1" or v.lower() == "auto"):
                return None
            m = _HUMAN_INT.fullmatch(v)
            if m:
                if m.group(2).isupper() and "." in m.group(1):
                    return f"{used} {value!r}: decimals are not allowed with binary suffixes like {m.group(2)}"
            else:
                int(v)
        elif t.startswith("json:") or t in ("json", "json.loads", "optional_type(json.loads)"):
            json.loads(raw)
    except ValueError:
        kind = {"int": "an integer", "float": "a number"}.get(t)
        if kind is None and t.startswith("human_readable_int"):
            kind = "an integer such as 8192, 8k or 1G" + (", or -1/auto" if "auto" in t else "")
        if kind is None:
            kind = "JSON"
        return f"{used} {value!r}: not {kind}"
    return None


def _choice_problem(flag: Flag, used: str, value: str) -> str | None:
    if is_variable(value):
        return None
    raw = _unquote(value)
    if flag.optional and raw in ("", "None"):
        return None
    if flag.choices is not None:
        allowed = [c for c in flag.choices if c is not None]
        if any(isinstance(c, str) and c.startswith("<") for c in allowed):
            return None  # platform-dependent choice list: not checkable offline
        probe: Any = raw
        if flag.type and "lower().replace('-', '_')" in flag.type:
            probe = raw.lower().replace("-", "_")
        elif flag.type == "int":
            try:
                probe = int(raw)
            except ValueError:
                return None  # reported as a type problem
        if probe not in allowed:
            return f"{used} {value!r}: not one of the choices {', '.join(map(str, allowed))}"
    elif flag.documented is not None and raw not in flag.documented:
        return (f"{used} {value!r}: not one of the values vLLM {VLLM_VERSION} knows "
                f"({', '.join(flag.documented)}); argparse accepts it but the engine rejects it at start")
    return None


def _is_option(token: str) -> bool:
    """Does argparse read this token as an option string (rather than as a value)?"""
    if not token.startswith("-") or token == "-":
        return False
    if _NEGATIVE_NUMBER.match(token):
        return False
    if " " in token and _lookup(token.split("=", 1)[0]) is None:
        return False  # argparse: a '-' token with a space is a positional unless it names an option
    return True


def parse_argv(argv: list[str]) -> ParsedArgv:
    """Read the argv that follows `vllm serve` (model positional first, then flags) and collect every problem."""
    out = ParsedArgv()
    problems = out.problems
    tokens = [str(t) for t in argv]
    if not tokens:
        problems.append("no model: `vllm serve` needs the model as its first positional argument")
        return out
    i = 0
    if not _is_option(tokens[0]):
        out.model = _unquote(tokens[0])
        i = 1
    seen: dict[str, str] = {}
    previous: str | None = None  # the option string before a stray token, for a better message
    while i < len(tokens):
        token = tokens[i]
        i += 1
        if _PASS_THROUGH.match(token):
            previous = None
            continue
        if token == "--":
            problems.append("unexpected '--': every argument after it would be read as positional")
            previous = None
            continue
        if not _is_option(token):
            if previous is not None:
                problems.append(f"{previous} takes no value, but {token!r} follows it "
                                f"(argparse: unrecognized arguments)")
            elif out.model is None:
                out.model = _unquote(token)
                problems.append(f"the model {token!r} should be the first argument after `vllm serve` "
                                f"(checklist item 1)")
            else:
                problems.append(f"unexpected positional argument {token!r} (argparse: unrecognized arguments)")
            previous = None
            continue
        previous = None
        name, eq, inline = token.partition("=")
        has_inline = bool(eq)
        # -O3 / -O 3 / -O=3 -> --optimization-level
        m = _OPT_LEVEL.match(token)
        if m and not token.startswith("--"):
            name, has_inline, inline = "--optimization-level", bool(m.group(2)) or bool(m.group(1)), m.group(2)
        dotted = ""
        if name.startswith("--") and "." in name:
            name, _, dotted = name.partition(".")
        norm = _normalise(name)
        if norm in REMOVED:
            problems.append(f"{name}: removed from vLLM ({REMOVED[norm]}); vLLM {VLLM_VERSION} exits with "
                            f"'unrecognized arguments'")
            # skip its value(s), if any, so they are not reported again as stray positionals
            while not has_inline and i < len(tokens) and not _is_option(tokens[i]):
                i += 1
            continue
        flag = _lookup(name)
        if flag is None:
            hint = _suggest(norm)
            problems.append(f"{name}: unknown flag for vllm serve {VLLM_VERSION}" + (f" (did you mean {hint}?)"
                                                                                     if hint else ""))
            while not has_inline and i < len(tokens) and not _is_option(tokens[i]):
                i += 1
            continue
        if dotted and not flag.is_json:
            problems.append(f"{name}.{dotted}: dot notation works only for JSON-typed flags")
            while not has_inline and i < len(tokens) and not _is_option(tokens[i]):
                i += 1
            continue
        if norm in DEPRECATED:
            problems.append(f"{norm}: {DEPRECATED[norm]}")
        elif norm in flag.inverse:
            fix = "--no-" + flag.primary[2:]
            problems.append(f"{norm}: spell it {fix} (the {norm} form of a {flag.primary} switch exists only in "
                            f"vLLM 0.33.0; {fix} is accepted by every version)")
        # collect the value(s)
        values: list[str] = []
        if flag.kind in ("switch", "bool") and not dotted:
            if has_inline:
                problems.append(f"{name}: a switch takes no value, got {name}={inline!r} "
                                f"(argparse: ignored explicit argument)")
            previous = name
        else:
            nargs = flag.nargs
            if has_inline:
                values = [inline]
            elif nargs == "?":
                if i < len(tokens) and not _is_option(tokens[i]):
                    values = [tokens[i]]
                    i += 1
            elif nargs == "+":
                while i < len(tokens) and not _is_option(tokens[i]):
                    values.append(tokens[i])
                    i += 1
            elif i < len(tokens) and not _is_option(tokens[i]):
                values = [tokens[i]]
                i += 1
            if not values and nargs != "?":
                problems.append(f"{name}: expects {'one or more values' if nargs == '+' else 'a value'}")
                continue
            if not dotted:
                for v in values:
                    problem = _type_problem(flag, name, v) or _choice_problem(flag, name, v)
                    if problem:
                        problems.append(problem)
        if flag.primary in SECRET_FLAGS and (values or flag.nargs != "?"):
            problems.append(f"{flag.primary}: {SECRET_FLAGS[flag.primary]}")
        key = flag.primary + (f".{dotted}" if dotted else "")
        if key in seen and flag.kind != "append":
            problems.append(f"{name}: given more than once (also as {seen[key]}); argparse keeps only the last")
        seen[key] = name
        if flag.kind == "append" and key in out.values:
            out.values[key] = out.values[key] + values
        else:
            out.values[key] = values
        out.used[key] = name
    if out.model is None and "--model" not in out.values and "--config" not in out.values:
        problems.append("no model: `vllm serve` needs the model as its first positional argument")
    return out


def _suggest(name: str) -> str | None:
    import difflib  # only on the error path

    by_name, _ = _index()
    close = difflib.get_close_matches(name, [n for n in by_name if n.startswith("--")], n=1, cutoff=0.8)
    return close[0] if close else None


def check_argv(argv: list[str]) -> list[str]:
    """Problems of a `vllm serve` argv (the part after `serve`: model positional, then flags); [] means it is
    accepted by vLLM's parser of the pinned version and follows the generator's rules (deploy-checklist §1.3,
    §3.2 items 1, 2 and 11)."""
    return parse_argv(argv).problems
