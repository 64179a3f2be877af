from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
import pytest

from perfmodel import bus_bandwidth_factor
from perfmodel._collective.nccl import COLUMNS, parse_nccl_tests
from perfmodel._errors import InputError

DATA = Path(__file__).parent / "data" / "nccl"
# Copy of /work/shared/data/nccl_tests_issue_tables.csv (provenance: SOURCES.md).
CSV = DATA / "nccl_tests_issue_tables.csv"
COLLECTIVES = (
    "all_reduce",
    "all_gather",
    "reduce_scatter",
    "all_to_all",
    "broadcast",
    "reduce",
    "send_recv",
)

# (log file, CSV source prefix, parse kwargs, n_ranks)
LOGS = [
    (
        "nccl_tests_78_all_reduce_256gpu.log",
        "https://github.com/NVIDIA/nccl-tests/issues/78 ",
        {"n_ranks": 256},
        256,
    ),
    (
        "nccl_1244_h20_16gpu_nvls.log",
        "https://github.com/NVIDIA/nccl/issues/1244 (description",
        {"collective": "all_reduce", "n_ranks": 16},
        16,
    ),
    (
        "nccl_1244_h20_16gpu_nvlstree_small.log",
        "https://github.com/NVIDIA/nccl/issues/1244 (comment",
        {"collective": "all_reduce", "n_ranks": 16},
        16,
    ),
    (
        "nccl_tests_44_2x2080ti.log",
        "https://github.com/NVIDIA/nccl-tests/issues/44 ",
        {},
        2,
    ),
]


def _numpy_factor(collective, n):
    n = np.asarray(n, dtype=np.float64)
    if collective == "all_reduce":
        return 2 * (n - 1) / n
    if collective in ("all_gather", "reduce_scatter", "all_to_all"):
        return (n - 1) / n
    return np.ones_like(n)


@pytest.mark.parametrize("name, source, kwargs, n", LOGS)
def test_logs_match_csv(name, source, kwargs, n):
    df = parse_nccl_tests(DATA / name, **kwargs)
    table = pd.read_csv(CSV)
    # The 2 GiB row of nccl-tests#78 lacks busbw and in-place values: not in the log.
    rows = table[table.source.str.startswith(source)].dropna(subset=["ip_time_us"])
    assert list(df.columns) == list(COLUMNS)
    assert len(df) == 2 * len(rows)
    assert (df.collective == "all_reduce").all() and (df.n_ranks == n).all()
    for placement, prefix in (("out_of_place", "oop"), ("in_place", "ip")):
        got = df[df.placement == placement].reset_index(drop=True)
        np.testing.assert_array_equal(got.message_bytes, rows.message_bytes)
        # Printed µs and GB/s scaled by 1e-6 and 1e9: equal up to float rounding.
        np.testing.assert_allclose(got.time_s, rows[f"{prefix}_time_us"] * 1e-6, 1e-12)
        for bw in ("algbw", "busbw"):
            want = rows[f"{prefix}_{bw}_GBps"] * 1e9
            np.testing.assert_allclose(got[f"{bw}_bytes_per_s"], want, rtol=1e-12)


@pytest.mark.parametrize("name, source, kwargs, n", LOGS)
def test_line_numbers_point_at_rows(name, source, kwargs, n):
    df = parse_nccl_tests(DATA / name, **kwargs)
    lines = (DATA / name).read_text().splitlines()
    for size, line in zip(df.message_bytes, df.line):
        assert int(lines[line - 1].split()[0]) == size


def test_text_input_equals_path_input():
    path = DATA / "nccl_tests_44_2x2080ti.log"
    from_text = parse_nccl_tests(path.read_text())
    pd.testing.assert_frame_equal(from_text, parse_nccl_tests(path))
    pd.testing.assert_frame_equal(from_text, parse_nccl_tests(str(path)))


RANKS4 = "\n".join(
    f"#  Rank {r:2d} Group  0 Pid {1000 + r:6d} on     node-a device {r:2d}"
    f" [0000:1{r}:00] NVIDIA H100 80GB HBM3"
    for r in range(4)
)
VARIANTS = f"""\
# nccl-tests version 2.13.8 nccl-headers=21903 nccl-library=21903
# Collective test starting: all_gather_perf
# nThread 1 nGpus 1 minBytes 1048576 maxBytes 2097152 step: 2(factor) warmup iters: 5
#
# Using devices
{RANKS4}
node-a:1000:1000 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>
#
# size count type redop root time algbw busbw #wrong time algbw busbw #wrong
1048576  65536  float  none  -1  20.00  52.43  39.32  N/A  21.00  49.93  37.45  N/A
10-0-0-1:1000:1003 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC
2097152  131072  float  none  -1  30.00  69.91  52.43  N/A  31.00  67.65  50.74  N/A
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 44.98
#
# Collective test concluded: all_gather_perf
./broadcast_perf -b 1M -e 1M -g 2
# nThread 1 nGpus 2 minBytes 1048576 maxBytes 1048576 step: 2(factor) warmup iters: 5
# Using devices
#   Rank  0 Pid   3795 on w-system device  0 [0x01] GeForce RTX 2080 Ti
#   Rank  1 Pid   3795 on w-system device  1 [0x02] GeForce RTX 2080 Ti
#  size  count  type  root  time  algbw  busbw  error  time  algbw  busbw  error
1048576  262144  float  0  50.00  20.97  20.97  0e+00  49.00  21.40  21.40  0e+00
# Collective test starting: alltoall_perf
# nThread 1 nGpus 1 minBytes 1048576 maxBytes 1048576 step: 2(factor) warmup iters: 5
# Using devices
{RANKS4}
# size count type redop root time algbw busbw #wrong time algbw busbw #wrong
1048576 65536 float -1 30.00 34.95 26.21 0 31.00 33.83 25.37 N/A 2025-01-02 03:04:05
"""


def test_format_variants_and_several_runs():
    df = parse_nccl_tests(VARIANTS)
    summary = df.groupby("collective").agg(n=("n_ranks", "first"), rows=("line", "size"))
    assert summary.to_dict("index") == {
        "all_gather": {"n": 4, "rows": 4},
        "all_to_all": {"n": 4, "rows": 2},
        "broadcast": {"n": 2, "rows": 2},
    }
    assert df.line.tolist() == [13, 13, 15, 15, 26, 26, 35, 35]
    last = df.iloc[-1]
    assert last.placement == "in_place" and last.time_s == pytest.approx(31e-6)


def test_per_iteration_columns():
    block = "time algbw busbw #wrong i_min i_max i_p99 i_cv%"
    values = "20.00 52.43 78.64 0 19.0 21.0 21.0 2.1"
    text = f"#  size count type redop root {block} {block}\n"
    text += f"1048576 262144 float sum -1 {values} {values}\n"
    df = parse_nccl_tests(text, collective="all_reduce", n_ranks=4)
    assert df.placement.tolist() == ["out_of_place", "in_place"]
    np.testing.assert_allclose(df.busbw_bytes_per_s, 78.64e9)


@pytest.mark.parametrize("collective", COLLECTIVES)
def test_factor_closed_forms(collective):
    n = [1, 2, 3, 8, 16, 256]
    with jax.enable_x64(True):
        got = bus_bandwidth_factor(collective, jnp.asarray(n, dtype=jnp.float64))
        assert got.dtype == jnp.float64
        np.testing.assert_allclose(got, _numpy_factor(collective, n), rtol=5e-7)
    got32 = bus_bandwidth_factor(collective, jnp.asarray(n, dtype=jnp.float32))
    assert got32.dtype == jnp.float32
    np.testing.assert_allclose(got32, _numpy_factor(collective, n), rtol=5e-4)


@pytest.mark.parametrize("collective", COLLECTIVES)
def test_factor_jit_and_vmap_equal_eager(collective):
    n = jnp.asarray([1.0, 2.0, 5.0, 8.0, 1024.0])
    eager = bus_bandwidth_factor(collective, n)
    jitted = jax.jit(bus_bandwidth_factor, static_argnums=0)(collective, n)
    mapped = jax.vmap(lambda m: bus_bandwidth_factor(collective, m))(n)
    np.testing.assert_array_equal(jitted, eager)
    np.testing.assert_array_equal(mapped, eager)


def test_factor_integer_input_and_gradient():
    assert jnp.issubdtype(bus_bandwidth_factor("all_reduce", 4).dtype, jnp.floating)
    assert float(bus_bandwidth_factor("all_reduce", 4)) == 1.5
    grad = jax.grad(lambda n: bus_bandwidth_factor("all_reduce", n))(1.0)
    assert float(grad) == 2.0  # d/dn 2(n−1)/n = 2/n²


def test_unknown_collective():
    with pytest.raises(InputError, match="unknown collective 'allreduce'"):
        bus_bandwidth_factor("allreduce", 4)
    with pytest.raises(InputError, match="unknown collective"):
        parse_nccl_tests(DATA / "nccl_tests_44_2x2080ti.log", collective="allreduce")


AR = {"collective": "all_reduce"}


@pytest.mark.parametrize(
    "name, kwargs, match",
    [
        (
            "malformed_truncated_row.log",
            AR | {"n_ranks": 256},
            r"line 10: expected 11 to 13 fields.*got 6",
        ),
        (
            "malformed_bad_number.log",
            AR | {"n_ranks": 16},
            r"line 6: .*time \(us\), got '11O8.0'",
        ),
        ("does_not_exist.log", {}, r"does_not_exist.log: file not found"),
        (
            "nccl_tests_78_all_reduce_256gpu.log",
            {"n_ranks": 2},
            r"line 11: out_of_place busbw 45.65 GB/s does not match",
        ),
        ("nccl_tests_78_all_reduce_256gpu.log", {}, r"line 11: .*pass n_ranks="),
        ("nccl_tests_44_2x2080ti.log", {"n_ranks": 1}, r"line 9: .*2 ranks"),
        ("nccl_tests_44_2x2080ti.log", {"n_ranks": 4}, r"line 14: .*for 4 ranks"),
        ("nccl_tests_44_2x2080ti.log", {"collective": "broadcast"}, r"line 4: "),
        ("nccl_1244_h20_16gpu_nvls.log", {"n_ranks": 16}, r"line 9: .*collective="),
    ],
)
def test_bad_files_raise_with_line(name, kwargs, match):
    with pytest.raises(InputError, match=match):
        parse_nccl_tests(DATA / name, **kwargs)


HEAD = "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n"


@pytest.mark.parametrize(
    "row, match",
    [
        ("1024 256 float sum -1 0.00 0.00 0.00 0 5.00 0.20 0.20 0", "time > 0"),
        ("1024 256 float sum -1 -5.0 0.20 0.20 0 5.00 0.20 0.20 0", "time > 0"),
        ("1024 256 float sum -1 1e-320 0.2 0.2 0 5.00 0.20 0.20 0", "time 1e-320 us is below"),
        ("10x4 256 float sum -1 5.00 0.20 0.20 0 5.00 0.20 0.20 0", "integer for size"),
        ("1024 256 4 sum -1 5.00 0.20 0.20 0 5.00 0.20 0.20 0", "data type name"),
        ("1024 256 float sum -1 5.00 0.20 nan 0 5.00 0.20 0.20 0", "busbw"),
        ("1024 256 float sum -1 5.00 0.20 0.20 ok 5.00 0.20 0.20 0", "#wrong"),
        ("1024 256 float sum -1 5.00 0.20 0.20 0 5.00 0.20", "root.*got 11"),
        ("1024 256 float sum 5.00 0.20 0.20 0 5.00 0.20 0.20 0", "root.*got 12"),
        # A time or size far from what algbw says: fitted to "MAPE 5.8e+296", exit 0.
        ("1024 256 float sum -1 1e-300 0.20 0.20 0 5.00 0.20 0.20 0", "algbw 0.2 GB/s does"),
        (f"{2**70} 256 float sum -1 5.00 0.20 0.20 0 5.00 0.20 0.20 0", "does not match size"),
        ("1024 256 flot sum -1 5.00 0.20 0.20 0 5.00 0.20 0.20 0", "data type 'flot' is not"),
        ("1024 256 float bogus -1 5.00 0.20 0.20 0 5.00 0.20 0.20 0", "reduction 'bogus' is not"),
        ("1024 256 float sum -1 5.00 0.20 0.20 -1 5.00 0.20 0.20 0", "#wrong is -1; expected"),
    ],
)
def test_bad_rows_raise_with_line(row, match):
    with pytest.raises(InputError, match=rf"<text> line 2: .*{match}"):
        parse_nccl_tests(HEAD + row + "\n", collective="all_reduce", n_ranks=2)


def test_no_rows_and_bad_arguments():
    with pytest.raises(InputError, match="no nccl-tests data rows"):
        parse_nccl_tests(HEAD + "# Avg bus bandwidth    : 0 \n")
    with pytest.raises(InputError, match="n_ranks must be an integer"):
        parse_nccl_tests(HEAD, n_ranks=0)
    assert issubclass(InputError, ValueError)


def test_unsupported_binary_is_not_mislabelled():
    text = "./gather_perf -b 1M -e 1M\n" + HEAD
    text += "1024 256 float none 0 5.00 0.20 0.20 0 5.00 0.20 0.20 0\n"
    with pytest.raises(InputError, match="line 3: rows of gather_perf"):
        parse_nccl_tests(text, n_ranks=2)


def test_n_ranks_may_exceed_cut_rank_lines():
    # A pasted 16-rank log that keeps only the first two `#  Rank` lines.
    text = "\n".join(RANKS4.splitlines()[:2]) + "\n"
    text += (DATA / "nccl_1244_h20_16gpu_nvls.log").read_text()
    df = parse_nccl_tests(text, collective="all_reduce", n_ranks=16)
    assert len(df) == 20 and (df.n_ranks == 16).all()
    with pytest.raises(InputError, match=r"line 11: .*for 2 ranks.*n_ranks ≈ 1[56]"):
        parse_nccl_tests(text, collective="all_reduce")
