"""What the measurements themselves say, before any model: the speed at each measured
count, a peak inside the measured range, superlinear efficiency. The answers that rest on
a model's extrapolation quote these beside it."""

import numpy as np

from .._text import counted

# benchmarks/accuracy.py checks forecasts up to this many times the largest count fitted
# (``--holdout largest2``: two doublings ahead on tables measured at powers of two); an
# answer farther out is a guess, and the count to buy stops there (`beyond_checked`).
CHECKED_AHEAD = 4.0


def past_checked(gpus: float, fit) -> str:
    """``"extrapolated 41,743× past the 8 GPUs measured"`` for a count more than
    `CHECKED_AHEAD` × the largest measured, else ``""``: "holds from 333944 GPUs" of a
    table measured at 1-8 GPUs read as a finding (review of 2026-12-06)."""
    return past_largest(gpus, float(np.max(fit.data.gpus)))


def past_largest(gpus: float, largest: float) -> str:
    """`past_checked` of a count against the `largest` GPU count measured."""
    if gpus <= CHECKED_AHEAD * largest:
        return ""
    return f"extrapolated {gpus / largest:,.0f}× past the {counted(largest, 'GPU', 'g')} measured"


def measured_speeds(fit) -> tuple[np.ndarray, np.ndarray]:
    """``(counts, speed)``: each measured GPU count and the median of 1/time_s there (the
    speed the speedup is a ratio of)."""
    counts = np.unique(fit.data.gpus)
    speed = np.array([np.median(1.0 / fit.data.time_s[fit.data.gpus == n]) for n in counts])
    return counts, speed


SUPERLINEAR = 0.05  # measured efficiency this far above 1 is superlinear (not noise)


def measured_superlinear(fit) -> tuple[int, float] | None:
    """``(N, efficiency)`` at the largest count whose measured efficiency against the
    fewest GPUs measured exceeds 1 + `SUPERLINEAR` (medians per count of 1/time_s, the
    speed the speedup is a ratio of), else None."""
    counts, speed = measured_speeds(fit)
    if counts.size < 2:
        return None
    efficiency = (speed / counts) / (speed[0] / counts[0])
    above = np.flatnonzero(efficiency > 1.0 + SUPERLINEAR)
    if above.size == 0:
        return None
    return int(counts[above[-1]]), float(efficiency[above[-1]])


PEAK_DROP = 0.02  # measurements this much slower past their fastest count fall (not noise)


def measured_peak(fit) -> tuple[int, float] | None:
    """``(N, drop)`` when the measurements are fastest at a count N below the largest
    measured one and the largest is slower by `drop` (a share, at least `PEAK_DROP`;
    medians per count of 1/time_s, the speed the speedup is a ratio of), else None."""
    counts, speed = measured_speeds(fit)
    if counts.size < 3:
        return None
    best = int(np.argmax(speed))
    drop = 1.0 - speed[-1] / speed[best]
    if best == counts.size - 1 or drop < PEAK_DROP:
        return None
    return int(counts[best]), float(drop)


def peak_note(fit, fastest_gpus: int) -> str:
    """The clause saying that the fastest count rests on the extrapolation alone: the
    measurements peak inside their range and slow down past it (a load test past its
    saturation point, fitted by families that keep speeding up), or ""."""
    largest = int(np.max(fit.data.gpus))
    peak = measured_peak(fit)
    if fastest_gpus <= largest or peak is None:
        return ""
    gpus, drop = peak
    return (
        f"; the measurements are fastest at {counted(gpus, 'GPU')} and {drop:.0%} slower at "
        f"{largest}: the rise past {largest} GPUs is extrapolated, not measured"
    )
