"""Everything a fit shares before and after the optimiser runs.

The options and their defaults (`FitOptions`), checks of names against the model and
the data, start values drawn around the data's scale, bounds of the stored parameters
(`setup` puts them together). `fit`, the PMNF search and joint fits with nccl-tests all
start here, and end in `assemble`, so they cannot drift apart.
"""

import dataclasses
import math

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._data import Benchmarks
from .._errors import InputError
from .._model import AbstractScalingModel
from .._schema import MAGNITUDE, SMALLEST
from .._text import counted
from .loss import LOSSES
from .optimise import project

# Default limits of unbounded stored parameters, around the data's scale (`data_scale`):
# e^±50 keeps exp() finite, and times of 1e-300 s fit as well as times of 1 s.
RAW_LIMIT = {"time": 50.0, "bandwidth": 50.0, "fraction": 20.0}
METHODS = ("auto", "exact", "optax")


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
        weight_power: measurement weights ``(N/max N)^weight_power`` (0: all alike; 2
            weighs the largest counts, where an extrapolation starts, the most).
        method: ``"auto"`` (exact when the model is linear in its parameters, see
            `linear`; else Optax), ``"exact"`` or ``"optax"``.
    """

    loss: str = "log"
    fix: dict = dataclasses.field(default_factory=dict)
    bounds: dict = dataclasses.field(default_factory=dict)
    n_starts: int = 64
    adam_steps: int = 600
    lbfgs_steps: int = 500
    seed: int = 0
    weight_power: float = 0.0
    method: str = "auto"

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
        for name, least in _LEAST.items():
            if name in options:
                options[name] = _whole(options[name], name, least)
        power = options.get("weight_power", 0.0)
        if not (_is_number(power) and math.isfinite(power)):
            raise InputError(f"{{arg:weight_power}}: expected a finite number, got {power!r}")
        options["fix"] = dict(options.get("fix") or {})
        options["bounds"] = dict(options.get("bounds") or {})
        return cls(**options)

    def replace(self, **changes) -> "FitOptions":
        return dataclasses.replace(self, **changes)


DEFAULTS = FitOptions()
# The least value of each whole-number option (L-BFGS may be skipped, Adam may not).
_LEAST = {"n_starts": 1, "adam_steps": 1, "lbfgs_steps": 0, "seed": 0}


def _is_number(value) -> bool:
    """A real number and not a bool (``True`` is not a count)."""
    numeric = isinstance(value, (int, float, np.integer, np.floating))
    return numeric and not isinstance(value, (bool, np.bool_))


def _whole(value, name: str, least: int) -> int:
    """`value` as an int; an InputError naming ``{arg:name}`` unless it is a whole number
    ≥ `least` (NaN, fractions, bools and strings refused, where NumPy and Optax raised
    their own errors)."""
    if not (_is_number(value) and math.isfinite(value) and least <= value == round(value)):
        raise InputError(f"{{arg:{name}}}: expected a whole number ≥ {least}, got {value!r}")
    return int(value)


def as_float64(tree):
    """`tree` with every array leaf as a float64 JAX array (call inside x64)."""
    return jax.tree_util.tree_map(
        lambda x: jnp.asarray(x, dtype=jnp.float64) if eqx.is_array(x) else x, tree
    )


def to_numpy_leaves(model: AbstractScalingModel) -> AbstractScalingModel:
    """`model` with float64 NumPy leaves, which follow the caller's precision when used
    later (float32 unless x64)."""
    return jax.tree_util.tree_map(
        lambda x: np.asarray(x, dtype=np.float64) if eqx.is_array(x) else x, model
    )


def data_scale(data: Benchmarks) -> float:
    """Seconds of one GPU's work, ``median(time_s · gpus)``: the scale of the times a
    fit's parameters are (bandwidths are bytes over it).

    Raises:
        InputError: a scale so small or large that the parameters' default range
            (`RAW_LIMIT`, e^±50 around it) leaves normal float64 numbers, which the fit
            file holds (``1e-307`` to ``1e307``): times of 1e-300 s, say.
    """
    scale = float(np.median(data.time_s * data.gpus))
    margin = math.exp(RAW_LIMIT["time"] + 1.0)
    if not margin / MAGNITUDE <= scale <= MAGNITUDE / margin:
        small = scale < 1.0
        if data.target == "throughput":  # a throughput is work over time
            what = "throughputs are too " + ("large" if small else "small")
        else:
            what = "times are too " + ("small" if small else "large")
        raise InputError(
            f"{data.source}: the {what} to fit in float64: one GPU's work takes "
            f"{scale:.3g} s and a fit's parameters reach {margin:.0e}× either side of it, "
            f"past the {'smallest' if small else 'largest'} number a fit holds "
            f"({SMALLEST if small else MAGNITUDE:g}); rescale the measurements "
            "(another unit)"
        )
    return scale


def raw_centre(kind: str, scale: float) -> float:
    """Where the default range of a stored parameter of `kind` is centred: log of the
    data's time scale for times, its negative for rates, 0 for fractions."""
    if kind == "time":
        return math.log(scale)
    if kind == "bandwidth":
        return -math.log(scale)
    return 0.0


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


def default_raw_range(kind: str, scale: float) -> tuple[float, float]:
    """The default ``(lo, hi)`` of a stored parameter of `kind` for data of `scale`."""
    centre = raw_centre(kind, scale)
    return centre - RAW_LIMIT[kind], centre + RAW_LIMIT[kind]


def raw_bounds(model, names, bounds, scale: float = 1.0):
    """Bounds of the stored parameters as two pytrees shaped like the free leaves.

    Unbounded sides get the wide default limits `RAW_LIMIT` around the data's scale;
    a parameter that ends on one of those limits is reported unidentifiable.
    """
    specs = model.parameter_specs()
    lower, upper = {}, {}
    for name in names:
        spec = specs[name]
        default_lo, default_hi = default_raw_range(spec.kind, scale)
        lo, hi = bounds.get(name, (None, None))
        lower[name] = default_lo if lo is None else float(spec.to_raw(lo))
        upper[name] = default_hi if hi is None else float(spec.to_raw(hi))
    mask = model.raw_leaf_mask(set(names))
    return eqx.filter(model.with_raw(lower), mask), eqx.filter(model.with_raw(upper), mask)


def check_names(model: AbstractScalingModel, options: FitOptions) -> list[str]:
    """The free parameters, after checking the loss, the fixed and bounded names and the
    bounds themselves."""
    if options.loss not in LOSSES:
        raise InputError(f"unknown loss {options.loss!r}; valid: {', '.join(LOSSES)}")
    if options.method not in METHODS:
        raise InputError(f"unknown fit method {options.method!r}; valid: {', '.join(METHODS)}")
    specs = model.parameter_specs()
    for name in [*options.fix, *options.bounds]:
        if name not in specs:
            raise InputError(
                f"no parameter {name!r} in model {model.family!r}; valid: " + ", ".join(specs)
            )
    for name, pair in options.bounds.items():
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise InputError(
                f"{{arg:bounds}} {name}: expected a pair (lo, hi), either None for no "
                f"bound, got {pair!r}"
            )
        lo, hi = pair
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
    if spec.kind == "fraction":
        return 0 < value < 1
    # What a fit file holds (`_schema.MAGNITUDE`): 1e-320 s, a subnormal, fitted and
    # printed, then could not be saved ("got 0.0").
    return SMALLEST <= value <= MAGNITUDE


def _expected(spec) -> str:
    if spec.kind == "fraction":
        return "expected a fraction strictly between 0 and 1"
    return f"expected a positive number of {spec.unit} from {SMALLEST:g} to {MAGNITUDE:g}"


def check_options(
    model: AbstractScalingModel, data: Benchmarks, options: FitOptions, determined: bool = True
) -> list[str]:
    """`check_names`, then that the data give what the terms need and (unless not
    `determined`) determine the free parameters; returns the free parameter names."""
    free = check_names(model, options)
    check_required_fields(model, data)
    distinct = data.distinct_configs()
    if determined and len(free) > distinct:
        raise InputError(
            f"{data.source}: model {model.family!r} has {len(free)} free parameters "
            f"({', '.join(free)}) but the data have only "
            f"{counted(distinct, 'distinct configuration')}; measure more GPU counts, fix "
            "parameters with {arg:fix}, "
            "or choose a smaller model"
            + (
                # pm.fit("hybrid", two runs) named no way out (review of 2026-12-07).
                "; pm.fit_hybrid fixes what the runs do not determine at the GPU's numbers"
                if model.family == "hybrid"
                else ""
            )
        )
    return free


def check_required_fields(model, data: Benchmarks) -> None:
    """Refuse `data` without a field (a CSV column) that a term of `model` reads."""
    for term in model.terms:
        for field in term.requires:
            if field not in data.config:
                raise InputError(
                    f"{data.source}: model {model.family!r} needs {field!r} in the data "
                    f"(a CSV column, or a from_arrays argument): its {term.name} term "
                    "depends on it"
                )


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

    model: AbstractScalingModel
    free: list[str]
    starts: AbstractScalingModel
    static: AbstractScalingModel
    lower: AbstractScalingModel
    upper: AbstractScalingModel


def setup(
    model: AbstractScalingModel, data: Benchmarks, free: list[str], options: FitOptions
) -> Setup:
    """Fixed values set, starts drawn and projected into the bounds (call inside x64)."""
    model = as_float64(model).with_parameters(options.fix)
    mask = model.raw_leaf_mask(set(free))
    values = start_values(model, free, data, options.n_starts, options.seed)
    starts, _ = eqx.partition(model.with_parameters(values), mask)
    _, static = eqx.partition(model, mask)
    lower, upper = raw_bounds(model, free, options.bounds, data_scale(data))
    return Setup(model, free, project(starts, lower, upper), static, lower, upper)
