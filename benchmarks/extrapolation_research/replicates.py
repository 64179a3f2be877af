"""Coverage of the default's intervals on the series that repeat runs, with and without
the repeats' own scatter (`_closed.noise_half_width`, added 2026-12-07).

Only the seven MLPerf v0.7 time-to-train series of the corpus repeat a configuration
(5–10 runs per GPU count); every GPU-scaling table the conformal constants were learned
and scored on has one measurement per count, so their intervals do not move. Each series
is fitted on its training counts (`harness.split`, every protocol) and its held-out runs
are checked against the 50/80/90% intervals, and, inside the measured range, each
measured run against the interval at its own count (what the review asked for: repeats
of a measured count outside its interval).

    python benchmarks/extrapolation_research/replicates.py > benchmarks/results/replicates.md
"""

import families as fm
import harness as h
import numpy as np

ref = fm.ref
LEVELS = (0.5, 0.8, 0.9)


def coverage(with_noise: bool):
    held = {level: [] for level in LEVELS}
    inside = {level: [] for level in LEVELS}
    widths = []
    saved = ref.DefaultFit.noise_half_width
    if not with_noise:
        ref.DefaultFit.noise_half_width = lambda self, level: 0.0
    try:
        for row in h.load():
            if len(np.unique(row["gpus"])) == len(row["gpus"]):
                continue
            for protocol in h.PROTOCOLS:
                keep = h.split(row, protocol)
                n = row["gpus"][keep]
                if len(np.unique(n)) < h.MIN_TRAIN[protocol]:
                    continue
                f = ref.fit_default(n, row["y"][keep], row["target"])
                for level in LEVELS:
                    for mask, out in ((~keep, held), (keep, inside)):
                        m, y = row["gpus"][mask], row["y"][mask]
                        lo, hi = f.interval(m, level)
                        out[level] += list((lo <= y) & (y <= hi))
                lo, hi = f.interval(row["gpus"][~keep], 0.9)
                widths += list(hi / lo)
    finally:
        ref.DefaultFit.noise_half_width = saved
    return held, inside, float(np.median(widths))


def main() -> None:
    print(
        "| intervals | held-out runs | 50% | 80% | 90% | median 90% width (hi/lo) "
        "| measured runs at their own count: 50% | 80% | 90% |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, noise in (("without the repeats' scatter", False), ("with it", True)):
        held, inside, width = coverage(noise)
        cells = [f"{np.mean(held[level]):.2f}" for level in LEVELS]
        own = [f"{np.mean(inside[level]):.2f}" for level in LEVELS]
        row = [name, str(len(held[0.9])), *cells, f"×{width:.2f}", *own]
        print(f"| {' | '.join(row)} |")


if __name__ == "__main__":
    main()
