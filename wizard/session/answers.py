"""The answers file (DESIGN.md "The answers file"): its keys, types and ranges, validated before any work.

Layered like copier: `--set KEY=VALUE` over the file over the tree's defaults. Unknown keys, wrong types and
out-of-range values are rejected by name with one line (InputError → exit 2).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml

from wizard.errors import InputError
from wizard.yaml_file import read_yaml


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


def load_answers_file(path: Path) -> dict[str, Any]:
    """Read and validate an answers YAML file."""
    return validate_answers(read_yaml(path, "--answers") or {}, where=path.name)


def parse_set(items: list[str]) -> dict[str, Any]:
    """`--set KEY=VALUE` pairs; VALUE is read as YAML (numbers, true/false, {input: 1, output: 2})."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InputError("--set", item, "expected KEY=VALUE")
        try:
            out[key.strip()] = yaml.safe_load(value) if value.strip() else ""
        except yaml.YAMLError:
            raise InputError(f"--set {key}", value, "expected a YAML scalar or mapping") from None
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
