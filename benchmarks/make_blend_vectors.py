"""Write tests/data/blend_vectors.json: the library blend's members as the NumPy
reference of round 1 fits them (`_reference_default.py` at the commit the library's
blend was ported from), at every count of every shipped and external test case.

    python benchmarks/make_blend_vectors.py

`tests/test_blend.py` checks the library's members against these curves (1e-6)."""

import json
from pathlib import Path
import sys

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import _reference_default as ref  # noqa: E402


def main() -> None:
    cases = json.loads((HERE.parent / "tests/data/reference_vectors.json").read_text())["cases"]
    out = []
    for case in cases:
        fitted = ref.fit_default(
            case["gpus"],
            case["measured"],
            case["target"],
            gpus_per_node=case["gpus_per_node"],
            scaling=case["scaling"],
        )
        ask = np.asarray(case["ask"], float)
        members = {
            family: (fitted.scale * ref.family_u(family, theta, ask, fitted.gpus_per_node)).tolist()
            for family, theta in fitted.thetas.items()
        } | {
            family: (fitted.scale * ref.family_u(family, theta, ask, fitted.gpus_per_node)).tolist()
            for family, theta in fitted.mixture_thetas.items()
        }
        out.append({k: case[k] for k in ("series", "protocol", "target", "gpus", "measured",
                                          "gpus_per_node", "scaling", "ask")}
                   | {"members": members})  # fmt: skip
    path = HERE.parent / "tests/data/blend_vectors.json"
    path.write_text(json.dumps({"cases": out}, separators=(",", ":")))
    print(f"wrote {path}: {len(out)} cases")


if __name__ == "__main__":
    main()
