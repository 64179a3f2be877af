"""NumPy twins of the models a fit evaluates at the data's distinct configurations.

Every fit evaluates its model a few times at the distinct configurations of the data:
the columns of a linear form (`linear.linear_form`) and the sensitivities ``∂T̂/∂θ``
that every fit ends with (`assemble.sensitivities`). Through JAX each is a function
traced and compiled (or read from the compilation cache) anew in every process, about
half a second of a first ``perfmodel fit`` of a small CSV. For the families
`perfmodel._saved` evaluates, PMNF and the default's blend of them, this module
evaluates the same closed forms (`perfmodel._closed`) in NumPy instead, derivatives in
the stored parameters by dual numbers (``d exp(θ)/dθ = exp(θ)``). Any other model (custom
terms, an overlap fraction, a fraction parameter, the layouts of the hybrid family)
has no twin (None) and takes the JAX path. `tests/test_twin.py` checks that both paths
agree, derivatives included.
"""

import dataclasses
import functools
import math

import jax
import numpy as np

from .._blend import Blend
from .._errors import InputError
from .._model import ScalingModel
from .._presets import build
from .._saved import Blend as NumpyBlend
from .._saved import Dual, family, FIT_FAMILIES, REQUIRES

_EXPONENT_FAMILIES = ("power_law", "pmnf")  # their exponents are leaves of the last term


def _values(model: ScalingModel) -> dict[str, float] | None:
    """Physical values from the stored leaves (``exp``), or None for a fraction or a
    leaf that is not one number."""
    values = {}
    for term in model.terms:
        for param, spec in term.params.items():
            raw = np.asarray(getattr(term, spec.field), dtype=np.float64)
            if spec.kind == "fraction" or raw.shape != ():
                return None
            values[f"{term.name}.{param}"] = math.exp(float(raw))
    return values


def _options(model: ScalingModel) -> dict:
    options = dict(model.options)
    if model.family in _EXPONENT_FAMILIES:
        term = model.terms[-1]
        options["exponent"] = float(np.asarray(term.exponent))
        if model.family == "pmnf":
            options["log_exponent"] = int(np.asarray(term.log_exponent))
    return options


def numpy_model(model):
    """The NumPy twin of `model` (a `perfmodel._saved` family or blend), or None."""
    if isinstance(model, Blend):
        members = tuple(numpy_model(m) for m in model.members)
        if any(m is None or isinstance(m, NumpyBlend) for m in members):
            return None
        baseline = tuple(None if b is None else numpy_model(b) for b in model.baseline)
        if any(t is None for t, b in zip(baseline, model.baseline) if b is not None):
            return None
        largest = float(np.asarray(model.largest))
        return NumpyBlend(
            members,
            model.names,
            model.near,
            model.far,
            largest,
            model.regime,
            model.anchor,
            float(model.node),
            model.slowdown,
            baseline,
        )
    if not isinstance(model, ScalingModel) or model.logit_overlap is not None:
        return None
    if model.family not in FIT_FAMILIES:
        return None
    values = _values(model)
    if values is None:
        return None
    try:
        twin = family(model.family, _options(model), values, FIT_FAMILIES)
    except (KeyError, TypeError, ValueError):
        return None
    if twin.roles() != {t.name: t.role for t in model.terms} or not _is_preset(model):
        return None
    return twin


def _is_preset(model: ScalingModel) -> bool:
    """Whether `model` has the structure of its family's preset (the same term classes
    and static fields: a hand-built model that only borrows a family's name has no
    twin)."""
    try:
        reference = _preset_structure(model.family, model.options)
    except (InputError, TypeError, ValueError):
        return False
    return jax.tree_util.tree_structure(model.terms) == reference


@functools.lru_cache(maxsize=64)
def _preset_structure(family_name: str, options: tuple):
    """The tree structure of the preset's terms: classes, names and static fields."""
    return jax.tree_util.tree_structure(build(family_name, **dict(options)).terms)


def _families(twin) -> tuple:
    return twin.members if isinstance(twin, NumpyBlend) else (twin,)


def _inputs(twin, config) -> tuple[np.ndarray, dict]:
    """The GPU counts of `config` and the fields the twin's terms read."""
    n = np.asarray(config.gpus, dtype=np.float64)
    fields = {f for member in _families(twin) for f in REQUIRES.get(member.family, ())}
    read = {f: np.broadcast_to(np.asarray(getattr(config, f), np.float64), n.shape) for f in fields}
    return n, read


def seconds_at(model, config, free, values: np.ndarray) -> np.ndarray | None:
    """Seconds of a single family at every configuration (columns) for each row of
    `values` (physical values of the parameters `free`), or None without a twin."""
    twin = numpy_model(model)
    if twin is None or isinstance(twin, NumpyBlend):
        return None
    n, read = _inputs(twin, config)
    given = dict(twin.values)
    for j, name in enumerate(free):
        given[name] = values[:, j : j + 1]
    seconds = twin.seconds(n[None, :], {k: v[None, :] for k, v in read.items()}, given)
    return np.broadcast_to(np.asarray(seconds, dtype=np.float64), (len(values), n.size))


def _seeded(twin, name: str):
    """The twin with parameter `name` as a dual of derivative 1 in its stored value."""
    if isinstance(twin, NumpyBlend):
        member, _, inner = name.partition(".")
        i = twin.names.index(member)
        members = list(twin.members)
        members[i] = _seeded(members[i], inner)
        return dataclasses.replace(twin, members=tuple(members))
    value = twin.values[name]
    return dataclasses.replace(twin, values={**twin.values, name: Dual(value, value)})


def sensitivities_at(model, config, names) -> tuple[np.ndarray, np.ndarray] | None:
    """``(T̂, ∂T̂/∂θ)`` at `config`, one column per stored parameter of `names` in that
    order, or None without a twin."""
    twin = numpy_model(model)
    if twin is None:
        return None
    n, read = _inputs(twin, config)
    with np.errstate(divide="ignore", invalid="ignore"):
        predicted = np.broadcast_to(np.asarray(twin.seconds(n, read), np.float64), n.shape)
        columns = [_tangent(_seeded(twin, name).seconds(n, read), n.shape) for name in names]
    jac = np.stack(columns, axis=1) if columns else np.zeros((n.size, 0))
    return np.array(predicted), jac.astype(np.float64)


def _tangent(out, shape) -> np.ndarray:
    """The derivative a dual carries; 0 where the seeded parameter does not enter (a
    blend member of weight 0)."""
    tangent = out.tan if isinstance(out, Dual) else 0.0
    return np.broadcast_to(np.asarray(tangent, dtype=np.float64), shape)


def free_names(params, model) -> list[str] | None:
    """The parameters whose leaves `params` (a partition of `model`) holds, or None when
    it holds any other leaf (the twin's columns would not match `ravel_pytree`'s)."""
    names = [n for n in model.parameter_specs() if model.leaf_getter(n)(params) is not None]
    if len(jax.tree_util.tree_leaves(params)) != len(names):
        return None
    return names
