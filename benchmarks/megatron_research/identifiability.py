"""Elasticities d ln T / d ln θ of every timing row at the default calibration.

python benchmarks/megatron_research/identifiability.py
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import megatron as mb  # noqa: E402

r = mb.run(mb.DEFAULT_CSV, mb.DEFAULT_CALIBRATION, quiet=True, model="reference")
names = mb.SENSITIVITY_PARAMETERS
print(f"{'row':16s} " + " ".join(f"{n:>17s}" for n in names) + "   dominant terms")
for row in r["rows"]:
    if "sensitivity" not in row:
        continue
    b = row["breakdown"]
    top = sorted(((v / b["total"], k) for k, v in b.items() if k != "total"), reverse=True)[:3]
    print(
        f"{row['id']:16s} "
        + " ".join(f"{row['sensitivity'][n]:+17.3f}" for n in names)
        + "   "
        + ", ".join(f"{k} {100 * f:.0f}%" for f, k in top)
    )
print(
    "condition number of the calibration pair in (e_max, d0):",
    round(r["identifiability"]["condition_number"], 1),
)
