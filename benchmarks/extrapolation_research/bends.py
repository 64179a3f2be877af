"""How much the default blend's curve bends where its weights move from NEAR to FAR
(between one and two doublings past the largest measured count), over the fits in fit/.

    python benchmarks/extrapolation_research/bends.py

For each shipped fit: the slope of log time against log N on 400 counts from the largest
measured one to eight times it, the largest jump of that slope between neighbours and
where it is, and whether the curve falls faster than perfect scaling (slope < −1)
anywhere between two and four times the largest count. Quoted in docs/families.md.
"""

from pathlib import Path
import warnings

import numpy as np

import perfmodel as pm

ROOT = Path(__file__).resolve().parents[2]


def bends(path: Path) -> tuple[float, float, float]:
    """``(largest slope jump, where as a multiple of the largest count, least slope in
    2–4×)`` of the fit at `path`."""
    fit = pm.load_fit(path)
    largest = float(np.max(fit.data.gpus))
    counts = largest * np.geomspace(1.0, 8.0, 400)
    time = np.asarray(fit.predict(counts)["time_s"])
    slope = np.diff(np.log(time)) / np.diff(np.log(counts))
    jumps = np.abs(np.diff(slope))
    at = int(np.argmax(jumps))
    middle = np.sqrt(counts[1:] * counts[:-1]) / largest
    inside = (middle > 2.0) & (middle < 4.0)
    return float(jumps[at]), float(counts[at + 1] / largest), float(np.min(slope[inside]))


def main() -> None:
    warnings.simplefilter("ignore")
    rows = []
    for path in sorted((ROOT / "fit").glob("*.json")):
        if path.name != "INDEX.json":
            rows.append((path.stem, *bends(path)))
    jumped = [r for r in rows if r[1] > 0.1]
    faster = [r for r in rows if r[3] < -1.0]
    print(f"{len(rows)} fits; slope jump > 0.1: {len(jumped)}, at", end=" ")
    print(sorted({round(r[2], 1) for r in jumped}), "× the largest count")
    print(f"faster than perfect scaling somewhere in 2–4×: {len(faster)}")
    for name, jump, where, least in sorted(rows, key=lambda r: r[3])[:10]:
        print(f"  {name:45s} jump {jump:.2f} at {where:.1f}×, least slope {least:.2f}")


if __name__ == "__main__":
    main()
