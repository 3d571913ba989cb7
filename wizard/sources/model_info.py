"""`models ID`: one catalog model's provenance — where its config.json and its parameter count come from, what the
config says (architecture, maximum context, checkpoint format), and whether the targeted vLLM serves it."""

from __future__ import annotations

from typing import Any

from wizard.errors import InputError
from wizard.sources.catalog import CatalogEntry, find_entry, model_entries


def find_catalog_model(name: str) -> CatalogEntry:
    """The catalog entry `name` names: an id or alias (any case), or — the catalog being all `models ID` looks in —
    a bare name that is the name part (after the "/") of exactly one entry. Else an InputError with the nearest
    ids ("did you mean"), exit 2."""
    entry = find_entry(name)
    if entry is not None:
        return entry
    key = name.strip().lower()
    if key and "/" not in key:
        owners = [e for e in model_entries()
                  if any(n.lower().rpartition("/")[2] == key for n in (e.id, *e.aliases))]
        if len(owners) == 1:
            return owners[0]
    from wizard.sources.suggest import did_you_mean, model_suggestions

    near = did_you_mean(model_suggestions(name))
    raise InputError("model", name, "not in the bundled catalog (`llm-deploy-wizard models` lists it)"
                     + (f"; {near}" if near else ""))


def model_details(entry: CatalogEntry) -> dict[str, Any]:
    """The `models ID --json` object (docs/json-output.md): what `size` would read for this entry, with sources."""
    from wizard.sizing.engine import VLLM_VERSION, unserved_reason
    from wizard.sizing.params import count_params
    from wizard.sizing.precision import weight_format
    from wizard.sources.catalog import load_catalog_model
    from wizard.sources.families import released

    spec = load_catalog_model(entry)
    params = count_params(spec)
    unserved = unserved_reason(spec.architecture) or None
    return {
        "id": entry.id,
        "family": entry.family,
        "aliases": list(entry.aliases),
        "released": released(entry.family),
        "config_file": entry.config,
        "config_source": entry.source,
        "config_of": entry.config_of,
        "quant_config_file": entry.quant_config,
        "architecture": spec.architecture,
        "model_type": spec.model_type,
        "attention": spec.attention,
        "moe": spec.moe is not None,
        "params": params.total,
        "active_params": params.active,
        "params_source": params.source,
        "params_stated": params.exact,  # a source states the count (else counted from the tensor shapes)
        "max_context_tokens": spec.max_position_embeddings,
        "checkpoint_format": weight_format(spec, "auto").name,
        "vllm_version": VLLM_VERSION,
        "served": unserved is None,
        "unserved": unserved,
        "note": entry.note or None,
        "notes": list(spec.notes),
    }
