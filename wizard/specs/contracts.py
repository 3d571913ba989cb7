"""The public JSON objects as pydantic models: `size --json` (Size) and `plan --json` / plan.json (Plan).

Strict (extra="forbid"): a key the code adds without declaring it here fails every plan the tests build, so the
published schema (`llm-deploy-wizard schema plan|size`) cannot drift from what is printed. Units are in the
names: bytes, tokens, seconds (_s), milliseconds (_ms), USD per month (_usd_month). Imported only by the
commands that print or check these objects (pydantic's import would cost `size --json` its speed).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# -- size --json


class SizeModel(_Strict):
    id: str
    source: str
    architecture: str
    params_total: int
    params_active: int
    layers: int
    attention_heads: int
    kv_heads: int
    head_dim: int
    attention: str


class SizeGpu(_Strict):
    id: str
    memory_bytes: int = Field(description="memory as the driver / torch reports it")


class Parallel(_Strict):
    tp: int
    pp: int


class SizeInputs(_Strict):
    weight_precision: str
    kv_cache_dtype: str
    context_tokens: int
    concurrency: int
    gpu_memory_utilization: float


class PerGpuBytes(_Strict):
    weights: int
    kv_cache: int
    activations: int
    reserve: int
    total: int


class SizePerformance(_Strict):
    ttft_ms: float
    tpot_ms: float
    output_tokens_per_s: float


class Size(_Strict):
    """`size --json`: memory per GPU of one layout against the usable memory (§2)."""

    model: SizeModel
    gpu: SizeGpu
    parallel: Parallel
    inputs: SizeInputs
    per_gpu_bytes: PerGpuBytes
    usable_bytes: int
    headroom_bytes: int
    fits: bool
    kv_bytes_per_token: int
    kv_capacity_tokens: int = Field(description='what vLLM logs as "GPU KV cache size: N tokens"')
    max_concurrency: float = Field(description="kv_capacity_tokens / context_tokens (vLLM's 'Maximum concurrency')")
    notes: list[str] = []
    performance: SizePerformance | None = None


# -- plan --json


class Performance(_Strict):
    ttft_ms: float
    tpot_ms: float
    tokens_per_s_per_replica: float
    max_batch: int
    limited_by: str
    kv_batch: int | None = None


class GpuPriceJson(_Strict):
    usd_per_gpu_hour: float
    kind: str
    provider: str
    date: str
    source: str
    via: str = ""


class ManagedPriceJson(_Strict):
    usd_per_mtok_input: float
    usd_per_mtok_output: float
    provider: str
    date: str
    source: str
    model_key: str = ""
    via: str = ""
    basis: str = ""
    estimated_from: list[str] = []
    note: str = ""


class Cost(_Strict):
    """§8: the bill, the idle share inside it, staff, and the managed API for the same volume."""

    gpu_bill_usd_month: float
    idle_usd_month: float
    staff_usd_month: float
    total_usd_month: float | None
    usd_per_mtok: float | None
    managed_usd_month: float | None
    average_utilization: float | None = None
    utilization_exact: float | None = None
    utilization_basis: str | None = None
    break_even_daily_requests: int | None = None
    capacity_daily_requests: int | None = None
    break_even_beyond_capacity: bool | None = None
    monthly_output_mtok: float | None = None
    managed_staff_usd_month: float | None = None
    managed_total_usd_month: float | None = None
    gpu_price: GpuPriceJson | None = None
    managed_price: ManagedPriceJson | None = None
    self_host_usd_month: float | None = None
    self_host_exposure: str | None = None
    self_host_layout: str | None = None
    saving_usd_month: float | None = Field(default=None, gt=0)
    managed_extra_usd_month: float | None = Field(default=None, gt=0)


class Stage(_Strict):
    name: str
    seconds: float
    basis: str


class ColdStart(_Strict):
    stages: list[Stage]
    total_s: float


class Warning_(_Strict):
    id: str
    message: str
    section: str


class Step(_Strict):
    node: str
    value: Any
    why: str


class Alternative(_Strict):
    form: str
    why_not: str


class QuantizedOption(_Strict):
    weight_precision: Literal["fp8"]
    gpu: str
    tp: int
    pp: int
    replicas: int
    total_usd_month: float
    saving_usd_month: float = Field(gt=0)
    why: str


class Plan(_Strict):
    """`plan --json` and every starter repo's plan.json: the form, the layout, its numbers and the reasons."""

    form: Literal["cpu", "single_gpu", "single_node_multi_gpu", "multi_node", "managed_api"]
    exposure: Literal["none", "gateway", "kubernetes", "managed_api"]
    title: str
    summary: str
    model: str
    checkpoint_format: str | None = None
    gpu: str | None
    tp: int
    pp: int
    replicas: int
    min_replicas: int | None = None
    gpus_per_replica: int
    nodes_per_replica: int
    gpus_total: int
    concurrency_per_replica: int | None = None
    memory: Size | None = None
    performance: Performance | None = None
    cost: Cost | None = None
    cold_start: ColdStart | None = None
    quantized_option: QuantizedOption | None = None
    warnings: list[Warning_]
    path: list[Step]
    alternatives: list[Alternative]
    sections: str
    boundary: str | None = None
    ignored_answers: list[str] = []


SCHEMAS: dict[str, type[BaseModel]] = {"plan": Plan, "size": Size}
