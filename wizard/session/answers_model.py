"""The answers file's schema (pydantic): every key, its type and range. Imported only when answers are checked,
so the full-screen wizard's first screen does not pay for pydantic (~0.15 s)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from wizard.artifacts.context import NAME_RULES


class _Strict(BaseModel):
    """Finite numbers only (answers.py also refuses a yes/no where a number belongs, and the reverse)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class ManagedPrice(_Strict):
    input: float = Field(ge=0, le=10_000)  # USD per million tokens
    output: float = Field(ge=0, le=10_000)


DAY_S = 86_400
class ColdStartOverrides(_Strict):
    """Any assumption of the cold-start estimate (wizard/sizing/cold_start.py), in bytes, bytes/s and seconds.
    Bounds keep every derived probe threshold a sane integer (Kubernetes takes int32)."""

    image_bytes: float | None = Field(default=None, gt=0, le=1e13)
    registry_bytes_s: float | None = Field(default=None, ge=1e5, le=1e13)  # 100 kB/s .. 10 TB/s
    network_bytes_s: float | None = Field(default=None, ge=1e5, le=1e13)
    weights_cached: bool | None = None
    disk_bytes_s: float | None = Field(default=None, ge=1e5, le=1e13)
    compile_s: float | None = Field(default=None, ge=0, le=DAY_S)
    cuda_graphs_s: float | None = Field(default=None, ge=0, le=DAY_S)
    per_node_init_s: float | None = Field(default=None, ge=0, le=DAY_S)


class Answers(_Strict):
    """Every key a user may write by hand (units in the names: tokens, ms, USD)."""

    model: str = Field(min_length=1, max_length=300)
    weight_precision: Literal["auto", "bf16", "fp16", "fp8", "int8", "int4"] = "auto"
    kv_cache_dtype: Literal["auto", "fp8"] = "auto"
    context_tokens: int = Field(default=8192, ge=1, le=10_000_000)
    peak_concurrency: int = Field(default=1, ge=1, le=1_000_000)
    peak_rps: float | None = Field(default=None, ge=0, le=1_000_000)
    daily_requests: int | None = Field(default=None, ge=0, le=10_000_000_000)
    prompt_tokens: int | None = Field(default=None, ge=1, le=10_000_000)
    output_tokens: int | None = Field(default=None, ge=1, le=10_000_000)
    ttft_p99_ms: int | None = Field(default=None, ge=1, le=3_600_000)
    tpot_p99_ms: int | None = Field(default=None, ge=1, le=3_600_000)
    streaming: bool = True
    traffic_pattern: Literal["steady", "diurnal", "bursty"] = "diurnal"
    workload: Literal["online", "offline"] = "online"
    data_residency: bool = False
    needs_predictable_cost: bool = False
    needs_latency_control: bool = False
    ops_capability: Literal["none", "basic", "kubernetes", "platform"] = "basic"
    budget_mode: Literal["fixed", "pay_as_you_go"] = "pay_as_you_go"
    monthly_budget_usd: float | None = Field(default=None, ge=0, le=1e10)
    gpu: str = "auto"
    gpu_hour_usd: float | None = Field(default=None, ge=0, le=10_000)
    managed_usd_per_mtok: ManagedPrice | None = None
    gpu_memory_utilization: float = Field(default=0.90, ge=0.05, le=1.0)
    tp: int | None = Field(default=None, ge=1, le=1024)
    pp: int | None = Field(default=None, ge=1, le=1024)
    replicas: int | None = Field(default=None, ge=1, le=10_000)
    # Extensions of DESIGN.md's keys:
    params_b: float | None = Field(default=None, gt=0, le=100_000)  # the parameter count the team believes, billions (§2)
    staff_usd_month: float | None = Field(default=None, ge=0, le=1e9)  # operations staff cost, overriding the assumption (§8)
    cold_start: ColdStartOverrides | None = None  # overrides of the cold-start assumptions (§7)
    app_name: str | None = None  # Kubernetes names (checked below, with the accepted form in the message)
    namespace: str | None = None
    served_model_name: str | None = None

    @field_validator("app_name", "namespace", "served_model_name")
    @classmethod
    def _name(cls, v: str | None, info: ValidationInfo) -> str | None:
        pattern, accepted = NAME_RULES[info.field_name]  # shared with the starter repo's own check
        if v is not None and not pattern.fullmatch(v):
            raise ValueError(accepted)
        return v

    @field_validator("model")
    @classmethod
    def _printable(cls, v: str) -> str:
        # A line break (\r, U+0085, U+2028) or control character would end a comment in a generated file, and
        # YAML folds some of them: answers.yaml would no longer replay the same model.
        if not all(c.isprintable() for c in v):
            raise ValueError("expected printable text: no line breaks, tabs or control characters")
        return v

    @field_validator("gpu")
    @classmethod
    def _gpu_id(cls, v: str) -> str:
        from wizard.sources.catalog import gpu_catalog

        ids = [g.id for g in gpu_catalog()]
        if v != "auto" and v.lower() not in ids:
            raise ValueError("expected auto or one of " + ", ".join(ids))
        return v.lower()
