import equinox as eqx
import jax
import jax.numpy as jnp
from jax.test_util import check_grads
import numpy as np
import pytest

import perfmodel as pm
from perfmodel._terms.empirical import (
    formula,
    hypotheses,
    is_searched,
    PowerLogTerm,
    with_exponents,
)

COUNTS = np.array([1, 2, 4, 8, 16, 32, 64, 128], dtype=float)


def pmnf_numpy(n, c0, c, i, j):
    """``c0 + c·N^i·log2(N)^j``, written out in NumPy."""
    return c0 + c * n**i * np.log2(n) ** j


def synthetic(model, rng, noise, repeats=3):
    gpus = np.repeat(COUNTS, repeats)
    with jax.enable_x64(True):
        clean = np.asarray(model(pm.Config(gpus=gpus)))
    return pm.from_arrays(gpus, clean * np.exp(rng.normal(0.0, noise, gpus.shape)))


@pytest.mark.parametrize("i,j", [(-1, 0), (-0.5, 1), (1 / 3, 2), (2, 0), (0, 1), (-2 / 3, 2)])
def test_pmnf_matches_closed_form(i, j):
    n = np.array([1.0, 2.0, 3.0, 8.0, 100.0])
    model = pm.pmnf(i, j).with_parameters({"constant.time": 0.3, "scaling.time": 2.0})
    predicted = np.asarray(model(pm.Config(gpus=n)))
    np.testing.assert_allclose(predicted, pmnf_numpy(n, 0.3, 2.0, i, j), rtol=1e-12)
    parts = model.breakdown(pm.Config(gpus=n))
    np.testing.assert_allclose(parts["constant"] + parts["scaling"], predicted, rtol=1e-12)


def test_power_log_term_gradient_is_finite_at_one_gpu_and_matches_calculus():
    for j in (0, 1, 2):
        term = PowerLogTerm(1.5, -0.5, j)

        def value(n, term=term):
            return term(pm.Config(gpus=n))

        assert np.isfinite(float(jax.grad(value)(jnp.asarray(1.0)))), j
        # d/dN [c N^i log2(N)^j] = c N^(i−1) log2(N)^(j−1) (i·log2 N + j/ln 2)
        n = 3.0
        exact = 1.5 * n ** (-1.5) * np.log2(n) ** (j - 1) * (-0.5 * np.log2(n) + j / np.log(2))
        np.testing.assert_allclose(float(jax.grad(value)(jnp.asarray(n))), exact, rtol=1e-10)
    check_grads(value, (jnp.asarray(3.0),), order=1)  # order 2 costs 3 s of compiling


def test_jit_and_vmap_agree_with_plain_evaluation():
    model = pm.pmnf(0.5, 1).with_parameters({"constant.time": 1e-3, "scaling.time": 1e-4})
    n = jnp.asarray([1.0, 4.0, 64.0])
    plain = [float(model(pm.Config(gpus=x))) for x in n]
    np.testing.assert_allclose(eqx.filter_jit(model)(pm.Config(gpus=n)), plain, rtol=1e-12)
    batched = jax.vmap(lambda x: model(pm.Config(gpus=x)))(n)
    np.testing.assert_allclose(batched, plain, rtol=1e-12)


def test_hypotheses_and_formula():
    assert len(hypotheses()) == 12 * 3 - 1 and (0, 0) not in hypotheses()
    assert hypotheses(-0.5, None) == [(-0.5, 0), (-0.5, 1), (-0.5, 2)]
    assert formula(-2 / 3, 1) == "c0 + c·N^(-2/3)·log2(N)"
    assert formula(2, 0) == "c0 + c·N^2"
    assert formula(0, 2) == "c0 + c·log2(N)^2"


def test_searched_model_keeps_its_structure_across_hypotheses():
    model = pm.pmnf()
    assert is_searched(model) and is_searched(pm.pmnf(-1, None)) and not is_searched(pm.pmnf(1, 0))
    other = with_exponents(model, 0.5, 2)
    assert other.options == model.options
    assert jax.tree_util.tree_structure(other) == jax.tree_util.tree_structure(model)
    np.testing.assert_allclose(other(pm.Config(gpus=np.array([4.0]))), 1 + 2 * 4, rtol=1e-6)


@pytest.fixture(scope="module")
def strong():
    # Strong scaling: Amdahl's law, which is the PMNF hypothesis (−1, 0).
    truth = pm.pmnf(-1, 0).with_parameters({"constant.time": 0.05, "scaling.time": 3.0})
    data = synthetic(truth, np.random.default_rng(2), noise=0.005)
    return data, pm.fit("pmnf", data)


def test_search_recovers_exponents_and_coefficients(strong):
    _, result = strong
    assert result.family == "pmnf"
    assert dict(result.model.options) == {"exponent": -1, "log_exponent": 0}
    assert "c0 + c·N^(-1)," in result.message and "35 hypotheses" in result.message
    assert result.converged, result.message
    assert result.parameters()["constant.time"] == pytest.approx(0.05, rel=0.05)
    assert result.parameters()["scaling.time"] == pytest.approx(3.0, rel=0.02)


def test_search_recovers_a_growing_log_term(rng):
    # Weak scaling with a tree all-reduce: time per step grows like log2(N)².
    truth = pm.pmnf(0, 2).with_parameters({"constant.time": 1.0, "scaling.time": 0.01})
    data = synthetic(truth, rng, noise=0.002)
    result = pm.fit(pm.pmnf(), data)
    assert dict(result.model.options) == {"exponent": 0, "log_exponent": 2}
    assert result.parameters()["scaling.time"] == pytest.approx(0.01, rel=0.05)


def test_explicit_hypothesis_fits_only_its_coefficients(strong):
    data, searched = strong
    result = pm.fit(pm.pmnf(-1, 0), data)
    assert "hypotheses" not in result.message
    for name, value in searched.parameters().items():
        assert result.parameters()[name] == pytest.approx(value, rel=1e-4)


def test_save_and_load_round_trip(strong, tmp_path):
    _, result = strong
    path = tmp_path / "pmnf.json"
    pm.save_fit(result, path)
    loaded = pm.load_fit(path)
    assert loaded.model.options == result.model.options
    assert loaded.parameters() == pytest.approx(result.parameters(), rel=1e-12)
    gpus = [1, 3, 1000]
    np.testing.assert_allclose(
        loaded.predict(gpus)["time_s"], result.predict(gpus)["time_s"], rtol=1e-12
    )


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"weak": True}, "no weak-scaling variant"),
        ({"exponent": 0, "log_exponent": 0}, "constant"),
        ({"log_exponent": 3}, "0, 1 or 2"),
        ({"exponent": float("nan")}, "finite"),
    ],
)
def test_bad_options(kwargs, match):
    with pytest.raises(pm.InputError, match=match):
        pm.pmnf(**kwargs)


def test_too_few_gpu_counts_is_a_clear_error():
    data = pm.from_arrays([4, 4], [1.0, 1.1])
    with pytest.raises(pm.InputError, match="2 free parameters.*only 1 distinct"):
        pm.fit("pmnf", data)
