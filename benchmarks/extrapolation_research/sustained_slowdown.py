"""The default with and without its forecast held past a sustained slowdown
(`_reference_default.HOLD_SUSTAINED`): where the measurements are slower per unit of
work at each of their last two steps, the forecast past the largest measured count is
not faster than the curve there. On every set and protocol of README's accuracy table,
in both presentations (`held_efficiency.compare`), then every series whose fit on all
its counts the rule changes, with the forecast at 4× and 64× its largest count before
and after.

A review (2026-12-07, H3) fitted the USL's SPEC SDM91 table (fastest at 72, slower at
108, 144 and 216) and read "fastest: still speeding up at 4096 GPUs".

    cd benchmarks/extrapolation_research
    python sustained_slowdown.py > ../results/sustained_slowdown.md
"""

from pathlib import Path
import sys

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import _reference_default as reference  # noqa: E402
from held_efficiency import compare, switched  # noqa: E402
from slowdown_hold import changed_series  # noqa: E402


def main() -> None:
    for presentation in ("throughput", "time"):
        compare(switched("HOLD_SUSTAINED"), presentation)
    changed_series("HOLD_SUSTAINED")
    reference.HOLD_SUSTAINED = True  # the default's rule (RESULTS.md)


if __name__ == "__main__":
    main()
