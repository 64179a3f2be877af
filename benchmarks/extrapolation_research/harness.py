"""Fast NumPy evaluation of extrapolation methods over the corpus (research only)."""

from pathlib import Path
import sys
import warnings

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "benchmarks"))
sys.path.insert(0, str(HERE))

import baselines as bl  # noqa: E402
from corpus import load  # noqa: E402

MIN_TRAIN = {"half": 4, "largest": 3, "largest2": 3}
FAR_WORSE, FAR_FLOOR = 2.0, 1.0


def kind(name):
    if name.startswith("usl_"):
        return "usl"
    if name.startswith("mlperf"):
        return "mlperf"
    return "scaling"


def stated_strong(row):
    """True (fixed global batch), False (global batch ∝ N), None (not stated)."""
    gb = row["global_batch"]
    if gb is None:
        return None
    n = row["gpus"]
    if np.allclose(gb, gb[0]):
        return True
    per = gb / n
    if np.allclose(per, per[0], rtol=1e-6):
        return False
    return None


def split(row, protocol):
    n = row["gpus"]
    if protocol == "half":
        keep = n <= 0.5 * n.max()
    else:
        held = np.unique(n)[-2:] if protocol == "largest2" else [n.max()]
        keep = ~np.isin(n, held)
    return keep


def present(row, presentation):
    """(target, measured) in a presentation: time = seconds per unit of work."""
    if presentation == "time" and row["target"] == "throughput":
        return "time", 1.0 / row["y"]
    return row["target"], row["y"]


def problems(rows, protocol, presentation):
    out = []
    for r in rows:
        keep = split(r, protocol)
        if len(np.unique(r["gpus"][keep])) < MIN_TRAIN[protocol]:
            continue
        target, y = present(r, presentation)
        gpn = None if r["gpus_per_node"] is None else float(r["gpus_per_node"][0])
        out.append(
            dict(
                name=r["name"],
                group=r["group"],
                kind=kind(r["name"]),
                set=r["set"],
                target=target,
                n=r["gpus"][keep],
                y=y[keep],
                nt=r["gpus"][~keep],
                yt=y[~keep],
                gpus_per_node=gpn,
                strong=stated_strong(r),
            )
        )
    return out


def mape(p, y):
    p = np.asarray(p, float)
    if not np.all(np.isfinite(p)) or np.any(p <= 0):
        return float("inf")
    return float(np.mean(np.abs(p - y) / y) * 100)


def evaluate(methods, probs):
    """{label: array of MAPE per problem}."""
    warnings.simplefilter("ignore")
    res = {}
    for label, fit in methods.items():
        errs = []
        for p in probs:
            try:
                pred = fit(
                    p["n"],
                    p["y"],
                    p["target"],
                    gpus_per_node=p["gpus_per_node"],
                    strong=p["strong"],
                )
                errs.append(mape(pred(p["nt"]), p["yt"]))
            except (RuntimeError, ValueError, np.linalg.LinAlgError, FloatingPointError):
                errs.append(float("nan"))
        res[label] = np.array(errs)
    return res


def summary(res, probs, kinds=("scaling", "usl", "mlperf")):
    sel = np.array([p["kind"] in kinds for p in probs])
    am = res["amdahl"][sel]
    rows = {}
    for label, e in res.items():
        e = e[sel]
        ok = ~np.isnan(e)
        far = int(np.sum((e > FAR_WORSE * am) & (e > am + FAR_FLOOR)))
        rows[label] = (float(np.median(e[ok])), float(np.mean(e[ok])), far, int(sel.sum()))
    return rows


def table(res, probs, kinds=("scaling", "usl", "mlperf"), title=""):
    rows = summary(res, probs, kinds)
    best_med = min(v[0] for v in rows.values())
    best_mean = min(v[1] for v in rows.values())
    lines = [f"{title} ({rows[next(iter(rows))][3]} series)"]
    for label, (med, mean, far, n) in rows.items():
        mark = ("*" if med == best_med else " ") + ("*" if mean == best_mean else " ")
        lines.append(f"  {label:28s} {med:7.2f} {mean:7.2f}  far {far:2d} {mark}")
    return "\n".join(lines)


BASE = {"amdahl": bl.fit_amdahl, "usl": bl.fit_usl, **bl.BASELINES}


def run(
    methods,
    sets=("shipped", "external"),
    protocols=("half", "largest", "largest2"),
    presentations=("throughput", "time"),
    kinds=("scaling", "usl", "mlperf"),
    rows=None,
):
    rows = rows or load()
    out = {}
    for s in sets:
        for prot in protocols:
            for pres in presentations:
                probs = problems([r for r in rows if r["set"] == s], prot, pres)
                if not probs:
                    continue
                res = evaluate(methods, probs)
                out[(s, prot, pres)] = (res, probs)
                print(table(res, probs, kinds, f"{s} {prot} {pres}"), flush=True)
    return out


if __name__ == "__main__":
    run(BASE)
