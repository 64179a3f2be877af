"""A fit file read without JAX, for ``perfmodel predict`` and ``optimal``.

`read_saved(path)` returns a `SavedFit` for the fits it can evaluate in NumPy (the
default blend with its conformal intervals; `amdahl`, `usl`, `weak_data_parallel`,
`weak_hierarchical` and `power_law` with Laplace intervals whose draws an earlier call
left in the cache), or None for anything else (other families, other file kinds,
anything unusual), which then takes the JAX path (`perfmodel.load_fit`) and its checks.
`SavedFit` has what the searches of `perfmodel._questions.query` ask of a fit
(`predict`, `curve`, `ensemble_curves`, `parts`, `amdahl_bound`, `get_ensemble`).
"""

import dataclasses
import math
import os

import numpy as np

from .. import _closed
from .._errors import InputError
from .._files import read_text
from .._jsontext import strict_loads
from .._levels import check_gpu_counts, check_level
from . import dual
from .curves import (
    calibrated_curves,
    conformal_band,
    CONFORMAL_SAMPLES,
    conformal_table,
    laplace_band,
    laplace_curves,
    LaplaceDraws,
)
from .model import Blend, FAMILIES, family, REQUIRES

SAVED_FAMILIES = ("blend", *FAMILIES)  # the families read here
SCHEMA_VERSION = 3  # the fit files read here (`perfmodel._schema.SCHEMA_VERSION`)
_CONSTANTS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


@dataclasses.dataclass(frozen=True)
class SavedData:
    """The measurements of a fit file, as `Benchmarks` holds them."""

    source: str
    gpus: np.ndarray
    time_s: np.ndarray
    target: str
    config: dict
    unit: str
    per_gpu: bool

    @property
    def measured(self) -> np.ndarray:
        if self.target == "throughput":
            return 1.0 / self.time_s
        return self.time_s * self.gpus if self.per_gpu else self.time_s

    def as_measured(self, time_s) -> np.ndarray:
        if self.target == "throughput":
            return 1.0 / time_s
        return time_s * self.gpus if self.per_gpu else time_s


@dataclasses.dataclass(frozen=True)
class ConformalDraws:
    """The conformal ensemble of a blend: one normalised score ζ per member."""

    fit: "SavedFit"
    zeta: np.ndarray
    method: str = "conformal"


@dataclasses.dataclass(frozen=True)
class SavedFit:
    """A fit file's model, data and interval method, evaluated in NumPy."""

    path: str
    model: object  # `model.Family` or `model.Blend`
    data: SavedData
    precision: str
    intervals: str
    config_defaults: dict
    free: tuple[str, ...]
    family: str
    document: dict
    ensembles: str | None = None  # the folder of cached draws (`perfmodel._cli.draws`)

    @property
    def target(self) -> str:
        return self.data.target

    @property
    def label(self) -> str:
        if isinstance(self.model, Blend):
            return f"blend ({self.model.regime} regime)"
        return self.family

    def config(self, gpus, overrides: dict) -> dict:
        """The config fields the closed forms read, broadcast against `gpus`."""
        values = {**self.config_defaults, **overrides}
        return {k: np.asarray(v, dtype=np.float64) for k, v in values.items()}

    def seconds(self, n, overrides: dict):
        return self.model.seconds(n, self.config(dual.primal(n), overrides))

    # What `FitResult` offers --------------------------------------------------------

    def predict(self, gpus, **overrides) -> dict[str, np.ndarray]:
        """As `FitResult.predict`."""
        counts = check_gpu_counts(gpus)
        seconds = self.seconds(counts, overrides)
        speedup = self.seconds(np.ones_like(counts), overrides) / seconds
        out = {
            "gpus": counts,
            "time_s": seconds * counts if self.data.per_gpu else seconds,
            "speedup": speedup,
            "efficiency": speedup * 1.0 / counts,
        }
        if self.target == "throughput":
            out["throughput"] = 1.0 / out["time_s"]
        return out

    def predict_interval(self, gpus, level: float, method: str | None, kind: str) -> dict:
        """`perfmodel.predict_interval` on the fit's own draws, as the command line asks
        for it; KeyError where the JAX path must answer (a conformal confidence
        interval, the squared loss, draws not in the cache)."""
        level = check_level(level)
        draws = self.get_ensemble(method, None)
        if isinstance(draws, ConformalDraws):
            if kind != "prediction":
                raise KeyError(kind)  # the JAX path explains why not
            return conformal_band(self, level, self.predict(gpus))
        return laplace_band(self, level, self.predict(gpus), draws, kind)

    # What the searches ask (`perfmodel._questions.curves.JaxCurves`) -----------------

    def curve(self, counts: np.ndarray, overrides: dict):
        """``(times, speedups, marginals)``: dS/dN by forward-mode dual numbers."""
        n = dual.seed(np.asarray(counts, dtype=np.float64))
        times = self.seconds(n, overrides)
        speedups = self.seconds(np.ones_like(n.val), overrides) / times
        # A time that does not depend on N (Amdahl's law with weak=true) is no dual.
        shape = np.shape(n.val)
        return (
            np.broadcast_to(dual.value(times), shape),
            np.broadcast_to(dual.value(speedups), shape),
            np.broadcast_to(dual.derivative(speedups), shape),
        )

    def get_ensemble(self, method, ensemble):
        """The draws every interval of this fit shares (`perfmodel.ensemble`'s)."""
        if ensemble is not None:
            if ensemble.fit is not self:
                raise InputError("the ensemble given was drawn for another fit")
            return ensemble
        method = method or self.intervals
        if method != self.intervals:
            raise KeyError(method)  # the CLI reads only the fit's own draws here
        if method == "conformal":
            which = conformal_table(self)
            return ConformalDraws(self, _closed.scores(CONFORMAL_SAMPLES, 0, which))
        return LaplaceDraws.read(self)

    def ensemble_curves(self, counts: np.ndarray, overrides: dict, method, ensemble):
        """``(times, speedups, marginals, undetermined)`` over the draws (rows)."""
        draws = self.get_ensemble(method, ensemble)
        if isinstance(draws, ConformalDraws):
            return calibrated_curves(self, counts, overrides, draws.zeta)
        return laplace_curves(self, counts, overrides, draws)

    def parts(self, gpus: float, overrides: dict) -> tuple[dict, float, dict]:
        n = np.array([float(gpus)])
        config = self.config(n, overrides)
        if isinstance(self.model, Blend):
            parts = self.model.breakdown(n, config)
        else:
            parts = self.model.term_seconds(n, config)
        total = float(np.ravel(self.model.seconds(n, config))[0])
        values = {k: float(np.ravel(v * np.ones_like(n))[0]) for k, v in parts.items()}
        return values, total, self.model.roles()

    def amdahl_bound(self, overrides: dict) -> float | None:
        if isinstance(self.model, Blend):  # its floor under strong scaling, as `Evaluator`
            n = np.array([1.0])
            config = self.config(n, overrides)
            floor = self.model.serial(n, config)
            if floor is None:
                return None
            bound = float(self.model.seconds(n, config)[0] / np.ravel(floor * np.ones_like(n))[0])
            return bound if bound >= 1.0 else None  # a floor above T(1) bounds nothing
        serial = [t.name for t in self.model.terms if t.name == "serial"]
        if not serial:
            return None
        n = np.array([1.0])
        config = self.config(n, overrides)
        parts = self.model.term_seconds(n, config)
        total = self.model.seconds(n, config)
        return float(total[0] / sum(np.ravel(parts[name] * np.ones_like(n))[0] for name in serial))

    @property
    def residuals(self) -> np.ndarray:
        """log(predicted/measured) at the measurements, as `FitResult.residuals`."""
        return self._residuals(self.model)

    @property
    def unanchored_residuals(self) -> np.ndarray:
        """`residuals` of a blend without its anchor: the curve that extrapolates, whose
        misfit the conformal r measures (`perfmodel._uncertainty.conformal`)."""
        anchorless = getattr(self.model, "without_anchor", None)
        return self._residuals(self.model if anchorless is None else anchorless())

    def _residuals(self, model) -> np.ndarray:
        config = {k: np.asarray(v, dtype=np.float64) for k, v in self.data.config.items()}
        predicted = model.seconds(self.data.gpus, config)
        return np.log(self.data.as_measured(predicted) / self.data.measured)


# Every parameter of the families NumPy evaluates is a time in seconds (a test checks it
# against their specs): a value whose unit was edited to "ms" is left to the JAX path,
# which refuses it, instead of being read in seconds, 1000× off.
UNIT = "s"


def _positive_values(parameters: dict) -> dict:
    values = {}
    for name, entry in parameters.items():
        if entry.get("unit", UNIT) != UNIT:
            raise ValueError(name)
        value = entry["value"]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(name)
        if not (math.isfinite(value) and value > 0):
            raise ValueError(name)
        values[name] = float(value)
    return values


def _model(document: dict, values: dict):
    spec = document["model"]
    name, options = spec["family"], spec.get("options", {})
    if name != "blend":
        if spec.get("intervals", "laplace") != "laplace" or spec.get("components"):
            raise ValueError("intervals")
        return family(name, options, values)
    required = {"regime", "largest", "power_exponent", "flat_exponent"}
    if not required <= set(options) <= required | {"anchor", "node", "slowdown", "carried"}:
        raise ValueError("options")
    regime, anchor = options["regime"], options.get("anchor", "")
    if regime not in _closed.REGIMES or spec.get("intervals") != "conformal":
        raise ValueError("regime")
    if anchor and anchor not in _closed.anchor_names(regime):
        raise ValueError("anchor")
    names = _closed.member_names(regime, anchor)
    exponents = {"power_law": options["power_exponent"], "power_law_flat": options["flat_exponent"]}
    carried = options.get("carried", {})  # a what-if's fitted values (`Blend.carrying`)
    if not isinstance(carried, dict) or not set(carried) <= set(values):
        raise ValueError("carried")
    fitted = {**values, **{k: float(v) for k, v in carried.items()}}
    members, baseline = [], []
    for member in names:
        kind = "power_law" if member.startswith("power_law") else member.removesuffix("_flat")
        extra = {"exponent": float(exponents[member])} if member in exponents else {}
        for found, given in ((members, values), (baseline, fitted)):
            own = {k.partition(".")[2]: v for k, v in given.items() if k.startswith(member + ".")}
            found.append(family(kind, extra, own))
        if not any(k.startswith(member + ".") for k in carried):
            baseline[-1] = None
    if sum(len(m.values) for m in members) != len(values):
        raise ValueError("parameters")
    largest = float(options["largest"])
    if not (math.isfinite(largest) and largest >= 1):
        raise ValueError("largest")
    node = options.get("node", 0.0)
    if isinstance(node, bool) or not isinstance(node, int | float):
        raise ValueError("node")
    if node and not (math.isfinite(node) and node >= 2 and largest <= node):
        raise ValueError("node")
    node = float(node)
    slowdown = options.get("slowdown", False)
    if not isinstance(slowdown, bool):
        raise ValueError("slowdown")
    return Blend(
        members=tuple(members),
        names=names,
        near=tuple(_closed.NEAR[regime].get(n, 0.0) for n in names),
        far=tuple(_closed.FAR[regime].get(n, 0.0) for n in names),
        largest=largest,
        regime=regime,
        anchor=anchor,
        node=node,
        slowdown=slowdown,
        baseline=tuple(baseline) if carried else (),
    )


def read_saved(path: str | os.PathLike, ensembles: str | None = None) -> SavedFit | None:
    """The fit file at `path` as a `SavedFit` (Laplace draws read from the folder
    `ensembles`), or None when it needs the JAX path."""
    try:
        text = read_text(os.fspath(path), "fit file")
        document = strict_loads(text, parse_constant=_CONSTANTS.get)
        return from_document(os.fspath(path), document, ensembles)
    except (InputError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return None


def from_document(path: str, document: dict, ensembles: str | None = None) -> SavedFit | None:
    """`read_saved` of a fit's parsed JSON (`perfmodel._io.fit_json`)."""
    try:
        fit = _from_document(path, document)
    except (InputError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return None if fit is None else dataclasses.replace(fit, ensembles=ensembles)


def _from_document(path: str, document: dict) -> SavedFit | None:
    if (
        document.get("format") != "perfmodel.fit"
        or document.get("schema_version") != SCHEMA_VERSION
    ):
        return None
    if document.get("precision") != "float64" or document["target"] not in ("time", "throughput"):
        return None
    if document["bounds"] or any(p.get("fixed") for p in document["parameters"].values()):
        return None
    values = _positive_values(document["parameters"])
    spec = document["model"]
    name = spec["family"]
    if name != "blend" and name not in FAMILIES:
        return None
    model = _model(document, values)
    data_doc = document["data"]
    gpus = np.asarray(data_doc["gpus"], dtype=np.float64)
    time_s = np.asarray(data_doc["time_s"], dtype=np.float64)
    config = {k: np.asarray(v, dtype=np.float64) for k, v in data_doc["config"].items()}
    columns = [gpus, time_s, *config.values()]
    if gpus.ndim != 1 or gpus.size < 1 or any(c.shape != gpus.shape for c in columns):
        return None
    if not (np.all(np.isfinite(gpus) & (gpus >= 1)) and np.all(np.isfinite(time_s) & (time_s > 0))):
        return None
    defaults = {k: float(v) for k, v in document["config_defaults"].items()}
    needed = REQUIRES.get(name, ()) if name != "blend" else ()
    if isinstance(model, Blend) and model.regime == "straddling":
        needed = REQUIRES["weak_hierarchical"]
    if any(k not in defaults or k not in config for k in needed):
        return None
    data = SavedData(
        source=str(data_doc["source"]),
        gpus=gpus,
        time_s=time_s,
        target=document["target"],
        config=config,
        unit=str(data_doc.get("unit", "")),
        per_gpu=bool(data_doc.get("per_gpu", False)),
    )
    fit = SavedFit(
        path=path,
        model=model,
        data=data,
        precision="float64",
        intervals=str(spec.get("intervals", "laplace")),
        config_defaults=defaults,
        free=tuple(document["free"]),
        family=name,
        document=document,
    )
    predicted = model.seconds(gpus, config)
    if not np.all(np.isfinite(predicted) & (predicted > 0)):
        return None
    return fit
