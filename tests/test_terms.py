"""Every cost term of the catalogue (`helpers.TERM_CASES`) against its closed form, and
under the transforms: eager, jit, vmap and a Python loop agree; gradients are finite at
one GPU."""

import equinox as eqx
from helpers import GPUS, TERM_CASES
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import perfmodel as pm


@pytest.mark.parametrize("case", TERM_CASES, ids=repr)
def test_term_matches_its_closed_form(case):
    term = case.make()
    config = pm.Config(gpus=GPUS, **case.config)
    np.testing.assert_allclose(term(config), case.expected(GPUS), rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize("case", TERM_CASES, ids=repr)
def test_term_under_jit_and_vmap_equals_a_python_loop(case):
    term = case.make()
    config = pm.Config(gpus=GPUS, **case.config).broadcast()
    eager = term(config)
    jitted = eqx.filter_jit(term)(config)
    mapped = jax.vmap(term)(config)
    looped = [term(pm.Config(gpus=n, **case.config)) for n in GPUS]
    np.testing.assert_allclose(jitted, eager, rtol=1e-14)
    np.testing.assert_allclose(mapped, eager, rtol=1e-14)
    np.testing.assert_allclose(looped, eager, rtol=1e-14)


@pytest.mark.parametrize("case", TERM_CASES, ids=repr)
def test_term_gradient_is_finite_at_one_gpu(case):
    term = case.make()

    def seconds(gpus):
        return term(pm.Config(gpus=gpus, **case.config))

    assert np.isfinite(float(jax.grad(seconds)(jnp.float64(1.0))))
    assert np.isfinite(float(jax.grad(seconds)(jnp.float64(8.0))))
