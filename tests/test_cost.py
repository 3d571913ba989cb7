"""Monthly cost in three parts (wizard.sizing.cost, DOMAIN §8) against hand arithmetic from explicit inputs.

    bill   = price per GPU-hour × GPUs × 730 h
    idle   = bill × (1 − average utilization)        part of the bill, never added to it again
    total  = bill + staff
    per 1M output tokens = total / (daily requests × output tokens × 30.4 / 1e6)
    managed = daily requests × 30.4 × (P × $/Mtok in + O × $/Mtok out) / 1e6, plus its own caller-side staff
    break-even daily requests = (total − managed staff) / (30.4 × per-request managed price)
Average utilization = sequences in flight on average / sequences the replicas carry; the average is Little's law
on the daily volume (daily / 86,400 s × seconds per request) when known, else peak / the pattern's
peak-to-average ratio.
"""

from __future__ import annotations

import pytest

from wizard.sizing import cost as cost_module
from wizard.sizing.cost import average_utilization, managed_cost, monthly_cost, staff_cost
from wizard.specs import GpuPrice, ManagedPrice

PRICE = GpuPrice("h100-sxm-80gb", 2.0, "given", "test", "2025-01-01", "explicit")
MANAGED = ManagedPrice("meta-llama/Llama-3.1-8B", 1.0, 3.0, "test", "2025-01-01", "explicit")


def approx(x):
    return pytest.approx(x, rel=1e-12)


def base(**over):
    kw = dict(gpus=3, price=PRICE, exposure="kubernetes", capacity_sequences=40, peak_sequences=30,
              daily_requests=86_400, seconds_per_request=10.0, pattern="diurnal", prompt_tokens=1000,
              output_tokens=200, managed=MANAGED, staff_override=3750.0)
    kw.update(over)
    return monthly_cost(**kw)


def test_every_figure_written_out():
    c = base()
    assert c.gpu_bill_usd_month == approx(2.0 * 3 * 730) == approx(4380.0)
    # 86,400 requests a day = 1 per second, 10 s each → 10 in flight on average, of 40 carried
    assert c.average_utilization == approx(0.25)
    assert "daily volume" in c.utilization_basis
    assert c.idle_usd_month == approx(4380.0 * 0.75) == approx(3285.0)
    assert c.staff_usd_month == 3750.0
    assert c.total_usd_month == approx(4380.0 + 3750.0) == approx(8130.0)
    # 86,400 × 200 output tokens × 30.4 days = 525,312,000 tokens a month
    assert c.monthly_output_mtok == approx(525.312)
    assert c.usd_per_mtok == approx(8130.0 / 525.312)
    # per request: 1000 × $1 / 1M + 200 × $3 / 1M = $0.0016; × 86,400 × 30.4
    assert c.managed_usd_month == approx(86_400 * 30.4 * 0.0016) == approx(4202.496)
    # the staff override is the team's staff whatever the road: the managed side's caller staff is $3,750 too
    assert c.managed_staff_usd_month == 3750.0
    assert c.managed_total_usd_month == approx(4202.496 + 3750.0)
    # break-even: (8,130 − 3,750) / (0.0016 × 30.4) = 4,380 / 0.04864
    assert c.break_even_daily_requests == approx(4380.0 / (0.0016 * 30.4))
    assert c.break_even_daily_requests == pytest.approx(90_049.34, abs=0.01)
    assert (c.gpu_price, c.managed_price) == (PRICE, MANAGED)
    assert c.exposure == "kubernetes"


def test_idle_is_part_of_the_bill_and_not_added_again():
    c = base()
    assert c.idle_usd_month <= c.gpu_bill_usd_month
    assert c.total_usd_month == approx(c.gpu_bill_usd_month + c.staff_usd_month)
    assert c.total_usd_month < c.gpu_bill_usd_month + c.staff_usd_month + c.idle_usd_month
    # idle changes with utilization, the total does not (same cards, always on)
    busy = base(daily_requests=4 * 86_400)  # 40 in flight of 40: fully used
    assert busy.average_utilization == approx(1.0)
    assert busy.idle_usd_month == 0
    assert busy.total_usd_month == approx(c.total_usd_month)


def test_break_even_volume_is_where_the_managed_total_meets_the_total():
    c = base()
    at = managed_cost(c.break_even_daily_requests, 1000, 200, MANAGED)
    assert at + c.managed_staff_usd_month == approx(c.total_usd_month)
    # a dearer managed API breaks even at a lower volume
    dear = base(managed=MANAGED._replace(usd_per_mtok_output=6.0))  # per request 1000e-6 + 1200e-6 = $0.0022
    assert dear.break_even_daily_requests == approx((8130.0 - 3750.0) / (0.0022 * 30.4))
    assert dear.break_even_daily_requests < c.break_even_daily_requests


def test_the_managed_side_pays_its_own_caller_staff_in_the_break_even():
    """Without an override each side has its exposure's assumption: Kubernetes 0.25 × $15,000 = $3,750 on the
    self-hosted side, managed_api 0.05 × $15,000 = $750 on the managed side. Self-hosted total 4,380 + 3,750 =
    8,130; the managed road costs its bill + $750, so the break-even is (8,130 − 750) / (0.0016 × 30.4) =
    7,380 / 0.04864 = 151,726.97 requests a day; at that volume both totals are 8,130."""
    c = base(staff_override=None)
    assert c.staff_usd_month == approx(3750.0)
    assert c.managed_staff_usd_month == approx(750.0)
    assert c.break_even_daily_requests == pytest.approx(151_726.97, abs=0.01)
    at = managed_cost(c.break_even_daily_requests, 1000, 200, MANAGED)
    assert at + 750.0 == approx(8130.0)
    assert c.managed_total_usd_month == approx(4202.496 + 750.0)
    # a self-hosted total below the managed staff alone is cheaper at any volume: break-even 0, not negative
    free = base(staff_override=None, price=PRICE._replace(usd_per_gpu_hour=0.0), exposure="managed_api")
    assert free.total_usd_month == approx(750.0) and free.break_even_daily_requests == 0.0


@pytest.mark.parametrize("price, gpus, bill", [(2.0, 3, 4380.0), (1.0, 1, 730.0), (3.5, 16, 40_880.0),
                                              (0.45, 2, 657.0)])
def test_bill_is_price_times_gpus_times_730(price, gpus, bill):
    c = base(price=PRICE._replace(usd_per_gpu_hour=price), gpus=gpus)
    assert c.gpu_bill_usd_month == approx(bill)
    assert c.total_usd_month == approx(bill + 3750.0)


# ------------------------------------------------------------------------------------------ utilization
@pytest.mark.parametrize("daily, seconds, capacity, want", [
    (86_400, 10.0, 40, 0.25),
    (8_640, 30.0, 12, 0.25),  # 0.1 request/s × 30 s = 3 in flight of 12
    (1_000, 4.32, 50, 0.001),  # 1000 / 86,400 × 4.32 = 0.05 in flight of 50
    (10_000_000, 10.0, 40, 1.0),  # more than the replicas carry: capped at 1
])
def test_utilization_from_daily_volume_is_littles_law(daily, seconds, capacity, want):
    util, basis = average_utilization(capacity, 999, daily, seconds, "bursty")  # the peak and pattern are unused
    assert util == approx(want)
    assert "daily volume" in basis


@pytest.mark.parametrize("pattern, ratio", [("steady", 1.5), ("diurnal", 3.0), ("bursty", 8.0)])
def test_utilization_from_the_traffic_pattern_is_peak_over_ratio(pattern, ratio):
    assert cost_module.PEAK_TO_AVERAGE[pattern] == ratio
    util, basis = average_utilization(40, 30, None, 10.0, pattern)
    assert util == approx(30 / ratio / 40)
    assert pattern in basis and f"{ratio:g}" in basis
    c = base(daily_requests=None, pattern=pattern)
    assert c.average_utilization == approx(30 / ratio / 40)
    assert c.idle_usd_month == approx(4380.0 * (1 - 30 / ratio / 40))


def test_pattern_utilization_is_capped_and_no_capacity_is_zero():
    assert average_utilization(10, 100, None, 10.0, "steady")[0] == 1.0
    assert average_utilization(0, 30, 86_400, 10.0, "steady") == (0.0, "no capacity")


def test_without_a_daily_volume_there_is_no_unit_cost_nor_managed_bill():
    c = base(daily_requests=None)
    assert c.monthly_output_mtok is None
    assert c.usd_per_mtok is None
    assert c.managed_usd_month is None
    assert c.total_usd_month == approx(8130.0)
    # the break-even volume needs no volume: it is the answer to "from how many requests a day?"
    assert c.break_even_daily_requests == approx((8130.0 - 3750.0) / (0.0016 * 30.4))
    assert c.managed_total_usd_month is None  # no bill without a volume, so no managed total either


def test_without_a_gpu_price_only_staff_is_known():
    c = base(price=None)
    assert (c.gpu_bill_usd_month, c.idle_usd_month, c.total_usd_month, c.usd_per_mtok) == (None, None, None, None)
    assert c.break_even_daily_requests is None
    assert c.staff_usd_month == 3750.0
    assert c.managed_usd_month == approx(4202.496)


def test_without_a_managed_price_there_is_no_comparison():
    c = base(managed=None)
    assert c.managed_usd_month is None and c.break_even_daily_requests is None
    assert c.managed_staff_usd_month is None and c.managed_total_usd_month is None
    assert c.total_usd_month == approx(8130.0)


# ---------------------------------------------------------------------------------------------- staff
def test_staff_by_exposure_follows_who_gets_up_at_night():
    """§6/§8: self-built gateway > Kubernetes > managed; each = person-months × the monthly rate."""
    rate = cost_module.STAFF_USD_PER_PERSON_MONTH
    for exposure, months in cost_module.STAFF_PERSON_MONTHS.items():
        assert staff_cost(exposure) == approx(months * rate)
    assert staff_cost("gateway") > staff_cost("kubernetes") > staff_cost("managed_api")
    assert staff_cost("gateway", 1234.0) == 1234.0
    assert staff_cost("kubernetes", 0.0) == 0.0  # an explicit zero is an override, not "unset"
    c = base(exposure="gateway", staff_override=None)
    assert c.staff_usd_month == approx(cost_module.STAFF_PERSON_MONTHS["gateway"] * rate)
    assert c.total_usd_month == approx(4380.0 + c.staff_usd_month)


# --------------------------------------------------------------------------------- DOMAIN §8 and §12
def test_four_replicas_kept_for_the_peak_mostly_pay_for_idle():
    """§8: 4 GPUs carrying 32 each, 10,000 requests a day of 10 s: 1.157 in flight of 128, under 1 %."""
    c = base(gpus=4, capacity_sequences=128, daily_requests=10_000, staff_override=0.0)
    assert c.average_utilization == approx(10_000 / 86_400 * 10 / 128)
    assert c.average_utilization < 0.01
    assert c.idle_usd_month == approx(2.0 * 4 * 730 * (1 - 10_000 / 86_400 * 10 / 128))
    assert c.idle_usd_month > 0.99 * c.gpu_bill_usd_month


def test_very_low_traffic_is_cheaper_on_the_managed_api():
    """§12: tens of requests a day. 50 × 30.4 × $0.0016 = $2.432 a month against one always-on GPU pair."""
    c = base(daily_requests=50, gpus=2)
    assert c.managed_usd_month == approx(2.432)
    assert c.total_usd_month == approx(2.0 * 2 * 730 + 3750.0)
    assert c.managed_usd_month < c.total_usd_month
    assert 50 < c.break_even_daily_requests
    assert c.usd_per_mtok == approx((2920.0 + 3750.0) / (50 * 200 * 30.4 / 1e6))


def test_break_even_beyond_what_the_replicas_carry_is_not_claimed():
    # 40 sequences × 10 s per request carry at most 40 / 10 × 86,400 = 345,600 requests a day. With a managed API
    # at a tenth of the price the break-even volume ((8,130 − 3,750) / (0.00016 × 30.4) = 900,493/day) is beyond
    # that: no claim, and the capacity is given instead.
    cheap = MANAGED._replace(usd_per_mtok_input=0.1, usd_per_mtok_output=0.3)
    c = base(managed=cheap)
    assert c.capacity_daily_requests == approx(345_600)
    assert c.break_even_daily_requests is None and c.break_even_beyond_capacity
    near = base()
    assert near.break_even_daily_requests == pytest.approx(90_049.34, abs=0.01) and not near.break_even_beyond_capacity
