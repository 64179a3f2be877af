"""How long a hybrid fit takes, through the stepwise minimiser (the default for the
`hybrid` family since 2026-12-06, `perfmodel._fitting.engine.STEPWISE_FAMILIES`) and
through the compiled Optax loops it replaced, each in a fresh process: the first fit
(tracing and XLA compilation included) and two more of the same runs.

    python benchmarks/hybrid_fit_latency.py

Prints one line per path: the seconds of fits 1, 2 and 3, and the fitted e_max.
"""

import subprocess
import sys

CHILD = """
import time, jax
jax.config.update("jax_enable_x64", True)
import perfmodel as pm
from perfmodel._fitting import fit_hybrid
from perfmodel._fitting import engine
if COMPILED:
    engine.STEPWISE_FAMILIES = frozenset()
data = pm.load_benchmarks("datasets/megatron_k22_two_runs.csv")
times = []
for _ in range(3):
    start = time.perf_counter()
    result = fit_hybrid(data)
    times.append(time.perf_counter() - start)
e_max = float(result.model.parameters()["compute.e_max"])
print(" ".join(f"{t:.2f}" for t in times), f"{e_max:.10f}")
"""


def main() -> None:
    for name, compiled in (("stepwise (default)", False), ("compiled Optax loops", True)):
        out = subprocess.run(
            [sys.executable, "-c", CHILD.replace("COMPILED", str(compiled))],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        print(f"{name}: fits 1, 2, 3 in {out[0]}, {out[1]}, {out[2]} s; e_max {out[3]}")


if __name__ == "__main__":
    main()
