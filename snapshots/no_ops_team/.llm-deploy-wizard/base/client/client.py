"""Caller-side starter for Qwen/Qwen3-32B through a managed, OpenAI-compatible API (guide §6: you own retries,
timeouts, budget and degradation; the vendor owns model, cards and scaling). Standard library only.

    LLM_API_KEY=... python client/client.py "your prompt"

Environment: LLM_API_BASE (default "https://api.example.com/v1"), LLM_API_KEY, LLM_MODEL (default "Qwen/Qwen3-32B"),
MONTHLY_BUDGET_USD (default 588.35), FALLBACK_API_BASE / FALLBACK_API_KEY / FALLBACK_MODEL (optional:
a second provider or a smaller model used when the first fails after its retries).
"""

from __future__ import annotations

import datetime
import json
import os
import random
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

API_BASE = os.environ.get("LLM_API_BASE", "https://api.example.com/v1")
MODEL = os.environ.get("LLM_MODEL", "Qwen/Qwen3-32B")
# USD per million input / output tokens: the price the plan's managed bill used (estimated from Qwen/Qwen3-235B-A22B (deepinfra): the nearest listed active size in its family (Qwen3): 21.57 B for its 31.98 B; 2026-11-30, read via litellm's community price map (litellm 1.110.2), an aggregator).
# The budget guard below prices every call's usage at it; replace it with your provider's quoted price.
PRICE_IN, PRICE_OUT = 0.18, 0.54
MONTHLY_BUDGET_USD = float(os.environ.get("MONTHLY_BUDGET_USD", "588.35"))
CONNECT_TIMEOUT_S, READ_TIMEOUT_S = 5, 107
RETRIES, BACKOFF_S = 4, 0.5  # exponential backoff with jitter on 429, 5xx and timeouts
LEDGER = Path(os.environ.get("USAGE_FILE", Path(__file__).with_name("usage.json")))


class BudgetExceeded(RuntimeError):
    """This month's spend reached MONTHLY_BUDGET_USD: degrade (cached answer, smaller model) instead of calling."""


def _month() -> str:
    return datetime.date.today().strftime("%Y-%m")


def spent_this_month() -> float:
    try:
        data = json.loads(LEDGER.read_text())
    except (OSError, ValueError):
        return 0.0
    return float(data.get(_month(), 0.0))


def record(usage: dict) -> None:
    cost = (usage.get("prompt_tokens", 0) * PRICE_IN + usage.get("completion_tokens", 0) * PRICE_OUT) / 1e6
    try:
        data = json.loads(LEDGER.read_text())
    except (OSError, ValueError):
        data = {}
    data[_month()] = float(data.get(_month(), 0.0)) + cost
    LEDGER.write_text(json.dumps(data, indent=2))


def _post(base: str, key: str, payload: dict) -> dict:
    request = urllib.request.Request(
        base.rstrip("/") + "/chat/completions",
        data=json.dumps(payload).encode(),
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {key}"},
    )
    with urllib.request.urlopen(request, timeout=CONNECT_TIMEOUT_S + READ_TIMEOUT_S) as response:
        return json.loads(response.read())


def _with_retries(base: str, key: str, payload: dict) -> dict:
    for attempt in range(RETRIES + 1):
        try:
            return _post(base, key, payload)
        except urllib.error.HTTPError as e:
            if e.code != 429 and e.code < 500 or attempt == RETRIES:
                raise
        except (urllib.error.URLError, TimeoutError):
            if attempt == RETRIES:
                raise
        time.sleep(BACKOFF_S * 2**attempt * (1 + random.random()))
    raise RuntimeError("unreachable")


def complete(prompt: str, max_tokens: int = 512) -> str:
    """One chat completion within the budget, with retries, then the fallback if one is configured."""
    if spent_this_month() >= MONTHLY_BUDGET_USD:
        raise BudgetExceeded(f"spent ${spent_this_month():.2f} of ${MONTHLY_BUDGET_USD:.2f} this month")
    payload = {"model": MODEL, "messages": [{"role": "user", "content": prompt}], "max_tokens": max_tokens}
    try:
        answer = _with_retries(API_BASE, os.environ["LLM_API_KEY"], payload)
    except (urllib.error.URLError, TimeoutError):
        fallback = os.environ.get("FALLBACK_API_BASE")
        if not fallback:
            raise
        payload["model"] = os.environ.get("FALLBACK_MODEL", MODEL)
        answer = _with_retries(fallback, os.environ.get("FALLBACK_API_KEY", os.environ["LLM_API_KEY"]), payload)
    record(answer.get("usage", {}))
    return answer["choices"][0]["message"]["content"]


if __name__ == "__main__":
    print(complete(" ".join(sys.argv[1:]) or "Hello"))
