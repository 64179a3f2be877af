"""Layout agreement when one fixed hardware number moves (calibration refitted each time).

python benchmarks/megatron_research/layout_sensitivity.py
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import _megatron_reference as ref  # noqa: E402
import megatron as mb  # noqa: E402

BASE = dict(ref.A100_SELENE)
SHARES = dict(mb.USABLE_MEMORY)
CASES = [
    ("as fixed", {}),
    ("NVLink 230 GB/s", dict(nvlink_bandwidth=230e9)),
    ("NVLink 300 GB/s (spec)", dict(nvlink_bandwidth=300e9)),
    ("memory budget 80%", dict(share=0.8)),  # every stack's share of the 80 GiB
    ("2021 memory share 0.70", dict(share_2021=0.70)),  # Figure 17 allows [0.69, 0.78)
    ("2021 memory share 0.78", dict(share_2021=0.78)),
    ("IB 12 GB/s per GPU", dict(network_bandwidth=12e9)),
]
for name, change in CASES:
    change = dict(change)
    share = change.pop("share", None)
    mb.USABLE_MEMORY = SHARES if share is None else {k: share for k in SHARES}
    if "share_2021" in change:
        mb.USABLE_MEMORY = dict(SHARES, **{"megatron-2021": change.pop("share_2021")})
    ref.A100_SELENE.clear()
    ref.A100_SELENE.update(BASE, **change)
    mb.HARDWARE["A100-80GB"] = ref.A100_SELENE
    for search in ("stack", "row"):
        r = mb.run(
            mb.DEFAULT_CSV,
            mb.DEFAULT_CALIBRATION,
            quiet=True,
            recompute_search=search,
            model="reference",
        )
        t1, t5 = r["tables"]["N21_T1"]["calibrated"], r["tables"]["K22_T5"]["calibrated"]
        misses = [x["id"] for x in r["rows"] if (x.get("layout_gap_pct") or 0) > 2]
        print(
            f"{name:24s} search={search:5s} T1 {t1['mean_abs_error_pct']:.2f}/"
            f"{t1['max_abs_error_pct']:.2f} T5 {t5['mean_abs_error_pct']:.2f}/"
            f"{t5['max_abs_error_pct']:.2f} layout {r['layout_within_2pct']:.3f} "
            f"misses {' '.join(misses)}"
        )
