"""The evidence behind the targets of issue #9 the reference default does not meet.

``python benchmarks/extrapolation_research/limits.py`` prints, per run (set × protocol ×
presentation; the corpus of `corpus.py`):

1. "Far worse than Amdahl's law" (MAPE > 2× Amdahl's, SciPy least squares on the
   measured quantity of that presentation, and > 1 point above it): the count for the
   reference default, for each of its families alone, and for an oracle that picks, per
   series, whichever of the five families (amdahl, weak_data_parallel, power_law,
   power_law_flat, usl) was best on the held-out counts — a bound no combination of
   them that does not see the held-out counts can be sure to beat.
2. The oracle's median and mean MAPE (how low a mean these families allow).
3. A far-worse guard (series with 3 distinct counts where Amdahl's law fits the
   training counts within τ in log u: Amdahl alone): median / mean / far count.
4. A weight floor (weights max((N/N_max)², floor) for every α = 2 family): median / mean
   on each shipped run and the worst training-point MAPE over the corpus.
"""

import families as fm
import harness as h
import numpy as np

ref = fm.ref
FIVE = ["amdahl", "weak_data_parallel", "power_law", "power_law_flat", "usl"]
FLOORS = (0.0, 1 / 64, 1 / 16, 1 / 4)


def fit_default(p):
    return ref.fit_default(
        p["n"], p["y"], p["target"], gpus_per_node=p["gpus_per_node"], scaling=fm.stated(p)
    )


def far_count(e, amdahl) -> int:
    return int(np.sum((e > h.FAR_WORSE * amdahl) & (e > amdahl + h.FAR_FLOOR)))


def main() -> None:
    problem_sets = h.all_problems()
    base = h.baseline_errors(problem_sets)
    variants = list(fm.REFERENCE.values())
    for floor in FLOORS[1:]:
        variants += [(f, 2.0, floor) for f in fm.FAMILIES]
    fm.precompute(problem_sets, variants)
    print("1-3. Far worse than Amdahl, and the oracle over the five families; guard τ:")
    print(
        "| run | series | proposed (far) | "
        + " | ".join(FIVE)
        + " | oracle far | oracle med / mean "
        "| guard 0.005 | guard 0.01 |"
    )
    print("|" + " --- |" * (9 + len(FIVE) - 1))
    for key, probs in problem_sets.items():
        amdahl = base[key]["amdahl (scipy)"]
        ours = np.array([h.mape(fit_default(p).predict(p["nt"]), p["yt"]) for p in probs])
        fam = np.array([[fm.mape(p, p["fam"][fm.REFERENCE[f]][1]) for p in probs] for f in FIVE])
        oracle = fam.min(axis=0)
        cells = [f"{np.median(ours):.2f} / {np.mean(ours):.2f} ({far_count(ours, amdahl)})"]
        cells += [str(far_count(e, amdahl)) for e in fam]
        cells += [
            str(far_count(oracle, amdahl)),
            f"{np.median(oracle):.2f} / {np.mean(oracle):.2f}",
        ]
        for tau in (0.005, 0.01):
            guarded = ours.copy()
            for i, p in enumerate(probs):
                log_u, _, _ = p["fam"][fm.REFERENCE["amdahl"]]
                fits = np.max(np.abs(log_u - np.log(p["u"]))) < tau
                if len(np.unique(p["n"])) == 3 and fits and not fm.straddles(p):
                    guarded[i] = fam[0, i]
            cells.append(
                f"{np.median(guarded):.2f} / {np.mean(guarded):.2f} ({far_count(guarded, amdahl)})"
            )
        print(f"| {' '.join(key)} | {len(probs)} | " + " | ".join(cells) + " |")

    print("\n4. Weight floor on every α = 2 family (throughput presentation):")
    print(
        "| floor | " + " | ".join(f"shipped {p}" for p in h.PROTOCOLS) + " | worst training MAPE |"
    )
    print("|" + " --- |" * (2 + len(h.PROTOCOLS)))
    for floor in FLOORS:
        swap = {name: (v[0], v[1], floor) for name, v in fm.REFERENCE.items() if v[1] == 2.0}
        cells, worst = [], 0.0
        for key, probs in problem_sets.items():
            if key[2] != "throughput":
                continue
            errs = []
            for p in probs:
                kind = fm.regime(p)
                near, far = ref.NEAR[kind], ref.FAR[kind]
                errs.append(fm.mape(p, fm.mixture(p, near, far, 1, swap)))
                train = fm.to_measured(p, fm.mixture(p, near, far, 0, swap), p["n"])
                worst = max(worst, float(np.mean(np.abs(train - p["y"]) / p["y"]) * 100))
            if key[0] == "shipped":
                cells.append(f"{np.median(errs):.2f} / {np.mean(errs):.2f}")
        print(f"| {floor:.4f} | " + " | ".join(cells) + f" | {worst:.1f} |")


if __name__ == "__main__":
    main()
