"""Top layouts of a row with breakdowns.

python benchmarks/megatron_research/layouts.py ROW_ID [cal ids]
"""

import os
import sys

sys.path.insert(0, "benchmarks")
import megatron as mb
import numpy as np
import pandas as pd

rid = sys.argv[1]
cal = tuple(sys.argv[2].split(",")) if len(sys.argv) > 2 else mb.DEFAULT_CALIBRATION
r = mb.run(mb.DEFAULT_CSV, cal, quiet=True, model="reference")
eff = r["efficiency"]
row = pd.read_csv(mb.DEFAULT_CSV).set_index("id").loc[rid]
row["id"] = rid
cfg = mb.fill_unpublished(mb.row_settings(row), eff, "reference")
sp = mb.layout_space(cfg, recompute_search=os.environ.get("RECOMPUTE_SEARCH", "stack"))
res = mb.evaluate(cfg, eff, "reference", **sp)
tot = np.where(res["memory"]["total"] <= cfg["hw"]["memory_bytes"], res["time"]["total"], np.inf)
order = np.argsort(tot)
pub = (sp["t"] == cfg["t"]) & (sp["p"] == cfg["p"])
shown = list(order[:6]) + [i for i in order if pub[i]][:3]
for i in shown:
    parts = {k: float(v[i]) if np.ndim(v) else float(v) for k, v in res["time"].items()}
    print(
        f"tp{sp['t'][i]:.0f} pp{sp['p'][i]:.0f} b{sp['b'][i]:.0f} v{sp['v'][i]:.0f} "
        f"r{sp['recompute'][i]:.0f} d{sp['d'][i]:.0f} "
        f"T={tot[i]:8.3f} mem={res['memory']['total'][i] / 2**30:5.1f}G "
        + " ".join(f"{k}={v:.3f}" for k, v in parts.items() if k != "total")
    )
