"""Compact tables from benchmarks/extrapolation_research/out/acc_*.md: per set × protocol × presentation, the
"all" and "scaling" rows of the median and mean tables and the far-worse counts."""

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


def tables(text):
    blocks = text.split("## Presentation: ")[1:]
    for b in blocks:
        pres = b.split()[0]
        out = {}
        for title in ("Median", "Mean", "Far"):
            i = b.index(title)
            lines = []
            for l in b[i:].splitlines()[2:]:
                if not l.startswith("|"):
                    break
                lines.append(l)
            head = [c.strip() for c in lines[0].strip("|").split("|")]
            for l in lines[2:]:
                cells = [c.strip() for c in l.strip("|").split("|")]
                out[(title, cells[0])] = dict(zip(head, cells))
        yield pres, out


def main(kind="all"):
    print("| set | protocol | presentation | series | " + " | ".join(SHOW) + " |")
    print("|" + " --- |" * (4 + len(SHOW)))
    for f in sorted(OUT.glob("acc_*.md")):
        m = re.match(r"acc_(shipped|ext|fresh)_(half|largest2|largest)\.md", f.name)
        if not m or not f.stat().st_size:
            continue
        for pres, t in tables(f.read_text()):
            if ("Median", kind) not in t:
                continue
            med, mean, far = t[("Median", kind)], t[("Mean", kind)], t.get(("Far", kind), {})
            vals = {}
            for k in SHOW:
                try:
                    vals[k] = (float(med.get(k, "nan")), float(mean.get(k, "nan")))
                except ValueError:
                    vals[k] = (float("nan"), float("nan"))
            bm = min(v[0] for v in vals.values())
            bn = min(v[1] for v in vals.values())
            cells = []
            for k in SHOW:
                a, b = vals[k]
                s = (
                    (f"**{a:.2f}**" if a == bm else f"{a:.2f}")
                    + " / "
                    + (f"**{b:.2f}**" if b == bn else f"{b:.2f}")
                )
                fw = far.get(k, "—").split(" ")[0]
                cells.append(f"{s} ({fw.split('/')[0]})")
            print(
                f"| {m.group(1)} | {m.group(2)} | {pres} | {med['series']} | "
                + " | ".join(cells)
                + " |"
            )


if __name__ == "__main__":
    main(*(sys.argv[1:] or ["all"]))
