"""Build datasets/time_to_train/*.csv from the MLPerf Training v0.7 NVIDIA result files,
read with perfmodel's MLLOG reader (`perfmodel._readers`).

One file per system family (DGX A100, DGX-2H, DGX-1) and benchmark, one row per run with
a run_stop status of "success": gpus, gpus_per_node, global_batch, epochs (to the target:
the epoch of the last evaluation), samples (to the target, see the reader), time_s
(run_stop − run_start, seconds) and run (the result_<run>.txt index). Every run is checked
against /work/shared/data/mlperf_training_v0.7_nvidia_runs.csv (time to 0.01 s, global
batch, status, GPU count).

Needs a local copy of github mlcommons/training_results_v0.7 (a bare git directory)::

    python benchmarks/make_time_to_train_datasets.py \
        /work/.mirror/mlcommons+training_results_v0.7/repo
"""

from pathlib import Path
import subprocess
import sys

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from perfmodel._readers.mllog import read_mllog  # noqa: E402

RUNS = Path("/work/shared/data/mlperf_training_v0.7_nvidia_runs.csv")
FAMILIES = {"dgxa100": "dgxa100", "dgx2h": "dgx2h", "dgx1": "dgx1"}
BENCHMARKS = ("bert", "gnmt", "maskrcnn", "minigo", "resnet", "ssd", "transformer")
OUT = ROOT / "datasets" / "time_to_train"


def family(system: str) -> str | None:
    head = system.split("_")[0]
    return FAMILIES.get(head)


def main(repo: str) -> int:
    commit = subprocess.run(
        ["git", "--git-dir", repo, "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    runs = pd.read_csv(RUNS)
    runs = runs[runs.time_to_train_min.notna()]
    OUT.mkdir(parents=True, exist_ok=True)
    table = []
    for (bench, fam), group in runs.groupby([runs.benchmark, runs.system.map(family)]):
        if bench not in BENCHMARKS:
            continue
        rows = []
        for _, r in group.iterrows():
            text = subprocess.run(
                ["git", "--git-dir", repo, "show", f"HEAD:{r.path}"],
                capture_output=True,
                text=True,
                encoding="latin-1",
            ).stdout
            run = read_mllog(text, r.path)
            assert abs(run.time_to_train_s - r.time_to_train_min * 60) < 0.01, r.path
            assert run.status == r.status, r.path
            assert run.gpus == r.nodes * r.accelerators_per_node, r.path
            batch = None if np.isnan(r.global_batch_size) else r.global_batch_size
            assert run.global_batch == batch, r.path
            if run.status != "success":
                continue
            row = {"gpus": run.gpus, "gpus_per_node": int(run.config["gpus_per_node"])}
            if run.global_batch is not None:
                row["global_batch"] = int(run.global_batch)
            row |= {"epochs": run.epochs, "samples": run.samples, "time_s": run.time_to_train_s}
            row["run"] = int(r.run)
            rows.append(row)
        frame = pd.DataFrame(rows).sort_values(["gpus", "run"], kind="stable")
        if frame.samples.isna().any():
            frame = frame.drop(columns="samples")
        frame["epochs"] = frame.epochs.map(lambda e: int(e) if float(e).is_integer() else e)
        if "samples" in frame:
            frame["samples"] = frame.samples.astype("int64")
        name = f"mlperf07_{fam}_{bench}.csv"
        frame.to_csv(OUT / name, index=False)
        systems = sorted(group.system.unique())
        table.append((name, len(frame), frame.gpus.nunique(), sorted(frame.gpus.unique()), systems))
        print(f"{name}: {len(frame)} runs at {sorted(frame.gpus.unique())} GPUs", file=sys.stderr)
    print(f"commit {commit}")
    for name, n, distinct, counts, systems in table:
        print(
            f"| {name} | {n} | {distinct} | {', '.join(map(str, counts))} | {', '.join(systems)} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
