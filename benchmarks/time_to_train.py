"""Time to train at GPU counts not seen: the critical-batch model against today's default.

For every MLPerf Training v0.7 series of ``datasets/time_to_train/`` (per-run time to
train, global batch and epochs or samples to the target; the DGX A100 files are the
shipped ``mlperf07_dgxa100_*`` series with those columns added), split as
`benchmarks/accuracy.py` does (``--holdout half|largest|largest2``: its `holdout_split`
and its minimum training GPU counts), and predict each held-out run's time to train:

* ``default``: today's default, ``perfmodel.fit_auto(train).best`` on time to train
  against GPU count, and its 90% prediction interval (``perfmodel.predict_interval``).
* ``time-to-train``: perfmodel's time-to-train family, `perfmodel.fit_time_to_train` on
  the training runs (work to the target in samples): the critical batch
  ``E(B) = E_min·(1 + B/B_noise)`` fitted to their work, × the steps per sample 1/B, ×
  the `batch_linear` step time ``T = a + c·B/N`` fitted to their seconds per step (time
  to train / steps), predicted with `TimeToTrainFit.predict` and its 90% interval: the
  critical batch's (profile likelihood and run-to-run scatter), the step family's
  (Laplace, noise) and the drift beyond the runs (rolling origins pooled with the prior
  chosen by `time_to_train_tune.py`), in quadrature on log time.
* ``closed-form step``: the first version of the same model (kept for comparison): the
  step time fitted in closed form (`fit_linear_step_time`, profile intervals) and a fixed
  drift of 0.05 per doubling of N (step) and of B (work).
* ``critical batch × fit_auto``: the same work, × the time per unit of work from
  ``perfmodel.fit_auto`` on the training runs (today's families, which take no batch).

minigo logs no global batch: its work is taken constant, with its scatter as the run
noise, × fit_auto's time per unit of work, in every time-to-train method (the family
needs a batch).

Scores per series: MAPE of the held-out runs' time to train (as accuracy.py), and the
share of held-out runs inside the 90% interval; pooled over series by median MAPE and by
the runs inside. Series with fewer training GPU counts than the holdout needs are listed
as skipped; ``--min-train 2`` scores them with two.

Run from the repository root (about 4 minutes on 2 CPU cores)::

    python benchmarks/time_to_train.py                       # --holdout largest
    python benchmarks/time_to_train.py --holdout half
    python benchmarks/time_to_train.py --holdout largest2
    python benchmarks/time_to_train.py --min-train 2         # every series
    python benchmarks/accuracy.py --time-to-train --holdout largest   # the same, from there
"""

import argparse
from pathlib import Path
import sys
import time
import warnings

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

from accuracy import holdout_split, mape, MIN_TRAIN_COUNTS  # noqa: E402

import perfmodel as pm  # noqa: E402
from perfmodel import _convergence as cv  # noqa: E402

DATA = ROOT / "datasets" / "time_to_train"
LEVEL = 0.9
SYSTEMS = ("dgxa100", "dgx2h")
PRIOR: dict = {}  # drift_prior / drift_prior_dof of fit_time_to_train (--drift-prior)


def series(systems=SYSTEMS) -> list[tuple[str, pm.Benchmarks, np.ndarray]]:
    """``(name, benchmarks, work)`` of every time-to-train file of `systems` with more
    than one GPU count; work is samples (BERT) or epochs per row, NaN for minigo's batch."""
    out = []
    for path in sorted(DATA.glob("mlperf07_*.csv")):
        system = path.stem.split("_")[1]
        frame = pd.read_csv(path)
        if system not in systems or frame.gpus.nunique() < 2:
            continue
        data = pm.load_benchmarks(path)
        column = "samples" if "samples" in frame.columns else "epochs"
        work = frame[column].to_numpy(float)[np.asarray(data.lines) - 2]
        out.append((path.stem, data, work))
    return out


def _work_of(data: pm.Benchmarks, frame_work: np.ndarray, full: pm.Benchmarks) -> np.ndarray:
    rows = {line: i for i, line in enumerate(full.lines)}
    return frame_work[[rows[line] for line in data.lines]]


def per_work(data: pm.Benchmarks, work: np.ndarray) -> pm.Benchmarks:
    """The same runs with time per unit of work (seconds per epoch or per sample)."""
    import dataclasses

    return dataclasses.replace(data, time_s=data.time_s / work)


def default_prediction(train, test):
    fit = pm.fit_auto(train).best
    band = pm.predict_interval(fit, test.gpus, LEVEL, **test.config)
    return fit.label, band["time_s"], band["time_s_lo"], band["time_s_hi"]


def _work_band(train, test, work_train):
    """The critical-batch interval of the test runs' work, and a note; without a global
    batch (minigo) the work is taken constant, with its scatter as the run noise."""
    if "global_batch" in train.config:
        critical = cv.fit_critical_batch(train.config["global_batch"], work_train)
        band = critical.predict_interval(test.config["global_batch"], LEVEL)
        return band, critical.bound or f"B_noise {critical.noise_batch:.3g}"
    logs = np.log(work_train)
    spread = cv.t_quantile(0.5 + LEVEL / 2, logs.size - 1) * max(logs.std(ddof=1), cv.NOISE_FLOOR)
    centre = np.full(test.gpus.shape, logs.mean())
    band = {"work": np.exp(centre), "work_lo": np.exp(centre - spread)}
    band["work_hi"] = np.exp(centre + spread)
    return band, "no batch: constant work"


def critical_batch_fit_auto(train, test, work_train):
    """Work from the critical-batch model × time per unit of work from fit_auto."""
    fit = pm.fit_auto(per_work(train, work_train)).best
    step = pm.predict_interval(fit, test.gpus, LEVEL, **test.config)
    work, note = _work_band(train, test, work_train)
    band = cv.time_to_train_interval(work, step)
    return f"{fit.label}; {note}", *_ttt(band)


def time_to_train_family(train, test, work_train):
    """perfmodel's time-to-train family (`perfmodel.fit_time_to_train`): the critical
    batch fitted to the training runs' work, × the steps per unit of work D/B, × the step
    time of `batch_linear` (``a + c·B/N``) fitted to their seconds per step, with the
    interval of `TimeToTrainFit.predict`."""
    if "global_batch" not in train.config:
        return critical_batch_fit_auto(train, test, work_train)
    runs = pm.TrainingRuns(train, work_train, "samples", 1.0)
    fit = pm.fit_time_to_train(runs, **PRIOR)
    band = fit.predict(test.gpus, test.config["global_batch"], LEVEL)
    note = f"{fit.step.family}; {fit.critical.bound or f'B_noise {fit.noise_batch:.3g}'}"
    return note, band["time_to_train_s"], band["time_to_train_s_lo"], band["time_to_train_s_hi"]


def critical_batch_linear_step(train, test, work_train):
    """Work from the critical-batch model × steps per work (1/B) × the step time of
    ``T = a + c·B/N`` fitted in closed form (`fit_linear_step_time`, profile intervals)
    to the training runs' time per work × B (per step, × D)."""
    if "global_batch" not in train.config:
        return critical_batch_fit_auto(train, test, work_train)
    batch = train.config["global_batch"]
    step_fit = cv.fit_linear_step_time(train.gpus, batch, train.time_s / work_train * batch)
    step = step_fit.predict_interval(test.gpus, test.config["global_batch"], LEVEL)
    work, note = _work_band(train, test, work_train)
    band = cv.time_to_train_interval(work, step, 1.0 / test.config["global_batch"])
    return f"a + c·B/N; {note}", *_ttt(band)


def _ttt(band):
    return band["time_to_train_s"], band["time_to_train_s_lo"], band["time_to_train_s_hi"]


METHODS = {
    "default": lambda train, test, work: default_prediction(train, test),
    "time-to-train": time_to_train_family,
    "closed-form step": critical_batch_linear_step,
    "critical batch × fit_auto": critical_batch_fit_auto,
}


def run(holdout: str, min_train: int | None, systems) -> tuple[list[dict], list[str]]:
    records, skipped = [], []
    needed = MIN_TRAIN_COUNTS[holdout] if min_train is None else min_train
    for index, (name, data, work) in enumerate(series(systems)):
        train, test = holdout_split(data, holdout)
        counts = np.unique(train.gpus)
        if len(counts) < needed:
            skipped.append(f"{name} {[int(c) for c in np.unique(data.gpus)]}")
            continue
        work_train = _work_of(train, work, data)
        record = {
            "name": name,
            "system": name.split("_")[1],
            "train": ",".join(str(int(c)) for c in counts),
            "test": ",".join(str(int(c)) for c in np.unique(test.gpus)),
            "rows": int(test.gpus.size),
            "methods": {},
        }
        for label, predict in METHODS.items():
            started = time.perf_counter()
            try:
                note, point, lo, hi = predict(train, test, work_train)
            except pm.InputError as error:
                record["methods"][label] = {"note": f"error: {error}", "mape": np.nan}
                continue
            inside = (lo <= test.time_s) & (test.time_s <= hi)
            record["methods"][label] = {
                "note": note,
                "mape": mape(point, test.time_s),
                "inside": int(inside.sum()),
                "width": float(np.exp(np.median(np.log(hi / lo)))),
                "seconds": time.perf_counter() - started,
            }
        records.append(record)
        d, t = record["methods"]["default"], record["methods"]["time-to-train"]  # shown
        print(
            f"[{index + 1}] {name}: MAPE default {d['mape']:.1f}% vs time-to-train "
            f"{t['mape']:.1f}%",
            file=sys.stderr,
        )
    return records, skipped


def report(records, skipped, holdout, needed) -> str:
    labels = tuple(METHODS)
    header = "| series | train GPUs | held-out GPUs | runs | "
    header += " | ".join(f"{label}: model | MAPE % | in 90%" for label in labels) + " |"
    lines = [
        f"Holdout {holdout!r} (accuracy.py's split), at least {needed} training GPU counts; "
        f"{int(LEVEL * 100)}% intervals.",
        "",
        header,
        "|" + " --- |" * (4 + 3 * len(labels)),
    ]
    for r in records:
        cells = []
        for label in labels:
            m = r["methods"][label]
            inside = f"{m['inside']}/{r['rows']}" if "inside" in m else "—"
            cells += [m["note"], f"{m['mape']:.2f}", inside]
        lines.append(
            f"| {r['name']} | {r['train']} | {r['test']} | {r['rows']} | "
            + " | ".join(cells)
            + " |"
        )
    lines += [
        "",
        "| systems | series | held-out runs | method | median MAPE % | mean MAPE % | "
        "runs in 90% | series-weighted | median 90% width |",
        "|" + " --- |" * 9,
    ]
    groups = [(s, [r for r in records if r["system"] == s]) for s in SYSTEMS]
    groups.append(("all", records))
    for name, chosen in groups:
        if not chosen:
            continue
        rows = sum(r["rows"] for r in chosen)
        for label in labels:
            ms = [r["methods"][label] for r in chosen]
            scores = [m["mape"] for m in ms if np.isfinite(m["mape"])]
            inside = sum(m.get("inside", 0) for m in ms)
            weighted = np.mean([m.get("inside", 0) / r["rows"] for m, r in zip(ms, chosen)])
            widths = [m["width"] for m in ms if "width" in m and np.isfinite(m["width"])]
            lines.append(
                f"| {name} | {len(chosen)} | {rows} | {label} | {np.median(scores):.2f} | "
                f"{np.mean(scores):.2f} | {inside}/{rows} = {inside / rows:.0%} | "
                f"{weighted:.0%} | ×{np.median(widths):.3g} |"
            )
    lines += ["", "Skipped (too few training GPU counts): " + ("; ".join(skipped) or "none") + "."]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--holdout", default="largest", choices=tuple(MIN_TRAIN_COUNTS))
    parser.add_argument("--min-train", type=int, help="training GPU counts needed")
    parser.add_argument(
        "--systems", default=",".join(SYSTEMS), help="comma-separated: dgxa100, dgx2h"
    )
    parser.add_argument("--drift-prior", type=float, help="τ₀ (default: the library's)")
    parser.add_argument("--drift-dof", type=float, help="ν₀ (default: the library's)")
    args = parser.parse_args(argv)
    if args.drift_prior is not None:
        PRIOR["drift_prior"] = args.drift_prior
    if args.drift_dof is not None:
        PRIOR["drift_prior_dof"] = args.drift_dof
    warnings.simplefilter("ignore")
    started = time.perf_counter()
    systems = tuple(args.systems.split(","))
    records, skipped = run(args.holdout, args.min_train, systems)
    needed = MIN_TRAIN_COUNTS[args.holdout] if args.min_train is None else args.min_train
    print(report(records, skipped, args.holdout, needed))
    print(f"\n{len(records)} series in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
