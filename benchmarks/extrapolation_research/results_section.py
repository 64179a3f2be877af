"""Assemble the issue #9 tables of benchmarks/RESULTS.md from benchmarks/extrapolation_research/out/."""

import contextlib
import io
from pathlib import Path
import re
import sys

sys.path.insert(0, str(Path(__file__).resolve().parent))
import summarise

OUT = Path(__file__).resolve().parent / "out"


def section(text, start, stop_blank=2):
    i = text.index(start)
    lines, blanks = [], 0
    for l in text[i:].splitlines():
        if not l.strip():
            blanks += 1
            if blanks >= stop_blank:
                break
        else:
            blanks = 0 if l.startswith("|") else blanks
        lines.append(l)
    return "\n".join(lines).strip()


def main():
    for kind in ("all", "scaling"):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            summarise.main(kind)
        print(f"\nMedian / mean MAPE % (far worse than Amdahl in brackets), groups: {kind}\n")
        print(buf.getvalue())
    for f in sorted(OUT.glob("acc_*.md")):
        m = re.match(r"acc_(shipped|ext|fresh)_(half|largest2|largest)\.md", f.name)
        if not m or not f.stat().st_size:
            continue
        text = f.read_text()
        for block in text.split("## Presentation: ")[1:]:
            pres = block.split()[0]
            if pres != "throughput":
                continue
            print(
                f"\n**{m.group(1)}, {m.group(2)}** — intervals and training fit (throughput; the time presentation gives the same intervals up to rounding):\n"
            )
            i = block.index("| source group |")
            j = block.index("Fit on its own")
            print(block[i:j].strip())
            k = block.index("| method | median MAPE")
            end = block.index("series in", k)
            tail = block[k:end]
            tail = tail[: tail.rfind("\n")]
            print()
            print(tail.strip())


if __name__ == "__main__":
    main()
