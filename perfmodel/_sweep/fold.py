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
(comparisons, logic, arithmetic), evaluated in NumPy with the same IEEE rounding (JAX
where a rule differs, integer division say): the values are those of the unfolded
evaluation; only XLA's fusion of the smaller graph may round a
score differently in its last bit or two (tests/test_sweep_walk.py).
"""

from collections.abc import Callable, Mapping

import jax
import jax.numpy as jnp
import numpy as np

from .._reads import CALLS, is_literal

# Element-wise primitives evaluated on known values (XLA's own arithmetic, eagerly).
_ELEMENTWISE = frozenset(
    {
        "ge", "gt", "le", "lt", "eq", "ne", "and", "or", "not", "xor",
        "add", "sub", "mul", "div", "max", "min", "neg", "abs", "sign",
        "floor", "ceil", "round", "convert_element_type", "select_n",
        "broadcast_in_dim", "reshape", "squeeze", "expand_dims", "copy", "copy_p",
    }
)  # fmt: skip
# Known values are followed while they have at most this many entries.
_MOST = 4096


def _as(var, value) -> np.ndarray:
    return np.asarray(value, dtype=var.aval.dtype)


def _round(x: np.ndarray, method) -> np.ndarray:
    if int(method) == 1:  # TO_NEAREST_EVEN
        return np.round(x)
    whole = np.trunc(x)  # AWAY_FROM_ZERO: x − trunc(x) is exact
    return whole + np.where(np.abs(x - whole) >= 0.5, np.sign(x), 0.0).astype(x.dtype)


def _broadcast(x: np.ndarray, shape, broadcast_dimensions) -> np.ndarray:
    expanded = [1] * len(shape)
    for axis, size in zip(broadcast_dimensions, np.shape(x)):
        expanded[axis] = size
    return np.broadcast_to(np.reshape(x, expanded), tuple(shape))


# NumPy twins of the element-wise primitives, exact in IEEE arithmetic as XLA's are.
_NUMPY = {
    "ge": np.greater_equal, "gt": np.greater, "le": np.less_equal, "lt": np.less,
    "eq": np.equal, "ne": np.not_equal, "and": np.bitwise_and, "or": np.bitwise_or,
    "xor": np.bitwise_xor, "not": np.invert, "add": np.add, "sub": np.subtract,
    "mul": np.multiply, "max": np.maximum, "min": np.minimum, "neg": np.negative,
    "abs": np.abs, "sign": np.sign, "floor": np.floor, "ceil": np.ceil,
}  # fmt: skip


def _numpy_value(name: str, params: dict, args: list):
    """The primitive on concrete arrays in NumPy, or None where its rule differs."""
    if name in _NUMPY:
        return _NUMPY[name](*args)
    if name == "div":  # lax.div truncates integers toward zero; NumPy floors them
        return np.divide(*args) if np.issubdtype(args[0].dtype, np.floating) else None
    if name == "round":
        return _round(args[0], params.get("rounding_method", 0))
    if name == "convert_element_type":
        x, to = args[0], np.dtype(params["new_dtype"])
        exact = to.kind in "fb" or np.issubdtype(x.dtype, np.integer) or np.isfinite(x).all()
        return x.astype(to) if exact else None
    if name == "select_n":
        return np.choose(args[0].astype(np.int64), args[1:])
    if name == "broadcast_in_dim":
        return _broadcast(args[0], params["shape"], params["broadcast_dimensions"])
    if name == "reshape" and params.get("dimensions") is None:
        return np.reshape(args[0], params["new_sizes"])
    if name == "squeeze":
        return np.squeeze(args[0], axis=tuple(params["dimensions"]))
    if name in ("copy", "copy_p"):
        return args[0]
    return None


def _evaluate_known(equation, knowns) -> np.ndarray:
    """An element-wise equation on known values: in NumPy (no XLA compilation per
    equation: a sweep folds hundreds), or by JAX where NumPy's rule would differ."""
    args = [_as(var, k) for var, k in zip(equation.invars, knowns)]
    with np.errstate(all="ignore"):  # inf − inf is NaN in XLA too, without a warning
        value = _numpy_value(equation.primitive.name, equation.params, args)
    if value is None:
        with jax.ensure_compile_time_eval():
            value = equation.primitive.bind(*knowns, **equation.params)
    return _as(equation.outvars[0], value)


def _run(jaxpr, consts, args, known_in) -> tuple[list, list]:
    env, known = {}, {}

    def read(var):
        return var.val if is_literal(var) else env[var]

    def knew(var):
        return np.asarray(var.val) if is_literal(var) else known.get(var)

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
        if name in CALLS and CALLS[name] in equation.params:
            sub = equation.params[CALLS[name]]
            outs, out_known = _run(sub.jaxpr, sub.consts, inputs, knowns)
        else:
            outs = equation.primitive.bind(*inputs, **equation.params)
            outs = outs if equation.primitive.multiple_results else [outs]
            out_known = [None] * len(outs)
            some = any(not is_literal(v) and k is not None for v, k in zip(equation.invars, knowns))
            if name in _ELEMENTWISE and some and all(k is not None for k in knowns):
                value = _evaluate_known(equation, knowns)
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
