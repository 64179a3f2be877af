"""Scan calibration pairs and model variants: python research/scan.py [K_WEIGHT] [mem_frac]"""

import sys, itertools, json

sys.path.insert(0, "benchmarks")
import numpy as np
import _megatron_reference as ref
import megatron as mb

if len(sys.argv) > 1:
    ref.K_WEIGHT, ref.ATTN_D0_SCALE = map(float, sys.argv[1].split(":"))
if len(sys.argv) > 2:
    for hw in mb.HARDWARE.values():
        hw["memory_bytes"] = 80 * 2**30 * float(sys.argv[2])
mb.SEARCH_RECOMPUTE = bool(int(sys.argv[4])) if len(sys.argv) > 4 else True
import os

if os.environ.get("FIT"):
    mb.FIT_NAMES = tuple(os.environ["FIT"].split(","))
if os.environ.get("PRIOR"):
    ref.PRIOR_EFFICIENCY.update(json.loads(os.environ["PRIOR"]))
pairs = sys.argv[3] if len(sys.argv) > 3 and sys.argv[3] else None
import pandas as pd

ids = [
    i
    for i, m in zip(pd.read_csv(mb.DEFAULT_CSV).id, pd.read_csv(mb.DEFAULT_CSV).measured)
    if m in mb.TIME_MEASURES
]
cands = (
    [tuple(p.split(",")) for p in pairs.split(";")]
    if pairs
    else list(itertools.combinations(ids, 2))
)
rows = []
for c in cands:
    r = mb.run(mb.DEFAULT_CSV, c, quiet=True)
    t1, t5 = r["tables"]["N21_T1"]["calibrated"], r["tables"]["K22_T5"]["calibrated"]
    rows.append(
        dict(
            cal=",".join(c),
            e=r["efficiency"]["e_max"],
            d0=r["efficiency"]["d0"],
            t1m=t1["mean_abs_error_pct"],
            t1x=t1["max_abs_error_pct"],
            t5m=t5["mean_abs_error_pct"],
            t5x=t5["max_abs_error_pct"],
            lay=r["layout_within_2pct"],
            few=r["picks_under_two_layers_per_stage"],
        )
    )
df = pd.DataFrame(rows)
ok = (df.t1m <= 3) & (df.t5m <= 3) & (df.t1x <= 8) & (df.t5x <= 8)
print(df.describe().round(3).to_string())
print(
    "time targets met:",
    int(ok.sum()),
    "/",
    len(df),
    " and layout>=0.9:",
    int((ok & (df.lay >= 0.9)).sum()),
)
print(df[ok].round(2).to_string()) if True else None
if len(df) <= 10:
    print(df.round(3).to_string())
