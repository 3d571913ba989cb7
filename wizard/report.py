"""Rich terminal output of the one-shot commands: every figure beside its formula, inputs and source."""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from wizard.sizing.fit import SizeResult
from wizard.sizing.kv_cache import kv_heads_per_rank
from wizard.specs import GpuSpec

GIB = 2**30


class _Console(Console):
    """rich's Console, leaving a closed pipe (`| head`) to the command line's one handler (cli.main) instead of
    exiting by itself with status 1."""

    def on_broken_pipe(self) -> None:
        raise BrokenPipeError


def new_console() -> Console:
    return _Console()


def gib(n: float) -> str:
    return f"{n / GIB:,.2f} GiB"


def print_size(r: SizeResult, console: Console | None = None, perf=None) -> None:
    """The size breakdown: model facts, per-GPU memory rows with formulas, verdict and KV capacity."""
    console = console or new_console()
    m, g, i = r.model, r.gpu, r.inputs
    p = r.params
    # Names, paths and sources are data: escaped, so a "[" in a folder name or a note is printed, not parsed.
    console.print(f"[bold]{escape(m.id)}[/] ({escape(m.architecture)}, {m.attention}) from {m.source}: "
                  f"{escape(m.source_detail)}", highlight=False)
    console.print(
        f"  params {p.total:,} total, {p.active:,} active per token — {escape(p.source)}; "
        f"{m.num_layers} layers, {m.num_attention_heads} heads, {m.num_kv_heads} KV heads, head_dim {m.head_dim}"
    )
    console.print(
        f"  GPU {g.id}: {gib(g.memory_reported_bytes)} reported ({escape(g.memory_reported_source)}); "
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
        held = kv.sliding_tokens(i.context_tokens)
        kv_how += (f"; sliding-window layers (window {kv.window:,}) hold {held:,} tokens per sequence"
                   + (" — vLLM V1's per-request budget: the window plus one prefill chunk" if kv.batched_tokens else ""))
    if kv.state_bytes_per_sequence:
        kv_how += f"; + {kv.state_bytes_per_sequence:,} B fixed state per sequence"
    t.add_row("KV cache", f"{r.kv_cache_bytes:,}", gib(r.kv_cache_bytes), kv_how)
    a = r.activation
    t.add_row(
        "activations",
        f"{a.peak:,}",
        gib(a.peak),
        f"max(forward {a.tokens:,} batched tokens = {gib(a.forward)}, sampler {a.sequences} seqs × "
        f"{m.vocab_size:,} vocab × {a.bytes_per_logit} B = {gib(a.sampler)})"
        + (f" + {a.encoder_items} images' embeddings held = {gib(a.encoder_outputs)}; or the image encoder over "
           f"{a.encoder_items} dummy images = {gib(a.encoder)}, whichever is larger" if a.encoder_items else ""),
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
    if perf is not None:
        console.print(
            f"Performance at {i.concurrency} sequence(s) (roofline, wizard/sizing/performance.py): TTFT "
            f"{perf.ttft_ms:,.0f} ms, TPOT {perf.tpot_ms:,.1f} ms, {perf.output_tokens_per_s:,.0f} output tokens/s "
            f"— per step: memory {perf.decode_memory_ms:,.1f} ms + compute {perf.compute_ms:,.1f} ms + communication "
            f"{perf.comm_ms:,.1f} ms, {perf.prefill_tokens_per_step:,.0f} prompt tokens mixed in",
            highlight=False,
        )
    for note in r.notes:
        console.print(f"[yellow]note:[/] {escape(note)}", highlight=False)


def print_models(entries: Iterable) -> None:
    from wizard.sizing.engine import unserved_reason
    from wizard.sources.catalog import entry_architecture

    t = Table(title="Bundled model catalog (offline)")
    for col in ("id", "family", "source"):
        t.add_column(col, overflow="fold")
    for e in entries:
        unserved = unserved_reason(entry_architecture(e))
        t.add_row(escape(e.id), escape(e.family), (f"[bold]{escape(unserved)}[/bold] — " if unserved else "")
                  + escape(e.source) + (f" — {escape(e.note)}" if e.note else ""))
    new_console().print(t)


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
    new_console().print(t)


def print_lint(report) -> None:
    """`tree lint`: problems, or the probe figures and the first answers reaching each recommendation."""
    console = new_console()
    if report.errors:
        for e in report.errors:
            console.print(f"[red]error:[/] {escape(str(e))}", highlight=False)
        console.print(f"[red]tree lint: {len(report.errors)} problem(s)[/]")
        return
    console.print(f"[green]tree lint: ok[/] — {report.probes:,} probe walks, {len(report.paths)} distinct paths, "
                  f"{len(report.reached)} recommendations reached")
    for rec, answers in report.reached.items():
        shown = escape(", ".join(f"{k}={v}" for k, v in answers.items()))
        console.print(f"  [bold]{rec}[/]: {shown}", highlight=False)


def print_tree_show(tree) -> None:
    """`tree show`: the tree drawn from the start, each edge with its condition (shared subtrees once)."""
    from rich.tree import Tree as RichTree

    from wizard.tree.schema import Compute, Question, Recommendation, describe

    def label(node_id: str) -> str:
        n = tree.nodes[node_id]
        if isinstance(n, Question):
            return f"[cyan]? {node_id}[/] ({n.type} → {n.var}) {n.section}"
        if isinstance(n, Compute):
            return f"[magenta]= {node_id}[/] ({n.function}) {n.section}"
        assert isinstance(n, Recommendation)
        return f"[green]★ {node_id}[/]: {n.form} — {n.title}"

    shown: set[str] = set()

    def grow(branch, node_id: str) -> None:
        n = tree.nodes[node_id]
        edges = n.next if isinstance(n, (Question, Compute)) else []
        for e in edges:
            text = f"[dim]{describe(e.when)}[/] → {label(e.goto)}"
            if e.goto in shown and not isinstance(tree.nodes[e.goto], Recommendation):
                branch.add(text + " [dim](see above)[/]")
                continue
            shown.add(e.goto)
            grow(branch.add(text), e.goto)

    root = RichTree(label(tree.start))
    shown.add(tree.start)
    grow(root, tree.start)
    new_console().print(root)


def print_tree_paths(tree, report) -> None:
    """`tree paths`: every distinct path to every recommendation, with answers that take it."""
    console = new_console()
    by_leaf: dict[str, list] = {}
    for trail, answers in report.paths:
        by_leaf.setdefault(trail[-1], []).append((trail, answers))
    for leaf, items in by_leaf.items():
        console.print(f"[green]★ {leaf}[/] — {len(items)} path(s)")
        for trail, _answers in items:
            console.print("   " + escape(" → ".join(trail)), highlight=False)
    if report.errors:
        console.print(f"[red]{len(report.errors)} lint problem(s): run `tree lint`[/]")


class _Collect:
    """A stand-in console that keeps what would be printed, so the TUI shows the same summary as `plan`."""

    def __init__(self) -> None:
        self.items: list = []

    def print(self, item, highlight: bool = True) -> None:  # noqa: ARG002 (rich's signature)
        from rich.text import Text

        self.items.append(Text.from_markup(item) if isinstance(item, str) else item)


def print_plan(plan: dict) -> None:
    """`plan`: the decision, the layout, the path with reasons, warnings and alternatives."""
    console = new_console()
    for item in plan_renderables(plan):
        console.print(item, highlight=False)


def plan_renderables(plan: dict, path: bool = True) -> list:
    """The plan summary as rich renderables (the CLI prints them; the TUI's summary screen shows them)."""
    console = _Collect()
    # Plan texts carry the user's model name and paths: escaped, so rich prints them instead of parsing them.
    console.print(f"[bold]{escape(plan['title'])}[/] — form [bold]{plan['form']}[/], exposure [bold]{plan['exposure']}[/]")
    console.print(escape(plan["summary"]), highlight=False)
    if plan.get("gpu"):
        console.print(
            f"Layout: {escape(str(plan['gpu']))} × TP {plan['tp']} × PP {plan['pp']} = {plan['gpus_per_replica']} GPU(s) per replica "
            f"on {plan['nodes_per_replica']} node(s); {plan['replicas']} replica(s) = {plan['gpus_total']} GPU(s), "
            f"{plan['concurrency_per_replica']} sequences per replica"
        )
        mem = plan["memory"]["per_gpu_bytes"]
        console.print(
            f"Memory per GPU: weights {gib(mem['weights'])} + KV {gib(mem['kv_cache'])} + activations "
            f"{gib(mem['activations'])} + reserve {gib(mem['reserve'])} = {gib(mem['total'])} of "
            f"{gib(plan['memory']['usable_bytes'])} usable (§2)"
        )
    perf = plan.get("performance")
    if perf:
        console.print(
            f"Performance per replica (roofline): TTFT {perf['ttft_ms']:,.0f} ms, TPOT {perf['tpot_ms']:,.1f} ms at "
            f"{perf['max_batch']} sequences (limited by {perf['limited_by']}), {perf['tokens_per_s_per_replica']:,.0f} "
            "output tokens/s (§5, §9 Q3)", highlight=False)
    cost = plan.get("cost")
    if cost:
        for line in cost_lines(plan):
            console.print(line, highlight=False)
    starts = plan.get("cold_start")
    if starts:
        stages = ", ".join(f"{s['name']} {s['seconds']:,.0f} s" for s in starts["stages"])
        console.print(f"Cold start (§7): {starts['total_s']:,.0f} s — {stages}", highlight=False)
    if path:
        console.print(path_table(plan))
    for w in plan["warnings"]:
        console.print(f"[yellow]warning[/] {escape('[' + w['id'] + ']')} {escape(w['message'])} ({escape(w['section'])})",
                      highlight=False)
    for a in plan["alternatives"]:
        console.print(f"[dim]not {a['form']}:[/] {escape(a['why_not'])}", highlight=False)
    if plan.get("ignored_answers"):
        console.print("[yellow]not used:[/] " + escape(", ".join(plan["ignored_answers"]))
                      + " — their questions are not on this path (e.g. the budget amount is asked only for a fixed budget)")
    return console.items


def usd(x: float | None) -> str:
    """Dollars a month as the plan's texts show them: whole dollars, cents below one dollar ("—" when unknown)."""
    if x is None:
        return "—"
    return f"${x:,.2f}" if 0 < abs(x) < 1 else f"${x:,.0f}"


def price_basis(p: dict) -> str:
    """Where a dated price comes from: provider, date, and the aggregator or mirror it was read through."""
    via = f"; read via {p['via']}" if p.get("via") else ""
    return f"{p.get('provider') or 'no provider'}, {p.get('date') or 'undated'}{via}"


def managed_price_line(p: dict) -> str:
    """The managed price with its basis: listed, estimated from named models, or given in the answers."""
    figure = f"${p['usd_per_mtok_input']:g} / ${p['usd_per_mtok_output']:g} per million input / output tokens"
    if p.get("basis") == "given":
        return f"  Managed price {figure}: given (managed_usd_per_mtok)"
    if p.get("basis") == "estimated":
        return (f"  Managed price {figure}, estimated from {', '.join(p['estimated_from'])}: no listed price for this "
                f"model; {p.get('note')} ({p.get('date')}; read via {p.get('via')}) — set managed_usd_per_mtok to "
                "use a quoted price")
    return f"  Managed price {figure} ({price_basis(p)}) — dated snapshot, re-check"


def cost_lines(plan: dict) -> list[str]:
    """§8 as rich markup lines: the monthly total and its parts, the prices behind them, and the comparisons.
    Every figure is the plan's own (cost.*, quantized_option): the alternatives and warnings quote the same."""
    cost = plan["cost"]
    lines = []
    if plan["form"] == "managed_api":
        line = (f"Cost per month (§8): managed API bill {usd(cost.get('managed_usd_month'))} + staff "
                f"{usd(cost['staff_usd_month'])} = {usd(cost['total_usd_month'])}")
        if cost.get("managed_usd_month") is None:
            line += " (no daily volume to price the bill at: give daily_requests)"
    else:
        line = (f"Cost per month (§8): GPU bill {usd(cost['gpu_bill_usd_month'])} (idle share "
                f"{usd(cost['idle_usd_month'])}) + staff {usd(cost['staff_usd_month'])} = {usd(cost['total_usd_month'])}")
    if cost.get("usd_per_mtok") is not None:
        line += f"; ${cost['usd_per_mtok']:,.2f} per million output tokens"
    lines.append(line)
    price = cost.get("gpu_price")
    if price:
        lines.append(escape(f"  GPU price ${price['usd_per_gpu_hour']}/h ({price['kind']}, {price_basis(price)}) — "
                            "dated snapshot, re-check"))
    managed_price = cost.get("managed_price")
    if managed_price and (plan["form"] == "managed_api" or cost.get("managed_usd_month") is not None):
        lines.append(escape(managed_price_line(managed_price)))
    if cost.get("managed_usd_month") is not None and plan["form"] != "managed_api":
        if cost.get("break_even_daily_requests") is not None:
            tail = f"; self-hosting breaks even above {cost['break_even_daily_requests']:,} requests/day"
        elif cost.get("break_even_beyond_capacity"):
            tail = (f"; these replicas carry at most {cost['capacity_daily_requests']:,} requests/day, too few to "
                    "beat that price: more replicas would cost more too")
        else:
            tail = ""
        lines.append(f"  Managed API for the same volume: {usd(cost['managed_usd_month'])}/month + caller-side staff "
                     f"{usd(cost.get('managed_staff_usd_month'))} = {usd(cost.get('managed_total_usd_month'))}" + tail)
    if cost.get("self_host_usd_month") is not None:
        head = (f"  Self-hosting the same load ({escape(str(cost['self_host_layout']))}) would cost "
                f"{usd(cost['self_host_usd_month'])}/month with its staff ({escape(str(cost.get('self_host_exposure')))})")
        if cost.get("saving_usd_month") is not None:
            lines.append(f"{head}: the managed API saves {usd(cost['saving_usd_month'])}/month")
        elif cost.get("managed_extra_usd_month") is not None:
            lines.append(f"{head}: {usd(cost['managed_extra_usd_month'])}/month less than the managed API, the price "
                         "of not running GPUs (§6)")
        elif cost.get("total_usd_month") is not None:
            lines.append(f"{head}: the same as the managed API")
        else:
            lines.append(f"{head}; the managed bill is unknown without a daily volume")
    q = plan.get("quantized_option")
    if q:
        lines.append(f"  Quantized option (§9 Q5): fp8 weights on {q['replicas']} × TP {q['tp']} × {escape(q['gpu'])} would "
                     f"cost {usd(q['total_usd_month'])}/month, saving {usd(q['saving_usd_month'])} — check quality first")
    return lines


# The computed facts a reviewer follows in the path (the rest are in plan.json and the sections above).
PATH_FACTS = ("params_b", "checkpoint_format", "fits_one_gpu", "fits_one_node", "layout_form", "gpu_id", "tp", "pp",
              "replicas", "limited_by", "sixteen_bit_on_quantized")


def path_table(plan: dict) -> Table:
    """Every node visited with its answer (or its key computed facts) and why the walk went on as it did."""
    t = Table(title="Path through the tree", title_justify="left")
    t.add_column("node")
    t.add_column("value", overflow="fold")
    t.add_column("why", overflow="fold")
    for step in plan["path"]:
        value = step["value"]
        if isinstance(value, dict):
            value = ", ".join(f"{k}={v}" for k, v in value.items() if k in PATH_FACTS)
        t.add_row(escape(step["node"]), escape(str(value)), escape(step["why"]))
    return t
