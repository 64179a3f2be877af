"""`perfmodel predict` and `optimal` without JAX (`perfmodel._saved`, `perfmodel._cli.quick`):
the NumPy path answers as the JAX path does (predictions, intervals, the optimum and the
recommendation, to 1e-9 relative, the sentences to the letter) on shipped fits and on fits
of each family it evaluates, falls back to JAX for everything else, and imports no JAX."""

import contextlib
import io
import json
import math
import os
from pathlib import Path
import subprocess
import sys

import numpy as np
import pytest

import perfmodel as pm
from perfmodel import _closed
from perfmodel._cli import app
from perfmodel._cli.draws import draws_or_none, fit_key, shared_ensemble
from perfmodel._presets import build
from perfmodel._questions import optimal_gpus, recommend
from perfmodel._questions.curves import JaxCurves
from perfmodel._saved import read_saved
from perfmodel._saved.curves import CONFORMAL_SAMPLES
from perfmodel._saved.curves import fit_key as saved_fit_key
from perfmodel._saved.fit import SCHEMA_VERSION
from perfmodel._saved.model import FAMILIES
from perfmodel._schema import SCHEMA_VERSION as FILE_SCHEMA
from perfmodel._uncertainty.draws import LAPLACE_SAMPLES

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = sorted(p for p in (ROOT / "fit").glob("*.json") if p.name != "INDEX.json")
# One of each kind of shipped fit: weak/strong regime, throughput/time, few/many counts.
# (The default run checks one; the slow run every shipped fit.)
SOME = [  # all slow: the default run checks the NumPy path through the tests below
    pytest.param("dle_mxnet_rn50_dgx1_fp32", marks=pytest.mark.slow),
    pytest.param("dle_paddle_bert_dgxa100_seq128_mixed", marks=pytest.mark.slow),
    pytest.param("mlperf07_dgxa100_bert", marks=pytest.mark.slow),
    pytest.param("mlperf07_dgxa100_maskrcnn", marks=pytest.mark.slow),
]
REL = 1e-9


def assert_close(a, b, path=""):
    """`a` and `b` equal in structure, numbers within `REL` (non-finite: equal)."""
    if isinstance(a, dict):
        assert a.keys() == b.keys(), path
        for k in a:
            assert_close(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, (list, tuple)) and not isinstance(a, str):
        assert len(a) == len(b), path
        for x, y in zip(a, b):
            assert_close(x, y, path)
    elif isinstance(a, np.ndarray):
        np.testing.assert_allclose(a, b, rtol=REL, atol=0, err_msg=path)
    elif isinstance(a, float) and isinstance(b, float):
        if math.isfinite(a) or math.isfinite(b):
            assert a == pytest.approx(b, rel=REL, abs=0), path
        else:
            assert a == b or (math.isnan(a) and math.isnan(b)), path
    else:
        assert a == b, (path, a, b)


def assert_curves(ours, theirs):
    """Times and speedups within `REL`; marginal speedups within `REL` of the largest
    (dS/dN far out is a small difference of larger numbers, exact to its scale)."""
    assert_close(ours[:2], theirs[:2])
    scale = np.max(np.abs(theirs[2]))
    np.testing.assert_allclose(ours[2], theirs[2], rtol=REL, atol=REL * scale)
    assert ours[3:] == theirs[3:]


def same_answers(path, ensembles=None):
    """The NumPy path and the JAX path of one fit file agree (module docstring)."""
    saved, fit = read_saved(path, ensembles), pm.load_fit(path)
    assert saved is not None, f"{path} takes the JAX path"
    gpus = [1, 2, 3, 8, 17, 64, 1000, 4096]
    assert_close(saved.predict(gpus), fit.predict(gpus))
    counts = np.arange(1.0, 300.0)
    assert_curves(saved.curve(counts, {}), JaxCurves(fit).curve(counts, {}))
    draws = draws_or_none(fit)
    kinds = ["prediction"] if saved.intervals == "conformal" else ["prediction", "confidence"]
    for kind in kinds:  # on the draws the command line passes
        assert_close(
            saved.predict_interval(gpus, 0.8, None, kind),
            pm.predict_interval(fit, gpus, 0.8, kind=kind, ensemble=draws),
        )
    ours = saved.ensemble_curves(counts, {}, None, None)
    theirs = JaxCurves(fit).ensemble_curves(counts, {}, None, draws)
    assert_curves(ours, theirs)
    for options in ({}, {"multiple_of": 8, "price_per_gpu_hour": 2.0, "deadline_s": 1e-3}):
        a = recommend(saved, **options)
        b = recommend(fit, **options, ensemble=draws)
        assert a.summary() == b.summary() and a.knee.summary() == b.knee.summary()
        assert_close(a.to_dict(), b.to_dict())
        assert_close(a.amdahl_bound, b.amdahl_bound)  # None for both, or within REL
    a = optimal_gpus(saved, objective="cost", interval=0.9)
    b = optimal_gpus(fit, objective="cost", interval=0.9, ensemble=draws)
    assert a.summary() == b.summary()
    assert_close(vars(a), vars(b))


@pytest.mark.parametrize("name", SOME)
def test_shipped_fits_answer_the_same_without_jax(name):
    same_answers(ROOT / "fit" / f"{name}.json")


@pytest.mark.slow
@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_every_shipped_fit_answers_the_same_without_jax(path):
    same_answers(path)


@pytest.mark.slow  # 13 s: a default fit with the two-level member
def test_a_straddling_blend_answers_the_same(tmp_path):
    # Counts on both sides of a 4-GPU node: the blend's two-level member takes part.
    n = np.array([1, 2, 4, 8, 16, 32])
    local, nodes = np.minimum(n, 4), np.maximum(n / 4, 1)
    step = 0.1 + 0.02 * (local - 1) / local + 0.05 * (nodes - 1) / (nodes * local)
    data = pm.from_arrays(n, throughput=n * 64 / step, gpus_per_node=[4] * 6)
    fit = pm.fit_auto(data).best
    assert fit.model.regime == "straddling"
    pm.save_fit(fit, tmp_path / "f.json")
    same_answers(tmp_path / "f.json")


@pytest.mark.slow  # 18 s: every answer, the ensembles too
def test_a_blend_measured_within_one_node_answers_the_same(tmp_path):
    # The intervals past an unmeasured node (`_closed.unmeasured_node`) on both paths.
    n = np.array([1.0, 2.0, 4.0, 8.0])
    data = pm.from_arrays(n, throughput=[228.7, 385.2, 746.9, 1402.4], gpus_per_node=[8] * 4)
    pm.save_fit(pm.fit_auto(data).best, tmp_path / "f.json")
    same_answers(tmp_path / "f.json")


@pytest.fixture
def cache(cli_cache, monkeypatch):
    """A cache folder of draws, as `perfmodel fit` fills it."""
    # Every call here runs in full: a repeated fit would otherwise replay its record.
    monkeypatch.setattr("perfmodel._cli.replay.COMMANDS", ())
    return cli_cache / "ensembles"


FAMILY_DATA = {
    "amdahl": "tf_dgx1_p100_vgg16_real",
    "usl": "tf_dgx1_p100_vgg16_real",
    "power_law": "tf_dgx1_p100_vgg16_real",
    "weak_data_parallel": "dle_mxnet_rn50_dgx1_fp32",
    "weak_hierarchical": "dle_paddle_bert_dgxa100_seq128_mixed",
}


@pytest.mark.parametrize(
    "family",
    [
        # 2–9 s each (a fit and its Laplace draws): every family in the slow phase
        pytest.param(f, marks=pytest.mark.slow)
        for f in sorted(FAMILY_DATA)
    ],
)
def test_fits_of_each_family_answer_the_same_with_their_laplace_draws(family, cache, tmp_path):
    fit = pm.fit(family, pm.load_dataset(FAMILY_DATA[family]))
    path = tmp_path / "f.json"
    pm.save_fit(fit, path)
    loaded = pm.load_fit(path)
    saved = read_saved(path, str(cache))
    assert saved is not None and saved.intervals == "laplace"
    assert saved_fit_key(saved, "laplace") == fit_key(loaded, "laplace")
    with pytest.raises(KeyError):  # no draws cached yet: the JAX path draws them
        saved.get_ensemble(None, None)
    shared_ensemble(loaded)  # what `perfmodel fit` leaves in the cache
    same_answers(path, str(cache))


def test_the_numpy_families_build_the_presets_terms():
    options = {"power_law": {"exponent": -0.7}, "weak_data_parallel": {"algorithm": "tree"}}
    for name, terms in FAMILIES.items():
        preset = build(name, **options.get(name, {}))
        ours = terms(options.get(name, {}))
        assert [(t.name, t.role) for t in ours] == [(t.name, t.role) for t in preset.terms]
        assert {f"{t.name}.{p}" for t in ours for p in t.params} == set(preset.parameter_specs())


def test_constants_shared_with_the_jax_path():
    assert CONFORMAL_SAMPLES == LAPLACE_SAMPLES and SCHEMA_VERSION == FILE_SCHEMA
    from perfmodel import _blend

    assert _blend.NEAR is _closed.NEAR and _blend.FAR is _closed.FAR


def run_cli(argv, quick: bool = True) -> str:
    """What `perfmodel argv` prints; `quick` False: the JAX path for predict/optimal."""
    with pytest.MonkeyPatch.context() as patch:
        if not quick:
            patch.setattr(app, "_quick_args", lambda argv: None)
        with contextlib.redirect_stdout(io.StringIO()) as out:
            assert app.main(argv) == 0
    return out.getvalue()


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(["predict", "{fit}", "--gpus", "1,8,64,4096"], marks=pytest.mark.slow),
        pytest.param(  # 6 s: the JAX path's interval draws
            ["predict", "{fit}", "--gpus", "1,8,64", "--interval", "0.8", "--json"],
            marks=pytest.mark.slow,
        ),
        # 10 s: the JAX path's interval curves (optimal on both paths: the slow phase)
        pytest.param(["optimal", "{fit}"], marks=pytest.mark.slow),
        pytest.param(
            ["optimal", "{fit}", "--json", "--interval", "0.9", "--multiple-of", "8"],
            marks=pytest.mark.slow,
        ),
        pytest.param(
            ["optimal", "{fit}", "--objective", "cost", "--deadline", "0.001", "--wide"],
            marks=pytest.mark.slow,
        ),
    ],
)
def test_the_command_line_prints_the_same_either_way(argv, cache):
    path = str(ROOT / "fit" / "dle_paddle_bert_dgxa100_seq128_mixed.json")
    argv = [a.format(fit=path) for a in argv]
    from perfmodel._cli.quick import quick_args

    assert quick_args(argv) is None  # not yet checked in full by this perfmodel
    theirs = run_cli(argv, quick=False)  # the JAX path checks the file, and marks it
    assert quick_args(argv) is not None
    ours = run_cli(argv)
    if "--json" in argv:
        assert_close(json.loads(ours), json.loads(theirs))
    else:
        assert ours == theirs


@pytest.mark.parametrize(
    "argv",
    [
        ["predict", "{fit}", "--gpus", "1,8", "--set", "amdahl.serial.time=x2"],
        ["predict", "{fit}", "--gpus", "1,8", "--interval", "0.9", "--kind", "confidence"],
        ["optimal", "{fit}", "--method", "laplace"],
        ["optimal", "{fit}", "--max-g", "64"],  # abbreviations: the full parser decides
        ["optimal", "{fit}", "--help"],
        ["predict", "{fit}"],
        ["fit", "{fit}"],
        ["optimal", "no-such-file.json"],
    ],
)
def test_everything_else_takes_the_jax_path(argv):
    from perfmodel._cli.quick import quick_args

    path = str(ROOT / "fit" / "dle_paddle_bert_dgxa100_seq128_mixed.json")
    assert quick_args([a.format(fit=path) for a in argv]) is None


def test_predict_and_optimal_import_no_jax(tmp_path, monkeypatch):
    path = ROOT / "fit" / "dle_mxnet_rn50_dgx1_fp32.json"
    from perfmodel._cli.cache import mark_checked

    monkeypatch.delenv("PERFMODEL_NO_CACHE", raising=False)
    monkeypatch.setenv("PERFMODEL_CACHE_DIR", str(tmp_path))
    mark_checked(path)  # as `perfmodel fit` or an earlier JAX-path load leaves it
    code = (
        "import sys, contextlib, io\n"
        "from perfmodel._cli.app import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        f"    assert main(['predict', {str(path)!r}, '--gpus', '1,8,64']) == 0\n"
        f"    assert main(['predict', {str(path)!r}, '--gpus', '8', '--interval', '0.9']) == 0\n"
        f"    assert main(['optimal', {str(path)!r}]) == 0\n"
        f"    assert main(['optimal', {str(path)!r}, '--json', '--interval', '0.8']) == 0\n"
        "assert 'Buy' in out.getvalue(), out.getvalue()\n"
        "loaded = {'jax', 'jaxlib', 'equinox', 'optax', 'jaxtyping', 'scipy', 'pandas'}\n"
        "assert not loaded & set(sys.modules), loaded & set(sys.modules)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PERFMODEL_CACHE_DIR": str(tmp_path)}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr


@pytest.mark.slow  # 11 s since the ramp hold (round 13)
@pytest.mark.parametrize("model", [[], ["--model", "amdahl"]])
def test_fit_opens_with_the_same_recommendation_from_numpy(model, cache, tmp_path, monkeypatch):
    csv = tmp_path / "small.csv"
    csv.write_text("gpus,time_s\n1,1.0\n2,0.53\n4,0.29\n8,0.18\n")
    argv = ["fit", str(csv), *model]
    ours = run_cli(argv)
    monkeypatch.setattr("perfmodel._cli.fit.SAVED_FAMILIES", ())  # JAX's curves
    theirs = run_cli(argv)
    assert ours == theirs and ours.startswith("Buy ")


def run_status(argv, quick: bool) -> tuple:
    """``(status, stdout, stderr)`` of `perfmodel argv` on either path."""
    with pytest.MonkeyPatch.context() as patch:
        if not quick:
            patch.setattr(app, "_quick_args", lambda argv: None)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = app.main(argv)
            except SystemExit as stop:
                status = stop.code
    return status, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(
    "options",
    [
        ["predict", "--gpus", "0"],
        pytest.param(
            ["optimal", "--objective", "cost", "--deadline", "1e-12"], marks=pytest.mark.slow
        ),
        pytest.param(["optimal", "--budget", "10"], marks=pytest.mark.slow),
        pytest.param(  # 10 s: the JAX path's curves; argv1 above compares predict
            ["optimal", "--price-per-gpu-hour", "2", "--currency", "USD", "--budget", "100"],
            marks=pytest.mark.slow,
        ),
    ],
)
def test_refusals_and_options_read_the_same_either_way(options, cache):
    path = str(ROOT / "fit" / "dle_paddle_bert_dgxa100_seq128_mixed.json")
    argv = [options[0], path, *options[1:]]
    theirs = run_status(argv, False)  # the JAX path checks the file in full, and marks it
    assert run_status(argv, True) == theirs


@pytest.mark.slow  # 9 s; the Laplace draws answer the same in the power-law case below
def test_a_laplace_fit_prints_the_same_either_way(cache, tmp_path):
    path = tmp_path / "f.json"
    pm.save_fit(pm.fit("usl", pm.load_dataset(FAMILY_DATA["usl"])), path)
    shared_ensemble(pm.load_fit(path))  # what `perfmodel fit` leaves in the cache
    from perfmodel._cli.quick import quick_args

    for argv in (
        ["predict", str(path), "--gpus", "1,8,64", "--interval", "0.9", "--kind", "confidence"],
        ["predict", str(path), "--gpus", "1,8,64", "--interval", "0.8", "--json"],
        ["optimal", str(path), "--interval", "0.9"],
    ):
        theirs = run_cli(argv, quick=False)  # checks the file in full, and marks it
        assert quick_args(argv) is not None
        ours = run_cli(argv)
        if "--json" in argv:
            assert_close(json.loads(ours), json.loads(theirs))
        else:
            assert ours == theirs


def _double_a_member_copy(document):
    """Edit the blend member's copy of a parameter instead of the value the answers use."""
    copies = document["model"]["components"][0]["parameters"]
    copies["serial.time"] = 2 * copies["serial.time"]


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda d: d["quality"].pop("converged"), "quality.converged: missing"),
        (lambda d: d["model"]["options"].update(regime=7), "model.options.regime: expected"),
        (lambda d: d["data"].update(unit=3), "data.unit: expected a string"),
        (_double_a_member_copy, "the two copies of amdahl.serial.time disagree"),
        pytest.param(
            lambda d: d["model"]["components"][1].update(far=0.9),
            "model.components[1].far: 0.9 is not the weak regime's weight",
            marks=pytest.mark.slow,
        ),
        pytest.param(
            lambda d: d["model"]["components"][3]["options"].update(exponent=-0.5),
            "the two copies of power_law_flat's exponent disagree",
            marks=pytest.mark.slow,
        ),
    ],
)
def test_an_edited_fit_file_gets_the_schemas_error(tmp_path, cache, edit, message):
    """A file `perfmodel fit` wrote is answered without JAX; the same file edited is
    checked in full again and refused in one line, whatever NumPy could have read."""
    csv = tmp_path / "small.csv"
    csv.write_text("gpus,time_s\n1,1.0\n2,0.53\n4,0.29\n8,0.18\n")
    path = tmp_path / "fit.json"
    run_cli(["fit", str(csv), "-o", str(path)])
    from perfmodel._cli.quick import quick_args

    assert quick_args(["predict", str(path), "--gpus", "8"]) is not None
    document = json.loads(path.read_text())
    edit(document)
    path.write_text(json.dumps(document))
    assert quick_args(["predict", str(path), "--gpus", "8"]) is None
    status, out, err = run_status(["predict", str(path), "--gpus", "8"], quick=True)
    assert status == 2 and out == "" and message in err and len(err.strip().splitlines()) == 1
