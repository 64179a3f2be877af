"""The interval methods and the check of an interval's probability, without JAX (the
searches of `perfmodel._questions.query` and the fit files read by `perfmodel._saved`
use them too)."""

from ._errors import InputError

METHODS = ("laplace", "bootstrap", "conformal")
KINDS = ("prediction", "confidence")


def check_level(level: float) -> float:
    """`level` as a float in (0, 1), or an InputError."""
    try:
        level = float(level)
    except (TypeError, ValueError):
        raise InputError(f"interval level must be a number in (0, 1), got {level!r}")
    if not 0.0 < level < 1.0:
        raise InputError(f"interval level must be in (0, 1), e.g. 0.9, got {level:g}")
    return level
