"""Does the floor of perfect scaling cost the intervals any coverage? (2026-12-04)

`_reference_default.DefaultFit.log_floor` (the library's `_closed.linear_floor`) keeps
an interval's fastest end at perfect scaling from the fastest plausible one-GPU time (or
from the best efficiency measured, where that is above 1): a far extrapolation's upper
speedup bound had reached 162% efficiency. This prints, for every held-out GPU-scaling
measurement of every set and protocol (throughput presentation, each training set once),
the 50/80/90% coverage of the reference's intervals without and with the floor, and how
many interval ends the floor moved.

    python benchmarks/extrapolation_research/corpus.py   # once
    python benchmarks/extrapolation_research/linear_floor.py
"""

import warnings

import families as fm
import harness as h
import numpy as np

ref = fm.ref
LEVELS = (0.5, 0.8, 0.9)


def coverage(floor: bool) -> tuple[dict, dict]:
    """``({(set, level): [inside, ...]}, {(set, level): [upper end, ...]})``."""
    original = ref.DefaultFit.log_floor
    if not floor:
        ref.DefaultFit.log_floor = lambda self, m, centre, one: np.full(np.shape(centre), -np.inf)
    inside, ends, seen = {}, {}, set()
    try:
        for (set_, _, presentation), problems in h.all_problems().items():
            if presentation != "throughput":
                continue
            for p in problems:
                key = (p["name"], tuple(p["n"]))
                if p["kind"] != "scaling" or key in seen:
                    continue
                seen.add(key)
                f = ref.fit_default(
                    p["n"],
                    p["y"],
                    p["target"],
                    gpus_per_node=p["gpus_per_node"],
                    scaling=fm.stated(p),
                )
                for level in LEVELS:
                    lo, hi = f.interval(p["nt"], level)
                    ok = (p["yt"] >= lo) & (p["yt"] <= hi)
                    inside.setdefault((set_, level), []).extend(ok.tolist())
                    ends.setdefault((set_, level), []).extend(
                        (hi if p["target"] == "throughput" else lo).tolist()
                    )
    finally:
        ref.DefaultFit.log_floor = original
    return inside, ends


def main() -> None:
    warnings.simplefilter("ignore")
    without, ends_without = coverage(False)
    with_, ends_with = coverage(True)
    print("| set | held-out points | 50% | 80% | 90% | ends moved at 90% |")
    print("| --- | --- | --- | --- | --- | --- |")
    for set_ in sorted({k[0] for k in without}):
        cells = [
            f"{np.mean(without[(set_, level)]):.3f} → {np.mean(with_[(set_, level)]):.3f}"
            for level in LEVELS
        ]
        moved = int(
            np.sum(~np.isclose(ends_without[(set_, 0.9)], ends_with[(set_, 0.9)], rtol=1e-12))
        )
        print(f"| {set_} | {len(without[(set_, 0.9)])} | {' | '.join(cells)} | {moved} |")


if __name__ == "__main__":
    main()
