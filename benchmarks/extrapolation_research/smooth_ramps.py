"""The default with its weights' ramps linear and eased (`_reference_default.SMOOTH_RAMPS`:
smoothstep x²(3 − 2x) of the share along each ramp: far, anchor, past an unmeasured
node). On every set and protocol of README's accuracy table, in both presentations
(`held_efficiency.compare`).

A review (2026-12-07, H1) found corners in the default's curve where the weights' ramp
from NEAR to FAR begins and ends (2× and 4× the largest measured count): its gain per GPU
jumped 0.478 → 0.516 in one GPU at 16 and 0.515 → 0.407 at 32 (1–8 GPUs measured).

    cd benchmarks/extrapolation_research
    python smooth_ramps.py > ../results/smooth_ramps.md
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
        compare(switched("SMOOTH_RAMPS"), presentation)
    reference.SMOOTH_RAMPS = False  # not the default's (RESULTS.md)


if __name__ == "__main__":
    main()
