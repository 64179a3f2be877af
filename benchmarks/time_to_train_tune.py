"""How the prior drift of the time-to-train family was chosen: tuned on one group of systems,
checked on the other.

The interval of `perfmodel.TimeToTrainFit.predict` adds a model-form drift per doubling
of GPUs or batch beyond the runs (`perfmodel._convergence.drift`): its scale τ pools the
runs' own rolling-origin errors with a prior τ₀ worth ν₀ doublings², and the interval uses
a Student-t quantile on ν₀ + origins degrees of freedom. This script fits the family once
per (protocol, series) of `time_to_train.py`, then for every (τ₀, ν₀) of a grid re-estimates
the drift and scores the held-out runs' 90% intervals by

* the interval score in log time, ``(u − l) + (2/α)·(l − y)⁺ + (2/α)·(y − u)⁺`` with
  α = 0.1 (Gneiting & Raftery 2007: a proper score for central intervals; lower is
  better), and
* coverage (held-out runs inside), and the median width hi/lo.

The prior chosen is the one whose coverage on the tuning systems is closest to 90%;
among equals, the narrowest intervals. (The interval score alone prefers wide intervals
here: one series, BERT on DGX A100 from 8 and 16 GPUs, is off by a factor 2.5 and its
penalty dominates the mean.)

Distinct cases only: ``--holdout largest --min-train 2`` (every series with two training
counts or more), ``largest2 --min-train 2`` and ``half`` (other training sets of the same
series). ``--tune-on dgxa100`` (default) chooses the prior with the lowest mean interval
score on the DGX A100 series and reports it on the DGX-2H ones as well.

Run from the repository root (about 5 minutes on 2 CPU cores)::

    python benchmarks/time_to_train_tune.py
    python benchmarks/time_to_train_tune.py --tune-on dgx2h
"""

import argparse
import dataclasses
import math
from pathlib import Path
import sys
import warnings

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import time_to_train as ttt  # noqa: E402

import perfmodel as pm  # noqa: E402
from perfmodel import _convergence as cv  # noqa: E402
from perfmodel._convergence.drift import estimate_drift  # noqa: E402

PROTOCOLS = (("largest", 2), ("largest2", 2), ("half", None), ("largest", None))
PROTOCOLS += (("largest2", None),)
PRIORS = (0.03, 0.04, 0.05, 0.06, 0.07, 0.08, 0.1)
PRIOR_DOFS = (1.0, 2.0, 4.0, 8.0, math.inf)  # inf: the prior alone, no rolling origins
ALPHA = 1.0 - ttt.LEVEL


def cases() -> list[dict]:
    """One fitted case per (protocol, series) with a global batch: the fit with its drift
    turned off, the held-out runs, and the drift-free band at them."""
    out, seen = [], set()
    for holdout, min_train in PROTOCOLS:
        needed = ttt.MIN_TRAIN_COUNTS[holdout] if min_train is None else min_train
        for name, data, work in ttt.series():
            train, test = ttt.holdout_split(data, holdout)
            key = (name, tuple(np.unique(train.gpus)))
            if len(key[1]) < needed or "global_batch" not in data.config:
                continue
            distinct = key not in seen  # counted once in the pools of systems
            seen.add(key)
            runs = pm.TrainingRuns(train, ttt._work_of(train, work, data), "samples", 1.0)
            fit = pm.fit_time_to_train(runs)
            fit = dataclasses.replace(fit, drift=dataclasses.replace(fit.drift, tau=0.0))
            batch = test.config["global_batch"]
            out.append(
                {
                    "name": name,
                    "system": name.split("_")[1],
                    "protocol": f"{holdout}/{min_train or needed}",
                    "distinct": distinct,
                    "fit": fit,
                    "gpus": test.gpus,
                    "batch": batch,
                    "actual": test.time_s,
                    "band": fit.predict(test.gpus, batch, ttt.LEVEL),
                }
            )
            print(f"fitted {name} on {list(key[1])}", file=sys.stderr)
    return out


def score(case: dict, prior: float, prior_dof: float):
    """(interval score, inside, log width) of each held-out run of `case` under the
    prior."""
    fit = case["fit"]
    step = fit.step
    step_noise = float(np.sum(step.residuals**2)) / max(step.residuals.size - len(step.free), 1)
    drift = estimate_drift(
        fit.runs,
        fit.samples_per_unit,
        fit.critical.noise**2 + step_noise,
        prior=prior,
        prior_dof=prior_dof,
    )
    band = dataclasses.replace(fit, drift=drift)._widen(
        {
            k: case["band"][k]
            for k in ("time_to_train_s", "time_to_train_s_lo", "time_to_train_s_hi")
        },
        case["gpus"],
        case["batch"],
        ttt.LEVEL,
    )
    lo, hi = np.log(band["time_to_train_s_lo"]), np.log(band["time_to_train_s_hi"])
    y = np.log(case["actual"])
    interval = (hi - lo) + 2 / ALPHA * (np.maximum(lo - y, 0) + np.maximum(y - hi, 0))
    return interval, (lo <= y) & (y <= hi), hi - lo


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tune-on", default="dgxa100", choices=ttt.SYSTEMS)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    found = cases()
    check = [s for s in ttt.SYSTEMS if s != args.tune_on][0]
    rows = []
    for prior in PRIORS:
        for dof in PRIOR_DOFS:
            row = {"prior": prior, "dof": dof}
            for system in (args.tune_on, check):
                scored = [
                    score(c, prior, dof) for c in found if c["system"] == system and c["distinct"]
                ]
                interval = np.concatenate([s[0] for s in scored])
                inside = np.concatenate([s[1] for s in scored])
                width = float(np.exp(np.median(np.concatenate([s[2] for s in scored]))))
                row[system] = (float(interval.mean()), int(inside.sum()), inside.size, width)
            for protocol in dict.fromkeys(c["protocol"] for c in found):
                scored = [score(c, prior, dof)[1] for c in found if c["protocol"] == protocol]
                inside = np.concatenate(scored)
                row[protocol] = (int(inside.sum()), inside.size)
            rows.append(row)

    # Coverage closest to the level on the tuning systems; among equals, the narrowest
    # intervals (median hi/lo), then the lowest interval score.
    def rank(r):
        _, inside, n, width = r[args.tune_on]
        return (round(abs(inside / n - ttt.LEVEL), 6), width, r[args.tune_on][0])

    best = min(rows, key=rank)
    protocols = list(dict.fromkeys(c["protocol"] for c in found))
    print(
        f"{sum(c['distinct'] for c in found)} distinct cases, {len(found)} in all protocols. "
        f"Tuned on {args.tune_on} (coverage closest to {ttt.LEVEL:.0%}, then the narrowest "
        f"intervals, then the lowest mean interval score), checked on {check}."
    )
    print()
    head = "| τ₀ | ν₀ | "
    for system in (args.tune_on, check):
        head += f"{system} score | {system} in 90% | {system} width | "
    head += " | ".join(f"{p} in 90%" for p in protocols) + " |"
    print(head)
    print("|" + " --- |" * (8 + len(protocols)))
    for r in rows:
        mark = " **(chosen)**" if r is best else ""
        cells = [f"{r['prior']:g}{mark}", f"{r['dof']:g}"]
        for system in (args.tune_on, check):
            s, i, n, w = r[system]
            cells += [f"{s:.3f}", f"{i}/{n} = {i / n:.0%}", f"×{w:.3g}"]
        cells += [f"{r[p][0]}/{r[p][1]} = {r[p][0] / r[p][1]:.0%}" for p in protocols]
        print("| " + " | ".join(cells) + " |")
    print()
    print(f"chosen: τ₀ = {best['prior']:g}, ν₀ = {best['dof']:g} (the library's defaults are ")
    print(
        f"DRIFT_PRIOR = {cv.drift.DRIFT_PRIOR:g}, DRIFT_PRIOR_DOF = {cv.drift.DRIFT_PRIOR_DOF:g})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
