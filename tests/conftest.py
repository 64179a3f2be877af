import os

import jax
from jaxtyping import install_import_hook
import numpy as np
import pytest

# Closed-form and gradient checks run in float64; the library itself never flips this.
jax.config.update("jax_enable_x64", True)
# Equinox's settings: silent float32/float64 mixing and accidental broadcasting raise.
jax.config.update("jax_numpy_dtype_promotion", "strict")
jax.config.update("jax_numpy_rank_promotion", "raise")
# The CLI's persistent compilation cache stays out of the user's home in tests.
os.environ.setdefault("PERFMODEL_NO_CACHE", "1")
# Shape and dtype annotations are checked at runtime in the tests, and cost users nothing.
install_import_hook("perfmodel", "_typecheck.checker")


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture
def cli_cache(tmp_path, monkeypatch):
    """The command line's cache turned on, in ``tmp_path/cache`` (yielded); JAX's
    compilation-cache settings, which the command line's JAX path changes, restored."""
    monkeypatch.delenv("PERFMODEL_NO_CACHE", raising=False)
    monkeypatch.setenv("PERFMODEL_CACHE_DIR", str(tmp_path / "cache"))
    names = [
        "jax_compilation_cache_dir",
        "jax_persistent_cache_min_compile_time_secs",
        "jax_persistent_cache_min_entry_size_bytes",
    ]
    before = {name: getattr(jax.config, name) for name in names}
    yield tmp_path / "cache"
    for name, value in before.items():
        jax.config.update(name, value)
