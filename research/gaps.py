"""Per-row errors and layout gaps: FIT=.. PRIOR=.. python research/gaps.py CAL SEARCH_RECOMPUTE"""

import sys, os, json

sys.path.insert(0, "benchmarks")
import megatron as mb, _megatron_reference as ref
import _megatron_reference as ref

if os.environ.get("FIT"):
    mb.FIT_NAMES = tuple(os.environ["FIT"].split(","))
if os.environ.get("PRIOR"):
    ref.PRIOR_EFFICIENCY.update(json.loads(os.environ["PRIOR"]))
if os.environ.get("HW"):
    for hw in mb.HARDWARE.values():
        hw.update(json.loads(os.environ["HW"]))
if os.environ.get("FORM"):
    ref.EFF_FORM = os.environ["FORM"]
mb.SEARCH_RECOMPUTE = bool(int(sys.argv[2])) if len(sys.argv) > 2 else True
cal = tuple(sys.argv[1].split(",")) if len(sys.argv) > 1 else mb.DEFAULT_CALIBRATION
r = mb.run(mb.DEFAULT_CSV, cal, quiet=True)
print(r["efficiency"])
for i in r["rows"]:
    if i.get("layout_gap_pct") is not None:
        l = i["model_layout"]
        print(
            f"{i['id']:16s} err={i['error_pct']:+5.1f} gap={i['layout_gap_pct']:5.1f} pick=tp{l['tp']:.0f} pp{l['pp']:.0f} b{l['microbatch_size']:.0f} v{l['interleave']:.0f} r{l['recompute']}"
        )
for k, v in r["tables"].items():
    print(k, v["calibrated"], v["layout_within_2pct"])
