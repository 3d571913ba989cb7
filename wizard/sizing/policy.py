"""The planner's policy constants in one place: thresholds and assumptions the guide states in words, and the
figures chosen to make them numbers. Each says where it comes from; an assumption is named as one (shown with
the figure it produces, and overridable where the answers file has a key for it).
"""

from __future__ import annotations

# §12 "very small model (one card is plenty); even a CPU may do": at most 3 B parameters is "very small"
# (a 16-bit copy of 6 GB fits the smallest catalog card, the 16 GB T4, with room for its KV cache).
TINY_PARAMS = 3e9
# §2 "parameter count: weight files / config — common mistake: guessing from the number in the model's name":
# a name's number more than 10 % off the real count is flagged as a guess.
NAME_TOLERANCE = 0.10
# §7/§10 "if scaling is slower than the traffic ramp, elasticity doesn't exist": how fast traffic rises, by
# pattern. An assumption (a burst in about a minute, a morning's rise in about half an hour).
RAMP_SECONDS = {"bursty": 60.0, "diurnal": 1800.0}
# Typical lengths when not given (an assumption, shown in the plan's answers; give prompt_tokens / output_tokens):
# output min(512, context / 4) tokens, the prompt min(2,048, context / 4). The P99 context is the longest request,
# not the typical one (§2): half the context as the typical prompt sized every sequence near the P99 length.
DEFAULT_OUTPUT_TOKENS = 512
DEFAULT_PROMPT_TOKENS = 2048
# §2 "using the average instead of P99": a peak given within 25 % of the average the daily volume keeps in flight
# (or below it) is taken for an average given as the peak. An assumption: a real peak stands clearly above the
# average (PEAK_TO_AVERAGE below gives the typical ratio, shown beside the warning).
AVERAGE_MARGIN = 1.25
# §8 idle: peak-to-average load when the daily volume is unknown, by pattern. An assumption, shown with the figure.
PEAK_TO_AVERAGE = {"steady": 1.5, "diurnal": 3.0, "bursty": 8.0}
# §6, §8 operations staff by exposure (self-built gateway > Kubernetes > managed), in person-months per month,
# at STAFF_USD_PER_PERSON_MONTH. An assumption, not a sourced price: override with staff_usd_month.
STAFF_PERSON_MONTHS = {"gateway": 0.5, "kubernetes": 0.25, "none": 0.1, "managed_api": 0.05}
STAFF_USD_PER_PERSON_MONTH = 15_000.0
