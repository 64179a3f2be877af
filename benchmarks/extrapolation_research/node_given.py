"""Does giving the node size help a forecast past one node? Every series of README's
sets whose training counts fit in one node of its stated size and whose held-out counts
lie past it, fitted with the node size (as shipped) and without it (the regime then
read from the counts alone): median / mean error % at the held-out counts, the median
signed error (throughput predicted over measured, − = too slow), the 90% coverage, and
the ratio of the speedups the two predict at 64 nodes (how far out they part).

A newcomer's review (2026-12-06) read "if the 8 GPUs measured share one node, give its
size" and found the answer past the node more optimistic with it than without.

    cd benchmarks/extrapolation_research
    python node_given.py > ../results/node_given.md
"""

from pathlib import Path
import sys

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import accuracy  # noqa: E402
from held_efficiency import ROWS, set_series  # noqa: E402


def main() -> None:
    print(
        "| set | series | with the node size: median / mean | signed, median | 90% coverage "
        "| without: median / mean | signed, median | 90% coverage "
        "| speedup at 64 nodes, median ratio with / without |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for label, folder, holdout in ROWS:
        errors, inside, far = {True: [], False: []}, {True: [], False: []}, []
        signed = {True: [], False: []}
        for name, load in set_series(folder):
            data = accuracy.present(load(), "throughput")
            info = accuracy.baseline_info(data)
            node = info["gpus_per_node"]
            train, test = accuracy.holdout_split(data, holdout)
            if node is None or len(np.unique(train.gpus)) < accuracy.MIN_TRAIN_COUNTS[holdout]:
                continue
            if train.gpus.max() > node or test.gpus.min() <= node:
                continue
            speedups = []
            for given in (True, False):
                fitted = accuracy.fit_proposed(
                    train, dict(info, gpus_per_node=node if given else None)
                )
                lo, hi = fitted.interval(test.gpus, 0.9)
                predicted = fitted.predict(test.gpus)
                errors[given].append(accuracy.mape(predicted, test.measured))
                signed[given].append(np.median(100 * (predicted / test.measured - 1)))
                inside[given].append((test.measured >= lo) & (test.measured <= hi))
                n = np.array([1.0, 64.0 * node])
                u = fitted.predict(n)
                u = 1.0 / u if data.target == "throughput" else u
                speedups.append(u[0] / u[1])
            far.append(speedups[0] / speedups[1])
        if not far:
            continue
        cells = []
        for given in (True, False):
            e = np.array(errors[given])
            cover = np.mean(np.concatenate(inside[given]))
            bias = np.median(signed[given])
            cells.append(
                f"{np.median(e):.2f} / {np.mean(e):.2f} | {bias:+.2f} | {100 * cover:.0f}%"
            )
        print(f"| {label} | {len(far)} | {cells[0]} | {cells[1]} | ×{np.median(far):.2f} |")


if __name__ == "__main__":
    main()
