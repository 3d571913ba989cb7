"""The answers file's schema (pydantic): every key, its type and range. Imported only when answers are checked,
so the full-screen wizard's first screen does not pay for pydantic (~0.15 s)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator


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
