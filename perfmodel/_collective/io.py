"""Saving and loading collective fits as versioned JSON (format ``perfmodel.collective_fit``)."""

import datetime
import math
import os

import numpy as np

from .._errors import InputError
from .._files import atomic_write, package_version
from .._io import FORMAT as FIT_FORMAT
from .._io import read_document, to_json
from .fit import CollectiveFit, CollectiveGroupFit

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
    try:
        return _from_dict(document)
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise InputError(f"{source}: malformed collective fit file ({error!r})")


def _group(doc: dict) -> CollectiveGroupFit:
    rows = {k: np.asarray(doc["rows"][k]) for k in _ROWS}
    for key in ("message_bytes", "time_s", "busbw_bytes_per_s", "time_s_fit"):
        rows[key] = rows[key].astype(np.float64)
    values = [float(doc[k]) for k in ("latency_s", "bandwidth_bytes_per_s", "factor")]
    if not all(0.0 < v < math.inf for v in values):
        raise ValueError(f"latency, bandwidth and factor must be positive, got {values}")
    r2 = doc["r2"]
    return CollectiveGroupFit(
        collective=str(doc["collective"]),
        n_ranks=int(doc["n_ranks"]),
        latency_s=values[0],
        bandwidth=values[1],
        factor=values[2],
        nominal_factor=float(doc["nominal_factor"]),
        factor_fitted=bool(doc["factor_fitted"]),
        log_stderr={k: math.inf if v is None else float(v) for k, v in doc["log_stderr"].items()},
        r2=math.nan if r2 is None else float(r2),
        mape=float(doc["mape_percent"]),
        rows=rows,
    )


def _from_dict(document: dict) -> CollectiveFit:
    groups = tuple(_group(g) for g in document["groups"])
    if not groups:
        raise ValueError("no groups")
    link = document["link_bandwidth"]
    return CollectiveFit(
        groups=groups,
        factor=str(document["factor"]),
        link_bandwidth=None if link is None else float(link),
        loss_kind=str(document["loss"]["kind"]),
        loss=float(document["loss"]["value"]),
        converged=bool(document["converged"]),
        message=str(document["message"]),
        warnings=tuple(document["warnings"]),
        notes=tuple(document["notes"]),
        sources=tuple(document["sources"]),
        precision=str(document["precision"]),
    )
