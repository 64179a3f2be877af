"""Regenerate the derived corpus files in files/ (run after a change of the fit schema).

    PYTHONPATH=. python tests/reliability/make_files.py

- fit.json: `perfmodel fit bench.csv --model amdahl`, the base every edited fit starts from
  (strict JSON: both parameters are determined).
- joint.csv and ring8.log: step times of a flat ring data_parallel model (serial 0.05 s,
  compute 1 s, α 10 µs, β 10 GB/s, 500 MB of gradients) with 2% noise, and an nccl-tests
  all_reduce log of the same ring at 8 ranks, for the joint fit; joint_noserial.csv, the
  same without noise or serial part (serial.time is then undetermined).
"""

from pathlib import Path
import sys

import numpy as np

HERE = Path(__file__).resolve().parent
FILES = HERE / "files"


def ring_log(n: int, sizes, seconds) -> str:
    lines = [f"# all_reduce_perf -b 1K -e 1G -f 4 -g {n}", "# nThread 1 nGpus 1", "# Using devices"]
    lines += [f"#  Rank {i:2d} Group  0 Pid 1 on node0 device {i} [0x00] GPU" for i in range(n)]
    lines.append(
        "#       size    count   type  redop  root    time  algbw  busbw #wrong"
        "    time  algbw  busbw #wrong"
    )
    for size, pair in zip(sizes, seconds):
        cells = []
        for t in pair:
            alg = size / t / 1e9
            cells += [f"{t * 1e6:.3f}", f"{alg:.4f}", f"{alg * 2 * (n - 1) / n:.4f}", "0"]
        lines.append(f"{int(size):12d} {int(size) // 4:10d} float sum -1 " + " ".join(cells))
    return "\n".join(lines) + "\n"


def main() -> int:
    import os

    from perfmodel._cli import main as cli

    os.chdir(FILES)
    assert cli(["fit", "bench.csv", "--model", "amdahl", "-o", "fit.json"]) == 0
    rng = np.random.default_rng(13)
    alpha, beta, size = 1e-5, 1e10, 5e8
    gpus = np.array([1, 2, 4, 8, 16, 32])
    ring = 2 * (gpus - 1) * alpha + 2 * (gpus - 1) / gpus * size / beta
    times = (0.05 + 1.0 / gpus + ring) * np.exp(rng.normal(0, 0.02, gpus.size))
    rows = "".join(f"{n},{int(size)},{float(t)!r}\n" for n, t in zip(gpus, times))
    (FILES / "joint.csv").write_text("gpus,message_bytes,time_s\n" + rows)
    # The same without a serial part: serial.time is undetermined even jointly.
    clean = 1.0 / gpus + ring
    rows = "".join(f"{n},{int(size)},{float(t)!r}\n" for n, t in zip(gpus, clean))
    (FILES / "joint_noserial.csv").write_text("gpus,message_bytes,time_s\n" + rows)
    sizes = 4.0 ** np.arange(5, 16)
    t = 2 * 7 * alpha + 2 * 7 / 8 * sizes / beta
    seconds = t[:, None] * np.exp(rng.normal(0, 0.02, (sizes.size, 2)))
    (FILES / "ring8.log").write_text(ring_log(8, sizes, seconds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
