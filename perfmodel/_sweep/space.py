"""Design spaces described in TOML: what to sweep (a model, fixed values, axes) and how.

A space file has four tables::

    [model]                      # a preset and its options, or fit = "fit.json"
    family = "hybrid"
    options = { flops = 4e14 }

    [fixed]                      # single values of Config fields or model parameters
    layers = 96

    [axes]                       # lists, or ranges {start, stop, step} (both ends
    tp = [1, 2, 4, 8]            # included) or {start, stop, num, scale = "log"}
    gpus = { start = 8, stop = 4096, step = 8 }
    "allreduce.bandwidth_inter" = [25e9, 50e9]

    [sweep]                      # options of `perfmodel.sweep`
    objective = "time"
    per = ["gpus"]
"""

import dataclasses
import math
import os
import sys

import numpy as np

from .. import _closed
from .._config import check_memory_unit, FIELD_NAMES
from .._errors import InputError
from .._files import read_bytes
from .._fitting import FitResult
from .._io import load_fit
from .._keywords import did_you_mean
from .._levels import LARGEST_COUNT
from .._presets import BASIC_ONLY_OPTIONS, hybrid_kind
from .._reads import unread, unread_line
from .._schema import check_options
from .._terms import gpu_named
from .run import check_chunk_size, WHOLE_FIELDS

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

SECTIONS = ("model", "fixed", "axes", "sweep")
SWEEP_OPTIONS = {
    "objective": str,
    "per": list,
    "top_k": int,
    "pareto": bool,
    "counts": bool,
    "precision": str,
    "chunk_size": int,
    "max_configs": (int, float),
}
DEFAULT_MAX_CONFIGS = 1e9
# Values one axis may list without yes=True: each is held in memory and written into the
# result. Design spaces of 10⁹ and more come from the product of several axes.
MAX_AXIS_VALUES = 1_000_000
# Values one axis may list even with yes=True: ten million floats are a few hundred MB as
# Python lists; 8·10¹² values (a range to 8e12 by 8) ran the machine out of memory.
HARD_AXIS_VALUES = 10_000_000


@dataclasses.dataclass(frozen=True)
class Space:
    """A parsed space file: what to sweep and how; `inputs` are the files it read (the
    space file, and the fit file its model came from)."""

    source: str
    model: object
    axes: dict[str, list[float]]
    fixed: dict[str, float]
    options: dict[str, object]
    inputs: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


# How a sweep option's expected type reads in a message ("of the wrong type" said none).
_KIND_WORDS = {
    int: "a whole number",
    float: "a number",
    str: "a string",
    bool: "true or false",
    list: "a list",
}


def _number(value, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{where}: expected a number, got {value!r}")
    if not math.isfinite(value):
        raise InputError(f"{where}: expected a finite number, got {value!r}")
    return float(value)


def _coded(name: str, value, where: str | None = None):
    """A field's code for a name it may be given by (`FIELD_NAMES`: ``recompute =
    "full"``, as a CSV and ``--recompute`` take it), else `value` as it is; errors name
    `where` (``axes.recompute[3]``), else the field."""
    names = FIELD_NAMES.get(name, {})
    if not isinstance(value, str) or not names:
        return value
    if value.strip().lower() not in names:
        codes = ", ".join(f"{n} ({c})" for n, c in names.items())
        raise InputError(f"{where or name}: expected one of {codes}, got {value!r}")
    return names[value.strip().lower()]


def _range_spec(spec: dict, where: str) -> tuple[float, float, float | None, int | None]:
    """A range table's ``(start, stop, step, num)``, one of step and num None, checked."""
    allowed = {"start", "stop", "step", "num", "scale"}
    unknown = sorted(set(spec) - allowed)
    if unknown:
        hint = did_you_mean(unknown[0], allowed)
        raise InputError(
            f"{where}.{unknown[0]}: unknown key{hint}; valid: {', '.join(sorted(allowed))}"
        )
    for key in ("start", "stop"):
        if key not in spec:
            raise InputError(f"{where}: a range needs {key!r} (and step, or num)")
    start, stop = _number(spec["start"], f"{where}.start"), _number(spec["stop"], f"{where}.stop")
    if ("step" in spec) == ("num" in spec):
        raise InputError(f"{where}: give exactly one of step and num")
    if stop < start:
        raise InputError(f"{where}: stop {stop:g} is below start {start:g}")
    if "step" in spec:
        step = _number(spec["step"], f"{where}.step")
        if step <= 0:
            raise InputError(f"{where}.step: expected a positive number, got {step:g}")
        return start, stop, step, None
    num = spec["num"]
    if isinstance(num, bool) or not isinstance(num, int) or num < 1:
        raise InputError(f"{where}.num: expected a whole number ≥ 1, got {num!r}")
    if num == 1 and stop != start:  # it gave [start], `stop` unread
        raise InputError(
            f"{where}.num: 1 value cannot span {start:g} to {stop:g}; give num ≥ 2, or a list"
        )
    return start, stop, None, num


def _step_count(start: float, stop: float, step: float, where: str) -> int:
    count = (stop - start) / step * (1 + 1e-12)
    if not count < HARD_AXIS_VALUES:  # also inf, from a step of 1e-320
        raise InputError(
            f"{where}: a range of {count + 1:.4g} values, more than the {HARD_AXIS_VALUES:.0e} "
            "one axis may hold (large spaces come from several axes); use a larger step"
        )
    return math.floor(count) + 1


def _count(spec, where: str) -> int:
    """How many values an axis has, from its list or range, before any is built."""
    if isinstance(spec, list):
        return len(spec)
    if not isinstance(spec, dict):
        raise InputError(f"{where}: expected a list or a range table, got {spec!r}")
    start, stop, step, num = _range_spec(spec, where)
    return num if step is None else _step_count(start, stop, step, where)


def _check_size(axes_spec: dict, limit: float, yes: bool, source: str) -> None:
    """Refuse, before building any axis, a space larger than `limit` configurations or
    an axis longer than `MAX_AXIS_VALUES`, unless `yes`; and an axis longer than
    `HARD_AXIS_VALUES` in any case."""
    counts = {name: _count(spec, f"axes.{name}") for name, spec in axes_spec.items()}
    for name, count in counts.items():
        if count > HARD_AXIS_VALUES:
            raise InputError(
                f"axes.{name}: {count:.4g} values in one axis, more than the "
                f"{HARD_AXIS_VALUES:.0e} one axis may hold (large spaces come from several axes)"
            )
    if yes:
        return
    for name, count in counts.items():
        if count > MAX_AXIS_VALUES:
            raise InputError(
                f"axes.{name}: {count:.4g} values in one axis, more than "
                f"{MAX_AXIS_VALUES:.0e}; pass {{arg:yes}} to build it anyway (large spaces "
                "come from several axes)"
            )
    total = math.prod(counts.values())
    if total > limit:
        raise InputError(
            f"the space has {total:.4g} configurations, more than the maximum {limit:.4g}; "
            "pass {arg:yes} to sweep it anyway, or {arg:max_configs}"
        )


def _range(spec: dict, where: str) -> list[float]:
    start, stop, step, num = _range_spec(spec, where)
    if step is not None:
        if "scale" in spec:
            raise InputError(f"{where}.scale: only with num (a step range is linear)")
        return [start + i * step for i in range(_step_count(start, stop, step, where))]
    scale = spec.get("scale", "linear")
    if scale == "linear":
        return np.linspace(start, stop, num).tolist()
    if scale == "log":
        if start <= 0:
            raise InputError(f"{where}.start: a log range needs start > 0, got {start:g}")
        return np.geomspace(start, stop, num).tolist()
    raise InputError(f"{where}.scale: expected 'linear' or 'log', got {scale!r}")


def _axis_values(name: str, spec) -> list[float]:
    where = f"axes.{name}"
    if isinstance(spec, dict):
        values = _range(spec, where)
    elif isinstance(spec, list):
        if not spec:
            raise InputError(f"{where}: empty list; give at least one value")
        at = [f"{where}[{i}]" for i in range(len(spec))]
        values = [_number(_coded(name, v, w), w) for v, w in zip(spec, at)]
    else:
        raise InputError(f"{where}: expected a list or a range table, got {spec!r}")
    if name in WHOLE_FIELDS:
        # Ranges land near whole numbers (2.0000000000000004); snap those.
        snapped = [round(v) if abs(v - round(v)) <= 1e-9 * max(1.0, abs(v)) else v for v in values]
        values = [float(v) for v in snapped]
    if name == "gpus" and max(values) > LARGEST_COUNT:
        # predict, explain and benchmark CSVs stop at 10⁷; a sweep answered 1e9 GPUs.
        raise InputError(
            f"{where}: expected GPU counts from 1 to {LARGEST_COUNT:,}, got {max(values):g}"
        )
    check_memory_unit(where, name, min(values))
    return values


def _table(document: dict, key: str, source: str) -> dict:
    value = document.get(key, {})
    if not isinstance(value, dict):
        raise InputError(f"[{key}] must be a table, got {value!r}")
    return value


def load_space(
    path: str | os.PathLike, *, max_configs: float | None = None, yes: bool = False
) -> Space:
    """Read and check a space file; errors name the file and the key.

    Args:
        path: the TOML file.
        max_configs: refuse spaces with more configurations (default: the file's
            ``sweep.max_configs``, else `DEFAULT_MAX_CONFIGS`), counted before any axis
            is built; axes longer than `MAX_AXIS_VALUES` are refused too.
        yes: build and return the space whatever its size.
    """
    source = os.fspath(path)
    document = read_space_document(source)
    try:
        return _parse(document, source, max_configs, yes)
    except InputError as error:
        raise InputError(f"{source}: {error.template}")


def read_space_document(source: str) -> dict:
    """The TOML of a space file, its tables checked by name (no JAX: `sweep
    --distributed` reads it before joining the cluster)."""
    content = read_bytes(source, "space file")
    try:
        document = tomllib.loads(content.decode("utf-8-sig"))  # a BOM, as CSVs may have
    except tomllib.TOMLDecodeError as error:
        raise InputError(f"{source}: malformed TOML ({error})")
    except UnicodeDecodeError as error:
        raise InputError(f"{source}: not a text file ({error})")
    except RecursionError:
        raise InputError(f"{source}: malformed TOML (nested too deeply)")
    unknown = sorted(set(document) - set(SECTIONS))
    if unknown:
        hint = did_you_mean(unknown[0], SECTIONS)
        raise InputError(
            f"{source}: unknown table [{unknown[0]}]{hint}; valid: {', '.join(SECTIONS)}"
        )
    return document


def _limit(options: dict, max_configs: float | None) -> float:
    limit = options.get("max_configs", DEFAULT_MAX_CONFIGS) if max_configs is None else max_configs
    if isinstance(limit, bool) or not isinstance(limit, (int, float)) or not limit > 0:
        raise InputError(f"max_configs: expected a positive number, got {limit!r}")
    return float(limit)


def _check_read(model, axes: dict, fixed: dict) -> None:
    """Refuse an axis or fixed value of a `Config` field that the model does not read:
    a sweep over it would list its values side by side with the same times."""
    fit = model if isinstance(model, FitResult) else None
    model = fit.model if fit is not None else model
    for table, names in (("axes", axes), ("fixed", fixed)):
        left, read = unread(model, names, per_step=fit is None or fit.target == "time")
        if left:
            raise InputError(f"{table}.{left[0]}: {unread_line(model.family, left[0], read)}")


# Config fields whose default, 1.0, stands for "unknown" in a fit (its bandwidth is then
# in messages/s): in a preset's space it is a 1-byte gradient or input.
PLACEHOLDERS = {
    "message_bytes": "the gradient's bytes per data-parallel rank",
    "input_bytes": "the input's bytes per step",
    "flops_per_sample": "FLOPs of one sample's forward and backward",
    "sample_bytes": "one sample's input bytes",
}


def _placeholders_left(model, axes: dict, fixed: dict) -> list[str]:
    """A note per field a preset reads and the space leaves at its placeholder 1.0 (a
    data_parallel space without message_bytes swept a 1-byte all-reduce, silently)."""
    if hybrid_kind(model):  # the hybrid families name workload fields left out themselves
        return []
    _, read = unread(model, ())
    return [
        f"{name} is read by the {model.family} model but not given: it stays 1 (a "
        f"placeholder), so the sweep prices {what} at 1; give it in [fixed] or [axes]"
        for name, what in PLACEHOLDERS.items()
        if name in read and name not in axes and name not in fixed
    ]


def _gpu(options: dict) -> str:
    """The GPU a hybrid preset's options name (`gpu_named`; A100-80GB by default)."""
    return gpu_named(options.get("gpu", "A100-80GB"))


def _past_the_batch(fit, axes: dict, fixed: dict) -> tuple[dict, list[str]]:
    """`axes` without the GPU counts of a sweep of a fit past its fixed global batch (the
    space's, else the measurements' one value), and a note naming them: each GPU would get
    less than a sample, which `predict` says and `optimal` stops at. The sweep ranked
    1024 GPUs of a 256-sample batch without a word (review round 10b), then with a warning
    but still first (round 11).

    Raises:
        InputError: every count is past the batch.
    """
    if "gpus" not in axes or "global_batch" in axes or hybrid_kind(fit.model):
        return axes, []
    batch = fixed.get("global_batch")
    if batch is None:
        batch = _closed.fixed_global_batch(fit.data.config.get("global_batch"))
    past = [g for g in axes["gpus"] if batch is not None and g > batch]
    if not past:
        return axes, []
    shown = ", ".join(f"{g:g}" for g in past[:6]) + (", …" if len(past) > 6 else "")
    kept = [g for g in axes["gpus"] if g <= batch]
    if not kept:
        raise InputError(
            f"axes.gpus: every count ({shown}) is past the fixed global batch of {batch:g}: "
            "a GPU would get less than one sample; give counts up to the batch, or a "
            "global_batch axis or fixed value"
        )
    note = (
        f"gpus {shown}: past the fixed global batch of {batch:g}, a GPU gets less than one "
        "sample (no run can do that): left out of the sweep"
    )
    return axes | {"gpus": kept}, [note]


def _parse(document: dict, source: str, max_configs: float | None, yes: bool) -> Space:
    spec = _table(document, "model", source)
    notes = []
    unknown = sorted(set(spec) - {"family", "options", "fit"})
    if unknown:
        hint = did_you_mean(unknown[0], ("family", "options", "fit"))
        raise InputError(f"model.{unknown[0]}: unknown key{hint}; valid: family, options, fit")
    if ("fit" in spec) == ("family" in spec):
        raise InputError("model: give either family (a preset) or fit (a fit JSON file)")
    if "fit" in spec:
        if not isinstance(spec["fit"], str):
            raise InputError(f"model.fit: expected a file name, got {spec['fit']!r}")
        if "options" in spec:
            raise InputError("model.options: only with family, not with fit")
        fit_path = os.path.join(os.path.dirname(os.path.abspath(source)), spec["fit"])
        model = load_fit(fit_path)
    else:
        family = spec["family"]
        if not isinstance(family, str):
            raise InputError(f"model.family: expected a family name, got {family!r}")
        model = check_options(family, spec.get("options", {}))
        options = spec.get("options", {})
        calibrated = "e_max" in options or "d0" in options
        if hybrid_kind(model) == "hybrid" and not calibrated and _gpu(options) != "A100-80GB":
            notes.append(
                f"the hybrid model's GEMM efficiency (e_max, d0) was calibrated on A100 runs "
                f"only; on {_gpu(options)} it is a guess (answers may be optimistic): fit it "
                "on your runs (perfmodel fit runs.csv --model hybrid) and sweep with fit = "
                '"fit.json", or give options e_max and d0'
            )
        if family == "hybrid" and hybrid_kind(model) == "hybrid_basic":
            basic = sorted(BASIC_ONLY_OPTIONS & set(spec.get("options", {})))
            notes.append(
                f"model.options {', '.join(basic)}: options of hybrid_basic (the legacy "
                "model, without Megatron-LM terms), which this space runs; drop them for the "
                'Megatron-LM hybrid, or write family = "hybrid_basic"'
            )
    fixed = {
        name: _number(_coded(name, value, f"fixed.{name}"), f"fixed.{name}")
        for name, value in _table(document, "fixed", source).items()
    }
    for name, value in fixed.items():
        check_memory_unit(f"fixed.{name}", name, value)
    axes_spec = _table(document, "axes", source)
    if not axes_spec:
        raise InputError("[axes]: no axes; give at least one, e.g. gpus = [8, 16, 32]")
    options = _table(document, "sweep", source)
    _check_size(axes_spec, _limit(options, max_configs), yes, source)
    axes = {name: _axis_values(name, value) for name, value in axes_spec.items()}
    _check_read(model, axes, fixed)
    if "fit" in spec:
        axes, past = _past_the_batch(model, axes, fixed)
        notes += past
    else:
        notes += _placeholders_left(model, axes, fixed)
    for name, value in options.items():
        if name not in SWEEP_OPTIONS:
            raise InputError(
                f"sweep.{name}: unknown option{did_you_mean(name, SWEEP_OPTIONS)}; valid: "
                + ", ".join(SWEEP_OPTIONS)
            )
        kind = SWEEP_OPTIONS[name]
        if isinstance(value, bool) and kind is not bool or not isinstance(value, kind):
            kinds = kind if isinstance(kind, tuple) else (kind,)
            expected = " or ".join(_KIND_WORDS.get(k, k.__name__) for k in kinds)
            raise InputError(f"sweep.{name}: expected {expected}, got {value!r}")
        if name == "chunk_size":
            check_chunk_size(value, "sweep.chunk_size")
        if name == "top_k" and value < 1:
            raise InputError(f"sweep.{name}: expected a whole number ≥ 1, got {value!r}")
    per = options.get("per", [])
    if not all(isinstance(p, str) for p in per):
        raise InputError(f"sweep.per: expected a list of axis names, got {per!r}")
    inputs = (source, fit_path) if "fit" in spec else (source,)
    return Space(source, model, axes, fixed, dict(options), inputs, tuple(notes))
