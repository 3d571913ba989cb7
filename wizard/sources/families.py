"""The catalog's model families and the order models are listed in (`models`, the wizard's model question).

Families come newest first, by the month of their first public release (data/models/families.json, each month
with the page that says so). Families released the same month keep catalog order (where the family first appears
in index.json); a family whose month is unknown (`released` null, or no record at all) comes after every dated
family, in catalog order.

Within a family, models go by total parameters, SMALLEST FIRST: a newcomer's first question is what runs on the
hardware at hand, and the smallest model is the cheapest one to try, so a family reads as a ladder from one GPU up
to a node (the order the families' own model cards use: Qwen3 0.6B, 1.7B, ... 235B-A22B). Checkpoints of the same
size keep catalog order (base, Instruct, then quantized copies); a model whose size cannot be counted goes last.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from functools import lru_cache
from typing import NamedTuple

from wizard.errors import InputError
from wizard.sources.catalog import DATA, CatalogEntry, model_entries

RELEASED = re.compile(r"^\d{4}-(0[1-9]|1[0-2])$")  # YYYY-MM


class FamilyRecord(NamedTuple):
    """One family of families.json: its first public release (YYYY-MM, or None when no dated page was found)."""

    family: str
    released: str | None
    source: str
    note: str


class ListedModel(NamedTuple):
    """A catalog entry as listed: its family's release month and its size."""

    entry: CatalogEntry
    released: str | None
    params: int | None  # total parameters: the catalog's stated count, else counted from config.json
    active_params: int | None  # per token, the figure of `size --json` model.params_active
    moe: bool  # mixture of experts: the active count is worth showing beside the total
    max_context: int | None = None  # tokens: config.json max_position_embeddings
    checkpoint: str | None = None  # the checkpoint's weight format as vLLM loads it (bf16, fp8, int4, nvfp4, ...)

    @property
    def size(self) -> str:
        """"8.0 B", "235 B (21.6 B active)" for a mixture of experts, "—" when the config could not be counted."""
        if self.params is None:
            return "—"
        if self.moe and self.active_params is not None:
            return f"{billions(self.params)} ({billions(self.active_params)} active)"
        return billions(self.params)


def billions(n: int) -> str:
    """Parameters in billions: one decimal below 100 B (0.5, 8.0, 14.8, 70.6), whole above (235, 671)."""
    b = n / 1e9
    return f"{b:.1f} B" if b < 99.95 else f"{b:,.0f} B"


@lru_cache(maxsize=1)
def family_records() -> dict[str, FamilyRecord]:
    """Every record of families.json by family name (exactly as index.json spells it)."""
    raw = json.loads((DATA / "models" / "families.json").read_text(encoding="utf-8"))
    out: dict[str, FamilyRecord] = {}
    for r in raw["families"]:
        released = r.get("released")
        if released is not None and not RELEASED.match(str(released)):
            raise InputError("families.json released", released, f"expected YYYY-MM or null (family {r['family']!r})")
        out[r["family"]] = FamilyRecord(r["family"], released, r.get("source") or "", r.get("note") or "")
    return out


def released(family: str) -> str | None:
    record = family_records().get(family)
    return record.released if record else None


def ordered_families(entries: Iterable[CatalogEntry]) -> list[str]:
    """The families of these entries, newest release first (see the module docstring for ties and unknowns)."""
    seen: list[str] = []
    for e in entries:
        if e.family not in seen:
            seen.append(e.family)
    dated = [f for f in seen if released(f)]
    undated = [f for f in seen if not released(f)]
    months = sorted({str(released(f)) for f in dated}, reverse=True)  # YYYY-MM sorts as text
    # Month by month, each month's families in catalog order.
    return [f for m in months for f in dated if released(f) == m] + undated


def catalog_listing(entries: tuple[CatalogEntry, ...] | None = None) -> tuple[ListedModel, ...]:
    """The catalog (or these entries) in listing order: families newest first, then sizes smallest first."""
    return _listing(model_entries() if entries is None else tuple(entries))


@lru_cache(maxsize=4)
def _listing(entries: tuple[CatalogEntry, ...]) -> tuple[ListedModel, ...]:
    rank = {f: i for i, f in enumerate(ordered_families(entries))}
    listed = [_sized(e) for e in entries]
    order = sorted(range(len(listed)), key=lambda i: (rank[listed[i].entry.family], listed[i].params is None,
                                                      listed[i].params or 0, i))
    return tuple(listed[i] for i in order)


def _sized(entry: CatalogEntry) -> ListedModel:
    """Total and active parameters of one entry, counted as `size` counts them (the catalog's stated count wins),
    its maximum context and its checkpoint format."""
    from wizard.sizing.params import count_params
    from wizard.sizing.precision import weight_format
    from wizard.sources.catalog import load_catalog_model

    month = released(entry.family)
    try:
        spec = load_catalog_model(entry)
    except (InputError, OSError, ValueError):  # a config that does not parse is still listed, without a size
        return ListedModel(entry, month, entry.params, None, False)
    counted = count_params(spec)
    return ListedModel(entry, month, counted.total, counted.active, spec.moe is not None,
                       spec.max_position_embeddings, weight_format(spec, "auto").name)


def select_family(listing: tuple[ListedModel, ...], name: str) -> tuple[ListedModel, ...]:
    """The models of one family, matched exactly but for case; an unknown name is an InputError naming the
    families the catalog has (a prefix such as "qwen3" would be ambiguous: Qwen3, Qwen3-Next, Qwen3.5, ...)."""
    key = name.strip().casefold()
    picked = tuple(m for m in listing if m.entry.family.casefold() == key)
    if not picked:
        families = list(dict.fromkeys(m.entry.family for m in listing))
        raise InputError("--family", name, "accepted: " + ", ".join(families))
    return picked
