"""A misspelt keyword argument names the valid ones, and suggests the closest."""

from helpers import exact_fit as fitted
import pytest

import perfmodel as pm


@pytest.fixture(scope="module")
def amdahl():
    return fitted(pm.amdahl().with_parameters({"serial.time": 0.05, "compute.time": 0.95}))


def test_config_lists_its_fields():
    with pytest.raises(TypeError, match=r"'gpu' \(did you mean 'gpus'\?\); valid: gpus, gpus_"):
        pm.Config(gpu=8)
    assert float(pm.Config(gpus=8.0, gpus_per_node=4.0).gpus_per_node) == 4.0


def test_fit_lists_its_options():
    data = pm.from_arrays([1, 2, 4], [1.0, 0.6, 0.4])
    with pytest.raises(TypeError, match="'max_gpu'; valid: model, data, loss, fix, bounds"):
        pm.fit("amdahl", data, max_gpu=100)
    with pytest.raises(TypeError, match=r"'n_start' \(did you mean 'n_starts'\?\)"):
        pm.fit_auto(data, n_start=4)


def test_questions_list_their_keywords_and_the_config_fields(amdahl):
    with pytest.raises(TypeError, match=r"'max_gpu' \(did you mean 'max_gpus'\?\); valid: fit,"):
        pm.optimal_gpus(amdahl, max_gpu=100)
    with pytest.raises(TypeError, match="and Config fields: gpus_per_node"):
        pm.diminishing_returns(amdahl, treshold=0.5)
    with pytest.raises(TypeError, match=r"did you mean 'level'"):
        pm.recommend(amdahl, levle=0.9)
    # A Config field is still a valid override.
    assert pm.optimal_gpus(amdahl, max_gpus=64, gpus_per_node=4.0).gpus == 64


def test_a_selection_path_or_table_for_a_fit_stops_in_one_line(amdahl, tmp_path):
    """What is passed for a fit or benchmarks is checked at the boundary: an InputError
    naming what to pass, not an AttributeError from deep inside (`perfmodel._checked`)."""
    selection = pm.Selection(best=amdahl, criterion="bic", candidates=())
    with pytest.raises(
        pm.InputError, match=r"optimal_gpus\(\): expected FitResult .*Selection; pass its .best"
    ):
        pm.optimal_gpus(selection)
    with pytest.raises(pm.InputError, match=r"recommend\(\): .* got Benchmarks; fit them first"):
        pm.recommend(amdahl.data)
    with pytest.raises(pm.InputError, match=r"save_fit\(\): .* got str; read a saved fit"):
        pm.save_fit(str(tmp_path / "fit.json"), str(tmp_path / "out.json"))
    with pytest.raises(pm.InputError, match=r"after .* got Selection"):
        pm.compare_fits(amdahl, after=selection)
    with pytest.raises(pm.InputError, match=r"plot_speedup\(\): .* got Selection"):
        pm.plot_speedup(selection)  # takes **options: its keywords are its own
    with pytest.raises(pm.InputError, match=r"fit\(\): expected Benchmarks .* got str; a CSV path"):
        pm.fit("amdahl", "bench.csv")
    with pytest.raises(pm.InputError, match=r"fit_auto\(\): expected Benchmarks .* got list"):
        pm.fit_auto([1, 2, 4])
    assert pm.optimal_gpus(fit=amdahl, max_gpus=8).gpus == 8  # by keyword too
