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

from .._errors import InputError
from .._io import load_fit
from .._presets import build, FAMILIES
from .run import WHOLE_FIELDS

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


@dataclasses.dataclass(frozen=True)
class Space:
    """A parsed space file: what to sweep and how."""

    source: str
    model: object
    axes: dict[str, list[float]]
    fixed: dict[str, float]
    options: dict[str, object]


def _number(value, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{where}: expected a number, got {value!r}")
    return float(value)


def _range(spec: dict, where: str) -> list[float]:
    allowed = {"start", "stop", "step", "num", "scale"}
    unknown = sorted(set(spec) - allowed)
    if unknown:
        raise InputError(f"{where}.{unknown[0]}: unknown key; valid: {', '.join(sorted(allowed))}")
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
        if "scale" in spec:
            raise InputError(f"{where}.scale: only with num (a step range is linear)")
        count = math.floor((stop - start) / step * (1 + 1e-12)) + 1
        return [start + i * step for i in range(count)]
    num = spec["num"]
    if isinstance(num, bool) or not isinstance(num, int) or num < 1:
        raise InputError(f"{where}.num: expected a whole number ≥ 1, got {num!r}")
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
        values = [_number(v, f"{where}[{i}]") for i, v in enumerate(spec)]
    else:
        raise InputError(f"{where}: expected a list or a range table, got {spec!r}")
    if name in WHOLE_FIELDS:
        # Ranges land near whole numbers (2.0000000000000004); snap those.
        snapped = [round(v) if abs(v - round(v)) <= 1e-9 * max(1.0, abs(v)) else v for v in values]
        values = [float(v) for v in snapped]
    return values


def _table(document: dict, key: str, source: str) -> dict:
    value = document.get(key, {})
    if not isinstance(value, dict):
        raise InputError(f"{source}: [{key}] must be a table, got {value!r}")
    return value


def load_space(path: str | os.PathLike) -> Space:
    """Read and check a space file; errors name the file and the key."""
    source = os.fspath(path)
    if not os.path.isfile(source):
        raise InputError(f"{source}: no such file")
    try:
        with open(source, "rb") as stream:
            document = tomllib.load(stream)
    except tomllib.TOMLDecodeError as error:
        raise InputError(f"{source}: malformed TOML ({error})")
    except UnicodeDecodeError as error:
        raise InputError(f"{source}: not a text file ({error})")
    unknown = sorted(set(document) - set(SECTIONS))
    if unknown:
        raise InputError(f"{source}: unknown table [{unknown[0]}]; valid: {', '.join(SECTIONS)}")
    try:
        return _parse(document, source)
    except InputError as error:
        raise InputError(f"{source}: {error}")


def _parse(document: dict, source: str) -> Space:
    spec = _table(document, "model", source)
    unknown = sorted(set(spec) - {"family", "options", "fit"})
    if unknown:
        raise InputError(f"model.{unknown[0]}: unknown key; valid: family, options, fit")
    if ("fit" in spec) == ("family" in spec):
        raise InputError("model: give either family (a preset) or fit (a fit JSON file)")
    if "fit" in spec:
        if not isinstance(spec["fit"], str):
            raise InputError(f"model.fit: expected a file name, got {spec['fit']!r}")
        if "options" in spec:
            raise InputError("model.options: only with family, not with fit")
        model = load_fit(os.path.join(os.path.dirname(os.path.abspath(source)), spec["fit"]))
    else:
        family = spec["family"]
        if family not in FAMILIES:
            raise InputError(f"model.family: unknown {family!r}; valid: {', '.join(FAMILIES)}")
        options = spec.get("options", {})
        if not isinstance(options, dict):
            raise InputError(f"model.options: expected a table, got {options!r}")
        try:
            model = build(family, **options)
        except TypeError as error:
            raise InputError(f"model.options: {error}")
    fixed = {
        name: _number(value, f"fixed.{name}")
        for name, value in _table(document, "fixed", source).items()
    }
    axes_spec = _table(document, "axes", source)
    if not axes_spec:
        raise InputError("[axes]: no axes; give at least one, e.g. gpus = [8, 16, 32]")
    axes = {name: _axis_values(name, value) for name, value in axes_spec.items()}
    options = _table(document, "sweep", source)
    for name, value in options.items():
        if name not in SWEEP_OPTIONS:
            raise InputError(f"sweep.{name}: unknown option; valid: {', '.join(SWEEP_OPTIONS)}")
        kind = SWEEP_OPTIONS[name]
        if isinstance(value, bool) and kind is not bool or not isinstance(value, kind):
            raise InputError(f"sweep.{name}: got {value!r} of the wrong type")
    per = options.get("per", [])
    if not all(isinstance(p, str) for p in per):
        raise InputError(f"sweep.per: expected a list of axis names, got {per!r}")
    return Space(source, model, axes, fixed, dict(options))
