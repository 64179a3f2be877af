"""Saving and loading fits as versioned JSON."""

import datetime
import json
import math
import os

import jax
import numpy as np

from ._data import Benchmarks
from ._errors import InputError
from ._files import atomic_write, package_version
from ._fitting import Component, FitResult, to_numpy_leaves
from ._presets import build, FAMILIES

FORMAT = "perfmodel.fit"
SCHEMA_VERSION = 2


def _finite_or_none(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def fit_to_dict(fit: FitResult) -> dict:
    """The JSON-ready description of a fit (schema version `SCHEMA_VERSION`)."""
    if fit.family not in FAMILIES:
        raise InputError(
            f"only fits of the preset families ({', '.join(FAMILIES)}) can be saved; "
            f"this model is {fit.family!r}"
        )
    specs = fit.model.parameter_specs()
    errors = fit.standard_errors()
    parameters = {
        name: {
            "value": value,
            "unit": specs[name].unit,
            "description": specs[name].description,
            "fixed": name in fit.fixed,
            "log_stderr": _finite_or_none(errors.get(name, math.nan)),
        }
        for name, value in fit.parameters().items()
    }
    data = fit.data
    return {
        "format": FORMAT,
        "schema_version": SCHEMA_VERSION,
        "perfmodel_version": package_version(),
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "precision": fit.precision,
        "model": {
            "family": fit.family,
            "options": dict(fit.model.options),
            "components": [_component_to_dict(c) for c in fit.components],
            "intervals": fit.intervals,
            "assumed": fit.assumed,
        },
        "target": fit.target,
        "parameters": parameters,
        "free": list(fit.free),
        "bounds": {k: list(v) for k, v in fit.bounds.items()},
        "loss": {"kind": fit.loss_kind, "value": fit.loss},
        "quality": {
            "r2": _finite_or_none(fit.r2),
            "mape_percent": fit.mape,
            "converged": fit.converged,
            "message": fit.message,
            "num_steps": fit.num_steps,
            "warnings": list(fit.warnings),
        },
        # An undetermined parameter has an infinite variance: null in strict JSON.
        "raw_covariance": None
        if fit.raw_covariance is None
        else [[_finite_or_none(x) for x in row] for row in np.asarray(fit.raw_covariance)],
        "config_defaults": fit.config_defaults,
        "data": {
            "source": data.source,
            "gpus": data.gpus.tolist(),
            "time_s": data.time_s.tolist(),
            "lines": None if data.lines is None else np.asarray(data.lines).tolist(),
            "unit": data.unit,
            "scaling": data.scaling,
            "per_gpu": data.per_gpu,
            "config": {k: np.asarray(v).tolist() for k, v in data.config.items()},
        },
    }


def _component_to_dict(component: Component) -> dict:
    return {
        "family": component.family,
        "weight": component.weight,
        "options": dict(component.model.options),
        "parameters": {k: float(v) for k, v in component.model.parameters().items()},
    }


def _component_from_dict(document: dict) -> Component:
    model = build(document["family"], **document["options"])
    model = to_numpy_leaves(model.with_parameters(document["parameters"]))
    return Component(str(document["family"]), float(document["weight"]), model)


def save_fit(fit: FitResult, path: str | os.PathLike, extra: dict | None = None) -> None:
    """Write `fit` to `path` as JSON, atomically; `extra` adds top-level keys."""
    document = {**fit_to_dict(fit), **(extra or {})}
    with atomic_write(path) as stream:
        json.dump(document, stream, indent=2)
        stream.write("\n")


def _require(document: dict, key: str, source: str):
    if key not in document:
        raise InputError(f"{source}: not a perfmodel fit file (missing key {key!r})")
    return document[key]


def load_fit(path: str | os.PathLike) -> FitResult:
    """Read a fit written by `save_fit`; a clear error for other or newer files."""
    source = os.fspath(path)
    if not os.path.isfile(source):
        raise InputError(f"{source}: no such file")
    try:
        with open(source) as stream:
            document = json.load(stream)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise InputError(f"{source}: not a JSON fit file ({error})")
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise InputError(f"{source}: not a perfmodel fit file (format is not {FORMAT!r})")
    version = _require(document, "schema_version", source)
    if version != SCHEMA_VERSION:
        raise InputError(
            f"{source}: fit file schema version {version}, but this perfmodel reads "
            f"version {SCHEMA_VERSION}; refit with `perfmodel fit` to update it"
        )
    try:
        with jax.enable_x64(True):
            return _from_dict(document, source)
    except (KeyError, TypeError, ValueError) as error:
        raise InputError(f"{source}: malformed fit file ({error!r})")


def _from_dict(document: dict, source: str) -> FitResult:
    spec = document["model"]
    model = build(spec["family"], **spec["options"])
    values = {name: p["value"] for name, p in document["parameters"].items()}
    model = to_numpy_leaves(model.with_parameters(values))
    data_doc = document["data"]
    data = Benchmarks(
        source=data_doc["source"],
        gpus=np.asarray(data_doc["gpus"], dtype=np.float64),
        time_s=np.asarray(data_doc["time_s"], dtype=np.float64),
        target=document["target"],
        config={k: np.asarray(v, dtype=np.float64) for k, v in data_doc["config"].items()},
        lines=None if data_doc["lines"] is None else np.asarray(data_doc["lines"]),
        unit=str(data_doc.get("unit", "")),
        scaling=data_doc.get("scaling"),
        per_gpu=bool(data_doc.get("per_gpu", False)),
    )
    quality = document["quality"]
    predicted_q = data.as_measured(np.asarray(model(data.to_config()), dtype=np.float64))
    covariance = document["raw_covariance"]
    r2 = quality["r2"]
    return FitResult(
        model=model,
        data=data,
        loss_kind=document["loss"]["kind"],
        loss=float(document["loss"]["value"]),
        converged=bool(quality["converged"]),
        message=quality["message"],
        num_steps=int(quality["num_steps"]),
        r2=math.nan if r2 is None else float(r2),
        mape=float(quality["mape_percent"]),
        residuals=np.log(predicted_q / data.measured),
        free=tuple(document["free"]),
        fixed={n: p["value"] for n, p in document["parameters"].items() if p["fixed"]},
        bounds={k: tuple(v) for k, v in document["bounds"].items()},
        raw_covariance=None
        if covariance is None
        else np.array([[np.inf if x is None else x for x in row] for row in covariance]),
        warnings=tuple(quality["warnings"]),
        config_defaults={k: float(v) for k, v in document["config_defaults"].items()},
        precision=document["precision"],
        components=tuple(_component_from_dict(c) for c in spec.get("components", [])),
        intervals=str(spec.get("intervals", "laplace")),
        assumed=str(spec.get("assumed", "")),
    )
