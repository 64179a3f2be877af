from pathlib import Path

import numpy as np
import pytest

import perfmodel as pm

ROOT = Path(__file__).resolve().parent.parent


def write(tmp_path, text, name="bench.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_time_units_and_carried_config(tmp_path):
    path = write(tmp_path, "gpus,time_ms,gpus_per_node,note\n1,100,8,a\n2,55,8,b\n2,56,8,c\n")
    data = pm.load_benchmarks(path)
    np.testing.assert_allclose(data.time_s, [0.1, 0.055, 0.056])
    np.testing.assert_array_equal(data.gpus, [1, 2, 2])  # repeats kept
    assert data.target == "time"
    assert set(data.config) == {"gpus_per_node"}
    assert data.distinct_configs() == 2


def test_throughput_becomes_seconds_per_unit_of_work(tmp_path):
    data = pm.load_benchmarks(write(tmp_path, "gpus,throughput\n1,200\n4,700\n"))
    assert data.target == "throughput"
    np.testing.assert_allclose(data.time_s, [1 / 200, 1 / 700])
    np.testing.assert_allclose(data.measured, [200, 700])


@pytest.mark.parametrize(
    "unit, seconds, per_second",
    [
        ("images/s", 1, "images/s"),
        ("tokens/min", 60, "tokens/s"),
        ("scripts/hour", 3600, "scripts/s"),
        ("jobs/Hours", 3600, "jobs/s"),
        ("runs/day", 86400, "runs/s"),
    ],
)
def test_a_throughput_per_minute_hour_or_day_is_read_per_second(
    tmp_path, unit, seconds, per_second
):
    data = pm.load_benchmarks(
        write(tmp_path, "gpus,throughput\n1,200\n4,700\n"), throughput_unit=unit
    )
    np.testing.assert_allclose(data.time_s, [seconds / 200, seconds / 700])
    np.testing.assert_allclose(data.measured, [200 / seconds, 700 / seconds])
    assert data.unit == per_second and data.read_as.startswith(f"read throughput as {unit}")


@pytest.mark.parametrize("unit", ["images", "/s", "images/fortnight", ""])
def test_a_throughput_unit_that_is_not_work_per_time_is_refused(tmp_path, unit):
    path = write(tmp_path, "gpus,throughput\n1,200\n4,700\n")
    with pytest.raises(pm.InputError, match=r"bench.csv: throughput unit .*expected work per time"):
        pm.load_benchmarks(path, throughput_unit=unit)


@pytest.mark.parametrize(
    "column, seconds, per_second",
    [
        ("images_per_min", 60, "images/s"),
        ("throughput (tokens/s)", 1, "tokens/s"),
        ("samples per hour", 3600, "samples/s"),
        ("seqs/sec", 1, "seqs/s"),
        ("tokens_per_ms", 1e-3, "tokens/s"),
    ],
)
def test_a_throughput_column_is_read_in_the_rate_its_name_states(
    tmp_path, column, seconds, per_second
):
    # A newcomer's images_per_min was read as images per second: costs 60× off.
    path = write(tmp_path, f"gpus,{column}\n1,200\n4,700\n")
    data = pm.load_benchmarks(path, throughput_column=column)
    np.testing.assert_allclose(data.time_s, [seconds / 200, seconds / 700])
    converted = f", ÷ {seconds:g} for {per_second}" if seconds != 1 else ""
    assert data.unit == per_second
    assert data.read_as.endswith(", from its name" + converted)


@pytest.mark.parametrize(
    "column", ["tokens/gpu/s", "samples_per_gpu_per_s", "tokens_per_sec_per_gpu", "img/s/GPU"]
)
def test_a_throughput_per_gpu_by_its_name_is_refused(tmp_path, column):
    # It was read as the total: a table that scales well answered "Buy 1 GPU".
    path = write(tmp_path, f"gpus,{column}\n1,100\n2,95\n")
    with pytest.raises(pm.InputError, match=r"is a throughput per GPU by its name.*× gpus"):
        pm.load_benchmarks(path, throughput_column=column)


def test_a_throughput_unit_that_disagrees_with_the_columns_name_is_refused(tmp_path):
    path = write(tmp_path, "gpus,images_per_min\n1,200\n4,700\n")
    with pytest.raises(pm.InputError, match=r"'images_per_min' is images/min by its name, but"):
        pm.load_benchmarks(path, throughput_column="images_per_min", throughput_unit="images/s")
    data = pm.load_benchmarks(
        path, throughput_column="images_per_min", throughput_unit="img/minute"
    )
    assert data.unit == "img/s" and data.time_s[0] == pytest.approx(60 / 200)
    plain = pm.load_benchmarks(
        write(tmp_path, "gpus,img_s\n1,200\n4,700\n"), throughput_column="img_s"
    )
    assert plain.unit == "work/s"  # no rate in the name: work per second, as before


def test_a_shipped_throughput_per_hour_is_read_per_second():
    data = pm.load_dataset("usl_specsdm91")  # SPEC SDM91: scripts per hour
    assert data.unit == "scripts/s" and data.time_s[0] == pytest.approx(3600 / 64.9)


def test_a_shipped_dataset_reads_alike_by_path_and_by_name(tmp_path):
    # By path it was work per second (64.9 scripts/hour read as 64.9 per second) while
    # the CLI and `load_dataset` read scripts per hour: one dataset, two time scales.
    by_name = pm.load_dataset("usl_specsdm91")
    by_path = pm.load_benchmarks(ROOT / "datasets" / "usl_specsdm91.csv")
    assert by_path.unit == by_name.unit == "scripts/s"
    np.testing.assert_array_equal(by_path.time_s, by_name.time_s)
    copied = tmp_path / "usl_specsdm91.csv"  # the same name elsewhere: no unit is known
    copied.write_bytes((ROOT / "datasets" / "usl_specsdm91.csv").read_bytes())
    assert pm.load_benchmarks(copied).unit == "work/s"


def test_column_mapping(tmp_path):
    path = write(tmp_path, "nodes_x,imgs,other\n1,10,x\n2,19,y\n")
    data = pm.load_benchmarks(path, gpus_column="nodes_x", throughput_column="imgs")
    np.testing.assert_allclose(data.measured, [10, 19])
    data = pm.load_benchmarks(path, gpus_column="nodes_x", time_column="imgs", time_unit="us")
    np.testing.assert_allclose(data.time_s, [1e-5, 1.9e-5])


def test_series_selection(tmp_path):
    path = write(tmp_path, "series,gpus,time_s\na,1,1\na,2,0.6\nb,1,2\nb,2,1.1\n")
    with pytest.raises(pm.InputError, match="2 series.*series=: 'a', 'b'"):
        pm.load_benchmarks(path)
    data = pm.load_benchmarks(path, series="b")
    np.testing.assert_allclose(data.time_s, [2, 1.1])
    np.testing.assert_array_equal(data.lines, [4, 5])


@pytest.mark.parametrize(
    "text, pattern",
    [
        (
            "gpus,time_s\n1,1\n2,abc\n",
            r"bench.csv row 2 \(line 3\), column 'time_s': expected a finite number, got 'abc'",
        ),
        ("gpus,time_s\n1,1\n2,\n", r"row 2 \(line 3\), column 'time_s': empty cell"),
        (
            "gpus,time_s\n1,1\n2,-3\n",
            r"row 2 \(line 3\), column 'time_s': expected a positive number, got '-3'",
        ),
        (
            "gpus,time_s\n1,1\n2,0\n",
            r"column 'time_s': expected a positive number, got '0'",
        ),
        (
            "gpus,time_s\n1,1\n2,nan\n",
            r"column 'time_s': expected a finite number, got 'nan'",
        ),
        (
            "gpus,time_s\n0,1\n",
            r"row 1 \(line 2\), column 'gpus': expected a GPU count ≥ 1, got '0'",
        ),
        (
            "gpus,time_s\n1.5,1\n",
            r"column 'gpus': expected a whole number ≥ 1, got '1.5'",
        ),
        ("gpus,time_s\n", r"header but no data rows"),
        ("", r"empty file"),
        ("n,time_s\n1,1\n", r"missing column 'gpus'.*columns found: n, time_s$"),
        ("gpus;time_s\n1;1\n", r"columns found: gpus;time_s \(the header holds ';'"),
        ("gpus\ttime_s\n1\t1\n", r"the header holds '\\t': columns are separated by commas"),
        (  # Excel's European export: semicolons, decimal commas
            '"gpus";"time_s"\n1;1,0\n',
            r"line 2: 2 cells, but the header has 1 column .*the header holds ';'",
        ),
        ("gpus,speed\n1,1\n", r"missing a time or throughput column"),
        ("gpus,time_s,throughput\n1,1,1\n", r"several measured columns"),
        (
            "gpus,time_s,gpus_per_node\n1,1,x\n",
            r"column 'gpus_per_node': expected a finite number",
        ),
        ('gpus,time_s\n1,"1\n', r"line 2: a quote \(\"\) opens here and is never closed"),
    ],
)
def test_bad_csv_names_file_row_and_column(tmp_path, text, pattern):
    path = write(tmp_path, text)
    with pytest.raises(pm.InputError, match=pattern):
        pm.load_benchmarks(path)


def test_a_byte_that_is_not_utf8_names_its_line(tmp_path):
    path = tmp_path / "bench.csv"
    rows = "".join(f"{n},{1 / n}\n" for n in range(1, 20000))
    path.write_bytes(b"gpus,time_s\n" + rows.encode() + b"20000,0.5\xe9\n")
    with pytest.raises(pm.InputError, match=r"bench.csv: line 20001: byte 0xe9 is not UTF-8"):
        pm.load_benchmarks(path)


def test_binary_file_is_refused(tmp_path):
    path = tmp_path / "bench.csv"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe\x00")
    with pytest.raises(pm.InputError, match="bench.csv"):
        pm.load_benchmarks(path)


def test_missing_file(tmp_path):
    with pytest.raises(pm.InputError, match="nope.csv: no such file"):
        pm.load_benchmarks(tmp_path / "nope.csv")


def test_unknown_mapped_column(tmp_path):
    path = write(tmp_path, "gpus,time_s\n1,1\n")
    with pytest.raises(pm.InputError, match="no column 'n'; columns found: gpus, time_s"):
        pm.load_benchmarks(path, gpus_column="n")


def test_shipped_datasets_all_load():
    infos = pm.list_datasets()
    assert len(infos) >= 20
    for info in infos:
        data = pm.load_dataset(info.name)
        assert data.gpus.size == info.rows
        assert len(np.unique(data.gpus)) == info.distinct_gpus


def test_unknown_dataset_name():
    with pytest.raises(pm.InputError, match="no shipped dataset 'usl_nope'"):
        pm.load_dataset("usl_nope")


# What is refused and why (docs/your-own-csv.md, "What perfmodel refuses") -----------------


@pytest.mark.parametrize(
    "text, pattern",
    [
        (
            "gpus,time_s,time_s\n1,1,2\n2,0.5,1\n",
            r"column 'time_s' appears twice .*columns 2 and 3",
        ),
        ("gpus,gpus,time_s\n1,8,1\n2,16,0.5\n", "column 'gpus' appears twice"),
        ("gpus,time_s\n1,1.0\n2,0.5,7\n", r"line 3: 3 cells, but the header has 2 columns"),
        ("gpus,time_s\n1,1.0\n2,0.5,7,8\n", r"line 3: 4 cells, but the header has 2 columns"),
        ("gpus,time_s\n1,1.0\n\n\n2,x\n", r"row 2 \(line 5\), column 'time_s'.*got 'x'"),
        ("gpus,time_s\r\n1,1\r\n\r\n2,-1\r\n", r"row 2 \(line 4\).*a positive number, got '-1'"),
        ("gpus,time_s\r1,1\r\r2,-1\r", r"row 2 \(line 4\).*a positive number, got '-1'"),
        ('gpus,time_s\n1,1.0\n\n2,"0.5\n4,0.3\n', r"line 4: a quote \(\"\) opens here"),
        ("gpus,time_s\n1,1.0,\n2,,\n", r"row 2 \(line 3\), column 'time_s': empty cell"),
        ("gpus,time_s\n1,1\n2.5,0.5\n", r"column 'gpus': expected a whole number ≥ 1, got '2.5'"),
        ("gpus,time_s\n1,nan\n", "expected a finite number, got 'nan'"),
        ("gpus,time_s\n\n\n", "header but no data rows"),
    ],
)
def test_refused_with_the_line_in_the_file(tmp_path, text, pattern):
    with pytest.raises(pm.InputError, match=pattern) as caught:
        pm.load_benchmarks(write(tmp_path, text, "x.csv"))
    assert str(caught.value).startswith(str(tmp_path / "x.csv"))


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_old_mac_and_windows_line_endings_read_as_unix_ones(tmp_path, newline):
    text = newline.join(["gpus,time_s", "1,1.0", "", "2,0.52", "4,0.28", ""])
    data = pm.load_benchmarks(write(tmp_path, text))
    np.testing.assert_array_equal(data.gpus, [1, 2, 4])
    np.testing.assert_allclose(data.time_s, [1.0, 0.52, 0.28])
    np.testing.assert_array_equal(data.lines, [2, 4, 5])


def test_blank_lines_and_trailing_commas_are_read_as_meant(tmp_path):
    path = write(tmp_path, "\ufeffgpus,time_s\n1,1.0,\n\n2,0.52 ,\n4,0.29,\n")
    data = pm.load_benchmarks(path)
    np.testing.assert_array_equal(data.gpus, [1, 2, 4])
    np.testing.assert_allclose(data.time_s, [1.0, 0.52, 0.29])
    np.testing.assert_array_equal(data.lines, [2, 4, 5])  # the blank line 3 is counted


def test_one_column_cannot_be_two_quantities(tmp_path):
    path = write(tmp_path, "gpus,time_s\n1,1\n2,0.5\n")
    with pytest.raises(pm.InputError, match="gpus_column= and time_column= both name column"):
        pm.load_benchmarks(path, gpus_column="gpus", time_column="gpus")


def test_the_first_bad_cell_of_a_long_file_is_named(tmp_path):
    """The checks are vectorised: the message still names the first bad cell exactly."""
    rows = 100_000
    lines = ["gpus,time_s", *(f"{1 + i % 8},{0.1 + 1.0 / (1 + i % 8):.6g}" for i in range(rows))]
    lines[77_777] = "3,0"  # line 77,778 of the file
    lines[90_000] = "3,x"
    path = write(tmp_path, "\n".join(lines) + "\n")
    with pytest.raises(pm.InputError, match=r"row 77777 \(line 77778\).*positive number, got '0'"):
        pm.load_benchmarks(path)
    lines[77_777] = "3,0.4"
    path = write(tmp_path, "\n".join(lines) + "\n")
    with pytest.raises(pm.InputError, match=r"row 90000 \(line 90001\).*finite number, got 'x'"):
        pm.load_benchmarks(path)


@pytest.mark.parametrize(
    "column, factor, said",
    [
        ("Time_ms", 1e-3, "read Time_ms as milliseconds, from its name"),
        ("step time (us)", 1e-6, "read step time (us) as microseconds, from its name"),
        ("latency_sec", 1.0, "read latency_sec as seconds, from its name"),
        ("duration", 1.0, "read duration as seconds: its name gives no unit"),
    ],
)
def test_time_unit_from_the_column_name(tmp_path, column, factor, said):
    path = write(tmp_path, f"gpus,{column}\n1,1000\n2,600\n")
    data = pm.load_benchmarks(path, time_column=column)
    np.testing.assert_allclose(data.time_s, [1000 * factor, 600 * factor])
    assert data.read_as.startswith(said)
    assert said in repr(data)


def test_time_unit_given_and_named_must_agree(tmp_path):
    path = write(tmp_path, "gpus,Time_ms,lat_ns\n1,1000,5\n2,600,4\n")
    with pytest.raises(pm.InputError, match="'Time_ms' is in milliseconds by its name, but"):
        pm.load_benchmarks(path, time_column="Time_ms", time_unit="s")
    data = pm.load_benchmarks(path, time_column="Time_ms", time_unit="ms")  # agrees
    assert data.read_as == "read Time_ms as milliseconds"
    with pytest.raises(pm.InputError, match="'lat_ns' is in a unit perfmodel does not read"):
        pm.load_benchmarks(path, time_column="lat_ns")


def test_standard_columns_say_how_they_were_read(tmp_path):
    data = pm.load_benchmarks(write(tmp_path, "gpus,time_us\n1,10\n2,6\n"))
    assert data.read_as == "read time_us as microseconds"
    data = pm.load_benchmarks(write(tmp_path, "gpus,throughput\n1,10\n2,19\n", "t.csv"))
    assert data.read_as == "read throughput as work/s"


def test_a_column_spanning_more_than_fifty_decades_is_refused(tmp_path):
    text = "gpus,time_s\n1,1e30\n2,1\n4,1e-30\n"
    with pytest.raises(pm.InputError, match=r"spans 60 orders of magnitude \(line 4: 1e-30"):
        pm.load_benchmarks(write(tmp_path, text, "x.csv"))
    data = pm.load_benchmarks(write(tmp_path, "gpus,time_s\n1,1e20\n2,1e-20\n", "y.csv"))
    assert data.time_s.tolist() == [1e20, 1e-20]  # 40 decades: read


def test_arrays_of_different_lengths_or_a_misspelt_field_stop_in_one_line():
    """`from_arrays`: columns of unequal length are an InputError naming the lengths (it
    was pandas' ValueError), and a misspelt field a TypeError naming the valid ones (it
    was dropped, so the model never saw it); a scalar field is every row's."""
    with pytest.raises(pm.InputError, match=r"differ in length \(gpus 3, time_s 2\)"):
        pm.from_arrays([1, 2, 4], [1.0, 0.6])
    with pytest.raises(TypeError, match=r"'gpus_per_nod' \(did you mean 'gpus_per_node'\?\)"):
        pm.from_arrays([1, 2], [1.0, 0.6], gpus_per_nod=8)
    data = pm.from_arrays(8, 1.0, gpus_per_node=8)
    assert data.gpus.tolist() == [8.0] and data.config["gpus_per_node"].tolist() == [8.0]


def test_a_fractional_global_batch_or_layer_count_is_refused(tmp_path):
    """Counts are whole: `global_batch` 1.5 (a batch in millions of tokens?) was read
    without a word, and every model that divides it by the GPUs took it as given."""
    path = tmp_path / "b.csv"
    for column in ("global_batch", "layers"):
        path.write_text(f"gpus,{column},time_s\n1,64,1.0\n2,1.5,0.6\n")
        with pytest.raises(pm.InputError, match=rf"line 3\), column '{column}'.*whole.*'1.5'"):
            pm.load_benchmarks(path)


def test_a_shipped_time_to_train_table_says_its_steps_are_runs():
    # It read "cheapest per step: 1 GPU, 1.12 GPU-hours per step" with no word that a
    # "step" there is a whole MLPerf training run.
    data = pm.load_dataset("mlperf07_dgxa100_ssd")
    assert 'a "step" below is one whole training run' in data.read_as
    assert "training run" not in pm.load_dataset("usl_specsdm91").read_as


@pytest.mark.parametrize(
    "csv, options, message",
    [
        ("gpus,time_ms\n1,1000\n2,520\n", {"time_unit": "s"}, "'time_ms' is in milliseconds"),
        ("gpus,time_s\n1,1.0\n2,0.52\n", {"time_unit": "ms"}, "'time_s' is in seconds, but"),
        ("gpus,throughput\n1,100\n2,190\n", {"time_unit": "s"}, "is for a time column"),
        ("gpus,time_s\n1,1.0\n2,0.52\n", {"throughput_unit": "img/s"}, "for a throughput"),
    ],
)
def test_a_unit_option_that_cannot_apply_is_refused(tmp_path, csv, options, message):
    """--time-unit without --time-column and --throughput-unit on time data were ignored."""
    path = write(tmp_path, csv)
    with pytest.raises(pm.InputError, match=message):
        pm.load_benchmarks(path, **options)
    column = csv.split("\n")[0].split(",")[1]
    if column.startswith("time_"):  # the unit its name says is taken
        unit = column.split("_")[1]
        assert pm.load_benchmarks(path, time_unit=unit).target == "time"


def test_the_gpu_column_named_as_the_measured_one_is_said_so(tmp_path):
    # It said "missing column 'gpus'", the column having been renamed to a time.
    path = write(tmp_path, "gpus,time_s\n1,1.0\n2,0.52\n")
    with pytest.raises(pm.InputError, match="names column 'gpus', the GPU count; one column"):
        pm.load_benchmarks(path, time_column="gpus")
