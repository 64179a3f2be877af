"""The train/held-out split shared by the accuracy and calibration benchmarks.

A user measures the GPU counts they can afford and asks about larger ones, so each real
series is fitted on its GPU counts up to half the largest and judged on the rest.
"""

import dataclasses

import numpy as np

from perfmodel import Benchmarks

TRAIN_FRACTION = 0.5


def subset(data: Benchmarks, keep: np.ndarray) -> Benchmarks:
    """The measurements of `data` where the boolean mask `keep` is True."""
    return dataclasses.replace(
        data,
        gpus=data.gpus[keep],
        time_s=data.time_s[keep],
        config={k: np.asarray(v)[keep] for k, v in data.config.items()},
        lines=None if data.lines is None else np.asarray(data.lines)[keep],
        files=None if data.files is None else tuple(np.asarray(data.files)[keep]),
    )


def split(data: Benchmarks, fraction: float = TRAIN_FRACTION) -> tuple[Benchmarks, Benchmarks]:
    """``(train, held_out)``: GPU counts ≤ `fraction` × the largest, and the rest."""
    keep = data.gpus <= fraction * data.gpus.max()
    return subset(data, keep), subset(data, ~keep)


def group(name: str) -> str:
    """The source a shipped series belongs to: its name up to the first underscore
    (``tf``, ``dle``, ``mlperf07``, ``usl``), used to report results by group."""
    return name.split("_", 1)[0]
