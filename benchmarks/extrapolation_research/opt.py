import sys

sys.path.insert(0, "benchmarks/extrapolation_research")
exec(open("benchmarks/extrapolation_research/grid.py").read().split("if __name__")[0])
from scipy.optimize import minimize as _min


def total(w, fams, keys, exclude=None, groups=None):
    tot = 0
    for k in keys:
        pr = [p for p in sel([k], exclude=exclude, groups=groups) if regime(p) == "flat"]
        if pr:
            tot += score(errs(pr, fams, w), pr)[0]
    return tot


def learn_w(fams, keys, exclude=None, starts=6):
    best = None
    for s in range(starts):
        z0 = np.random.default_rng(s).normal(size=len(fams)) * (0 if s == 0 else 1)
        f = lambda z: total(np.exp(z) / np.exp(z).sum(), fams, keys, exclude)
        r = _min(f, z0, method="Nelder-Mead", options=dict(maxiter=600, xatol=1e-3, fatol=1e-4))
        if best is None or r.fun < best.fun:
            best = r
    w = np.exp(best.x) / np.exp(best.x).sum()
    return w, best.fun


if __name__ == "__main__":
    fams = tuple(sys.argv[1].split(","))
    w, f = learn_w(fams, SH)
    print(dict(zip(fams, np.round(w, 3))), round(f, 2))
    for k in SH + EX:
        pr = [p for p in sel([k]) if regime(p) == "flat"]
        e = errs(pr, fams, w)
        print("    ", k, len(pr), np.round([np.median(e), np.mean(e)], 2), score(e, pr)[1])
