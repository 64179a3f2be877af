"""A rejected rule (2026-12-04): count a measurement at exactly one node (N = G) as
inside it, so that tables measured from one node up (8, 32, 128 GPUs on nodes of 8)
take the straddling regime's weights.

The four TF1 BERT tables of `benchmarks/heldout` (8, 32, 128 -> 256 on DGX-1 nodes) are
where the default lost most to the power law there; this checks the rule on the 43 seen
tables of the corpus that start at one node (shipped, external, unseen), every protocol
and presentation, before and after (V0: today's rule, N < G; V1: N <= G; V2: V1 unless a
fixed global batch is stated). Median / mean MAPE % over the problems whose training
counts start at G and cross it, with Amdahl's law and the power law beside them.

    python benchmarks/extrapolation_research/corpus.py   # once
    python benchmarks/extrapolation_research/node_equal.py
"""

from pathlib import Path
import sys

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import _reference_default as reference  # noqa: E402
from corpus import load  # noqa: E402
import harness  # noqa: E402

TODAY = reference.straddles


def at_or_below(n, g) -> bool:
    """V1: some count within one node (N <= G) and some beyond it."""
    if g is None:
        return False
    n = np.asarray(n, float)
    return bool(np.any(n <= g) and np.any(n > g))


def starts_at_one_node(row: dict) -> bool:
    g = row["gpus_per_node"]
    return g is not None and row["gpus"].min() >= float(g[0]) and row["gpus"].max() > float(g[0])


def errors(problems: list, straddles) -> np.ndarray:
    reference.straddles = straddles
    try:
        return np.array([harness.error_of(reference.fit_reference, p) for p in problems])
    finally:
        reference.straddles = TODAY


def main() -> None:
    rows = [r for r in load() if starts_at_one_node(r)]
    print(f"{len(rows)} seen tables start at one node and cross it")
    for protocol in harness.PROTOCOLS:
        for presentation in harness.PRESENTATIONS:
            problems = [
                p
                for p in harness.problems(rows, protocol, presentation)
                if p["n"].min() == p["gpus_per_node"] and p["n"].max() > p["gpus_per_node"]
            ]
            out = {"V0": errors(problems, TODAY), "V1": errors(problems, at_or_below)}
            out["V2"] = np.where([bool(p["strong"]) for p in problems], out["V0"], out["V1"])
            for name in ("amdahl (scipy)", "power law"):
                fit = harness.BASELINES[name]
                out[name] = np.array([harness.error_of(fit, p) for p in problems])
            cells = "  ".join(
                f"{k} {np.nanmedian(v):.2f}/{np.nanmean(v):.2f}" for k, v in out.items()
            )
            print(f"{protocol:9s} {presentation:10s} n={len(problems):2d}  {cells}")


if __name__ == "__main__":
    main()
