"""The corpus as plain NumPy: every shipped series and every external one.

``python benchmarks/extrapolation_research/corpus.py`` dumps ``benchmarks/extrapolation_research/out/corpus.pkl`` (perfmodel's loaders,
so validation and units are the library's); `load()` reads it back as a list of dicts
``name, set ("shipped"/"external"), group (source group), target, gpus, y (measured),
u (seconds per unit of work, or per step for time series), gpus_per_node, global_batch``.
"""

from pathlib import Path
import pickle
import sys

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = HERE / "out" / "corpus.pkl"


def source_group(name: str) -> str:
    """Leave-one-source-out groups: the publisher and, for DeepLearningExamples, the
    framework (tables of one framework share code, hardware and authors)."""
    n = name.removeprefix("ext_")
    parts = n.split("_")
    if parts[0] == "dle":
        framework = {"pyt": "pytorch", "pytorch": "pytorch"}.get(parts[1], parts[1])
        return ("ext_" if name.startswith("ext_") else "") + "dle_" + framework
    if parts[0] == "tf":
        return "tf_" + parts[1]  # tf_dgx1, tf_gce
    return ("ext_" if name.startswith("ext_") else "") + parts[0]


def dump():
    sys.path.insert(0, str(ROOT))
    import perfmodel as pm

    series = []
    for info in pm.list_datasets():
        series.append(("shipped", info.name, pm.load_dataset(info.name)))
    for file in sorted((ROOT / "benchmarks" / "external").glob("*.csv")):
        series.append(("external", file.stem, pm.load_benchmarks(file)))
    rows = []
    for kind, name, d in series:
        rows.append(
            {
                "name": name,
                "set": kind,
                "group": source_group(name),
                "target": d.target,
                "gpus": np.asarray(d.gpus, float),
                "y": np.asarray(d.measured, float),
                "u": np.asarray(d.time_s, float),
                "gpus_per_node": (
                    None
                    if "gpus_per_node" not in d.config
                    else np.asarray(d.config["gpus_per_node"], float)
                ),
                "global_batch": (
                    None
                    if "global_batch" not in d.config
                    else np.asarray(d.config["global_batch"], float)
                ),
            }
        )
    OUT.parent.mkdir(exist_ok=True)
    with open(OUT, "wb") as f:
        pickle.dump(rows, f)
    return rows


def load():
    with open(OUT, "rb") as f:
        return pickle.load(f)


if __name__ == "__main__":
    rows = dump()
    from collections import Counter

    print(len(rows), Counter((r["set"], r["group"]) for r in rows))
