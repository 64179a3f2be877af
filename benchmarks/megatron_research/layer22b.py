"""Per-layer times of the 22B model (b=4, tp=8, 2022 stack) per recomputation mode."""

import json
import sys

sys.path.insert(0, "benchmarks")
import _megatron_reference as ref
import megatron as mb

eff = (
    mb.run(mb.DEFAULT_CSV, mb.DEFAULT_CALIBRATION, quiet=True, model="reference")["efficiency"]
    if len(sys.argv) < 2
    else json.loads(sys.argv[1])
)
hw, st = ref.A100_SELENE, ref.STACKS["megatron-2022"]
h, a, s, b, t = 6144, 64, 2048, 4, 8
dense, attn = ref.layer_gemm_times(h, a, s, b, t, hw, eff)
for name, rc, sp in [
    ("none", 0, 0),
    ("seq", 0, 1),
    ("full", 2, 0),
    ("sel", 1, 0),
    ("sel+seq", 1, 1),
]:
    fb, bb, ab = ref.layer_elementwise_bytes(h, a, s, b, t, sp)
    sync, ov = ref.tensor_parallel_times(h, s, b, t, rc, sp, 1, hw)
    tot, bwd, _ = ref.layer_microbatch_time(h, a, s, b, t, rc, sp, st, hw, eff)
    fwd = float(tot - bwd)
    print(
        f"{name:8s} fwd+exposed TP={1e3 * fwd:5.2f} ms  bwd+recompute={1e3 * float(bwd):5.2f} ms"
        f"  total={1e3 * float(tot):5.2f}  (dense fwd {1e3 * dense:.2f}, attn fwd {1e3 * attn:.2f},"
        f" elementwise fwd {1e3 * fb / hw['hbm_bandwidth']:.2f}, tp sync {1e3 * sync:.2f})"
    )
