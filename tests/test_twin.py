"""The NumPy twins of `perfmodel._fitting.twin` evaluate the models a fit evaluates as
JAX does: seconds and the derivatives in the stored parameters, every family with a
twin, the default's blend; every other model has none (the JAX path)."""

import importlib

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import perfmodel as pm
from perfmodel._fitting import linear, twin
from perfmodel._fitting.problem import as_float64
from perfmodel._presets import build

# The module, not the function `perfmodel._fitting.assemble` of the same name.
assemble = importlib.import_module("perfmodel._fitting.assemble")
GPUS = np.array([1.0, 2.0, 3.0, 8.0, 16.0, 24.0, 64.0, 1000.0])
MODELS = {
    "amdahl": {},
    "amdahl weak": {"weak": True},
    "usl": {},
    "weak_data_parallel ring": {"algorithm": "ring"},
    "weak_data_parallel tree": {"algorithm": "tree"},
    "weak_hierarchical": {},
    "power_law": {"exponent": -0.7},
    "pmnf -0.5 1": {"exponent": -0.5, "log_exponent": 1},
    "pmnf -1 2": {"exponent": -1.0, "log_exponent": 2},
    "pmnf 1 0": {"exponent": 1.0, "log_exponent": 0},
}


def model_of(label: str, rng):
    model = build(label.split()[0], **MODELS[label])
    values = {name: float(rng.uniform(0.01, 2.0)) for name in model.parameter_specs()}
    return as_float64(model).with_parameters(values)


def config():
    return pm.Config(gpus=GPUS, gpus_per_node=np.full_like(GPUS, 8.0))


def jax_sensitivities(model, free):
    params, static = eqx.partition(model, model.raw_leaf_mask(set(free)))
    with jax.enable_x64(True):
        predicted, jac = assemble._sensitivities(params, static, config())
    return np.asarray(predicted), np.asarray(jac)


@pytest.mark.parametrize("label", list(MODELS))
def test_seconds_and_derivatives_agree_with_jax(label, rng):
    with jax.enable_x64(True):
        model = model_of(label, rng)
        free = list(model.parameter_specs())
        inverse = np.array([model.parameter_specs()[n].kind == "bandwidth" for n in free])
        rows = rng.uniform(0.1, 3.0, (5, len(free)))
        ours = twin.seconds_at(model, config(), free, np.where(inverse, 1.0 / rows, rows))
        theirs = linear._evaluate(model, tuple(free), inverse, rows, config())
    assert ours is not None
    np.testing.assert_allclose(ours, np.asarray(theirs), rtol=1e-12)
    names = assemble.flat_names(model, free)
    predicted, jac = twin.sensitivities_at(model, config(), names)
    expected, expected_jac = jax_sensitivities(model, free)
    np.testing.assert_allclose(predicted, expected, rtol=1e-12)
    np.testing.assert_allclose(jac, expected_jac, rtol=1e-10, atol=1e-14 * np.abs(expected).max())


def test_the_blends_derivatives_agree_with_jax():
    data = pm.load_dataset("tf_dgx1_p100_vgg16_real")
    with jax.enable_x64(True):
        blend = pm.fit_auto(data).best.model
        free = list(blend.parameter_specs())
        names = assemble.flat_names(blend, free)
        predicted, jac = twin.sensitivities_at(blend, config(), names)
        expected, expected_jac = jax_sensitivities(blend, free)
    assert jac.shape == (GPUS.size, len(free)) and np.abs(jac).max() > 0
    np.testing.assert_allclose(predicted, expected, rtol=1e-12)
    np.testing.assert_allclose(jac, expected_jac, rtol=1e-9, atol=1e-12 * np.abs(expected).max())


@pytest.mark.parametrize(
    "name",
    [
        "tf_dgx1_p100_vgg16_real",  # strong scaling in one node
        pytest.param("dle_pytorch_txl_dgx2h_multinode_large_bs4_mixed", marks=pytest.mark.slow),
        pytest.param("dle_mxnet_rn50_dgx1_fp32", marks=pytest.mark.slow),
    ],
)
def test_a_fit_is_the_same_through_jax(name, monkeypatch):
    data = pm.load_dataset(name)
    ours = pm.fit_auto(data)
    monkeypatch.setattr(twin, "numpy_model", lambda model: None)  # JAX for everything
    theirs = pm.fit_auto(data)
    for a, b in zip(ours.candidates, theirs.candidates):
        assert a.family == b.family
        if a.fit is None:
            continue
        pa, pb = a.fit.parameters(), b.fit.parameters()
        assert all(np.isclose(float(pa[k]), float(pb[k]), rtol=1e-9) for k in pa)
        assert np.isclose(a.score, b.score, rtol=1e-9, atol=1e-12, equal_nan=True)
    np.testing.assert_allclose(
        ours.best.predict([1, 8, 64, 512])["time_s"],
        theirs.best.predict([1, 8, 64, 512])["time_s"],
        rtol=1e-9,
    )
    for a, b in zip(ours.candidates, theirs.candidates):
        if a.fit is not None and a.fit.raw_covariance is not None:
            np.testing.assert_allclose(a.fit.raw_covariance, b.fit.raw_covariance, rtol=1e-7)


def test_other_models_have_no_twin():
    overlapped = pm.ScalingModel(
        terms=(pm.SerialTerm(0.1), pm.ComputeTerm(1.0)), logit_overlap=jnp.asarray(0.0)
    )
    custom = pm.ScalingModel(terms=(pm.SerialTerm(0.1), pm.ComputeTerm(1.0)))
    assert twin.numpy_model(overlapped) is None
    assert twin.numpy_model(custom) is None  # family "custom"
    assert twin.numpy_model(build("hybrid_basic")) is None
    # A hand-built model that borrows a family's name (its compute term is weak; the
    # preset's is not) has no twin: the twin would evaluate the preset.
    borrowed = pm.ScalingModel(
        terms=(pm.SerialTerm(0.1), pm.ComputeTerm(1.0, weak=True)), family="amdahl"
    )
    assert twin.numpy_model(borrowed) is None
