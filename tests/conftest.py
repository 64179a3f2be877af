import jax
import numpy as np
import pytest

# Closed-form and gradient checks run in float64; the library itself never flips this.
jax.config.update("jax_enable_x64", True)
jax.config.update("jax_numpy_rank_promotion", "raise")


@pytest.fixture
def rng():
    return np.random.default_rng(0)
