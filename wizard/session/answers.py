"""The answers file (DESIGN.md "The answers file"): its keys, types and ranges, validated before any work.

Layered like copier: `--set KEY=VALUE` over the file over the tree's defaults. Unknown keys, wrong types and
out-of-range values are rejected by name with one line (InputError → exit 2).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from wizard.errors import InputError


class ManagedPrice(BaseModel):
    model_config = ConfigDict(extra="forbid")
    input: float = Field(ge=0)
    output: float = Field(ge=0)


class ColdStartOverrides(BaseModel):
    """Any assumption of the cold-start estimate (wizard/sizing/cold_start.py), in bytes, bytes/s and seconds."""

    model_config = ConfigDict(extra="forbid")
    image_bytes: float | None = Field(default=None, gt=0)
    registry_bytes_s: float | None = Field(default=None, gt=0)
    network_bytes_s: float | None = Field(default=None, gt=0)
    weights_cached: bool | None = None
    disk_bytes_s: float | None = Field(default=None, gt=0)
    compile_s: float | None = Field(default=None, ge=0)
    cuda_graphs_s: float | None = Field(default=None, ge=0)
    per_node_init_s: float | None = Field(default=None, ge=0)


class Answers(BaseModel):
    """Every key a user may write by hand (units in the names: tokens, ms, USD)."""

    model_config = ConfigDict(extra="forbid", strict=False)

    model: str = Field(min_length=1, max_length=300)
    weight_precision: Literal["auto", "bf16", "fp16", "fp8", "int8", "int4"] = "auto"
    kv_cache_dtype: Literal["auto", "fp8"] = "auto"
    context_tokens: int = Field(default=8192, ge=1, le=10_000_000)
    peak_concurrency: int = Field(default=1, ge=1, le=1_000_000)
    peak_rps: float | None = Field(default=None, ge=0)
    daily_requests: int | None = Field(default=None, ge=0)
    prompt_tokens: int | None = Field(default=None, ge=1)
    output_tokens: int | None = Field(default=None, ge=1)
    ttft_p99_ms: int | None = Field(default=None, ge=1)
    tpot_p99_ms: int | None = Field(default=None, ge=1)
    streaming: bool = True
    traffic_pattern: Literal["steady", "diurnal", "bursty"] = "diurnal"
    workload: Literal["online", "offline"] = "online"
    data_residency: bool = False
    needs_predictable_cost: bool = False
    needs_latency_control: bool = False
    ops_capability: Literal["none", "basic", "kubernetes", "platform"] = "basic"
    budget_mode: Literal["fixed", "pay_as_you_go"] = "pay_as_you_go"
    monthly_budget_usd: float | None = Field(default=None, ge=0)
    gpu: str = "auto"
    gpu_hour_usd: float | None = Field(default=None, ge=0)
    managed_usd_per_mtok: ManagedPrice | None = None
    gpu_memory_utilization: float = Field(default=0.90, ge=0.05, le=1.0)
    tp: int | None = Field(default=None, ge=1, le=1024)
    pp: int | None = Field(default=None, ge=1, le=1024)
    replicas: int | None = Field(default=None, ge=1, le=10_000)
    # Extensions of DESIGN.md's keys:
    params_b: float | None = Field(default=None, gt=0)  # the parameter count the team believes, billions (§2)
    staff_usd_month: float | None = Field(default=None, ge=0)  # operations staff cost, overriding the assumption (§8)
    cold_start: ColdStartOverrides | None = None  # overrides of the cold-start assumptions (§7)
    app_name: str | None = Field(default=None, pattern=r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")  # k8s names
    namespace: str | None = Field(default=None, pattern=r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
    served_model_name: str | None = Field(default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9._/:-]{0,199}$")

    @field_validator("gpu")
    @classmethod
    def _gpu_id(cls, v: str) -> str:
        from wizard.sources.catalog import gpu_catalog

        ids = [g.id for g in gpu_catalog()]
        if v != "auto" and v.lower() not in ids:
            raise ValueError("expected auto or one of " + ", ".join(ids))
        return v.lower()


KEYS = tuple(Answers.model_fields)


def validate_answers(data: dict[str, Any], where: str = "answers") -> dict[str, Any]:
    """Check keys, types and ranges; returns only the keys the user gave (defaults come from the tree)."""
    if not isinstance(data, dict):
        raise InputError(where, type(data).__name__, "expected a mapping of keys to values")
    for key in data:
        if key not in Answers.model_fields:
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
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise InputError("--answers", str(path), f"could not be read ({e.strerror})") from None
    except yaml.YAMLError as e:
        raise InputError("--answers", str(path), f"is not valid YAML ({str(e).splitlines()[0]})") from None
    return validate_answers(raw or {}, where=path.name)


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

    out: dict[str, list[Any] | None] = {}
    for key, info in Answers.model_fields.items():
        ann = info.annotation
        out[key] = list(get_args(ann)) if get_origin(ann) is Literal else None
    return out
