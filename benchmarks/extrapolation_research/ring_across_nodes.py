"""The default's straddling member with NCCL's flat ring across nodes instead of the
two-level all-reduce, on every set and protocol of README's accuracy table.

    python benchmarks/extrapolation_research/ring_across_nodes.py \
        > benchmarks/results/ring_across_nodes.md

`weak_hierarchical` (`_reference_default.features`, the library's `_closed.
weak_hierarchical_allreduce`) costs a step's traffic across m nodes of l GPUs as the
two-level algorithm does, ``b·(m−1)/(m·l·N)`` per unit of work: at 2 nodes each NIC
carries half of what it carries at many, so nccl-tests would print a bus bandwidth that
falls with the node count. NCCL's flat ring keeps it level: ``b·min(m−1, 1)·(N−1)/(N·l·N)``
(docs/collectives.md). A review of the collectives (round 10b) asked which one the
default should use; this scores both on the same splits (`accuracy.py`'s), nothing else
changed, and lists every series that moves.
"""

from pathlib import Path
import sys

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import _reference_default as reference  # noqa: E402
from _series import csv_series, shipped_series  # noqa: E402
import accuracy  # noqa: E402
from held_efficiency import ROWS  # noqa: E402

TWO_LEVEL = reference.features


def ring_features(family: str, n, gpus_per_node=None) -> np.ndarray:
    """`reference.features`, with `weak_hierarchical`'s traffic across nodes on a flat
    ring: level from 2 nodes on."""
    if family != "weak_hierarchical":
        return TWO_LEVEL(family, n, gpus_per_node)
    n, g = np.asarray(n, float), float(gpus_per_node)
    local, nodes = np.minimum(n, g), np.maximum(n / g, 1.0)
    across = np.minimum(nodes - 1.0, 1.0) * (n - 1.0) / (n * local * n)
    return np.stack([1.0 / n, (local - 1.0) / (local * n), across], axis=-1)


def scored(series, holdout: str, presentation: str, ring: bool) -> dict[str, tuple]:
    """Per usable series: ``(error %, inside the 90% interval)`` of the default."""
    reference.features = ring_features if ring else TWO_LEVEL
    try:
        return accuracy.proposed_scores(series, holdout, presentation)
    finally:
        reference.features = TWO_LEVEL


def main() -> None:
    for presentation in ("throughput", "time"):
        print(f"## Presentation: {presentation}\n")
        print("| set | series | changed | two-level: median / mean | ring: median / mean "
              "| 90% coverage two-level / ring |")  # fmt: skip
        print("| --- | --- | --- | --- | --- | --- |")
        for label, folder, holdout in ROWS:
            series = shipped_series() if folder is None else csv_series([str(HERE.parent / folder)])
            two = scored(series, holdout, presentation, ring=False)
            ring = scored(series, holdout, presentation, ring=True)
            a = np.array([v[0] for v in two.values()])
            b = np.array([ring[k][0] for k in two])
            moved = sum(abs(ring[k][0] - two[k][0]) > 1e-9 for k in two)
            cover = [np.mean(np.concatenate([v[1] for v in d.values()])) for d in (two, ring)]
            print(
                f"| {label} | {len(a)} | {moved} | {np.median(a):.2f} / {np.mean(a):.2f} "
                f"| {np.median(b):.2f} / {np.mean(b):.2f} "
                f"| {100 * cover[0]:.0f}% / {100 * cover[1]:.0f}% |"
            )
        print()


if __name__ == "__main__":
    main()
