"""How long the command line takes to answer: each command in a fresh process, several
times, the median, against the previous release and a SciPy fit of the same law.

    python benchmarks/latency.py                     # 3 repeats, previous release 9ceab2a
    python benchmarks/latency.py --repeats 5 --previous 9ceab2a --json latency.json

Every timing is the wall clock of a cold process (``python -m perfmodel ...``), pinned
to two CPU cores (the targets are for two cores), with its own compilation cache:
"first" runs start from an empty cache (a first-ever call), "repeated" ones (the same
command again) from the cache the first left, which since 2026-12-01 holds the first
call's record (`perfmodel._cli.replay`: a repeat prints and writes it without fitting),
and "another CSV" fits a small CSV with other bytes (no record) with the first fit's
compiled functions in the cache. The previous release runs from a ``git worktree`` of its commit,
with its own ``PYTHONPATH``. SciPy fits Amdahl's law ``t = s + p/N`` to the same CSV with
``scipy.optimize.curve_fit``, in a cold process too (its fit alone is printed as well).

Targets (issue 12): first-ever ``fit`` ≤ 3 s, repeated ≤ 1 s, ``predict``/``optimal``
≤ 0.5 s, ``--help`` ≤ 0.3 s (and a command's ``--help``, since 2026-12-06). The
machine's load average is printed before and after: on a shared machine the numbers are
upper bounds.
"""

import argparse
import json
import os
from pathlib import Path
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = Path(__file__).resolve().parent.parent
CSV = "gpus,time_s\n1,1.0\n2,0.53\n4,0.29\n8,0.18\n"
TARGETS = {
    "--help": 0.3,
    "fit --help": 0.3,
    "fit (first ever)": 3.0,
    "fit (repeated)": 1.0,
    "predict": 0.5,
    "optimal": 0.5,
}
SCIPY = """
import time
start = time.perf_counter()
import numpy as np
from scipy.optimize import curve_fit
data = np.loadtxt({csv!r}, delimiter=",", skiprows=1)
t0 = time.perf_counter()
(s, p), _ = curve_fit(lambda n, s, p: s + p / n, data[:, 0], data[:, 1], p0=(0.1, 1.0))
print(time.perf_counter() - t0)
"""


def two_cores():
    """Pin a child to two CPU cores (all it has when the machine has two)."""
    cores = sorted(os.sched_getaffinity(0))[:2]
    os.sched_setaffinity(0, cores)


def timed(argv, env, cwd) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    done = subprocess.run(
        argv, env=env, cwd=cwd, capture_output=True, text=True, preexec_fn=two_cores
    )
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return seconds, done


def measure(source: Path, work: Path, name: str, repeats: int) -> dict[str, list[float]]:
    """Seconds of each command run from `source` (a checkout), `repeats` times."""
    cache = work / f"cache-{name}"
    env = {k: v for k, v in os.environ.items() if k != "PERFMODEL_NO_CACHE"}
    env.update(PYTHONPATH=str(source), PERFMODEL_CACHE_DIR=str(cache), JAX_PLATFORMS="cpu")
    csv, fit = work / "small.csv", work / f"fit-{name}.json"
    cli = [sys.executable, "-m", "perfmodel"]
    commands = {
        "--help": [*cli, "--help"],
        "fit --help": [*cli, "fit", "--help"],
        "import perfmodel": [sys.executable, "-c", "import perfmodel"],
        "fit": [*cli, "fit", str(csv), "-o", str(fit)],
        "fit --model amdahl": [*cli, "fit", str(csv), "--model", "amdahl", "-o", str(fit)],
        "predict": [*cli, "predict", str(fit), "--gpus", "1,8,64"],
        "optimal": [*cli, "optimal", str(fit)],
    }
    times: dict[str, list[float]] = {}
    for label in ("--help", "fit --help", "import perfmodel"):
        times[label] = [timed(commands[label], env, work)[0] for _ in range(repeats)]
    for label in ("fit --model amdahl", "fit"):
        first, again, other = [], [], []
        for i in range(repeats):
            shutil.rmtree(cache, ignore_errors=True)
            first.append(timed(commands[label], env, work)[0])
            again.append(timed(commands[label], env, work)[0])
            # Another small CSV (new bytes: no record to replay), the compiled functions
            # of the first fit in the cache.
            (work / f"other-{name}.csv").write_text(CSV.replace("0.18", f"0.1{9 - i}"))
            # Its own fit file: predict and optimal below read the small CSV's.
            swap = {str(csv): str(work / f"other-{name}.csv"), str(fit): f"{fit}.other"}
            argv = [swap.get(a, a) for a in commands[label]]
            other.append(timed(argv, env, work)[0])
        times[f"{label} (first ever)"], times[f"{label} (repeated)"] = first, again
        times[f"{label} (another CSV)"] = other
    # `fit` (the default) wrote the fit file last; predict and optimal read it warm.
    for label in ("predict", "optimal"):
        timed(commands[label], env, work)  # the first call after the fit compiles its own
        times[label] = [timed(commands[label], env, work)[0] for _ in range(repeats)]
    return times


def scipy_times(work: Path, repeats: int) -> tuple[list[float], list[float]]:
    code = SCIPY.format(csv=str(work / "small.csv"))
    cold, fits = [], []
    for _ in range(repeats):
        seconds, done = timed([sys.executable, "-c", code], dict(os.environ), work)
        cold.append(seconds)
        fits.append(float(done.stdout.strip()))
    return cold, fits


def worktree(commit: str, where: Path) -> Path:
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(where), commit],
        check=True,
        capture_output=True,
    )
    return where


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def report(current, previous, scipy_cold, scipy_fit, commit) -> str:
    def median(values):
        return statistics.median(values) if values else float("nan")

    rows = []
    for label in current:
        now = median(current[label])
        before = median(previous.get(label, []))
        rows.append((label, now, before, TARGETS.get(label)))
    width = max(len(r[0]) for r in rows) + 2
    lines = [
        f"{'command':<{width}}{'now (s)':>9}{commit + ' (s)':>14}{'ratio':>8}{'target':>9}  met",
        "-" * (width + 46),
    ]
    for label, now, before, target in rows:
        ratio = before / now if previous else float("nan")
        goal = f"{target:g}" if target else ""
        met = "" if not target else ("yes" if now <= target else "no")
        lines.append(f"{label:<{width}}{now:9.3f}{before:14.3f}{ratio:7.1f}×{goal:>9}  {met}")
    cold, fit = median(scipy_cold), median(scipy_fit)
    same_law = median(current["fit --model amdahl (repeated)"])
    lines += [
        "",
        f"SciPy curve_fit of t = s + p/N, cold process: {cold:.3f} s (the fit alone "
        f"{fit * 1e3:.2f} ms); perfmodel fit --model amdahl, repeated: {same_law / cold:.1f}× "
        "that process",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="cold runs per command (3)")
    parser.add_argument("--previous", default="9ceab2a", help="commit of the previous release")
    parser.add_argument("--skip-previous", action="store_true", help="time this checkout only")
    parser.add_argument("--json", help="also write the raw seconds here")
    args = parser.parse_args()
    print(f"load average before: {load()} (cores: {os.cpu_count()}, children pinned to 2)")
    with tempfile.TemporaryDirectory(prefix="perfmodel-latency-") as folder:
        work = Path(folder)
        (work / "small.csv").write_text(CSV)
        current = measure(ROOT, work, "now", args.repeats)
        previous = {}
        if not args.skip_previous:
            old = worktree(args.previous, work / "previous")
            try:
                previous = measure(old, work, "previous", args.repeats)
            finally:
                subprocess.run(
                    ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(old)],
                    capture_output=True,
                )
        cold, fits = scipy_times(work, args.repeats)
    print(f"load average after: {load()}\n")
    print(report(current, previous, cold, fits, args.previous))
    if args.json:
        document = {
            "current": current,
            "previous": {"commit": args.previous, "times": previous},
            "scipy": {"cold_process": cold, "fit": fits},
            "load_average": load(),
        }
        Path(args.json).write_text(json.dumps(document, indent=2) + "\n")


if __name__ == "__main__":
    main()
