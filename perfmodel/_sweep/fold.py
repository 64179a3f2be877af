"""Conditions that hold alike for every value a chunk takes of its axes, folded at trace time.

Within a chunk the inner axes (and the block axes) take the same values in every chunk,
each along its own dimension (`stream.chunk_indices`): those values are known when the
evaluation is traced. A model's condition on them alone (``zero >= 3`` where the `zero`
axis is 0 and 1, say) may then be the same for all of them; `folded` traces the
evaluation, works out every boolean that depends on known values only, and puts a
constant in place of those that are constant. XLA then drops the branch never taken
(the ZeRO-3 gathers of the `hybrid` family when no ZeRO-3 is swept) instead of
computing it for every configuration and selecting it away. Only booleans are
replaced, and only those computed from the known values by element-wise operations
(comparisons, logic, arithmetic), evaluated by the same XLA operations: the values are
those of the unfolded evaluation; only XLA's fusion of the smaller graph may round a
score differently in its last bit or two (tests/test_sweep_walk.py).
"""

from collections.abc import Callable, Mapping

import jax
import jax.numpy as jnp
import numpy as np

# Element-wise primitives evaluated on known values (XLA's own arithmetic, eagerly).
_ELEMENTWISE = frozenset(
    {
        "ge", "gt", "le", "lt", "eq", "ne", "and", "or", "not", "xor",
        "add", "sub", "mul", "div", "max", "min", "neg", "abs", "sign",
        "floor", "ceil", "round", "convert_element_type", "select_n",
        "broadcast_in_dim", "reshape", "squeeze", "expand_dims", "copy", "copy_p",
    }
)  # fmt: skip
_CALLS = {"pjit": "jaxpr", "jit": "jaxpr", "closed_call": "call_jaxpr"}
# Known values are followed while they have at most this many entries.
_MOST = 4096


def _is_literal(var) -> bool:
    return type(var).__name__ == "Literal"


def _run(jaxpr, consts, args, known_in) -> tuple[list, list]:
    env, known = {}, {}

    def read(var):
        return var.val if _is_literal(var) else env[var]

    def knew(var):
        return np.asarray(var.val) if _is_literal(var) else known.get(var)

    for var, value in zip(jaxpr.constvars, consts):
        env[var] = value
    for var, value, values in zip(jaxpr.invars, args, known_in):
        env[var] = value
        if values is not None:
            known[var] = values
    for equation in jaxpr.eqns:
        name = equation.primitive.name
        inputs = [read(v) for v in equation.invars]
        knowns = [knew(v) for v in equation.invars]
        if name in _CALLS and _CALLS[name] in equation.params:
            sub = equation.params[_CALLS[name]]
            outs, out_known = _run(sub.jaxpr, sub.consts, inputs, knowns)
        else:
            outs = equation.primitive.bind(*inputs, **equation.params)
            outs = outs if equation.primitive.multiple_results else [outs]
            out_known = [None] * len(outs)
            some = any(
                not _is_literal(v) and k is not None for v, k in zip(equation.invars, knowns)
            )
            if name in _ELEMENTWISE and some and all(k is not None for k in knowns):
                with jax.ensure_compile_time_eval():
                    value = np.asarray(equation.primitive.bind(*knowns, **equation.params))
                if value.size <= _MOST:
                    out_known = [value]
                    if value.dtype == np.bool_ and value.size and (value == value.flat[0]).all():
                        outs = [jnp.full(np.shape(outs[0]), bool(value.flat[0]))]
        for var, value, values in zip(equation.outvars, outs, out_known):
            env[var] = value
            if values is not None:
                known[var] = values
    return [read(v) for v in jaxpr.outvars], [knew(v) for v in jaxpr.outvars]


def folded(function: Callable, values: Mapping, known: Mapping[str, np.ndarray]):
    """``function(values)`` with the booleans that `known` decides made constants.

    `values` maps names to arrays (traced); `known[name]`, where given, is the concrete
    array ``values[name]`` holds (same shape and dtype).
    """
    names = list(values)
    closed = jax.make_jaxpr(lambda *leaves: function(dict(zip(names, leaves))))(
        *(values[n] for n in names)
    )
    given = [None if n not in known else np.asarray(known[n]) for n in names]
    outs, _ = _run(closed.jaxpr, closed.consts, [values[n] for n in names], given)
    return outs[0]
