"""A one-GPU time of 0 refused whether or not one GPU was measured
(`_reference_default.ONE_GPU_MEASURED`, 2026-12-06).

`weak_data_parallel` and `weak_hierarchical` take their one-GPU time from their compute
coefficient alone. Since 2026-12-03 a fit that set it to 0 is redone without the last
columns, but only for tables measured from 2 GPUs up. A measurement at one GPU, weighted
(1/N_max)², did not stop it: Lambda's Tacotron 2 on H100 (1, 4, 8 GPUs; the throughput
falls by 37% from 4 to 8) got a member with a one-GPU time of 1e-26 of the measured, a
training error r of 11 in log and a 90% interval of ×e^21 at 8 GPUs. This prints
README's sets and protocols before and after (`held_efficiency.compare`), in both
presentations, and the series whose member changes when fitted on all their counts.

    cd benchmarks/extrapolation_research
    python one_gpu_measured.py > ../results/one_gpu_measured.md
"""

from pathlib import Path
import sys

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import _reference_default as reference  # noqa: E402
from held_efficiency import compare, switched, whole_series  # noqa: E402


def changed_series() -> None:
    """Every series of README's sets fitted on all its counts: those whose fit changes,
    with the training RMS r before and after and the 90% width at the largest count."""
    print("## Whole series whose fit changes (throughput)\n")
    print("| series | r before | r after | 90% width at the largest, before | after |")
    print("| --- | --- | --- | --- | --- |")

    def fitted(fit, data):
        return fit

    for name, data, before, after in whole_series("ONE_GPU_MEASURED", fitted):
        if all(np.array_equal(before.thetas[k], after.thetas[k]) for k in before.thetas):
            continue
        top = np.array([data.gpus.max()])
        widths = [float(np.divide(*f.interval(top)[::-1])[0]) for f in (before, after)]
        print(
            f"| {name} | {before.training_rms():.3g} | {after.training_rms():.3g} "
            f"| ×{widths[0]:.3g} | ×{widths[1]:.3g} |"
        )
    print()


def main() -> None:
    for presentation in ("throughput", "time"):
        compare(switched("ONE_GPU_MEASURED"), presentation)
    changed_series()
    reference.ONE_GPU_MEASURED = True


if __name__ == "__main__":
    main()
