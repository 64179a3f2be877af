#!/bin/bash
# The fresh check (benchmarks/fresh), run once after the proposed default was fixed.
cd "$(dirname "$0")/.." || exit 1
export PYTHONPATH=$PWD
PY=${PYTHON:-/work/venv/bin/python}
for h in largest half largest2; do
  nice -n 10 $PY benchmarks/accuracy.py --csv benchmarks/fresh --holdout $h --presentation both > benchmarks/extrapolation_research/out/acc_fresh_$h.md 2> benchmarks/extrapolation_research/out/acc_fresh_$h.err
done
