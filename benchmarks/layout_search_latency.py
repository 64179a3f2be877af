"""How long a layout search takes: ``perfmodel optimal FIT --max-gpus 512`` of the hybrid
fit of `datasets/megatron_k22_two_runs.csv` (docs/layouts.md's example), each run a fresh
process pinned to two cores, against a previous commit in the same run (a ``git
worktree`` of it on ``PYTHONPATH``), the two alternating; the outputs must agree. Cold:
an empty compilation cache (a first search); warm: the cache of an earlier run of the
same commit (the command line keeps one, `perfmodel._cli.cache`).

    python benchmarks/layout_search_latency.py --previous a91d502 --runs 3

Prints each run's seconds, the median per commit and their ratio. Wall clock: on a
shared machine they are upper bounds (the load average is printed).
"""

import argparse
import os
from pathlib import Path
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = Path(__file__).resolve().parent.parent
RUNS_CSV = ROOT / "datasets" / "megatron_k22_two_runs.csv"


def command(pythonpath: Path, cache: Path, *argv: str) -> tuple[float, str]:
    """Seconds and standard output of ``perfmodel ARGV`` importing from `pythonpath`,
    its compilation cache in `cache`."""
    env = {**os.environ, "PYTHONPATH": str(pythonpath), "PERFMODEL_CACHE_DIR": str(cache)}
    line = [sys.executable, "-m", "perfmodel", *argv]
    if hasattr(os, "sched_setaffinity"):
        line = ["taskset", "-c", "0,1", *line]
    start = time.perf_counter()
    done = subprocess.run(line, env=env, capture_output=True, text=True, check=True)
    return time.perf_counter() - start, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--previous", help="a commit to time in the same run")
    parser.add_argument("--runs", type=int, default=3, help="runs per commit (default 3)")
    args = parser.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        fit = folder / "megatron_fit.json"
        command(ROOT, folder / "fit", "fit", str(RUNS_CSV), "--model", "hybrid", "-o", str(fit))
        trees = {"now": ROOT}
        if args.previous:
            trees[args.previous] = folder / "previous"
            subprocess.run(
                [
                    "git",
                    "-C",
                    str(ROOT),
                    "worktree",
                    "add",
                    "-q",
                    str(trees[args.previous]),
                    args.previous,
                ],
                check=True,
            )
        seconds = {(n, mode): [] for n in trees for mode in ("cold", "warm")}
        outputs: dict[str, set[str]] = {name: set() for name in trees}
        question = ("optimal", str(fit), "--max-gpus", "512")
        try:
            for name, tree in trees.items():  # prime each commit's warm cache
                command(tree, folder / f"warm-{name}", *question)
            for run in range(args.runs):
                for name, tree in trees.items():
                    for mode in ("cold", "warm"):
                        cache = folder / (
                            f"cold-{name}-{run}" if mode == "cold" else f"warm-{name}"
                        )
                        took, out = command(tree, cache, *question)
                        seconds[name, mode].append(took)
                        outputs[name].add(out)
        finally:
            if args.previous:
                subprocess.run(
                    [
                        "git",
                        "-C",
                        str(ROOT),
                        "worktree",
                        "remove",
                        "--force",
                        str(trees[args.previous]),
                    ],
                    check=True,
                )
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for (name, mode), values in seconds.items():
        runs = ", ".join(f"{v:.1f}" for v in values)
        print(f"{name:>10} {mode}: median {statistics.median(values):.1f} s ({runs})")
    if args.previous:
        for mode in ("cold", "warm"):
            before = statistics.median(seconds[args.previous, mode])
            print(f"{mode}: previous / now {before / statistics.median(seconds['now', mode]):.2f}×")
        print(f"same output: {outputs['now'] == outputs[args.previous]}")


if __name__ == "__main__":
    main()
