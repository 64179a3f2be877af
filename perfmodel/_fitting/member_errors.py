"""The uncertainty of a blend member's own fit (`perfmodel._fitting.blend`): the weights
each member is fitted with, its sandwich covariance, and the power laws' exponents with
their standard errors, which the parameter table says (`describe.meanings`)."""

import math

import jax
import numpy as np

from .._blend import Blend, STRADDLING_ANCHORS
from .._data import Benchmarks
from .covariance import gauss_newton_inverse, unconstrained

ALPHA = 2.0  # weights (N/N_max)^ALPHA on the squared relative residuals
FAMILY_ALPHA = {name: 0.0 for name in STRADDLING_ANCHORS}  # the classic fits, unweighted


def _sandwich(jacobian: np.ndarray, residuals: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``σ²·A·(Jᵀ·W²·J)·A`` of `member_covariance`, infinite along what the data leave
    free."""
    k = jacobian.shape[1]
    inverse, null = gauss_newton_inverse(jacobian * np.sqrt(w)[:, None])
    middle = jacobian.T @ (w[:, None] ** 2 * jacobian)
    # E[Σe²] = σ²·tr((I − H)ᵀ(I − H)), H = J·A·JᵀW the fit's (oblique) hat matrix:
    # n − 2·rank + tr(A·JᵀJ·A·JᵀW²J), from k × k products (a per-step log has 10⁶ rows).
    rank = k - null.shape[0]
    spread = w.size - 2 * rank + np.trace(inverse @ (jacobian.T @ jacobian) @ inverse @ middle)
    if not spread > 0.0:  # no residual left to tell the noise by (rounding took it)
        return np.full((k, k), np.inf)
    block = float(np.sum(residuals**2)) / spread * inverse @ middle @ inverse
    # Symmetric, as its product is up to rounding: a fit of 1 to 1000 GPUs was refused
    # by its own saved file, raw_covariance[2][3] ≠ [3][2] by 1.3e-8 (review 2026-12-07).
    block = 0.5 * (block + block.T)
    free = unconstrained(null) | (np.diag(block) < 0.0)  # a variance below 0 is rounding
    block[free, :] = np.inf
    block[:, free] = np.inf
    return block


def power_exponents(model: Blend, data: Benchmarks) -> dict[str, tuple[float, float]]:
    """Each power-law member's exponent e of ``c·N^e`` (seconds per unit of work; e = −1
    is perfect scaling) and its standard error, from the member's own fit as in
    `member_covariance` (NaN with no residual left, as many counts as coefficients)."""
    n, u = data.gpus, data.time_s
    config = data.to_config()
    out = {}
    for member, fitted in zip(model.names, model.members):
        if not member.startswith("power_law"):
            continue
        exponent = float(fitted.terms[0].exponent)
        if n.size <= 2:
            out[member] = (exponent, math.nan)
            continue
        w = (n / n.max()) ** FAMILY_ALPHA.get(member, ALPHA)
        with jax.enable_x64(True):
            predicted = np.asarray(fitted(config), dtype=np.float64)
        jacobian = np.stack([np.ones_like(n), np.log(n)], axis=-1)
        variance = _sandwich(jacobian, np.log(u / predicted), w)[1, 1]
        out[member] = (exponent, math.sqrt(variance) if math.isfinite(variance) else math.nan)
    return out
