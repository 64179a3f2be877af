"""How often the time-unit rule of the reference default is right on the corpus.

Every throughput series, on the training counts of every protocol, is turned into the
two time columns a user could have: seconds per unit of work (1/throughput) and seconds
per step of its fixed per-GPU batch (N/throughput, up to the batch); MLPerf's times to
train are per unit (one training run). The rule must call the first "unit" and the
second "step", and the predictions from the three columns must agree.
``python benchmarks/extrapolation_research/unit_rule.py`` prints the count classified
right, the largest relative difference of the predictions, and any misread column.
"""

import families as fm
import harness as h
import numpy as np

ref = fm.ref


def main() -> None:
    right = total = 0
    worst = 0.0
    wrong = []
    for prot in h.PROTOCOLS:
        for r in h.load():
            keep = h.split(r, prot)
            n = r["gpus"][keep]
            if len(np.unique(n)) < h.MIN_TRAIN[prot]:
                continue
            nt, y = r["gpus"][~keep], r["y"][keep]
            g = None if r["gpus_per_node"] is None else float(r["gpus_per_node"][0])
            if r["target"] == "throughput":
                cases = [("unit", 1 / y), ("step", n / y)]
                base = ref.fit_default(n, y, "throughput", gpus_per_node=g).predict(nt)
            else:
                cases, base = [("unit", y)], None
            for expected, t in cases:
                f = ref.fit_default(n, t, "time", gpus_per_node=g)
                total += 1
                if f.unit != expected:
                    wrong.append((prot, r["name"], expected, f.how))
                    continue
                right += 1
                if base is not None:
                    x = (1 / f.predict(nt)) if expected == "unit" else nt / f.predict(nt)
                    worst = max(worst, float(np.max(np.abs(x / base - 1))))
    print(f"time columns classified right: {right} of {total}")
    print(
        f"largest relative difference of the predictions, throughput vs time columns: {worst:.1e}"
    )
    for w in wrong:
        print("  wrong:", w)


if __name__ == "__main__":
    main()
