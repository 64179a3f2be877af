"""The ensemble behind a fit's intervals, kept on disk between command-line calls.

Every interval of a fit comes from one set of draws (`perfmodel.ensemble(fit, method)`:
fixed size and seed), and drawing it refits the rolling origins, which costs seconds
each call. `perfmodel fit` draws it for the recommendation; `optimal`, `predict
--interval` and `next` on the same fit then read it back. A set is filed under a hash of
everything it depends on (the package version, the method, the model, its parameters and
covariance, the data), so a changed fit (``--set``) never reads another's draws. It lives
beside the compilation cache (`perfmodel._cli.cache`), and ``PERFMODEL_NO_CACHE=1`` turns
both off.
"""

import hashlib
import json
import os

import numpy as np

from .._errors import FitError, InputError
from .._files import atomic_write, package_version
from .._fitting import FitResult
from .._uncertainty import Ensemble, ensemble
from .cache import cache_dir, cache_off


def _folder():
    if cache_off():
        return None
    folder = cache_dir() / "ensembles"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return folder if os.access(folder, os.W_OK) else None


def fit_key(fit: FitResult, method: str) -> str:
    """A hash of what the default ensemble of `fit` depends on."""
    digest = hashlib.sha256()
    described = {
        "version": package_version(),
        "method": method,
        "family": fit.family,
        "options": repr(fit.model.options),
        "components": repr(fit.components),
        "loss": fit.loss_kind,
        "target": fit.target,
        "free": list(fit.free),
        "fixed": {k: f"{v:.12g}" for k, v in sorted(fit.fixed.items())},
        "bounds": {k: repr(v) for k, v in sorted(fit.bounds.items())},
        # Physical values round-trip a fit file to the last digit or two only.
        "parameters": {k: f"{v:.12g}" for k, v in fit.parameters().items()},
        "defaults": {k: f"{v:.12g}" for k, v in sorted(fit.config_defaults.items())},
    }
    if fit.covariance_from != "measurements":  # draws of a joint fit's covariance
        described["covariance_from"] = fit.covariance_from
    digest.update(json.dumps(described, sort_keys=True).encode())
    arrays = [
        fit.data.gpus,
        fit.data.time_s,
        *(fit.data.config[k] for k in sorted(fit.data.config)),
    ]
    if fit.raw_covariance is not None:
        arrays.append(np.round(np.asarray(fit.raw_covariance, dtype=np.float64), 12))
    for array in arrays:
        digest.update(np.ascontiguousarray(array, dtype=np.float64).tobytes())
    return digest.hexdigest()[:32]


def shared_ensemble(fit: FitResult, method: str | None = None) -> Ensemble:
    """`ensemble(fit, method)`, read from the disk when an earlier call drew it (`method`
    None: the fit's own, `FitResult.intervals`). Conformal draws cost nothing to make
    and are never stored."""
    method = method or fit.intervals
    folder = _folder()
    if folder is None or method == "conformal":
        return ensemble(fit, method)
    path = folder / f"{fit_key(fit, method)}.npz"
    try:
        # A file np.load fails on stays open unless opened here (truncated entries).
        with open(path, "rb") as handle, np.load(handle, allow_pickle=False) as stored:
            if any(np.isnan(stored[k]).any() for k in ("raw", "noise", "drift")):
                raise ValueError("NaN in the cached draws")  # an edit: draw them again
            return Ensemble(
                fit=fit,
                method=method,
                names=tuple(str(n) for n in stored["names"]),
                raw=stored["raw"],
                noise=stored["noise"],
                drift=stored["drift"],
                unknown=stored["unknown"],
                sigma=float(stored["sigma"]),
                dof=float(stored["dof"]),
                tau=float(stored["tau"]),
                tau_dof=float(stored["tau_dof"]),
                gpus_range=tuple(float(x) for x in stored["gpus_range"]),
            )
    except Exception:  # missing, unreadable, truncated or not an archive: draw again
        pass  # (a truncated file raised BadZipFile or EOFError, review of 2026-12-07)
    draws = ensemble(fit, method)
    try:
        with atomic_write(path, "wb") as stream:
            np.savez(
                stream,
                names=np.asarray(draws.names, dtype=str),
                raw=draws.raw,
                noise=draws.noise,
                drift=draws.drift,
                unknown=draws.unknown,
                sigma=draws.sigma,
                dof=draws.dof,
                tau=draws.tau,
                tau_dof=draws.tau_dof,
                gpus_range=np.asarray(draws.gpus_range),
            )
    except (OSError, InputError):
        pass  # a read-only or full disk only costs the next call the time to draw
    return draws


def draws_or_none(fit: FitResult, method: str | None = None) -> Ensemble | None:
    """`shared_ensemble`, or None for a fit the ensemble cannot be drawn for (every
    parameter fixed, most bootstrap refits failing): answers then come without intervals."""
    try:
        return shared_ensemble(fit, method)
    except (InputError, FitError):
        return None
