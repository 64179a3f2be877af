"""How long reading a per-step CSV takes, and how much memory it needs (issue #13, scale).

Per-step timings of a few runs are the large inputs users have: GPU counts 1 to 32, each
repeated, ``time = (0.1 + 0.9/N)·exp(ε)`` with 5% noise. Every size is measured in its
own subprocess: wall time of `perfmodel.load_benchmarks` (reading, validation, SI units)
and the peak resident memory it adds to the process after the imports (``ru_maxrss``),
the best of `--repeat` reads. With ``--fit`` it also times ``perfmodel.fit("amdahl", data,
n_starts=4)`` on the data read (the fitting core's part of the budget, not reading's).

    python benchmarks/scale.py                 # 10⁴, 10⁵, 10⁶ rows
    python benchmarks/scale.py --rows 1e7 --fit

The CSV is written once per size into a temporary folder.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

CHILD = r"""
import json, resource, sys, time
import perfmodel as pm
path, repeat, fit = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
seconds = []
for _ in range(repeat):
    start = time.perf_counter()
    data = pm.load_benchmarks(path)
    seconds.append(time.perf_counter() - start)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
out = {"rows": int(data.gpus.size), "read_s": min(seconds), "read_peak_mb": (peak - base) / 1024}
if fit:
    start = time.perf_counter()
    result = pm.fit("amdahl", data, n_starts=4)
    out["fit_s"] = time.perf_counter() - start
    out["fit_peak_mb"] = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) / 1024
    out["mape_percent"] = result.mape
print(json.dumps(out))
"""


def write_csv(path: str, rows: int, seed: int = 0) -> None:
    """Per-step timings of six runs (1 to 32 GPUs), `rows` lines in all."""
    rng = np.random.default_rng(seed)
    counts = np.array([1, 2, 4, 8, 16, 32])
    gpus = np.repeat(counts, -(-rows // counts.size))[:rows]
    times = (0.1 + 0.9 / gpus) * np.exp(rng.normal(0.0, 0.05, rows))
    with open(path, "w") as stream:
        stream.write("gpus,time_s\n")
        np.savetxt(stream, np.column_stack([gpus, times]), fmt=["%d", "%.6g"], delimiter=",")


def measure(path: str, repeat: int, fit: bool) -> dict:
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-c", CHILD, path, str(repeat), "1" if fit else "0"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=float, nargs="+", default=[1e4, 1e5, 1e6])
    parser.add_argument("--repeat", type=int, default=3, help="reads per size (best kept)")
    parser.add_argument("--fit", action="store_true", help="also time an amdahl fit")
    args = parser.parse_args(argv)
    print(
        "| rows | CSV MB | read (s) | read peak (MB) |" + (" fit (s) | fit peak (MB) |" * args.fit)
    )
    print("| ---: | ---: | ---: | ---: |" + (" ---: | ---: |" * args.fit))
    with tempfile.TemporaryDirectory() as folder:
        for rows in map(int, args.rows):
            path = os.path.join(folder, f"steps_{rows}.csv")
            write_csv(path, rows)
            result = measure(path, args.repeat, args.fit)
            size = os.path.getsize(path) / 1e6
            line = (
                f"| {rows:,} | {size:.1f} | {result['read_s']:.3f} | {result['read_peak_mb']:.0f} |"
            )
            if args.fit:
                line += f" {result['fit_s']:.1f} | {result['fit_peak_mb']:.0f} |"
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
