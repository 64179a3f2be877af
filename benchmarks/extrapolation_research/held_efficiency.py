"""The default with and without its efficiency held past the largest measured count
(`perfmodel._closed.held_efficiency`; `_reference_default.HOLD_EFFICIENCY`), on every
set and protocol of README's accuracy table, in both presentations.

    python benchmarks/extrapolation_research/held_efficiency.py \
        > benchmarks/results/held_efficiency.md

Per set: how many series the hold changes, the median / mean error (%) before and after,
and the share of held-out measurements inside the 90% interval before and after; then
each changed series. The splits, presentations and scoring are `accuracy.py`'s (its
``proposed`` column is the "after" here); the baselines do not change and are not rerun.
"""

from pathlib import Path
import sys

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import _reference_default as reference  # noqa: E402
from _series import csv_series, shipped_series  # noqa: E402
import accuracy  # noqa: E402

# README's rows: the set, its series and the held-out counts.
ROWS = (
    ("shipped, two counts ahead", None, "largest2"),
    ("shipped, one count ahead", None, "largest"),
    ("external, one count ahead", "external", "largest"),
    ("unseen, one count ahead", "unseen", "largest"),
    ("blind, 1–16 → 32 GPUs", "blind", "largest"),
    ("blind, one node → 2 and 4 nodes", "blind", "largest2"),
    ("vendor, 1–4 → 8 GPUs", "vendor", "largest"),
    ("held out, one count ahead", "heldout", "largest"),
    ("fresh, one count ahead", "fresh", "largest"),
)


def set_series(folder):
    """The series of one of README's sets: the shipped ones (`folder` None) or a
    folder of `benchmarks/`."""
    return shipped_series() if folder is None else csv_series([str(HERE.parent / folder)])


def folders() -> list:
    """Each folder of `ROWS` once, in order."""
    return list(dict.fromkeys(folder for _, folder, _ in ROWS))


def switched(flag: str):
    """A `compare` scorer for a rule of the default switched by the module attribute
    `_reference_default.<flag>`: per usable series, ``(error %, share inside the 90%
    interval)`` with the rule off or on."""

    def scored(series, holdout: str, presentation: str, on: bool) -> dict[str, tuple]:
        setattr(reference, flag, on)
        return accuracy.proposed_scores(series, holdout, presentation)

    return scored


def whole_series(flag: str, measure):
    """Each series of README's sets with two counts or more, as throughput, fitted on
    all its counts with the rule `_reference_default.<flag>` off and on: yields
    ``(name, data, measure(fit, data) off, measure(fit, data) on)``, `measure` called
    while the rule is switched so (a forecast reads it)."""
    for folder in folders():
        for name, load in set_series(folder):
            data = accuracy.present(load(), "throughput")
            if len(np.unique(data.gpus)) < 2:
                continue
            info = accuracy.baseline_info(data)
            measured = []
            for on in (False, True):
                setattr(reference, flag, on)
                measured.append(measure(accuracy.fit_proposed(data, info), data))
            yield name, data, *measured


def compare(score, presentation: str, after_each=None) -> None:
    """Print README's sets in `presentation`, before and after a rule of the default:
    ``score(series, holdout, presentation, on)`` scores it with the rule off or on;
    ``after_each(folder, holdout, series)`` is called per set (extra tables)."""
    print(f"## Presentation: {presentation}\n")
    print("| set | series | changed | before: median / mean | after: median / mean |")
    print("| --- | --- | --- | --- | --- |")
    changes = []
    coverage = []
    for label, folder, holdout in ROWS:
        series = set_series(folder)
        before = score(series, holdout, presentation, False)
        after = score(series, holdout, presentation, True)
        b = np.array([v[0] for v in before.values()])
        a = np.array([after[k][0] for k in before])
        moved = [k for k in before if abs(after[k][0] - before[k][0]) > 1e-9]
        print(
            f"| {label} | {len(b)} | {len(moved)} | {np.median(b):.2f} / {np.mean(b):.2f} "
            f"| {np.median(a):.2f} / {np.mean(a):.2f} |"
        )
        cover = [np.mean(np.concatenate([v[1] for v in d.values()])) for d in (before, after)]
        coverage.append((label, *cover))
        changes += [(label, k, before[k][0], after[k][0]) for k in moved]
        if after_each is not None:
            after_each(folder, holdout, series)
    print("\n| set | 90% coverage before | after |\n| --- | --- | --- |")
    for label, b, a in coverage:
        print(f"| {label} | {100 * b:.0f}% | {100 * a:.0f}% |")
    print("\n| set | series | error % before | after |\n| --- | --- | --- | --- |")
    for label, name, b, a in changes:
        print(f"| {label} | {name} | {b:.2f} | {a:.2f} |")
    print()


def main() -> None:
    for presentation in ("throughput", "time"):
        compare(switched("HOLD_EFFICIENCY"), presentation)
    reference.HOLD_EFFICIENCY = True


if __name__ == "__main__":
    main()
