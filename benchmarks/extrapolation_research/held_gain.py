"""The default with and without its gain per GPU held past the largest measured count
(`_reference_default.HOLD_GAIN`): the throughput is not above its tangent at any hold
point, the tangent's slope the members' slopes weighted as at the point. On every set
and protocol of README's accuracy table, in both presentations
(`held_efficiency.compare`).

A review (2026-12-07, H1) found the default's gain per GPU dipping under 0.5× at 2× the
largest measured count and rising again up to 4×: the weights' ramp from NEAR to FAR
adds its own slope where FAR is the faster mixture.

    cd benchmarks/extrapolation_research
    python held_gain.py > ../results/held_gain.md
"""

from pathlib import Path
import sys

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import _reference_default as reference  # noqa: E402
from held_efficiency import compare, switched  # noqa: E402


def main() -> None:
    for presentation in ("throughput", "time"):
        compare(switched("HOLD_GAIN"), presentation)
    reference.HOLD_GAIN = False  # not the default's rule (RESULTS.md)


if __name__ == "__main__":
    main()
