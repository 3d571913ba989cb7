"""The `size --json` object of DESIGN.md "JSON output": exactly its fields, byte figures as integers."""

from __future__ import annotations

from typing import Any

from wizard.sizing.fit import SizeResult


def size_json(r: SizeResult) -> dict[str, Any]:
    """A SizeResult as the public JSON contract (other scripts parse this: extend, never rename).

    `notes` extends DESIGN.md's fields: a generic estimate or a borrowed config must be visible to scripts too."""
    m, i = r.model, r.inputs
    return {
        "model": {
            "id": m.id,
            "source": m.source,
            "architecture": m.architecture,
            "params_total": r.params.total,
            "params_active": r.params.active,
            "layers": m.num_layers,
            "attention_heads": m.num_attention_heads,
            "kv_heads": m.num_kv_heads,
            "head_dim": m.head_dim,
            "attention": m.attention,
        },
        "gpu": {"id": r.gpu.id, "memory_bytes": r.gpu.memory_reported_bytes},
        "parallel": {"tp": i.tp, "pp": i.pp},
        "inputs": {
            "weight_precision": i.weight_precision,
            "kv_cache_dtype": i.kv_cache_dtype,
            "context_tokens": i.context_tokens,
            "concurrency": i.concurrency,
            "gpu_memory_utilization": i.gpu_memory_utilization,
        },
        "per_gpu_bytes": {
            "weights": r.weights.per_gpu,
            "kv_cache": r.kv_cache_bytes,
            "activations": r.activation.peak,
            "reserve": r.reserve.total,
            "total": r.total_bytes,
        },
        "usable_bytes": r.usable_bytes,
        "headroom_bytes": r.headroom_bytes,
        "fits": r.fits,
        "kv_bytes_per_token": r.kv_bytes_per_token,
        "kv_capacity_tokens": r.kv_capacity_tokens,
        "max_concurrency": round(r.max_concurrency, 2),
        "notes": list(r.notes),  # extension: caveats (generic estimate, sibling config, ...) so no figure is silent
    }
