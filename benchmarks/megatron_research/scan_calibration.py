"""Every pair of timing rows as the calibration: held-out errors and layout agreement.

python benchmarks/megatron_research/scan_calibration.py [--recompute-search stack|row]
(about a minute)
"""

import argparse
import itertools
import os
import sys

import pandas as pd

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import megatron as mb  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--recompute-search", default="stack")
args = parser.parse_args()
frame = pd.read_csv(mb.DEFAULT_CSV)
ids = list(frame.id[frame.measured.isin(mb.TIME_MEASURES)])
rows = []
for pair in itertools.combinations(ids, 2):
    r = mb.run(
        mb.DEFAULT_CSV, pair, quiet=True, recompute_search=args.recompute_search, model="reference"
    )
    t1, t5 = r["tables"]["N21_T1"]["calibrated"], r["tables"]["K22_T5"]["calibrated"]
    rows.append(
        dict(
            calibration=",".join(pair),
            e_max=r["efficiency"]["e_max"],
            d0=r["efficiency"]["d0"],
            cond=r["identifiability"]["condition_number"],
            t1_mean=t1["mean_abs_error_pct"],
            t1_max=t1["max_abs_error_pct"],
            t5_mean=t5["mean_abs_error_pct"],
            t5_max=t5["max_abs_error_pct"],
            layout=r["layout_within_2pct"],
        )
    )
df = pd.DataFrame(rows)
ok = (df.t1_mean <= 3) & (df.t5_mean <= 3) & (df.t1_max <= 8) & (df.t5_max <= 8)
print(df.describe().round(3).to_string())
print(f"pairs meeting the time targets on both tables: {int(ok.sum())} of {len(df)}")
print(f"pairs with layout agreement >= 0.9: {int((df.layout >= 0.9).sum())}")
print(df[df.calibration == ",".join(mb.DEFAULT_CALIBRATION)].round(3).to_string())
