"""The `Config` fields a model reads, found by tracing it once (`jax.make_jaxpr`).

An axis (or fixed value) of a field the model never reads gives every configuration
the same time: a sweep over ``tp`` with Amdahl's law lists tp=1 and tp=2 side by side
with equal times. `fields_read` says which fields matter; the space file refuses the
others and `sweep` warns of them. A fit's rows at one GPU count that differ in a field
the model does not read are different workloads it cannot tell apart
(`perfmodel._fitting.canonical.mixed_workloads`).
"""

import equinox as eqx
import jax

from ._config import Config, CONFIG_FIELDS
from ._model import AbstractScalingModel
from ._presets import hybrid_kind
from ._terms import layout_checks

# Primitives that call a nested jaxpr, and the parameter that holds it.
CALLS = {"pjit": "jaxpr", "jit": "jaxpr", "closed_call": "call_jaxpr"}


def is_literal(var) -> bool:
    """Whether a jaxpr input is a constant written into the jaxpr (not a variable)."""
    return type(var).__name__ == "Literal"


# Read by every sweep's own columns: cost per sample (gpus × price per GPU-hour).
_ALWAYS = ("gpus", "price_per_gpu_hour")
# Traced once per model structure (its tree definition: terms, options, static fields).
_TRACED: dict = {}


def _dependencies(jaxpr, inputs: list[frozenset]) -> list[frozenset]:
    """For each output of `jaxpr`, the names of the `inputs` it is computed from.

    Nested calls (`CALLS`) are followed inside; any other primitive's outputs depend on
    all of its inputs, which can only count a field as read too often, never too rarely.
    """
    found = dict(zip(jaxpr.invars, inputs))

    def of(var):
        return frozenset() if is_literal(var) else found.get(var, frozenset())

    for equation in jaxpr.eqns:
        args = [of(v) for v in equation.invars]
        call = CALLS.get(equation.primitive.name)
        if call in equation.params:
            sub = equation.params[call]
            outs = _dependencies(sub.jaxpr, args)
        else:
            outs = [frozenset().union(*args)] * len(equation.outvars)
        found.update(zip(equation.outvars, outs))
    return [of(v) for v in jaxpr.outvars]


def _traced(model: AbstractScalingModel) -> frozenset[str]:
    """The fields the step time and, for the hybrid families, the layout and memory
    checks are computed from (the breakdown's terms are the step time's)."""
    kind = hybrid_kind(model)
    leaves = [x for x in jax.tree_util.tree_leaves(model) if eqx.is_inexact_array(x)]
    dtype = jax.dtypes.canonicalize_dtype(leaves[0].dtype if leaves else float)

    def outputs(*values):
        config = Config(**dict(zip(CONFIG_FIELDS, values)))
        # The parallel-layout checks every model gets do not make a field read: they
        # only drop layouts (tp=2 on one GPU) that the model times as any other.
        return [model(config), *(layout_checks(config, kind) if kind else ())]

    try:
        closed = jax.make_jaxpr(outputs)(*(jax.ShapeDtypeStruct((), dtype) for _ in CONFIG_FIELDS))
    except Exception:  # a model that cannot be traced: the sweep will say why
        return frozenset(CONFIG_FIELDS)
    names = [frozenset([name]) for name in CONFIG_FIELDS]
    return frozenset().union(*_dependencies(closed.jaxpr, names))


def model_fields(model: AbstractScalingModel) -> frozenset[str]:
    """The `Config` fields `model`'s step time (and, for the hybrid families, its layout
    and memory checks) is computed from, traced once per model structure."""
    key = jax.tree_util.tree_structure(model)
    if key not in _TRACED:
        if len(_TRACED) >= 64:
            _TRACED.clear()
        _TRACED[key] = _traced(model)
    return _TRACED[key]


def fields_read(model: AbstractScalingModel, *, per_step: bool = True) -> tuple[str, ...]:
    """The `Config` fields a sweep of `model` reads, in `CONFIG_FIELDS` order.

    Those the step time is computed from (traced once per model structure with
    `jax.make_jaxpr`, whatever the parameter values), for the hybrid families those of
    the layout and memory checks (`layout_checks`) too, and those the sweep's own
    columns read: ``gpus`` and ``price_per_gpu_hour`` (cost), and ``global_batch``
    (samples per step) when `per_step`, the model giving seconds per step rather than
    per unit of work.

    Example:
        >>> import perfmodel as pm
        >>> fields_read(pm.amdahl())
        ('gpus', 'global_batch', 'price_per_gpu_hour')
    """
    read = model_fields(model) | set(_ALWAYS) | ({"global_batch"} if per_step else set())
    return tuple(name for name in CONFIG_FIELDS if name in read)


def unread(
    model: AbstractScalingModel, names, *, per_step: bool = True
) -> tuple[list[str], tuple[str, ...]]:
    """The `Config` fields among `names` that a sweep of `model` does not read (other
    names, model parameters included, pass), and the fields it reads."""
    read = fields_read(model, per_step=per_step)
    return [n for n in names if n in CONFIG_FIELDS and n not in read], read


def unread_line(family: str, name: str, read: tuple[str, ...]) -> str:
    """Why field `name` changes nothing in a sweep of a `family` model, and what would
    (`read`, from `unread`)."""
    return (
        f"the {family} model does not read {name}: the time is the same whatever its "
        f"value; a sweep of it reads {', '.join(read)} and the model's parameters"
    )
