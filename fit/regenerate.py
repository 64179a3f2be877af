"""Regenerate fit/: the fit (JSON) and the plot (PNG) of every dataset in datasets/.

Run from anywhere, in an environment where perfmodel is installed:

    python fit/regenerate.py              # every dataset, all cores
    python fit/regenerate.py --only usl_specsdm91 --jobs 1

Each dataset goes through the command line exactly as a user would run it, with a fixed
seed and paths relative to the repository root:

    perfmodel fit datasets/NAME.csv --seed 0 -o fit/NAME.json
    perfmodel plot fit/NAME.json -o fit/NAME.png

`fit/INDEX.json` records the command, the perfmodel version, the SHA-256 of each input
CSV and the chosen family; `fit/README.md` is a table of the results. The test
`tests/test_fit_dir.py` checks that the folder is current.
"""

import argparse
import concurrent.futures
import contextlib
import hashlib
import io
import json
import multiprocessing
import os
from pathlib import Path
import sys

ROOT = Path(__file__).resolve().parent.parent
SEED = 0
COMMAND = "python fit/regenerate.py"


def fit_arguments(name: str, out: str) -> list[str]:
    """Arguments of `perfmodel fit` for dataset `name`, writing the fit to `out`."""
    return ["fit", f"datasets/{name}.csv", "--seed", str(SEED), "-o", out]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _cli(argv: list[str]) -> tuple[int, str]:
    from perfmodel._cli import main

    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        status = main(argv)
    return status, err.getvalue().strip()


def fit_dataset(name: str, folder: str = "fit", plot: bool = True) -> dict:
    """Fit and plot one dataset into `folder` (relative to the repository root).

    Returns:
        Its INDEX.json entry, or ``{"error": message}`` when a command failed.
    """
    from perfmodel import diminishing_returns, load_fit, optimal_gpus

    fit_path = f"{folder}/{name}.json"
    here = os.getcwd()
    os.chdir(ROOT)  # so that the fit files name their CSV as datasets/NAME.csv
    try:
        status, err = _cli(fit_arguments(name, fit_path))
        if status == 0 and plot:
            status, err = _cli(["plot", fit_path, "-o", f"{folder}/{name}.png"])
        if status != 0:
            return {"error": err}
        document = json.loads(Path(fit_path).read_text())
        fit = load_fit(fit_path)
    finally:
        os.chdir(here)
    best, knee = optimal_gpus(fit), diminishing_returns(fit)
    return {
        "csv": f"datasets/{name}.csv",
        "csv_sha256": sha256(ROOT / "datasets" / f"{name}.csv"),
        "fit": f"{name}.json",
        "plot": f"{name}.png",
        "family": document["model"]["family"],
        "mape_percent": round(document["quality"]["mape_percent"], 4),
        "optimal_gpus": best.gpus,
        "optimum_at_search_limit": best.at_limit,
        "diminishing_returns_gpus": knee.gpus,
    }


def _balance(names: list[str], jobs: int) -> list[list[str]]:
    """Split `names` over `jobs` processes so that each compiles few shapes.

    Compilation dominates: a dataset whose CSV has the same columns and row count as one
    fitted before in the same process costs about a tenth of the first. So datasets are
    grouped by shape, big groups cut in pieces, and pieces given to the least loaded
    process, largest first.
    """
    groups: dict[tuple, list[str]] = {}
    for name in names:
        lines = (ROOT / "datasets" / f"{name}.csv").read_text().splitlines()
        groups.setdefault((lines[0], len(lines)), []).append(name)
    pieces = [g[i : i + 16] for g in groups.values() for i in range(0, len(g), 16)]
    pieces.sort(key=len, reverse=True)
    loads, plans = [0.0] * jobs, [[] for _ in range(jobs)]
    for piece in pieces:
        j = loads.index(min(loads))
        loads[j] += 10.0 + len(piece)  # ~ first fit of a shape, then one per dataset
        plans[j] += piece
    return [plan for plan in plans if plan]


def _work(names: list[str]) -> dict[str, dict]:
    return {name: fit_dataset(name) for name in names}


def _readme(index: dict) -> str:
    lines = [
        "# Fits of the shipped datasets",
        "",
        "For every series in `datasets/`, the fit written by `perfmodel fit` (default",
        "`--model auto`, seed 0) and its plot by `perfmodel plot`. Regenerate all of them with",
        "",
        f"    {COMMAND}",
        "",
        "(see the script's docstring for the exact commands). `INDEX.json` holds the SHA-256",
        "of every input CSV; `tests/test_fit_dir.py` checks that the fits are current. The",
        "optimum is searched up to 4096 GPUs; `4096*` means it is still at the search limit.",
        "",
        "| dataset | family | MAPE (%) | optimal GPUs | diminishing returns from | plot |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for name, entry in index["datasets"].items():
        star = "*" if entry["optimum_at_search_limit"] else ""
        knee = entry["diminishing_returns_gpus"]
        lines.append(
            f"| [{name}]({entry['fit']}) | {entry['family']} | {entry['mape_percent']:.2f} | "
            f"{entry['optimal_gpus']}{star} | {'—' if knee is None else knee} | "
            f"[png]({entry['plot']}) |"
        )
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", nargs="+", metavar="NAME", help="just these datasets")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="processes")
    args = parser.parse_args(argv)
    from perfmodel import list_datasets
    from perfmodel._io import package_version

    names = [info.name for info in list_datasets()]
    chosen = args.only or names
    unknown = sorted(set(chosen) - set(names))
    if unknown:
        parser.error(f"unknown datasets: {', '.join(unknown)}")
    jobs = max(1, min(args.jobs, len(chosen)))
    results = {}
    if jobs == 1:
        results = _work(chosen)
    else:
        # Spawned, not forked: JAX is multithreaded.
        context = multiprocessing.get_context("spawn")
        with concurrent.futures.ProcessPoolExecutor(jobs, mp_context=context) as pool:
            for part in pool.map(_work, _balance(chosen, jobs)):
                results.update(part)
    failed = {k: v["error"] for k, v in results.items() if "error" in v}
    for name, message in failed.items():
        print(f"{name}: {message}", file=sys.stderr)
    index_path = ROOT / "fit" / "INDEX.json"
    index = json.loads(index_path.read_text()) if index_path.is_file() else {"datasets": {}}
    merged = {**index["datasets"], **{k: v for k, v in results.items() if k not in failed}}
    index = {
        "command": COMMAND,
        "seed": SEED,
        "perfmodel_version": package_version(),
        "datasets": {name: merged[name] for name in names if name in merged},
    }
    index_path.write_text(json.dumps(index, indent=2) + "\n")
    (ROOT / "fit" / "README.md").write_text(_readme(index))
    print(f"fitted {len(results) - len(failed)} of {len(chosen)} datasets into fit/")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
