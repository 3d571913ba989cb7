"""The bundled catalog (offline default): real config.json files of popular models, with their sources."""


import json
from typing import NamedTuple
from functools import lru_cache
from pathlib import Path

from wizard.errors import InputError
from wizard.sources.hf_config import parse_config
from wizard.specs import ExactWeights, GpuSpec, ModelSpec

DATA = Path(__file__).parent / "data"  # shipped inside the wheel beside this module


class CatalogEntry(NamedTuple):
    """One model of the catalog: its id, the config file, and where the facts come from."""

    id: str
    aliases: tuple[str, ...]
    config: str
    quant_config: str | None
    family: str
    source: str
    note: str
    params: int | None
    params_source: str

    @property
    def config_of(self) -> str | None:
        """The checkpoint whose config.json this entry borrows (None when it is its own)."""
        stem = self.config.removesuffix(".json").replace("__", "/", 1)
        own = {self.id.lower(), *(a.lower() for a in self.aliases)}
        return None if stem.lower() in own else stem


@lru_cache(maxsize=1)
def model_entries() -> tuple[CatalogEntry, ...]:
    """Every catalog entry, in catalog order."""
    raw = json.loads((DATA / "models" / "index.json").read_text(encoding="utf-8"))
    return tuple(
        CatalogEntry(
            id=e["id"],
            aliases=tuple(e.get("aliases") or ()),
            config=e["config"],
            quant_config=e.get("quant_config"),
            family=e.get("family", ""),
            source=e.get("source", ""),
            note=e.get("note") or "",
            params=e.get("params"),
            params_source=e.get("params_source") or "",
        )
        for e in raw["models"]
    )


@lru_cache(maxsize=None)
def entry_architecture(entry: CatalogEntry) -> str:
    """The entry's config.json `architectures[0]` (what an engine looks up in its model registry)."""
    config = json.loads((DATA / "models" / "configs" / entry.config).read_text(encoding="utf-8"))
    return (config.get("architectures") or ["unknown"])[0]


def find_entry(model_id: str) -> CatalogEntry | None:
    """The entry whose id or alias matches case-insensitively (Hub ids are case-insensitive)."""
    key = model_id.strip().lower()
    for e in model_entries():
        if e.id.lower() == key or key in (a.lower() for a in e.aliases):
            return e
    return None


def load_catalog_model(entry: CatalogEntry) -> ModelSpec:
    """ModelSpec of a catalog entry (its config.json as published, parsed like any other)."""
    folder = DATA / "models" / "configs"
    config = json.loads((folder / entry.config).read_text(encoding="utf-8"))
    quant = json.loads((folder / entry.quant_config).read_text(encoding="utf-8")) if entry.quant_config else None
    spec = parse_config(config, model_id=entry.id, source="catalog", source_detail=entry.source, quant_config=quant,
                        where=f"catalog:{entry.config}")
    if entry.config_of is not None:  # a sibling's config stands in: say so with every figure
        spec = spec._replace(notes=(*spec.notes, f"config.json of {entry.config_of} stands in for this checkpoint: {entry.note}"))
    if entry.params:
        spec = spec._replace(exact=ExactWeights(params=entry.params, bytes=0, source=entry.params_source))
    return spec


@lru_cache(maxsize=1)
def gpu_catalog() -> tuple[GpuSpec, ...]:
    """Every GPU of the bundled catalog (datasheet figures with sources)."""
    raw = json.loads((DATA / "gpus.json").read_text(encoding="utf-8"))
    out = []
    for g in raw["gpus"]:
        fields = {k: g.get(k) for k in GpuSpec._fields}
        fields["sources"] = tuple(g.get("sources") or ())
        fields["notes"] = tuple(g.get("notes") or ())
        fields["memory_type"] = g.get("memory_type") or "HBM"
        fields["fp4_flops"] = float(g["fp4_flops"]) if g.get("fp4_flops") is not None else None
        fields["fp4_support"] = bool(g.get("fp4_support", False))
        fields["pcie_p2p"] = bool(g.get("pcie_p2p", True))
        out.append(GpuSpec(**fields))
    return tuple(out)


def find_gpu(gpu_id: str) -> GpuSpec:
    """The catalog GPU with this id, or an InputError: the nearest ids ("did you mean"), else every accepted id."""
    key = gpu_id.strip().lower()
    for g in gpu_catalog():
        if g.id == key:
            return g
    from wizard.sources.suggest import did_you_mean, gpu_suggestions

    ids = [g.id for g in gpu_catalog()]
    near = did_you_mean(gpu_suggestions(gpu_id, ids))
    raise InputError("gpu", gpu_id, f"not a catalog GPU id (`llm-deploy-wizard gpus` lists them); {near}" if near
                     else "accepted: " + ", ".join(ids))
