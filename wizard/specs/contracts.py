"""The public JSON objects as typed classes: `size --json` (Size) and `plan --json` / plan.json (Plan).

Every consumer of a plan — the report, the side panel, the starter repo's templates — reads these by attribute;
the JSON is their dump (`to_json`). They are standard-library dataclasses, not pydantic models, for speed:
building pydantic model classes costs ~5 ms each, which `plan --json` cannot afford on every run. Pydantic
validates them and generates their JSON Schema through a TypeAdapter (`adapter`), imported only by the
commands that publish or check a schema. Strict: `__pydantic_config__` forbids extra keys, so a plan.json with
a key the schema lacks fails validation. Units are in the names: bytes, tokens, seconds (_s), milliseconds
(_ms), USD per month (_usd_month). A field whose default is None is absent from the JSON while it is None
("not applicable to this plan", e.g. `memory` of a managed-API plan); a field without a default is always present.
"""

from __future__ import annotations

import re
from dataclasses import MISSING, dataclass, field, fields, is_dataclass
from typing import Any, Literal


class _Strict:
    __slots__ = ()
    # read by pydantic's TypeAdapter: unknown keys are errors; attribute docstrings become descriptions
    __pydantic_config__ = {"extra": "forbid", "use_attribute_docstrings": True}
    # fields stated only as positive figures when present (a saving is never negative): checked when an object
    # is made, and published as exclusiveMinimum 0 in the JSON Schema
    __positive__: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in self.__positive__:
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise ValueError(f"{type(self).__name__}.{name} must be > 0 when present, got {value!r}")




# -- size --json


@dataclass(slots=True, kw_only=True)
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
    hidden_size: int | None = None
    """the residual stream's width: what a pipeline stage hands the next one per token (with the residual)"""


@dataclass(slots=True, kw_only=True)
class SizeGpu(_Strict):
    id: str
    memory_bytes: int
    """memory as the driver / torch reports it"""


@dataclass(slots=True, kw_only=True)
class Parallel(_Strict):
    tp: int
    pp: int


@dataclass(slots=True, kw_only=True)
class SizeInputs(_Strict):
    weight_precision: str
    kv_cache_dtype: str
    context_tokens: int
    concurrency: int
    gpu_memory_utilization: float
    sequence_tokens: int | None = None
    """the plan's typical sequence: KV held by each sequence but one, which holds the full context (absent: every
    sequence at the full context)"""
    vllm_version: str = "0.33.0"
    """the vLLM release whose budget rules and defaults this sizing follows"""
    max_num_seqs: int = 1
    """vLLM's sequence limit sized (the sampler warm-up profiles min(this, max_num_batched_tokens) rows)"""
    max_num_batched_tokens: int = 2048
    """vLLM's token budget the start-up profile ran"""
    sampler_bytes_per_logit: int | None = None
    """bytes per row × vocab logit the sampler warm-up was sized at (the release's sampler, or --sampler's)"""


@dataclass(slots=True, kw_only=True)
class PerGpuBytes(_Strict):
    weights: int
    kv_cache: int
    activations: int
    reserve: int
    total: int


@dataclass(slots=True, kw_only=True)
class SizePerformance(_Strict):
    ttft_ms: float
    tpot_ms: float
    output_tokens_per_s: float


@dataclass(slots=True, kw_only=True)
class StartupKvCheck(_Strict):
    """A release's start-up check of one max_model_len request against more than one GPU's own layers."""

    needed_bytes: int
    """KV of one max_model_len request, every pipeline stage's layers"""
    available_bytes: int
    """the smallest stage's KV memory it is checked against"""
    refused: bool


@dataclass(slots=True, kw_only=True)
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
    kv_capacity_tokens: int
    """what vLLM logs as "GPU KV cache size: N tokens\""""
    max_concurrency: float
    """kv_capacity_tokens / context_tokens (vLLM's 'Maximum concurrency')"""
    notes: list[str] = field(default_factory=list)
    performance: SizePerformance | None = None
    vllm_serve: str | None = None
    """`size` only: the `vllm serve` command line this sizing models (flags given; defaults in defaults_assumed)"""
    defaults_assumed: list[str] | None = None
    """`size` only: the release's defaults the command relies on, "--flag value" each"""
    tips: list[str] | None = None
    """`size` only: defaults that cost real memory, with what pinning them frees"""
    logged_kv_tokens: int | None = None
    """where the release logs "GPU KV cache size" otherwise than kv_capacity_tokens (before 0.21, a pool of several
    layer kinds: blocks // groups × block size); None elsewhere"""
    startup_kv_check: StartupKvCheck | None = None
    """where the release checks the whole model's KV under pipeline parallelism (0.14-0.16); None elsewhere"""


# -- plan --json

Form = Literal["cpu", "single_gpu", "single_node_multi_gpu", "multi_node", "managed_api"]
Exposure = Literal["none", "gateway", "kubernetes", "managed_api"]  # §6: who runs it, whose staff cost it carries


@dataclass(slots=True, kw_only=True)
class AtPeak(_Strict):
    """One replica's figures at the peak the replicas share, in steady state: below the capacity figures when the
    replicas were set by more than the batch (the P99 bound, a forced count, the spare replica)."""

    sequences_per_replica: float
    """sequences in flight per replica at the peak: the sized load (peak concurrency, or the daily average when
    above it) / replicas; for a request-rate peak, Little's law at the predicted request time"""
    requests_per_s: float | None = None
    """the endpoint's peak in requests/s when it is a request rate (peak_rps, or the daily average rate when
    higher): the open loop bench/run.sh sends; null for a concurrency peak"""
    ttft_ms: float
    ttft_p99_ms: float
    tpot_ms: float
    tpot_p99_ms: float
    tokens_per_s_per_replica: float


@dataclass(slots=True, kw_only=True)
class Performance(_Strict):
    ttft_ms: float
    tpot_ms: float
    tokens_per_s_per_replica: float
    max_batch: int
    limited_by: str
    kv_batch: int | None = None
    """full-context sequences the KV cache admits: the replicas hold the peak at this count (§2)"""
    kv_batch_typical: int | None = None
    """typical-length sequences the KV cache admits (one of them at the full context): caps --max-num-seqs"""
    replicas_set_by: str | None = None
    """what set the replicas: "batch" (ceil(peak / max_batch)), "p99 bound" (ceil(peak / kv_batch)) or "deadline"
    (offline: copies enough to finish the job in time)"""
    ttft_p99_ms: float | None = None
    """P99 TTFT under the peak load (front end, the running step, the prompt's chunks, queueing): the figure the
    P99 target is held against"""
    tpot_p99_ms: float | None = None
    """P99 TPOT under the peak load (steps that carry prefill chunks are longer)"""
    at_peak: AtPeak | None = None
    """the figures at the peak spread over the replicas (what the endpoint shows at its peak, and what the starter
    repo's bench/run.sh measures); the figures above are at max_batch sequences, the capacity the targets allow"""


@dataclass(slots=True, kw_only=True)
class GpuPriceJson(_Strict):
    usd_per_gpu_hour: float
    kind: str
    provider: str
    date: str
    source: str
    via: str = ""


@dataclass(slots=True, kw_only=True)
class ManagedPriceJson(_Strict):
    usd_per_mtok_input: float
    usd_per_mtok_output: float
    provider: str
    date: str
    source: str
    model_key: str = ""
    via: str = ""
    basis: str = ""
    """listed (a dated catalog price), estimated (from the listed models of the nearest size) or given"""
    estimated_from: list[str] = field(default_factory=list)
    note: str = ""


@dataclass(slots=True, kw_only=True)
class Cost(_Strict):
    """§8 for a self-hosted plan: the bill, the idle share inside it, staff, and the managed API for the same volume."""

    gpu_bill_usd_month: float | None
    """None when the catalog has no price for the GPU (set gpu_hour_usd)"""
    idle_usd_month: float | None
    staff_usd_month: float
    total_usd_month: float | None
    usd_per_mtok: float | None
    managed_usd_month: float | None
    average_utilization: float | None
    utilization_exact: float | None
    """unrounded: bill × (1 − it) is the idle share shown"""
    utilization_basis: str | None
    break_even_daily_requests: int | None
    capacity_daily_requests: int | None
    break_even_beyond_capacity: bool | None
    monthly_output_mtok: float | None
    managed_staff_usd_month: float | None
    managed_total_usd_month: float | None
    gpu_price: GpuPriceJson | None = None
    managed_price: ManagedPriceJson | None = None
    job_requests: int | None = None
    """offline: the requests the job processes in total (absent when no job was described)"""
    job_hours: float | None = None
    """offline: hours the job runs on this plan's copies"""
    job_usd: float | None = None
    """offline: the job's GPU bill (price × GPUs × job hours; no idle share)"""
    job_output_tokens: int | None = None
    """offline: output tokens of one request of the job"""


@dataclass(slots=True, kw_only=True)
class ManagedCost(_Strict):
    """§8 for a managed-API plan: the vendor's bill for the volume, the caller-side staff, and what self-hosting the
    same load would cost instead."""

    gpu_bill_usd_month: float
    idle_usd_month: float
    staff_usd_month: float
    total_usd_month: float | None
    usd_per_mtok: float | None
    managed_usd_month: float | None
    managed_price: ManagedPriceJson | None = None
    self_host_usd_month: float | None = None
    self_host_exposure: str | None = None
    self_host_layout: str | None = None
    saving_usd_month: float | None = None
    """what the managed API saves against self-hosting the same load (> 0)"""
    managed_extra_usd_month: float | None = None
    """what the managed API costs more than self-hosting the same load (> 0)"""

    __positive__ = ("saving_usd_month", "managed_extra_usd_month")


@dataclass(slots=True, kw_only=True)
class Stage(_Strict):
    name: str
    seconds: float
    basis: str


@dataclass(slots=True, kw_only=True)
class ColdStart(_Strict):
    stages: list[Stage]
    total_s: float


@dataclass(slots=True, kw_only=True)
class Warning_(_Strict):
    id: str
    message: str
    section: str


@dataclass(slots=True, kw_only=True)
class Step(_Strict):
    node: str
    value: Any
    why: str


@dataclass(slots=True, kw_only=True)
class Alternative(_Strict):
    form: str
    why_not: str


@dataclass(slots=True, kw_only=True)
class QuantizedOption(_Strict):
    weight_precision: Literal["fp8"]
    gpu: str
    tp: int
    pp: int
    replicas: int
    total_usd_month: float
    saving_usd_month: float
    """the chosen plan's total minus this one's (> 0: only a cheaper option is offered)"""
    why: str

    __positive__ = ("saving_usd_month",)


@dataclass(slots=True, kw_only=True)
class Plan(_Strict):
    """`plan --json` and every starter repo's plan.json: the form, the layout, its numbers and the reasons."""

    form: Form
    exposure: Exposure
    title: str
    summary: str
    model: str
    checkpoint_format: str | None = None
    checkpoint_bytes: int | None = None  # the checkpoint's weights as downloaded (not the deployed precision)
    gpu: str | None
    gpu_vendor: str | None = None  # the card's vendor (nvidia, amd, intel): its image and device plugin
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
    cost: Cost | ManagedCost | None = None
    cold_start: ColdStart | None = None
    quantized_option: QuantizedOption | None = None
    warnings: list[Warning_]
    path: list[Step]
    alternatives: list[Alternative]
    ignored_answers: list[str] | None = None
    """answers given whose questions this path never asks: not used, and said so"""
    sections: str
    boundary: str | None

    def step(self, node: str) -> Any:
        """The value the path recorded at a node (an answer, or a compute's facts), None when the path skipped it."""
        return next((s.value for s in self.path if s.node == node), None)

    def fit_facts(self) -> dict[str, Any]:
        """The `fit` compute's facts as the path recorded them (empty for a plan that sized no layout)."""
        value = self.step("fit")
        return value if isinstance(value, dict) else {}

    def typical_lengths(self) -> tuple[int, int] | None:
        """The typical request the plan was sized for, (prompt, output) tokens; None when it sized no layout."""
        fit = self.fit_facts()
        prompt, output = fit.get("typical_prompt_tokens"), fit.get("typical_output_tokens")
        return (prompt, output) if isinstance(prompt, int) and isinstance(output, int) else None


SCHEMAS: dict[str, type] = {"plan": Plan, "size": Size}


def to_json(obj: Any) -> Any:
    """A contract object as plain JSON values, in field order; a field whose default is None is left out while
    it is None (see the module docstring)."""
    if is_dataclass(obj) and not isinstance(obj, type):
        out = {}
        for f in fields(obj):
            value = getattr(obj, f.name)
            if value is None and f.default is None and f.default_factory is MISSING:
                continue
            out[f.name] = to_json(value)
        return out
    if isinstance(obj, (list, tuple)):
        return [to_json(v) for v in obj]
    if isinstance(obj, dict):
        return {k: to_json(v) for k, v in obj.items()}
    return obj


def adapter(name: str):
    """The pydantic TypeAdapter of a published object ("plan" or "size"): its JSON Schema, or validation of a
    dump read back (e.g. a plan.json a user edited). Imports pydantic: for the commands that need it only."""
    from pydantic import TypeAdapter

    return TypeAdapter(SCHEMAS[name])


def json_schema(name: str) -> dict[str, Any]:
    """The JSON Schema `llm-deploy-wizard schema plan|size` prints; savings are stated positive (exclusiveMinimum)."""
    schema = adapter(name).json_schema()
    for cls in _classes(SCHEMAS[name]):
        where = schema if cls is SCHEMAS[name] else schema.get("$defs", {}).get(cls.__name__, {})
        for key in getattr(cls, "__positive__", ()):
            prop = where["properties"][key]
            for branch in prop.get("anyOf", [prop]):
                if branch.get("type") == "number":
                    branch["exclusiveMinimum"] = 0
    return schema


def _classes(cls: type, seen: set[type] | None = None) -> set[type]:
    """A contract class and every contract class its fields hold (their annotations name them)."""
    seen = seen if seen is not None else set()
    seen.add(cls)
    for f in fields(cls):
        for name in re.findall(r"[A-Za-z_]+", str(f.type)):
            other = globals().get(name)
            if isinstance(other, type) and is_dataclass(other) and other not in seen:
                _classes(other, seen)
    return seen
