"""How long the first questions of a Python session take: the default fit of a shipped
table, then `recommend` (twice), `next_measurements`, `write_report` and `plot_fit`,
each timed in one fresh process pinned to two cores, against a previous commit in the
same run (a ``git worktree`` of it on ``PYTHONPATH``).

    python benchmarks/first_questions.py                         # this checkout alone
    python benchmarks/first_questions.py --previous a12078c      # and that commit

The first call of each question traces and compiles what it evaluates (the model's
curves, their draws); the second `recommend` shows what is left once compiled. Seconds,
wall clock; on a shared machine they are upper bounds (the load average is printed).
"""

import argparse
import json
import os
from pathlib import Path
import subprocess
import sys
import tempfile

ROOT = Path(__file__).resolve().parent.parent
DATASET = "dle_mxnet_rn50_dgx1_fp32"

# Run in the child process: times every question once, prints one JSON object.
CHILD = """
import json, sys, time, warnings
warnings.simplefilter("ignore")
import perfmodel as pm
data = pm.load_dataset(sys.argv[1])
times = {}
def timed(name, call):
    start = time.perf_counter()
    value = call()
    times[name] = time.perf_counter() - start
    return value
fit = timed("fit_auto", lambda: pm.fit_auto(data).best)
timed("recommend", lambda: pm.recommend(fit))
timed("recommend (again)", lambda: pm.recommend(fit))
timed("next_measurements", lambda: pm.next_measurements(fit, [16, 32, 64]))
timed("write_report", lambda: pm.write_report(fit, sys.argv[2]))
timed("plot_fit", lambda: pm.plot_fit(fit))
print(json.dumps(times))
"""


def run(pythonpath: Path, folder: Path) -> dict[str, float]:
    """The questions' seconds in a fresh process importing perfmodel from `pythonpath`."""
    env = {**os.environ, "PYTHONPATH": str(pythonpath), "PERFMODEL_NO_CACHE": "1"}
    command = [sys.executable, "-c", CHILD, DATASET, str(folder / "report.html")]
    if hasattr(os, "sched_setaffinity"):
        command = ["taskset", "-c", "0,1", *command]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--previous", help="a commit to time in the same run")
    args = parser.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        results = {"now": run(ROOT, folder)}
        if args.previous:
            tree = folder / "previous"
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "add", "-q", str(tree), args.previous],
                check=True,
            )
            try:
                results[args.previous] = run(tree, folder)
            finally:
                subprocess.run(
                    ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)],
                    check=True,
                )
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    names = list(results["now"])
    header = f"{'question':<20}" + "".join(f"{k:>12}" for k in results)
    ratio = args.previous is not None
    print(header + ("   ratio" if ratio else ""))
    for name in names:
        row = f"{name:<20}" + "".join(f"{r[name]:>11.2f}s" for r in results.values())
        if ratio:
            row += f"   {results[args.previous][name] / results['now'][name]:.1f}×"
        print(row)


if __name__ == "__main__":
    main()
