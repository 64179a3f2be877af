"""The default with and without a floor on stated strong scaling
(`_reference_default.STRONG_FLOOR`): past the largest measured count, the time of the
fixed global batch held at least at the serial part of Amdahl's law fitted to the
measurements, on every set and protocol of README's accuracy table, in both
presentations (`held_efficiency.compare`: changed series, median / mean before and after,
90% coverage); then, further out than any protocol asks, every strong-regime series with
five or more counts fitted on its first three or four and asked at every larger count.

    python benchmarks/extrapolation_research/strong_floor.py > benchmarks/results/strong_floor.md
"""

from pathlib import Path
import sys

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import _reference_default as reference  # noqa: E402
import accuracy  # noqa: E402
from held_efficiency import compare, folders, ROWS, set_series, switched  # noqa: E402


def far_ahead() -> None:
    """Strong-regime series of 5+ counts, fitted on the first k = 3, 4 counts, asked at
    every larger one: mean error % without and with the floor."""
    print("## Far ahead: the first k counts → every larger count (throughput)\n")
    print("| series | k | farthest / largest fitted | without | with the floor |")
    print("| --- | --- | --- | --- | --- |")
    for folder in folders():
        series = set_series(folder)
        for name, load in series:
            data = accuracy.present(load(), "throughput")
            counts = np.unique(data.gpus)
            info = accuracy.baseline_info(data)
            if len(counts) < 5 or not info["strong"]:
                continue
            for k in (3, 4):
                train = data.gpus <= counts[k - 1]
                errors = []
                for floor in (False, True):
                    reference.STRONG_FLOOR = floor
                    fitted = reference.fit_default(
                        data.gpus[train],
                        data.measured[train],
                        data.target,
                        gpus_per_node=info["gpus_per_node"],
                        scaling="strong",
                    )
                    predicted = fitted.predict(data.gpus[~train])
                    errors.append(accuracy.mape(predicted, data.measured[~train]))
                ahead = counts[-1] / counts[k - 1]
                print(f"| {name} | {k} | {ahead:g}× | {errors[0]:.2f} | {errors[1]:.2f} |")
    print()


def margin() -> None:
    """How far above the floor the forecast stays at the held-out counts of every
    strong-regime problem of README's rows (log of forecast u over s; throughput)."""
    reference.STRONG_FLOOR = False
    gaps = []
    for label, folder, holdout in ROWS:
        series = set_series(folder)
        for name, load in series:
            data = accuracy.present(load(), "throughput")
            train, test = accuracy.holdout_split(data, holdout)
            if len(np.unique(train.gpus)) < accuracy.MIN_TRAIN_COUNTS[holdout]:
                continue
            fitted = accuracy.fit_proposed(train, accuracy.baseline_info(data))
            serial = fitted.thetas["amdahl"][0]
            if fitted.regime != "strong" or serial <= 0:
                continue
            gap = float(np.min(fitted._log_u(test.gpus) - np.log(serial)))
            gaps.append((gap, label, name))
    gap, label, name = min(gaps)
    print(
        f"Strong-regime problems: {len(gaps)}; the smallest margin of a held-out forecast "
        f"over the floor: {gap:.2f} in log ({np.exp(gap):.2f}×), {name} ({label}).\n"
    )
    reference.STRONG_FLOOR = True


def main() -> None:
    for presentation in ("throughput", "time"):
        compare(switched("STRONG_FLOOR"), presentation)
    margin()
    far_ahead()
    reference.STRONG_FLOOR = True


if __name__ == "__main__":
    main()
