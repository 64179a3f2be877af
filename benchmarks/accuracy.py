"""How well does perfmodel extrapolate to GPU counts it did not see, against baselines?

For every shipped series: fit on the GPU counts up to half the largest (`_split.split`,
shared with calibration.py), predict the larger counts, and score the mean absolute
percentage error (MAPE) of the measured quantity (throughput, or time) on them. Series
with fewer than 4 distinct training GPU counts are skipped and listed. A second, broader
protocol (``--holdout largest``) predicts only the largest GPU count from all the others
and needs 3 training counts, which most shipped series have; ``--holdout largest2``
predicts the two largest, further ahead.

Methods, all on the same split:

* perfmodel — the default: `perfmodel.fit_auto(train).best` (default criterion), since
  2026-12-01 round 2 of issue #9, which must equal "proposed" (its reference).
* Amdahl, USL — least squares on the measured quantity with SciPy (`curve_fit`):
  throughput ``X1·N/(1 + s(N−1))`` and Gunther's ``γN/(1 + σ(N−1) + κN(N−1))``, or
  time ``t_s + t_p/N`` and ``(1 + σ(N−1) + κN(N−1))/(γN)``.
* Extra-P — its single-parameter modeler (PMNF hypotheses, leave-one-out
  cross-validation, negative exponents allowed for strong scaling) on the measured
  quantity, and as "Extra-P (time)" on seconds per unit of work (1/throughput), the
  quantity perfmodel fits; when the `extrap` package is importable here or through
  ``--extrap-python`` (an interpreter of a separate environment: extrap is not a
  perfmodel dependency).
* The published models of `baselines.py` (NumPy/SciPy, formulas and citations there):
  Ernest (NNLS), a power law, Pollux's throughput model with one and two levels of
  synchronisation, Optimus' speed function, and the leave-one-out choice among Amdahl,
  USL, Ernest and the power law.
* "proposed": the NumPy reference of the default (issue #9, `_reference_default.py`,
  specified in `docs/design/extrapolation.md`), with its interval coverage per source
  group and its fit on its own training points; the library's default is its port.

``--presentation time`` gives every throughput series as seconds per unit of work
(``time_s = 1/throughput``, the same measurements) before anything is fitted, and
scores the error of that time; ``both`` runs both presentations.

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
    python benchmarks/accuracy.py --presentation both  # throughput and time_s = 1/throughput
    python benchmarks/accuracy.py --time-to-train --holdout largest --min-train 2

``--time-to-train`` scores time to train instead, on the MLPerf runs of
``datasets/time_to_train/`` (`time_to_train.py`: the time-to-train family, the critical
batch × the `batch_linear` step time, against this default in the same run).
"""

import argparse
import dataclasses
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

import _reference_default as reference  # noqa: E402
from _series import add_csv_option, csv_series, shipped_series  # noqa: E402
import baselines  # noqa: E402

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
    """Least squares of Amdahl or USL on the measured quantity; returns a predictor
    (`baselines.fit_amdahl` / `fit_usl`: the laws above, fitted to the measured
    quantity over its median so that seconds per unit of work of 1e-5 converge as
    images per second of 1e4 do)."""
    fit = baselines.fit_amdahl if law == "amdahl" else baselines.fit_usl
    return fit(gpus, measured, target)


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


def present(data, presentation: str):
    """`data` as measured (``"throughput"``) or, for a throughput series, as seconds per
    unit of work (``"time"``: ``time_s = 1/throughput``, the same measurements)."""
    if presentation == "time" and data.target == "throughput":
        return dataclasses.replace(data, target="time")
    return data


def stated_scaling(data):
    """True when a ``global_batch`` column is the same at every GPU count (strong
    scaling), False when it grows as the GPU count (weak scaling), else None."""
    batch = data.config.get("global_batch")
    if batch is None:
        return None
    batch = np.asarray(batch, float)
    if np.allclose(batch, batch[0]):
        return True
    per_gpu = batch / data.gpus
    return False if np.allclose(per_gpu, per_gpu[0], rtol=1e-6) else None


def baseline_info(data) -> dict:
    per_node = data.config.get("gpus_per_node")
    return {
        "gpus_per_node": None if per_node is None else float(np.asarray(per_node)[0]),
        "strong": stated_scaling(data),
    }


PROPOSED = "proposed"


def fit_proposed(train, info: dict):
    """The proposed default (`_reference_default.fit_default`) fitted to `train`, with
    the node size and stated scaling of `baseline_info`."""
    scaling = None if info["strong"] is None else ("strong" if info["strong"] else "weak")
    return reference.fit_default(
        train.gpus,
        train.measured,
        train.target,
        gpus_per_node=info["gpus_per_node"],
        scaling=scaling,
    )


def proposed_scores(series, holdout: str, presentation: str) -> dict[str, tuple]:
    """Per usable series of `series` (``(name, load)`` pairs): ``(error %, inside the 90%
    interval per held-out measurement)`` of the proposed default as
    `_reference_default` stands, on `holdout_split`'s split; the studies that switch one
    of its rules score before and after with it."""
    out = {}
    for name, load in series:
        data = present(load(), presentation)
        train, test = holdout_split(data, holdout)
        if len(np.unique(train.gpus)) < MIN_TRAIN_COUNTS[holdout]:
            continue
        fitted = fit_proposed(train, baseline_info(data))
        lo, hi = fitted.interval(test.gpus, 0.9)
        inside = (test.measured >= lo) & (test.measured <= hi)
        out[name] = (mape(fitted.predict(test.gpus), test.measured), inside)
    return out


def add_baselines(record, train, test, info):
    """The published models of `baselines.py` and the proposed default on one split."""
    for label, fit in baselines.BASELINES.items():
        try:
            predict = fit(train.gpus, train.measured, train.target, **info)
            record["mape"][label] = mape(predict(test.gpus), test.measured)
        except (RuntimeError, ValueError, np.linalg.LinAlgError):
            record["mape"][label] = float("nan")
    fitted = fit_proposed(train, info)
    record["mape"][PROPOSED] = mape(fitted.predict(test.gpus), test.measured)
    record["proposed_fit"] = fitted
    inside = {}
    for level in reference.LEVELS:
        lo, hi = fitted.interval(test.gpus, level)
        inside[level] = ((test.measured >= lo) & (test.measured <= hi)).tolist()
    lo, hi = fitted.interval(test.gpus, 0.9)
    record["intervals"] = {"inside": inside, "width90": (hi / lo).tolist()}
    record["train_fit"] = {PROPOSED: fitted.training_metrics()}
    for family, predicted in fitted.family_predictions(train.gpus).items():
        record["train_fit"][family] = _fit_metrics(predicted, train.measured)


def _fit_metrics(predicted, measured) -> dict:
    predicted, measured = np.asarray(predicted, float), np.asarray(measured, float)
    ss_res = float(np.sum((measured - predicted) ** 2))
    ss_tot = float(np.sum((measured - measured.mean()) ** 2))
    return {
        "r2": 1.0 - ss_res / ss_tot if ss_tot > 0 else float("nan"),
        "mape": mape(predicted, measured),
    }


def collect(series, methods, holdout="half", verbose=True, presentation="throughput"):
    """Per usable series of `series` (``(name, load)`` pairs): split, measured held-out
    values and perfmodel's predictions, in `presentation` (see `present`)."""
    import perfmodel as pm

    records, skipped = [], []
    for index, (name, load) in enumerate(series):
        data = present(load(), presentation)
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
                if label == "perfmodel":
                    fitted = result.predict(train.gpus, **train.config)[quantity]
                    record.setdefault("train_fit_perfmodel", _fit_metrics(fitted, train.measured))
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
        add_baselines(record, train, test, baseline_info(data))
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


def source_group(name: str) -> str:
    """The source group of a series for the interval check: its publisher and, for
    DeepLearningExamples, the framework (``dle_pytorch``, ``tf_dgx1``, ``ext_csc``,
    ``fresh_tf_ec2dist``…)."""
    base = name.split(":", 1)[0]
    prefix = next((p for p in ("ext_", "fresh_") if base.startswith(p)), "")
    parts = base.removeprefix(prefix).split("_")
    if parts[0] == "dle" and len(parts) > 1:
        return prefix + "dle_" + {"pyt": "pytorch"}.get(parts[1], parts[1])
    if parts[0] == "tf" and len(parts) > 1:
        return prefix + "tf_" + parts[1]
    return prefix + parts[0]


def interval_report(records) -> str:
    """Coverage of the proposed default's 50/80/90% intervals per source group (each
    held-out measurement counted once) and the median width hi/lo of the 90% one."""
    lines = [
        "Proposed default's prediction intervals (constants calibrated on the shipped GPU-scaling "
        "series, `benchmarks/extrapolation_research/calibrate.py`), share of held-out "
        "measurements inside:",
        "",
        "| source group | series | held-out | 50% | 80% | 90% | 90% width (hi/lo) |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    groups = {}
    for r in records:
        groups.setdefault(source_group(r["name"]), []).append(r)
    for name in sorted(groups, key=lambda g: (g.startswith(("ext_", "fresh_")), g)):
        rs = groups[name]
        cells = []
        for level in reference.LEVELS:
            inside = [x for r in rs for x in r["intervals"]["inside"][level]]
            cells.append(f"{np.mean(inside):.2f}")
        held = sum(len(r["intervals"]["width90"]) for r in rs)
        width = np.median([w for r in rs for w in r["intervals"]["width90"]])
        lines.append(f"| {name} | {len(rs)} | {held} | " + " | ".join(cells) + f" | ×{width:.2f} |")
    every = [r for r in records if group(r["name"]) == "scaling"]
    if every:
        cells = [
            f"{np.mean([x for r in every for x in r['intervals']['inside'][level]]):.2f}"
            for level in reference.LEVELS
        ]
        lines.append("")
        lines.append(
            "GPU-scaling series pooled: "
            + ", ".join(f"{int(level * 100)}% {c}" for level, c in zip(reference.LEVELS, cells))
        )
    return "\n".join(lines)


def training_fit_report(records) -> str:
    """R² and MAPE on the training points of what is returned (issue #9, point 5)."""
    rows = []
    for r in records:
        fits = r["train_fit"]
        families = {k: v for k, v in fits.items() if k != PROPOSED}
        rows.append(
            (
                fits[PROPOSED]["mape"],
                fits[PROPOSED]["r2"],
                min(v["mape"] for v in families.values()),
                max(v["mape"] for v in families.values()),
                r.get("train_fit_perfmodel", {}).get("mape", float("nan")),
                r.get("train_fit_perfmodel", {}).get("r2", float("nan")),
            )
        )
    a = np.array(rows)
    worse_than_all = int(np.sum(a[:, 0] > a[:, 3] + 1e-9))
    worse_best = int(np.sum(a[:, 0] > a[:, 2] + 1.0))
    return "\n".join(
        [
            "Fit on its own training points (MAPE % of the measured quantity; R²):",
            "",
            "| method | median MAPE | max MAPE | median R² | min R² |",
            "| --- | --- | --- | --- | --- |",
            f"| proposed | {np.median(a[:, 0]):.2f} | {np.max(a[:, 0]):.2f} | "
            f"{np.nanmedian(a[:, 1]):.4f} | {np.nanmin(a[:, 1]):.4f} |",
            f"| its best family alone | {np.median(a[:, 2]):.2f} | {np.max(a[:, 2]):.2f} | — | — |",
            f"| perfmodel (the library's default) | {np.nanmedian(a[:, 4]):.2f} | "
            f"{np.nanmax(a[:, 4]):.2f} | "
            f"{np.nanmedian(a[:, 5]):.4f} | {np.nanmin(a[:, 5]):.4f} |",
            "",
            f"Series where the proposed default misses its training points by more than every "
            f"one of its families: {worse_than_all} of {len(a)}; by more than 1 point above its "
            f"best family: {worse_best} of {len(a)}.",
        ]
    )


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
    parser.add_argument(
        "--presentation",
        default="throughput",
        choices=("throughput", "time", "both"),
        help="throughput series as measured (default), as seconds per unit of work "
        "(time_s = 1/throughput), or both, one after the other",
    )
    parser.add_argument("--only", help="comma-separated series names")
    parser.add_argument(
        "--time-to-train",
        action="store_true",
        help="instead: time to train of the MLPerf runs (datasets/time_to_train/), the "
        "time-to-train family against the default in the same run (time_to_train.py)",
    )
    parser.add_argument(
        "--min-train", type=int, help="with --time-to-train: training GPU counts needed"
    )
    add_csv_option(parser)
    parser.add_argument("--extrap-runner", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.extrap_runner:
        warnings.simplefilter("ignore")
        print(json.dumps(_extrap_models(json.load(sys.stdin))))
        return 0

    import perfmodel as pm

    warnings.simplefilter("ignore")
    if args.time_to_train:
        import time_to_train

        argv = ["--holdout", args.holdout]
        if args.min_train is not None:
            argv += ["--min-train", str(args.min_train)]
        return time_to_train.main(argv)
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
    methods = perfmodel_methods(args.compare)
    presentations = ("throughput", "time") if args.presentation == "both" else (args.presentation,)
    for presentation in presentations:
        started = time.perf_counter()
        records, skipped = collect(series, methods, args.holdout, presentation=presentation)
        extrap_note = add_extrap(records, args.extrap_python)
        labels = [*methods, "amdahl (scipy)", "usl (scipy)"]
        labels += [x for x in EXTRAP_LABELS.values() if any(x in r["mape"] for r in records)]
        labels += [*baselines.BASELINES, PROPOSED]
        print(
            f"## Presentation: {presentation}"
            + (
                " (throughput series given as time_s = 1/throughput)"
                if presentation == "time"
                else ""
            )
        )
        print()
        print(report(records, skipped, labels, extrap_note, args.holdout))
        if records:
            print()
            print(interval_report(records))
            print()
            print(training_fit_report(records))
        seconds = {label: sum(r["seconds"][label] for r in records) for label in methods}
        print(
            f"\n{len(records)} series in {time.perf_counter() - started:.0f} s "
            + "(fitting: "
            + ", ".join(f"{label} {s:.0f} s" for label, s in seconds.items())
            + ")\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
