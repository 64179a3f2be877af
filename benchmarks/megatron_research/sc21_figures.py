"""The model on the configurations of Narayanan et al. SC'21 Figures 13 and 17.

The settings are the authors' scripts (NVIDIA/Megatron-LM examples/sc21/run_figure_13.sh
and run_figure_17.sh @de7dc40f, 2021 software, local DDP); the measured values are in
the paper's figures, not in this repository. Figure 13: 162.2B (L 32, h 20480, a 128) on
64 GPUs, micro-batch 1, full recomputation, (t, p) with t·p = 64. Figure 17: 145B (L 80,
h 12288, a 96), t 8, p 16 on 128 GPUs, with and without recomputation.

python benchmarks/megatron_research/sc21_figures.py
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import _megatron_reference as ref  # noqa: E402
import megatron as mb  # noqa: E402

EFF = dict(e_max=0.8892, d0=338.2)  # the default calibration (T5_22B_full, T5_175B_full)
BASE = dict(
    s=2048.0,
    V=51200.0,
    sp=0.0,
    zero=0.0,
    d=1.0,
    b=1.0,
    v=1.0,
    stack_name="megatron-2021",
    stack=dict(ref.STACKS["megatron-2021"]),
    hw=dict(mb.HARDWARE["A100-80GB"]),
)


def show(cfg: dict, label: str) -> None:
    res = mb.evaluate(cfg, EFF, "library")
    seconds = float(res["time"]["total"])
    memory = float(res["memory"]["total"]) / 2**30
    print(
        f"{label}: {seconds:7.3f} s, {cfg['B'] / seconds:6.2f} sequences/s, {memory:5.1f} GiB, "
        f"status {int(res['status'])}"
    )


fig13 = dict(BASE, h=20480.0, a=128.0, L=32.0, gpus=64.0, recompute=ref.FULL)
for batch in (32.0, 128.0):
    for t, p in ((8.0, 8.0), (4.0, 16.0), (2.0, 32.0)):
        show(dict(fig13, B=batch, t=t, p=p), f"Figure 13 GBS {batch:.0f} t{t:.0f} p{p:.0f}")
fig17 = dict(BASE, h=12288.0, a=96.0, L=80.0, gpus=128.0, t=8.0, p=16.0)
for recompute, name in ((ref.NONE, "none"), (ref.FULL, "full")):
    for batch in (4.0, 16.0, 64.0, 256.0):
        show(dict(fig17, B=batch, recompute=recompute), f"Figure 17 GBS {batch:.0f} {name}")
