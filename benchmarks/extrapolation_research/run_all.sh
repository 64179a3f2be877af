#!/bin/bash
# Every accuracy table of the issue #9 report: the shipped series, benchmarks/external and
# benchmarks/fresh, three protocols, both presentations, every baseline in the same run
# (about an hour on 2 shared cores). Outputs in benchmarks/extrapolation_research/out/.
cd "$(dirname "$0")/../.." || exit 1
export PYTHONPATH=$PWD
PY=${PYTHON:-/work/venv/bin/python}
OUT=benchmarks/extrapolation_research/out
mkdir -p $OUT
for h in half largest largest2; do
  nice -n 10 $PY benchmarks/accuracy.py --holdout $h --presentation both > $OUT/acc_shipped_$h.md 2> $OUT/acc_shipped_$h.err
  nice -n 10 $PY benchmarks/accuracy.py --csv benchmarks/external --holdout $h --presentation both > $OUT/acc_ext_$h.md 2> $OUT/acc_ext_$h.err
  nice -n 10 $PY benchmarks/accuracy.py --csv benchmarks/fresh --holdout $h --presentation both > $OUT/acc_fresh_$h.md 2> $OUT/acc_fresh_$h.err
done
nice -n 10 $PY benchmarks/extrapolation_research/calibrate.py --select > $OUT/calibrate.md
nice -n 10 $PY benchmarks/extrapolation_research/learn_weights.py > $OUT/learn_weights.txt
