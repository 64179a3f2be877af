"""A time-to-train answer from MLPerf logs: the GPU count and global batch that train SSD
fastest, and the cheapest within a deadline, from three result files (8, 16 and 64 GPUs).

    PYTHONPATH=. python benchmarks/time_to_train_example.py [LOGS...]

Default LOGS: tests/data/logs/mllog_ssd (three real MLPerf v0.7 DGX A100 result files).
"""

from pathlib import Path
import sys

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from perfmodel import _convergence as cv  # noqa: E402
from perfmodel._readers import read_runs, run_table  # noqa: E402

COCO = 117266  # images per SSD epoch (train_samples in the logs)


def main(paths) -> int:
    runs = read_runs(paths or [ROOT / "tests" / "data" / "logs" / "mllog_ssd"])
    print(run_table(runs)[["gpus", "global_batch", "epochs", "time_to_train_s"]].to_string())
    gpus = np.array([r.gpus for r in runs], float)
    batch = np.array([r.global_batch for r in runs], float)
    epochs = np.array([r.epochs for r in runs], float)
    seconds = np.array([r.time_to_train_s for r in runs], float)

    critical = cv.fit_critical_batch(batch, epochs)
    # Seconds per step: time to train / steps, steps = epochs·D/B.
    step = cv.fit_linear_step_time(gpus, batch, seconds / (epochs * COCO / batch))
    print(f"\nconvergence: {critical.message} (E_min in epochs)")
    print(
        f"step time: {step.overhead_s * 1e3:.1f} ms per step + "
        f"{step.sample_time_s * 1e3:.2f} ms per sample on one GPU / N"
    )

    grid_gpus = 2.0 ** np.arange(3, 13)  # 8 ... 4096
    grid_batch = 2.0 ** np.arange(8, 16)  # 256 ... 32768
    step_grid = np.asarray(step.model(grid_gpus[:, None], grid_batch[None, :]))
    step_grid = np.where(grid_batch[None, :] >= grid_gpus[:, None], step_grid, np.inf)
    options = dict(samples_per_unit=COCO)
    # A doubling of the GPUs should save at least 20% of the time to be worth it.
    fastest = cv.plan(
        grid_gpus,
        grid_batch,
        step_grid,
        critical.work_min,
        critical.noise_batch,
        min_gain=0.2,
        **options,
    )
    print("\nGPUs: best global batch, time to train (s)")
    for n, row in zip(grid_gpus, fastest.time_grid_s):
        print(f"  {n:5g}: {grid_batch[np.argmin(row)]:5g}, {row.min():7.1f}")
    print(
        f"\nfastest: {fastest.gpus:g} GPUs, global batch {fastest.global_batch:g}: "
        f"{fastest.time_to_train_s:.0f} s, {fastest.cost:.1f} GPU-hours\n  {fastest.reason}"
    )
    deadline = 2 * fastest.time_to_train_s
    cheapest = cv.plan(
        grid_gpus,
        grid_batch,
        step_grid,
        critical.work_min,
        critical.noise_batch,
        objective="cost",
        deadline_s=deadline,
        **options,
    )
    print(
        f"cheapest within {deadline:.0f} s: {cheapest.gpus:g} GPUs, global batch "
        f"{cheapest.global_batch:g}: {cheapest.time_to_train_s:.0f} s, "
        f"{cheapest.cost:.1f} GPU-hours"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
