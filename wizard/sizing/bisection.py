"""The largest whole number a monotone test accepts, by bisection (the auto limits' search, the replay's strides)."""

from collections.abc import Callable


def largest(lo: int, hi: int, fits: Callable[[int], bool]) -> int:
    """The largest n in [lo, hi] with fits(n), given fits is monotone (True up to some n); 0 when none."""
    if not fits(lo):
        return 0
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo
