"""The side panel: the live numbers of the plan the answers so far lead to (DOMAIN §2, §5, §7, §8).

Memory per GPU as a stacked bar (weights / KV / activations / reserve against usable memory), the fit verdict,
the layout, replicas, cost per month and cold start. Recomputed from wizard.session.preview on every change.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import Static

GIB = 2**30
PARTS = (("weights", "W", "#5b8def"), ("kv_cache", "K", "#3fb950"), ("activations", "A", "#d29922"),
         ("reserve", "R", "#a371f7"))


def stacked_bar(memory: dict[str, int], usable: int, width: int = 24) -> Text:
    """One bar, one letter per part so it reads without colour: W weights, K KV, A activations, R reserve."""
    total = sum(memory.values())
    scale = max(usable, total) or 1
    bar = Text()
    used = 0
    for key, letter, colour in PARTS:
        cells = round(memory[key] / scale * width)
        cells = min(cells, width - used)
        bar.append(letter * cells, style=f"bold {colour}")
        used += cells
    if usable > total:
        bar.append("·" * (width - used), style="dim")
    else:
        bar.append("!" * max(0, width - used), style="bold red")
    return bar


def panel_text(lines: dict[str, Any]) -> Text:
    """The panel's content from wizard.session.preview.panel_lines."""
    t = Text()
    if not lines.get("ready"):
        t.append("Live numbers\n", style="bold")
        t.append("appear once the model is known", style="dim")
        return t
    t.append("Live plan\n", style="bold")
    t.append(f"{lines['form']}\n", style="bold")
    if "memory" in lines:
        mem, usable = lines["memory"], lines["usable_bytes"]
        t.append(f"Memory per GPU (§2) on {lines['gpu']}\n")
        t.append_text(stacked_bar(mem, usable))
        t.append("\n")
        for key, letter, colour in PARTS:
            t.append(f" {letter}", style=f"bold {colour}")
            t.append(f" {key.replace('_', ' ')} {mem[key] / GIB:,.1f} GiB\n")
        t.append(f" of {usable / GIB:,.1f} GiB usable: ")
        t.append("fits\n" if lines["fits"] else "does not fit\n", style="bold green" if lines["fits"] else "bold red")
        t.append(f"Layout {lines['layout']}\n")
    perf = lines.get("performance")
    if perf:
        t.append(f"TPOT {perf['tpot_ms']:,.0f} ms, TTFT {perf['ttft_ms']:,.0f} ms\n")
    if lines.get("cost_usd_month") is not None:
        t.append(f"Cost {lines['cost_text']}/month (§8)\n")
    if lines.get("managed_text"):
        t.append(lines["managed_text"] + "\n", style="dim")
    if lines.get("cold_start_s") is not None:
        t.append(f"Cold start {lines['cold_start_s']:,.0f} s (§7)\n")
    for sentence in lines.get("warning_texts", ()):  # readable sentences with their §; the ids are for JSON
        t.append(f"⚠ {sentence}\n", style="yellow")
    return t


class SidePanel(Static):
    """Always visible beside the question; `show(lines)` replaces its content."""

    DEFAULT_CSS = """
    SidePanel { width: 36; padding: 0 1; border-left: solid $primary; height: 100%; }
    """

    def show(self, lines: dict[str, Any]) -> None:
        self.update(panel_text(lines))
