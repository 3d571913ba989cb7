"""The bundled price snapshots (wizard/sources/data/prices.json, built from the project's dated reference)."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from wizard.specs import GpuPrice, ManagedPrice

DATA = Path(__file__).parent / "data" / "prices.json"


@lru_cache(maxsize=1)
def _raw() -> dict:
    return json.loads(DATA.read_text(encoding="utf-8"))


def retrieved() -> str:
    """When the snapshots were read (every price is older than that)."""
    return _raw().get("retrieved", "")


@lru_cache(maxsize=1)
def gpu_prices() -> dict[str, GpuPrice]:
    """Default USD per GPU-hour per catalog GPU id (GPUs without a price are absent)."""
    out = {}
    for e in _raw()["gpu_hour"]:
        out[e["gpu"]] = GpuPrice(
            gpu=e["gpu"], usd_per_gpu_hour=float(e["usd_per_gpu_hour"]), kind=e.get("kind") or "",
            provider=e.get("provider") or "", date=str(e.get("snapshot_date") or ""), source=e.get("source") or "",
        )
    return out


def managed_price(model_id: str) -> ManagedPrice | None:
    """The catalog's managed-API price for a model (case-insensitive Hub id), or None."""
    key = model_id.lower()
    for e in _raw()["managed_per_mtok"]:
        if e["model"].lower() == key:
            return ManagedPrice(
                model=e["model"], usd_per_mtok_input=float(e["usd_per_mtok_input"]),
                usd_per_mtok_output=float(e["usd_per_mtok_output"]), provider=e.get("provider") or "",
                date=retrieved(), source=e.get("source") or "", model_key=e.get("model_key") or "",
            )
    return None
