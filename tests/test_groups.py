"""Rows reduced to one per configuration (`perfmodel._fitting.groups`)."""

import dataclasses
import json

import numpy as np
import pytest

import perfmodel as pm
from perfmodel._data import unique_rows
from perfmodel._fitting import blend
from perfmodel._fitting.groups import reduce, reduce_batch
from perfmodel._fitting.linear import _ridged, nnls
from perfmodel._fitting.loss import loss_value
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


def _repeated(seed=0, per_count=50, per_node=False):
    """Noisy repeats at six GPU counts (optionally with gpus_per_node), shuffled."""
    rng = np.random.default_rng(seed)
    gpus = rng.permutation(np.repeat([1.0, 2.0, 4.0, 8.0, 16.0, 32.0], per_count))
    times = (0.1 + 0.9 / gpus + 0.002 * gpus) * np.exp(rng.normal(0.0, 0.05, gpus.size))
    extra = {"gpus_per_node": np.where(gpus > 4, 8.0, 4.0)} if per_node else {}
    return pm.from_arrays(gpus, times, **extra)


def test_distinct_is_numpys_unique_of_the_rows():
    data = _repeated(per_node=True)
    rows, index = data.distinct()
    columns = np.stack([data.gpus, data.config["gpus_per_node"]], axis=1)
    expected, inverse = np.unique(columns, axis=0, return_inverse=True)
    np.testing.assert_array_equal(rows, expected)
    np.testing.assert_array_equal(index, inverse.ravel())
    assert data.distinct_configs() == 6 and data.distinct() is data.distinct()


@pytest.mark.parametrize("loss", ["log", "relative", "squared", "huber"])
def test_reduce_batch_rows_are_reduce_with_their_weights(loss):
    data = _repeated(per_count=5)
    rng = np.random.default_rng(1)
    times = data.time_s * np.exp(rng.normal(0.0, 0.01, (3, data.gpus.size)))
    weights = rng.integers(0, 3, (3, data.gpus.size)).astype(float)
    config, targets, reduced = reduce_batch(data, loss, times, weights)
    for t, w, target, weight in zip(times, weights, targets, reduced):
        groups = reduce(dataclasses.replace(data, time_s=t), loss, w)
        np.testing.assert_array_equal(target, groups.time_s)
        np.testing.assert_array_equal(weight, groups.weights)
        np.testing.assert_array_equal(np.asarray(config.gpus), np.asarray(groups.config.gpus))


@pytest.mark.parametrize("kind", ["log", "relative", "squared", "huber"])
def test_loss_value_at_configurations_is_the_loss_of_every_measurement(kind):
    data = _repeated()
    rows, index = data.distinct()
    predicted = 0.1 + 0.9 / rows[:, 0]
    w = np.linspace(0.5, 1.5, data.gpus.size)
    every = loss_value(predicted[index], data.time_s, w, kind, "time")
    assert loss_value(predicted, data.time_s, w, kind, "time", index) == every


def _members_row_by_row(family, data, scale):
    """`blend.fit_coefficients` written over every measurement (the module docstring)."""
    n, u = data.gpus, data.time_s / scale
    root_w = np.sqrt((n / n.max()) ** blend.FAMILY_ALPHA.get(family, blend.ALPHA))
    if family in ("power_law", "power_law_flat"):
        design = np.stack([np.ones_like(n), -np.log(n)], axis=-1) * root_w[:, None]
        return np.linalg.lstsq(design, np.log(u) * root_w, rcond=None)[0]
    phi = blend.features(family, n, data.config.get("gpus_per_node"))
    penalty = np.full(phi.shape[1], np.sqrt(blend.RIDGE))
    a, b, norms = _ridged(phi / u[:, None] * root_w[:, None], root_w, penalty)
    return nnls(a, b) / norms


@pytest.mark.parametrize(
    "family",
    ["amdahl", "usl", "weak_data_parallel", "weak_hierarchical", "power_law", "power_law_flat"],
)
def test_blend_members_fitted_on_configurations_equal_every_measurement(family):
    """The default's members are fitted from each configuration's sufficient statistics:
    the same coefficients as the least squares over every measurement."""
    data = _repeated(per_node=True)
    got = blend.fit_coefficients(family, data, 0.5)
    expected = _members_row_by_row(family, data, 0.5)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12 * np.abs(expected).max())
