"""The critical-batch model of steps to a target (`perfmodel._convergence`): closed forms,
limits, the time-optimal batch, the fit and the planning answers."""

from helpers import load_benchmark
import jax
import jax.numpy as jnp
from jax.test_util import check_grads
import numpy as np
import pytest

from perfmodel import _convergence as cv
from perfmodel import InputError

E_MIN, B_NOISE = 40.0, 3000.0  # epochs, samples
BATCHES = np.geomspace(1.0, 1e6, 25)


def test_steps_and_examples_lie_on_the_hyperbola():
    s = cv.steps_to_target(BATCHES, E_MIN, B_NOISE)
    e = cv.work_to_target(BATCHES, E_MIN, B_NOISE)
    s_min = cv.steps_min(E_MIN, B_NOISE)
    np.testing.assert_allclose(cv.hyperbola(s, e, s_min, E_MIN), 1.0, rtol=1e-12)
    np.testing.assert_allclose(e, BATCHES * s, rtol=1e-12)  # E = B·S (work in samples)
    np.testing.assert_allclose(s, s_min * (1 + B_NOISE / BATCHES), rtol=1e-12)


def test_epochs_convert_with_the_dataset_size():
    d = 117266.0
    s = cv.steps_to_target(BATCHES, E_MIN, B_NOISE, samples_per_unit=d)
    np.testing.assert_allclose(s, E_MIN * (1 + BATCHES / B_NOISE) * d / BATCHES, rtol=1e-12)


def test_limits():
    tiny, huge = 1e-6 * B_NOISE, 1e6 * B_NOISE
    assert cv.work_to_target(tiny, E_MIN, B_NOISE) == pytest.approx(E_MIN, rel=1e-5)
    assert cv.steps_to_target(huge, E_MIN, B_NOISE) == pytest.approx(
        cv.steps_min(E_MIN, B_NOISE), rel=1e-5
    )
    assert cv.statistical_efficiency(tiny, B_NOISE) == pytest.approx(1.0, rel=1e-5)
    assert cv.doubling_gain(tiny, B_NOISE) == pytest.approx(2.0, rel=1e-5)
    assert cv.doubling_gain(huge, B_NOISE) == pytest.approx(1.0, rel=1e-5)
    assert cv.statistical_efficiency(B_NOISE, B_NOISE) == 0.5  # at the critical batch
    assert cv.work_to_target(1e9, E_MIN, np.inf) == E_MIN  # B_noise → ∞: constant work


def test_optimal_batch_closed_form_is_the_grid_minimum():
    a, b = 0.05, 2e-5  # s per step, s per sample
    grid = np.geomspace(10, 1e6, 200001)
    times = cv.time_to_train(a + b * grid, grid, E_MIN, B_NOISE)
    best = cv.optimal_batch(a, b, B_NOISE)
    assert best == pytest.approx(grid[np.argmin(times)], rel=1e-3)
    assert best == pytest.approx(np.sqrt(a * B_NOISE / b))
    assert cv.minimum_time(a, b, E_MIN, B_NOISE) == pytest.approx(times.min(), rel=1e-8)
    assert cv.time_to_train(a + b * best, best, E_MIN, B_NOISE) == pytest.approx(
        cv.minimum_time(a, b, E_MIN, B_NOISE), rel=1e-12
    )


def test_cost_is_gpu_hours_times_price():
    cost = cv.cost_to_train(2.0, 64, 1024, E_MIN, B_NOISE, price_per_gpu_hour=3.0)
    time = cv.time_to_train(2.0, 1024, E_MIN, B_NOISE)
    assert cost == pytest.approx(64 * time / 3600 * 3.0)


def test_module_matches_the_closed_form_under_jit_and_vmap():
    model = cv.CriticalBatch(np.log(E_MIN), np.log(B_NOISE))
    expected = cv.work_to_target(BATCHES, E_MIN, B_NOISE)
    np.testing.assert_allclose(model(BATCHES), expected, rtol=1e-12)
    np.testing.assert_allclose(
        jax.jit(lambda b: model(b))(jnp.asarray(BATCHES)), expected, rtol=1e-12
    )
    np.testing.assert_allclose(jax.vmap(model)(jnp.asarray(BATCHES)), expected, rtol=1e-12)
    np.testing.assert_allclose(model.steps(BATCHES), expected / BATCHES, rtol=1e-12)
    assert float(model.noise_batch) == pytest.approx(B_NOISE)


@pytest.mark.parametrize("batch", [1e-30, 1.0, 1e30])
def test_gradients_are_finite_and_exact(batch):
    def log_work(params):
        return jnp.log(cv.CriticalBatch(*params)(batch))

    params = (jnp.log(E_MIN), jnp.log(B_NOISE))
    d_e, d_b = jax.grad(log_work)(params)
    x = batch / B_NOISE
    assert float(d_e) == pytest.approx(1.0)
    assert float(d_b) == pytest.approx(-x / (1 + x), abs=1e-12)
    check_grads(log_work, (params,), order=2, modes=["rev"])


def synthetic(rng, noise=0.0, batches=(256, 512, 1024, 2048, 4096, 8192), runs=5):
    b = np.repeat(np.asarray(batches, float), runs)
    w = cv.work_to_target(b, E_MIN, B_NOISE) * np.exp(noise * rng.standard_normal(b.size))
    return b, w


def test_fit_recovers_known_parameters(rng):
    fit = cv.fit_critical_batch(*synthetic(rng))
    assert fit.bound == "" and fit.rss < 1e-20
    assert fit.noise_batch == pytest.approx(B_NOISE, rel=1e-6)
    assert fit.work_min == pytest.approx(E_MIN, rel=1e-6)
    noisy = cv.fit_critical_batch(*synthetic(rng, noise=0.03))
    assert noisy.noise_batch == pytest.approx(B_NOISE, rel=0.25)
    assert noisy.noise == pytest.approx(0.03, rel=0.3)


def test_fit_intervals_cover_the_truth(rng):
    hits, total = 0, 0
    far = np.array([16384.0, 32768.0])
    for _ in range(40):
        fit = cv.fit_critical_batch(*synthetic(rng, noise=0.05, batches=(256, 1024, 4096)))
        band = fit.predict_interval(far, level=0.9)
        new = cv.work_to_target(far, E_MIN, B_NOISE) * np.exp(0.05 * rng.standard_normal(2))
        hits += int(np.sum((band["work_lo"] <= new) & (new <= band["work_hi"])))
        total += 2
    assert 0.8 <= hits / total <= 1.0


def test_fit_bounds_when_the_data_leave_the_critical_batch_open():
    one = cv.fit_critical_batch([512, 512, 512], [40.0, 41.0, 39.0])
    assert one.bound == "none" and "not determined" in one.message
    lo, hi = one.log_work_range([4096.0])
    assert np.exp(lo[0]) == pytest.approx(40.0, rel=0.05)  # work constant ...
    assert np.exp(hi[0]) == pytest.approx(40.0 * 8, rel=0.05)  # ... up to steps constant
    flat = cv.fit_critical_batch([256, 512, 1024, 2048], [40.0, 40.0, 40.0, 40.0])
    assert flat.bound == "lower" and "does not grow" in flat.message
    linear = cv.fit_critical_batch([256, 512, 1024, 2048], [10.0, 20.0, 40.0, 80.0])
    assert linear.bound == "upper" and "do not fall" in linear.message


@pytest.mark.parametrize(
    "batch, work, message",
    [
        ([512], [40.0], "at least two runs"),
        ([512, -1], [40.0, 41.0], "run 1: global batch: expected a positive number"),
        ([512, 1024], [40.0, np.nan], "run 1: work to target: expected a positive number"),
        ([512, 1024], [40.0], "2 batches but 1 work values"),
    ],
)
def test_fit_errors(batch, work, message):
    with pytest.raises(InputError, match=message):
        cv.fit_critical_batch(batch, work)


def test_t_quantile_against_scipy():
    from scipy import stats

    for dof in (3, 5, 10, 30, np.inf):
        for p in (0.75, 0.95, 0.975):
            assert cv.t_quantile(p, dof) == pytest.approx(stats.t.ppf(p, dof), rel=0.01)


# Planning --------------------------------------------------------------------------

GPUS = 2.0 ** np.arange(0, 11)
GRID_BATCHES = 2.0 ** np.arange(6, 18)


def step_time(gpus, batch, per_sample=1e-3, overhead=0.02, per_gpu=2e-4):
    """Seconds per step: compute shared by the GPUs, a fixed overhead and a cost that
    grows with the GPU count (latency of the all-reduce), so that some count is best."""
    return per_sample * batch / gpus + overhead + per_gpu * gpus


def test_plan_finds_the_closed_form_batch_at_one_gpu_count():
    n = np.array([64.0])
    fine = np.geomspace(64, 1e6, 4001)
    out = cv.plan(n, fine, step_time(n[:, None], fine[None, :]), E_MIN, B_NOISE)
    a, b = 0.02 + 2e-4 * 64, 1e-3 / 64
    assert out.global_batch == pytest.approx(cv.optimal_batch(a, b, B_NOISE), rel=0.01)
    assert out.time_to_train_s == pytest.approx(cv.minimum_time(a, b, E_MIN, B_NOISE), rel=1e-4)
    assert out.limited_by == "gpu_range"


def test_plan_says_when_the_critical_batch_stops_more_gpus_helping():
    grid = step_time(GPUS[:, None], GRID_BATCHES[None, :])
    small = cv.plan(GPUS, GRID_BATCHES, grid, E_MIN, 300.0)  # critical batch well inside
    assert small.limited_by == "critical_batch" and small.gpus < GPUS.max()
    assert small.global_batch >= 300.0
    assert "because the batch passes the critical batch" in small.reason
    costly = step_time(GPUS[:, None], GRID_BATCHES[None, :], per_gpu=2e-3)
    large = cv.plan(GPUS, GRID_BATCHES, costly, E_MIN, 1e9)  # steps halve with each doubling
    assert large.limited_by == "step_time" and "not because of convergence" in large.reason
    assert large.gpus < GPUS.max() and large.global_batch == GRID_BATCHES.max()


def test_plan_cost_and_deadline():
    grid = step_time(GPUS[:, None], GRID_BATCHES[None, :])
    fastest = cv.plan(GPUS, GRID_BATCHES, grid, E_MIN, B_NOISE)
    cheapest = cv.plan(GPUS, GRID_BATCHES, grid, E_MIN, B_NOISE, objective="cost")
    assert cheapest.cost <= fastest.cost and cheapest.time_to_train_s >= fastest.time_to_train_s
    assert np.all(cheapest.cost_grid >= cheapest.cost)
    deadline = 2.0 * fastest.time_to_train_s
    within = cv.plan(
        GPUS, GRID_BATCHES, grid, E_MIN, B_NOISE, objective="cost", deadline_s=deadline
    )
    assert within.time_to_train_s <= deadline and within.cost >= cheapest.cost
    assert within.cost == pytest.approx(cheapest.cost_grid[cheapest.time_grid_s <= deadline].min())
    late = cv.plan(
        GPUS,
        GRID_BATCHES,
        grid,
        E_MIN,
        B_NOISE,
        objective="cost",
        deadline_s=fastest.time_to_train_s / 2,
    )
    assert not late.feasible and late.limited_by == "deadline"
    assert "no configuration trains within the deadline" in late.reason
    priced = cv.plan(
        GPUS, GRID_BATCHES, grid, E_MIN, B_NOISE, objective="cost", price_per_gpu_hour=2.5
    )
    assert priced.cost == pytest.approx(2.5 * cheapest.cost)


def test_plan_with_draws_gives_intervals_and_skips_configs_that_cannot_run(rng):
    grid = step_time(GPUS[:, None], GRID_BATCHES[None, :])
    draws = grid[None] * np.exp(0.05 * rng.standard_normal((200, 1, 1)))
    b_noise = B_NOISE * np.exp(0.2 * rng.standard_normal(200))
    out = cv.plan(GPUS, GRID_BATCHES, draws, E_MIN, b_noise)
    lo, hi = out.time_interval_s
    assert lo < out.time_to_train_s < hi
    blocked = grid.copy()
    blocked[-3:, :] = np.inf  # too many GPUs for this job, say
    out = cv.plan(GPUS, GRID_BATCHES, blocked, E_MIN, B_NOISE)
    assert out.gpus <= GPUS[-4]


def test_plan_errors():
    grid = step_time(GPUS[:, None], GRID_BATCHES[None, :])
    with pytest.raises(InputError, match="objective: expected one of time, cost"):
        cv.plan(GPUS, GRID_BATCHES, grid, E_MIN, B_NOISE, objective="speed")
    with pytest.raises(InputError, match=r"step_time_s: expected shape \(11, 12\)"):
        cv.plan(GPUS, GRID_BATCHES, grid.T, E_MIN, B_NOISE)
    with pytest.raises(InputError, match="no configuration of the grid can run"):
        cv.plan(GPUS, GRID_BATCHES, np.full_like(grid, np.nan), E_MIN, B_NOISE)


# The step-time family of GPU count and batch -----------------------------------------


def test_linear_step_time_fit_recovers_parameters(rng):
    gpus = np.repeat([8.0, 16.0, 64.0, 256.0], 4)
    batch = np.repeat([256.0, 512.0, 1024.0, 2048.0], 4)
    truth = cv.linear_step_time(gpus, batch, 0.03, 2e-3)
    fit = cv.fit_linear_step_time(gpus, batch, truth)
    assert fit.overhead_s == pytest.approx(0.03, rel=1e-6)
    assert fit.sample_time_s == pytest.approx(2e-3, rel=1e-6)
    np.testing.assert_allclose(fit.model(gpus, batch), truth, rtol=1e-9)
    band = fit.predict_interval([256.0, 1024.0], [2048.0, 4096.0])
    assert band["time_s_lo"][0] < band["time_s"][0] < band["time_s_hi"][0]
    # two doublings beyond the data widen the interval by the drift prior
    width = np.log(band["time_s_hi"] / band["time_s_lo"])
    assert width[1] > width[0] + 2 * 1.6 * cv.DRIFT
    with pytest.raises(InputError, match="gpus: expected one GPU count ≥ 1 per global batch"):
        cv.fit_linear_step_time([0.0, 2.0], [64.0, 128.0], [1.0, 1.0])


def test_time_to_train_interval_joins_the_two_in_quadrature():
    work = {"work": np.array([50.0]), "work_lo": np.array([50.0 / np.e**0.3])}
    work["work_hi"] = np.array([50.0 * np.e**0.3])
    step = {"time_s": np.array([2.0]), "time_s_lo": np.array([2.0 / np.e**0.4])}
    step["time_s_hi"] = np.array([2.0 * np.e**0.4])
    band = cv.time_to_train_interval(work, step, steps_per_work=10.0)
    assert band["time_to_train_s"][0] == pytest.approx(1000.0)
    assert np.log(band["time_to_train_s_hi"][0] / 1000.0) == pytest.approx(0.5)
    assert np.log(1000.0 / band["time_to_train_s_lo"][0]) == pytest.approx(0.5)


def test_time_to_train_of_the_largest_mlperf_ssd_scale_from_the_smaller_ones():
    ttt = load_benchmark("time_to_train")
    (name, data, work), *_ = [s for s in ttt.series() if s[0] == "mlperf07_dgxa100_ssd"]
    train, test = ttt.holdout_split(data, "largest")
    _, point, lo, hi = ttt.critical_batch_linear_step(train, test, ttt._work_of(train, work, data))
    assert np.all(np.abs(point / test.time_s - 1) < 0.15)  # 512 GPUs from 8, 16 and 64
    assert np.all((lo <= test.time_s) & (test.time_s <= hi))


def test_plan_names_the_knee_when_the_largest_count_is_fastest_but_barely():
    grid = cv.linear_step_time(GPUS[:, None], GRID_BATCHES[None, :], 0.01, 1e-3)
    grid = np.where(GRID_BATCHES[None, :] >= GPUS[:, None], grid, np.inf)  # ≥ 1 per GPU
    out = cv.plan(GPUS, GRID_BATCHES, grid, E_MIN, 500.0, min_gain=0.2)
    assert out.gpus == GPUS.max() and out.knee_gpus is not None and out.knee_gpus < GPUS.max()
    assert out.limited_by == "critical_batch"
    assert f"but beyond {out.knee_gpus:g} GPUs each doubling saves less than 20%" in out.reason
    assert cv.plan(GPUS, GRID_BATCHES, grid, E_MIN, 1e12).knee_gpus is None
