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
