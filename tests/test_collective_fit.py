import json
from pathlib import Path
import re

import jax
import jax.numpy as jnp
from jax.test_util import check_grads
import numpy as np
import pytest

import perfmodel as pm
from perfmodel._cli import main
from perfmodel._collective.fit import collective_objective, jacobian_log_params
from perfmodel._fitting import fit_at

DATA = Path(__file__).parent / "data" / "nccl"
SIZES = 4.0 ** np.arange(5, 16)  # 1 KiB to 1 GiB
BUS = {"all_reduce": (2.0, 1.0), "all_gather": (1.0, 1.0), "broadcast": (1.0, 0.0)}


def nccl_log(runs) -> str:
    """nccl-tests text output for `runs` of (op, ranks, sizes, seconds of shape (sizes, 2))."""
    lines = []
    for op, n, sizes, seconds in runs:
        lines += [f"# {op}_perf -b 1K -e 1G -f 4 -g {n}", "# nThread 1 nGpus 1", "# Using devices"]
        lines += [f"#  Rank {i:2d} Group  0 Pid 1 on node0 device {i} [0x00] GPU" for i in range(n)]
        lines.append(
            "#       size    count   type  redop  root    time  algbw  busbw #wrong"
            "    time  algbw  busbw #wrong"
        )
        a, b = BUS[op]
        for size, pair in zip(sizes, seconds):
            cells = []
            for t in pair:
                alg = size / t / 1e9
                cells += [f"{t * 1e6:.3f}", f"{alg:.4f}", f"{alg * a * (n - b) / n:.4f}", "0"]
            lines.append(f"{int(size):12d} {int(size) // 4:10d} float sum -1 " + " ".join(cells))
    return "\n".join(lines) + "\n"


def write_csv(path, header, gpus, times, **config):
    """A benchmark CSV with `header` columns: gpus, the `config` values, then time_s."""
    cells = "".join(f",{v}" for v in config.values())
    path.write_text(
        header + "\n" + "".join(f"{int(n)}{cells},{float(t)!r}\n" for n, t in zip(gpus, times))
    )
    return path


def noisy(t, rng, noise=0.02):
    return np.asarray(t)[:, None] * np.exp(rng.normal(0.0, noise, (len(t), 2)))


# Fitting collectives ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def two_collectives(tmp_path_factory):
    rng = np.random.default_rng(0)
    truth = {("all_reduce", 8): (5e-6, 1.2e11), ("all_gather", 4): (3e-6, 8e10)}
    runs = [
        (op, n, SIZES, noisy(pm.collective_time(op, "ring", n, SIZES, a, b), rng))
        for (op, n), (a, b) in truth.items()
    ]
    path = tmp_path_factory.mktemp("coll") / "two.log"
    path.write_text(nccl_log(runs))
    return truth, path, pm.fit_collective(path)


def test_recovers_alpha_beta_per_collective(two_collectives):
    truth, _, result = two_collectives
    assert result.converged, result.message
    assert not result.warnings
    assert [(g.collective, g.n_ranks) for g in result.groups] == sorted(truth)
    for (op, n), (alpha, beta) in truth.items():
        g = result.group(op, n)
        assert g.latency_s == pytest.approx(alpha, rel=0.1)
        assert g.bandwidth == pytest.approx(beta, rel=0.03)
        assert g.busbw == pytest.approx(g.bandwidth)  # nominal factor: β is the busbw
        assert g.nominal_factor == pytest.approx(pm.bus_bandwidth_factor(op, n))
        assert g.factor == g.nominal_factor and g.efficiency == 1.0
        assert g.r2 > 0.99 and g.mape < 3.0
        assert 0 < g.log_stderr["bandwidth"] < 0.05
        # In-place and out-of-place rows are both kept.
        assert len(g.rows["time_s"]) == 2 * SIZES.size
        assert set(g.rows["placement"]) == {"in_place", "out_of_place"}
        # The fitted curve is the α-β model of collective_time, and busbw follows nccl-tests.
        with jax.enable_x64(True):
            want = pm.collective_time(op, "ring", n, SIZES, g.latency_s, g.bandwidth)
        np.testing.assert_allclose(g.predict(SIZES), want, rtol=1e-10)
        fit_busbw = g.rows["busbw_fit_bytes_per_s"]
        np.testing.assert_allclose(
            fit_busbw, g.rows["message_bytes"] / g.rows["time_s_fit"] * g.nominal_factor
        )
        printed = g.rows["busbw_bytes_per_s"][-4:]
        np.testing.assert_allclose(fit_busbw[-4:], printed, rtol=0.08)


@pytest.mark.slow  # 4 s: the default run stays under 4 minutes
def test_fitted_factor_recovers_a_tree_where_the_nominal_one_is_wrong(tmp_path):
    # A tree all-reduce moves 2·S per rank at every n, not the ring's 2(n−1)/n·S.
    rng = np.random.default_rng(1)
    alpha, link = 4e-6, 5e10
    runs = [
        (
            "all_reduce",
            n,
            SIZES,
            noisy(pm.collective_time("all_reduce", "tree", n, SIZES, alpha, link), rng),
        )
        for n in (4, 16)
    ]
    path = tmp_path / "tree.log"
    path.write_text(nccl_log(runs))
    with pytest.raises(pm.InputError, match="needs the link bandwidth"):
        pm.fit_collective(path, factor="fitted")
    result = pm.fit_collective(path, factor="fitted", link_bandwidth=link)
    assert result.converged, result.message
    for n in (4, 16):
        g = result.group("all_reduce", n)
        assert g.factor_fitted and g.bandwidth == pytest.approx(link)
        assert g.factor == pytest.approx(2.0, rel=0.03)
        assert g.nominal_factor == pytest.approx(2 * (n - 1) / n)
        assert g.efficiency == pytest.approx(g.nominal_factor / 2.0, rel=0.03)
        assert g.base_latency_s == pytest.approx(2 * np.log2(n) * alpha, rel=0.1)
        # Read in nccl-tests' convention, the same times give a bus bandwidth that is not
        # the link's: the nominal factor is wrong for a tree.
        assert g.busbw == pytest.approx(link * g.nominal_factor / 2.0, rel=0.03)


@pytest.mark.parametrize(
    "name, busbw_gb",
    [
        ("nccl_tests_44_2x2080ti", 20.3),
        ("nccl_1244_h20_16gpu_nvls", 299.0),
        ("nccl_tests_78_all_reduce_256gpu", 72.3),
    ],
)
def test_real_logs(name, busbw_gb):
    info = {i.name: i for i in pm.list_nccl_logs()}[name]
    frame = pm.load_nccl_log(name)
    result = pm.fit_collective(frame)
    g = result.group("all_reduce")
    assert result.converged and g.n_ranks == info.n_ranks
    assert len(g.rows["time_s"]) == 2 * info.rows
    assert result.sources == (f"{name}.log",)
    # The asymptotic bus bandwidth lies near the largest printed ones.
    printed = frame["busbw_bytes_per_s"].to_numpy()
    assert 0.85 * printed.max() < g.busbw < 1.1 * printed.max()
    assert g.busbw / 1e9 == pytest.approx(busbw_gb, rel=0.02)
    assert g.r2 > 0.98
    assert not any("off the fit" in w for w in result.warnings)  # no row named an outlier
    if name == "nccl_tests_44_2x2080ti":
        # This nccl-tests version prints both ranks' bytes as the size: algbw = size/2/t.
        assert any("0.5 × the size column" in note for note in result.notes)
        np.testing.assert_allclose(g.rows["message_bytes"], frame["message_bytes"] / 2)


SHIPPED = Path(__file__).resolve().parent.parent / "datasets" / "nccl"


def with_outlier(tmp_path) -> tuple[Path, int]:
    """The shipped 2×2080 Ti log with the out-of-place time of its 1 MiB row 100× too
    large, and that row's line number."""
    lines = (SHIPPED / "nccl_tests_44_2x2080ti.log").read_text().splitlines(keepends=True)
    number = next(i for i, line in enumerate(lines, 1) if line.split()[:1] == ["1048576"])
    cells = lines[number - 1].split()
    cells[3] = f"{float(cells[3]) * 100:.1f}"  # the out-of-place time (us)
    for k in (4, 5):  # its algbw and busbw, as nccl-tests would print them for that time
        cells[k] = f"{float(cells[k]) / 100:.2f}"
    lines[number - 1] = "  ".join(cells) + "\n"
    path = tmp_path / "outlier.log"
    path.write_text("".join(lines))
    return path, number


def test_an_outlier_converges_and_is_named_with_its_line(tmp_path, capsys):
    # It ended "not converged: gradient norm inf" with exit status 0: L-BFGS, started at
    # the minimum, ended a rounding error above it and its point was thrown away.
    path, line = with_outlier(tmp_path)
    out = tmp_path / "fit.json"
    assert main(["fit-collective", str(path), "-o", str(out)]) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines()[0].endswith(": converged")
    assert json.loads(out.read_text())["converged"] is True
    warning = [w for w in captured.err.splitlines() if "off the fit" in w]
    assert len(warning) == 1, captured.err
    assert f"outlier.log line {line}, out-of-place time 4738 us" in warning[0]
    assert "1 of 26 measurements is over 3× off the fit" in warning[0]
    assert "remove it from the log" in warning[0] and "--loss huber" in warning[0]
    assert "did not converge" not in captured.err
    # The huber loss barely moves for the outlier; the row is still named.
    huber = pm.fit_collective(path, loss="huber")
    assert huber.group("all_reduce").busbw / 1e9 == pytest.approx(20.3, rel=0.05)
    assert any(f"line {line}" in w and "limits its pull" in w for w in huber.warnings)


@pytest.mark.slow  # compiles a fit with a step limit of its own: seconds
def test_a_fit_that_stops_short_says_so_on_stderr(tmp_path, capsys, monkeypatch):
    import perfmodel._cli.collective as command

    def short(*args, **kwargs):  # one Adam and one L-BFGS step cannot reach the minimum
        return pm.fit_collective(*args, **kwargs, adam_steps=1, lbfgs_steps=1)

    monkeypatch.setattr(command, "fit_collective", short)
    log = SHIPPED / "nccl_tests_44_2x2080ti.log"
    assert main(["fit-collective", str(log), "--starts", "1"]) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines()[0].endswith(": NOT converged")
    assert "warning: the fit did not converge (gradient norm" in captured.err
    assert "More --starts or another --seed may help" in captured.err


def test_objective_gradient_jit_and_closed_form_jacobian():
    rng = np.random.default_rng(2)
    group = jnp.array([0, 0, 1, 1, 1])
    steps = jnp.array([14.0, 14.0, 3.0, 3.0, 3.0])
    size = jnp.array([1e3, 1e8, 1e4, 1e6, 1e9])
    time_s = jnp.asarray(1e-5 + size / 1e10 * rng.uniform(0.8, 1.2, 5))
    params = {
        "log_latency": jnp.log(jnp.array([1e-6, 2e-6])),
        "log_bandwidth": jnp.log(jnp.array([5e10, 1e11])),
    }
    fixed = {"log_factor": jnp.log(jnp.array([1.75, 0.75]))}
    args = (fixed, group, steps, size, time_s, time_s, jnp.ones(5), "log")
    value = collective_objective(params, *args)
    objective = jax.jit(lambda p: collective_objective(p, *args))
    assert float(objective(params)) == pytest.approx(float(value), rel=1e-12)
    check_grads(objective, (params,), order=1, modes=["rev"])
    # Residual Jacobian in closed form, against autodiff, for the second group.
    latency, per_byte = 2e-6, 0.75 / 1e11
    s = np.array([1e4, 1e6, 1e9])

    def residuals(theta):
        return jnp.log(3.0 * jnp.exp(theta[0]) + 0.75 * s / jnp.exp(theta[1]))

    predicted = 3.0 * latency + per_byte * s
    closed = jacobian_log_params(
        3.0, s, latency, per_byte, ["latency", "bandwidth"], "log", predicted
    )
    auto = jax.jacfwd(residuals)(jnp.log(jnp.array([latency, 1e11])))
    np.testing.assert_allclose(closed, auto, rtol=1e-10)


# Saving, loading, fixing ------------------------------------------------------------------


def _group_edit(document: dict, **changes) -> dict:
    """`{"groups": ...}` with the first group's fields changed."""
    return {"groups": [{**document["groups"][0], **changes}, *document["groups"][1:]]}


def test_save_load_round_trip_and_bad_files(two_collectives, tmp_path):
    _, _, result = two_collectives
    path = tmp_path / "coll.json"
    pm.save_collective_fit(result, path)
    loaded = pm.load_collective_fit(path)
    for a, b in zip(result.groups, loaded.groups):
        assert (a.collective, a.n_ranks, a.latency_s, a.bandwidth, a.factor) == (
            b.collective,
            b.n_ranks,
            b.latency_s,
            b.bandwidth,
            b.factor,
        )
        np.testing.assert_array_equal(a.rows["time_s_fit"], b.rows["time_s_fit"])
    document = json.loads(path.read_text())
    for change, match in [
        ({"format": "perfmodel.fit"}, "it is a training fit"),
        ({"format": "other"}, "not a perfmodel collective fit"),
        ({"schema_version": 99}, "schema version 99"),
        ({"groups": [{"collective": "all_reduce"}]}, r"groups\[0\]\.n_ranks: missing"),
        # Each edit the fuzzing round made, refused naming its field (n_ranks 0 ended in
        # a LinAlgError; a latency of 1e300 s was answered "speedup 0–inf×").
        (_group_edit(document, n_ranks=0), r"groups\[0\]\.n_ranks: expected a whole"),
        (_group_edit(document, latency_s=1e300), r"groups\[0\]\.latency_s: expected a"),
        (_group_edit(document, bandwidth_bytes_per_s="5e9"), "bandwidth_bytes_per_s: expected"),
        (_group_edit(document, colective="x"), r"groups\[0\]\.colective: expected no such"),
        ({"link_bandwidth": -1}, "link_bandwidth: expected a number from 1000"),
    ]:
        bad = tmp_path / "bad.json"
        bad.write_text(json.dumps({**document, **change}))
        with pytest.raises(pm.InputError, match=match):
            pm.load_collective_fit(bad)
    (tmp_path / "text.json").write_text("not json")
    with pytest.raises(pm.InputError, match="not a JSON collective fit"):
        pm.load_collective_fit(tmp_path / "text.json")


def test_link_parameters_reproduce_the_measured_curves(two_collectives):
    _, _, result = two_collectives
    g = result.group("all_reduce", 8)
    flat = pm.data_parallel()
    assert pm.link_parameters(result, flat) == {
        "allreduce.latency": pytest.approx(g.latency_s, rel=1e-12),
        "allreduce.bandwidth": pytest.approx(g.bandwidth, rel=1e-12),
    }
    with jax.enable_x64(True):
        config = pm.Config(gpus=8.0, message_bytes=SIZES)
        # A tree term takes the values that give the same times at 8 ranks.
        tree = pm.data_parallel(algorithm="tree")
        tree = tree.with_parameters(pm.link_parameters(result, tree))
        np.testing.assert_allclose(tree.terms[2](config), g.predict(SIZES), rtol=1e-10)
        # A hierarchical term: intra from a run inside a node only...
        hier = pm.data_parallel(hierarchical=True)
        links = pm.link_parameters(result, hier, gpus_per_node=8)
        assert set(links) == {"allreduce.latency_intra", "allreduce.bandwidth_intra"}
        # ... and inter from a run across nodes as well.
    with pytest.raises(pm.InputError, match="determines none of allreduce"):
        pm.link_parameters(result, hier, gpus_per_node=4)
    with pytest.raises(pm.InputError, match="no collective term"):
        pm.link_parameters(result, pm.amdahl())
    with pytest.raises(pm.InputError, match="no broadcast measurements"):
        pm.link_parameters(result, pm.ScalingModel(terms=(pm.Collective(op="broadcast"),)))


def test_link_parameters_of_a_hierarchical_all_reduce():
    truth = {
        "latency_intra": 3e-6,
        "bandwidth_intra": 1.5e11,
        "latency_inter": 2e-5,
        "bandwidth_inter": 2e10,
    }
    term = pm.HierarchicalAllReduce(**truth)
    rng = np.random.default_rng(3)
    runs = []
    with jax.enable_x64(True):
        for n in (8, 32):
            t = term(pm.Config(gpus=float(n), gpus_per_node=8.0, message_bytes=SIZES))
            runs.append(("all_reduce", n, SIZES, noisy(t, rng, 0.0005)))
    result = pm.fit_collective(nccl_log(runs))
    links = pm.link_parameters(result, pm.data_parallel(hierarchical=True), gpus_per_node=8)
    for name, value in truth.items():
        assert links[f"allreduce.{name}"] == pytest.approx(value, rel=0.02), name


# Joint fits --------------------------------------------------------------------------------

HIER = {
    "serial.time": 0.02,
    "compute.time": 1.0,
    "allreduce.latency_intra": 2e-5,
    "allreduce.bandwidth_intra": 2e10,
    "allreduce.latency_inter": 1e-4,
    "allreduce.bandwidth_inter": 5e9,
}


@pytest.fixture(scope="module")
def joint_inputs(tmp_path_factory):
    """The model, step-time data, their CSV and an nccl-tests log (no fit: the refusals'
    tests need only these, and the joint fit takes 10 s)."""
    folder = tmp_path_factory.mktemp("joint")
    rng = np.random.default_rng(4)
    model = pm.data_parallel(hierarchical=True).with_parameters(HIER)
    gpus = np.repeat([1.0, 2, 4, 8, 16, 32, 64, 128], 3)
    with jax.enable_x64(True):
        clean = np.asarray(model(pm.Config(gpus=gpus, gpus_per_node=8.0, message_bytes=1e9)))
        t = pm.collective_time("all_reduce", "ring", 8.0, SIZES, 2e-5, 2e10)
    times = clean * np.exp(rng.normal(0.0, 0.003, gpus.shape))
    header = "gpus,gpus_per_node,message_bytes,time_s"
    csv = write_csv(folder / "bench.csv", header, gpus, times, per_node=8, size=1000000000)
    log = folder / "intra.log"
    log.write_text(nccl_log([("all_reduce", 8, SIZES, noisy(t, rng))]))
    return model, pm.load_benchmarks(csv), csv, log


@pytest.fixture(scope="module")
def joint_case(joint_inputs):
    model, data, csv, log = joint_inputs
    return model, data, csv, log, pm.fit_joint(model, data, log)


@pytest.mark.slow  # a joint fit or a subprocess: seconds each, run with -m slow
def test_joint_fit_determines_what_step_times_alone_cannot(joint_case):
    model, data, _, _, joint = joint_case
    # From step times alone the intra-node link trades off exactly against serial and
    # compute: the Laplace covariance at the true parameters is infinite along it.
    sd = fit_at(model, data).standard_errors()
    assert not np.isfinite(sd["allreduce.bandwidth_intra"])
    # With the nccl-tests measurements in the same loss, everything is determined.
    result = joint.fit
    assert result.converged, result.message
    assert not result.warnings
    errors = result.standard_errors()
    assert all(np.isfinite(s) and s < 0.5 for s in errors.values())
    assert errors["allreduce.bandwidth_intra"] < 0.05
    for name, value in HIER.items():
        tolerance = 0.25 if name == "allreduce.latency_inter" else 0.1
        assert result.parameters()[name] == pytest.approx(value, rel=tolerance), name
    assert result.parameters()["allreduce.bandwidth_intra"] == pytest.approx(2e10, rel=0.03)
    assert result.mape < 1.0
    (group,) = joint.groups
    assert group["collective"] == "all_reduce" and group["n_ranks"] == 8
    assert group["r2"] > 0.99 and group["mape_percent"] < 3.0
    assert joint.term == "allreduce" and joint.gpus_per_node == 8.0
    # The collective predictions are the model's own term at the measured configurations.
    with jax.enable_x64(True):
        term = result.model.terms[2]
        config = pm.Config(gpus=8.0, gpus_per_node=8.0, message_bytes=joint.rows["message_bytes"])
        np.testing.assert_allclose(joint.rows["time_s_fit"], term(config), rtol=1e-12)
    assert result.predict([8, 256])["time_s"].shape == (2,)


@pytest.mark.slow  # a joint fit or a subprocess: seconds each, run with -m slow
def test_joint_fit_from_the_command_line(joint_case, tmp_path, capsys):
    _, _, csv, log, joint = joint_case
    out = tmp_path / "joint.json"
    status = main(["fit", str(csv), "--with-collective", str(log), "-o", str(out), "--json"])
    assert status == 0
    document = json.loads(capsys.readouterr().out)
    assert document["joint"]["groups"][0]["n_ranks"] == 8
    for name, value in joint.fit.parameters().items():
        assert document["parameters"][name]["value"] == pytest.approx(value, rel=1e-6)
    loaded = pm.load_fit(out)
    assert loaded.parameters() == pytest.approx(joint.fit.parameters(), rel=1e-9)


@pytest.mark.slow  # a joint fit or a subprocess: seconds each, run with -m slow
def test_fixing_from_a_collective_fit_equals_fix_by_hand(tmp_path, capsys):
    rng = np.random.default_rng(5)
    truth = {
        "serial.time": 0.05,
        "compute.time": 1.0,
        "allreduce.latency": 1e-5,
        "allreduce.bandwidth": 1e10,
    }
    model = pm.data_parallel().with_parameters(truth)
    gpus = np.array([1.0, 2, 4, 8, 16, 32])
    with jax.enable_x64(True):
        times = np.asarray(model(pm.Config(gpus=gpus, message_bytes=5e8)))
        t = pm.collective_time("all_reduce", "ring", 16.0, SIZES, 1e-5, 1e10)
    csv = write_csv(
        tmp_path / "bench.csv", "gpus,message_bytes,time_s", gpus, times, size=500000000
    )
    log = tmp_path / "ring.log"
    log.write_text(nccl_log([("all_reduce", 16, SIZES, noisy(t, rng))]))
    coll = tmp_path / "coll.json"
    assert main(["fit-collective", str(log), "-o", str(coll)]) == 0
    links = pm.link_parameters(pm.load_collective_fit(coll), model)
    fixes = [f"--fix={k}={v!r}" for k, v in links.items()]
    capsys.readouterr()
    assert main(["fit", str(csv), "--collective-fit", str(coll), "--json"]) == 0
    from_file = json.loads(capsys.readouterr().out)
    assert main(["fit", str(csv), "--model", "data_parallel", *fixes, "--json"]) == 0
    by_hand = json.loads(capsys.readouterr().out)
    assert from_file["collective_fit"]["fixed"] == pytest.approx(links, rel=1e-12)
    for name, parameter in by_hand["parameters"].items():
        assert from_file["parameters"][name]["value"] == pytest.approx(parameter["value"], rel=1e-9)
        assert from_file["parameters"][name]["fixed"] == parameter["fixed"]
    assert from_file["parameters"]["serial.time"]["value"] == pytest.approx(0.05, rel=0.1)


# Bad input ----------------------------------------------------------------------------------


def test_bad_logs_and_options(two_collectives, tmp_path):
    _, path, _ = two_collectives
    with pytest.raises(pm.InputError, match="malformed_bad_number.log line 6: .*'11O8.0'"):
        pm.fit_collective(DATA / "malformed_bad_number.log", collective="all_reduce", n_ranks=16)
    with pytest.raises(
        pm.InputError, match="truncated_row.log line 10: expected 11 to 13 fields.*got 6"
    ):
        pm.fit_collective(
            DATA / "malformed_truncated_row.log", collective="all_reduce", n_ranks=256
        )
    with pytest.raises(
        pm.InputError, match="no rows for collective 'broadcast'; it has all_gather, all_reduce"
    ):
        pm.fit_collective(path, collective="broadcast")
    with pytest.raises(pm.InputError, match="list 8 ranks but n_ranks=4"):
        pm.fit_collective(path, n_ranks=4)
    with pytest.raises(pm.InputError, match="no rows with n_ranks=2; it has 16"):
        pm.fit_collective(pm.load_nccl_log("nccl_1244_h20_16gpu_nvls"), n_ranks=2)
    one = nccl_log([("all_reduce", 1, SIZES[:3], np.full((3, 2), 1e-5))])
    with pytest.raises(pm.InputError, match="n_ranks=1: one rank moves no data"):
        pm.fit_collective(one)
    with pytest.raises(pm.InputError, match="unknown loss 'l1'"):
        pm.fit_collective(path, loss="l1")
    with pytest.raises(pm.InputError, match="factor must be one of nominal, fitted"):
        pm.fit_collective(path, factor="tree")
    with pytest.raises(pm.InputError, match="applies to a fitted factor only"):
        pm.fit_collective(path, link_bandwidth=1e10)
    with pytest.raises(pm.InputError, match="no shipped nccl-tests log 'nope'"):
        pm.load_nccl_log("nope")


def test_bad_joint_inputs(joint_inputs, two_collectives):
    model, data, _, log = joint_inputs
    _, mixed, _ = two_collectives
    plain = pm.from_arrays(data.gpus, data.time_s, gpus_per_node=data.config["gpus_per_node"])
    with pytest.raises(pm.InputError, match="needs a message_bytes column"):
        pm.fit_joint(model, plain, log)
    with pytest.raises(pm.InputError, match="model 'amdahl' has no collective term"):
        pm.fit_joint("amdahl", data, log)
    with pytest.raises(pm.InputError, match="its measurements cannot be all_gather"):
        pm.fit_joint(model, data, mixed, collective="all_gather")
    with pytest.raises(pm.InputError, match="weight must be positive"):
        pm.fit_joint(model, data, log, weight=0.0)
    with pytest.raises(pm.InputError, match="no parameter 'allreduce.bandwidth'"):
        pm.fit_joint(model, data, log, fix={"allreduce.bandwidth": 1e10})


BAD, TRUNC = "{bad}", "{trunc}"
ALL_REDUCE = ["--collective", "all_reduce"]


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["fit-collective", BAD],
            "bad_number.log line 5: cannot tell the collective.*--collective",
        ),
        (["fit-collective", BAD, *ALL_REDUCE, "--ranks", "16"], "line 6: expected a finite number"),
        (
            ["fit-collective", TRUNC, *ALL_REDUCE],
            "line 8: cannot tell the number of ranks.*--ranks N",
        ),
        (["fit-collective"], "give nccl-tests logs"),
        (["fit-collective", "{log}", "--factor", "fitted"], "needs the link bandwidth"),
        (["fit", "{csv}", "--with-collective", "{log}", "--model", "usl"], "an all-reduce term"),
        (
            ["fit", "{csv}", "--with-collective", "{log}", "--collective-fit", "{csv}"],
            "either --with-collective or --collective-fit",
        ),
        (["fit", "{csv}", "--collective-fit", "{csv}"], "not a JSON collective fit"),
        (
            ["fit", "{csv}", "--with-collective", BAD, "--collective-ranks", "16"],
            "line 6: expected a finite number",
        ),
    ],
)
def test_cli_errors_are_one_line(argv, message, joint_inputs, capsys, tmp_path):
    _, _, csv, log = joint_inputs
    paths = {
        "bad": DATA / "malformed_bad_number.log",
        "trunc": DATA / "malformed_truncated_row.log",
        "csv": csv,
        "log": log,
    }
    out = tmp_path / "out.json"
    argv = [a.format(**paths) for a in argv] + ["-o", str(out)]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and captured.err.startswith("perfmodel: error: ")
    assert re.search(message, captured.err), captured.err
    assert not out.exists()


def test_command_line_errors_name_flags_not_keyword_arguments(capsys):
    # A parser or fit error raised with the library's keyword names reads, on the
    # command line, with the flags that set them.
    log = str(Path(__file__).resolve().parent.parent / "datasets/nccl/nccl_tests_44_2x2080ti.log")
    assert main(["fit-collective", log, "--link-bandwidth", "4e11"]) == 2
    err = capsys.readouterr().err
    assert "a link bandwidth (--link-bandwidth) applies to a fitted factor only" in err
    assert "add --factor fitted" in err and "link_bandwidth=" not in err
    # GB/s given as B/s (400) was fitted to "R² −2.4e11" and written with exit status 0.
    with pytest.raises(SystemExit) as caught:
        main(["fit-collective", log, "--factor", "fitted", "--link-bandwidth", "400"])
    assert caught.value.code == 2
    assert "--link-bandwidth: expected a finite number ≥ 1e+06" in capsys.readouterr().err


def test_a_log_given_twice_is_refused_by_fit_collective(capsys):
    """`--dataset X --dataset X` fitted 52 measurements from 26."""
    name = "nccl_tests_44_2x2080ti"
    assert main(["fit-collective", "--dataset", name, "--dataset", name]) == 2
    assert f"{name}: given twice; each log counts once" in capsys.readouterr().err


def test_with_collective_takes_the_name_of_a_shipped_log(tmp_path):
    # `fit-collective --dataset NAME` took a shipped log's name; `fit --with-collective
    # NAME` said "no such file" (newcomer review, 2026-12-07).
    from perfmodel._cli.collective import shipped_log

    path = Path(shipped_log("nccl_tests_44_2x2080ti"))
    assert path.is_file() and path.parent.name == "nccl"
    assert shipped_log("nccl_tests_44_2x2080ti.log") == str(path)
    mine = tmp_path / "nccl_tests_44_2x2080ti"
    mine.write_text("")
    assert shipped_log(str(mine)) == str(mine)  # a file given is read, not the shipped one
    assert shipped_log("no_such_log") == "no_such_log"  # its reading names it missing
