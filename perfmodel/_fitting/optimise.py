"""Generic minimisers over pytrees of stored (unconstrained) parameters.

Both take `objective(params, *args) -> scalar`, a module-level function, so that jit
compiles once per objective and argument structure: `fit`, bootstrap resamples and joint
fits all share them. Parameters are kept inside `[lower, upper]` by projection. Optax is
imported when a minimiser first runs (~0.1 s): exact fits (`linear`) never need it.
"""

import equinox as eqx
import jax
import jax.flatten_util
import jax.numpy as jnp
import numpy as np


def project(params, lower, upper):
    """Clip every leaf of `params` into `[lower, upper]` (pytrees of the same structure)."""
    return jax.tree_util.tree_map(jnp.clip, params, lower, upper)


@eqx.filter_jit
def multistart_adam(objective, starts, lower, upper, steps: int, args: tuple):
    """Adam from every start at once (`vmap` over the leading axis of `starts`).

    Returns:
        The end points (batched like `starts`) and their objective values, with
        non-finite values replaced by +inf.
    """

    import optax

    def loss(p):
        return objective(p, *args)

    optimiser = _adam(steps)

    def run(start):
        def step(carry, _):
            p, state = carry
            updates, state = optimiser.update(jax.grad(loss)(p), state, p)
            return (project(optax.apply_updates(p, updates), lower, upper), state), None

        (p, _), _ = jax.lax.scan(step, (start, optimiser.init(start)), length=steps)
        value = loss(p)
        return p, jnp.where(jnp.isfinite(value), value, jnp.inf)

    # Optax's schedules and line search mix int32 step counts with floats.
    with jax.numpy_dtype_promotion("standard"):
        return jax.vmap(run)(starts)


@eqx.filter_jit
def refine_lbfgs(objective, start, lower, upper, steps: int, args: tuple):
    """L-BFGS with a zoom line search from `start`, until the gradient vanishes.

    Returns:
        ``(params, value, gradient_norm, iterations)``.
    """
    import optax

    def loss(p):
        return objective(p, *args)

    optimiser = optax.lbfgs()

    def grad_norm(state):
        return optax.tree_utils.tree_norm(optax.tree_utils.tree_get(state, "grad"))

    def keep_going(carry):
        _, state, count = carry
        return (count == 0) | ((count < steps) & (grad_norm(state) > 1e-12))

    def step(carry):
        p, state, count = carry
        value, grad = jax.value_and_grad(loss)(p)
        updates, state = optimiser.update(grad, state, p, value=value, grad=grad, value_fn=loss)
        return project(optax.apply_updates(p, updates), lower, upper), state, count + 1

    with jax.numpy_dtype_promotion("standard"):
        state = optimiser.init(start)
        p, _, count = jax.lax.while_loop(keep_going, step, (start, state, 0))
    value, grad = jax.value_and_grad(loss)(p)
    return p, value, optax.tree_utils.tree_norm(grad), count


def minimise(objective, starts, lower, upper, adam_steps: int, lbfgs_steps: int, args: tuple):
    """Multi-start Adam, then L-BFGS from the best end point.

    The refinement is kept only if it does not raise the objective.

    Returns:
        ``(params, value, gradient_norm, steps)``, or None when every start gave a
        non-finite objective.
    """
    ends, values = multistart_adam(objective, starts, lower, upper, adam_steps, args)
    best = int(jnp.argmin(values))
    if not jnp.isfinite(values[best]):
        return None
    start = jax.tree_util.tree_map(lambda x: x[best], ends)
    params, value, gnorm, iterations = refine_lbfgs(
        objective, start, lower, upper, lbfgs_steps, args
    )
    if not float(value) <= float(values[best]):
        params, value = start, values[best]
    return params, float(value), float(gnorm), adam_steps + int(iterations)


@eqx.filter_jit
def _step(objective, params, state, lower, upper, args: tuple, steps: int):
    """The objective and its gradient at each of a batch of points (`vmap` over the
    leading axis), and one step of `multistart_adam`'s optimiser from them: the one
    compiled function of `minimise_stepwise` (its refinement reads the first two)."""
    import optax

    optimiser = _adam(steps)

    def one(p, s):
        value, grad = jax.value_and_grad(lambda q: objective(q, *args))(p)
        updates, s = optimiser.update(grad, s, p)
        return value, grad, project(optax.apply_updates(p, updates), lower, upper), s

    with jax.numpy_dtype_promotion("standard"):
        return jax.vmap(one)(params, state)


def _adam(steps: int):
    """The multi-start phase's optimiser: Adam on a cosine schedule from 0.1, NaN gradients
    zeroed, each start's gradient clipped to norm 1."""
    import optax

    schedule = optax.cosine_decay_schedule(0.1, steps, alpha=0.01)
    return optax.chain(optax.zero_nans(), optax.clip_by_global_norm(1.0), optax.adam(schedule))


def minimise_stepwise(objective, starts, lower, upper, adam_steps: int, lbfgs_steps: int, args):
    """`minimise` for objectives whose graph is large, driven from Python.

    The same multi-start Adam, then L-BFGS-B (SciPy, Byrd et al. 1995, with the bounds
    instead of a projection) from the best end point. Only one Adam step of the batch,
    with the objective and its gradient, is compiled (`_step`), once: inlined into
    Adam's scan and L-BFGS's line search, the graph of the `hybrid` model took 25 s of
    XLA compilation for one fit, against ~6 s here. The refinement evaluates the batch
    with every row at its point.

    Returns:
        As `minimise`.
    """
    import scipy.optimize

    params = starts
    state = jax.vmap(_adam(adam_steps).init)(starts)
    for _ in range(adam_steps):
        _, _, params, state = _step(objective, params, state, lower, upper, args, adam_steps)
    values, *_ = _step(objective, params, state, lower, upper, args, adam_steps)
    values = jnp.where(jnp.isfinite(values), values, jnp.inf)
    best = int(jnp.argmin(values))
    if not jnp.isfinite(values[best]):
        return None
    start = jax.tree_util.tree_map(lambda x: x[best], params)
    flat, unravel = jax.flatten_util.ravel_pytree(start)
    count = int(values.shape[0])

    def batch(x):
        return jax.tree_util.tree_map(
            lambda leaf: jnp.broadcast_to(leaf, (count, *jnp.shape(leaf))), unravel(jnp.asarray(x))
        )

    def value_and_grad(x):
        value, grad, *_ = _step(objective, batch(x), state, lower, upper, args, adam_steps)
        flat_grad, _ = jax.flatten_util.ravel_pytree(jax.tree_util.tree_map(lambda g: g[0], grad))
        return float(value[0]), np.asarray(flat_grad, dtype=np.float64)

    lo, _ = jax.flatten_util.ravel_pytree(lower)
    hi, _ = jax.flatten_util.ravel_pytree(upper)
    if lbfgs_steps == 0:
        return start, float(values[best]), _norm(value_and_grad(flat)[1]), adam_steps
    found = scipy.optimize.minimize(
        value_and_grad,
        np.asarray(flat, dtype=np.float64),
        jac=True,
        method="L-BFGS-B",
        bounds=list(zip(np.asarray(lo), np.asarray(hi))),
        options={"maxiter": lbfgs_steps, "gtol": 1e-12, "ftol": 0.0},
    )
    if not float(found.fun) <= float(values[best]):
        return start, float(values[best]), _norm(value_and_grad(flat)[1]), adam_steps
    _, grad = value_and_grad(found.x)
    return unravel(jnp.asarray(found.x)), float(found.fun), _norm(grad), adam_steps + found.nit


def _norm(grad) -> float:
    return float(np.linalg.norm(grad))
