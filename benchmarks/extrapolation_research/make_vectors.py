"""Test vectors for the library port of the proposed default.

For every shipped, external and fresh series and protocol: the training data, the
counts asked about (every count of the series and twice the largest) and what
`_reference_default.fit_default` returns there (predictions, 50/80/90% intervals, the
weights of every family at each count, the family coefficients, the regime, the
interval table and scale). ``python benchmarks/extrapolation_research/make_vectors.py``
writes ``tests/data/reference_vectors.json`` and prints the number of cases; a port is
right when it matches the predictions within 1e-6 relative.
"""

import json

import families as fm
import harness as h
import numpy as np

ref = fm.ref
PATH = h.HERE.parent.parent / "tests" / "data" / "reference_vectors.json"


def case(row: dict, protocol: str) -> dict | None:
    keep = h.split(row, protocol)
    n = row["gpus"][keep]
    if len(np.unique(n)) < h.MIN_TRAIN[protocol]:
        return None
    g = None if row["gpus_per_node"] is None else float(row["gpus_per_node"][0])
    strong = h.stated_strong(row)
    scaling = None if strong is None else ("strong" if strong else "weak")
    ask = np.unique(np.concatenate([row["gpus"], [2.0 * row["gpus"].max()]]))
    f = ref.fit_default(n, row["y"][keep], row["target"], gpus_per_node=g, scaling=scaling)
    return {
        "series": row["name"],
        "protocol": protocol,
        "target": row["target"],
        "gpus": n.tolist(),
        "measured": row["y"][keep].tolist(),
        "gpus_per_node": g,
        "scaling": scaling,
        "ask": ask.tolist(),
        "predict": f.predict(ask).tolist(),
        "regime": f.regime,
        "unit": f.unit,
        "scale": f.scale,
        "weights": {k: np.asarray(v).tolist() for k, v in f.weights(ask).items()},
        "thetas": {k: np.asarray(v).tolist() for k, v in f.thetas.items()},
        "interval_table": f.interval_table(),
        "interval_scale": f.interval_scale(ask).tolist(),
        "interval": {
            str(level): [a.tolist() for a in f.interval(ask, level)] for level in ref.LEVELS
        },
        "training": f.training_metrics(),
    }


def main() -> None:
    # the port is checked on 455 (the sets added later are scored, not vectors)
    rows = [r for r in h.load() if r["set"] not in ("vendor", "heldout")]
    cases = [c for prot in h.PROTOCOLS for r in rows if (c := case(r, prot)) is not None]
    constants = {
        "ALPHA": ref.ALPHA,
        "FAMILY_ALPHA": ref.FAMILY_ALPHA,
        "RIDGE": ref.RIDGE,
        "NEAR": ref.NEAR,
        "FAR": ref.FAR,
        "FAR_FROM": ref.FAR_FROM,
        "FAR_TO": ref.FAR_TO,
        "KAPPA": ref.KAPPA,
        "LAMBDA": ref.LAMBDA,
        "NODE_KAPPA": ref.NODE_KAPPA,
        "PAST_NODE": ref.PAST_NODE,
        "MIN_DOUBLINGS": ref.MIN_DOUBLINGS,
        "MANY_COUNTS": ref.MANY_COUNTS,
        "INTERVAL_Q": {t: {str(k): v for k, v in q.items()} for t, q in ref.INTERVAL_Q.items()},
        "WEAK_STEP_SLOPE": ref.WEAK_STEP_SLOPE,
    }
    with open(PATH, "w") as fh:
        json.dump({"constants": constants, "cases": cases}, fh, separators=(",", ":"))
    print(len(cases), "cases written to", PATH.relative_to(h.HERE.parent.parent))


if __name__ == "__main__":
    main()
