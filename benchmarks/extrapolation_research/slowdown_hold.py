"""The default with and without its forecast held past a slowdown
(`_reference_default.HOLD_SLOWDOWN`, a candidate the library does not ship): where the
curve is slower per unit of work at the largest measured count than at half of it (and
half of it is not within a node that the largest count leaves), the forecast past that
count is not faster than there. On every set and protocol of README's accuracy table,
in both presentations (`held_efficiency.compare`), then every series whose fit on all
its counts the rule changes, with the forecast at 4× and 64× its largest count before
and after.

A Python-API review (2026-12-06) fitted 1, 2, 4, 8, 16 GPUs, fastest at 8 and 16% slower
at 16, and read "fastest: 4096 GPUs": the curve fell again past 32 GPUs.

    cd benchmarks/extrapolation_research
    python slowdown_hold.py > ../results/slowdown_hold.md
"""

from pathlib import Path
import sys

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import _reference_default as reference  # noqa: E402
from held_efficiency import compare, switched, whole_series  # noqa: E402


def changed_series(flag: str = "HOLD_SLOWDOWN") -> None:
    """Series of README's sets whose fit on all their counts the hold `flag` (a module
    attribute of `_reference_default`) changes."""
    print("## Whole series the hold changes (throughput)\n")
    print("| series | measured fastest at | largest | ×4: before → after | ×64: before → after |")
    print("| --- | --- | --- | --- | --- |")

    def forecasts(fit, data):
        return fit.predict(np.array([4.0, 64.0]) * float(data.gpus.max()))

    for name, data, before, after in whole_series(flag, forecasts):
        if np.allclose(before, after, rtol=1e-12):
            continue
        best = data.gpus[np.argmax(data.measured)]
        print(
            f"| {name} | {best:g} | {float(data.gpus.max()):g} | {before[0]:.4g} → "
            f"{after[0]:.4g} | {before[1]:.4g} → {after[1]:.4g} |"
        )
    print()


def main() -> None:
    for presentation in ("throughput", "time"):
        compare(switched("HOLD_SLOWDOWN"), presentation)
    changed_series()
    reference.HOLD_SLOWDOWN = False  # a candidate: the library does not hold (RESULTS.md)


if __name__ == "__main__":
    main()
