"""The losses a fit minimises, and the residuals its uncertainty is computed from."""

import equinox as eqx
import jax.numpy as jnp
from jaxtyping import Array, ArrayLike, Float
import optax

LOSSES = ("log", "squared", "huber")
HUBER_DELTA = 0.05  # in log space: residuals beyond ~5% count linearly


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
    losses, the error of the measured quantity (time, or throughput = 1/t) for squared."""
    if kind == "squared":
        if target == "throughput":
            return 1.0 / predicted - 1.0 / time_s
        return predicted - time_s
    return jnp.log(predicted) - jnp.log(time_s)


def objective(params, static, config, time_s, weights, kind: str, target: str) -> Float[Array, ""]:
    """The fitting loss of stored parameters `params` (combined with `static`).

    A weighted mean over measurements (weights are 1 for a plain fit, resample counts
    for a bootstrap): ``(log t_pred − log t)²`` for ``"log"``, its Huber version for
    ``"huber"``, and for ``"squared"`` the squared error of the measured quantity
    (time, or throughput = 1/t) scaled by its mean, which leaves the minimiser unchanged.
    """
    predicted = eqx.combine(params, static)(config)
    if kind == "squared":
        measured = 1.0 / time_s if target == "throughput" else time_s
        per_point = (residuals(predicted, time_s, kind, target) / jnp.mean(measured)) ** 2
    elif kind == "huber":
        per_point = optax.huber_loss(residuals(predicted, time_s, kind, target), delta=HUBER_DELTA)
    else:
        per_point = squared_log_errors(predicted, time_s)
    return jnp.sum(weights * per_point) / jnp.sum(weights)
