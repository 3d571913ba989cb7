"""Rich terminal output of the one-shot commands: every figure beside its formula, inputs and source."""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from wizard.artifacts.chart_svg import replicas_at
from wizard.artifacts.cost_chart import CostChart, compact, compact_usd, cost_chart, per_thousand
from wizard.artifacts.memory_bar import MemoryBar, memory_bar, usable_cell
from wizard.artifacts.memory_bar import cells as memory_cells
from wizard.artifacts.plan_sections import Section, gib, plan_sections, usd

from wizard.sizing.fit import SizeResult
from wizard.sizing.kv_cache import kv_heads_per_rank
from wizard.specs import GpuSpec
from wizard.specs.contracts import Plan


SELF_STYLE = "#5b8def"
MANAGED_COLOUR = "#e8833a"


class _Console(Console):
    """rich's Console, leaving a closed pipe (`| head`) to the command line's one handler (cli.main) instead of
    exiting by itself with status 1."""

    def on_broken_pipe(self) -> None:
        raise BrokenPipeError


def new_console() -> Console:
    return _Console()


def print_size(r: SizeResult, console: Console | None = None, perf=None, command=None, tips=()) -> None:
    """The size breakdown: model facts, per-GPU memory rows with formulas, verdict and KV capacity; with `command`
    (serve_command.ServeCommand) the `vllm serve` line it models and the defaults assumed, then the tips."""
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

    t = Table(title="Memory per GPU (guide §2)", title_justify="left", show_lines=False)
    t.add_column("part")
    t.add_column("bytes", justify="right")
    t.add_column("GiB", justify="right")
    t.add_column("formula and inputs")
    w = r.weights
    fmt = w.format.name + (" (checkpoint)" if w.format.from_checkpoint else "")
    weights_how = f"{w.total:,} B at {fmt}" + (" — exact, safetensors" if w.exact else "")
    if w.buffers:
        weights_how += f"; + {w.buffers:,} B RoPE cos/sin cache per GPU (built at load)"
    if w.padding:
        weights_how += f"; + {w.padding:,} B of zeros the Marlin FP4 kernel pads the experts to (vLLM {r.inputs.vllm_version})"
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
                   + (f" — vLLM's per-request budget: the window plus {kv.batched_tokens:,} in-flight prefill tokens"
                      if kv.batched_tokens else ""))
    layout = r.kv_blocks
    if kv.state_bytes_per_sequence:
        kv_how += (f"; linear-attention states ({kv.state_bytes_per_sequence:,} B a sequence) in {layout.state_blocks} "
                   "block(s) of each of their groups" if layout is not None
                   else f"; + {kv.state_bytes_per_sequence:,} B fixed state per sequence")
    if layout is not None:  # counted in vLLM's blocks (the note says how)
        head = f"{i.concurrency} seq × {i.context_tokens:,} tok × {r.kv_bytes_per_token:,} B/token"
        kv_how = (f"{i.concurrency} seq × {layout.blocks_for(i.context_tokens)} blocks × {layout.block_bytes:,} B "
                  f"(vLLM's {layout.block_size:,}-token blocks in {layout.groups} layer groups"
                  + ("; one sequence at the full context, the rest at the typical length" if i.sequence_tokens
                     is not None else "") + "; " + kv_how[len(head):].lstrip(" ("))
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
        + (" + CUDA graph pool (budgeted since vLLM 0.20)" if r.reserve.cuda_graphs else ""),
    )
    t.add_row("[bold]total", f"[bold]{r.total_bytes:,}", f"[bold]{gib(r.total_bytes)}", "")
    t.add_row("usable", f"{r.usable_bytes:,}", gib(r.usable_bytes), f"{gib(g.memory_reported_bytes)} × {i.gpu_memory_utilization}")
    verdict = ("[red]refused at start-up (see the note)[/]" if r.refused_at_startup
               else "[green]fits[/]" if r.fits else "[red]does not fit[/]")
    t.add_row("headroom", f"{r.headroom_bytes:,}", gib(r.headroom_bytes), verdict)
    console.print(t)
    logged = r.logged_kv_tokens
    console.print(
        f"KV capacity: {r.kv_capacity_tokens:,} tokens per GPU "
        + ("(vLLM's 'GPU KV cache size'), " if logged in (None, r.kv_capacity_tokens) else
           f"(vLLM {i.vllm_version} logs 'GPU KV cache size: {logged:,} tokens', its blocks // layer groups × block "
           "size), ")
        + f"max concurrency at {i.context_tokens:,} tokens: {r.max_concurrency:.2f}×"
    )
    if perf is not None:
        console.print(
            f"Performance at {i.concurrency} sequence(s) (roofline, wizard/sizing/performance.py): TTFT "
            f"{perf.ttft_ms:,.0f} ms, TPOT {perf.tpot_ms:,.1f} ms, {perf.output_tokens_per_s:,.0f} output tokens/s "
            f"— per step: the larger of memory {perf.decode_memory_ms:,.1f} ms and compute {perf.compute_ms:,.1f} ms "
            f"(they overlap), + communication {perf.comm_ms:,.1f} ms, {perf.prefill_tokens_per_step:,.0f} prompt "
            "tokens mixed in",
            highlight=False,
        )
    if command is not None:
        from wizard.sizing.engines import profile_for

        engine = profile_for(i.vllm_version)
        console.print(f"Modelled: [bold]{escape(command.line)}[/] — vLLM {escape(i.vllm_version)} ({engine.title}, "
                      f"releases {engine.versions})", highlight=False)
        if command.assumed:
            console.print(f"  defaults assumed: {escape(', '.join(command.assumed))}", highlight=False)
    for tip in tips:
        console.print(f"[cyan]tip:[/] {escape(tip)}", highlight=False)
    for note in r.notes:
        console.print(f"[yellow]note:[/] {escape(note)}", highlight=False)


def print_models(listing: Iterable) -> None:
    """`models`: one line per model — id, size, architecture, maximum context, checkpoint format, whether the
    pinned vLLM serves it — in one section per family, newest first, headed by the family and the month of its first
    release; its models by size, smallest first (wizard/sources/families.py's catalog_listing gives the order). Where
    each figure comes from is `models ID`'s to show."""
    from wizard.sizing.engine import VLLM_VERSION, unserved_reason
    from wizard.sources.catalog import entry_architecture

    console = new_console()
    wide = console.width >= 120  # the architecture column only where it fits beside the ids
    t = Table(title=f"Bundled model catalog (offline): families newest first, sizes smallest first; served: by vLLM "
                    f"{VLLM_VERSION}; `models ID` shows where each figure comes from",
              expand=not wide)  # a narrow table spreads by the columns' ratios: the ids get the most room
    t.add_column("family / id", overflow="fold", ratio=5)
    t.add_column("size", justify="right", overflow="fold", ratio=2)
    if wide:
        t.add_column("architecture", overflow="fold", ratio=3)
    t.add_column("context", justify="right", no_wrap=True)
    t.add_column("weights", no_wrap=True)
    t.add_column("served", no_wrap=True)
    family = None
    unserved_ids = []
    for m in listing:
        e = m.entry
        if e.family != family:
            if family is not None:
                t.add_section()
            family = e.family
            t.add_row(f"[bold]{escape(e.family)}[/bold] · released {escape(m.released or 'unknown')}")
        arch = entry_architecture(e)
        unserved = unserved_reason(arch)
        if unserved:
            unserved_ids.append(e.id)
        t.add_row(escape(e.id), m.size, *([escape(arch or "—")] if wide else []),
                  f"{m.max_context:,}" if m.max_context else "—", escape(m.checkpoint or "—"),
                  "[red]no[/red]" if unserved else "yes")
    console.print(t)
    for model_id in unserved_ids:
        console.print(f"[yellow]note:[/] vLLM {VLLM_VERSION} does not serve {escape(model_id)}: `models "
                      f"{escape(model_id)}` says why", highlight=False)


def print_model_details(d: dict) -> None:
    """`models ID`: one model's provenance (wizard/sources/model_info.model_details), a label and its value a
    line. Every value is data: escaped, never read as markup."""
    from wizard.sources.families import billions

    t = Table(box=None, show_header=False, padding=(0, 1, 0, 0))
    t.add_column(style="bold", no_wrap=True)
    t.add_column(overflow="fold")
    config = escape(f"{d['config_file']} — {d['config_source']}")
    if d["config_of"]:
        config += f" [yellow](the config of {escape(d['config_of'])} stands in)[/]"
    params = f"{d['params']:,} ({billions(d['params'])})"
    if d["moe"]:
        params += f", {d['active_params']:,} ({billions(d['active_params'])}) active per token"
    served = (f"[green]vLLM {escape(d['vllm_version'])} serves it[/]" if d["served"]
              else f"[red]not served[/]: {escape(d['unserved'])}")
    rows = [
        ("family", escape(f"{d['family']} · released {d['released'] or 'unknown'}")),
        ("aliases", escape(", ".join(d["aliases"])) or "—"),
        ("config.json", config),
        ("quant config", escape(d["quant_config_file"] or "")),  # hf_quant_config.json beside it (ModelOpt)
        ("architecture", escape(f"{d['architecture']} (model_type {d['model_type']}, {d['attention']} attention"
                                + (", mixture of experts" if d["moe"] else "") + ")")),
        ("params", params + f" — {escape(d['params_source'])}"),
        ("max context", f"{d['max_context_tokens']:,} tokens (config.json max_position_embeddings)"),
        ("checkpoint", escape(d["checkpoint_format"])),
        ("vLLM", served),
    ]
    for label, value in rows:
        if value:
            t.add_row(label, value)
    console = new_console()
    console.print(f"[bold]{escape(d['id'])}[/] (bundled catalog)", highlight=False)
    console.print(t, highlight=False)
    notes = list(d["notes"])
    if d["note"] and not any(d["note"] in n for n in notes):  # a borrowed config's note already quotes it
        notes.insert(0, d["note"])
    for note in notes:
        console.print(f"[yellow]note:[/] {escape(note)}", highlight=False)


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
        shown = escape(", ".join(f"{k}={v}" for k, v in answers.items() if v is not None))  # left empty: not shown
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


def print_plan(plan: Plan, answers: dict, console: Console | None = None) -> None:
    """`plan` and `ask`: the decision, then every section of the plan (plan_sections) with its figures."""
    console = console or new_console()
    for item in plan_renderables(plan, answers):
        console.print(item, highlight=False)


def plan_renderables(plan: Plan, answers: dict, path: bool = True) -> list[RenderableType]:
    """The plan as rich renderables, one per section: the CLI prints them and the wizard's summary screen shows
    them. Plan texts carry the user's model name and paths: they are Text, never parsed as markup."""
    items: list[RenderableType] = [
        Text.assemble((plan.title, "bold"), " — form ", (plan.form, "bold"), ", exposure ", (plan.exposure, "bold")),
        Text(plan.summary),
    ]
    for section in plan_sections(plan, answers):
        if section.key == "path" and not path:
            continue
        items.append(section_renderable(section))
        picture = pictures_after(section.key, plan)
        if picture is not None:
            items.append(picture)
    return items


def pictures_after(key: str, plan: Plan) -> RenderableType | None:
    """The memory bar under the memory section, the cost chart under the cost section (None: nothing to draw)."""
    if key == "memory":
        bar = memory_bar(plan)
        return None if bar is None else MemoryBarView(bar)
    if key == "cost":
        chart = cost_chart(plan)
        return None if chart is None else CostChartView(chart)
    return None


class MemoryBarView:
    """Memory per GPU as one line of letters (W weights, K KV cache, A activations, R reserve, · headroom), as wide
    as the terminal allows (at most 60 cells); a layout that does not fit shows "│" where the usable memory ends."""

    def __init__(self, bar: MemoryBar) -> None:
        self.bar = bar

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        bar = self.bar
        width = max(10, min(60, options.max_width - 4))
        line = Text("  ")
        limit = usable_cell(bar, width)
        at = 0
        for part, n in memory_cells(bar, width):
            letter, style = ("·", "dim") if part is None else (part.letter, f"bold {part.colour}")
            for _ in range(n):
                if not bar.fits and at == limit:
                    line.append("│", style="bold red")
                line.append(letter, style=style if bar.fits or at < limit else f"{style} on #5c1a1a")
                at += 1
        verdict = ("fits", "green") if bar.fits else (f"does not fit: {gib(-bar.headroom)} over", "red")
        items = [Text.assemble((part.letter, f"bold {part.colour}"), f" {part.label} {gib(part.bytes)}")
                 for part in bar.parts]
        if bar.fits:
            items.append(Text.assemble(("·", "dim"), f" headroom {gib(bar.headroom)}"))
        yield Text.assemble("  ", ("Memory per GPU", "bold"), f" on {bar.gpu}: {gib(bar.total)} of {gib(bar.usable)} "
                            "usable — ", verdict)
        yield line
        yield from packed(items, options.max_width)


def packed(items: list[Text], width: int, indent: int = 2) -> list[Text]:
    """Legend items on as few lines as fit the width, never breaking an item (a narrow terminal: one a line)."""
    lines: list[Text] = []
    line = Text(" " * indent)
    for item in items:
        if line.cell_len > indent and line.cell_len + 2 + item.cell_len > width:
            lines.append(line)
            line = Text(" " * indent)
        if line.cell_len > indent:
            line.append("  ")
        line.append_text(item)
    lines.append(line)
    return lines


class CostChartView:
    """The cost chart in block characters: self-hosted cost as a filled area (█, its top the steps), the managed
    API as a line of "•" over it, ▲ the break-even and △ the plan's own volume under the axis. As wide as the
    terminal allows (at most 64 columns of plot), eight rows high; it reads the same without colour."""

    ROWS = 8
    BLOCKS = " ▁▂▃▄▅▆▇█"

    def __init__(self, chart: CostChart) -> None:
        self.chart = chart

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        c, rows = self.chart, self.ROWS
        labels = {0: compact_usd(c.y_max), rows // 2: compact_usd(c.y_max / 2)}
        margin = max(len(v) for v in [*labels.values(), "$0"]) + 3
        cols = max(16, min(64, options.max_width - margin - 1))
        grid = [[(" ", "")] * cols for _ in range(rows)]
        for j in range(cols):
            x = (j + 0.5) / cols * c.x_max
            level = c.self_hosted(x) / c.y_max * rows * 8
            for r in range(rows):
                fill = max(0, min(8, round(level - (rows - 1 - r) * 8)))
                if fill:
                    grid[r][j] = (self.BLOCKS[fill], SELF_STYLE)
            managed = c.managed(x)
            if managed is not None:
                r = rows - 1 - min(rows - 1, int(managed / c.y_max * rows))
                inside = grid[r][j][0] == "█"
                grid[r][j] = ("•", f"bold {MANAGED_COLOUR}" + (" on #1f3b73" if inside else ""))
        out = [Text.assemble("  ", ("Cost per month against daily requests", "bold"), " (§8)")]
        for r in range(rows):
            line = Text(f"{labels.get(r, ''):>{margin - 2}} " + ("┤" if r in labels else "│"), style="dim")
            for ch, style in grid[r]:
                line.append(ch, style=style)
            out.append(line)
        axis = ["─"] * cols
        marks: list[tuple[int, str]] = []
        if c.daily_requests:
            marks.append((self._col(c.daily_requests, cols), "△"))
        if c.break_even is not None:
            marks.append((self._col(c.break_even, cols), "▲"))
        for col, mark in marks:
            axis[col] = mark
        out.append(Text(f"{'$0':>{margin - 2}} └" + "".join(axis), style="dim"))
        right = f"{compact(c.x_max)} requests/day"
        out.append(Text(" " * margin + "0" + right.rjust(cols - 1), style="dim"))
        yield from out
        legend = Table(box=None, show_header=False, padding=(0, 1, 0, 2), pad_edge=True)
        legend.add_column(no_wrap=True)
        legend.add_column(overflow="fold")
        legend.add_row(Text("█", SELF_STYLE), f"self-hosted, {c.layout}: {usd(c.total_usd_month)}/month with its "
                       f"staff, up to {c.capacity_daily_requests:,.0f} requests/day at full use; "
                       f"+{usd(c.replica_usd_month)} per replica more, each carrying "
                       f"{c.replica_daily_requests:,.0f} requests/day more")
        if c.managed_usd_per_request is not None and c.managed_staff_usd_month is not None:
            legend.add_row(Text("•", f"bold {MANAGED_COLOUR}"), f"managed API with its staff: "
                           f"{usd(c.managed_staff_usd_month)} + {per_thousand(c.managed_usd_per_request)} per 1,000 "
                           "requests" + (f"; {c.managed_note}" if c.managed_note else ""))
        else:
            legend.add_row(Text("-"), f"no managed line: {c.managed_note}")
        if c.break_even is not None:
            legend.add_row(Text("▲", "bold"), f"break-even {c.break_even:,} requests/day" + (
                f", past these replicas (with {replicas_at(c, c.break_even)} at full use)"
                if c.break_even_beyond_capacity else ""))
        elif c.managed_usd_per_request is not None:
            legend.add_row(Text("-"), f"no break-even up to {c.x_max:,.0f} requests/day")
        if c.daily_requests:
            legend.add_row(Text("△"), f"your volume, {c.daily_requests:,} requests/day")
        yield legend

    def _col(self, x: float, cols: int) -> int:
        return max(0, min(cols - 1, int(x / self.chart.x_max * cols)))


def section_renderable(section: Section) -> RenderableType:
    """One section: its title, rule and headline on one line, then its rows (figure, value, basis) and notes."""
    head = Text.assemble((section.title, "bold"), f" ({section.rule})" if section.rule else "")
    if section.listed:
        if not section.rows:
            return Text.assemble(head, ": ", section.headline)
        style = "yellow" if section.key == "warnings" else "dim"
        grid = Table(box=None, show_header=False, padding=(0, 1, 0, 2), pad_edge=True)
        grid.add_column(no_wrap=True)
        grid.add_column(overflow="fold")
        for r in section.rows:
            grid.add_row(Text(f"[{r.label}]", style), Text(r.value + (f" ({r.basis})" if r.basis else "")))
        return Group(Text.assemble(head, ":"), grid)
    parts: list[RenderableType] = [Text.assemble(head, ": ", section.headline)]
    if section.rows:
        table = Table(box=None, show_header=False, padding=(0, 1, 0, 2), pad_edge=True)
        table.add_column(section.columns[0], no_wrap=True)
        table.add_column(section.columns[1], justify="right" if section.figures else "left", overflow="fold")
        table.add_column(section.columns[2], style="dim", overflow="fold")
        for r in section.rows:
            style = "bold" if r.strong else ""
            table.add_row(Text(r.label, style), Text(r.value, style), Text(r.basis))
        parts.append(table)
    for note in section.notes:
        parts.append(Text.assemble(("  note: ", "yellow"), note))
    return Group(*parts)
