"""`check-log` on a terminal: the log's figures beside the prediction, the verdict, and what to change."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from wizard.report import new_console
from wizard.session.check_log import LogCheck

LABELS = {
    "weights_gib": ("weights", "GiB"), "activation_peak_gib": ("activation peak", "GiB"),
    "consumed_gib": ("weights + non-torch memory", "GiB"), "non_torch_gib": ("non-torch memory", "GiB"), "cuda_graph_gib": ("CUDA graph memory", "GiB"),
    "available_kv_gib": ("available KV cache memory", "GiB"), "kv_tokens": ("GPU KV cache size", "tokens"),
    "max_concurrency": ("maximum concurrency", "×"), "kv_needed_gib": ("KV needed for one max-length request", "GiB"),
    "kv_tokens_at_logged_memory": ("tokens the logged KV memory holds", "tokens"),
    "estimated_max_len": ("estimated maximum model length", "tokens"),
}


def _num(value: float | int) -> str:
    return f"{value:,}" if isinstance(value, int) else f"{value:,.2f}"


def print_check(c: LogCheck, console=None) -> None:
    """The check as a table a reviewer reads number by number."""
    console = console or new_console()
    where = {"log": "from the log", "option": "from the option", "default": "assumed", "logged total": "from the logged total"}
    console.print(f"[bold]{escape(c.path)}[/]: vLLM {escape(c.vllm_version)} ({where[c.version_from]}), model "
                  f"{escape(c.model or '?')} ({where.get(c.model_from or '', 'unknown')}), card {escape(c.gpu or '?')} "
                  f"({where.get(c.gpu_from or '', 'unknown')})", highlight=False)
    flags = ", ".join(f"{k} {v}" for k, v in c.flags.items() if v is not None)
    console.print(f"  engine arguments in the log: {escape(flags) or 'none'}", highlight=False)
    if c.items:
        t = Table(title="Logged against predicted (the sizing core, this release's memory profile)", title_justify="left")
        for col in ("figure", "logged", "predicted", "difference", "likely cause"):
            t.add_column(col, justify="right" if col in ("logged", "predicted", "difference") else "left")
        for i in c.items:
            label, unit = LABELS[i.name]
            t.add_row(f"{label} ({unit})", _num(i.logged), _num(i.predicted), f"{i.difference:+.1%}",
                      escape(i.cause) if abs(i.difference) > 0.03 else "")
        console.print(t)
    colour = "green" if c.matches else "red"
    console.print(f"[{colour}]verdict:[/] {escape(c.verdict)}", highlight=False)
    for note in c.said:
        console.print(f"[yellow]note:[/] {escape(note)}", highlight=False)
    for line in c.advice:
        console.print(f"[cyan]to change:[/] {escape(line)}", highlight=False)
