"""Saving and loading collective fits as versioned JSON (format ``perfmodel.collective_fit``)."""

import datetime
import math
import os

import numpy as np

from .._errors import InputError
from .._files import atomic_write, package_version
from .._io import FORMAT as FIT_FORMAT
from .._io import read_document, to_json
from .._levels import LARGEST_COUNT
from .._terms import OPS
from .fit import CollectiveFit, CollectiveGroupFit, FACTORS, LOSSES

PLACEMENTS = ("out_of_place", "in_place")  # nccl-tests' two columns of each row

FORMAT = "perfmodel.collective_fit"
SCHEMA_VERSION = 1
_ROWS = (
    "message_bytes",
    "placement",
    "time_s",
    "busbw_bytes_per_s",
    "time_s_fit",
    "busbw_fit_bytes_per_s",
    "source",
    "line",
)


def _finite(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def group_to_dict(g: CollectiveGroupFit) -> dict:
    """One group as JSON-ready values (SI units: s, bytes, bytes/s)."""
    return {
        "collective": g.collective,
        "n_ranks": g.n_ranks,
        "latency_s": g.latency_s,
        "bandwidth_bytes_per_s": g.bandwidth,
        "factor": g.factor,
        "nominal_factor": g.nominal_factor,
        "factor_fitted": g.factor_fitted,
        "busbw_bytes_per_s": g.busbw,
        "base_latency_s": g.base_latency_s,
        "efficiency": g.efficiency,
        "log_stderr": {k: _finite(v) for k, v in g.log_stderr.items()},
        "r2": _finite(g.r2),
        "mape_percent": g.mape,
        "rows": {k: np.asarray(g.rows[k]).tolist() for k in _ROWS},
    }


def collective_fit_to_dict(result: CollectiveFit) -> dict:
    """The JSON document of a collective fit (schema version `SCHEMA_VERSION`)."""
    return {
        "format": FORMAT,
        "schema_version": SCHEMA_VERSION,
        "perfmodel_version": package_version(),
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "precision": result.precision,
        "factor": result.factor,
        "link_bandwidth": result.link_bandwidth,
        "loss": {"kind": result.loss_kind, "value": result.loss},
        "converged": result.converged,
        "message": result.message,
        "warnings": list(result.warnings),
        "notes": list(result.notes),
        "sources": list(result.sources),
        "groups": [group_to_dict(g) for g in result.groups],
    }


def save_collective_fit(result: CollectiveFit, path: str | os.PathLike) -> None:
    """Write `result` to `path` as JSON, atomically (no half-written file on error)."""
    text = to_json(collective_fit_to_dict(result))  # strict JSON: non-finite numbers as null
    with atomic_write(path) as stream:
        stream.write(text)


def load_collective_fit(path: str | os.PathLike) -> CollectiveFit:
    """Read a file written by `save_collective_fit` (``perfmodel fit-collective -o``).

    Raises:
        InputError: a missing or non-JSON file, another format (e.g. a training fit),
            another schema version, or missing keys.
    """
    source = os.fspath(path)
    if not os.path.isfile(source):
        raise InputError(f"{source}: no such file (expected a collective fit JSON)")
    document = read_document(source, "collective fit file")
    found = document.get("format") if isinstance(document, dict) else None
    if found != FORMAT:
        hint = (
            "; it is a training fit (perfmodel fit -o): write collective fits with "
            "`perfmodel fit-collective LOG -o FILE`"
            if found == FIT_FORMAT
            else ""
        )
        raise InputError(
            f"{source}: not a perfmodel collective fit (format {found!r}, expected "
            f"{FORMAT!r}){hint}"
        )
    version = document.get("schema_version")
    if isinstance(version, bool) or version != SCHEMA_VERSION:
        raise InputError(
            f"{source}: collective fit schema version {version!r}, but this perfmodel "
            f"reads version {SCHEMA_VERSION}; refit with `perfmodel fit-collective`"
        )
    return _from_dict(_Fields(source), document)


# What a collective fit file may hold, each a (low, high) range in SI units: a fit far
# outside them is an edit (a latency of 1e300 s answered "speedup 0–inf×").
_RANGES = {
    "latency_s": (1e-12, 10.0),
    "bandwidth_bytes_per_s": (1e3, 1e16),
    "factor": (1e-6, 1e3),
    "nominal_factor": (0.0, 1e3),
    "base_latency_s": (0.0, 10.0),
    "busbw_bytes_per_s": (0.0, 1e16),
    "efficiency": (0.0, 1e6),
}
_GROUP_KEYS = (
    "collective",
    "n_ranks",
    *_RANGES,
    "factor_fitted",
    "log_stderr",
    "r2",
    "mape_percent",
    "rows",
)


# Group fields written from others (`CollectiveGroupFit`'s properties of the same name).
DERIVED = {
    "busbw_bytes_per_s": "busbw",
    "base_latency_s": "base_latency_s",
    "efficiency": "efficiency",
}
STDERR_KEYS = ("latency", "bandwidth", "factor")
DOCUMENT_KEYS = (
    "format",
    "schema_version",
    "perfmodel_version",
    "created",
    "precision",
    "factor",
    "link_bandwidth",
    "loss",
    "converged",
    "message",
    "warnings",
    "notes",
    "sources",
    "groups",
)


class _Fields:
    """Checks of one collective fit document; every failure one line naming the field."""

    def __init__(self, source: str):
        self.source = source

    def fail(self, where: str, expected: str, got) -> None:
        raise InputError(f"{self.source}: {where}: expected {expected}, got {got!r}"[:400])

    def mapping(self, value, where: str, keys: tuple[str, ...]) -> dict:
        if not isinstance(value, dict):
            self.fail(where, "an object", value)
        for key in keys:
            if key not in value:
                raise InputError(f"{self.source}: {where}.{key}: missing")
        for key in value:
            if key not in keys:
                self.fail(f"{where}.{key}", f"no such field (valid: {', '.join(keys)})", key)
        return value

    def number(self, value, where: str, low: float, high: float, nullable=False) -> float:
        if value is None and nullable:
            return math.nan
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not (ok and math.isfinite(value) and low <= value <= high):
            self.fail(where, f"a number from {low:g} to {high:g}", value)
        return float(value)

    def text(self, value, where: str, choices: tuple[str, ...] = ()) -> str:
        if not isinstance(value, str):
            self.fail(where, "a string", value)
        if choices and value not in choices:
            self.fail(where, f"one of {', '.join(choices)}", value)
        return value

    def flag(self, value, where: str) -> bool:
        if not isinstance(value, bool):
            self.fail(where, "true or false", value)
        return value

    def strings(self, value, where: str) -> tuple[str, ...]:
        if not isinstance(value, list):
            self.fail(where, "a list of strings", value)
        return tuple(self.text(v, f"{where}[{i}]") for i, v in enumerate(value))


def _rows(c: _Fields, value, where: str) -> dict:
    rows = c.mapping(value, where, _ROWS)
    lengths = {len(rows[k]) if isinstance(rows[k], list) else -1 for k in _ROWS}
    if len(lengths) != 1 or -1 in lengths or not lengths - {0}:
        c.fail(where, "lists of one equal, non-zero length (one item per measurement)", lengths)
    out = {}
    for key in _ROWS:
        if key in ("placement", "source"):
            choices = PLACEMENTS if key == "placement" else ()
            out[key] = np.asarray(
                [c.text(v, f"{where}.{key}[{i}]", choices) for i, v in enumerate(rows[key])]
            )
            continue
        high = LARGEST_COUNT if key == "line" else 1e300
        fitted = key.endswith(("_fit", "_fit_bytes_per_s"))  # null: not finite when written
        out[key] = np.asarray(
            [
                c.number(v, f"{where}.{key}[{i}]", 0.0, high, nullable=fitted)
                for i, v in enumerate(rows[key])
            ],
            dtype=np.int64 if key == "line" else np.float64,
        )
    return out


def _group(c: _Fields, doc, where: str) -> CollectiveGroupFit:
    doc = c.mapping(doc, where, _GROUP_KEYS)
    values = {k: c.number(doc[k], f"{where}.{k}", *_RANGES[k]) for k in _RANGES}
    ranks = doc["n_ranks"]
    # fit-collective refuses 1-rank runs (no communication): a fit file of one is edited.
    if isinstance(ranks, bool) or not isinstance(ranks, int) or not 2 <= ranks <= LARGEST_COUNT:
        c.fail(f"{where}.n_ranks", f"a whole number of ranks from 2 to {LARGEST_COUNT:,}", ranks)
    errors = doc["log_stderr"]
    if not isinstance(errors, dict):
        c.fail(f"{where}.log_stderr", "an object", errors)
    for key in errors:  # the fitted parameters' standard errors: no other names
        if key not in STDERR_KEYS:
            c.fail(f"{where}.log_stderr.{key}", f"one of {', '.join(STDERR_KEYS)}", key)
    group = CollectiveGroupFit(
        # A name the α-β model has no algorithm for raised a traceback when a training
        # fit read the file (review of 2026-12-07).
        collective=c.text(doc["collective"], f"{where}.collective", OPS),
        n_ranks=ranks,
        latency_s=values["latency_s"],
        bandwidth=values["bandwidth_bytes_per_s"],
        factor=values["factor"],
        nominal_factor=values["nominal_factor"],
        factor_fitted=c.flag(doc["factor_fitted"], f"{where}.factor_fitted"),
        log_stderr={
            k: c.number(v, f"{where}.log_stderr.{k}", 0.0, 1e300, nullable=True)
            for k, v in errors.items()
        },
        r2=c.number(doc["r2"], f"{where}.r2", -1e300, 1.0, nullable=True),
        mape=c.number(doc["mape_percent"], f"{where}.mape_percent", 0.0, 1e300, nullable=True),
        rows=_rows(c, doc["rows"], f"{where}.rows"),
    )
    # Written from latency_s, bandwidth and factor: an edit of one side alone is ambiguous
    # (latency_s set to 1 s beside base_latency_s 7e-5 was read as 1 s, silently).
    for key, derived in DERIVED.items():
        expected = float(getattr(group, derived))
        if not math.isclose(values[key], expected, rel_tol=1e-9, abs_tol=1e-300):
            c.fail(
                f"{where}.{key}",
                f"{expected:.6g}, what latency_s, bandwidth_bytes_per_s and factor give (an "
                "edited file: edit those three and this one together)",
                values[key],
            )
    return group


def _from_dict(c: _Fields, document: dict) -> CollectiveFit:
    for key in document:  # one misspelt key ignored reads the file at the others' values
        if key not in DOCUMENT_KEYS:
            c.fail(key, f"no such field (valid: {', '.join(DOCUMENT_KEYS)})", key)
    groups = document.get("groups")
    if not isinstance(groups, list) or not groups:
        c.fail("groups", "a non-empty list of fitted groups", groups)
    fitted = tuple(_group(c, g, f"groups[{i}]") for i, g in enumerate(groups))
    seen: dict[tuple, int] = {}
    for i, g in enumerate(fitted):  # two fits of one collective were blended, silently
        first = seen.setdefault((g.collective, g.n_ranks), i)
        if first != i:
            c.fail(
                f"groups[{i}]",
                f"one group per collective and rank count ({g.collective} at {g.n_ranks} "
                f"ranks is groups[{first}] too)",
                f"{g.collective} × {g.n_ranks}",
            )
    link = document.get("link_bandwidth")
    loss = document.get("loss")
    if not isinstance(loss, dict):
        c.fail("loss", "an object {kind, value}", loss)
    return CollectiveFit(
        groups=fitted,
        factor=c.text(document.get("factor"), "factor", FACTORS),
        link_bandwidth=None if link is None else c.number(link, "link_bandwidth", 1e3, 1e16),
        loss_kind=c.text(loss.get("kind"), "loss.kind", tuple(LOSSES)),
        loss=c.number(loss.get("value"), "loss.value", 0.0, 1e300, nullable=True),
        converged=c.flag(document.get("converged"), "converged"),
        message=c.text(document.get("message"), "message"),
        warnings=c.strings(document.get("warnings"), "warnings"),
        notes=c.strings(document.get("notes"), "notes"),
        sources=c.strings(document.get("sources"), "sources"),
        precision=c.text(document.get("precision"), "precision", ("float32", "float64")),
    )
