"""The time-to-train family (`perfmodel.fit_time_to_train`): the `batch_linear` step
family against its closed form, recovery of known parameters, intervals and their drift,
the answers (`plan_training`), fit files and the sweep objective."""

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pytest

import perfmodel as pm
from perfmodel import _convergence as cv
from perfmodel._convergence.drift import doublings, estimate_drift

ROOT = Path(__file__).resolve().parent.parent
SSD = ROOT / "datasets" / "time_to_train" / "mlperf07_dgxa100_ssd.csv"
SSD_LOGS = ROOT / "tests" / "data" / "logs" / "mllog_ssd"
E_MIN, B_NOISE = 4.0e6, 3000.0  # samples
A, C = 0.012, 7e-4  # seconds per step, seconds per sample on one GPU


def synthetic_runs(runs_per_count=2) -> pm.TrainingRuns:
    """Noise-free runs of known parameters: work E_min(1 + B/B_noise), step a + c·B/N."""
    gpus = np.repeat([8.0, 16.0, 64.0, 256.0], runs_per_count)
    batch = np.repeat([512.0, 768.0, 2048.0, 4096.0], runs_per_count)  # 64 … 16 per GPU
    work = cv.work_to_target(batch, E_MIN, B_NOISE)
    seconds = work / batch * cv.linear_step_time(gpus, batch, A, C)
    data = pm.from_arrays(gpus, seconds, global_batch=batch, source="synthetic")
    return pm.TrainingRuns(data, work, "samples", 1.0)


@pytest.fixture(scope="module")
def exact():
    return pm.fit_time_to_train(synthetic_runs())


@pytest.fixture(scope="module")
def ssd():
    return pm.fit_time_to_train(pm.read_training_runs(SSD))


def test_batch_linear_fit_matches_the_closed_form_on_mlperf_ssd(ssd):
    data = ssd.step.data
    closed = cv.fit_linear_step_time(data.gpus, data.config["global_batch"], data.time_s)
    p = ssd.step.parameters()
    assert ssd.step.family == "batch_linear"
    assert p["serial.time"] == pytest.approx(closed.overhead_s, rel=1e-5)
    assert p["batch.sample_time"] == pytest.approx(closed.sample_time_s, rel=1e-5)


def test_fit_recovers_known_parameters(exact):
    assert exact.noise_batch == pytest.approx(B_NOISE, rel=1e-6)
    assert exact.work_min == pytest.approx(E_MIN, rel=1e-6)
    p = exact.step.parameters()
    assert p["serial.time"] == pytest.approx(A, rel=1e-5)
    assert p["batch.sample_time"] == pytest.approx(C, rel=1e-5)
    gpus, batch = np.array([32.0, 1024.0]), np.array([8192.0, 16384.0])
    out = exact.predict(gpus, batch, level=None)
    steps = cv.steps_to_target(batch, E_MIN, B_NOISE)
    expected = steps * cv.linear_step_time(gpus, batch, A, C)
    np.testing.assert_allclose(out["time_to_train_s"], expected, rtol=1e-5)
    np.testing.assert_allclose(out["steps_to_target"], steps, rtol=1e-6)
    np.testing.assert_allclose(out["gpu_hours"], gpus * expected / 3600, rtol=1e-5)


def test_epochs_need_the_dataset_size():
    runs = synthetic_runs()
    d = 117266.0
    epochs = dataclasses.replace(
        runs, work=runs.work / d, work_unit="epochs", samples_per_unit=None
    )
    with pytest.raises(pm.InputError, match="samples_per_unit"):
        pm.fit_time_to_train(epochs)
    fitted = pm.fit_time_to_train(epochs, samples_per_unit=d)
    assert fitted.noise_batch == pytest.approx(B_NOISE, rel=1e-6)
    assert fitted.work_min == pytest.approx(E_MIN / d, rel=1e-6)


def test_interval_holds_the_point_and_widens_beyond_the_runs(ssd):
    gpus = np.array([64.0, 512.0, 4096.0])
    batch = np.array([1536.0, 2048.0, 16384.0])
    band = ssd.predict(gpus, batch, level=0.9)
    t, lo, hi = band["time_to_train_s"], band["time_to_train_s_lo"], band["time_to_train_s_hi"]
    assert np.all((lo < t) & (t < hi))
    width = np.log(hi / lo)
    assert width[2] > width[1] > 0  # 3 doublings beyond 512 GPUs
    narrower = ssd.predict(gpus, batch, level=0.5)
    assert np.all(np.log(narrower["time_to_train_s_hi"] / narrower["time_to_train_s_lo"]) < width)
    # the drift term: at 4096 GPUs and 3 doublings it is at least t·τ·3 on each side
    spread = cv.t_quantile(0.95, ssd.drift.dof) * ssd.drift.tau * 3.0
    assert np.log(hi[2] / t[2]) >= spread - 1e-12


def test_doublings_outside_the_runs():
    d = doublings([8, 64, 512, 4096], [1024, 1024, 4096, 4096], (8, 512), (512, 1024))
    np.testing.assert_allclose(d, [0.0, 0.0, 2.0, np.hypot(3.0, 2.0)])
    assert doublings(2, 1024, (8, 512), (512, 1024)) == pytest.approx(2.0)


def test_drift_is_the_prior_without_origins_and_pools_the_rolling_errors():
    runs = synthetic_runs()
    two = dataclasses.replace(
        runs,
        data=dataclasses.replace(
            runs.data,
            gpus=runs.data.gpus[:4],
            time_s=runs.data.time_s[:4],
            config={"global_batch": runs.data.config["global_batch"][:4]},
            lines=runs.data.lines[:4],
            files=None if runs.data.files is None else runs.data.files[:4],
        ),
        work=runs.work[:4],
    )
    alone = estimate_drift(two, 1.0, 0.0, prior=0.06, prior_dof=2.0)
    assert alone.origins == 0 and alone.tau == pytest.approx(0.06) and alone.dof == 2.0
    # Noise-free runs of the model itself: every origin is exact, so τ shrinks from the
    # prior by the information of the origins: τ² = ν₀τ₀² / (ν₀ + Σ d_j²), two origins:
    # 16 → 64 GPUs with batch 768 → 2048, and 64 → 256 with 2048 → 4096.
    exact = estimate_drift(runs, 1.0, 0.0, prior=0.06, prior_dof=2.0)
    assert exact.origins == 2
    info = (2.0**2 + np.log2(2048 / 768) ** 2) + (2.0**2 + 1.0**2)
    assert exact.tau == pytest.approx(math.sqrt(2 * 0.06**2 / (2 + info)), rel=1e-6)


def test_plan_training_finds_the_closed_form_batch_at_one_gpu_count(exact):
    batches = np.geomspace(64, 2**17, 400)
    found = pm.plan_training(exact, gpus=[64], batches=batches, level=None)
    b_star = cv.optimal_batch(A, C / 64, B_NOISE)
    assert found.global_batch == pytest.approx(b_star, rel=0.02)
    assert found.time_to_train_s == pytest.approx(
        cv.minimum_time(A, C / 64, E_MIN, B_NOISE), rel=1e-4
    )


def test_plan_training_says_why_more_gpus_stop_helping(exact):
    found = pm.plan_training(exact, max_gpus=4096, min_gain=0.2)
    assert found.gpus == 4096 and found.knee_gpus is not None
    assert found.limited_by == "critical_batch"
    assert "the batch passes the critical batch" in found.reason
    runs = exact.runs.data
    largest = max(runs.gpus.max(), exact.step.data.gpus.max())
    assert found.extrapolated.startswith(
        f"extrapolated: {4096 / largest:.3g}× the {largest:g} GPUs"
    )
    inside = pm.plan_training(exact, gpus=[largest], batches=[runs.config["global_batch"][0]])
    assert inside.extrapolated is None
    fewest = min(runs.gpus.min(), exact.step.data.gpus.min())
    if fewest > 1:  # fewer GPUs than measured is an extrapolation too
        below = pm.plan_training(exact, gpus=[1], batches=[runs.config["global_batch"][0]])
        assert below.extrapolated.startswith(f"extrapolated: 1 GPU, below the {fewest:g}")
    lo, hi = found.time_interval_s
    assert lo < found.time_to_train_s < hi and found.level == 0.9
    cost = pm.plan_training(exact, objective="cost", deadline_s=2 * found.time_to_train_s)
    assert cost.time_to_train_s <= 2 * found.time_to_train_s and cost.gpus < found.gpus
    late = pm.plan_training(exact, objective="cost", deadline_s=1.0, level=None)
    assert not late.feasible and late.limited_by == "deadline"


@pytest.mark.parametrize(
    "options, message",
    [
        ({"objective": "speed"}, "objective: expected one of time, cost"),
        ({"deadline_s": 10.0}, "a deadline goes with the cost objective"),
        ({"objective": "cost", "deadline_s": -1.0}, "expected seconds > 0"),
        ({"price_per_gpu_hour": 0.0}, "expected a positive number"),
        ({"gpus": [0, 8]}, "gpus: expected numbers ≥ 1"),
        ({"max_gpus": 8, "multiple_of": 16}, "multiple_of 16 is more than max_gpus 8"),
        ({"gpus": [64], "batches": [8]}, "no global batch of the grid gives 1 sample"),
    ],
)
def test_plan_training_errors(exact, options, message):
    with pytest.raises(pm.InputError, match=message):
        pm.plan_training(exact, level=None, **options)


def test_fit_file_round_trip(ssd, tmp_path):
    path = tmp_path / "ssd.json"
    pm.save_time_to_train(ssd, path)
    back = pm.load_time_to_train(path)
    gpus, batch = np.array([512.0, 2048.0]), np.array([2048.0, 8192.0])
    a, b = ssd.predict(gpus, batch), back.predict(gpus, batch)
    for key in a:
        np.testing.assert_allclose(a[key], b[key], rtol=1e-9, err_msg=key)
    assert pm.load_fit(path).family == "batch_linear"  # still a plain step fit file


def _edited(path, change):
    document = json.loads(path.read_text())
    change(document["time_to_train"])
    path.write_text(json.dumps(document))


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda s: s.update(version=2), "time_to_train.version is 2"),
        (lambda s: s.update(colour="red"), "time_to_train: unknown key 'colour'"),
        (lambda s: s.pop("drift"), "time_to_train: missing key 'drift'"),
        (lambda s: s.update(work_unit="tokens"), "work_unit: expected one of samples, epochs"),
        (
            lambda s: s["parameters"]["noise_batch"].update(value=99.0),
            "parameters.noise_batch: 99 is not what its runs give",
        ),
        (lambda s: s["runs"]["work"].pop(), "runs.work: 19 values for 20 runs"),
        (lambda s: s["runs"]["work"].__setitem__(3, -1.0), r"runs.work\[3\]: expected a positive"),
        (lambda s: s["drift"].update(tau="big"), "drift.tau: expected a number"),
        # Numbers past float64 and non-finite ones (found by fuzzing: an OverflowError
        # traceback, a noise floor whose square overflowed, a NaN prior read silently).
        (lambda s: s.update(samples_per_unit=10**400), "samples_per_unit: expected a finite"),
        (lambda s: s["runs"]["work"].__setitem__(0, 10**400), r"runs.work\[0\]: expected a pos"),
        (lambda s: s.update(noise_floor=1e308), "noise_floor: expected a relative scatter ≤ 1"),
        (lambda s: s.update(noise=math.nan), "noise: expected a finite number, got nan"),
        (lambda s: s["drift"].update(prior=math.nan), "drift.prior: expected a finite number"),
        (lambda s: s["drift"].update(prior_dof=-1.0), "drift: expected 0 ≤ tau, prior ≤ 10"),
    ],
)
def test_fit_file_errors_name_the_key(ssd, tmp_path, change, message):
    path = tmp_path / "ssd.json"
    pm.save_time_to_train(ssd, path)
    _edited(path, change)
    with pytest.raises(pm.InputError, match=message):
        pm.load_time_to_train(path)


def test_a_step_fit_file_is_not_a_time_to_train_fit(ssd, tmp_path):
    path = tmp_path / "step.json"
    pm.save_fit(ssd.step, path)
    with pytest.raises(pm.InputError, match="no 'time_to_train' section"):
        pm.load_time_to_train(path)
    with pytest.raises(pm.InputError, match="directory .* does not exist"):
        pm.save_time_to_train(ssd, tmp_path / "missing" / "x.json")


@pytest.mark.slow  # 3 s: the default run stays under 4 minutes
def test_sweep_ranks_by_time_to_train_as_the_plan_does(exact):
    gpus, batches = [16, 64, 256, 1024], [512, 2048, 8192, 32768]
    axes = {"gpus": gpus, "global_batch": batches}
    pair = (exact.samples_min, exact.noise_batch)
    found = pm.sweep(
        exact.step,
        axes,
        objective="time_to_train",
        samples_to_target=pair,
        precision="float64",
        progress=False,
    )
    plan = pm.plan_training(exact, gpus=gpus, batches=batches, level=None, min_per_gpu=0)
    best = found.top.iloc[0]
    assert (best["gpus"], best["global_batch"]) == (plan.gpus, plan.global_batch)
    assert best["time_to_train_s"] == pytest.approx(plan.time_to_train_s, rel=1e-9)
    per = found.per_axis["gpus"].set_index("gpus")["time_to_train_s"]
    np.testing.assert_allclose(per.to_numpy(), plan.time_grid_s.min(axis=1), rtol=1e-9)
    cost = pm.sweep(exact.step, axes, objective="cost_to_train", samples_to_target=pair,
                    precision="float64", progress=False)  # fmt: skip
    assert cost.top.iloc[0]["cost_to_train"] == pytest.approx(plan.cost_grid.min(), rel=1e-9)


def test_sweep_time_to_train_errors(exact):
    axes = {"gpus": [8, 16], "global_batch": [512, 1024]}
    with pytest.raises(pm.InputError, match="needs \\(samples_min, noise_batch\\)"):
        pm.sweep(exact.step, axes, objective="time_to_train", progress=False)
    with pytest.raises(pm.InputError, match="only with objective time_to_train"):
        pm.sweep(exact.step, axes, samples_to_target=(1e6, 1e3), progress=False)
    with pytest.raises(pm.InputError, match="global_batch: the time_to_train objective"):
        pm.sweep(pm.amdahl(), {"gpus": [8]}, objective="time_to_train",
                 samples_to_target=(1e6, 1e3), progress=False)  # fmt: skip


def test_time_to_train_at_512_gpus_from_the_mlperf_ssd_runs_at_8_16_and_64():
    runs = pm.read_training_runs(SSD)
    keep = runs.data.gpus < 512
    data = runs.data
    subset = pm.from_arrays(
        data.gpus[keep], data.time_s[keep], global_batch=data.config["global_batch"][keep]
    )
    train = pm.fit_time_to_train(subset, runs.work[keep])  # the runs up to 64 GPUs
    test = ~keep
    band = train.predict(runs.data.gpus[test], runs.data.config["global_batch"][test])
    measured = runs.data.time_s[test]
    assert np.all(np.abs(band["time_to_train_s"] / measured - 1) < 0.15)
    assert np.all(
        (band["time_to_train_s_lo"] <= measured) & (measured <= band["time_to_train_s_hi"])
    )
    assert train.drift.origins == 1  # 8, 16 → 64
