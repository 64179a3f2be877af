"""Rows reduced to one per configuration (`perfmodel._fitting.groups`)."""

import json

import numpy as np
import pytest

import perfmodel as pm
from perfmodel._data import unique_rows
from perfmodel._io import to_json


@pytest.mark.parametrize("k", [1, 2, 3])
def test_unique_rows_equal_numpys(k):
    columns = np.random.default_rng(k).integers(0, 4, (500, k)).astype(float)
    unique, index = unique_rows(columns)
    expected, inverse = np.unique(columns, axis=0, return_inverse=True)
    np.testing.assert_array_equal(unique, expected)
    np.testing.assert_array_equal(index, inverse.ravel())
    np.testing.assert_array_equal(unique[index], columns)


def test_repeated_rows_fit_as_their_groups():
    """10,002 noisy rows at six counts: the same fit as one row per count at the groups'
    geometric means (the log loss's sufficient statistic)."""
    rng = np.random.default_rng(0)
    gpus = np.repeat([1.0, 2.0, 4.0, 8.0, 16.0, 32.0], 1667)  # 10,002 rows, equal groups
    times = (0.1 + 0.9 / gpus) * np.exp(rng.normal(0.0, 0.05, gpus.size))
    many = pm.fit("amdahl", pm.from_arrays(gpus, times), loss="log")
    counts = np.unique(gpus)
    means = np.array([np.exp(np.mean(np.log(times[gpus == n]))) for n in counts])
    few = pm.fit("amdahl", pm.from_arrays(counts, means), loss="log")
    for name, value in few.parameters().items():  # up to the ridge's weight (1e-8)
        assert many.parameters()[name] == pytest.approx(value, rel=1e-7), name


def test_json_of_measured_columns_keeps_every_value_and_nulls_non_finite():
    document = {"a": [1.5, 2.5, float("inf")], "b": np.array([1.0, np.nan]), "c": [1, "x"]}
    assert json.loads(to_json(document)) == {"a": [1.5, 2.5, None], "b": [1.0, None], "c": [1, "x"]}


def test_json_writes_long_lists_on_one_line_and_keeps_ints():
    text = to_json({"n": list(range(100)), "t": [0.5] * 100 + [float("nan")], "s": "x"})
    assert json.loads(text) == {"n": list(range(100)), "t": [0.5] * 100 + [None], "s": "x"}
    assert '"n": [0, 1, 2,' in text and len(text.splitlines()) == 5
