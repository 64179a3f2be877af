"""Round 14: the Python API's None and non-path arguments stop in one line naming the
argument (they had raised a bare TypeError or AttributeError from os.fspath and
str.removesuffix, or been read as NaN and reported as ``'nan'``); the package namespace
lists only its public names."""

import pytest

import perfmodel as pm


@pytest.fixture(scope="module")
def fit():
    return pm.fit("amdahl", pm.from_arrays([1, 2, 4, 8], [1.0, 0.55, 0.3, 0.2]))


@pytest.mark.parametrize(
    "name",
    [
        "load_benchmarks",
        "load_fit",
        "load_collective_fit",
        "load_time_to_train",
        "detect_format",
    ],
)
def test_a_loader_given_none_names_the_path_argument(name):
    with pytest.raises(pm.InputError, match=rf"^{name}\(\): expected a file path .* got NoneType$"):
        getattr(pm, name)(None)


@pytest.mark.parametrize("name", ["load_dataset", "load_nccl_log"])
def test_a_shipped_name_given_none_is_refused(name):
    with pytest.raises(pm.InputError, match=rf"^{name}\(\): expected str for name, got int$"):
        getattr(pm, name)(3)


def test_a_writer_given_none_names_the_path_argument(fit, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a file named "None" or "12", or a report's assets, land here
    with pytest.raises(pm.InputError, match=r"^save_fit\(\): expected a file path .*NoneType$"):
        pm.save_fit(fit, None)
    with pytest.raises(pm.InputError, match=r"^write_report\(\): expected a file path"):
        pm.write_report(fit, 12)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(pm.InputError, match="expected a file path or the log's text"):
        pm.parse_nccl_tests(None)


def test_a_path_like_still_loads(fit, tmp_path):
    pm.save_fit(fit, tmp_path / "f.json")  # a Path, not only a str
    assert pm.load_fit(tmp_path / "f.json").parameters() == pytest.approx(fit.parameters())


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: pm.from_arrays(None, [1.0]), "<arrays>, column 'gpus': expected a number"),
        (
            lambda: pm.from_arrays([1, None], [1.0, 0.6]),
            "<arrays> row 2, column 'gpus': expected a number, got None",
        ),
        (
            lambda: pm.from_arrays([1, 2], throughput=[None, 3.0]),
            "<arrays> row 1, column 'throughput': expected a number, got None",
        ),
        (
            lambda: pm.from_arrays([1, 2], [1.0, 0.6], batch_per_gpu=[4, None]),
            "<arrays> row 2, column 'batch_per_gpu': expected a number, got None",
        ),
    ],
)
def test_none_in_arrays_is_named_not_read_as_nan(call, message):
    with pytest.raises(pm.InputError) as error:
        call()
    assert str(error.value).startswith(message) and "nan" not in str(error.value)


@pytest.mark.parametrize("gpus", [None, [1, None], [[1, 2], [None, 3]]])
def test_none_among_gpu_counts_is_named(fit, gpus):
    with pytest.raises(pm.InputError, match=r"expected GPU counts from 1 to .*, got .*None"):
        fit.predict(gpus)


def test_the_namespace_lists_no_module_imports():
    assert not {"importlib", "inspect", "TYPE_CHECKING"} & set(dir(pm))
    assert "fit_auto" in dir(pm) and "__version__" in dir(pm)
