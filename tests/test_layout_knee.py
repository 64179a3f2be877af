"""Where returns diminish in a layout search (`perfmodel._cli.layout.best_return_ahead`)."""

import numpy as np
import pytest

from perfmodel._cli.layout import best_return_ahead


def test_a_count_without_a_good_layout_does_not_end_the_returns():
    # Review round 7: 384 GPUs has only poor layouts (4.63x against 4.30x at 256), but
    # 512 gives 7.36x: from 256 a larger purchase still adds (7.36 − 4.30)/256 per GPU.
    gpus = np.array([256.0, 384.0, 512.0])
    speedup = np.array([4.30, 4.63, 7.36])
    ahead = best_return_ahead(gpus, speedup)
    assert ahead[0] == pytest.approx((7.36 - 4.30) / 256)
    assert ahead[1] == pytest.approx((7.36 - 4.63) / 128)
    assert np.isnan(ahead[2])


def test_on_a_concave_curve_it_is_the_step_to_the_next_count():
    gpus = np.array([1.0, 2.0, 4.0, 8.0])
    speedup = np.sqrt(gpus)
    steps = np.diff(speedup) / np.diff(gpus)
    assert best_return_ahead(gpus, speedup)[:-1] == pytest.approx(steps)
