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
    hw=mb.stack_hardware("A100-80GB", "megatron-2021"),
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
fig17 = dict(BASE, h=12288.0, a=96.0, L=80.0, gpus=128.0, t=8.0, p=16.0)
BATCHES = (1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0)


def figure17_ratio() -> dict:
    """Figure 17 in the model: sequences/s and GiB per global batch with and without
    recomputation, and the ratio of the best with recomputation to the best without
    that fits the 2021 stack's memory budget (the paper: "up to 2x")."""
    rate, memory = {}, {}
    for recompute in (ref.NONE, ref.FULL):
        for batch in BATCHES:
            res = mb.evaluate(dict(fig17, B=batch, recompute=recompute), EFF, "library")
            rate[recompute, batch] = batch / float(res["time"]["total"])
            memory[recompute, batch] = float(res["memory"]["total"])
    fits = [b for b in BATCHES if memory[ref.NONE, b] <= BASE["hw"]["memory_bytes"]]
    best_full = max(rate[ref.FULL, b] for b in BATCHES)
    return dict(
        rate=rate,
        memory=memory,
        largest_batch_without=max(fits),
        ratio=best_full / max(rate[ref.NONE, b] for b in fits),
        ratio_if_batch_16_fitted=best_full / rate[ref.NONE, 16.0],
    )


if __name__ == "__main__":
    for batch in (32.0, 128.0):
        for t, p in ((8.0, 8.0), (4.0, 16.0), (2.0, 32.0)):
            show(dict(fig13, B=batch, t=t, p=p), f"Figure 13 GBS {batch:.0f} t{t:.0f} p{p:.0f}")
    for recompute, name in ((ref.NONE, "none"), (ref.FULL, "full")):
        for batch in BATCHES:
            show(dict(fig17, B=batch, recompute=recompute), f"Figure 17 GBS {batch:.0f} {name}")
    found = figure17_ratio()
    budget = BASE["hw"]["memory_bytes"] / 2**30
    print(
        f"Figure 17, 2021 memory budget {budget:.1f} GiB: without recomputation up to global "
        f"batch {found['largest_batch_without']:.0f}; best with / best without "
        f"{found['ratio']:.2f}x (paper: up to 2x; {found['ratio_if_batch_16_fitted']:.2f}x if "
        "batch 16 had fitted)"
    )
