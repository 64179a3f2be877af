"""The losses a fit minimises, and the residuals its uncertainty is computed from."""

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Float
import numpy as np

LOSSES = ("log", "squared", "huber", "relative")
HUBER_DELTA = 0.05  # in log space: residuals beyond ~5% count linearly


def huber(residual: Float[ArrayLike, "..."], delta: float) -> Float[Array, "..."]:
    """Huber's loss (Huber, *Ann. Math. Statist.* 35, 1964): ``r²/2`` for ``|r| ≤ δ``,
    ``δ·(|r| − δ/2)`` beyond, written as `optax.huber_loss` computes it."""
    magnitude = jnp.abs(residual)
    quadratic = jnp.minimum(magnitude, delta)
    return 0.5 * quadratic**2 + delta * (magnitude - quadratic)


def log_squared_error(
    predicted: Float[ArrayLike, " n"], measured: Float[ArrayLike, " n"]
) -> Float[Array, ""]:
    """Mean of ``(log t_pred − log t_measured)²``: a 10% error costs the same at any scale."""
    return jnp.mean(squared_log_errors(predicted, measured))


def squared_log_errors(predicted: Float[ArrayLike, " n"], measured: Float[ArrayLike, " n"]):
    """``(log t_pred − log t_measured)²`` per measurement."""
    return (jnp.log(predicted) - jnp.log(measured)) ** 2


def residuals(
    predicted: Float[ArrayLike, " n"], time_s: Float[ArrayLike, " n"], kind: str, target: str
) -> Float[Array, " n"]:
    """Residuals in the space of the loss `kind`: ``log t̂ − log t`` for the log and Huber
    losses, the error of the measured quantity (time, or throughput = 1/t) for squared,
    the relative error ``t̂/t − 1`` for relative."""
    if kind == "relative":
        return predicted / time_s - 1.0
    if kind == "squared":
        if target == "throughput":
            return 1.0 / predicted - 1.0 / time_s
        return predicted - time_s
    return jnp.log(predicted) - jnp.log(time_s)


def objective(params, static, config, time_s, weights, kind: str, target: str) -> Float[Array, ""]:
    """The fitting loss of stored parameters `params` (combined with `static`).

    A weighted mean over measurements (weights are 1 for a plain fit, resample counts
    for a bootstrap, emphasis on the largest counts, or the counts of rows reduced to
    one per configuration): ``(log t_pred − log t)²`` for ``"log"``, its Huber version
    for ``"huber"``, ``(t_pred/t − 1)²`` for ``"relative"``, and for ``"squared"`` the
    squared error of the measured quantity (time, or throughput = 1/t) scaled by its
    weighted mean, which leaves the minimiser unchanged.
    """
    predicted = eqx.combine(params, static)(config)
    if kind == "squared":
        measured = 1.0 / time_s if target == "throughput" else time_s
        mean = jnp.sum(weights * measured) / jnp.sum(weights)
        per_point = (residuals(predicted, time_s, kind, target) / mean) ** 2
    elif kind == "relative":
        per_point = residuals(predicted, time_s, kind, target) ** 2
    elif kind == "huber":
        per_point = huber(residuals(predicted, time_s, kind, target), HUBER_DELTA)
    else:
        per_point = squared_log_errors(predicted, time_s)
    return jnp.sum(weights * per_point) / jnp.sum(weights)


def loss_value(predicted, time_s, weights, kind: str, target: str, index=None) -> float:
    """`objective`'s value for predictions `predicted` (NumPy, no tracing); with `index`,
    `predicted` is per distinct configuration and measurement i's is ``predicted[index[i]]``
    (transformed before it is gathered: the same numbers, one log of a few values
    instead of one of every measurement)."""
    predicted, time_s = np.asarray(predicted), np.asarray(time_s)

    def rows(values):
        return values if index is None else values[index]

    if kind == "squared":
        measured = 1.0 / time_s if target == "throughput" else time_s
        mean = np.sum(weights * measured) / np.sum(weights)
        quantity = rows(1.0 / predicted if target == "throughput" else predicted)
        per_point = ((quantity - measured) / mean) ** 2
    elif kind == "relative":
        per_point = (rows(predicted) / time_s - 1.0) ** 2
    else:
        r = rows(np.log(predicted)) - np.log(time_s)
        if kind == "huber":
            a = np.abs(r)
            per_point = np.where(
                a <= HUBER_DELTA, 0.5 * r**2, HUBER_DELTA * (a - 0.5 * HUBER_DELTA)
            )
        else:
            per_point = r**2
    return float(np.sum(weights * per_point) / np.sum(weights))
