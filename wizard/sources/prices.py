"""The bundled price snapshots (wizard/sources/data/prices.json, built from the project's dated reference).

A model the managed-API list does not name still gets a price: `estimate_managed_price` takes the listed models
of its family when that family is listed (all listed models otherwise), finds the listed active sizes nearest
below and above the model's own, and interpolates each price linearly in log(active parameters) between them
(one side only: that side's price; several models of one size: their mean). It says which models it used.
"""

from __future__ import annotations

import json
import math
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
            via=e.get("via") or "",
        )
    return out


def _listed(e: dict) -> ManagedPrice:
    return ManagedPrice(
        model=e["model"], usd_per_mtok_input=float(e["usd_per_mtok_input"]),
        usd_per_mtok_output=float(e["usd_per_mtok_output"]), provider=e.get("provider") or "",
        date=retrieved(), source=e.get("source") or "", model_key=e.get("model_key") or "", via=e.get("via") or "",
    )


def managed_price(model_id: str) -> ManagedPrice | None:
    """The catalog's managed-API price for a model (case-insensitive Hub id), or None."""
    key = model_id.lower()
    for e in _raw()["managed_per_mtok"]:
        if e["model"].lower() == key:
            return _listed(e)
    return None


def _sized() -> list[dict]:
    """Listed models whose active parameters were counted (the estimate's reference points)."""
    return [e for e in _raw()["managed_per_mtok"] if e.get("active_params")]


def estimate_managed_price(model_id: str, active_params: int, family: str = "") -> ManagedPrice | None:
    """A managed price for a model the list does not name, from the listed models nearest its active size."""
    if active_params <= 0:
        return None
    everyone = _sized()
    kin = [e for e in everyone if family and e.get("family") == family]
    pool = kin or everyone
    if not pool:
        return None
    below = [e for e in pool if e["active_params"] <= active_params]
    above = [e for e in pool if e["active_params"] >= active_params]
    lo = max((e["active_params"] for e in below), default=None)
    hi = min((e["active_params"] for e in above), default=None)
    lo_group = [e for e in below if e["active_params"] == lo]
    hi_group = [e for e in above if e["active_params"] == hi]

    def mean(group: list[dict], key: str) -> float:
        return sum(float(e[key]) for e in group) / len(group)

    b = active_params / 1e9
    if kin:
        scope = f"in its family ({family})"
    else:
        scope = f"of all listed models (none of its family, {family}, is listed)" if family else \
            "of all listed models (its family is not in the catalog)"
    if lo is not None and hi is not None and lo != hi:
        t = math.log(active_params / lo) / math.log(hi / lo)  # 0 at the smaller listed size, 1 at the larger
        used = lo_group + hi_group
        price_in, price_out = (mean(lo_group, k) + t * (mean(hi_group, k) - mean(lo_group, k))
                               for k in ("usd_per_mtok_input", "usd_per_mtok_output"))
        how = (f"interpolated in log(active parameters) between the listed active sizes {lo / 1e9:.4g} B and "
               f"{hi / 1e9:.4g} B {scope}, for its {b:.4g} B")
    else:
        used = lo_group or hi_group
        price_in, price_out = mean(used, "usd_per_mtok_input"), mean(used, "usd_per_mtok_output")
        how = f"the nearest listed active size {scope}: {used[0]['active_params'] / 1e9:.4g} B for its {b:.4g} B"
    return ManagedPrice(
        model=model_id, usd_per_mtok_input=round(price_in, 4), usd_per_mtok_output=round(price_out, 4), provider="",
        date=retrieved(), source="; ".join(e["source"] for e in used), model_key="",
        via=used[0].get("via") or "", basis="estimated",
        estimated_from=tuple(f"{e['model']} ({e['provider']})" for e in used),
        note=how,
    )
