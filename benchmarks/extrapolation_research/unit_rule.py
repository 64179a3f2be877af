"""How often the time-unit rule of the reference default is right on the corpus.

Every throughput series, on the training counts of every protocol, is turned into the
two time columns a user could have: seconds per unit of work (1/throughput) and seconds
per step of its fixed per-GPU batch (N/throughput, up to the batch); MLPerf's times to
train are per unit (one training run). The rule must call the first "unit" and the
second "step"; and the predictions from the three columns must agree."""

import sys

sys.path.insert(0, "benchmarks/extrapolation_research")
sys.path.insert(0, "benchmarks")
import _reference_default as ref
from harness import load, MIN_TRAIN, split
import numpy as np

rows = load()
right = total = 0
worst = 0.0
wrong = []
for prot in ("half", "largest", "largest2"):
    for r in rows:
        keep = split(r, prot)
        n = r["gpus"][keep]
        if len(np.unique(n)) < MIN_TRAIN[prot]:
            continue
        nt = r["gpus"][~keep]
        y = r["y"][keep]
        g = None if r["gpus_per_node"] is None else float(r["gpus_per_node"][0])
        if r["target"] == "throughput":
            cases = [("unit", 1 / y), ("step", n / y)]
            base = ref.fit_default(n, y, "throughput", gpus_per_node=g).predict(nt)
        else:
            cases = [("unit", y)]
            base = None
        for expected, t in cases:
            f = ref.fit_default(n, t, "time", gpus_per_node=g)
            total += 1
            if f.unit == expected:
                right += 1
            else:
                wrong.append((prot, r["name"], expected, f.how))
            if base is not None and f.unit == expected:
                x = (1 / f.predict(nt)) if expected == "unit" else nt / f.predict(nt)
                worst = max(worst, float(np.max(np.abs(x / base - 1))))
print(f"time columns classified right: {right} of {total}")
print(f"largest relative difference of the predictions, throughput vs time columns: {worst:.1e}")
for w in wrong:
    print("  wrong:", w)
