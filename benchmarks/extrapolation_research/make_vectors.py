"""Test vectors for the library port of the proposed default: for every shipped and
external series and protocol, the training data, the counts asked about and what
`_reference_default.fit_default` returns (predictions, 50/80/90% intervals, family
coefficients). ``python benchmarks/extrapolation_research/make_vectors.py`` writes benchmarks/extrapolation_research/reference_vectors.json;
the port should match the predictions within 1e-6 relative."""

import json
import sys

sys.path.insert(0, "benchmarks/extrapolation_research")
sys.path.insert(0, "benchmarks")
import _reference_default as ref
from harness import load, MIN_TRAIN, split, stated_strong
import numpy as np

out = []
for prot in ("half", "largest", "largest2"):
    for r in load():
        keep = split(r, prot)
        n = r["gpus"][keep]
        if len(np.unique(n)) < MIN_TRAIN[prot]:
            continue
        g = None if r["gpus_per_node"] is None else float(r["gpus_per_node"][0])
        strong = stated_strong(r)
        scaling = None if strong is None else ("strong" if strong else "weak")
        ask = np.unique(np.concatenate([r["gpus"], 2.0 * r["gpus"].max() * np.ones(1)]))
        f = ref.fit_default(n, r["y"][keep], r["target"], gpus_per_node=g, scaling=scaling)
        item = {
            "series": r["name"],
            "protocol": prot,
            "target": r["target"],
            "gpus": n.tolist(),
            "measured": r["y"][keep].tolist(),
            "gpus_per_node": g,
            "scaling": scaling,
            "ask": ask.tolist(),
            "predict": f.predict(ask).tolist(),
            "weights": f.weights,
            "unit": f.unit,
            "thetas": {k: np.asarray(v).tolist() for k, v in f.mixture_thetas.items()}
            | {k: np.asarray(v).tolist() for k, v in f.thetas.items()},
            "scale": f.scale,
            "interval": {str(L): [a.tolist() for a in f.interval(ask, L)] for L in ref.INTERVAL_Q},
            "training": f.training_metrics(),
        }
        out.append(item)
with open("tests/data/reference_vectors.json", "w") as fh:
    json.dump(
        {
            "constants": {
                "ALPHA": ref.ALPHA,
                "RIDGE": ref.RIDGE,
                "MIXTURE": ref.MIXTURE,
                "KAPPA": ref.KAPPA,
                "MIN_DOUBLINGS": ref.MIN_DOUBLINGS,
                "INTERVAL_Q": ref.INTERVAL_Q,
                "WEAK_STEP_SLOPE": ref.WEAK_STEP_SLOPE,
            },
            "cases": out,
        },
        fh,
        separators=(",", ":"),
    )
print(len(out), "cases")
