"""The empirical family Extra-P searches: the performance-model normal form (PMNF).

``T(N) = c0 + c · N^i · log2(N)^j`` seconds per step (or per unit of work), with the
exponents ``(i, j)`` chosen from a fixed set of hypotheses and the coefficients fitted:

* ``i`` in `EXPONENTS` (−1 … 2; negative exponents describe strong scaling, where the
  work per GPU shrinks),
* ``j`` in `LOG_EXPONENTS` (0, 1, 2), and ``(i, j) ≠ (0, 0)``, which is the constant.

Unlike Extra-P, whose least-squares coefficients may be negative, ``c0`` and ``c`` are
positive (stored as logs, like every time in perfmodel): a step is a sum of costs, and a
negative term makes the prediction cross zero once it dominates — the extrapolation
failure this family exists to avoid. Fitting searches every hypothesis at once (one
`vmap`, `perfmodel._select.fit_pmnf`) and keeps the best, as Extra-P does.
"""

from fractions import Fraction
from typing import ClassVar

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Float

from .. import _closed
from .._config import Config
from .base import _positive, AbstractCostTerm, ParamSpec, Role

EXPONENTS: tuple[float, ...] = (
    -1,
    -2 / 3,
    -1 / 2,
    -1 / 3,
    0,
    1 / 3,
    1 / 2,
    2 / 3,
    1,
    4 / 3,
    3 / 2,
    2,
)
LOG_EXPONENTS: tuple[int, ...] = (0, 1, 2)


def _as_float(x) -> Float[Array, ""]:
    return jnp.asarray(x, dtype=jnp.result_type(float))


class PowerLogTerm(AbstractCostTerm):
    """One PMNF term: ``c · N^i · log2(N)^j`` seconds.

    The exponents are options of the family, not fitted parameters. They are stored as
    array leaves (outside `params`) so that every hypothesis shares one compiled fit.

    Fields:
        log_time: log c, seconds (the term's value where ``N^i·log2(N)^j = 1``).
        exponent: i, the power of N.
        log_exponent: j ∈ {0, 1, 2}, the power of log2(N).
        searched: whether fitting searches ``(i, j)`` (each left open) instead of
            keeping the values given.
    """

    log_time: Float[Array, ""]
    exponent: Float[Array, ""]
    log_exponent: Float[Array, ""]
    searched: tuple[bool, bool] = eqx.field(static=True, default=(False, False))
    name: str = eqx.field(static=True, default="scaling")
    role: ClassVar[Role] = "compute"
    params: ClassVar[dict[str, ParamSpec]] = {
        "time": ParamSpec("log_time", "s", "time", "coefficient c of N^i·log2(N)^j")
    }

    def __init__(
        self,
        time: float = 1.0,
        exponent: float = -1.0,
        log_exponent: float = 0.0,
        searched: tuple[bool, bool] = (False, False),
        name: str = "scaling",
    ):
        self.log_time = _positive(time)
        self.exponent = _as_float(exponent)
        self.log_exponent = _as_float(log_exponent)
        self.searched = tuple(bool(x) for x in searched)
        self.name = name

    def __call__(self, config: Config) -> Float[Array, "..."]:
        # Integer powers of log2(N) written out, so values and gradients stay finite at
        # N = 1 where log2(N) = 0 (a float power 0**0 or 0**(j−1) would not).
        return _closed.power_log(
            jnp, jnp.exp(self.log_time), self.exponent, self.log_exponent, config.gpus
        )


def hypotheses(
    exponent: float | None = None, log_exponent: int | None = None
) -> list[tuple[float, int]]:
    """The ``(i, j)`` pairs searched; a given exponent pins that coordinate."""
    powers = EXPONENTS if exponent is None else (exponent,)
    logs = LOG_EXPONENTS if log_exponent is None else (log_exponent,)
    return [(i, j) for i in powers for j in logs if (i, j) != (0, 0)]


def _searched_term(model) -> "PowerLogTerm | None":
    for term in model.terms:
        if isinstance(term, PowerLogTerm) and any(term.searched):
            return term
    return None


def hypotheses_of(model) -> list[tuple[float, int]]:
    """The ``(i, j)`` pairs a model's searched `PowerLogTerm` leaves open (the others
    pinned to the term's values); ``[]`` when nothing is searched."""
    term = _searched_term(model)
    if term is None:
        return []
    search_i, search_j = term.searched
    return hypotheses(
        None if search_i else float(term.exponent),
        None if search_j else int(term.log_exponent),
    )


def is_searched(model) -> bool:
    """True when a `PowerLogTerm` of the model leaves an exponent to the search."""
    return _searched_term(model) is not None


def with_exponents(model, exponent: float, log_exponent: int):
    """`model` evaluating hypothesis ``(i, j)`` in its searched `PowerLogTerm`, its
    structure unchanged, so that every hypothesis of a search shares one compiled fit."""
    index = next(i for i, t in enumerate(model.terms) if isinstance(t, PowerLogTerm))
    term = model.terms[index]
    return eqx.tree_at(
        lambda m: (m.terms[index].exponent, m.terms[index].log_exponent),
        model,
        (
            jnp.asarray(exponent, dtype=term.exponent.dtype),
            jnp.asarray(log_exponent, dtype=term.log_exponent.dtype),
        ),
    )


def formula(exponent: float, log_exponent: int) -> str:
    """``"c0 + c·N^(-1/2)·log2(N)"`` for ``(−0.5, 1)``, with exponents as fractions."""
    parts = []
    if exponent != 0:
        i = Fraction(exponent).limit_denominator(12)
        parts.append(f"N^{i}" if i.denominator == 1 and i > 0 else f"N^({i})")
    if log_exponent:
        parts.append("log2(N)" + ("" if log_exponent == 1 else f"^{log_exponent}"))
    return "c0 + c·" + "·".join(parts)
