"""Rich terminal output of the one-shot commands: every figure beside its formula, inputs and source."""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Console
from rich.table import Table

from wizard.sizing.activations import SAMPLER_BYTES_PER_LOGIT
from wizard.sizing.fit import SizeResult
from wizard.sizing.kv_cache import kv_heads_per_rank
from wizard.specs import GpuSpec

GIB = 2**30


def gib(n: float) -> str:
    return f"{n / GIB:,.2f} GiB"


def print_size(r: SizeResult, console: Console | None = None) -> None:
    """The size breakdown: model facts, per-GPU memory rows with formulas, verdict and KV capacity."""
    console = console or Console()
    m, g, i = r.model, r.gpu, r.inputs
    p = r.params
    console.print(f"[bold]{m.id}[/] ({m.architecture}, {m.attention}) from {m.source}: {m.source_detail}")
    console.print(
        f"  params {p.total:,} total, {p.active:,} active per token — {p.source}; "
        f"{m.num_layers} layers, {m.num_attention_heads} heads, {m.num_kv_heads} KV heads, head_dim {m.head_dim}"
    )
    console.print(
        f"  GPU {g.id}: {gib(g.memory_reported_bytes)} reported ({g.memory_reported_source}); "
        f"layout TP {i.tp} × PP {i.pp} = {r.gpus} GPU(s)"
    )

    t = Table(title="Memory per GPU (DOMAIN §2)", title_justify="left", show_lines=False)
    t.add_column("part")
    t.add_column("bytes", justify="right")
    t.add_column("GiB", justify="right")
    t.add_column("formula and inputs")
    w = r.weights
    fmt = w.format.name + (" (checkpoint)" if w.format.from_checkpoint else "")
    weights_how = f"{w.total:,} B at {fmt}" + (" — exact, safetensors" if w.exact else "")
    if i.tp * i.pp > 1:
        weights_how += f"; ÷ TP {i.tp}, heaviest of {i.pp} PP stage(s)"
    t.add_row("weights", f"{w.per_gpu:,}", gib(w.per_gpu), weights_how)
    kv = r.kv
    kv_how = f"{i.concurrency} seq × {i.context_tokens:,} tok × {r.kv_bytes_per_token:,} B/token"
    if m.mla is not None:
        kv_how += f" (MLA: (kv_lora_rank {m.mla.kv_lora_rank} + rope {m.mla.qk_rope_head_dim}) × {kv.element_bytes} B per layer, same on every TP rank)"
    else:
        kv_how += f" (2 × {kv_heads_per_rank(m, i.tp)} KV heads/rank × {m.head_dim} × {kv.element_bytes} B per layer)"
    if kv.sliding_bytes_per_token:
        kv_how += f"; sliding layers capped at {kv.window:,} tokens"
    if kv.state_bytes_per_sequence:
        kv_how += f"; + {kv.state_bytes_per_sequence:,} B fixed state per sequence"
    t.add_row("KV cache", f"{r.kv_cache_bytes:,}", gib(r.kv_cache_bytes), kv_how)
    a = r.activation
    t.add_row(
        "activations",
        f"{a.peak:,}",
        gib(a.peak),
        f"max(forward {a.tokens:,} batched tokens = {gib(a.forward)}, sampler {a.sequences} seqs × "
        f"{m.vocab_size:,} vocab × {SAMPLER_BYTES_PER_LOGIT} B = {gib(a.sampler)})",
    )
    t.add_row(
        "reserve",
        f"{r.reserve.total:,}",
        gib(r.reserve.total),
        "non-torch memory (CUDA context, cuBLAS)"
        + (" + NCCL / all-reduce buffers" if r.reserve.communication else "")
        + (" + CUDA graph pool (budgeted since vLLM 0.21)" if r.reserve.cuda_graphs else ""),
    )
    t.add_row("[bold]total", f"[bold]{r.total_bytes:,}", f"[bold]{gib(r.total_bytes)}", "")
    t.add_row("usable", f"{r.usable_bytes:,}", gib(r.usable_bytes), f"{gib(g.memory_reported_bytes)} × {i.gpu_memory_utilization}")
    verdict = "[green]fits[/]" if r.fits else "[red]does not fit[/]"
    t.add_row("headroom", f"{r.headroom_bytes:,}", gib(r.headroom_bytes), verdict)
    console.print(t)
    console.print(
        f"KV capacity: {r.kv_capacity_tokens:,} tokens per GPU (vLLM's 'GPU KV cache size'), "
        f"max concurrency at {i.context_tokens:,} tokens: {r.max_concurrency:.2f}×"
    )
    for note in m.notes:
        console.print(f"[yellow]note:[/] {note}")


def print_models(entries: Iterable) -> None:
    t = Table(title="Bundled model catalog (offline)")
    for col in ("id", "family", "source"):
        t.add_column(col, overflow="fold")
    for e in entries:
        t.add_row(e.id, e.family, e.source + (f" — {e.note}" if e.note else ""))
    Console().print(t)


def print_gpus(gpus: Iterable[GpuSpec]) -> None:
    t = Table(title="Bundled GPU catalog")
    for col, justify in (("id", "left"), ("memory (reported)", "right"), ("bandwidth", "right"), ("bf16 dense", "right"),
                         ("fp8", "left"), ("interconnect", "left"), ("per node", "right")):
        t.add_column(col, justify=justify)  # type: ignore[arg-type]
    for g in gpus:
        t.add_row(
            g.id,
            gib(g.memory_reported_bytes),
            f"{g.mem_bw_bytes_s / 1e12:.2f} TB/s",
            f"{g.bf16_flops / 1e12:,.0f} TFLOPS" if g.bf16_flops else "—",
            "yes" if g.fp8_support else "no",
            g.interconnect,
            str(g.gpus_per_node),
        )
    Console().print(t)
