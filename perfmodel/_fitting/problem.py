"""Everything a fit shares before and after the optimiser runs.

Before: the options and their defaults (`FitOptions`), checks of names against the
model and the data, start values drawn around the data's scale, bounds of the stored
parameters (`setup` puts them together). After: the covariance, identifiability
warnings and quality of a `FitResult` (`assemble`). `fit`, the PMNF search and joint
fits with nccl-tests all go through here, so they cannot drift apart.
"""

import dataclasses
import math

import equinox as eqx
import jax
from jax.flatten_util import ravel_pytree
import jax.numpy as jnp
import numpy as np

from .._data import Benchmarks
from .._errors import InputError
from .._model import ScalingModel
from .covariance import fit_quality, laplace_covariance
from .loss import LOSSES, residuals
from .optimise import project
from .result import convergence, FitResult

# Default limits of unbounded stored parameters: e^±50 keeps exp() finite.
RAW_LIMIT = {"time": 50.0, "bandwidth": 50.0, "fraction": 20.0}


@dataclasses.dataclass(frozen=True)
class FitOptions:
    """The options every fit takes, with the one set of defaults.

    Attributes:
        loss: ``"log"``, ``"squared"`` or ``"huber"`` (see `objective`).
        fix: parameters held at physical values.
        bounds: ``(lo, hi)`` in physical units per parameter; None leaves a side open.
        n_starts: starting points of the multi-start phase.
        adam_steps: Adam steps per start.
        lbfgs_steps: maximum L-BFGS iterations of the refinement.
        seed: seed of the starting points.
    """

    loss: str = "log"
    fix: dict = dataclasses.field(default_factory=dict)
    bounds: dict = dataclasses.field(default_factory=dict)
    n_starts: int = 64
    adam_steps: int = 600
    lbfgs_steps: int = 500
    seed: int = 0

    @classmethod
    def of(cls, **options) -> "FitOptions":
        """Options from keyword arguments; a TypeError lists the valid ones."""
        valid = [f.name for f in dataclasses.fields(cls)]
        unknown = sorted(set(options) - set(valid))
        if unknown:
            raise TypeError(
                f"unexpected fit option(s) {', '.join(unknown)}; valid: {', '.join(valid)}"
            )
        options = {k: v for k, v in options.items() if v is not None or k in ("fix", "bounds")}
        options["fix"] = dict(options.get("fix") or {})
        options["bounds"] = dict(options.get("bounds") or {})
        return cls(**options)

    def replace(self, **changes) -> "FitOptions":
        return dataclasses.replace(self, **changes)


DEFAULTS = FitOptions()


def as_float64(tree):
    """`tree` with every array leaf as a float64 JAX array (call inside x64)."""
    return jax.tree_util.tree_map(
        lambda x: jnp.asarray(x, dtype=jnp.float64) if eqx.is_array(x) else x, tree
    )


def to_numpy_leaves(model: ScalingModel) -> ScalingModel:
    """`model` with float64 NumPy leaves, which follow the caller's precision when used
    later (float32 unless x64)."""
    return jax.tree_util.tree_map(
        lambda x: np.asarray(x, dtype=np.float64) if eqx.is_array(x) else x, model
    )


def start_values(model, names, data: Benchmarks, n_starts: int, seed: int) -> dict:
    """Physical start values per free parameter, `n_starts` each: times log-uniform over
    decades below the data's work per GPU, bandwidths around message size per work,
    fractions uniform on the logit."""
    specs = model.parameter_specs()
    rng = np.random.default_rng(seed)
    work = float(np.median(data.time_s * data.gpus))
    size = max(
        float(np.median(data.config.get("message_bytes", [1.0]))),
        float(np.median(data.config.get("input_bytes", [1.0]))),
    )
    starts = {}
    for name in names:
        kind = specs[name].kind
        if kind == "time":
            value = work * 10.0 ** rng.uniform(-6.0, 0.5, n_starts)
        elif kind == "bandwidth":
            value = size / work * 10.0 ** rng.uniform(-0.5, 8.0, n_starts)
        else:
            value = 1.0 / (1.0 + np.exp(-rng.uniform(-3.0, 3.0, n_starts)))
        starts[name] = value
    return starts


def raw_bounds(model, names, bounds):
    """Bounds of the stored parameters as two pytrees shaped like the free leaves.

    Unbounded sides get the wide default limits `RAW_LIMIT`; a parameter that ends on
    one of those limits is reported unidentifiable.
    """
    specs = model.parameter_specs()
    lower, upper = {}, {}
    for name in names:
        spec = specs[name]
        limit = RAW_LIMIT[spec.kind]
        lo, hi = bounds.get(name, (None, None))
        lower[name] = -limit if lo is None else float(spec.to_raw(lo))
        upper[name] = limit if hi is None else float(spec.to_raw(hi))
    mask = model.raw_leaf_mask(set(names))
    return eqx.filter(model.with_raw(lower), mask), eqx.filter(model.with_raw(upper), mask)


def check_names(model: ScalingModel, options: FitOptions) -> list[str]:
    """The free parameters, after checking the loss, the fixed and bounded names and the
    bounds themselves."""
    if options.loss not in LOSSES:
        raise InputError(f"unknown loss {options.loss!r}; valid: {', '.join(LOSSES)}")
    specs = model.parameter_specs()
    for name in [*options.fix, *options.bounds]:
        if name not in specs:
            raise InputError(
                f"no parameter {name!r} in model {model.family!r}; valid: " + ", ".join(specs)
            )
    for name, (lo, hi) in options.bounds.items():
        for side in (lo, hi):
            if side is not None and not _physical(specs[name], side):
                raise InputError(f"{{arg:bounds}} {name}: {_expected(specs[name])}, got {side!r}")
        if lo is not None and hi is not None and not lo < hi:
            raise InputError(f"bound for {name!r}: expected lo < hi, got {lo}:{hi}")
    for name, value in options.fix.items():
        if not _physical(specs[name], value):
            raise InputError(f"{{arg:fix}} {name}: {_expected(specs[name])}, got {value!r}")
        lo, hi = options.bounds.get(name, (None, None))
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            raise InputError(
                f"{{arg:fix}} {name}={value:g} lies outside its {{arg:bounds}} "
                f"[{lo}, {hi}]; a fixed parameter is not fitted: drop one of the two"
            )
    return [n for n in specs if n not in options.fix]


def _physical(spec, value) -> bool:
    """A finite value in the parameter's range: positive, or in (0, 1) for fractions."""
    if isinstance(value, (bool, str)):
        return False
    try:
        value = float(value)
    except (TypeError, ValueError):
        return False
    if not math.isfinite(value):
        return False
    return 0 < value < 1 if spec.kind == "fraction" else value > 0


def _expected(spec) -> str:
    if spec.kind == "fraction":
        return "expected a fraction strictly between 0 and 1"
    return f"expected a positive finite number of {spec.unit}"


def check_options(model: ScalingModel, data: Benchmarks, options: FitOptions) -> list[str]:
    """`check_names`, then that the data give what the terms need and determine the
    free parameters; returns the free parameter names."""
    free = check_names(model, options)
    for term in model.terms:
        for field in term.requires:
            if field not in data.config:
                raise InputError(
                    f"{data.source}: model {model.family!r} needs {field!r} in the data "
                    f"(a CSV column, or a from_arrays argument): its {term.name} term "
                    "depends on it"
                )
    distinct = data.distinct_configs()
    if len(free) > distinct:
        raise InputError(
            f"{data.source}: model {model.family!r} has {len(free)} free parameters "
            f"({', '.join(free)}) but the data have only {distinct} distinct "
            "configurations; measure more GPU counts, fix parameters with {arg:fix}, "
            "or choose a smaller model"
        )
    return free


def config_defaults(data: Benchmarks) -> dict[str, float]:
    """Config values for predictions at new GPU counts: a value that varies between rows
    is taken at the largest GPU count measured."""
    largest = int(np.argmax(data.gpus))
    return {name: float(values[largest]) for name, values in data.config.items()}


@dataclasses.dataclass(frozen=True)
class Setup:
    """A fit ready for the optimiser (float64 leaves; build inside x64).

    Attributes:
        model: the model with the fixed parameters set.
        free: the free parameter names.
        starts: the free leaves, one row per start, inside the bounds.
        static: everything else.
        lower, upper: bounds of the free leaves.
    """

    model: ScalingModel
    free: list[str]
    starts: ScalingModel
    static: ScalingModel
    lower: ScalingModel
    upper: ScalingModel


def setup(model: ScalingModel, data: Benchmarks, free: list[str], options: FitOptions) -> Setup:
    """Fixed values set, starts drawn and projected into the bounds (call inside x64)."""
    model = as_float64(model).with_parameters(options.fix)
    mask = model.raw_leaf_mask(set(free))
    values = start_values(model, free, data, options.n_starts, options.seed)
    starts, _ = eqx.partition(model.with_parameters(values), mask)
    _, static = eqx.partition(model, mask)
    lower, upper = raw_bounds(model, free, options.bounds)
    return Setup(model, free, project(starts, lower, upper), static, lower, upper)


def raw_covariance(params, static, config, time_s, target, loss) -> np.ndarray | None:
    """Laplace covariance of the stored parameters from the residuals of the loss."""
    flat, unravel = ravel_pytree(params)

    def residual(theta):
        return residuals(eqx.combine(unravel(theta), static)(config), time_s, loss, target)

    return laplace_covariance(np.asarray(jax.jacfwd(residual)(flat)), np.asarray(residual(flat)))


def _negligible(model, name, config, predicted) -> bool:
    """True when moving `name` to either edge of its default range changes no prediction
    (1e-9 relative): its term contributes nothing, like a time the fit drove towards 0
    but whose gradient vanished before it reached the edge."""
    limit = RAW_LIMIT[model.parameter_specs()[name].kind]
    for edge in (-limit, limit):
        moved = np.asarray(model.with_raw({name: edge})(config))
        if np.all(np.abs(moved / predicted - 1.0) < 1e-9):
            return True
    return False


def at_default_limit(model: ScalingModel, name: str) -> bool:
    """True when `name` sits on the edge of its default range (`RAW_LIMIT`)."""
    spec = model.parameter_specs()[name]
    raw = float(spec.to_raw(model.parameters()[name]))
    return abs(raw) >= RAW_LIMIT[spec.kind] - 1e-6


def identifiability(model, free, bounds, cov, *, negligible=lambda name: False) -> list[str]:
    """Warnings for the free parameters the data cannot determine: pushed to the edge of
    the default range (or `negligible`), with infinite Laplace variance, or with a
    standard error over a factor e² on the value."""
    warnings, flagged = [], set()
    for name in free:
        if name not in bounds and (at_default_limit(model, name) or negligible(name)):
            flagged.add(name)
            warnings.append(
                f"{name} is not identifiable: the fit pushed it to the edge of its "
                "range, so the data cannot tell this term's size (it is negligible or "
                "indistinguishable from another term)"
            )
    if cov is None:
        return warnings
    sd = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    for name, s in zip(free, sd):
        if name in flagged:
            continue
        if not np.isfinite(s):
            warnings.append(
                f"{name} is not identifiable: other parameters can compensate any "
                "change in it exactly; fix it from another measurement"
            )
        elif s > 2.0:
            warnings.append(
                f"{name} is poorly determined: its Laplace standard error is a "
                f"factor of {math.exp(min(s, 50.0)):.3g} on its value"
            )
    return warnings


def assemble(params, static, data: Benchmarks, value, gnorm, steps, options) -> FitResult:
    """The `FitResult` of stored parameters `params` found by an optimiser: quality on
    the measured quantity, Laplace covariance, identifiability and convergence."""
    fitted = eqx.combine(params, static)
    config, time_s = data.to_config(), jnp.asarray(data.time_s)
    free = [name for name in fitted.parameter_specs() if name not in options.fix]
    predicted = np.asarray(fitted(config))
    measured = data.measured
    predicted_q = 1.0 / predicted if data.target == "throughput" else predicted
    r2, mape = fit_quality(measured, predicted_q)
    cov = raw_covariance(params, static, config, time_s, data.target, options.loss)
    warnings = identifiability(
        fitted,
        free,
        options.bounds,
        cov,
        negligible=lambda name: _negligible(fitted, name, config, predicted),
    )
    converged, message = convergence(value, gnorm, steps, warnings)
    return FitResult(
        model=to_numpy_leaves(fitted),
        data=data,
        loss_kind=options.loss,
        loss=value,
        converged=converged,
        message=message,
        num_steps=steps,
        r2=r2,
        mape=mape,
        residuals=np.log(predicted_q / measured),
        free=tuple(free),
        fixed={k: float(v) for k, v in options.fix.items()},
        bounds={k: tuple(v) for k, v in options.bounds.items()},
        raw_covariance=cov,
        warnings=tuple(warnings),
        config_defaults=config_defaults(data),
    )
