"""How close a published series comes to following one family exactly (issue #9).

`perfmodel._fitting.select.EXACT_MAPE_PERCENT` answers with a single family, not the
blend, when the measurements follow it to within that MAPE at two GPU counts more than
its parameters: data from a formula, not from a machine. This prints, over every
training set of the corpus (`corpus.py`; the three protocols of `harness.py`, throughput
presentation, the presentations giving the same fits), the closest any qualifying
family of `fit_auto` comes, so the threshold can be seen to leave every published
series to the blend.

    python benchmarks/extrapolation_research/corpus.py   # once
    python benchmarks/extrapolation_research/exact_family.py
"""

import sys
import warnings

from harness import all_problems
import numpy as np

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2]))
import perfmodel as pm  # noqa: E402
from perfmodel._fitting.select import EXACT_EXTRA_COUNTS, EXACT_MAPE_PERCENT  # noqa: E402


def closest(problem: dict) -> tuple[float, str]:
    """The smallest MAPE (%) of a family of `fit_auto` that has at least
    EXACT_EXTRA_COUNTS counts more than parameters, and its name."""
    measured = "throughput" if problem["target"] == "throughput" else "time_s"
    config = {measured: problem["y"]}
    if problem["gpus_per_node"] is not None:
        config["gpus_per_node"] = problem["gpus_per_node"]
    data = pm.from_arrays(problem["n"], source=problem["name"], **config)
    counts = len(np.unique(problem["n"]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        selection = pm.fit_auto(data, average=False)
    found = [
        (c.fit.mape, c.family)
        for c in selection.candidates
        if c.fit is not None and c.parameters + EXACT_EXTRA_COUNTS <= counts
    ]
    return min(found, default=(float("inf"), "—"))


def main() -> None:
    seen, rows = set(), []
    for (set_, protocol, presentation), problems in all_problems().items():
        if presentation != "throughput":
            continue
        for p in problems:
            key = (p["name"], tuple(p["n"]))
            if key in seen:
                continue
            seen.add(key)
            rows.append((*closest(p), set_, protocol, p["name"]))
    rows.sort()
    print(f"{len(rows)} distinct training sets; threshold {EXACT_MAPE_PERCENT}% MAPE")
    print("closest ten (MAPE %, family, set, protocol, series):")
    for row in rows[:10]:
        print(f"  {row[0]:.4f}  {row[1]:<20} {row[2]:<9} {row[3]:<9} {row[4]}")
    below = sum(r[0] <= EXACT_MAPE_PERCENT for r in rows)
    print(f"training sets answered by a single family instead of the blend: {below}")


if __name__ == "__main__":
    main()
