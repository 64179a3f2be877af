"""Tables that fit a terminal: wrapped headers and notes, columns left out and named."""

from perfmodel._text import counted, format_table, seconds, span

NOTE = "mean step time of weak_data_parallel and amdahl, each fitted by least squares on throughput"


def rows(n=3):
    return [
        {
            "family": f"family_{i}",
            "parameters": i,
            "mape_percent": 1.2345 * i,
            "chosen": i == 0,
            "note": NOTE if i == 0 else "",
        }
        for i in range(n)
    ]


def widths(text):
    return [len(line) for line in text.splitlines()]


def test_fits_100_columns_by_wrapping_the_note():
    text = format_table(rows())
    assert max(widths(text)) <= 100
    # Every word of the note is still there, over several lines of its column.
    assert " ".join(text.split()).count("least squares on throughput") == 1
    assert len(text.splitlines()) > 2 + 3


def test_no_limit_keeps_one_line_per_row():
    text = format_table(rows(), width=None)
    assert len(text.splitlines()) == 2 + 3 and NOTE in text
    assert max(widths(text)) > 100


def test_numeric_columns_beyond_the_width_are_named_not_cut():
    many = [{f"column_{k}": 1.0 + k for k in range(30)} for _ in range(2)]
    text = format_table(many, width=60)
    lines = text.splitlines()
    assert max(widths(text)) <= 60
    start = next(i for i, line in enumerate(lines) if line.startswith("("))
    footer = " ".join(lines[start:])
    assert "more columns: " in footer and footer.endswith("column_29; --wide)")


def test_headers_wrap_at_underscores_when_the_values_are_narrow():
    table = [{"speedup_before": 1.5, "speedup_after": 2.5}] * 2
    assert format_table(table, width=20).splitlines()[0].split() == ["speedup_", "speedup_"]
    # With room, a header stays whole.
    assert "speedup_before" in format_table(table)


def test_seconds_and_spans():
    assert seconds(0.288e-6) == "288 ns" and seconds(3.1e-3) == "3.1 ms"
    assert seconds(float("inf")) == "unbounded"
    assert seconds(1e-300) == "1e-300 s" and seconds(2e-12) == "0.002 ns"  # "1e-291 ns"
    assert span(1.0, None, str) == "1.0–unbounded"


def test_counts_are_singular_for_one():
    assert counted(1, "GPU") == "1 GPU" and counted(1.0, "GPU") == "1 GPU"
    assert counted(8, "GPU") == "8 GPUs" and counted(0.5, "GPU-hour") == "0.5 GPU-hours"
    assert counted(1.0001, "GPU-hour", ".3g") == "1 GPU-hour"  # as it is printed
    assert counted(1, "collective group") == "1 collective group"


def test_a_text_column_wraps_between_words_never_inside_a_name():
    """A dataset's or parameter's name stays whole on one line (it is copied into the
    next command); the words beside it wrap instead, even where the name is the widest."""
    name = "tf_dgx1_p100_inceptionv3_synthetic_with_a_long_tail"
    rows = [{"name": name, "rows": 4, "quantity": "throughput (images per second)"}] * 2
    text = format_table(rows, width=70)
    lines = text.splitlines()
    assert sum(name in line for line in lines) == 2, text
    assert all(len(line) <= 70 for line in lines), text
