"""The corpus as plain NumPy: every shipped, external, fresh, unseen, blind and vendor series.

``python benchmarks/extrapolation_research/corpus.py`` dumps ``out/corpus.pkl`` (loaded
with perfmodel's loaders, so validation and units are the library's) and prints the
number of series per set and source group; `load()` reads it back as a list of dicts
``name, set ("shipped"/"external"/"fresh"/"unseen"/"blind"/"vendor"/"heldout"), group (source
group), target, gpus, y (measured), u (perfmodel's time_s), gpus_per_node, global_batch``.
"""

from pathlib import Path
import pickle
import sys

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
OUT = HERE / "out" / "corpus.pkl"


def source_group(name: str) -> str:
    """Leave-one-source-out groups: the publisher and, for DeepLearningExamples, the
    framework (tables of one framework share code, hardware and authors)."""
    prefixes = ("ext_", "fresh_", "unseen_", "blind_", "vendor_", "heldout_")
    prefix = next((p for p in prefixes if name.startswith(p)), "")
    parts = name.removeprefix(prefix).split("_")
    if parts[0] == "dle":
        framework = {"pyt": "pytorch", "pytorch": "pytorch"}.get(parts[1], parts[1])
        return prefix + "dle_" + framework
    if parts[0] == "lambda":
        return prefix + "lambda_" + parts[1]  # one group per system (vendor)
    if parts[0] == "dlperf":
        return prefix + "dlperf_" + parts[1]  # one group per framework
    if parts[0] == "tf":
        return prefix + "tf_" + parts[1]  # tf_dgx1, tf_gce, fresh_tf_ec2, fresh_tf_ec2dist
    return prefix + parts[0]


def dump():
    sys.path.insert(0, str(ROOT))
    import perfmodel as pm

    series = []
    for info in pm.list_datasets():
        series.append(("shipped", info.name, pm.load_dataset(info.name)))
    for kind, folder in (
        ("external", "external"),
        ("fresh", "fresh"),
        ("unseen", "unseen"),
        ("blind", "blind"),
        ("vendor", "vendor"),
        ("heldout", "heldout"),
    ):
        for file in sorted((ROOT / "benchmarks" / folder).glob("*.csv")):
            series.append((kind, file.stem, pm.load_benchmarks(file)))
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
