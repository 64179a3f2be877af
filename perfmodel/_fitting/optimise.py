"""Generic minimisers over pytrees of stored (unconstrained) parameters.

Both take `objective(params, *args) -> scalar`, a module-level function, so that jit
compiles once per objective and argument structure: `fit`, bootstrap resamples and joint
fits all share them. Parameters are kept inside `[lower, upper]` by projection. Optax is
imported when a minimiser first runs (~0.1 s): exact fits (`linear`) never need it.
"""

import equinox as eqx
import jax
import jax.numpy as jnp


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

    schedule = optax.cosine_decay_schedule(0.1, steps, alpha=0.01)
    optimiser = optax.chain(optax.zero_nans(), optax.clip_by_global_norm(1.0), optax.adam(schedule))

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
