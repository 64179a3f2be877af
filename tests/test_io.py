import json

import numpy as np
import pytest

import perfmodel as pm
from perfmodel import _io


@pytest.fixture(scope="module")
def usl_fit():
    data = pm.from_arrays(
        [1, 2, 4, 8, 16, 1, 2, 4, 8, 16],
        [1.0, 0.55, 0.31, 0.2, 0.17, 1.02, 0.56, 0.3, 0.21, 0.16],
        gpus_per_node=[8] * 10,
    )
    return pm.fit("usl", data)


def test_save_load_round_trip(usl_fit, tmp_path):
    path = tmp_path / "fit.json"
    pm.save_fit(usl_fit, path)
    loaded = pm.load_fit(path)
    assert loaded.parameters() == pytest.approx(usl_fit.parameters(), rel=1e-12)
    assert loaded.family == "usl" and loaded.target == "time"
    assert loaded.config_defaults == {"gpus_per_node": 8.0}
    np.testing.assert_allclose(loaded.residuals, usl_fit.residuals, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(
        loaded.predict([1, 64])["time_s"],
        usl_fit.predict([1, 64])["time_s"],
        rtol=1e-12,
    )
    document = json.loads(path.read_text())
    assert document["schema_version"] == _io.SCHEMA_VERSION and document["precision"] == "float64"
    assert document["parameters"]["serial.time"]["unit"] == "s"


@pytest.mark.parametrize(
    "text, pattern",
    [
        ("{not json", "not a JSON fit file"),
        ('{"format": "other"}', "not a perfmodel fit file"),
        ('{"format": "perfmodel.fit", "schema_version": 99}', "schema version 99"),
        ('{"format": "perfmodel.fit", "schema_version": 2}', "missing key 'model'"),
    ],
)
def test_bad_fit_files(tmp_path, text, pattern):
    path = tmp_path / "fit.json"
    path.write_text(text)
    with pytest.raises(pm.InputError, match=pattern):
        pm.load_fit(path)


def test_missing_fit_file(tmp_path):
    with pytest.raises(pm.InputError, match="no such file"):
        pm.load_fit(tmp_path / "nope.json")


def test_failed_write_leaves_no_file(usl_fit, tmp_path, monkeypatch):
    from perfmodel import _files

    path = tmp_path / "fit.json"

    def broken(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(_files.os, "replace", broken)
    with pytest.raises(pm.InputError, match="fit.json: cannot write \\(No space left"):
        pm.save_fit(usl_fit, path)
    assert list(tmp_path.iterdir()) == []


def test_written_files_follow_the_umask(usl_fit, tmp_path):
    import os
    import stat

    path = tmp_path / "fit.json"
    old = os.umask(0o022)
    try:
        pm.save_fit(usl_fit, path)
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_top_level_extras_are_kept_readable(usl_fit, tmp_path):
    # save_fit's `extra` (the candidates table, a time-to-train section) stays readable.
    path = tmp_path / "fit.json"
    pm.save_fit(usl_fit, path, {"my_notes": {"run": 3}})
    assert pm.load_fit(path).family == "usl"


def test_an_unbounded_variance_is_saved_as_null(usl_fit, tmp_path):
    """A fit whose data leave a direction practically free (a log-variance of 2.3e6, as
    the DLE TF1 BERT DGX-2 seq512 fp32 table gave) was written, then refused by the
    file's own check: `fit` failed after fitting. Such entries are stored as null."""
    import dataclasses

    k = len(usl_fit.free)
    covariance = np.eye(k) * 0.01
    covariance[0, 0] = 2.3e6
    covariance[0, 1] = covariance[1, 0] = 3.0
    fit = dataclasses.replace(usl_fit, raw_covariance=covariance)
    path = tmp_path / "fit.json"
    pm.save_fit(fit, path)
    stored = json.loads(path.read_text())["raw_covariance"]
    assert stored[0][0] is None and stored[0][1] == 3.0 and stored[1][1] == 0.01
    loaded = pm.load_fit(path)
    assert loaded.raw_covariance[0, 0] == np.inf
    np.testing.assert_allclose(loaded.raw_covariance[1:, 1:], covariance[1:, 1:])
