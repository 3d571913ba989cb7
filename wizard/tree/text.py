"""Jinja2 for the tree's text (help, reasons, warnings): text only, never logic, and strict about names."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from jinja2 import Environment, StrictUndefined, Template, meta


@lru_cache(maxsize=1)
def environment() -> Environment:
    env = Environment(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=False)
    env.filters["gib"] = lambda n: f"{n / 2**30:,.1f} GiB"
    env.filters["num"] = lambda n: f"{n:,}" if isinstance(n, int) else f"{n:,.2f}"
    env.filters["pct"] = lambda x: f"{x * 100:.0f} %"
    return env


@lru_cache(maxsize=512)
def _template(text: str) -> Template:
    return environment().from_string(text)


def render(text: str, env: dict[str, Any]) -> str:
    """Render a text template; names it uses must exist (lint checks that statically)."""
    if "{" not in text:
        return text
    return _template(text).render(**env).strip()


def template_vars(text: str) -> set[str]:
    """Names a template reads (for lint: every one must be set on every path that renders it)."""
    if "{" not in text:
        return set()
    return meta.find_undeclared_variables(environment().parse(text))
