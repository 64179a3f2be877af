"""Time-to-train fits in fit files: the step fit as `perfmodel.save_fit` writes it, and a
``time_to_train`` section beside it (versioned on its own, read strictly).

The section::

    "time_to_train": {
      "version": 1,
      "family": "critical_batch",
      "work_unit": "samples", "samples_per_unit": 1.0,
      "parameters": {"work_min": {"value", "unit", "description"},
                     "noise_batch": {"value", "unit", "description"}},
      "noise_batch_interval": {"level": 0.9, "lo": 2228.4, "hi": 3513.7},   # null: open
      "bound": "", "message": "...", "noise": 0.02, "noise_floor": 0.02,
      "drift": {"tau", "dof", "origins", "prior", "prior_dof"},
      "runs": {"source", "time_to_train_s", "work"}   # rows of the step fit's data
    }

On reading, the critical batch is refitted to the runs and must give the saved values;
the step fit's data (GPU counts, batches) are the runs' configurations.
"""

import dataclasses
import json
import math
import os

import numpy as np

from .._errors import InputError
from .._files import read_bytes
from .._io import fit_to_dict, load_fit, save_fit
from .._readers import TrainingRuns, WORK_UNITS
from .drift import Drift
from .family import TimeToTrainFit
from .profile import fit_critical_batch

SECTION = "time_to_train"
VERSION = 1
_KEYS = {
    "version",
    "family",
    "work_unit",
    "samples_per_unit",
    "parameters",
    "noise_batch_interval",
    "bound",
    "message",
    "noise",
    "noise_floor",
    "drift",
    "runs",
}
_DRIFT_KEYS = {"tau", "dof", "origins", "prior", "prior_dof"}
_RUN_KEYS = {"source", "time_to_train_s", "work"}
LEVEL = 0.9


def _check_seconds(seconds: np.ndarray, steps: np.ndarray, step, source: str) -> None:
    """Each run's time to train is its steps (work in samples / global batch) times the
    step time the step fit was fitted to (``data.time_s``, `family` module docstring):
    an edited time (tripled, say) changed every interval without a word."""
    expected = steps * np.asarray(step.data.time_s, dtype=np.float64)
    bad = ~np.isclose(seconds, expected, rtol=1e-6, atol=0.0)
    for i in np.flatnonzero(bad)[:1]:
        raise InputError(
            f"{source}: {SECTION}.runs.time_to_train_s[{i}]: {seconds[i]:.6g} is not its "
            f"steps times its step time in data.time_s ({expected[i]:.6g}); the file was "
            "edited or its runs changed: refit"
        )


def _finite(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def section(fit: TimeToTrainFit) -> dict:
    """The ``time_to_train`` section of `fit` (version `VERSION`)."""
    lo, hi = fit.noise_batch_interval(LEVEL)
    unit = fit.work_unit
    return {
        "version": VERSION,
        "family": "critical_batch",
        "work_unit": unit,
        "samples_per_unit": fit.samples_per_unit,
        "parameters": {
            "work_min": {
                "value": fit.work_min,
                "unit": unit,
                "description": "work to the target with a vanishing batch, E_min",
            },
            "noise_batch": {
                "value": fit.noise_batch,
                "unit": "samples",
                "description": "critical batch B_noise: E = E_min·(1 + B/B_noise)",
            },
        },
        "noise_batch_interval": {"level": LEVEL, "lo": _finite(lo), "hi": _finite(hi)},
        "bound": fit.critical.bound,
        "message": fit.critical.message,
        "noise": fit.critical.noise,
        "noise_floor": fit.critical.noise_floor,
        "drift": {
            "tau": fit.drift.tau,
            "dof": _finite(fit.drift.dof),  # null: the prior alone (a normal quantile)
            "origins": fit.drift.origins,
            "prior": fit.drift.prior,
            "prior_dof": _finite(fit.drift.prior_dof),
        },
        "runs": {
            "source": fit.source,
            "time_to_train_s": fit.runs.data.time_s.tolist(),
            "work": fit.runs.work.tolist(),
        },
    }


def time_to_train_document(fit: TimeToTrainFit) -> dict:
    """The whole fit file of `fit`: the step fit's document and the section."""
    return {**fit_to_dict(fit.step), SECTION: section(fit)}


def save_time_to_train(fit: TimeToTrainFit, path: str | os.PathLike, extra=None) -> None:
    """Write `fit` to `path` (atomically): `perfmodel.save_fit` of its step fit, with the
    ``time_to_train`` section; `extra` adds other top-level keys."""
    save_fit(fit.step, path, {**(extra or {}), SECTION: section(fit)})


def has_time_to_train(path: str | os.PathLike) -> bool:
    """Whether the fit file at `path` has a ``time_to_train`` section (False for a file
    that is missing or not JSON: `load_fit` reports those)."""
    try:
        document = json.loads(read_bytes(path))
    except (InputError, ValueError, RecursionError):
        return False
    return isinstance(document, dict) and SECTION in document


def _get(mapping, key: str, where: str, kind, source: str):
    if not isinstance(mapping, dict) or key not in mapping:
        raise InputError(f"{source}: {where}: missing key {key!r}")
    value = mapping[key]
    names = {float: "a number", int: "a whole number", str: "a string", dict: "an object"}
    names[list] = "a list"
    ok = isinstance(value, (int, float)) if kind is float else isinstance(value, kind)
    if isinstance(value, bool) or not ok:
        raise InputError(f"{source}: {where}.{key}: expected {names[kind]}, got {value!r}")
    if kind is float and not _finite_number(value):  # NaN, Infinity, an integer past 1e308
        raise InputError(f"{source}: {where}.{key}: expected a finite number, got {value!r:.40}")
    return value


def _finite_number(value) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _exact_keys(mapping: dict, keys: set, where: str, source: str) -> None:
    unknown = sorted(set(mapping) - keys)
    if unknown:
        raise InputError(
            f"{source}: {where}: unknown key {unknown[0]!r}; valid: {', '.join(sorted(keys))}"
        )


def _positive(value, where: str, source: str) -> float:
    if not (_finite_number(value) and value > 0):
        raise InputError(f"{source}: {where}: expected a positive number, got {value!r:.40}")
    return float(value)


def _positive_list(values: list, n: int, where: str, source: str) -> np.ndarray:
    if len(values) != n:
        raise InputError(f"{source}: {where}: {len(values)} values for {n} runs")
    for i, value in enumerate(values):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise InputError(f"{source}: {where}[{i}]: expected a number, got {value!r}")
        _positive(value, f"{where}[{i}]", source)
    return np.asarray(values, float)


# The largest drift of log time to train per doubling a file may state: e¹⁰ per doubling
# is past any fitted run (the fits give about 0.1).
MAX_DRIFT = 10.0


def _check_derived(doc: dict, critical, source: str) -> None:
    """The section's noise and B_noise interval are what its runs give (they are printed
    from the file, and refitted on load): an edited value is refused, as parameters are."""
    noise = doc["noise"]
    if not math.isclose(noise, critical.noise, rel_tol=1e-6, abs_tol=1e-12):
        raise InputError(
            f"{source}: {SECTION}.noise: {noise:.6g} is not what its runs give "
            f"({critical.noise:.6g}); the file was edited or its runs changed: refit"
        )
    interval = doc["noise_batch_interval"]
    level = interval["level"]
    if level != LEVEL:
        raise InputError(f"{source}: {SECTION}.noise_batch_interval.level: expected {LEVEL}")
    for key, refit in zip(("lo", "hi"), critical.noise_batch_range(LEVEL)):
        value, refit = interval[key], _finite(refit)
        same = value is None and refit is None
        if not same and isinstance(value, (int, float)) and not isinstance(value, bool):
            same = refit is not None and math.isclose(value, refit, rel_tol=1e-6)
        if not same:
            raise InputError(
                f"{source}: {SECTION}.noise_batch_interval.{key}: {value!r:.40} is not what "
                f"its runs give ({refit!r}); the file was edited or its runs changed: refit"
            )


def load_time_to_train(path: str | os.PathLike) -> TimeToTrainFit:
    """Read a time-to-train fit written by `save_time_to_train`.

    Raises:
        InputError: a file `load_fit` refuses, one without a ``time_to_train`` section
            (refit with ``perfmodel fit --time-to-train``), or a malformed section
            (one line naming the key).
    """
    source = os.fspath(path)
    step = load_fit(source)
    with open(source) as stream:
        document = json.load(stream)
    if SECTION not in document:
        raise InputError(
            f"{source}: a fit of the step time only (no {SECTION!r} section); fit time to "
            "train with `perfmodel fit --time-to-train` (or MLPerf logs) first"
        )
    doc = _get(document, SECTION, "fit file", dict, source)
    _exact_keys(doc, _KEYS, SECTION, source)
    version = _get(doc, "version", SECTION, int, source)
    if version != VERSION:
        raise InputError(
            f"{source}: {SECTION}.version is {version}, but this perfmodel reads version "
            f"{VERSION}; refit with `perfmodel fit --time-to-train`"
        )
    if _get(doc, "family", SECTION, str, source) != "critical_batch":
        raise InputError(f"{source}: {SECTION}.family: expected 'critical_batch'")
    unit = _get(doc, "work_unit", SECTION, str, source)
    if unit not in WORK_UNITS:
        raise InputError(
            f"{source}: {SECTION}.work_unit: expected one of {', '.join(WORK_UNITS)}, got {unit!r}"
        )
    per_unit = _positive(
        _get(doc, "samples_per_unit", SECTION, float, source), f"{SECTION}.samples_per_unit", source
    )
    runs_doc = _get(doc, "runs", SECTION, dict, source)
    _exact_keys(runs_doc, _RUN_KEYS, f"{SECTION}.runs", source)
    n = step.data.gpus.size
    where = f"{SECTION}.runs"
    seconds = _get(runs_doc, "time_to_train_s", where, list, source)
    seconds = _positive_list(seconds, n, f"{where}.time_to_train_s", source)
    work = _positive_list(_get(runs_doc, "work", where, list, source), n, f"{where}.work", source)
    if "global_batch" not in step.data.config:
        raise InputError(f"{source}: data.config: no global_batch, which time to train needs")
    _check_seconds(seconds, work * per_unit / step.data.config["global_batch"], step, source)
    for key, kind in (("bound", str), ("message", str), ("noise", float)):
        _get(doc, key, SECTION, kind, source)
    interval = _get(doc, "noise_batch_interval", SECTION, dict, source)
    if set(interval) != {"level", "lo", "hi"}:
        raise InputError(f"{source}: {SECTION}.noise_batch_interval: expected level, lo, hi")
    floor = _get(doc, "noise_floor", SECTION, float, source)
    floor = _positive(floor, f"{SECTION}.noise_floor", source)
    if floor > 1:  # a relative scatter (the fits write 0.02); 1e308 overflowed its square
        raise InputError(
            f"{source}: {SECTION}.noise_floor: expected a relative scatter ≤ 1, got {floor:g}"
        )
    data = dataclasses.replace(
        step.data, source=_get(runs_doc, "source", where, str, source), time_s=seconds
    )
    runs = TrainingRuns(data, work, unit, per_unit)
    batch = data.config["global_batch"]
    critical = fit_critical_batch(batch, work, source=source, noise_floor=floor)
    where = f"{SECTION}.parameters"
    parameters = _get(doc, "parameters", SECTION, dict, source)
    _exact_keys(parameters, {"work_min", "noise_batch"}, where, source)
    for name, refit in (("work_min", critical.work_min), ("noise_batch", critical.noise_batch)):
        value = _get(_get(parameters, name, where, dict, source), "value", f"{where}.{name}",
                     float, source)  # fmt: skip
        if not math.isclose(value, refit, rel_tol=1e-6):
            raise InputError(
                f"{source}: {SECTION}.parameters.{name}: {value:.6g} is not what its runs give "
                f"({refit:.6g}); the file was edited or its runs changed: refit"
            )
    _check_derived(doc, critical, source)
    drift_doc = _get(doc, "drift", SECTION, dict, source)
    _exact_keys(drift_doc, _DRIFT_KEYS, f"{SECTION}.drift", source)
    tau = _get(drift_doc, "tau", f"{SECTION}.drift", float, source)
    dof = math.inf
    if drift_doc.get("dof") is not None:
        dof = _get(drift_doc, "dof", f"{SECTION}.drift", float, source)
    origins = _get(drift_doc, "origins", f"{SECTION}.drift", int, source)
    prior = _get(drift_doc, "prior", f"{SECTION}.drift", float, source)
    prior_dof = math.inf
    if drift_doc.get("prior_dof") is not None:
        prior_dof = _get(drift_doc, "prior_dof", f"{SECTION}.drift", float, source)
    if not (
        0 <= tau <= MAX_DRIFT
        and 0 <= prior <= MAX_DRIFT
        and (0 < dof <= 1e6 or dof == math.inf)
        and (0 < prior_dof <= 1e6 or prior_dof == math.inf)
        and 0 <= origins <= 10**6
    ):  # tau = 1e308 blanked every interval; dof = 1e308 overflowed a quantile
        raise InputError(
            f"{source}: {SECTION}.drift: expected 0 ≤ tau, prior ≤ {MAX_DRIFT:g} (log time "
            "per doubling), 0 < dof, prior_dof ≤ 1e6 (null: unbounded) and 0 ≤ origins ≤ 1e6"
        )
    drift = Drift(
        tau=float(tau),
        dof=float(dof),
        origins=int(origins),
        gpus_range=(float(data.gpus.min()), float(data.gpus.max())),
        batch_range=(float(batch.min()), float(batch.max())),
        prior=float(prior),
        prior_dof=float(prior_dof),
    )
    return TimeToTrainFit(step, critical, runs, per_unit, drift)
