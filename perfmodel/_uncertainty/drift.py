"""Model-form error beyond the measured GPU counts: a drift of log time per doubling of N
outside them, its scale estimated from the fit's own rolling-origin extrapolations."""

import math

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, Float
import numpy as np

from .. import _closed
from .._config import Config
from .._fitting import gauss_newton_inverse
from .problem import log_scale, Problem


def doublings(gpus, lo, hi):
    """Doublings of N outside the measured range [lo, hi]: 0 inside it."""
    return _closed.outside_doublings(jnp, gpus, lo, hi)


class Drifted(eqx.Module):
    """A model whose log time drifts by `drift` per doubling outside ``[lo, hi]`` GPUs.

    ``T(config) = model(config) · exp(drift · d(N))``; `speedup` is relative to 1 GPU,
    like `ScalingModel.speedup`, so the queries of `optimal_gpus` apply unchanged.
    """

    model: eqx.Module | None
    drift: Float[Array, "*samples"] | None
    lo: float = eqx.field(static=True)
    hi: float = eqx.field(static=True)

    def __call__(self, config: Config) -> Float[Array, "..."]:
        factor = jnp.exp(self.drift * doublings(config.gpus, self.lo, self.hi))
        return self.model(config) * factor

    def speedup(self, config: Config) -> Float[Array, "..."]:
        base = eqx.tree_at(lambda c: c.gpus, config, jnp.ones_like(config.gpus))
        return self(base) / self(config)


def rolling_origins(problem: Problem) -> list[tuple[np.ndarray, np.ndarray, float]]:
    """Rolling origins: ``(train, target, doublings)`` for each measured count ``u_j``
    whose smaller counts determine the k free parameters."""
    data = problem.fit.data
    group_gpus = np.asarray(problem.groups.gpus)
    counts = np.unique(group_gpus)
    origins = []
    for j in range(1, len(counts)):
        # Distinct configurations among the measurements up to u_{j−1}.
        if problem.k and np.count_nonzero(group_gpus <= counts[j - 1]) >= problem.k:
            train = data.gpus <= counts[j - 1]
            origins.append((train, data.gpus == counts[j], math.log2(counts[j] / counts[j - 1])))
    return origins


def origin_rows(problem: Problem, origins) -> tuple[np.ndarray, np.ndarray]:
    """The data and 0/1 weights that refit each origin, padded to a power of two rows
    (repeating the first) so that series with different numbers of origins share code."""
    masks = [train for train, _, _ in origins] or [np.ones(problem.n, dtype=bool)]
    masks += masks[:1] * (max(4, 1 << (len(masks) - 1).bit_length()) - len(masks))
    weights = np.array(masks, dtype=np.float64)
    return np.broadcast_to(np.asarray(problem.time_s), weights.shape), weights


def drift_scale(problem: Problem, origins, flat, values, sigma2, prior, weight):
    """Model-form drift per doubling from the fit's own extrapolation errors.

    Each origin j was refitted on the GPU counts up to ``u_{j−1}`` (`flat`, `values`)
    and predicts the rows at ``u_j``. The moment estimate pooled with the prior is
    ``τ² = (ν₀τ₀² + Σ_j max(0, ē_j² − a_j)) / (ν₀ + Σ_j d_j²)``, where ``ē_j²`` is the
    mean squared log error at ``u_j``, ``a_j = s²·(1 + lev_j)`` what noise and parameter
    uncertainty alone explain, and ``d_j = log2(u_j/u_{j−1})``.

    Returns:
        ``(tau, dof)`` with ``dof = ν₀ + number of origins used``.
    """
    excess, info, used = 0.0, 0.0, 0
    for (train, target, span), theta, value in zip(origins, flat, values):
        if not np.isfinite(value):
            continue
        # At the distinct configurations (rows `index` of the measurements), weighted by
        # their counts: the same sums as over every measurement.
        theta = jnp.asarray(theta)
        predicted = np.broadcast_to(
            np.asarray(problem.predicted(theta, problem.groups)), problem.counts.shape
        )
        rows = problem.index[target]
        error = np.log(predicted)[rows] - np.log(problem.time_s[target])
        jac = problem.space_jacobian(theta, problem.groups)
        in_train = np.zeros(problem.counts.size, dtype=bool)
        in_train[problem.index[train]] = True
        inverse, _ = gauss_newton_inverse((jac * np.sqrt(problem.counts)[:, None])[in_train])
        lev = np.einsum("ij,jk,ik->i", jac, inverse, jac)
        # Noise and parameter spread in log space (delta method for linear spaces).
        scale = log_scale(problem, predicted)
        explained = sigma2 * float(np.mean(((1.0 + lev) * scale**2)[rows]))
        excess += max(0.0, float(np.mean(error**2)) - explained)
        info += span**2
        used += 1
    tau2 = (weight * prior**2 + excess) / (weight + info)
    return math.sqrt(tau2), weight + used
