"""Dated prices: GPU-hours and managed-API tokens, each with where and when it was read (never live)."""

from typing import NamedTuple


class GpuPrice(NamedTuple):
    """USD per GPU-hour for one catalog GPU."""

    gpu: str
    usd_per_gpu_hour: float
    kind: str  # on-demand, reservation, spot, or "given" (the user's own)
    provider: str  # who sells the GPU-hour at this price
    date: str  # snapshot date as the source states it ("" when undated)
    source: str
    via: str = ""  # the aggregator, blog or mirror the figure was read from ("" = the provider's own page or the user)


class ManagedPrice(NamedTuple):
    """USD per million tokens of a managed API serving the same model."""

    model: str
    usd_per_mtok_input: float
    usd_per_mtok_output: float
    provider: str  # the API that lists this price ("" for an estimate: no provider lists this model)
    date: str
    source: str
    model_key: str = ""  # the provider's own name for the model, e.g. together_ai/meta-llama/...-Turbo
    via: str = ""  # the aggregator the figure was read from ("" = the provider's own page or the user)
    basis: str = "listed"  # listed (the price list names this model), estimated (from other models), given (answers)
    estimated_from: tuple[str, ...] = ()  # the listed models an estimate comes from
    note: str = ""  # how an estimate was made, in one sentence
