"""The research harness of issue #9: problems, baselines and scores on the corpus.

A *problem* is one series of the corpus (`corpus.py`) under one protocol (``half``:
fit the counts up to half the largest; ``largest``: all but the largest; ``largest2``:
all but the two largest) and one presentation (``throughput`` as measured; ``time``:
a throughput series given as seconds per unit of work, 1/throughput). Its error is the
mean absolute percentage error (MAPE) of the measured quantity on the held-out counts,
as in `benchmarks/accuracy.py`; "far worse" is a MAPE above 2× Amdahl's law's (SciPy
least squares on the measured quantity, same presentation) and 1 point above it.

`baseline_errors` computes the published baselines of `benchmarks/baselines.py` once
per problem and caches them in ``out/baselines.pkl``; `perfmodel_errors` reads
today's default (perfmodel's `fit_auto`) from the per-series tables of
``benchmarks/results/acc_*.md`` (accuracy.py's output: running JAX here would take an
hour). Nothing here prints; the scripts that import it do.
"""

from pathlib import Path
import pickle
import sys
import warnings

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import baselines as bl  # noqa: E402
from corpus import load  # noqa: E402

MIN_TRAIN = {"half": 4, "largest": 3, "largest2": 3}
PROTOCOLS = ("half", "largest", "largest2")
PRESENTATIONS = ("throughput", "time")
SETS = ("shipped", "external", "fresh", "unseen", "blind", "vendor", "heldout")
FAR_WORSE, FAR_FLOOR = 2.0, 1.0
BASELINES = {"amdahl (scipy)": bl.fit_amdahl, "usl (scipy)": bl.fit_usl, **bl.BASELINES}
CACHE = HERE / "out" / "baselines.pkl"
RESULTS = HERE.parent / "results"


def kind(name: str) -> str:
    """``usl`` (load series), ``mlperf`` (time to train) or ``scaling`` (GPU tables)."""
    if name.startswith("usl_"):
        return "usl"
    if name.startswith("mlperf"):
        return "mlperf"
    return "scaling"


def stated_strong(row: dict):
    """True (fixed global batch), False (global batch ∝ N), None (not stated)."""
    gb = row["global_batch"]
    if gb is None:
        return None
    if np.allclose(gb, gb[0]):
        return True
    per = gb / row["gpus"]
    return False if np.allclose(per, per[0], rtol=1e-6) else None


def split(row: dict, protocol: str) -> np.ndarray:
    """Mask of the training measurements of `row` under `protocol`."""
    n = row["gpus"]
    if protocol == "half":
        return n <= 0.5 * n.max()
    held = np.unique(n)[-2:] if protocol == "largest2" else [n.max()]
    return ~np.isin(n, held)


def present(row: dict, presentation: str):
    """``(target, measured)``: a throughput series as seconds per unit of work in the
    ``time`` presentation; everything else as measured."""
    if presentation == "time" and row["target"] == "throughput":
        return "time", 1.0 / row["y"]
    return row["target"], row["y"]


def problems(rows: list, protocol: str, presentation: str) -> list[dict]:
    """Every series of `rows` with enough training counts under `protocol`."""
    out = []
    for r in rows:
        keep = split(r, protocol)
        if len(np.unique(r["gpus"][keep])) < MIN_TRAIN[protocol]:
            continue
        target, y = present(r, presentation)
        gpn = None if r["gpus_per_node"] is None else float(r["gpus_per_node"][0])
        out.append(
            {
                "name": r["name"],
                "group": r["group"],
                "kind": kind(r["name"]),
                "set": r["set"],
                "protocol": protocol,
                "presentation": presentation,
                "target": target,
                "n": r["gpus"][keep],
                "y": y[keep],
                "nt": r["gpus"][~keep],
                "yt": y[~keep],
                "gpus_per_node": gpn,
                "strong": stated_strong(r),
            }
        )
    return out


def all_problems(rows=None) -> dict:
    """``{(set, protocol, presentation): [problem, ...]}`` over the whole corpus."""
    rows = rows or load()
    out = {}
    for s in SETS:
        for prot in PROTOCOLS:
            for pres in PRESENTATIONS:
                probs = problems([r for r in rows if r["set"] == s], prot, pres)
                if probs:
                    out[(s, prot, pres)] = probs
    return out


def mape(predicted, measured) -> float:
    """Mean absolute percentage error; inf for a non-finite or non-positive prediction."""
    p = np.asarray(predicted, float)
    if not np.all(np.isfinite(p)) or np.any(p <= 0):
        return float("inf")
    return float(np.mean(np.abs(p - measured) / measured) * 100)


def error_of(fit, p: dict) -> float:
    """MAPE of ``fit(n, y, target, gpus_per_node=, strong=)`` on problem `p` (nan where
    the fit fails)."""
    try:
        predict = fit(
            p["n"], p["y"], p["target"], gpus_per_node=p["gpus_per_node"], strong=p["strong"]
        )
        return mape(predict(p["nt"]), p["yt"])
    except (RuntimeError, ValueError, np.linalg.LinAlgError, FloatingPointError):
        return float("nan")


def baseline_errors(problem_sets: dict, refresh: bool = False) -> dict:
    """``{key: {label: array of MAPE per problem}}`` for every baseline (cached)."""
    if CACHE.exists() and not refresh:
        with open(CACHE, "rb") as f:
            cached = pickle.load(f)
        if set(cached) >= set(problem_sets):
            return cached
    warnings.simplefilter("ignore")
    out = {}
    for key, probs in problem_sets.items():
        out[key] = {
            label: np.array([error_of(fit, p) for p in probs]) for label, fit in BASELINES.items()
        }
    CACHE.parent.mkdir(exist_ok=True)
    with open(CACHE, "wb") as f:
        pickle.dump(out, f)
    return out


def _result_file(set_: str, protocol: str) -> Path:
    short = {
        "shipped": "shipped",
        "external": "ext",
        "fresh": "fresh",
        "unseen": "unseen",
        "blind": "blind",
        "vendor": "vendor",
        "heldout": "heldout",
    }[set_]
    return RESULTS / f"acc_{short}_{protocol}.md"


def perfmodel_errors(key: tuple, probs: list) -> np.ndarray:
    """Today's default's MAPE per problem, from accuracy.py's committed per-series tables
    (nan where the table does not list the series)."""
    set_, protocol, presentation = key
    path = _result_file(set_, protocol)
    found = {}
    if path.exists():
        for block in path.read_text().split("## Presentation: ")[1:]:
            if block.split()[0] != presentation:
                continue
            lines = [ln for ln in block.splitlines() if ln.startswith("| ")]
            head = [c.strip() for c in lines[0].strip("|").split("|")]
            col = head.index("perfmodel")
            for ln in lines[2:]:
                cells = [c.strip() for c in ln.strip("|").split("|")]
                if cells[0] == "groups" or len(cells) != len(head):
                    break
                value = cells[col]
                found[cells[0]] = (
                    float("inf") if value == "∞" else float("nan" if value == "—" else value)
                )
    return np.array([found.get(p["name"], float("nan")) for p in probs])


def summary(errors: np.ndarray, amdahl: np.ndarray) -> tuple:
    """``(median, mean, far worse count)`` over the problems (nan errors left out)."""
    ok = ~np.isnan(errors)
    e, a = errors[ok], amdahl[ok]
    far = int(np.sum((e > FAR_WORSE * a) & (e > a + FAR_FLOOR)))
    return float(np.median(e)), float(np.mean(e)), far
