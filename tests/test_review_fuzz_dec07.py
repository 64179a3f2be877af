"""A bad-input review of the command line (2026-12-07): what it broke, each with the
one-line answer it now gets."""

import json
from pathlib import Path

from helpers import run_cli
import numpy as np
import pytest

import perfmodel as pm
from perfmodel._fitting.member_errors import _sandwich
from perfmodel._questions.inverse import describe_quantity
from perfmodel._text import shorten_words

ROOT = Path(__file__).resolve().parents[1]
LOGS = ROOT / "tests" / "data" / "logs"


def test_a_fit_over_three_decades_saves_and_loads(tmp_path):
    # Its covariance was asymmetric by 1.3e-8 and its own file was refused:
    # "raw_covariance[2][3]: expected raw_covariance[3][2] (symmetric)".
    csv = tmp_path / "wide.csv"
    csv.write_text("gpus,throughput\n1,100\n10,990\n100,9800\n1000,95000\n")
    out = tmp_path / "wide.json"
    code, _, err = run_cli("fit", csv, "-o", out)
    assert code == 0, err
    covariance = np.array(json.loads(out.read_text())["raw_covariance"], dtype=float)
    np.testing.assert_array_equal(covariance, covariance.T)
    assert pm.load_fit(out).family == "blend"


def test_the_sandwich_is_symmetric_and_never_a_negative_variance():
    rng = np.random.default_rng(0)
    n = np.array([1.0, 10.0, 100.0, 1000.0])
    jacobian = np.stack([1.0 / n, np.ones_like(n), n / 1e3], axis=-1) * rng.uniform(0.5, 2, (4, 3))
    block = _sandwich(jacobian, rng.normal(0, 1e-3, 4), (n / n.max()) ** 2)
    finite = np.isfinite(block)
    np.testing.assert_array_equal(block[finite], block.T[finite])
    assert np.all(np.diag(block) >= 0.0)
    # No residual degree of freedom left: nothing is determined.
    assert np.isinf(_sandwich(jacobian[:3], np.zeros(3), np.ones(3))).all()


@pytest.fixture(scope="module")
def ssd_fit(tmp_path_factory):
    out = tmp_path_factory.mktemp("ttt") / "ssd.json"
    code, _, err = run_cli("fit", LOGS / "mllog_ssd", "-o", out)
    assert code == 0, err
    return out


@pytest.mark.parametrize("batch", ["nan", "inf", "1e300"])
def test_a_global_batch_that_is_no_number_of_samples_is_refused(ssd_fit, batch):
    # nan and inf raised a traceback; 1e300 answered "–∞ s".
    expected = f"--global-batch: expected whole samples from 1 to 1e+18, got {float(batch):g}"
    for argv in (["optimal", ssd_fit], ["predict", ssd_fit, "--gpus", "8"]):
        code, out, err = run_cli(*argv, "--global-batch", batch)
        assert code == 2 and err.strip() == f"perfmodel: error: {expected}", err


@pytest.mark.slow  # 5 s: a collective fit, then edited copies
def test_a_collective_fit_of_an_unknown_collective_is_refused(tmp_path):
    log = ROOT / "datasets" / "nccl" / "nccl_tests_44_2x2080ti.log"
    good = tmp_path / "coll.json"
    code, _, err = run_cli("fit-collective", log, "-o", good)
    assert code == 0, err
    for field, value, message in (
        ("collective", "all_bogus", "groups[0].collective: expected one of all_reduce,"),
        ("placement", "sideways", "groups[0].rows.placement[0]: expected one of out_of_place"),
    ):
        document = json.loads(good.read_text())
        if field == "collective":
            document["groups"][0]["collective"] = value
        else:
            document["groups"][0]["rows"]["placement"][0] = value
        bad = tmp_path / f"{field}.json"
        bad.write_text(json.dumps(document))
        with pytest.raises(pm.InputError, match=message.replace("[", r"\[").replace("]", r"\]")):
            pm.load_collective_fit(bad)


@pytest.mark.slow  # 5 s: a fit with draws, twice
def test_a_damaged_cache_entry_is_drawn_again(cli_cache, tmp_path):
    # A truncated or emptied file in ensembles/ raised BadZipFile or EOFError; NaN draws
    # blanked the interval as "unbounded".
    fit = tmp_path / "a.json"
    csv = ROOT / "datasets" / "dle_pytorch_bert_dgxa100_seq128_mixed.csv"
    assert run_cli("fit", csv, "--model", "amdahl", "-o", fit)[0] == 0
    argv = ("predict", fit, "--gpus", "8", "--interval", "0.9")
    code, first, err = run_cli(*argv)
    assert code == 0, err
    [entry] = (cli_cache / "ensembles").glob("*.npz")
    stored = dict(np.load(entry))
    for damage in ("truncate", "empty", "nan"):
        if damage == "truncate":
            entry.write_bytes(entry.read_bytes()[:100])
        elif damage == "empty":
            entry.write_bytes(b"")
        else:
            with entry.open("wb") as stream:
                np.savez(stream, **{**stored, "raw": np.full_like(stored["raw"], np.nan)})
        code, out, err = run_cli(*argv)
        assert (code, out) == (0, first), (damage, err)


def test_require_says_no_upper_limit_and_whole_counts():
    assert describe_quantity("efficiency", 0.999999) == "99.9999%"
    assert describe_quantity("efficiency", 0.8) == "80.0%"
    assert describe_quantity("serial_share", 1e-5) == "0.001%"
    fit = pm.fit("amdahl", pm.from_arrays([1, 2, 4, 8], [1.0, 0.55, 0.32, 0.21]))
    found = pm.require(fit, parameter="serial.time", target=("speedup", 1.0), gpus=64)
    assert "0 and up" in found.summary() and "inf" not in found.summary()
    far = pm.require(fit, parameter="gpus", target=("speedup", 1e9))
    count = far.message.split(" at ")[-1].split(" GPU")[0]
    assert count.replace(",", "").isdigit(), far.message


def test_an_error_echoing_a_huge_cell_is_cut(tmp_path):
    text = "x" * 100_000
    assert shorten_words(f"got '{text}'") == f"got '{'x' * 59}…(100002 characters)…{'x' * 19}'"
    assert shorten_words("a normal /path/to/file.csv line") == "a normal /path/to/file.csv line"
    csv = tmp_path / "long.csv"
    csv.write_text(f"gpus,throughput\n1,{'1' * 100_000}\n2,2\n")
    code, _, err = run_cli("fit", csv)
    assert code == 2 and len(err) < 400 and "(100002 characters)" in err


def test_a_log_gpu_count_out_of_range_is_the_options_fault():
    code, _, err = run_cli(
        "fit", LOGS / "lightning" / "version_0" / "metrics.csv", "--gpus", "1e300"
    )
    assert code == 2
    assert err.strip() == (
        "perfmodel: error: --gpus: expected a whole GPU count of 1 to 10,000,000, got 1e+300"
    )


def test_a_megatron_iteration_of_1e300_ms_is_refused_at_its_line(tmp_path):
    source = (LOGS / "megatron" / "gpt_16gpu.log").read_text().splitlines()
    at = next(i for i, line in enumerate(source) if "elapsed time per iteration (ms):" in line)
    head, tail = source[at].split("elapsed time per iteration (ms):")
    source[at] = head + "elapsed time per iteration (ms): 1e300 |" + tail.split("|", 1)[1]
    log = tmp_path / "huge.log"
    log.write_text("\n".join(source) + "\n")
    with pytest.raises(pm.InputError, match=rf"huge.log line {at + 1}: elapsed time per"):
        pm.read_log([log])


def test_an_mllog_global_batch_past_1e18_is_refused_at_its_line(tmp_path):
    folder = tmp_path / "runs"
    folder.mkdir()
    for log in (LOGS / "mllog_ssd").iterdir():
        text = log.read_text()
        text = text.replace(
            '"key": "global_batch_size", "value": ',
            '"key": "global_batch_size", "value": 1e300, "x": ',
        )
        (folder / log.name).write_text(text)
    with pytest.raises(pm.InputError, match=r"line \d+: global_batch_size 1e\+300; expected whole"):
        pm.read_log([folder])


@pytest.mark.slow  # 7 s: default fits of three series
def test_measurements_that_agree_within_rounding_get_no_r2_warning(tmp_path):
    csv = tmp_path / "flat.csv"
    rows = "\n".join(f"{n},{1000 + 1e-9 * i}" for i, n in enumerate((8, 16, 32, 64, 128)))
    csv.write_text(f"gpus,throughput\n{rows}\n")
    code, _, err = run_cli("fit", csv)
    assert code == 0 and "misses its own measurements" not in err, err


def test_a_serial_floor_above_the_one_gpu_time_bounds_nothing():
    # `--set serial.time=1` on a blend of 0.2 ms steps printed "Amdahl bound: 5331× →
    # 0.04035×": its anchored one-GPU time is below the floor. A bound is ≥ 1 or none.
    import equinox as eqx
    from helpers import exact_fit

    from perfmodel._presets import build
    from perfmodel._questions.whatif import amdahl_text as _bound_text

    fit = exact_fit(eqx.tree_at(lambda blend: blend.largest, build("blend"), 8.0))
    assert pm.amdahl_bound(fit) is None or pm.amdahl_bound(fit) >= 1.0
    assert pm.amdahl_bound(pm.what_if(fit, {"serial.time": 1e6})) is None
    assert _bound_text(None) == "none (the serial part exceeds the one-GPU time)"
    assert _bound_text(float("inf")) == "unbounded" and _bound_text(12.345) == "12.35×"
