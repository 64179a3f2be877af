"""Saving and loading fits as versioned, strict JSON (the schema is in `_schema`)."""

import datetime
import json
import math
import os

import jax
import numpy as np

from ._blend import Blend
from ._config import WORKLOAD_FIELDS
from ._data import Benchmarks
from ._errors import InputError
from ._files import atomic_write, package_version, read_text
from ._fitting import (
    blend_components,
    Component,
    FitResult,
    to_numpy_leaves,
    unanchored_residuals,
)
from ._jsontext import _finite_or_none, _numbers, strict_loads, StrictJSONError
from ._jsontext import finite_or_null as finite_or_null
from ._jsontext import to_json as to_json
from ._presets import build, FAMILIES, hybrid_kind
from ._schema import (
    check_document,
    data_digest,
    FORMAT,
    JOINT,
    LARGEST_VARIANCE,
    SCHEMA_VERSION,
)
from ._terms import first_invalid_layout


def _stored_covariance(covariance) -> list | None:
    """The covariance as saved: an entry larger than `LARGEST_VARIANCE` (a standard
    deviation past e^1000 in the stored log or logit) is a direction the data do not
    determine, so it is written as null (infinite), which is what the reader accepts."""
    if covariance is None:
        return None
    values = np.asarray(covariance, dtype=np.float64)
    return finite_or_null(np.where(np.abs(values) > LARGEST_VARIANCE, np.inf, values))


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
            **({} if fit.covariance_from == "measurements" else {"covariance_from": JOINT}),
        },
        "target": fit.target,
        "parameters": parameters,
        "free": list(fit.free),
        "bounds": {k: list(v) for k, v in fit.bounds.items()},
        "loss": {"kind": fit.loss_kind, "value": _finite_or_none(fit.loss)},
        "quality": {
            "r2": _finite_or_none(fit.r2),
            "mape_percent": _finite_or_none(fit.mape),
            "converged": fit.converged,
            "message": fit.message,
            "num_steps": fit.num_steps,
            "warnings": list(fit.warnings),
        },
        # null: an infinite (co)variance, a direction the data do not determine.
        "raw_covariance": _stored_covariance(fit.raw_covariance),
        "config_defaults": fit.config_defaults,
        "data": {
            "source": data.source,
            "gpus": _numbers(np.asarray(data.gpus)),
            "time_s": _numbers(np.asarray(data.time_s)),
            "lines": None if data.lines is None else _numbers(np.asarray(data.lines)),
            "unit": data.unit,
            "scaling": data.scaling,
            "per_gpu": data.per_gpu,
            "config": {k: _numbers(np.asarray(v)) for k, v in data.config.items()},
        },
    }


def _component_to_dict(component: Component) -> dict:
    # For reading by eye and by other tools: a blend's members are rebuilt from its
    # parameters (``"<member>.<term>.<param>"``), so these copies are never read back.
    written = {
        "family": component.model.family,
        "name": component.family,
        "weight": component.weight,
        "far": component.far,
        "options": _member_options(component.model),
        "parameters": _component_parameters(component),
    }
    return {**written, "anchor": True} if component.anchor else written


def _component_parameters(component: Component) -> dict[str, float]:
    """A member's parameters as `FitResult.parameters` gives the top-level copies (in
    float64): outside float64 the copies of a loaded fit disagreed in the 7th digit and
    its own `save_fit` refused them (review round 11)."""
    with jax.enable_x64(True):
        return {k: float(v) for k, v in component.model.parameters().items()}


def _member_options(model) -> dict:
    """A member's preset options; a blend's power laws keep their exponent in a leaf."""
    options = dict(model.options)
    if model.family == "power_law":
        options["exponent"] = float(model.terms[0].exponent)
    return options


def fit_json(fit: FitResult, extra: dict | None = None) -> str:
    """The fit file's text: `fit_to_dict` plus `extra` top-level keys, checked against the
    schema so that what is written can be read back."""
    document = {**fit_to_dict(fit), **(extra or {})}
    # The digest of the data as they will be read back (numbers as JSON writes them).
    document["data_sha256"] = data_digest(json.loads(to_json(document["data"])))
    text = to_json(document)
    check_document(json.loads(text), fit.data.source)
    return text


def save_fit(fit: FitResult, path: str | os.PathLike, extra: dict | None = None) -> str:
    """Write `fit` to `path` as strict JSON, atomically; `extra` adds top-level keys.
    Returns the text written."""
    text = fit_json(fit, extra)
    with atomic_write(path) as stream:
        stream.write(text)
    return text


def _constant(name: str) -> float:
    # NaN and ±Infinity are not JSON; read them as numbers so the schema can name the
    # field they appear in (only raw_covariance may hold Infinity, from older files).
    return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}[name]


def read_document(path: str | os.PathLike, what: str = "fit file"):
    """The parsed JSON of `path`; an InputError naming it for unreadable or non-JSON
    files (deep nesting included)."""
    source = os.fspath(path)
    text = read_text(source, what)
    try:
        return strict_loads(text, parse_constant=_constant)
    except (json.JSONDecodeError, StrictJSONError) as error:
        hint = ""
        if what == "fit file" and text.lstrip()[:1] not in ("{", "["):
            # Measurements (a CSV, a log) where a fit was expected: say the step between.
            hint = (
                f"; fit it first (perfmodel fit {source} -o fit.json, or pm.save_fit of a "
                "fit in Python), then use fit.json"
            )
        raise InputError(f"{source}: not a JSON {what} ({error}){hint}") from None
    except RecursionError:
        raise InputError(f"{source}: not a JSON {what} (nested too deeply)") from None


def load_fit(path: str | os.PathLike) -> FitResult:
    """Read a fit written by `save_fit`, checking every field (`_schema`).

    Raises:
        InputError: naming the file and the field, for unreadable, other or newer files
            and any value out of range.
    """
    source = os.fspath(path)
    document = read_document(source)
    model = check_document(document, source)
    with jax.enable_x64(True):
        return _from_dict(document, model, source)


def _check_workload_defaults(document: dict, model, data: Benchmarks, source: str) -> None:
    """A hybrid fit predicts the workload of its run on the most GPUs (`config_defaults`
    as `perfmodel._fitting` writes them): a file whose defaults lost or changed a shape
    field of that run (hidden deleted answered 1.5 s for an 18 s run) is refused."""
    if hybrid_kind(model) != "hybrid":
        return
    defaults = document["config_defaults"]
    largest = int(np.argmax(data.gpus))
    for name in WORKLOAD_FIELDS["hybrid"]:
        if name not in data.config:
            continue
        run = float(np.asarray(data.config[name])[largest])
        if name not in defaults or not math.isclose(float(defaults[name]), run, rel_tol=1e-12):
            got = defaults.get(name, "missing")
            raise InputError(
                f"{source}: config_defaults.{name}: expected {run:g}, the run on the most GPUs "
                f"(data.config.{name}), got {got}"
            )


def _check_measured_layouts(model, data: Benchmarks, source: str) -> None:
    """A hybrid fit's runs have layouts Megatron-LM can run, as `perfmodel fit` checked
    them (`layout_status`); a file read without ``data_sha256`` whose ``data.config``
    says otherwise (tp 3 at 8 GPUs, an edit) is refused, naming the run."""
    if hybrid_kind(model) != "hybrid":
        return
    invalid = first_invalid_layout(data.to_config(), "hybrid")
    if invalid is not None:
        i, reason = invalid
        line = "" if data.lines is None else f" (line {int(data.lines[i])} of {data.source})"
        raise InputError(
            f"{source}: data.config: run {i}{line} has a layout that could not run "
            f"({reason}); a measured run's layout can run"
        )


def _from_dict(document: dict, model, source: str) -> FitResult:
    spec = document["model"]
    values = {name: float(p["value"]) for name, p in document["parameters"].items()}
    if isinstance(model, Blend):  # built again in float64: its exponents are array leaves
        options = dict(spec.get("options", {}))
        carried = options.pop("carried", {})  # a what-if's fitted values (`Blend.carrying`)
        model = build(spec["family"], **options).with_parameters({**values, **carried})
        model = model.carrying(carried)
    model = to_numpy_leaves(model.with_parameters(values))
    data_doc = document["data"]
    data = Benchmarks(
        source=data_doc["source"],
        gpus=np.asarray(data_doc["gpus"], dtype=np.float64),
        time_s=np.asarray(data_doc["time_s"], dtype=np.float64),
        target=document["target"],
        config={k: np.asarray(v, dtype=np.float64) for k, v in data_doc["config"].items()},
        lines=None if data_doc.get("lines") is None else np.asarray(data_doc["lines"], dtype=int),
        unit=str(data_doc.get("unit", "")),
        scaling=data_doc.get("scaling"),
        per_gpu=bool(data_doc.get("per_gpu", False)),
    )
    quality = document["quality"]
    predicted = np.asarray(model(data.to_config()), dtype=np.float64)
    if not np.all(np.isfinite(predicted) & (predicted > 0)):
        raise InputError(
            f"{source}: parameters: the model predicts a non-finite or non-positive step "
            "time at the measured GPU counts; the values cannot come from a fit"
        )
    predicted_q = data.as_measured(predicted)
    covariance = document["raw_covariance"]
    if covariance is not None:
        covariance = [[math.inf if v is None else float(v) for v in row] for row in covariance]
    _check_workload_defaults(document, model, data, source)
    if "data_sha256" not in document:  # else the runs are as fitted
        _check_measured_layouts(model, data, source)
    r2, mape, loss = quality["r2"], quality["mape_percent"], document["loss"]["value"]
    return FitResult(
        model=model,
        data=data,
        loss_kind=document["loss"]["kind"],
        loss=math.nan if loss is None else float(loss),
        converged=bool(quality["converged"]),
        message=quality["message"],
        num_steps=int(quality["num_steps"]),
        r2=math.nan if r2 is None else float(r2),
        mape=math.nan if mape is None else float(mape),
        residuals=np.log(predicted_q / data.measured),
        free=tuple(document["free"]),
        fixed={n: float(p["value"]) for n, p in document["parameters"].items() if p.get("fixed")},
        bounds={
            k: tuple(None if v is None else float(v) for v in pair)
            for k, pair in document["bounds"].items()
        },
        raw_covariance=None if covariance is None else np.asarray(covariance, dtype=np.float64),
        warnings=tuple(quality["warnings"]),
        config_defaults={k: float(v) for k, v in document["config_defaults"].items()},
        precision=document["precision"],
        components=blend_components(model) if isinstance(model, Blend) else (),
        unanchored_residuals=unanchored_residuals(model, data)
        if isinstance(model, Blend)
        else None,
        intervals=str(spec.get("intervals", "laplace")),
        assumed=str(spec.get("assumed", "")),
        covariance_from=str(spec.get("covariance_from", "measurements")),
    )
