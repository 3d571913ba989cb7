"""The `size --json` object of DESIGN.md "JSON output" (contracts.Size): exactly its fields, byte figures as integers."""

from __future__ import annotations

from wizard.sizing.fit import SizeResult
from wizard.specs.contracts import (
    PerGpuBytes,
    Parallel,
    Size,
    SizeGpu,
    SizeInputs,
    SizeModel,
    SizePerformance,
    StartupKvCheck,
)


def size_json(r: SizeResult, perf=None, command=None, tips=()) -> Size:
    """A SizeResult as the public contract (other scripts parse its dump: extend, never rename); `perf` is the
    roofline at the sized concurrency when `size` was given the typical lengths.

    `notes` extends DESIGN.md's fields: a generic estimate or a borrowed config must be visible to scripts too."""
    m, i = r.model, r.inputs
    return Size(
        model=SizeModel(id=m.id, source=m.source, architecture=m.architecture, params_total=r.params.total,
                        params_active=r.params.active, layers=m.num_layers, attention_heads=m.num_attention_heads,
                        kv_heads=m.num_kv_heads, head_dim=m.head_dim, attention=m.attention, hidden_size=m.hidden_size),
        gpu=SizeGpu(id=r.gpu.id, memory_bytes=r.gpu.memory_reported_bytes),
        parallel=Parallel(tp=i.tp, pp=i.pp),
        inputs=SizeInputs(weight_precision=i.weight_precision, kv_cache_dtype=i.kv_cache_dtype,
                          context_tokens=i.context_tokens, concurrency=i.concurrency,
                          gpu_memory_utilization=i.gpu_memory_utilization, sequence_tokens=i.sequence_tokens,
                          vllm_version=i.vllm_version, max_num_seqs=i.max_num_seqs or i.concurrency,
                          max_num_batched_tokens=r.activation.tokens,
                          sampler_bytes_per_logit=r.activation.bytes_per_logit),
        per_gpu_bytes=PerGpuBytes(weights=r.weights.per_gpu, kv_cache=r.kv_cache_bytes, activations=r.activation.peak,
                                  reserve=r.reserve.total, total=r.total_bytes),
        usable_bytes=r.usable_bytes,
        headroom_bytes=r.headroom_bytes,
        fits=r.fits,
        kv_bytes_per_token=r.kv_bytes_per_token,
        kv_capacity_tokens=r.kv_capacity_tokens,
        max_concurrency=round(r.max_concurrency, 2),
        notes=list(r.notes),  # extension: caveats (generic estimate, sibling config, ...) so no figure is silent
        performance=None if perf is None else SizePerformance(
            ttft_ms=round(perf.ttft_ms, 1), tpot_ms=round(perf.tpot_ms, 2),
            output_tokens_per_s=round(perf.output_tokens_per_s, 1)),
        vllm_serve=command.line if command is not None else None,
        defaults_assumed=list(command.assumed) if command is not None else None,
        tips=list(tips) if command is not None else None,
        logged_kv_tokens=None if r.logged_kv_tokens in (None, r.kv_capacity_tokens) else r.logged_kv_tokens,
        startup_kv_check=None if r.startup_check is None else StartupKvCheck(
            needed_bytes=r.startup_check[0], available_bytes=r.startup_check[1], refused=r.refused_at_startup),
    )
