"""The issue #9 tables of benchmarks/RESULTS.md, from accuracy.py's outputs.

``python benchmarks/extrapolation_research/summarise.py [all|scaling] [FOLDER]`` reads
``acc_{shipped,ext,fresh}_{half,largest,largest2}.md`` (`run_all.sh` writes them to
``out/``, the default FOLDER; copies are committed in ``benchmarks/results/``) and
prints one row per set × protocol × presentation: median / mean MAPE of every method
of the run (bold: best of the run; in brackets the series far worse than Amdahl's law
of that presentation), over the series of the group given (all, or the GPU-scaling
series); then, per run, the proposed default's training fit line.
"""

from pathlib import Path
import re
import sys

OUT = Path(__file__).resolve().parent / "out"
SHOW = [
    "perfmodel",
    "amdahl (scipy)",
    "usl (scipy)",
    "ernest",
    "power law",
    "pollux (1 level)",
    "pollux (2 levels)",
    "optimus",
    "loo classic",
    "proposed",
]
NAME = re.compile(r"acc_(shipped|ext|fresh|unseen|blind|vendor)_(half|largest2|largest)\.md")
SET_ORDER = {"shipped": 0, "ext": 1, "fresh": 2, "unseen": 3, "blind": 4, "vendor": 5}
PROTOCOL_ORDER = {"half": 0, "largest": 1, "largest2": 2}


def _library(fit: dict) -> dict:
    """The library default's row (named "today's default" before 2026-12-01)."""
    return next(v for k, v in fit.items() if k.startswith("perfmodel ("))


def table_after(block: str, title: str) -> dict:
    """{first cell: {column: cell}} of the markdown table after the line starting `title`."""
    lines = []
    for line in block[block.index(title) :].splitlines()[2:]:
        if not line.startswith("|"):
            break
        lines.append(line)
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in lines[2:]]
    return {r[0]: dict(zip(head, r)) for r in rows}


def runs(folder: Path):
    """(set, protocol, presentation, text of that presentation's block) per run."""
    found = []
    for f in folder.glob("acc_*.md"):
        m = NAME.fullmatch(f.name)
        if m and f.stat().st_size:
            for block in f.read_text().split("## Presentation: ")[1:]:
                found.append((m.group(1), m.group(2), block.split()[0], block))
    found.sort(key=lambda r: (SET_ORDER[r[0]], PROTOCOL_ORDER[r[1]], r[2]))
    return found


def number(cell: str) -> float:
    return {"—": float("nan"), "∞": float("inf")}.get(cell, None) or float(cell)


def main(kind: str = "all", folder: Path = OUT) -> None:
    print("| set | protocol | presentation | series | " + " | ".join(SHOW) + " |")
    print("|" + " --- |" * (4 + len(SHOW)))
    training = []
    for set_, protocol, pres, block in runs(folder):
        med = table_after(block, "Median MAPE")[kind]
        mean = table_after(block, "Mean MAPE")[kind]
        far = table_after(block, "Far worse than Amdahl").get(kind, {})
        vals = {k: (number(med.get(k, "—")), number(mean.get(k, "—"))) for k in SHOW}
        best_med = min(v[0] for v in vals.values() if v[0] == v[0])
        best_mean = min(v[1] for v in vals.values() if v[1] == v[1])
        cells = []
        for k in SHOW:
            a, b = vals[k]
            text_a = f"**{a:.2f}**" if a == best_med else f"{a:.2f}"
            text_b = f"**{b:.2f}**" if b == best_mean else f"{b:.2f}"
            cells.append(f"{text_a} / {text_b} ({far.get(k, '—').split('/')[0]})")
        print(f"| {set_} | {protocol} | {pres} | {med['series']} | " + " | ".join(cells) + " |")
        if pres == "throughput":
            fit = table_after(block, "Fit on its own")
            line = block[block.index("Series where the proposed") :].splitlines()[0]
            counts = re.findall(r"(\d+) of (\d+)", line)
            training.append(
                f"| {set_} | {protocol} | {fit['proposed']['median MAPE']} | "
                f"{fit['proposed']['max MAPE']} | {fit['proposed']['min R²']} | "
                f"{fit['its best family alone']['max MAPE']} | "
                f"{_library(fit)['max MAPE']} | "
                f"{counts[0][0]} | {counts[1][0]} of {counts[1][1]} |"
            )
    print()
    print(
        "| set | protocol | proposed: median training MAPE | max | min R² | best family: max "
        "| perfmodel: max | misses more than every family | > 1 point above its best family |"
    )
    print("|" + " --- |" * 9)
    print("\n".join(training))


if __name__ == "__main__":
    args = sys.argv[1:]
    main(args[0] if args else "all", Path(args[1]) if len(args) > 1 else OUT)
