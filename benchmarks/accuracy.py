"""How well does perfmodel extrapolate to GPU counts it did not see, against baselines?

For every shipped series: fit on the GPU counts up to half the largest (`_split.split`,
shared with calibration.py), predict the larger counts, and score the mean absolute
percentage error (MAPE) of the measured quantity (throughput, or time) on them. Series
with fewer than 4 distinct training GPU counts are skipped and listed. A second, broader
protocol (``--holdout largest``) predicts only the largest GPU count from all the others
and needs 3 training counts, which most shipped series have; ``--holdout largest2``
predicts the two largest, further ahead.

Methods, all on the same split:

* perfmodel — the default: `perfmodel.fit_auto(train).best` (default criterion).
* Amdahl, USL — least squares on the measured quantity with SciPy (`curve_fit`):
  throughput ``X1·N/(1 + s(N−1))`` and Gunther's ``γN/(1 + σ(N−1) + κN(N−1))``, or
  time ``t_s + t_p/N`` and ``(1 + σ(N−1) + κN(N−1))/(γN)``.
* Extra-P — its single-parameter modeler (PMNF hypotheses, leave-one-out
  cross-validation, negative exponents allowed for strong scaling) on the measured
  quantity, and as "Extra-P (time)" on seconds per unit of work (1/throughput), the
  quantity perfmodel fits; when the `extrap` package is importable here or through
  ``--extrap-python`` (an interpreter of a separate environment: extrap is not a
  perfmodel dependency).

Medians are reported for the GPU-scaling series (DeepLearningExamples and TensorFlow
benchmark tables) and separately for the two USL load series (N is users or CPUs, not
GPUs) and the MLPerf time-to-train series (convergence changes with N too).

Run from the repository root (about 3 minutes on 2 CPU cores)::

    python benchmarks/accuracy.py
    python benchmarks/accuracy.py --extrap-python /tmp/extrap-venv/bin/python
    python benchmarks/accuracy.py --compare     # also every criterion and family
    python benchmarks/accuracy.py --holdout largest     # 94 series, about 5 minutes
    python benchmarks/accuracy.py --holdout largest2    # 21 series, two counts ahead
    python benchmarks/accuracy.py --csv my_series/      # your own CSVs instead
"""

import argparse
import json
import os
from pathlib import Path
import subprocess
import sys
import time
import warnings

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _series import add_csv_option, csv_series, shipped_series  # noqa: E402

MIN_TRAIN_COUNTS = {"half": 4, "largest": 3, "largest2": 3}
FAR_WORSE = 2.0  # "far worse than Amdahl": more than this factor on MAPE ...
FAR_WORSE_FLOOR = 1.0  # ... and more than this many percentage points


def group(name: str) -> str:
    """``scaling``, ``usl`` (load series) or ``mlperf`` (time-to-train)."""
    if name.startswith("usl_"):
        return "usl"
    if name.startswith("mlperf"):
        return "mlperf"
    return "scaling"


# Baselines --------------------------------------------------------------------------


def _throughput_amdahl(n, x1, s):
    return x1 * n / (1.0 + s * (n - 1.0))


def _throughput_usl(n, gamma, sigma, kappa):
    return gamma * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0))


def _time_amdahl(n, t_s, t_p):
    return t_s + t_p / n


def _time_usl(n, gamma, sigma, kappa):
    return 1.0 / _throughput_usl(n, gamma, sigma, kappa)


def scipy_baseline(law: str, gpus, measured, target: str):
    """Least squares of Amdahl or USL on the measured quantity; returns a predictor."""
    from scipy.optimize import curve_fit

    n, y = np.asarray(gpus, float), np.asarray(measured, float)
    one = float(np.median(y[n == n.min()]) * (n.min() if target == "throughput" else 1.0))
    if target == "throughput":
        if law == "amdahl":
            f, p0, bounds = _throughput_amdahl, [[one, 0.01]], ([0, 0], [np.inf, 1])
        else:
            f, p0 = _throughput_usl, [[one, 0.01, 1e-4], [one, 0.1, 1e-6]]
            bounds = ([0, 0, 0], [np.inf, 1, np.inf])
    elif law == "amdahl":
        t1 = one * n.min()
        f, p0, bounds = _time_amdahl, [[0.05 * t1, 0.95 * t1]], ([0, 0], [np.inf, np.inf])
    else:
        f, p0 = _time_usl, [[1.0 / (one * n.min()), 0.01, 1e-4]]
        bounds = ([0, 0, 0], [np.inf, 1, np.inf])
    best, best_cost = None, np.inf
    for start in p0:
        try:
            p, _ = curve_fit(f, n, y, p0=start, bounds=bounds, maxfev=20000)
        except (RuntimeError, ValueError):
            continue
        cost = float(np.sum((f(n, *p) - y) ** 2))
        if cost < best_cost:
            best, best_cost = p, cost
    if best is None:
        raise RuntimeError(f"{law} least squares did not converge")
    return lambda m: f(np.asarray(m, float), *best)


def _extrap_models(problems: list[dict]) -> list[list[float] | None]:
    """Extra-P's predictions per problem ``{"x", "y", "predict"}`` (run where extrap is
    importable; imports nothing from perfmodel)."""
    from extrap.entities.callpath import Callpath
    from extrap.entities.coordinate import Coordinate
    from extrap.entities.measurement import Measurement
    from extrap.entities.metric import Metric
    from extrap.modelers.single_parameter.basic import SingleParameterModeler

    out = []
    for problem in problems:
        x, y = np.asarray(problem["x"], float), np.asarray(problem["y"], float)
        callpath, metric = Callpath("step"), Metric("time")
        measurements = [
            Measurement(Coordinate(float(c)), callpath, metric, [float(v) for v in y[x == c]])
            for c in np.unique(x)
        ]
        modeler = SingleParameterModeler()
        modeler.allow_negative_exponents = True  # strong scaling: time falls with N
        try:
            model = modeler.create_model(measurements)
            function = model.hypothesis.function
            predicted = [float(function.evaluate(float(c))) for c in problem["predict"]]
            out.append({"predicted": predicted, "function": str(function)})
        except Exception as error:  # noqa: BLE001 — report, don't stop the benchmark
            out.append({"error": f"{type(error).__name__}: {error}"})
    return out


def run_extrap(problems: list[dict], python: str | None) -> tuple[list | None, str]:
    """Extra-P's results, and a note on how it ran (or why it did not)."""
    try:
        import extrap  # noqa: F401

        return _extrap_models(problems), "extrap importable here"
    except ImportError:
        pass
    if not python:
        return None, "skipped: extrap is not importable (see --extrap-python)"
    completed = subprocess.run(
        [python, __file__, "--extrap-runner"],
        input=json.dumps(problems),
        capture_output=True,
        text=True,
        check=False,
    )
    if completed.returncode != 0:
        last = (completed.stderr.strip().splitlines() or ["no output"])[-1]
        return None, f"skipped: {python} failed ({last})"
    version = subprocess.run(
        [python, "-c", "import importlib.metadata as m; print(m.version('extrap'))"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    return json.loads(completed.stdout), f"extrap {version} via {python}"


# The benchmark ----------------------------------------------------------------------


def mape(predicted, measured) -> float:
    predicted, measured = np.asarray(predicted, float), np.asarray(measured, float)
    if not np.all(np.isfinite(predicted)):
        return float("inf")
    return float(np.mean(np.abs(predicted - measured) / measured) * 100.0)


def perfmodel_methods(compare: bool) -> dict:
    """``label → fit function(train)`` for perfmodel: the default, plus with --compare
    every criterion and every family fitted alone."""
    import perfmodel as pm
    from perfmodel._fitting.select import CRITERIA, DEFAULT_CRITERION

    methods = {"perfmodel": lambda train: pm.fit_auto(train).best}
    if compare:
        methods["auto/no-average"] = lambda t: pm.fit_auto(t, average=False).best
        for criterion in CRITERIA:
            if criterion != DEFAULT_CRITERION:
                methods[f"auto/{criterion}"] = lambda t, c=criterion: (
                    pm.fit_auto(t, criterion=c).best
                )
        for family in ("amdahl", "usl", "pmnf", "weak_data_parallel"):
            methods[f"only/{family}"] = lambda t, f=family: pm.fit(f, t)
        methods["only/weak_hierarchical"] = _fit_across_nodes
    return methods


def _fit_across_nodes(train):
    """`weak_hierarchical` alone, where the training counts lie on both sides of
    `gpus_per_node` (`perfmodel.straddles_nodes`), which it needs."""
    import perfmodel as pm

    if not pm.straddles_nodes(train):
        raise pm.InputError("the training counts do not straddle the node boundary")
    return pm.fit("weak_hierarchical", train)


def holdout_split(data, holdout: str):
    """``(train, test)``: ``"half"`` is `_split.split` (counts up to half the largest);
    ``"largest"`` holds out the largest GPU count only, ``"largest2"`` the two largest."""
    from _split import split, subset

    if holdout == "half":
        return split(data)
    held = np.unique(data.gpus)[-2:] if holdout == "largest2" else [data.gpus.max()]
    keep = ~np.isin(data.gpus, held)
    return subset(data, keep), subset(data, ~keep)


def collect(series, methods, holdout="half", verbose=True):
    """Per usable series of `series` (``(name, load)`` pairs): split, measured held-out
    values and perfmodel's predictions."""
    import perfmodel as pm

    records, skipped = [], []
    for index, (name, load) in enumerate(series):
        data = load()
        train, test = holdout_split(data, holdout)
        counts = np.unique(train.gpus)
        if len(counts) < MIN_TRAIN_COUNTS[holdout]:
            skipped.append((name, [int(c) for c in np.unique(data.gpus)]))
            continue
        record = {
            "name": name,
            "group": group(name),
            "target": data.target,
            "train": [int(c) for c in counts],
            "test": [int(c) for c in np.unique(test.gpus)],
            "train_data": train,
            "test_data": test,
            "mape": {},
            "family": {},
        }
        for label, fit_function in methods.items():
            started = time.perf_counter()
            try:
                result = fit_function(train)
                predicted = result.predict(test.gpus, **test.config)
                quantity = "throughput" if data.target == "throughput" else "time_s"
                record["mape"][label] = mape(predicted[quantity], test.measured)
                record["family"][label] = result.family
            except pm.InputError as error:
                record["mape"][label] = float("nan")
                record["family"][label] = f"error: {error}"
            record.setdefault("seconds", {})[label] = time.perf_counter() - started
        for law in ("amdahl", "usl"):
            label = f"{law} (scipy)"
            try:
                predict = scipy_baseline(law, train.gpus, train.measured, data.target)
                record["mape"][label] = mape(predict(test.gpus), test.measured)
            except RuntimeError:
                record["mape"][label] = float("nan")
        records.append(record)
        if verbose:
            chosen = record["family"]["perfmodel"]
            print(
                f"[{index + 1}/{len(series)}] {name}: {chosen}, "
                f"MAPE {record['mape']['perfmodel']:.2f}%",
                file=sys.stderr,
            )
    return records, skipped


EXTRAP_LABELS = {"measured": "Extra-P", "time": "Extra-P (time)"}


def add_extrap(records, python):
    """Extra-P on the measured quantity (what its users model) and on seconds per unit
    of work (what perfmodel fits), for every record."""
    problems = []
    for r in records:
        train, test = r["train_data"], r["test_data"]
        for y in (train.measured, train.time_s):
            problems.append(
                {"x": train.gpus.tolist(), "y": y.tolist(), "predict": test.gpus.tolist()}
            )
    results, note = run_extrap(problems, python)
    if results is None:
        return note
    for index, result in enumerate(results):
        r = records[index // 2]
        space = "measured" if index % 2 == 0 else "time"
        label = EXTRAP_LABELS[space]
        if "error" in result:
            r["mape"][label] = float("nan")
            r.setdefault("extrap", {})[space] = result["error"]
            continue
        values = np.asarray(result["predicted"], float)
        predicted = values
        if space == "time" and r["target"] == "throughput":
            with np.errstate(divide="ignore"):
                predicted = 1.0 / values
        # A PMNF with a negative coefficient can predict a negative or zero quantity.
        bad = ~(values > 0)
        test = r["test_data"]
        r["mape"][label] = float("inf") if bad.any() else mape(predicted, test.measured)
        r.setdefault("extrap", {})[space] = result["function"]
    return note


def _fmt(value: float) -> str:
    if np.isnan(value):
        return "—"
    if np.isinf(value):
        return "∞"
    return f"{value:.2f}"


def _summary(records, label, groups, statistic=np.median) -> float:
    values = [r["mape"].get(label, np.nan) for r in records if r["group"] in groups]
    values = [v for v in values if not np.isnan(v)]
    return float(statistic(values)) if values else float("nan")


def far_worse(records, label, groups, floor=FAR_WORSE_FLOOR) -> tuple[int, int]:
    """``(count, series)`` where `label`'s MAPE exceeds FAR_WORSE × Amdahl's (SciPy) and
    Amdahl's plus `floor` percentage points."""
    chosen = [
        r for r in records if r["group"] in groups and not np.isnan(r["mape"].get(label, np.nan))
    ]
    bad = 0
    for r in chosen:
        ours, amdahl = r["mape"][label], r["mape"]["amdahl (scipy)"]
        if ours > FAR_WORSE * amdahl and ours > amdahl + floor:
            bad += 1
    return bad, len(chosen)


def report(records, skipped, labels, extrap_note, holdout="half") -> str:
    lines = ["| series | group | train GPUs | held-out GPUs | perfmodel family | "]
    lines[0] += " | ".join(labels) + " |"
    lines.append("|" + " --- |" * (5 + len(labels)))
    for r in records:
        cells = [_fmt(r["mape"].get(label, np.nan)) for label in labels]
        train = ",".join(map(str, r["train"]))
        test = ",".join(map(str, r["test"]))
        lines.append(
            f"| {r['name']} | {r['group']} | {train} | {test} | {r['family']['perfmodel']} | "
            + " | ".join(cells)
            + " |"
        )
    for title, statistic in (("Median", np.median), ("Mean", np.mean)):
        lines.append("")
        lines.append(f"{title} MAPE (%) of the held-out GPU counts, by group:")
        lines.append("")
        lines.append("| groups | series | " + " | ".join(labels) + " |")
        lines.append("|" + " --- |" * (2 + len(labels)))
        for name, groups in (
            ("scaling", {"scaling"}),
            ("usl", {"usl"}),
            ("mlperf", {"mlperf"}),
            ("all", {"scaling", "usl", "mlperf"}),
        ):
            n = sum(r["group"] in groups for r in records)
            if n:
                cells = [_fmt(_summary(records, label, groups, statistic)) for label in labels]
                lines.append(f"| {name} | {n} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(
        f"Far worse than Amdahl (SciPy): MAPE > {FAR_WORSE:g}× Amdahl's and more than "
        f"{FAR_WORSE_FLOOR:g} point(s) above it (in brackets: > {FAR_WORSE:g}× alone):"
    )
    lines.append("")
    lines.append("| groups | " + " | ".join(labels) + " |")
    lines.append("|" + " --- |" * (1 + len(labels)))
    for name, groups in (("scaling", {"scaling"}), ("all", {"scaling", "usl", "mlperf"})):
        cells = []
        for label in labels:
            bad, n = far_worse(records, label, groups)
            strict, _ = far_worse(records, label, groups, floor=0.0)
            cells.append(f"{bad}/{n} ({strict}/{n})" if n else "—")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(f"Extra-P: {extrap_note}.")
    lines.append("")
    rule = {
        "half": "up to half the largest",
        "largest": "below the largest",
        "largest2": "below the two largest",
    }[holdout]
    lines.append(
        f"Skipped ({len(skipped)} series with fewer than {MIN_TRAIN_COUNTS[holdout]} "
        f"distinct GPU counts {rule}): "
        + ("; ".join(f"{name} {counts}" for name, counts in skipped) or "none")
        + "."
    )
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--extrap-python",
        default=os.environ.get("EXTRAP_PYTHON"),
        help="a Python interpreter where `import extrap` works (default: $EXTRAP_PYTHON)",
    )
    parser.add_argument(
        "--compare", action="store_true", help="also every criterion and every family alone"
    )
    parser.add_argument(
        "--holdout",
        default="half",
        choices=("half", "largest", "largest2"),
        help="held-out GPU counts: those above half the largest (default), the largest, "
        "or the two largest",
    )
    parser.add_argument("--only", help="comma-separated series names")
    add_csv_option(parser)
    parser.add_argument("--extrap-runner", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.extrap_runner:
        warnings.simplefilter("ignore")
        print(json.dumps(_extrap_models(json.load(sys.stdin))))
        return 0

    import perfmodel as pm

    warnings.simplefilter("ignore")
    try:
        series = csv_series(args.csv) if args.csv else shipped_series()
    except pm.InputError as error:
        print(f"accuracy.py: error: {error}", file=sys.stderr)
        return 2
    if args.only:
        wanted = args.only.split(",")
        unknown = sorted(set(wanted) - {name for name, _ in series})
        if unknown:
            print(f"accuracy.py: error: --only: no series {', '.join(unknown)}", file=sys.stderr)
            return 2
        series = [(name, load) for name, load in series if name in wanted]
    started = time.perf_counter()
    methods = perfmodel_methods(args.compare)
    records, skipped = collect(series, methods, args.holdout)
    extrap_note = add_extrap(records, args.extrap_python)
    labels = [*methods, "amdahl (scipy)", "usl (scipy)"]
    labels += [x for x in EXTRAP_LABELS.values() if any(x in r["mape"] for r in records)]
    print(report(records, skipped, labels, extrap_note, args.holdout))
    seconds = {label: sum(r["seconds"][label] for r in records) for label in methods}
    print(
        f"\n{len(records)} series in {time.perf_counter() - started:.0f} s "
        + "(fitting: "
        + ", ".join(f"{label} {s:.0f} s" for label, s in seconds.items())
        + ")"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
