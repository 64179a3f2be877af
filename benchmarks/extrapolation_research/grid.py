import itertools
import sys

sys.path.insert(0, "benchmarks/extrapolation_research")
exec(open("benchmarks/extrapolation_research/fitw.py").read())


def simplex(k, step=0.1):
    m = int(round(1 / step))
    for c in itertools.product(range(m + 1), repeat=k - 1):
        if sum(c) <= m:
            yield np.array([*c, m - sum(c)]) / m


def errs(probs, fams, w):
    idx = [names.index(f) for f in fams]
    return np.array(
        [np.mean(np.abs(np.exp(w @ p["logs"][idx]) - p["yt"]) / p["yt"]) * 100 for p in probs]
    )


def score(e, probs):
    am = np.array([p["amdahl_mape"] for p in probs])
    far = np.sum((e > 2 * am) & (e > am + 1))
    return np.median(e) + np.mean(e) + 1.0 * far / len(e) * 20, far


def search(keys, rg, fams, step=0.1):
    out = []
    for w in simplex(len(fams), step):
        tot, fars = 0, []
        for k in keys:
            pr = [p for p in sel([k]) if regime(p) == rg]
            if not pr:
                continue
            e = errs(pr, fams, w)
            s, far = score(e, pr)
            tot += s
            fars.append(int(far))
        out.append((tot, tuple(np.round(w, 2)), fars))
    out.sort()
    return out


if __name__ == "__main__":
    for rg, fams in [("flat", tuple(sys.argv[1].split(",")))]:
        res = search(SH, rg, fams)
        print(rg, fams)
        for r in res[:8]:
            print("  ", round(r[0], 2), r[1], r[2])
        best = np.array(res[0][1])
        for k in SH + EX:
            pr = [p for p in sel([k]) if regime(p) == rg]
            if pr:
                e = errs(pr, fams, best)
                print("    ", k, len(pr), np.round([np.median(e), np.mean(e)], 2), score(e, pr)[1])
