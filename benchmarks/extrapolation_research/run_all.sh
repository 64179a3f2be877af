#!/bin/bash
# Every accuracy table of the issue #9 report (about 30 min on 2 shared cores).
cd "$(dirname "$0")/.." || exit 1
export PYTHONPATH=$PWD
PY=${PYTHON:-/work/venv/bin/python}
mkdir -p benchmarks/extrapolation_research/out
for h in half largest largest2; do
  nice -n 10 $PY benchmarks/accuracy.py --holdout $h --presentation both > benchmarks/extrapolation_research/out/acc_shipped_$h.md 2> benchmarks/extrapolation_research/out/acc_shipped_$h.err
  nice -n 10 $PY benchmarks/accuracy.py --csv benchmarks/external --holdout $h --presentation both > benchmarks/extrapolation_research/out/acc_ext_$h.md 2> benchmarks/extrapolation_research/out/acc_ext_$h.err
done
nice -n 10 $PY benchmarks/extrapolation_research/calibrate.py > benchmarks/extrapolation_research/out/calibrate.md
