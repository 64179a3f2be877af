import sys

sys.argv
exec(open("research/try_fit.py").read().split("report(R.PRIOR_EFFICIENCY")[0])
for ids in [tuple(a.split(",")) for a in sys.argv[1:]]:
    eff = fit(ids)
    e = report(eff, str(ids))
    print("   ", " ".join(f"{i}:{x:+.1f}" for i, x in zip(t.id, e)))
