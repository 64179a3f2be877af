import numpy as np, pandas as pd

df = pd.read_csv("/work/shared/data/megatron_published_runs.csv")
t = df[df.dataset != "K22_F1"].copy()
# fill T1 from sc21 script
sc21 = {
    "T1_1.7B": (16, 1),
    "T1_3.6B": (16, 1),
    "T1_7.5B": (16, 1),
    "T1_18.4B": (8, 1),
    "T1_39.1B": (4, 1),
    "T1_76.1B": (2, 3),
    "T1_145.6B": (2, 2),
    "T1_310.1B": (1, 2),
    "T1_529.6B": (1, 3),
    "T1_1008B": (1, 1),
}
for k, (b, v) in sc21.items():
    t.loc[t.id == k, "microbatch_size"] = b
    t.loc[t.id == k, "interleave"] = v
PEAK = 312e12
HBM = 2.039e12 * 0.85
NVL = 210e9
IB = 24e9
for _, r in t.iterrows():
    h, a, L, s, V, tp, pp, dp, B, b, v = (
        r.hidden,
        r.heads,
        r.layers,
        r.seq_len,
        r.vocab,
        r.tp,
        r.pp,
        r.dp,
        r.global_batch,
        r.microbatch_size,
        r.interleave,
    )
    m = B / (dp * b)
    rec = r.recompute
    sp = r.seq_parallel
    gemm = 24 * b * s * h * h / tp
    att = 4 * b * s * s * h / tp
    npass_g = 3 + (1 if rec == "full" else 0)
    npass_a = 3 + (1 if rec in ("full", "selective") else 0)
    fl_layer = npass_g * gemm + npass_a * att
    # elementwise bytes
    rep = 22 * b * s * h / (tp if sp else 1)
    col = 16 * b * s * h / tp
    A = 9 * b * (a / tp) * s * s
    ew = (3 + (1 if rec == "full" else 0)) * (rep + col) + npass_a * A
    t_layer_ideal = fl_layer / PEAK
    t_ew = ew / HBM
    lp = L / pp
    logit = 6 * b * s * h * V / tp
    nar = 2 * (tp - 1) / tp * b * s * h * 2 / NVL
    ntp = (6 if rec == "full" else 4 + (2 if sp else 0)) if tp > 1 else 0
    t_tp = ntp * nar * lp
    stage_ideal = lp * t_layer_ideal
    sched = m + (pp - 1) / v
    T = r.iter_time_s
    # required gemm efficiency: T = sched*(lp*(fl/(PEAK*e) + t_ew) + t_tp) + m*logit/(PEAK*e)
    # ignore dp, optimizer
    work = sched * lp * fl_layer + m * logit
    rest = sched * (lp * t_ew + t_tp)
    e = work / PEAK / (T - rest)
    print(
        f"{r.id:16s} h={h:6.0f} h/t={h / tp:5.0f} b={b:2.0f} m={m:4.0f} v={v:.0f} ew%={100 * sched * lp * t_ew / T:4.1f} tp%={100 * sched * t_tp / T:4.1f} bub%={100 * (pp - 1) / v / sched:4.1f} e_req={e:.3f}"
    )
