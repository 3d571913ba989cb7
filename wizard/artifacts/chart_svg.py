"""The starter repo's cost-chart.svg: the cost chart (cost_chart) and, under it, the memory bar per GPU (memory_bar).

Self-contained SVG 1.1: no script, no external font or image (the generic sans-serif family), a white background
so it reads in dark viewers too. Deterministic: coordinates to one decimal, figures formatted as the plan's
sections format them, nothing from the clock — a golden snapshot stays byte-stable.
"""

from __future__ import annotations

from xml.sax.saxutils import escape

from wizard.artifacts.cost_chart import CostChart, compact, compact_usd, per_thousand
from wizard.artifacts.memory_bar import FREE_COLOUR, OVER_COLOUR, MemoryBar
from wizard.artifacts.plan_sections import gib, usd

WIDTH = 720
LEFT, RIGHT, TOP, BOTTOM = 76.0, 696.0, 80.0, 306.0  # the plot area
SELF_COLOUR = "#1f6feb"
MANAGED_COLOUR = "#d4630b"
INK, GREY, GRID = "#1f2328", "#57606a", "#eaeef2"
CHAR_PX = 6.4  # a rough advance of the 11-12 px sans-serif, to keep labels apart and inside the picture


def f1(v: float) -> str:
    """A coordinate: one decimal, no "-0.0"."""
    text = f"{v:.1f}"
    return "0.0" if text == "-0.0" else text


def clean(text: str) -> str:
    """User text as XML character data: one line, characters XML 1.0 forbids (controls) as "?", markup escaped."""
    return escape("".join(c if c.isprintable() else "?" for c in str(text)))


def shorten(text: str, most: int) -> str:
    return text if len(text) <= most else text[: most - 1] + "…"


def text_el(x: float, y: float, body: str, *, size: int = 12, anchor: str = "start", fill: str = INK,
            weight: str = "", cls: str = "") -> str:
    attrs = f'x="{f1(x)}" y="{f1(y)}" font-size="{size}" fill="{fill}"'
    if anchor != "start":
        attrs += f' text-anchor="{anchor}"'
    if weight:
        attrs += f' font-weight="{weight}"'
    if cls:
        attrs += f' class="{cls}"'
    return f"<text {attrs}>{clean(body)}</text>"


def starter_svg(model: str, chart: CostChart, bar: MemoryBar | None) -> str:
    """The whole picture: the chart, then the memory bar when the plan sized a GPU."""
    parts, height = chart_panel(model, chart)
    if bar is not None:
        more, height = memory_panel(bar, height)
        parts += more
    title = f"Cost per month against daily requests: {model}"
    desc = caption(chart, bar)
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="{WIDTH}" height="{f1(height)}" '
            f'viewBox="0 0 {WIDTH} {f1(height)}" font-family="sans-serif" role="img">')
    return "\n".join([head, f"<title>{clean(title)}</title>", f"<desc>{clean(desc)}</desc>",
                      f'<rect width="{WIDTH}" height="{f1(height)}" fill="#ffffff"/>', *parts, "</svg>"]) + "\n"


def caption(chart: CostChart, bar: MemoryBar | None) -> str:
    """The picture in words, for readers without it (RATIONALE.md under the image, the SVG's desc)."""
    return chart_caption(chart) + (" Under it, " + memory_caption(bar) if bar is not None else "")


def chart_caption(chart: CostChart) -> str:
    """The chart in one paragraph, for readers without the picture (RATIONALE.md, the SVG's desc)."""
    text = (f"Self-hosted ({chart.layout}): {usd(chart.total_usd_month)}/month with its staff, up to "
            f"{chart.capacity_daily_requests:,.0f} requests/day at full use, then {usd(chart.replica_usd_month)} more "
            f"per replica added, each carrying {chart.replica_daily_requests:,.0f} requests/day more.")
    if chart.managed_usd_per_request is not None and chart.managed_staff_usd_month is not None:
        text += (f" Managed API with its staff: {usd(chart.managed_staff_usd_month)} + "
                 f"{per_thousand(chart.managed_usd_per_request)} per 1,000 requests"
                 + (f"; {chart.managed_note}" if chart.managed_note else "") + ".")
    else:
        text += f" No managed line: {chart.managed_note}."
    if chart.break_even is not None:
        text += f" Break-even, where the two meet: {chart.break_even:,} requests/day" + (
            f", past these replicas' capacity (with {replicas_at(chart, chart.break_even)} replicas at full use)."
            if chart.break_even_beyond_capacity else ".")
    elif chart.managed_usd_per_request is not None:
        text += f" They do not meet up to {chart.x_max:,.0f} requests/day."
    return text


def memory_caption(bar: MemoryBar) -> str:
    return ("memory per GPU: " + " + ".join(f"{p.label} {gib(p.bytes)}" for p in bar.parts)
            + f" = {gib(bar.total)} of {gib(bar.usable)} usable" + (": fits." if bar.fits else ": does not fit."))


def replicas_at(chart: CostChart, x: float) -> int:
    return next((s.replicas for s in chart.steps if x <= s.end), chart.steps[-1].replicas)


def chart_panel(model: str, chart: CostChart) -> tuple[list[str], float]:
    def px(x: float) -> float:
        return LEFT + (RIGHT - LEFT) * min(x, chart.x_max) / chart.x_max

    def py(y: float) -> float:
        return BOTTOM - (BOTTOM - TOP) * min(y, chart.y_max) / chart.y_max

    out = [text_el(20, 26, "Cost per month against daily requests (guide §8)", size=15, weight="bold"),
           text_el(20, 45, f"{shorten(model, 60)} — {chart.layout}: self-hosted replicas as steps"
                   + (", the managed API as a line" if chart.managed_usd_per_request is not None else ""),
                   size=11, fill=GREY)]
    out.append('<g id="grid">')
    for y in chart.y_ticks:
        out.append(f'<line x1="{f1(LEFT)}" y1="{f1(py(y))}" x2="{f1(RIGHT)}" y2="{f1(py(y))}" stroke="{GRID}"/>')
        out.append(text_el(LEFT - 6, py(y) + 4, compact_usd(y), size=11, anchor="end", fill=GREY))
    for x in chart.x_ticks:
        out.append(f'<line x1="{f1(px(x))}" y1="{f1(BOTTOM)}" x2="{f1(px(x))}" y2="{f1(BOTTOM + 4)}" stroke="{GREY}"/>')
        out.append(text_el(px(x), BOTTOM + 17, compact(x), size=11, anchor="middle", fill=GREY))
    out.append(f'<line x1="{f1(LEFT)}" y1="{f1(BOTTOM)}" x2="{f1(RIGHT)}" y2="{f1(BOTTOM)}" stroke="{GREY}"/>')
    out.append(f'<line x1="{f1(LEFT)}" y1="{f1(TOP)}" x2="{f1(LEFT)}" y2="{f1(BOTTOM)}" stroke="{GREY}"/>')
    out.append(text_el((LEFT + RIGHT) / 2, BOTTOM + 34, "requests a day", size=11, anchor="middle", fill=GREY))
    out.append(text_el(20, TOP - 10, "USD a month", size=11, fill=GREY))
    out.append("</g>")
    if chart.daily_requests:
        x = px(chart.daily_requests)
        out.append(f'<line id="your-volume" x1="{f1(x)}" y1="{f1(TOP)}" x2="{f1(x)}" y2="{f1(BOTTOM)}" '
                   f'stroke="{GREY}" stroke-dasharray="2 3"/>')
        label = f"your volume {chart.daily_requests:,}/day"
        right = x + 4 + len(label) * CHAR_PX > RIGHT
        out.append(text_el(x - 4 if right else x + 4, TOP + 10, label, size=11, anchor="end" if right else "start",
                           fill=GREY))
    # self-hosted: flat while the plan's replicas carry the volume, one replica's bill higher per step
    d = [f"M{f1(px(0))} {f1(py(chart.steps[0].usd_month))}"]
    for i, s in enumerate(chart.steps):
        if i:
            d.append(f"V{f1(py(s.usd_month))}")
        d.append(f"H{f1(px(min(s.end, chart.x_max)))}")
        if s.end >= chart.x_max:
            break
    out.append(f'<path id="self-hosted" d="{" ".join(d)}" fill="none" stroke="{SELF_COLOUR}" stroke-width="2.5"/>')
    for s in chart.steps[1:]:
        if s.start >= chart.x_max:
            break
        marked = chart.break_even is not None and s.start < chart.break_even <= s.end  # its label is there
        if px(min(s.end, chart.x_max)) - px(s.start) >= 70 and not marked:
            out.append(text_el((px(s.start) + px(min(s.end, chart.x_max))) / 2, py(s.usd_month) - 6,
                               f"{s.replicas} replicas", size=10, anchor="middle", fill=SELF_COLOUR))
    managed_end = chart.managed(chart.x_max)
    if managed_end is not None and chart.managed_staff_usd_month is not None:
        out.append(f'<line id="managed" x1="{f1(px(0))}" y1="{f1(py(chart.managed_staff_usd_month))}" '
                   f'x2="{f1(px(chart.x_max))}" y2="{f1(py(managed_end))}" stroke="{MANAGED_COLOUR}" '
                   'stroke-width="2.5" stroke-dasharray="7 4"/>')
    if chart.break_even is not None:
        x, y = px(chart.break_even), py(chart.self_hosted(chart.break_even))
        label = f"break-even {chart.break_even:,} requests/day" + (
            f" ({replicas_at(chart, chart.break_even)} replicas at full use)" if chart.break_even_beyond_capacity else "")
        # left of the point above the flat step is clear (the managed line runs below it there); else right of
        # it, below the step (the managed line runs above it there)
        left = x - 10 - len(label) * CHAR_PX >= LEFT + 4 and y - 12 > TOP + 24
        lx, ly, anchor = (x - 10, y - 12, "end") if left else (x + 10, min(y + 20, BOTTOM - 8), "start")
        if not left and x + 10 + len(label) * CHAR_PX > RIGHT:
            lx, anchor = x - 10, "end"
        out.append('<g id="break-even">')
        out.append(f'<line x1="{f1(x)}" y1="{f1(y)}" x2="{f1(x)}" y2="{f1(BOTTOM)}" stroke="{INK}" '
                   'stroke-dasharray="4 3"/>')
        out.append(f'<circle cx="{f1(x)}" cy="{f1(y)}" r="5" fill="#ffffff" stroke="{INK}" stroke-width="2"/>')
        out.append(text_el(lx, ly, label, size=12, anchor=anchor, weight="bold"))
        out.append("</g>")
    y = BOTTOM + 58
    out.append('<g id="legend">')
    out.append(f'<line x1="20" y1="{f1(y - 4)}" x2="44" y2="{f1(y - 4)}" stroke="{SELF_COLOUR}" stroke-width="2.5"/>')
    out.append(text_el(52, y, f"self-hosted, {chart.layout}: {usd(chart.total_usd_month)}/month with its staff, "
                       f"up to {chart.capacity_daily_requests:,.0f} requests/day at full use", size=11))
    out.append(text_el(52, y + 16, f"each replica more: +{usd(chart.replica_usd_month)}/month for "
                       f"{chart.replica_daily_requests:,.0f} requests/day more", size=11, fill=GREY))
    if chart.managed_usd_per_request is not None and chart.managed_staff_usd_month is not None:
        out.append(f'<line x1="20" y1="{f1(y + 28)}" x2="44" y2="{f1(y + 28)}" stroke="{MANAGED_COLOUR}" '
                   'stroke-width="2.5" stroke-dasharray="7 4"/>')
        out.append(text_el(52, y + 32, f"managed API with its staff: {usd(chart.managed_staff_usd_month)} + "
                           f"{per_thousand(chart.managed_usd_per_request)} per 1,000 requests", size=11))
        notes = [chart.managed_note] if chart.managed_note else []
        if chart.break_even is None:
            notes.append(f"no break-even up to {chart.x_max:,.0f} requests/day")
        if notes:
            out.append(text_el(52, y + 48, "; ".join(notes), size=11, fill=GREY))
    else:
        out.append(text_el(52, y + 32, f"no managed line: {chart.managed_note}", size=11, fill=GREY))
    out.append("</g>")
    return out, y + 64


def memory_panel(bar: MemoryBar, top: float) -> tuple[list[str], float]:
    left, right = 20.0, 700.0
    span = right - left
    verdict = "fits" if bar.fits else f"does not fit: {gib(-bar.headroom)} over"
    out = [f'<g id="memory" transform="translate(0 {f1(top)})">',
           text_el(left, 18, f"Memory per GPU (guide §2), {bar.gpu}: {gib(bar.total)} of {gib(bar.usable)} "
                   f"usable — {verdict}", size=13, weight="bold")]
    y0, h = 30.0, 26.0
    x = left
    for p in bar.parts:
        w = span * p.bytes / bar.scale
        out.append(f'<rect class="part" id="memory-{p.key.replace("_", "-")}" x="{f1(x)}" y="{f1(y0)}" '
                   f'width="{f1(w)}" height="{f1(h)}" fill="{p.colour}"/>')
        if w >= len(p.label) * CHAR_PX + 10:
            out.append(text_el(x + w / 2, y0 + 17, p.label, size=11, anchor="middle", fill="#ffffff"))
        x += w
    if bar.fits:
        out.append(f'<rect id="memory-headroom" x="{f1(x)}" y="{f1(y0)}" width="{f1(right - x)}" height="{f1(h)}" '
                   f'fill="{FREE_COLOUR}"/>')
    usable_x = left + span * bar.usable / bar.scale
    colour = INK if bar.fits else OVER_COLOUR
    out.append(f'<line id="usable" x1="{f1(usable_x)}" y1="{f1(y0 - 4)}" x2="{f1(usable_x)}" y2="{f1(y0 + h + 4)}" '
               f'stroke="{colour}" stroke-width="2"/>')
    out.append(text_el(usable_x, y0 + h + 16, f"usable {gib(bar.usable)}", size=11, anchor="end", fill=colour))
    if bar.heaviest_stage:
        out.append(text_el(left, y0 + h + 16, "a GPU of the heaviest pipeline stage", size=11, fill=GREY))
    items = [(p.colour, f"{p.label} {gib(p.bytes)}") for p in bar.parts]
    items.append((FREE_COLOUR, f"headroom {gib(bar.headroom)}") if bar.fits else
                 (OVER_COLOUR, f"over by {gib(-bar.headroom)}"))
    x, y = left, y0 + h + 36
    for colour_, label in items:
        width = 16 + len(label) * CHAR_PX + 18
        if x + width > right:
            x, y = left, y + 18
        out.append(f'<rect x="{f1(x)}" y="{f1(y - 9)}" width="10" height="10" fill="{colour_}"/>')
        out.append(text_el(x + 15, y, label, size=11))
        x += width
    out.append("</g>")
    return out, top + y + 14
