"""The default with its efficiency held at the largest measured count alone, against held
also on the ramps of its weights (`perfmodel._closed.hold_points`;
`_reference_default.HOLD_RAMPS`), on every set and protocol of README's accuracy table,
in both presentations.

    python benchmarks/extrapolation_research/ramp_hold.py > benchmarks/results/ramp_hold.md

The table's layout is `held_efficiency.py`'s ("before": the largest count alone, "after":
the ramps too), then each series the ramps change and, per set, how many forecasts fell
with N before (the step time of a weak-scaled table, or the GPU-seconds per unit of work
of any table, lower at a larger count than at a smaller one past the measurements).
"""

from pathlib import Path
import sys

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import _reference_default as reference  # noqa: E402
import accuracy  # noqa: E402
from held_efficiency import compare, switched  # noqa: E402


def falling(series, presentation: str) -> tuple[int, int]:
    """``(series whose curve, fitted on all their measurements and held at the largest
    count alone, has GPU-seconds per unit of work that fall somewhere past the
    measurements, series fitted)``, read on 64 points per doubling up to 64× the largest
    measured count."""
    reference.HOLD_RAMPS = False
    count = fitted = 0
    for _, load in series:
        data = accuracy.present(load(), presentation)
        fit = accuracy.fit_proposed(data, accuracy.baseline_info(data))
        fitted += 1
        m = float(np.max(data.gpus)) * 2.0 ** np.linspace(0.0, 6.0, 385)
        work = fit._log_u(m) + np.log(m)
        count += bool(np.any(np.diff(work) < -1e-9))
    reference.HOLD_RAMPS = True
    return count, fitted


def main() -> None:
    for presentation in ("throughput", "time"):
        falls = []

        def count_falls(folder, holdout, series):
            if holdout == "largest" and folder not in {f[0] for f in falls}:
                falls.append((folder, *falling(series, presentation)))

        compare(switched("HOLD_RAMPS"), presentation, count_falls)
        print("| series folder | fitted on every count: curves falling past them, before |")
        print("| --- | --- |")
        for folder, count, fitted in falls:
            print(f"| {folder or 'datasets/ (shipped)'} | {count} of {fitted} |")
        print()
    reference.HOLD_RAMPS = True


if __name__ == "__main__":
    main()
