"""What a question is asked at and how its interval reads, without JAX: the interval
methods, the checks of an interval's probability and of GPU counts, and the columns of
an interval on the curve. The JAX path (`perfmodel._fitting`, `perfmodel._uncertainty`,
`perfmodel._questions`) and the fit files NumPy reads (`perfmodel._saved`) share them."""

import numpy as np

from ._errors import InputError

METHODS = ("laplace", "bootstrap", "conformal")
KINDS = ("prediction", "confidence")


# The interval levels answered: 4000 draws leave two in each tail at 0.999, and a level
# of 1e-300 gave an interval of one point that excluded the estimate.
LOWEST_LEVEL, HIGHEST_LEVEL = 0.01, 0.999


def refuse_blend_draws(family: str, method: str | None, what: str) -> None:
    """An InputError for Laplace or bootstrap draws of the default blend, whose members
    are fitted apart (one Gaussian or refit of them all together describes no fit);
    `optimal --method bootstrap` dropped every interval of the answer without a word
    where `predict` refused (fuzz round 11)."""
    if family == "blend" and method in ("laplace", "bootstrap"):
        raise InputError(
            f"{method} {what} are not defined for the default blend, whose "
            "members are fitted one by one; its prediction intervals are conformal (the "
            "default), and a single family's curve has Laplace or bootstrap intervals "
            "(fit with --model NAME, e.g. amdahl)"
        )


def check_level(level: float) -> float:
    """`level` as a float from `LOWEST_LEVEL` to `HIGHEST_LEVEL`, or an InputError."""
    try:
        level = float(level)
    except (TypeError, ValueError):
        raise InputError(f"interval level must be a number in (0, 1), got {level!r}")
    if not LOWEST_LEVEL <= level <= HIGHEST_LEVEL:
        raise InputError(
            f"interval level must be from {LOWEST_LEVEL:g} to {HIGHEST_LEVEL:g}, e.g. 0.9, "
            f"got {level:g}"
        )
    return level


def level_text(level: float) -> str:
    """``"90%"``, ``"99.9%"``: a level in percent with the decimals it needs (0.999 was
    printed as a "100%" interval)."""
    for digits in range(4):
        if abs(round(level * 100, digits) - level * 100) < 1e-9:
            return f"{level:.{digits}%}"
    return f"{level:.3%}"


LARGEST_COUNT = 10_000_000
"""The largest GPU count asked about or measured (`perfmodel._data.MAX_GPUS` is this):
ten times the largest machines built; past it a count is a typo."""


def has_none(values) -> bool:
    """Whether `values` is None or a (nested) list or tuple holding one, which
    ``np.asarray(..., float)`` would read as NaN."""
    if values is None:
        return True
    return isinstance(values, (list, tuple)) and any(has_none(v) for v in values)


def check_gpu_counts(gpus) -> np.ndarray:
    """`gpus` as float64, after refusing anything that is not a finite count from 1 to
    `LARGEST_COUNT` (a time at 0 or −8 GPUs is not a prediction, it is a mistake)."""
    try:
        if has_none(gpus):  # NumPy reads None as NaN: name what was given
            raise TypeError
        counts = np.asarray(gpus, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        text = repr(gpus) if len(repr(gpus)) <= 40 else f"{repr(gpus)[:37]}..."
        raise InputError(
            f"{{arg:gpus}}: expected GPU counts from 1 to {LARGEST_COUNT:,}, got {text}"
        ) from None
    bad = ~(np.isfinite(counts) & (counts >= 1) & (counts <= LARGEST_COUNT))
    if bad.any():
        raise InputError(
            f"{{arg:gpus}}: expected GPU counts from 1 to {LARGEST_COUNT:,}, got "
            f"{float(counts[bad].flat[0]):g}"
        )
    return counts


def check_gpu_list(gpus) -> np.ndarray:
    """`check_gpu_counts` of one count or a flat list of them: the intervals stack draws
    on a last axis, and ``[[8, 16]]`` had returned bounds of shape (4000, 2) beside a
    point of shape (1, 2) (review of 2026-12-06)."""
    counts = check_gpu_counts(gpus)
    if counts.ndim > 1:
        raise InputError(
            f"{{arg:gpus}}: expected a GPU count or a flat list of them, got an array of "
            f"shape {counts.shape}"
        )
    return counts


def interval_columns(target: str, point: dict, lo, hi) -> dict:
    """`predict_interval`'s columns: the point's ``gpus`` and ``time_s`` with
    ``time_s_lo``/``time_s_hi`` (seconds), and for a throughput fit (`target`) also
    ``throughput`` with its ``_lo``/``_hi``, the reciprocals of the time's ends."""
    out = {"gpus": point["gpus"], "time_s": point["time_s"], "time_s_lo": lo, "time_s_hi": hi}
    if target == "throughput":
        with np.errstate(divide="ignore"):
            out["throughput"] = point["throughput"]
            out["throughput_lo"] = 1.0 / hi
            out["throughput_hi"] = 1.0 / lo
    return out
