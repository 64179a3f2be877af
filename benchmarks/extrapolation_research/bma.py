import sys

sys.path.insert(0, "benchmarks/extrapolation_research")
exec(open("benchmarks/extrapolation_research/grid.py").read().split("if __name__")[0])
K = {"amdahl": 2, "wdp": 3, "power": 2, "usl": 3, "hier": 3, "wdp_bw": 2}


def bma_logs(p, fams, prior, sigma, lam, alpha_w=0.0):
    idx = [names.index(f) for f in fams]
    r = p["res"][idx]
    n = p["n"]
    wts = (n / n.max()) ** alpha_w
    wts = wts / wts.mean()
    rss = np.sum(wts * r**2, axis=1)
    k = np.array([K[f.rstrip("0123456789")] for f in fams])
    z = np.log(prior) - rss / (2 * sigma**2) - lam * k
    w = np.exp(z - z.max())
    w /= w.sum()
    return w @ p["logs"][idx]


def errs_b(probs, fams, *a):
    return np.array(
        [np.mean(np.abs(np.exp(bma_logs(p, fams, *a)) - p["yt"]) / p["yt"]) * 100 for p in probs]
    )


if __name__ == "__main__":
    fams = tuple(sys.argv[1].split(","))
    res = []
    for sigma in (0.003, 0.005, 0.01, 0.02, 0.04):
        for lam in (0.0, 0.5, 1.0, 2.0):
            for aw in (0.0, 2.0):
                for prior in simplex(len(fams), 0.25):
                    if np.any(prior == 0):
                        continue
                    tot, fars, cells = 0, [], []
                    for k in SH:
                        pr = [p for p in sel([k]) if regime(p) == "flat"]
                        e = errs_b(pr, fams, prior, sigma, lam, aw)
                        s, far = score(e, pr)
                        tot += s
                        fars.append(int(far))
                        cells.append((round(np.median(e), 2), round(np.mean(e), 2)))
                    res.append(
                        (round(tot, 2), sigma, lam, aw, tuple(np.round(prior, 2)), fars, cells)
                    )
    res.sort(key=lambda r: r[0])
    for r in res[:10]:
        print(r)
    b = res[0]
    for k in SH + EX:
        pr = [p for p in sel([k]) if regime(p) == "flat"]
        e = errs_b(pr, fams, np.array(b[4]), b[1], b[2], b[3])
        print("    ", k, len(pr), np.round([np.median(e), np.mean(e)], 2), score(e, pr)[1])
