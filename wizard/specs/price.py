"""Dated prices: GPU-hours and managed-API tokens, each with where and when it was read (never live)."""

from typing import NamedTuple


class GpuPrice(NamedTuple):
    """USD per GPU-hour for one catalog GPU."""

    gpu: str
    usd_per_gpu_hour: float
    kind: str  # on-demand, reservation, spot, or "given" (the user's own)
    provider: str
    date: str  # snapshot date as the source states it ("" when undated)
    source: str


class ManagedPrice(NamedTuple):
    """USD per million tokens of a managed API serving the same model."""

    model: str
    usd_per_mtok_input: float
    usd_per_mtok_output: float
    provider: str
    date: str
    source: str
    model_key: str = ""  # the provider's own name for the model, e.g. together_ai/meta-llama/...-Turbo
