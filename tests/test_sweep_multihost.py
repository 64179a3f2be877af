"""`sweep` on a multi-process JAX cluster: two processes on this host, two CPU devices each.

Each process runs the same script after `jax.distributed.initialize` (gloo collectives
between the CPU processes) and must get the whole result, equal to a one-device sweep.
"""

import json
import os
import socket
import subprocess
import sys
import textwrap
import time

import jax
import numpy as np
import pandas as pd
import pytest
from test_sweep import AXES, FIXED, OPTIONS, TOP

import perfmodel as pm

PROCESSES = 2
PER = ["gpus", "pp"]
# Rows of 3 configurations, one row per chunk: hundreds of chunks per device, so the
# stream makes several calls whose sizes follow the measured time.
CHUNK = 5
# Process 1's stream sees its clock run this much faster (a slower host): without an
# agreement on the call sizes the processes would walk different chunks per call.
SKEW = 50.0
TIMEOUT_S = 240

WORKER = textwrap.dedent(
    """
    import json, sys, time, types
    import jax

    port, index, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    jax.config.update("jax_enable_x64", True)
    try:
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
    except AttributeError as error:  # a JAX without collectives between CPU processes
        print("no CPU collectives:", error)
        sys.exit(77)
    jax.distributed.initialize(
        coordinator_address=f"localhost:{port}", num_processes=%(processes)d,
        process_id=index,
    )
    assert jax.process_count() == %(processes)d and len(jax.local_devices()) == 2

    import perfmodel as pm
    import perfmodel._sweep.stream

    refused = ""
    if index == 0:  # devices of process 1 only: nothing this process could read back
        try:
            pm.sweep(pm.amdahl(), {"gpus": [1, 2]}, devices=jax.devices()[2:])
        except pm.InputError as error:
            refused = str(error)
    ticks = [0]
    if index == 1:
        def skewed():
            ticks[0] += 1
            return %(skew)r * time.perf_counter()
        clock = types.ModuleType("time")
        clock.__dict__.update(vars(time), perf_counter=skewed)
        perfmodel._sweep.stream.time = clock
    found = pm.sweep(
        pm.hybrid_basic(**%(options)r), %(axes)r, fixed=%(fixed)r, per=%(per)r, top_k=%(top)d,
        pareto=True, precision="float64", chunk_size=%(chunk)d, progress=False,
    )
    tables = {"best": found.best, "top": found.top, "pareto": found.pareto}
    tables |= {"per_" + n: t for n, t in found.per_axis.items()}
    with open(out, "w") as f:
        json.dump({
            "tables": {n: t.to_dict(orient="split") for n, t in tables.items()},
            "counts": [found.evaluated, found.valid, found.feasible],
            "devices": list(found.devices),
            "ticks": ticks[0],
            "refused": refused,
        }, f, default=lambda v: v.item())  # NumPy scalars; floats are written exactly
    """
) % dict(
    processes=PROCESSES,
    skew=SKEW,
    options=OPTIONS,
    axes=AXES,
    fixed=FIXED,
    per=PER,
    top=TOP,
    chunk=CHUNK,
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def _tables(document) -> dict[str, pd.DataFrame]:
    return {n: pd.DataFrame(t["data"], columns=t["columns"]) for n, t in document["tables"].items()}


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    """The documents the processes wrote, process 0 first."""
    where = tmp_path_factory.mktemp("multihost")
    port = _free_port()
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    env["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
    paths = [where / f"process{i}.json" for i in range(PROCESSES)]
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(port), str(i), str(paths[i])],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for i in range(PROCESSES)
    ]
    logs, deadline = [], time.monotonic() + TIMEOUT_S
    try:
        for worker in workers:
            logs.append(worker.communicate(timeout=max(1.0, deadline - time.monotonic()))[0])
    except subprocess.TimeoutExpired:
        for worker in workers:
            worker.kill()
        tails = [w.communicate()[0][-2000:] for w in workers]
        pytest.fail(f"the processes did not finish in {TIMEOUT_S} s: {tails}")
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
                worker.wait()
    codes = [w.returncode for w in workers]
    if 77 in codes:
        pytest.skip(f"this JAX has no collectives between CPU processes: {logs}")
    assert codes == [0] * PROCESSES, [log[-3000:] for log in logs]
    return [json.loads(path.read_text()) for path in paths]


@pytest.fixture(scope="module")
def single():
    """The same sweep in this process on one device."""
    return pm.sweep(
        pm.hybrid_basic(**OPTIONS),
        AXES,
        fixed=FIXED,
        per=PER,
        top_k=TOP,
        precision="float64",
        chunk_size=CHUNK,
        devices=jax.devices()[:1],
        progress=False,
    )


@pytest.mark.slow
def test_every_process_gets_the_one_device_result(outputs, single):
    expected = {"best": single.best, "top": single.top, "pareto": single.pareto}
    expected |= {"per_" + n: t for n, t in single.per_axis.items()}
    for document in outputs:
        assert len(document["devices"]) == 2 * PROCESSES
        assert document["counts"] == [single.evaluated, single.valid, single.feasible]
        found = _tables(document)
        assert sorted(found) == sorted(expected)
        for name, table in expected.items():
            got = found[name]
            assert list(got.columns) == list(table.columns), name
            assert len(got) == len(table) and len(table) > 0, name
            for column in table.columns:
                want, have = table[column].to_numpy(), got[column].to_numpy()
                if want.dtype.kind == "f":
                    np.testing.assert_allclose(have.astype(float), want, rtol=1e-12)
                else:
                    assert [str(v) for v in have] == [str(v) for v in want], (name, column)
    # The skewed clock was in use, so the call sizes had to be agreed on.
    assert outputs[1]["ticks"] > 0 and outputs[0]["ticks"] == 0


@pytest.mark.slow
def test_devices_of_other_processes_only_are_an_input_error(outputs):
    assert outputs[0]["refused"] == (
        "devices: none belongs to this process (0); on a multi-host cluster every process "
        "passes the same devices, including some of its own"
    )


@pytest.mark.slow
def test_cli_distributed_writes_once_the_one_process_result(tmp_path, capsys):
    space = tmp_path / "space.toml"
    space.write_text(
        '[model]\nfamily = "amdahl"\n[fixed]\n"serial.time" = 0.01\n"compute.time" = 1.0\n'
        "[axes]\ngpus = [1, 2, 4, 8, 16, 32, 64]\n[sweep]\nprecision = 'float64'\n"
    )
    port = _free_port()
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    env["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
    outputs = [tmp_path / f"out{i}.json" for i in range(PROCESSES)]
    command = [sys.executable, "-m", "perfmodel", "sweep", str(space), "--distributed"]
    workers = [
        subprocess.Popen(
            [
                *command,
                "--coordinator",
                f"localhost:{port}",
                "--num-processes",
                str(PROCESSES),
                "--process-id",
                str(i),
                "-o",
                str(outputs[i]),
            ],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(PROCESSES)
    ]
    try:
        logs = [w.communicate(timeout=TIMEOUT_S) for w in workers]
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
                worker.wait()
    assert [w.returncode for w in workers] == [0] * PROCESSES, logs
    assert outputs[0].exists() and not outputs[1].exists()

    # Only process 0 reports. Gloo prints its own connection lines, from several threads
    # at once, so they may cut into each other anywhere: check that none of what process 0
    # printed shows up in process 1's output.
    def ours(line: str) -> bool:  # not a piece of a Gloo line ("… connected to 3 peer ranks")
        return bool(line.strip()) and not any(
            word in line for word in ("[Gloo]", "Gloo", "peer rank", "connected")
        )

    # Lines that are surely process 0's own (a cut-off piece of a Gloo line, "ks is : 3",
    # passes `ours` and is in process 1's output too).
    reported = [
        x for x in logs[0][0].splitlines() if ours(x) and ("configurations" in x or "best per" in x)
    ]
    assert reported and "wrote" in logs[0][1]  # the message on stderr, the tables on stdout
    assert not any(x in logs[1][0] for x in reported), logs[1]
    from perfmodel._cli import main

    alone = tmp_path / "alone.json"
    assert main(["sweep", str(space), "-o", str(alone), "--json"]) == 0
    capsys.readouterr()
    together, expected = json.loads(outputs[0].read_text()), json.loads(alone.read_text())
    assert together["top"] == expected["top"] and together["evaluated"] == 7
    assert len(together["devices"]) == 2 * PROCESSES


def test_cluster_options_need_distributed(tmp_path, capsys):
    from perfmodel._cli import main

    assert main(["sweep", str(tmp_path / "x.toml"), "--process-id", "1"]) == 2
    assert "--process-id: only with --distributed" in capsys.readouterr().err
    assert main(["sweep", str(tmp_path / "x.toml"), "--distributed", "--coordinator", "h"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["perfmodel: error: --coordinator: expected HOST:PORT, got 'h'"]
