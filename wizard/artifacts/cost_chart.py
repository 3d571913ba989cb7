"""The cost chart of a self-hosted plan (§8): cost per month against daily requests, the managed API beside it, and
where the two meet. Pure: every figure is the plan's own, read from plan.cost; nothing is priced again here.

    self-hosted(x) = the plan's total                                  while x <= what its replicas carry a day
                   = the plan's total + k × one replica's GPU bill     past it, k = ceil((x − capacity) / per replica)
    managed(x)     = managed staff + x × price per request × 30.4      (the plan's managed bill / its daily volume)
    break-even     = the first x where self-hosted(x) <= managed(x)

One replica's GPU bill is the plan's bill / replicas and it carries the plan's capacity / replicas requests a day at
full use; operations staff does not grow with replicas (it is priced by exposure, §6). Within the plan's capacity
the self-hosted cost is flat, so the first crossing there is (total − managed staff) / (price per request × 30.4):
the formula behind the plan's break_even_daily_requests, which the chart marks. The plan states a break-even only
within its own capacity; past it the steps are drawn at full use of every replica added (the cheapest that many
replicas can be), and a crossing there is marked as such.

No chart (None) for a managed-API plan (no replicas of its own), offline work (priced per job and per token, not by
a daily volume, §12), or a plan without a GPU price or capacity. Data that must stay in-house has no managed line
(the managed API is not a road for it, §1, §12), so no break-even either; a managed API ruled out for a predictable
bill or latency control keeps its line, as the comparison the plan states.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from wizard.sizing.cost import DAYS_PER_MONTH
from wizard.specs.contracts import Cost, Plan

MAX_STEPS = 1000  # replicas added at most: far past any volume the plan was sized for


class Step(NamedTuple):
    """`replicas` replicas cost `usd_month` a month and carry up to `end` requests a day at full use (from `start`)."""

    start: float
    end: float
    replicas: int
    usd_month: float


class CostChart(NamedTuple):
    steps: tuple[Step, ...]
    x_max: float
    """the axis' end: a round number of daily requests"""
    x_ticks: tuple[float, ...]
    y_max: float
    y_ticks: tuple[float, ...]
    replicas: int
    layout: str
    """the plan's replicas as "2 × 4 × h100-sxm-80gb" (replicas × GPUs per replica × card)"""
    total_usd_month: float
    staff_usd_month: float
    replica_usd_month: float
    """one replica's GPU bill: what each step adds"""
    capacity_daily_requests: float
    replica_daily_requests: float
    """what one replica carries a day at full use: each step's width"""
    daily_requests: int | None
    """the plan's daily volume (None when it was not given)"""
    managed_staff_usd_month: float | None
    managed_usd_per_request: float | None
    """the managed API's price per request (None: no managed line)"""
    managed_note: str
    """why there is no managed line, or which rule rules the managed API out ("" when nothing does)"""
    break_even: int | None
    """daily requests where self-hosting becomes no dearer than the managed API: the plan's figure; when the plan
    states none, the series' own crossing past the plan's replicas (break_even_beyond_capacity)"""
    break_even_beyond_capacity: bool
    """the crossing needs more replicas than the plan has (the plan states none): drawn at full use"""

    def self_hosted(self, x: float) -> float:
        """Self-hosted cost per month at x requests a day: the step that carries x (the last one past the end)."""
        return next((s.usd_month for s in self.steps if x <= s.end), self.steps[-1].usd_month)

    def managed(self, x: float) -> float | None:
        if self.managed_usd_per_request is None or self.managed_staff_usd_month is None:
            return None
        return self.managed_staff_usd_month + x * self.managed_usd_per_request * DAYS_PER_MONTH


def cost_chart(plan: Plan) -> CostChart | None:
    """The chart's series from the plan's figures, or None when the plan has no such chart (see the module)."""
    c = plan.cost
    if (not isinstance(c, Cost) or plan.exposure == "none" or plan.form == "managed_api" or plan.replicas < 1
            or c.total_usd_month is None or c.gpu_bill_usd_month is None or not c.capacity_daily_requests):
        return None
    daily = _daily_requests(plan)
    price, staff, note = _managed_line(plan, c, daily)
    stated = c.break_even_daily_requests if price is not None else None
    per_replica = c.capacity_daily_requests / plan.replicas
    # the range: past the plan's volume and its break-even, and past the first replica added when it is near
    need = max(2.5 * daily if daily else 0.0, 1.25 * stated if stated else 0.0) or 1.25 * c.capacity_daily_requests
    if c.capacity_daily_requests < 2.5 * need:
        need = max(need, c.capacity_daily_requests + per_replica / 2)
    chart = CostChart(
        steps=(), x_max=0.0, x_ticks=(), y_max=0.0, y_ticks=(), replicas=plan.replicas,
        layout=f"{plan.replicas} × {plan.gpus_per_replica} × {plan.gpu}", total_usd_month=c.total_usd_month,
        staff_usd_month=c.staff_usd_month, replica_usd_month=c.gpu_bill_usd_month / plan.replicas,
        capacity_daily_requests=c.capacity_daily_requests, replica_daily_requests=per_replica, daily_requests=daily,
        managed_staff_usd_month=staff, managed_usd_per_request=price, managed_note=note, break_even=None,
        break_even_beyond_capacity=False)
    chart = _spanning(chart, need)
    crossing = first_crossing(chart)
    if crossing is None:
        return _scaled(chart)
    if stated is not None and abs(crossing - stated) <= rounding_slack(chart, crossing):
        return _scaled(chart._replace(break_even=stated))  # the series meet where the plan says: its own figure
    # a crossing the plan does not state: past its replicas, at full use of every one added
    chart = _spanning(chart, max(need, 1.25 * crossing))
    return _scaled(chart._replace(break_even=math.ceil(crossing),
                                  break_even_beyond_capacity=crossing > c.capacity_daily_requests))


def _spanning(chart: CostChart, need: float) -> CostChart:
    """The chart over a round axis from 0 past `need` daily requests, with the steps that cover it."""
    step = nice_step(need / 5)
    x_max = math.ceil(need / step - 1e-9) * step
    steps = [Step(0.0, chart.capacity_daily_requests, chart.replicas, chart.total_usd_month)]
    while steps[-1].end < x_max and len(steps) <= MAX_STEPS:
        last = steps[-1]
        steps.append(Step(last.end, last.end + chart.replica_daily_requests, last.replicas + 1,
                          last.usd_month + chart.replica_usd_month))
    return chart._replace(steps=tuple(steps), x_max=x_max, x_ticks=ticks(x_max, step))


def _scaled(chart: CostChart) -> CostChart:
    """The dollar axis: from 0 to a round figure above the dearest point drawn."""
    top = max([s.usd_month for s in chart.steps if s.start < chart.x_max] + [chart.managed(chart.x_max) or 0.0]) * 1.08
    step = nice_step(top / 4)
    y_max = math.ceil(top / step - 1e-9) * step
    return chart._replace(y_max=y_max, y_ticks=ticks(y_max, step))


def _daily_requests(plan: Plan) -> int | None:
    value = plan.step("daily_requests")
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else None


def _managed_line(plan: Plan, c: Cost, daily: int | None) -> tuple[float | None, float | None, str]:
    """(price per request, caller-side staff, note): the plan's managed bill over its daily volume; without a volume,
    the price per request the plan's break-even was computed at."""
    if plan.step("data_residency") is True:
        return None, None, "the data must stay in-house, which rules the managed API out (§1, §12)"
    ruled = [why for key, why in (("needs_predictable_cost", "a predictable bill is required"),
                                  ("needs_latency_control", "latency must be under the team's control"))
             if plan.step(key) is True]
    note = ("ruled out: " + " and ".join(ruled) + " (§1)") if ruled else ""
    staff = c.managed_staff_usd_month
    if staff is None or c.managed_price is None:
        return None, None, "no managed price for this model to compare with"
    if daily and c.managed_usd_month is not None:
        return c.managed_usd_month / (daily * DAYS_PER_MONTH), staff, note
    if c.break_even_daily_requests and c.total_usd_month is not None:  # no volume: the price its break-even used
        return (c.total_usd_month - staff) / (c.break_even_daily_requests * DAYS_PER_MONTH), staff, note
    return None, None, "no daily volume to price the managed API at: give daily_requests"


def first_crossing(chart: CostChart, x_max: float | None = None) -> float | None:
    """The first daily volume where the self-hosted step is no dearer than the managed line (None: not up to x_max).
    Exact per step: the line meets a flat step at (step − staff) / (price × 30.4), or the step starts below it."""
    price, staff = chart.managed_usd_per_request, chart.managed_staff_usd_month
    if price is None or staff is None or price <= 0:
        return None
    end = chart.x_max if x_max is None else x_max
    for s in chart.steps:
        meet = max(s.start, (s.usd_month - staff) / (price * DAYS_PER_MONTH))
        if meet <= min(s.end, end):
            return meet
        if s.start >= end:
            break
    return None


def rounding_slack(chart: CostChart, x: float) -> float:
    """How far a crossing computed from the plan's published figures (dollars to the cent) may lie from the plan's
    own, computed before rounding: half a cent on the total and on the managed bill, and the whole request."""
    price = chart.managed_usd_per_request or 0.0
    if price <= 0:
        return 1.0
    monthly_per_request = price * DAYS_PER_MONTH
    bill = (chart.daily_requests or 0) * monthly_per_request
    relative = 0.005 / bill if bill > 0 else 0.0
    return 1.0 + 0.01 / monthly_per_request + x * relative


def nice_step(rough: float) -> float:
    """A round tick step near `rough`: 1, 2, 2.5 or 5 × a power of ten."""
    if rough <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(rough))
    return next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= rough)


def ticks(top: float, step: float) -> tuple[float, ...]:
    n = round(top / step)
    return tuple(i * step for i in range(n + 1))


def compact(n: float) -> str:
    """A count on an axis: 900, 12k, 1.5M (at most three significant figures)."""
    for size, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(n) >= size:
            return f"{n / size:,.3g}{suffix}" if n / size < 1000 else f"{n / size:,.0f}{suffix}"
    return f"{n:,.3g}" if n else "0"


def compact_usd(x: float) -> str:
    return "$" + compact(x)


def per_thousand(price: float) -> str:
    """A managed price per request as dollars per 1,000 requests."""
    value = price * 1000
    return f"${value:,.2f}" if value >= 0.1 else f"${value:.3g}"
