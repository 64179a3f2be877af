import sys

sys.path.insert(0, "benchmarks/extrapolation_research")
exec(open("benchmarks/extrapolation_research/grid.py").read().split("if __name__")[0])


def adaptive_logs(p, fams, prior, tau, depth=1):
    idx = [names.index(f) for f in fams]
    fv = p["fv"][idx, :depth]
    fv = np.nanmean(fv, axis=1) if not np.all(np.isnan(fv)) else np.zeros(len(idx))
    fv = np.where(np.isnan(fv), np.nanmax(fv) if np.any(~np.isnan(fv)) else 0, fv)
    if tau is None:
        w = np.asarray(prior, float)
    else:
        z = np.log(np.maximum(prior, 1e-12)) - (fv - fv.min()) / tau
        w = np.exp(z - z.max())
    w = w / w.sum()
    return w @ p["logs"][idx]


def errs_a(probs, fams, prior, tau, depth=1):
    return np.array(
        [
            np.mean(np.abs(np.exp(adaptive_logs(p, fams, prior, tau, depth)) - p["yt"]) / p["yt"])
            * 100
            for p in probs
        ]
    )


def report(fams, prior, tau, depth=1, keys=None, rg="flat"):
    keys = keys or SH + EX
    for k in keys:
        pr = [p for p in sel([k]) if regime(p) == rg]
        e = errs_a(pr, fams, prior, tau, depth)
        print("    ", k, len(pr), np.round([np.median(e), np.mean(e)], 2), score(e, pr)[1])


if __name__ == "__main__":
    fams = tuple(sys.argv[1].split(","))
    depth = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    res = []
    for tau in (None, 0.003, 0.01, 0.03, 0.1):
        for prior in simplex(len(fams), 0.2):
            if tau is not None and np.any(prior == 0):
                continue
            tot, fars = 0, []
            for k in SH:
                pr = [p for p in sel([k]) if regime(p) == "flat"]
                e = errs_a(pr, fams, prior, tau, depth)
                s, far = score(e, pr)
                tot += s
                fars.append(int(far))
            res.append((tot, tau, tuple(np.round(prior, 2)), fars))
    res.sort(key=lambda r: r[0])
    for r in res[:10]:
        print(r)
    report(fams, np.array(res[0][2]), res[0][1], depth)
