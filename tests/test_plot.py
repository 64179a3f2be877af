import dataclasses
import io
import json
import os
import subprocess
import sys

from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure
import numpy as np
from PIL import Image
import pytest

import perfmodel as pm
from perfmodel._cli import main
from perfmodel._show.plot import _seconds_formatter, curves, figure_bytes

GPUS = np.array([1, 1, 2, 4, 8, 8, 16, 32, 64, 64, 128, 256], dtype=float)


@pytest.fixture(scope="module")
def time_fit():
    """A USL fit over GPU counts that span decades, with repeats."""
    truth = 0.002 + 1.0 / GPUS + 2e-5 * (GPUS - 1)
    noise = np.exp(0.02 * np.sin(np.arange(GPUS.size) * 2.1))
    data = pm.from_arrays(GPUS, truth * noise, source="synthetic.csv")
    return pm.fit("usl", data, n_starts=8)


@pytest.fixture(scope="module")
def throughput_fit(time_fit):
    """Amdahl on a shipped throughput series (images/s, 1–8 GPUs), parameters given."""
    data = pm.load_dataset("tf_dgx1_p100_vgg16_real")
    model = pm.amdahl().with_parameters({"serial.time": 3.3e-4, "compute.time": 6.2e-3})
    predicted = 1.0 / np.asarray(model(data.to_config()))
    return dataclasses.replace(
        time_fit,
        model=model,
        data=data,
        residuals=np.log(predicted / data.measured),
        free=("serial.time", "compute.time"),
        raw_covariance=None,
    )


@pytest.fixture(scope="module")
def fit_file(tmp_path_factory, time_fit):
    path = tmp_path_factory.mktemp("plot") / "fit.json"
    pm.save_fit(time_fit, path)
    return path


def fake_interval(fit, gpus, level=0.9, method="laplace"):
    """±10% × (1 + level): the plots' wiring, without compiling the real ensemble."""
    point = fit.predict(gpus)
    width = 0.1 * (1 + level)
    out = {"gpus": point["gpus"], "time_s": point["time_s"]}
    out["time_s_lo"], out["time_s_hi"] = (
        point["time_s"] * (1 - width),
        point["time_s"] * (1 + width),
    )
    if fit.target == "throughput":
        out["throughput"] = point["throughput"]
        out["throughput_lo"], out["throughput_hi"] = 1 / out["time_s_hi"], 1 / out["time_s_lo"]
    return out


@pytest.fixture(scope="module")
def figure(time_fit):
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("perfmodel._uncertainty.predict_interval", fake_interval)
        return pm.plot_fit(time_fit, interval=0.8)


def _lines(ax, prefix):
    return [line for line in ax.get_lines() if str(line.get_label()).startswith(prefix)]


def _vertical_at(ax, x):
    return [
        line
        for line in ax.get_lines()
        if len(line.get_xdata()) == 2 and np.allclose(np.asarray(line.get_xdata(), float), x)
    ]


def test_plot_fit_has_four_labelled_panels(figure):
    assert isinstance(figure, Figure)
    titles = [ax.get_title() for ax in figure.axes]
    assert titles == ["measurements and fit", "speedup", "efficiency", "where the time goes"]
    for ax in figure.axes:
        assert ax.get_xlabel() == "GPUs"
        assert ax.get_ylabel()
    assert figure.axes[0].get_ylabel() == "step time (s)"
    assert "synthetic.csv" in figure.get_suptitle() and "usl" in figure.get_suptitle()


def test_measurements_show_every_repeat_and_the_curve(figure, time_fit):
    ax = figure.axes[0]
    (points,) = _lines(ax, "measured")
    np.testing.assert_array_equal(points.get_xdata(), time_fit.data.gpus)
    np.testing.assert_allclose(points.get_ydata(), time_fit.data.time_s)
    assert "12 runs at 9 GPU counts" in points.get_label()
    (curve,) = _lines(ax, "usl fit")
    x = np.asarray(curve.get_xdata())
    np.testing.assert_allclose(curve.get_ydata(), time_fit.predict(x)["time_s"], rtol=1e-12)


def _band(ax):
    (band,) = [c for c in ax.collections if "interval" in str(c.get_label())]
    return band


def test_interval_band_around_the_curve(figure, time_fit):
    ax = figure.axes[0]
    band = _band(ax)
    assert band.get_label() == "80% prediction interval"
    vertices = band.get_paths()[0].vertices
    x, y = vertices[:, 0], vertices[:, 1]
    point = time_fit.predict(x)["time_s"]
    on_lower = np.isclose(y, 0.82 * point, rtol=1e-9)
    on_upper = np.isclose(y, 1.18 * point, rtol=1e-9)
    assert np.all(on_lower | on_upper) and on_lower.sum() > 200 and on_upper.sum() > 200


def test_no_band_when_the_interval_cannot_be_computed(monkeypatch, time_fit):
    def refuse(*args, **kwargs):
        raise pm.InputError("no residual degrees of freedom")

    monkeypatch.setattr("perfmodel._uncertainty.predict_interval", refuse)
    ax = pm.plot_measurements(time_fit)
    assert not [c for c in ax.collections if "interval" in str(c.get_label())]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "no 90% interval: too few measurements for the parameters" in labels


def test_band_left_open_where_parameters_are_undetermined(monkeypatch, time_fit):
    def open_above_64(fit, gpus, level=0.9, method="laplace"):
        out = fake_interval(fit, gpus, level)
        out["time_s_hi"] = np.where(out["gpus"] > 64, np.inf, out["time_s_hi"])
        return out

    monkeypatch.setattr("perfmodel._uncertainty.predict_interval", open_above_64)
    c = curves(time_fit)
    assert c.band_note == "90% prediction interval (unbounded where blank)"
    assert np.all(np.isnan(c.band[1][c.gpus > 64])) and np.all(np.isfinite(c.band[1][c.gpus <= 64]))


def test_a_wild_band_does_not_squash_the_curve(monkeypatch, time_fit):
    def wild(fit, gpus, level=0.9, method="laplace"):
        out = fake_interval(fit, gpus, level)
        out["time_s_lo"], out["time_s_hi"] = out["time_s"] * 1e-4, out["time_s"] * 1e4
        return out

    monkeypatch.setattr("perfmodel._uncertainty.predict_interval", wild)
    ax = pm.plot_measurements(time_fit)
    c = curves(time_fit, interval=None)
    lo, hi = ax.get_ylim()
    assert c.predicted["time_s"].min() / 4 < lo < c.predicted["time_s"].min()
    assert c.predicted["time_s"].max() < hi < c.predicted["time_s"].max() * 4


def test_log_axes_when_counts_span_decades(figure, throughput_fit):
    for ax in figure.axes:
        assert ax.get_xscale() == "log"
    assert figure.axes[0].get_yscale() == "log"  # the step time spans decades too
    ax = pm.plot_measurements(throughput_fit, gpus_range=(1, 6), interval=None)
    assert ax.get_xscale() == "linear" and ax.get_yscale() == "linear"


def test_speedup_panel_has_ideal_line_and_amdahl_bound(figure, time_fit):
    ax = figure.axes[1]
    (ideal,) = _lines(ax, "ideal")
    np.testing.assert_allclose(ideal.get_xdata(), ideal.get_ydata())
    (bound,) = _lines(ax, "Amdahl bound")
    np.testing.assert_allclose(bound.get_ydata(), pm.amdahl_bound(time_fit))
    (model,) = _lines(ax, "model")
    x = np.asarray(model.get_xdata())
    np.testing.assert_allclose(model.get_ydata(), time_fit.predict(x)["speedup"], rtol=1e-12)


def test_efficiency_panel_matches_the_model(figure, time_fit):
    ax = figure.axes[2]
    (model,) = _lines(ax, "model")
    x = np.asarray(model.get_xdata())
    np.testing.assert_allclose(model.get_ydata(), time_fit.predict(x)["efficiency"], rtol=1e-12)
    assert ax.get_ylim()[0] == 0.0


def test_optimum_and_knee_marked_on_every_panel(figure, time_fit):
    best = pm.optimal_gpus(time_fit)
    knee = pm.diminishing_returns(time_fit)
    assert knee.gpus is not None and not best.at_limit
    for ax in figure.axes:
        assert _vertical_at(ax, best.gpus) and _vertical_at(ax, knee.gpus)
    labels = [t.get_text() for t in figure.axes[0].get_legend().get_texts()]
    assert f"optimum (fastest): {best.gpus} GPUs" in labels
    assert any(label.startswith(f"diminishing returns: {knee.gpus} GPUs") for label in labels)


def test_breakdown_stacks_every_term(figure, time_fit):
    ax = figure.axes[3]
    layers = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert [c.get_label() for c in layers] == ["serial", "compute", "coherency"]
    assert ax.get_ylim() == (0.0, 1.0)


def test_breakdown_seconds_add_up_to_step_time(time_fit):
    c = curves(time_fit, interval=None)
    np.testing.assert_allclose(sum(c.parts.values()), c.predicted["time_s"], rtol=1e-12)
    ax = pm.plot_breakdown(time_fit, relative=False, interval=None)
    layers = [c for c in ax.collections if isinstance(c, PolyCollection)]
    # The top of the stack is the step time: at 1 GPU it is the largest.
    top = max(v[:, 1].max() for layer in layers for v in [layer.get_paths()[0].vertices])
    np.testing.assert_allclose(top, c.predicted["time_s"].max(), rtol=1e-12)


def test_breakdown_draws_overlap_as_the_hidden_slice(time_fit):
    model = pm.data_parallel(overlap=True).with_parameters(
        {
            "serial.time": 0.01,
            "compute.time": 1.0,
            "allreduce.latency": 1e-3,
            "allreduce.bandwidth": 5.0,
            "overlap": 0.7,
        }
    )
    fit = dataclasses.replace(time_fit, model=model, raw_covariance=None, free=())
    ax = pm.plot_breakdown(fit, relative=False, interval=None)
    (hidden,) = [c for c in ax.collections if c.get_label() == "hidden by overlap"]
    (net,) = _lines(ax, "step time")
    c = curves(fit, interval=None)
    np.testing.assert_allclose(net.get_ydata(), c.predicted["time_s"], rtol=1e-10)
    assert np.all(c.parts["overlap"] <= 0) and np.any(c.parts["overlap"] < 0)
    assert hidden.get_hatch() == "///"


def test_time_axis_labels_stay_in_seconds():
    formatter = _seconds_formatter()
    assert [formatter(v, 0) for v in (2000.0, 1.0, 0.02, 5e-4)] == [
        "2000 s",
        "1 s",
        "20 ms",
        "500 µs",
    ]


def test_throughput_fit_shows_throughput_with_its_unit(monkeypatch, throughput_fit):
    monkeypatch.setattr("perfmodel._uncertainty.predict_interval", fake_interval)
    ax = pm.plot_measurements(throughput_fit)
    assert ax.get_ylabel() == "throughput (images/s)"
    (points,) = _lines(ax, "measured")
    np.testing.assert_allclose(points.get_ydata(), throughput_fit.data.measured)
    # The band of a throughput fit is in throughput: 1/time bounds, swapped.
    vertices = _band(ax).get_paths()[0].vertices
    point = throughput_fit.predict(vertices[:, 0])["throughput"]
    ratio = vertices[:, 1] / point
    assert np.all(np.isclose(ratio, 1 / 1.19) | np.isclose(ratio, 1 / 0.81))


def test_panel_functions_draw_into_given_axes(time_fit):
    fig = Figure()
    axes = fig.subplots(1, 2)
    assert pm.plot_speedup(time_fit, axes[0], interval=None) is axes[0]
    assert pm.plot_efficiency(time_fit, ax=axes[1], interval=None) is axes[1]


def test_bad_plot_options(time_fit):
    with pytest.raises(pm.InputError, match="interval level"):
        curves(time_fit, interval=1.5)
    with pytest.raises(pm.InputError, match="GPU range"):
        curves(time_fit, gpus_range=(8, 2))


def _small_figure():
    fig = Figure(figsize=(2, 1.5))
    fig.add_subplot().plot([1, 2, 4], [1.0, 0.6, 0.4])
    return fig


def test_save_figure_formats_and_atomicity(tmp_path):
    figure = _small_figure()
    png = tmp_path / "f.png"
    pm.save_figure(figure, png)
    with Image.open(png) as image:
        assert image.size == (200, 150) and image.mode == "P"
    svg = tmp_path / "f.svg"
    pm.save_figure(figure, svg)
    assert svg.read_text().lstrip().startswith("<?xml") and "<dc:date>" not in svg.read_text()
    assert figure_bytes(figure, "png") == png.read_bytes()  # the same figure, the same file
    with pytest.raises(pm.InputError, match="unknown image format 'gif'"):
        pm.save_figure(figure, tmp_path / "f.gif")

    class Broken(Figure):
        def savefig(self, *args, **kwargs):
            raise RuntimeError("renderer failed")

    before = png.read_bytes()
    with pytest.raises(RuntimeError, match="renderer failed"):
        pm.save_figure(Broken(), png)
    assert png.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.png", "f.svg"]


def test_figure_shows_in_jupyter_as_a_compact_png(figure):
    data = figure._repr_png_()  # what IPython displays, with or without pyplot
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    with Image.open(io.BytesIO(data)) as image:
        assert image.size == (1100, 800)
    assert len(data) < 80_000


def test_cli_plot_writes_png(tmp_path, fit_file, capsys, monkeypatch):
    monkeypatch.setattr("perfmodel._uncertainty.predict_interval", fake_interval)
    out = tmp_path / "scaling.png"
    assert main(["plot", str(fit_file), "-o", str(out), "--dpi", "50"]) == 0
    assert f"wrote {out}" in capsys.readouterr().err  # messages to stderr, results to stdout
    with Image.open(out) as image:
        assert image.size == (550, 400)


def _bad_files(tmp_path, fit_file):
    document = json.loads(fit_file.read_text())
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps({**document, "schema_version": 99}))
    older = tmp_path / "older.json"
    older.write_text(json.dumps({**document, "schema_version": 0}))
    not_fit = tmp_path / "other.json"
    not_fit.write_text(json.dumps({"hello": 1}))
    csv = tmp_path / "bench.csv"
    csv.write_text("gpus,time_s\n1,1.0\n")
    return {
        "newer": (newer, "schema version 99, but this perfmodel reads"),
        "older": (older, "schema version 0, but this perfmodel reads"),
        "not a fit": (not_fit, "not a perfmodel fit file"),
        "csv": (csv, "not a JSON fit file"),
        "missing": (tmp_path / "nope.json", "no such file"),
    }


@pytest.mark.parametrize("case", ["newer", "older", "not a fit", "csv", "missing"])
def test_cli_plot_bad_fit_file(tmp_path, fit_file, capsys, case):
    path, message = _bad_files(tmp_path, fit_file)[case]
    out = tmp_path / "scaling.png"
    assert main(["plot", str(path), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("perfmodel: error: ") and message in err
    assert len(err.strip().splitlines()) == 1
    assert not out.exists()
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".perfmodel-")]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["-o", "{tmp}/x.gif"], "unknown image format 'gif'"),
        (["-o", "{tmp}/missing/x.png"], "does not exist"),
        (
            ["-o", "{tmp}/x.png", "--interval", "1.2"],
            "--interval: expected a finite number ≥ 0.01 and ≤ 0.999",
        ),
        (["-o", "{tmp}/x.png", "--max-gpus", "1"], "--max-gpus: expected a whole number in [2,"),
        (["-o", "{tmp}/x.png", "--dpi", "5"], "--dpi: expected a whole number in [10, 1000]"),
    ],
)
def test_cli_plot_bad_options(tmp_path, fit_file, capsys, argv, message):
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    try:
        status = main(["plot", str(fit_file), *argv])
    except SystemExit as exit_:  # argparse refuses the option's range itself
        status = exit_.code
    assert status == 2
    err = capsys.readouterr().err
    assert err.startswith("perfmodel: error: ") and message in err
    assert not list(tmp_path.iterdir())


def test_import_perfmodel_does_not_import_matplotlib():
    code = "import sys, perfmodel; sys.exit('matplotlib' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
