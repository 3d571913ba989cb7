"""Monthly cost in three parts (DOMAIN §8): the GPU bill, the idle share inside it, and operations staff.

    bill   = price per GPU-hour × GPUs × 730 h           (always-on cards)
    idle   = bill × (1 − average utilization)            (part of the bill, shown apart, never added twice)
    total  = bill + staff
    per 1M output tokens = total / (daily requests × output tokens × 30.4 / 1e6)
Average utilization = average sequences in flight / sequences the replicas can carry. The average comes from
the daily volume (Little's law) when it is known, else from the peak divided by the traffic pattern's
peak-to-average ratio. A managed API for the same volume costs daily × 30.4 × (P × input + O × output) / 1e6
plus its own caller-side staff (retries, timeouts, budget: STAFF_PERSON_MONTHS["managed_api"]), and breaks even
with self-hosting at the daily volume where the two totals meet:
    break-even daily requests = (self-hosted total − managed staff) / (30.4 × managed price per request)
Offline work (§12: "availability, cold start and cost structure don't matter") has no idle share: its GPUs run flat
out while the job runs and are then released. It is priced per million output tokens at full use and, when the
job is described, as the job:
    per 1M output tokens = price × GPUs per copy / (output tokens/s per copy × 3,600 / 1e6)
    job hours = job requests × output tokens / (output tokens/s per copy × copies) / 3,600
    job cost  = price × GPUs × job hours
"""

from typing import NamedTuple

from wizard.sizing.policy import PEAK_TO_AVERAGE, STAFF_PERSON_MONTHS, STAFF_USD_PER_PERSON_MONTH
from wizard.specs import GpuPrice, ManagedPrice

HOURS_PER_MONTH = 730  # DOMAIN §8
DAYS_PER_MONTH = 30.4  # 365 / 12
SECONDS_PER_DAY = 86_400


class Cost(NamedTuple):
    """USD per month, and the inputs behind each figure (None where an input is missing)."""

    gpu_bill_usd_month: float | None
    idle_usd_month: float | None
    staff_usd_month: float
    total_usd_month: float | None
    usd_per_mtok: float | None
    managed_usd_month: float | None
    average_utilization: float | None
    utilization_basis: str  # "daily volume" or "traffic pattern (peak/average N)"
    gpu_price: GpuPrice | None
    managed_price: ManagedPrice | None
    break_even_daily_requests: float | None  # above this volume self-hosting is cheaper than the managed API
    monthly_output_mtok: float | None
    capacity_daily_requests: float | None = None  # what these replicas carry a day at full use (Little's law)
    break_even_beyond_capacity: bool | None = False  # the break-even volume needs more replicas than this plan has
    # (None: no comparison — offline work has no daily volume to compare)
    exposure: str = ""  # whose staff cost is in the total (§6)
    managed_staff_usd_month: float | None = None  # the managed API's own caller-side staff, for the comparison
    managed_total_usd_month: float | None = None  # managed bill + that staff: what the managed road costs in total
    job_requests: int | None = None  # offline: the requests the job processes (None: no job described)
    job_hours: float | None = None  # offline: how long the job runs on these copies
    job_usd: float | None = None  # offline: the GPU bill of the job
    job_output_tokens: int | None = None  # offline: output tokens of one request of the job


def staff_cost(exposure: str, override: float | None = None) -> float:
    """Operations staff per month for an exposure (§6: who gets up at night)."""
    if override is not None:
        return override
    return STAFF_PERSON_MONTHS.get(exposure, 0.25) * STAFF_USD_PER_PERSON_MONTH


def managed_cost(daily_requests: float | None, prompt_tokens: int, output_tokens: int,
                 price: ManagedPrice | None) -> float | None:
    """The managed API's bill for the same volume."""
    if price is None or daily_requests is None:
        return None
    per_request = (prompt_tokens * price.usd_per_mtok_input + output_tokens * price.usd_per_mtok_output) / 1e6
    return daily_requests * DAYS_PER_MONTH * per_request


def average_utilization(capacity_sequences: float, peak_sequences: float, daily_requests: float | None,
                        seconds_per_request: float, pattern: str) -> tuple[float, str]:
    """Average sequences in flight over what the replicas can carry."""
    if capacity_sequences <= 0:
        return 0.0, "no capacity"
    if daily_requests is not None:
        average = daily_requests / SECONDS_PER_DAY * seconds_per_request
        return min(1.0, average / capacity_sequences), "daily volume (Little's law)"
    ratio = PEAK_TO_AVERAGE.get(pattern, 3.0)
    return min(1.0, peak_sequences / ratio / capacity_sequences), f"traffic pattern ({pattern}: peak/average {ratio:g})"


def offline_cost(*, gpus: int, copies: int, price: GpuPrice | None, exposure: str, tokens_per_s_per_copy: float,
                 output_tokens: int, job_requests: int | None, staff_override: float | None = None,
                 managed: ManagedPrice | None = None) -> Cost:
    """§12 offline work: no idle share, cost per million output tokens at full use, and the job's hours and bill."""
    staff = staff_cost(exposure, staff_override)
    bill = price.usd_per_gpu_hour * gpus * HOURS_PER_MONTH if price is not None else None
    per_copy_hour = price.usd_per_gpu_hour * (gpus / copies) if price is not None and copies else None
    per_mtok = (per_copy_hour / (tokens_per_s_per_copy * 3600 / 1e6)
                if per_copy_hour is not None and tokens_per_s_per_copy > 0 else None)
    hours = usd = None
    if job_requests and tokens_per_s_per_copy > 0 and copies:
        hours = job_requests * output_tokens / (tokens_per_s_per_copy * copies) / 3600
        usd = price.usd_per_gpu_hour * gpus * hours if price is not None else None
    return Cost(
        gpu_bill_usd_month=bill, idle_usd_month=0.0 if bill is not None else None, staff_usd_month=staff,
        total_usd_month=bill + staff if bill is not None else None, usd_per_mtok=per_mtok, managed_usd_month=None,
        average_utilization=1.0, utilization_basis="offline: the GPUs run flat out while the job runs",
        gpu_price=price, managed_price=managed, break_even_daily_requests=None, monthly_output_mtok=None,
        exposure=exposure, job_requests=job_requests, job_hours=hours, job_usd=usd, break_even_beyond_capacity=None,
        job_output_tokens=output_tokens if job_requests else None,
    )


def monthly_cost(*, gpus: int, price: GpuPrice | None, exposure: str, capacity_sequences: float,
                 peak_sequences: float, daily_requests: float | None, seconds_per_request: float, pattern: str,
                 prompt_tokens: int, output_tokens: int, managed: ManagedPrice | None,
                 staff_override: float | None = None) -> Cost:
    """The three parts of §8 for a self-hosted plan, and the managed comparison for the same volume."""
    staff = staff_cost(exposure, staff_override)
    util, basis = average_utilization(capacity_sequences, peak_sequences, daily_requests, seconds_per_request, pattern)
    bill = price.usd_per_gpu_hour * gpus * HOURS_PER_MONTH if price is not None else None
    idle = bill * (1 - util) if bill is not None else None
    total = bill + staff if bill is not None else None
    mtok = daily_requests * output_tokens * DAYS_PER_MONTH / 1e6 if daily_requests else None
    managed_month = managed_cost(daily_requests, prompt_tokens, output_tokens, managed)
    managed_staff = staff_cost("managed_api", staff_override) if managed is not None else None
    managed_total = managed_month + managed_staff if managed_month is not None and managed_staff is not None else None
    break_even = None
    beyond = False
    # The most these replicas can serve: capacity sequences, each busy seconds_per_request per request.
    capacity_daily = capacity_sequences / seconds_per_request * SECONDS_PER_DAY if seconds_per_request > 0 else None
    if total is not None and managed is not None and managed_staff is not None:
        per_request = (prompt_tokens * managed.usd_per_mtok_input + output_tokens * managed.usd_per_mtok_output) / 1e6
        if per_request > 0:
            # the managed road pays its own staff too: only what self-hosting costs beyond that is bought in tokens
            break_even = max(0.0, total - managed_staff) / (per_request * DAYS_PER_MONTH)
            if capacity_daily is not None and break_even > capacity_daily:  # this layout never gets there
                break_even, beyond = None, True
    return Cost(
        gpu_bill_usd_month=bill,
        idle_usd_month=idle,
        staff_usd_month=staff,
        total_usd_month=total,
        usd_per_mtok=total / mtok if total is not None and mtok else None,
        managed_usd_month=managed_month,
        average_utilization=util,
        utilization_basis=basis,
        gpu_price=price,
        managed_price=managed,
        break_even_daily_requests=break_even,
        capacity_daily_requests=capacity_daily,
        break_even_beyond_capacity=beyond,
        monthly_output_mtok=mtok,
        exposure=exposure,
        managed_staff_usd_month=managed_staff,
        managed_total_usd_month=managed_total,
    )
