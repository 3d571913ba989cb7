"""The answers file (DESIGN.md "The answers file"): its keys, types and ranges, validated before any work.

Layered like copier: `--set KEY=VALUE` over the file over the tree's defaults. Unknown keys, wrong types and
out-of-range values are rejected by name with one line (InputError → exit 2).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

import yaml

from wizard.errors import InputError
from wizard.yaml_file import parse_yaml, read_yaml


# The keys in DESIGN.md's order (tests/test_answers.py checks this equals the schema's fields).
KEYS = (
    "model", "weight_precision", "kv_cache_dtype", "context_tokens", "peak_concurrency", "peak_rps", "daily_requests",
    "prompt_tokens", "output_tokens", "ttft_p99_ms", "tpot_p99_ms", "streaming", "traffic_pattern", "workload",
    "data_residency", "needs_predictable_cost", "needs_latency_control", "ops_capability", "budget_mode",
    "monthly_budget_usd", "gpu", "gpu_hour_usd", "managed_usd_per_mtok", "gpu_memory_utilization", "tp", "pp",
    "replicas", "params_b", "staff_usd_month", "cold_start", "app_name", "namespace", "served_model_name",
)



def validate_answers(data: dict[str, Any], where: str = "answers") -> dict[str, Any]:
    """Check keys, types and ranges; returns only the keys the user gave (defaults come from the tree)."""
    if not isinstance(data, dict):
        raise InputError(where, type(data).__name__, "expected a mapping of keys to values")
    from pydantic import ValidationError

    from wizard.session.answers_model import Answers

    for key in data:
        if key not in KEYS:
            raise InputError(f"{where}: {key}", data[key], "unknown key; accepted keys: " + ", ".join(KEYS))
    _check_kinds(Answers, data, where)
    probe = {"model": "x", **data}
    try:
        checked = Answers.model_validate(probe)
    except ValidationError as e:
        err = e.errors()[0]
        key = ".".join(str(p) for p in err["loc"])
        msg = err["msg"].removeprefix("Value error, ")
        raise InputError(f"{where}: {key}", err.get("input"), msg) from None
    dumped = checked.model_dump()
    return {k: dumped[k] for k in data}


NUMBER_TEXT = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")  # YAML 1.1 reads 1e6 as text


def _kinds(info: Any) -> set[Any]:
    """The types a pydantic field accepts (`int | None` → {int, NoneType})."""
    from typing import get_args

    return set(get_args(info.annotation)) or {info.annotation}


def _check_kinds(model: Any, data: dict[str, Any], where: str, prefix: str = "") -> None:
    """A yes/no is not a number, a number is not a yes/no, and text is a number only for decimal keys written
    in exponent form (YAML 1.1 reads `1e6` as text): `true` must not count as 1 nor "16" as 16."""
    from pydantic import BaseModel

    for key, value in data.items():
        info = model.model_fields.get(key)
        if info is None or value is None:
            continue
        kinds = _kinds(info)
        name = f"{where}: {prefix}{key}"
        if bool in kinds:
            if not isinstance(value, bool):
                raise InputError(name, value, "expected true or false")
        elif int in kinds and isinstance(value, (bool, str)):
            raise InputError(name, value, "expected a whole number")
        elif float in kinds and (isinstance(value, bool) or (isinstance(value, str) and not NUMBER_TEXT.match(value))):
            raise InputError(name, value, "expected a number")
        sub = next((k for k in kinds if isinstance(k, type) and issubclass(k, BaseModel)), None)
        if sub is not None and isinstance(value, dict):
            _check_kinds(sub, value, where, prefix=f"{key}.")


def load_answers_file(path: Path) -> dict[str, Any]:
    """Read and validate an answers YAML file."""
    return validate_answers(read_yaml(path, "--answers") or {}, where=path.name)


def text_keys() -> set[str]:
    """Answers keys whose value is text (model, gpu, names): `--set` takes those verbatim."""
    from wizard.session.answers_model import Answers

    return {k for k, info in Answers.model_fields.items() if str in _kinds(info)}


def parse_set(items: list[str]) -> dict[str, Any]:
    """`--set KEY=VALUE` pairs; VALUE is read as YAML (numbers, true/false, {input: 1, output: 2}), except for
    text keys, taken as written (a folder `a #b` or a model named `123` must not become `a` or a number)."""
    out: dict[str, Any] = {}
    texts = text_keys()
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip(" \t")  # str.strip() would also drop U+2028 and turn "tp\u2028" into tp
        if not sep or not key:
            raise InputError("--set", item, "expected KEY=VALUE")
        if key in texts:
            out[key] = value
            continue
        out[key] = parse_yaml(value, f"--set {key}", value) if value.strip() else ""
    return validate_answers(out, where="--set")


def dump_answers(answers: dict[str, Any]) -> str:
    """The answers as a YAML file that replays the same plan (keys in DESIGN.md order)."""
    ordered = {k: answers[k] for k in KEYS if k in answers}
    return yaml.safe_dump(ordered, sort_keys=False, allow_unicode=True)


def accepted_values() -> dict[str, list[Any] | None]:
    """Per answers-file key, the values a Literal type accepts (None: any value of its type). For tree lint."""
    from typing import get_args, get_origin

    from wizard.session.answers_model import Answers

    out: dict[str, list[Any] | None] = {}
    for key, info in Answers.model_fields.items():
        ann = info.annotation
        out[key] = list(get_args(ann)) if get_origin(ann) is Literal else None
    return out
