"""Are perfmodel's intervals calibrated on real series it did not see?

For every shipped series: fit the default model (`perfmodel.fit_auto`, default criterion)
on the GPU counts up to half the largest (`_split.split`, shared with accuracy.py), draw
the interval ensemble, and count the held-out measurements inside the 50%, 80% and 90%
prediction intervals. Reported per method, overall, for the series with at least 4
training GPU counts (the ones accuracy.py scores) and per source group, weighting each
measurement equally and each series equally, with the median width of the 90% interval.

It also checks the two priors the intervals carry (`perfmodel._uncertainty.draws`): the
model-form drift per doubling outside the measured counts (τ₀, weight ν_τ) and the
relative noise of one measurement (s₀, weight ν₀). They are ranked by the interval score
(Gneiting & Raftery 2007, in log time, mean over the three levels and over series), a
proper scoring rule that rewards calibration and narrowness together; and by
leave-one-group-out cross-validation: the priors that score best on the *other* source
groups are scored on the held-out group.

Run from the repository root (about 15 minutes on 2 CPU cores)::

    python benchmarks/calibration.py            # prints the tables (Markdown)
    python benchmarks/calibration.py --quick    # every 4th series, default priors only
    python benchmarks/calibration.py --csv my_series/   # your own CSVs instead
"""

import argparse
from pathlib import Path
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _series import add_csv_option, csv_series, shipped_series  # noqa: E402
from _split import group, split  # noqa: E402

import perfmodel as pm  # noqa: E402
from perfmodel._uncertainty import draws as _ensemble  # noqa: E402

LEVELS = (0.5, 0.8, 0.9)
MANY = 4  # the series accuracy.py scores: at least this many training GPU counts
# The priors, for the cross-validation check: (τ₀ drift of log time per doubling, its
# weight ν_τ in doublings², s₀ relative noise, its weight ν₀ in measurements); τ₀ = 0
# leaves model-form error out.
PRIORS = tuple(
    (tau, 2.0, noise, noise_dof)
    for tau in (0.0, 0.025, 0.05, 0.1)
    for noise in (0.005, 0.01, 0.02)
    for noise_dof in (2.0, 4.0, 8.0, 16.0)
)
# (label, method, resample); the first is the library default.
METHODS = (
    ("laplace", "laplace", "residual"),
    ("bootstrap (residual)", "bootstrap", "residual"),
    ("bootstrap (wild)", "bootstrap", "wild"),
    ("bootstrap (case in count)", "bootstrap", "case"),
)


def default_prior() -> tuple[float, float, float, float]:
    e = _ensemble
    return (e.DISCREPANCY, e.DISCREPANCY_DOF, e.NOISE, e.NOISE_DOF)


def held_out_bands(fit, test, method, resample, prior, seed=0) -> np.ndarray:
    """``(levels, 2, rows)``: log of the lower and upper ends of each interval at each
    held-out measurement."""
    tau, tau_dof, noise, noise_dof = prior
    draws = pm.ensemble(
        fit,
        method,
        resample=resample,
        discrepancy=tau,
        discrepancy_dof=tau_dof,
        noise=noise,
        noise_dof=noise_dof,
        seed=seed,
    )
    bands = []
    for level in LEVELS:
        band = pm.predict_interval(fit, test.gpus, level, ensemble=draws, **test.config)
        bands.append(np.log([band["time_s_lo"], band["time_s_hi"]]))
    return np.array(bands)


def collect(series, all_priors=True):
    """Per series of `series` (``(name, load)`` pairs): group, training counts, log
    held-out times and the bands per (method label, prior)."""
    records = []
    for index, (name, load) in enumerate(series):
        train, test = split(load())
        try:
            fit = pm.fit_auto(train).best
        except pm.InputError as error:
            print(f"skip {name}: {error}", file=sys.stderr)
            continue
        record = {
            "name": name,
            "group": group(name),
            "family": fit.family,
            "counts": len(np.unique(train.gpus)),
            "y": np.log(test.time_s),
            "bands": {},
        }
        for label, method, resample in METHODS:
            priors = PRIORS if method == "laplace" and all_priors else (default_prior(),)
            for prior in priors:
                try:
                    bands = held_out_bands(fit, test, method, resample, prior)
                except pm.InputError as error:
                    print(f"skip {name} {label}: {error}", file=sys.stderr)
                    break
                record["bands"][(label, prior)] = bands
        records.append(record)
        print(f"[{index + 1}/{len(series)}] {name}: {fit.family}", file=sys.stderr)
    return records


def _selected(records, key, groups=None, min_counts=0):
    """The records with bands for `key`, in `groups` (all when None), whose training
    split has at least `min_counts` distinct GPU counts."""
    return [
        r
        for r in records
        if key in r["bands"]
        and (groups is None or r["group"] in groups)
        and r["counts"] >= min_counts
    ]


def _per_row(record, key):
    """``(hits, widths, scores)``, each ``(levels, rows)``: inside or not, log width,
    and the interval score ``(u − l) + 2/α·((l − y)⁺ + (y − u)⁺)`` with ``α = 1 − level``."""
    lo, hi = record["bands"][key][:, 0], record["bands"][key][:, 1]
    y = record["y"][None, :]
    alpha = 1.0 - np.asarray(LEVELS)[:, None]
    hits = (lo <= y) & (y <= hi)
    widths = hi - lo
    miss = np.maximum(lo - y, 0.0) + np.maximum(y - hi, 0.0)
    return hits, widths, widths + 2.0 / alpha * np.where(np.isfinite(miss), miss, 0.0)


def summary(records, key, groups=None, per_series=True, min_counts=0) -> dict:
    """Coverage per level, median 90% width factor and mean interval score (NaN when
    nothing is selected); `per_series` weighs each series equally."""
    chosen = _selected(records, key, groups, min_counts)
    if not chosen:
        return {"coverage": np.full(len(LEVELS), np.nan), "width": np.nan, "score": np.nan}
    total, weight, widths, scores = np.zeros(len(LEVELS)), 0.0, [], []
    for r in chosen:
        hits, width, score = _per_row(r, key)
        w = 1.0 / hits.shape[1] if per_series else 1.0
        total += w * hits.sum(axis=1)
        weight += w * hits.shape[1]
        widths.append(np.mean(width[-1]))
        scores.append(np.mean(score))
    return {
        "coverage": total / weight,
        "width": float(np.exp(np.median(widths))),
        "score": float(np.mean(scores)),
    }


def count(records, key, groups=None, min_counts=0) -> tuple[int, int]:
    chosen = _selected(records, key, groups, min_counts)
    return len(chosen), sum(r["y"].size for r in chosen)


def _cells(values) -> list[str]:
    return [f"{v:.2f}" for v in values]


def report(records) -> str:
    groups = sorted({r["group"] for r in records})
    lines = []
    header = "| method | series | held-out rows | " + " | ".join(
        f"{int(level * 100)}% (rows / series)" for level in LEVELS
    )
    lines += [header + " | 90% width | score |", "|" + " --- |" * (5 + len(LEVELS))]
    for label, *_ in METHODS:
        key = (label, default_prior())
        selections = [("all", None, 0), (f"≥ {MANY} training counts", None, MANY)]
        selections += [(g, [g], 0) for g in groups]
        for name, chosen, least in selections:
            series, rows = count(records, key, chosen, least)
            if not series:
                continue
            by_row = summary(records, key, chosen, per_series=False, min_counts=least)
            by_series = summary(records, key, chosen, min_counts=least)
            cells = [
                f"{a:.2f} / {b:.2f}" for a, b in zip(by_row["coverage"], by_series["coverage"])
            ]
            cells += [f"×{by_series['width']:.3g}", f"{by_series['score']:.3f}"]
            lines.append(f"| {label}, {name} | {series} | {rows} | " + " | ".join(cells) + " |")
    lines.append("")
    priors = [p for p in PRIORS if any(("laplace", p) in r["bands"] for r in records)]

    def score(prior, chosen=None):
        return summary(records, ("laplace", prior), chosen)["score"]

    def miscalibration(prior, chosen=None):
        coverage = summary(records, ("laplace", prior), chosen)["coverage"]
        return float(np.sum(np.abs(coverage - np.asarray(LEVELS))))

    ranked = sorted(priors, key=score)
    shown = ranked[:10] + [p for p in [default_prior()] if p in priors and p not in ranked[:10]]
    lines.append(
        f"Laplace, per series, for the {len(shown)} best of {len(priors)} priors by mean "
        "interval score (lower is better) and the default: τ₀ drift of log time per "
        "doubling outside the measured counts (weight ν_τ doublings²), s₀ relative noise "
        "(weight ν₀ measurements); then 90% coverage by group:"
    )
    lines.append("")
    header = "| τ₀ | ν_τ | s₀ | ν₀ | score | 50% | 80% | 90% | 90% width | "
    lines.append(header + " | ".join(groups) + " |")
    lines.append("|" + " --- |" * (9 + len(groups)))
    for prior in shown:
        key = ("laplace", prior)
        s = summary(records, key)
        values = [f"{s['score']:.3f}", *_cells(s["coverage"]), f"×{s['width']:.3g}"]
        values += _cells([summary(records, key, [g])["coverage"][-1] for g in groups])
        mark = " (default)" if prior == default_prior() else ""
        cells = " | ".join(f"{v:g}" for v in prior)
        lines.append(f"| {cells}{mark} | " + " | ".join(values) + " |")
    if len(groups) < 2:  # nothing to hold out against
        return "\n".join(lines)
    lines.append("")
    lines.append(
        "Leave-one-group-out check: the priors chosen on the other groups, by the closest "
        "coverage to nominal (Σ|coverage − level|) or by the best interval score, scored "
        "on the held-out group (per series):"
    )
    lines.append("")
    lines.append(
        "| held-out group | chosen by | τ₀ | ν_τ | s₀ | ν₀ | 50% | 80% | 90% | 90% width |"
    )
    lines.append("|" + " --- |" * 10)
    for g in groups:
        others = [o for o in groups if o != g]
        rankings = {
            "coverage": lambda p: miscalibration(p, others),
            "score": lambda p: score(p, others),
        }
        for by, rank in rankings.items():
            chosen = min(priors, key=rank)
            s = summary(records, ("laplace", chosen), [g])
            values = [*_cells(s["coverage"]), f"×{s['width']:.3g}"]
            cells = " | ".join(f"{v:g}" for v in chosen)
            lines.append(f"| {g} | {by} | {cells} | " + " | ".join(values) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="every 4th series only")
    add_csv_option(parser)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    try:
        series = csv_series(args.csv) if args.csv else shipped_series()
    except pm.InputError as error:
        print(f"calibration.py: error: {error}", file=sys.stderr)
        return 2
    if args.quick:
        series = series[::4]
    start = time.perf_counter()
    records = collect(series, all_priors=not args.quick)
    if not records:
        print("calibration.py: error: no series could be fitted", file=sys.stderr)
        return 2
    families = {}
    for r in records:
        families[r["family"]] = families.get(r["family"], 0) + 1
    print(
        f"{len(records)} series; default model chosen by fit_auto on the training counts: "
        + ", ".join(f"{k} {v}" for k, v in sorted(families.items()))
    )
    print(
        "default interval: method laplace, τ₀ = {:g} per doubling (ν_τ = {:g}), "
        "s₀ = {:g} (ν₀ = {:g}); ".format(*default_prior())
        + f"{time.perf_counter() - start:.0f} s\n"
    )
    print(report(records))
    return 0


if __name__ == "__main__":
    sys.exit(main())
