"""Design-space sweeps: every combination of the axes, streamed, sharded and reduced.

`sweep` evaluates a `ScalingModel` (or a fit) on the product of its axes — `Config`
fields and model parameters, so GPU counts, parallel layouts, batch sizes and
interconnects alike — without ever holding the grid. `_stream` walks and reduces it,
`_keys` turns configurations into ranking keys, `_readback` makes the tables.
"""

from collections.abc import Callable, Mapping, Sequence
import dataclasses
import functools
import math
import time
import warnings as python_warnings

import equinox as eqx
import jax
from jaxtyping import ArrayLike
import numpy as np
import pandas as pd

from .._config import (
    check_one_microbatch_field,
    CODED_FIELDS,
    Config,
    CONFIG_FIELDS,
    FIELD_NAMES,
    LARGEST_VALUE,
    NONNEGATIVE_FIELDS,
    RECIPE_FIELDS,
    WHOLE_FIELDS,
    with_defaults,
    WORKLOAD_FIELDS,
)
from .._errors import InputError
from .._fitting import FitResult, memory_budget, model_gpu, model_memory_budget
from .._keywords import did_you_mean
from .._model import AbstractScalingModel, ScalingModel
from .._presets import hybrid_kind
from .._reads import unread, unread_line
from .._text import brief, format_table, wrap
from .keys import evaluator, flops_per_config, INT_DTYPE, operations, ranker, Walk
from .noop import copies_per_layout
from .readback import tables
from .stream import arrange, Plan, stream, walk_shape

OBJECTIVES = ("time", "cost", "time_to_train", "cost_to_train")
PRECISIONS = ("float32", "float64")
MAX_GROUPS = 2**22
CHUNK_SIZE = {"cpu": 2**18, "gpu": 2**25}
# Inner axes (the user's last ones) multiply up to about this many configurations per
# row; the outer axes (the first ones, such as gpus) vary along the rows of a chunk.
# Measured on the hybrid model (benchmarks/sweep.py, 2 CPU cores): rows of up to 4096
# run 25–30% faster than rows of up to 1024 (fewer rows per chunk to reduce), and
# faster than 16384. At most 2**15: the stream packs two counts of P keys in an int32.
_INNER_LIMIT = 4096
# The most configurations a chunk may hold: twice the GPU default (`CHUNK_SIZE`), 256
# times the CPU's; 10⁸ ran for 72 s on a CPU and 10¹¹ out of memory (fuzz round 12).
MAX_CHUNK_SIZE = 2**26


@dataclasses.dataclass(frozen=True)
class SweepResult:
    """What a sweep found. Times are seconds, memory GB (10⁹ bytes) per GPU.

    Attributes:
        evaluated: configurations evaluated (the size of the space).
        valid, feasible: how many were valid layouts, and valid and fitting in memory
            (None when not counted).
        best: best configuration per combination of the `per` axes (one row per
            combination, marked ``feasible=False`` with a ``reason`` where none is), or
            the single best configuration when there are no `per` axes.
        per_axis: for each `per` axis, the best configuration per value of that axis.
        top: the `top_k` best configurations overall, best first.
        pareto: configurations no other beats in both time and cost per sample,
            fastest first (empty unless requested).
        objective: ``"time"`` (seconds per sample), ``"cost"`` (currency per sample),
            ``"time_to_train"`` (seconds) or ``"cost_to_train"`` (currency).
        precision: floating-point precision of the evaluation.
        devices: the devices the chunks were spread over.
        seconds: wall-clock time of the sweep, compilation included.
        timings: seconds of the stages (``first_call``: compilation and the first
            chunks, ``stream``: all chunks, ``read_back``: the tables) and
            ``steady_configs_per_s``, the rate after compilation.
        flops_per_config: XLA's count of element-wise operations (comparisons and
            selects included) evaluating one configuration, or None if unavailable;
            counted when first read (it lowers a chunk's evaluation again, seconds for
            the `hybrid` family, which the command line's answers do not need).
        warnings: axes and fixed values of `Config` fields the model does not read
            (`fields_read`: their values change no time), and what the space leaves to
            defaults that describe a toy workload (the model's shape,
            `WORKLOAD_FIELDS`) or no memory limit, one line each.
    """

    evaluated: int
    valid: int | None
    feasible: int | None
    best: pd.DataFrame
    per_axis: dict[str, pd.DataFrame]
    top: pd.DataFrame
    pareto: pd.DataFrame
    objective: str
    precision: str
    devices: tuple[str, ...]
    seconds: float
    timings: dict[str, float]
    warnings: tuple[str, ...] = ()
    count_flops: Callable[[], float | None] | None = dataclasses.field(
        default=None, repr=False, compare=False
    )

    @functools.cached_property
    def flops_per_config(self) -> float | None:
        """XLA's count of element-wise operations per configuration (see the class)."""
        return None if self.count_flops is None else self.count_flops()

    @property
    def rate(self) -> float:
        """Configurations per second, compilation included."""
        return self.evaluated / max(self.seconds, 1e-12)

    def __repr__(self) -> str:
        return brief("SweepResult", self._headline())

    def _headline(self) -> str:
        counts = ""
        if self.valid is not None:
            counts = f"; {self.valid:.4g} valid layouts, {self.feasible:.4g} fit in memory"
        return (
            f"{self.evaluated:.4g} configurations in {self.seconds:.3g} s "
            f"({self.rate:.3g}/s, {self.precision}, {len(self.devices)} device(s)){counts}"
        )

    def summary(self, width: int | None = 100) -> str:
        """The headline, then the best per axis value and the top configurations, as
        tables like `perfmodel sweep` prints (`width` columns; None: all)."""
        ranked = (
            "samples per second, highest first" if self.objective == "time" else "cost per sample"
        )
        lines = [wrap(self._headline(), width) if width else self._headline()]
        shown = ("step_time_s", "samples_per_s", "cost_per_sample", "memory_gb")

        def table(title, frame):
            columns = [
                c
                for c in frame.columns
                if c in shown
                or c in self.per_axis
                or c in ("gpus", "tp", "pp", "dp", "microbatches", "global_batch")
            ]
            rows = [
                {k: (v.item() if hasattr(v, "item") else v) for k, v in r.items()}
                for r in frame[columns].to_dict(orient="records")
            ]
            lines.extend(["", f"{title}:", format_table(rows, columns, width=width)])

        for name, frame in self.per_axis.items():
            table(f"best per {name} (by {ranked})", frame[frame["feasible"].astype(bool)])
        table(f"top {len(self.top)} (by {ranked})", self.top)
        return "\n".join(lines)


@dataclasses.dataclass(frozen=True)
class _Request:
    """A checked sweep: what to evaluate and what to keep."""

    model: AbstractScalingModel
    axes: dict[str, np.ndarray]
    fixed: dict[str, float]
    per: list[str]
    group: list[str]
    objective: str
    per_step: bool
    top_k: int
    pareto: bool
    counts: bool
    chunk_size: int
    precision: str
    devices: tuple
    samples_to_target: tuple[float, float] | None = None
    warnings: tuple[str, ...] = ()
    unread: tuple[str, ...] = ()  # of `warnings`: fields the model does not read


# Checking the space ------------------------------------------------------------------

# The largest value of an axis or fixed field (`perfmodel._config.LARGEST_VALUE`).
# Counts and sizes stay exact in float64 (2⁵³).
LARGEST = LARGEST_VALUE
WHOLE_LARGEST = float(2**53)
# The smallest positive value: 1/LARGEST (float32 holds its square; a serial time of
# 1e-18 s is far below any measured).
SMALLEST = 1.0 / LARGEST


def _check_values(name: str, values, where: str, spec=None) -> np.ndarray:
    try:
        array = np.asarray(values, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise InputError(f"{where} {name!r}: expected numbers, got {values!r}")
    if array.size == 0:
        raise InputError(f"{where} {name!r}: no values")
    if np.isnan(array).any():
        raise InputError(f"{where} {name!r}: NaN is not a value")
    finite = np.isfinite(array) | (name == "gpu_memory_bytes")
    if not finite.all():
        raise InputError(f"{where} {name!r}: expected finite numbers, got {array[~finite][0]}")
    if spec is not None and spec.kind == "fraction":
        if ((array <= 0) | (array >= 1)).any():
            raise InputError(f"{where} {name!r}: expected fractions in (0, 1), got {values!r}")
    elif name in CODED_FIELDS:
        if not np.isin(array, CODED_FIELDS[name]).all():
            codes = ", ".join(f"{c:g}" for c in CODED_FIELDS[name])
            bad = array[~np.isin(array, CODED_FIELDS[name])][0]
            raise InputError(f"{where} {name!r}: expected one of {codes}, got {bad:g}")
    elif name in NONNEGATIVE_FIELDS:
        if (array < 0).any():
            raise InputError(
                f"{where} {name!r}: expected values ≥ 0 (0: not given), got {array[array < 0][0]:g}"
            )
    elif (array <= 0).any():
        raise InputError(
            f"{where} {name!r}: expected positive values, got {array[array <= 0][0]:g}"
        )
    tiny = (array > 0) & (array < SMALLEST)
    if tiny.any():  # 1e-320 s of serial time answered a step of 0 s and infinite samples/s
        raise InputError(
            f"{where} {name!r}: expected {'0 or ' if name in NONNEGATIVE_FIELDS else ''}at "
            f"least {SMALLEST:g}, got {float(array[tiny][0])!r} (no "
            "time, size or rate of a training run is that small, and float32 sweeps would "
            "underflow to 0)"
        )
    largest = WHOLE_LARGEST if name in WHOLE_FIELDS else LARGEST
    huge = np.isfinite(array) & (np.abs(array) > largest)
    if huge.any():
        raise InputError(
            f"{where} {name!r}: expected at most {largest:.4g}, got {array[huge][0]:g} (no field "
            "of a training run is that large, and float32 sweeps would overflow)"
        )
    low = 0.0 if name in NONNEGATIVE_FIELDS else 1.0
    if name in WHOLE_FIELDS and ((array != np.round(array)) | (array < low)).any():
        bad = array[(array != np.round(array)) | (array < low)][0]
        raise InputError(f"{where} {name!r}: expected whole numbers ≥ {low:g}, got {bad:g}")
    if len(np.unique(array)) != array.size:
        raise InputError(f"{where} {name!r}: values repeat")
    return array


def _valid_names(model: AbstractScalingModel) -> str:
    return ", ".join([*CONFIG_FIELDS, *model.parameter_specs()])


def _split(model, axes, fixed):
    specs = model.parameter_specs()
    if not isinstance(axes, Mapping) or not axes:
        raise InputError("axes: expected a non-empty mapping of names to value lists")
    checked = {}
    for where, mapping in (("axis", axes), ("fixed value", fixed)):
        for name, values in mapping.items():
            if name not in CONFIG_FIELDS and name not in specs:
                hint = did_you_mean(name, [*CONFIG_FIELDS, *specs])
                raise InputError(
                    f"unknown {where} {name!r}{hint}; valid: Config fields and model "
                    f"parameters: {_valid_names(model)}"
                )
            array = _check_values(name, values, where, specs.get(name))
            if where == "fixed value" and array.size != 1:
                raise InputError(f"fixed value {name!r}: expected one number")
            checked[name] = array
    overlap = sorted(set(axes) & set(fixed))
    if overlap:
        raise InputError(f"{overlap[0]!r} is both an axis and a fixed value")
    return {n: checked[n] for n in axes}, {n: float(checked[n][0]) for n in fixed}


def _order(axes: dict, group: list[str], chunk_size: int):
    """Internal axis order (group axes, other outer axes, inner axes) and the inner set."""
    rest = [n for n in axes if n not in group]
    inner: list[str] = []
    width = 1
    limit = max(1, min(chunk_size, _INNER_LIMIT))
    for name in reversed(rest):
        if width * len(axes[name]) <= limit:
            inner.insert(0, name)
            width *= len(axes[name])
    outer = group + [n for n in rest if n not in inner]
    return outer, inner


# The sweep ----------------------------------------------------------------------------


def sweep(
    model_or_fit: ScalingModel | FitResult,
    axes: Mapping[str, Sequence | ArrayLike],
    *,
    fixed: Mapping[str, float] | None = None,
    objective: str = "time",
    per: Sequence[str] | None = None,
    top_k: int = 10,
    pareto: bool = True,
    counts: bool = True,
    chunk_size: int | None = None,
    max_configs: float | None = None,
    precision: str = "float32",
    devices: Sequence[jax.Device] | None = None,
    progress: bool | None = None,
    samples_to_target: tuple[float, float] | None = None,
) -> SweepResult:
    """Evaluate every combination of `axes` and keep the best configurations.

    The score is the time per sample, ``T/global_batch`` seconds (``T`` for fits of
    throughput, already per unit of work), or with ``objective="cost"`` the cost per
    sample, ``gpus · price_per_gpu_hour · T/(3600·global_batch)``. Invalid layouts and,
    for the `hybrid` family, layouts that do not fit ``gpu_memory_bytes`` are never
    ranked (see `layout_status`); they are counted and marked.

    Nothing grid-sized is held: chunks of `chunk_size` configurations are decoded from
    their index, evaluated and reduced inside `jax.jit`, and spread over `devices`
    (default: all of `jax.devices()`, which on a multi-host cluster after
    `jax.distributed.initialize()` spans every host; each process then gets the result).

    Args:
        model_or_fit: the model, or a fit (its model and the configuration values of
            its data as defaults).
        axes: ``{name: values}`` for `Config` fields (``"gpus"``, ``"tp"``, …) and
            model parameters (``"allreduce.bandwidth_inter"``, in physical units).
        fixed: single values for other fields or parameters.
        objective: ``"time"`` or ``"cost"``.
        per: axes to report the best configuration for every value of (default
            ``["gpus"]`` when gpus is an axis).
        top_k: how many best configurations to list.
        pareto: also compute the Pareto front of time against cost per sample.
        counts: count valid and feasible configurations (one more pass over each
            chunk: about 20% slower on a CPU).
        chunk_size: configurations evaluated at once per device (default 2¹⁸ on a
            CPU, where a chunk's keys then stay in cache, and 2²⁵ on accelerators).
        max_configs: refuse spaces larger than this.
        precision: ``"float32"`` (fast; ~7 significant digits) or ``"float64"``.
        devices: the devices to use (on a multi-host cluster, the same on every process).
        progress: print progress on stderr (None: on a terminal, for long sweeps).
        samples_to_target: for ``objective="time_to_train"`` or ``"cost_to_train"``:
            ``(samples_min, noise_batch)``, the samples to the target at global batch B
            being ``samples_min·(1 + B/noise_batch)`` (the critical-batch model of a
            time-to-train fit: ``(fit.samples_min, fit.noise_batch)``); the score is then
            the step time × the steps to the target, ``T·samples_min·(1 + B/B_noise)/B``
            seconds (× ``gpus · price_per_gpu_hour/3600`` for the cost), and the tables
            gain ``steps_to_target``, ``time_to_train_s`` and ``cost_to_train``.

    Example:
        >>> import perfmodel as pm
        >>> found = pm.sweep(pm.amdahl().with_parameters({"serial.time": 0.1}),
        ...                  {"gpus": [1, 2, 4, 8]}, progress=False)
        >>> found.evaluated, int(found.top["gpus"].iloc[0])
        (4, 8)
    """
    began = time.perf_counter()
    request = _request(
        model_or_fit,
        axes,
        fixed=dict(fixed or {}),
        objective=objective,
        per=per,
        top_k=top_k,
        pareto=pareto,
        counts=counts,
        chunk_size=chunk_size,
        max_configs=max_configs,
        precision=precision,
        devices=devices,
        samples_to_target=samples_to_target,
    )
    for note in request.unread:  # `SweepResult.warnings` keeps them; a notebook shows these
        python_warnings.warn(note, stacklevel=2)
    with jax.enable_x64(precision == "float64"):
        reduced, walk, args = _run(request, progress)
        read_back = time.perf_counter()
        found = tables(request, walk, args, reduced)

    def count_flops():
        with jax.enable_x64(precision == "float64"):
            return flops_per_config(walk, args)

    timings = {
        "first_call": reduced.first_call_s,
        "stream": reduced.stream_s,
        "read_back": time.perf_counter() - read_back,
    }
    if reduced.steady_rate is not None:
        timings["steady_configs_per_s"] = reduced.steady_rate
    return SweepResult(
        evaluated=math.prod(len(v) for v in request.axes.values()),
        valid=reduced.valid,
        feasible=reduced.feasible,
        objective=objective,
        precision=precision,
        devices=tuple(str(d) for d in request.devices),
        seconds=time.perf_counter() - began,
        timings=timings,
        count_flops=count_flops,
        warnings=request.warnings,
        **found,
    )


def check_chunk_size(value, where: str) -> None:
    """Refuse a chunk size that is not a whole number from 1 to `MAX_CHUNK_SIZE`."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_CHUNK_SIZE:
        raise InputError(
            f"{where}: expected a whole number from 1 to {MAX_CHUNK_SIZE} (2²⁶), got {value!r}"
        )


# The largest parameter value a float32 sweep takes: float32 ends at 3.4e38, which leaves
# eight decades of headroom for the products a term forms (a product with a config value
# near `LARGEST_VALUE`, 1e18, can still overflow: that is the axes' check). A fitted
# bandwidth that nothing determines reaches about 5e21 B/s over the data's time scale.
FLOAT32_PARAMETER_LIMIT = 1e30


def _check_float32(model: AbstractScalingModel) -> None:
    """Refuse a parameter a float32 sweep cannot hold: an edited fit's compute.time of
    1e307 became inf in float32 and the sweep answered "no valid layout" (review of
    2026-12-03)."""
    for name, value in model.parameters().items():
        value = float(np.max(np.abs(value)))
        if not value <= FLOAT32_PARAMETER_LIMIT:  # an inf or NaN too
            raise InputError(
                f"parameter {name} = {value:g} is beyond what a float32 sweep holds (at "
                f"most {FLOAT32_PARAMETER_LIMIT:g}): sweep with --precision float64 "
                '(precision="float64")'
            )


def _request(
    model_or_fit,
    axes,
    *,
    fixed,
    objective,
    per,
    top_k,
    pareto,
    counts,
    chunk_size,
    max_configs,
    precision,
    devices,
    samples_to_target=None,
) -> _Request:
    """Check every argument of `sweep` (InputError naming the key) and settle defaults."""
    fit = model_or_fit if isinstance(model_or_fit, FitResult) else None
    model = fit.model if fit is not None else model_or_fit
    if not isinstance(model, AbstractScalingModel):
        raise InputError(f"expected a ScalingModel or FitResult, got {type(model).__name__}")
    if objective not in OBJECTIVES:
        raise InputError(f"unknown objective {objective!r}; valid: {', '.join(OBJECTIVES)}")
    if precision not in PRECISIONS:
        raise InputError(f"unknown precision {precision!r}; valid: {', '.join(PRECISIONS)}")
    if not isinstance(top_k, int) or top_k < 1:
        raise InputError(f"top_k: expected a whole number ≥ 1, got {top_k!r}")
    if chunk_size is not None:
        check_chunk_size(chunk_size, "chunk_size")
    samples_to_target = _check_convergence(objective, samples_to_target, fit, axes, fixed)
    axes, fixed = _split(model, axes, fixed)
    check_one_microbatch_field([*axes, *fixed], "axes and fixed values")
    specs = model.parameter_specs()
    model = model.with_parameters({n: v for n, v in fixed.items() if n in specs})
    if precision == "float32":
        _check_float32(model)  # axes and fixed values are held to LARGEST_VALUE already
    per_step = fit is None or fit.target == "time"
    left, read = unread(model, [*axes, *fixed], per_step=per_step)
    notes = tuple(
        f"{'axis' if n in axes else 'fixed value'} {n!r}: {unread_line(model.family, n, read)}"
        for n in left
    )
    defaults = {k: v for k, v in (fit.config_defaults if fit else {}).items() if k not in axes}
    given = {n: v for n, v in fixed.items() if n not in specs}
    budget = {}
    if "gpu_memory_bytes" not in axes and "gpu_memory_bytes" not in given:
        # as `predict` and `optimal`; a preset's from its GPU (an H200 space fitted all)
        budget = memory_budget(fit) if fit is not None else model_memory_budget(model)
        defaults = {**budget, **defaults}
    fixed = with_defaults(defaults, {**given, **dict.fromkeys(axes)})  # axes: (in `given`)
    fixed = {k: v for k, v in fixed.items() if k not in axes}
    if "gpus" not in axes and "gpus" not in fixed:
        raise InputError("gpus: give it as an axis or a fixed value")
    per = list(per) if per is not None else (["gpus"] if "gpus" in axes else [])
    for name in per:
        if name not in axes:
            raise InputError(f"per: {name!r} is not an axis; axes: {', '.join(axes)}")
    for term in model.terms:
        for name in term.requires:
            if name not in axes and name not in fixed:
                raise InputError(
                    f"{name}: the {term.name} term of this model depends on it; give it as "
                    "an axis or a fixed value"
                )
    total = math.prod(len(v) for v in axes.values())
    if max_configs is not None and total > max_configs:
        raise InputError(
            f"the space has {total:.4g} configurations, more than the maximum {max_configs:.4g}"
        )
    # Pareto fronts need gpus and price per group: within one, cost is proportional to time.
    extra = ["gpus", "price_per_gpu_hour"] if pareto else []
    group = [n for n in axes if n in per or n in extra]
    groups = math.prod(len(axes[n]) for n in group)
    if groups > MAX_GROUPS:
        raise InputError(
            f"per {', '.join(group)}: {groups} combinations to keep, more than {MAX_GROUPS}; "
            "use fewer per axes or pareto=False"
        )
    devices = tuple(jax.devices() if devices is None else devices)
    if not devices:
        raise InputError("devices: expected at least one device")
    if all(d.process_index != jax.process_index() for d in devices):
        raise InputError(
            f"devices: none belongs to this process ({jax.process_index()}); on a multi-host "
            "cluster every process passes the same devices, including some of its own"
        )
    if chunk_size is None:
        chunk_size = CHUNK_SIZE.get(devices[0].platform, CHUNK_SIZE["gpu"])
    model = jax.tree_util.tree_map(
        lambda x: np.asarray(x, dtype=precision) if eqx.is_array(x) else x, model
    )
    warnings = notes + default_warnings(model, set(axes) | set(fixed))
    warnings += assumed_memory(model, fit, budget)
    warnings += held_layout(model, axes, set(fixed))
    warnings += inherited_recipe(fit, axes, given)
    return _Request(
        model=model,
        axes=axes,
        fixed=fixed,
        per=per,
        group=group,
        objective=objective,
        per_step=per_step,
        top_k=top_k,
        pareto=pareto,
        counts=counts,
        chunk_size=chunk_size,
        precision=precision,
        devices=devices,
        samples_to_target=samples_to_target,
        warnings=warnings,
        unread=notes,
    )


def _check_convergence(objective, pair, fit, axes, fixed) -> tuple[float, float] | None:
    """`samples_to_target` checked against the objective (the time-to-train ones need it,
    a step-time model and the global batch)."""
    wanted = objective in ("time_to_train", "cost_to_train")
    if not wanted:
        if pair is not None:
            raise InputError(
                "samples_to_target: only with objective time_to_train or cost_to_train"
            )
        return None
    try:
        samples_min, noise_batch = (float(x) for x in pair)
    except (TypeError, ValueError):
        raise InputError(
            f"samples_to_target: the {objective} objective needs (samples_min, noise_batch) "
            f"of a time-to-train fit, got {pair!r}"
        )
    if not all(math.isfinite(x) and x > 0 for x in (samples_min, noise_batch)):
        raise InputError(f"samples_to_target: expected two positive numbers, got {pair!r}")
    if fit is not None and fit.target != "time":
        raise InputError(f"the {objective} objective needs a fit of the step time, not throughput")
    if "global_batch" not in axes and "global_batch" not in (fixed or {}):
        if fit is None or "global_batch" not in fit.config_defaults:
            raise InputError(
                f"global_batch: the {objective} objective depends on it; give it as an axis "
                "or a fixed value"
            )
    return samples_min, noise_batch


def _code_name(field: str, value: float) -> str:
    """A field's value as its name where it has one (``recompute = full``), else ``g``."""
    names = {code: name for name, code in FIELD_NAMES.get(field, {}).items()}
    return names.get(int(value), f"{float(value):g}") if float(value).is_integer() else f"{value:g}"


def inherited_recipe(fit, axes: dict, given: dict) -> tuple[str, ...]:
    """One line naming the recipe fields (`RECIPE_FIELDS`) a sweep of a hybrid `fit`
    takes from the fit's run because the space gives them nowhere, when the space trains
    another workload than that run: the 175B run's interleave = 3 left a 70B space with
    pp = 1 "0 valid layouts", and its flash_attention = 0 every seq 4096 layout out of
    memory, with no word of where they came from."""
    if fit is None or hybrid_kind(fit.model) != "hybrid":
        return ()
    defaults = fit.config_defaults
    workload = WORKLOAD_FIELDS["hybrid"]
    other = any(k in given and given[k] != defaults.get(k) for k in workload) or any(
        k in axes and np.any(np.asarray(axes[k], dtype=float) != defaults.get(k)) for k in workload
    )
    named = {*axes, *given}
    if named & {"microbatches", "microbatch_size"}:  # either one gives the micro-batches
        named |= {"microbatches", "microbatch_size"}
    taken = [k for k in RECIPE_FIELDS if k in defaults and k not in named]
    if not other or not taken:
        return ()
    shown = ", ".join(f"{k} = {_code_name(k, defaults[k])}" for k in taken)
    return (
        f"another workload than the fit's run, run as that run was: {shown} (given nowhere); "
        "give them to change them",
    )


SEARCHED_OPTIONS: tuple[str, ...] = ("interleave", "recompute", "seq_parallel", "zero")
"""The layout options of the `hybrid` family that a layout search holds at their
defaults unless the space names them."""


def held_layout(model: AbstractScalingModel, axes: Mapping, fixed: set[str]) -> tuple[str, ...]:
    """One line naming the layout options a layout search of a `hybrid` model holds at
    their defaults because the space neither sweeps nor fixes them.

    A search of tp and pp that never tries sequence parallelism or ZeRO picks among
    layouts Megatron-LM runs faster with them, with no word that it did
    (`gpt3_175b_dgx_h100.toml` had no seq_parallel axis)."""
    if hybrid_kind(model) != "hybrid" or not {"tp", "pp"} & set(axes):
        return ()
    named = {*axes, *fixed}
    held = [n for n in SEARCHED_OPTIONS if n not in named]
    if not named & {"microbatches", "microbatch_size"}:
        held.insert(0, "microbatches")
    if not held:
        return ()
    defaults = Config(gpus=1.0)
    shown = ", ".join(f"{n} = {_code_name(n, float(getattr(defaults, n)))}" for n in held)
    return (
        f"the layout search holds {shown}: the space neither sweeps nor fixes "
        f"{'it' if len(held) == 1 else 'them'}; sweep under [axes] or fix under [fixed]",
    )


def default_warnings(model: AbstractScalingModel, given: set[str]) -> tuple[str, ...]:
    """One line per workload field (`WORKLOAD_FIELDS`) of a hybrid `model` not in `given`
    (a memory budget not given is `assumed_memory`'s)."""
    kind = hybrid_kind(model)
    if not kind:
        return ()
    left = [name for name in WORKLOAD_FIELDS[kind] if name not in given]
    lines = []
    if left:
        defaults = Config(gpus=1.0)
        shown = ", ".join(
            # heads 0 is read as hidden/128: "a toy model" it is not (review of 2026-12-06)
            f"{n} = 0 (hidden/128)" if n == "heads" else f"{n} = {float(getattr(defaults, n)):g}"
            for n in left
        )
        lines.append(
            f"the space leaves {shown} at the default, not your model's; give "
            f"{'it' if len(left) == 1 else 'them'} under [fixed] or as axes"
        )
    return tuple(lines)


def assumed_memory(model, fit: FitResult | None, budget: dict) -> tuple[str, ...]:
    """A line saying which memory budget a preset's sweep assumed (`model_memory_budget`);
    a fit's is the one its `predict` and `optimal` use, said nowhere new."""
    if fit is not None or not budget:
        return ()
    gpu, spec = model_gpu(model)
    total = spec["memory_bytes"]
    return (
        f"gpu_memory_bytes is not given: layouts are held to "
        f"{budget['gpu_memory_bytes'] / 2**30:.4g} GiB per GPU, "
        f"{budget['gpu_memory_bytes'] / total:.0%} of the {gpu}'s {total / 2**30:.4g} GiB "
        "(the rest is the CUDA context, NCCL buffers and fragmentation); give "
        "gpu_memory_bytes for another budget",
    )


def _run(request: _Request, progress: bool | None):
    """Stream the request's space; returns the reductions, the walk and its arguments."""
    axes, dtype, specs = request.axes, np.dtype(request.precision), request.model.parameter_specs()
    outer, inner = _order(axes, request.group, request.chunk_size)
    width = math.prod(len(axes[n]) for n in inner)
    rows = math.prod(len(axes[n]) for n in outer)

    def table(name, values):
        raw = specs[name].to_raw(values) if name in specs else values
        return np.asarray(raw, dtype=dtype)

    leaves, treedef = jax.tree_util.tree_flatten(request.model)
    outer_sizes = tuple(len(axes[n]) for n in outer)
    # Small spaces: no chunk longer than one device's share of the rows.
    share = -(-rows // len(request.devices)) * width
    block_axes, span = walk_shape(outer_sizes, width, max(width, min(request.chunk_size, share)))
    plan = Plan(
        outer_sizes=outer_sizes,
        inner_sizes=tuple(len(axes[n]) for n in inner),
        group_axes=len(request.group),
        block_axes=block_axes,
        span=span,
        # Room for the copies of one layout that `tables` lists once (`noop`).
        top_k=request.top_k * copies_per_layout(axes, request.fixed),
        key_dtype=INT_DTYPE[request.precision],
        counts=request.counts,
        pipelined=request.devices[0].platform == "cpu",
    )
    walk = Walk(
        plan=plan,
        treedef=treedef,
        outer=tuple(outer),
        inner=tuple(inner),
        fixed=tuple(sorted((n, float(v)) for n, v in request.fixed.items())),
        params=frozenset(n for n in axes if n in specs),
        objective=request.objective,
        per_step=request.per_step,
        kind=hybrid_kind(request.model),
        precision=request.precision,
        samples_to_target=request.samples_to_target,
    )
    # The Config axes every chunk spans whole: their values are known in each chunk.
    spanned = [*outer[len(outer) - plan.block_axes :], *inner] if plan.block_axes else inner
    walk = dataclasses.replace(
        walk,
        known=tuple((n, tuple(float(x) for x in axes[n])) for n in spanned if n not in specs),
    )
    args = (
        leaves,
        {},  # the fixed values are constants of the walk (`Walk.fixed`)
        [table(n, axes[n]) for n in outer],
        [table(n, axes[n]) for n in inner],
    )
    if plan.pipelined:  # a CPU: order the chunk's dimensions for XLA's loops
        walk = dataclasses.replace(walk, plan=arrange(plan, operations(walk, args)))
    ranker(walk, args)  # compiles the read-back in a thread while the stream compiles
    try:
        reduced = stream(walk.plan, evaluator(walk), args, request.devices, progress=progress)
    except ValueError as error:
        raise InputError(f"the space is too large to index: {error}")
    return reduced, walk, args
