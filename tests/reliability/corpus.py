"""The attacks of issue #13, one case per defect class and command.

Every case names its class (the issue's bullet), the command line, the files it starts
from and what the contract expects: a clean refusal naming the file or field, a correct
answer, or either. `harness.py` runs and judges them; `test_reliability.py` is the
pytest over `CASES`. Static inputs live in files/ (see make_files.py); edited fit files
and odd CSVs are generated here from files/fit.json and short strings.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
import subprocess
import sys

from .harness import (
    Case,
    FILES,
    Outcome,
    run_inprocess,
    strict_json,
    subprocess_env,
    Unsupported,
)

FIT_FILE = "fit.json"
CASES: list[Case] = []


def add(*cases: Case) -> None:
    known = {c.id for c in CASES}
    for case in cases:
        assert case.id not in known, case.id
        known.add(case.id)
        CASES.append(case)


# --------------------------------------------------------------------------------------
# Building blocks


def base_fit() -> dict:
    return json.loads((FILES / FIT_FILE).read_text())


def edited_fit(edit):
    """A writer of files/fit.json after `edit(document)` (NaN/Infinity written as such)."""

    def write(path: Path) -> None:
        document = base_fit()
        edit(document)
        path.write_text(json.dumps(document, indent=2, allow_nan=True))

    return write


def set_value(name: str, value):
    def edit(document):
        document["parameters"][name]["value"] = value

    return edit


def setter(*keys, value):
    def edit(document):
        target = document
        for key in keys[:-1]:
            target = target[key]
        target[keys[-1]] = value

    return edit


def amdahl_csv(scale: float = 1.0, column: str = "time_s", gpus=(1, 2, 4, 8, 16, 32)) -> str:
    """Exact Amdahl data, t = scale·(0.1 + 0.9/N) (or its inverse for throughput)."""
    rows = []
    for n in gpus:
        t = scale * (0.1 + 0.9 / n)
        value = 1.0 / t if column == "throughput" else t
        rows.append(f"{n},{value!r}")
    return f"gpus,{column}\n" + "\n".join(rows) + "\n"


def space(body: str) -> str:
    return body.strip() + "\n"


AMDAHL_SPACE = '[model]\nfamily = "amdahl"\n'
FIT = ["--model", "amdahl", "--starts", "4"]
FIT_FILES = {"bench.csv": "@bench.csv"}
SAVED = {FIT_FILE: "@fit.json"}
SWEEP_FILES = {FIT_FILE: "@fit.json", "space.toml": "@space.toml"}

COMMANDS = {  # every command that reads a fit file, with a cheap command line
    "predict": ["predict", FIT_FILE, "--gpus", "1,8,64"],
    "optimal": ["optimal", FIT_FILE],
    "explain": ["explain", FIT_FILE, "--gpus", "64"],
    "require": ["require", FIT_FILE, "--param", "gpus", "--efficiency", "0.5"],
    "whatif": ["whatif", FIT_FILE, "--set", "serial.time=x0.5", "--gpus", "1,8"],
    "next": ["next", FIT_FILE, "--candidates", "64,128"],
    "plot": ["plot", FIT_FILE, "-o", "p.png"],
    "report": ["report", FIT_FILE, "-o", "r.html"],
    "sweep": ["sweep", "space.toml"],
}


def with_json(argv):
    return [*argv, "--json"]


# Read-only: chmod for ordinary users; root ignores modes, so chattr +i (immutable) there.


def _immutable(path: Path, on: bool) -> None:
    if os.geteuid() != 0:
        if on:
            os.chmod(path, 0o555 if path.is_dir() else 0o444)
        else:
            os.chmod(path, 0o755 if path.is_dir() else 0o644)
        return
    done = subprocess.run(["chattr", "+i" if on else "-i", str(path)], capture_output=True)
    if on and done.returncode != 0:
        raise Unsupported(f"chattr +i {path}: {done.stderr.decode().strip()}")


def read_only(name: str):
    def setup(folder: Path) -> None:
        path = folder / name
        if not path.exists():
            path.mkdir()
        _immutable(path, True)

    def teardown(folder: Path) -> None:
        if (folder / name).exists():
            _immutable(folder / name, False)

    return setup, teardown


def make_dir(name: str):
    def setup(folder: Path) -> None:
        (folder / name).mkdir()

    return setup


# An input that exists, is a file, and cannot be read (EIO): works for root too.
UNREADABLE = "/proc/self/mem"


# Answer checks ---------------------------------------------------------------------------


def fit_document(outcome: Outcome) -> dict:
    return strict_json(outcome.out)


def good_fit(max_mape: float):
    """The printed fit has a finite R² and a MAPE under `max_mape` percent."""

    def check(outcome, folder):
        quality = fit_document(outcome)["quality"]
        if quality["r2"] is None or not math.isfinite(quality["r2"]):
            return f"R² is {quality['r2']}"
        if not quality["mape_percent"] < max_mape:
            return f"MAPE {quality['mape_percent']:.3g}% (expected < {max_mape}%)"
        return None

    return check


def read_gpus(expected):
    def check(outcome, folder):
        gpus = fit_document(outcome)["data"]["gpus"]
        if gpus != expected:
            return f"read gpus {gpus}, expected {expected}"
        return None

    return check


# --------------------------------------------------------------------------------------
# Fit files are trusted as written

K = "fit-file"
for command, argv in COMMANDS.items():
    files = SWEEP_FILES if command == "sweep" else SAVED
    add(
        Case(
            f"{K}.negative-value.{command}",
            K,
            argv,
            {**files, FIT_FILE: edited_fit(set_value("serial.time", -0.08))},
            names=(FIT_FILE, "serial.time"),
            what="parameters.serial.time.value edited to -0.08",
        )
    )
for edit_name, value, commands in (
    ("nan-value", math.nan, ("predict", "optimal", "explain", "plot")),
    ("infinite-value", math.inf, ("predict", "whatif", "next")),
    ("1e308-value", 1e308, ("predict", "require")),
    ("zero-value", 0.0, ("predict",)),
):
    for command in commands:
        argv = COMMANDS[command]
        if command in ("predict", "explain") and edit_name != "zero-value":
            argv = with_json(argv)
        add(
            Case(
                f"{K}.{edit_name}.{command}",
                K,
                argv,
                {FIT_FILE: edited_fit(set_value("compute.time", value))},
                names=(FIT_FILE, "compute.time"),
                what=f"parameters.compute.time.value edited to {value!r}",
            )
        )


def _delete_parameter(document):
    del document["parameters"]["compute.time"]


def _parameters_as_list(document):
    document["parameters"] = list(document["parameters"].values())


def _data_lengths(document):
    document["data"]["time_s"] = document["data"]["time_s"][:-2]


def _negative_data(document):
    document["data"]["time_s"][1] = -0.5


for slug, edit, argv, names, what in (
    (
        "deleted-parameter",
        _delete_parameter,
        COMMANDS["predict"],
        ("compute.time",),
        "parameters.compute.time deleted",
    ),
    (
        "parameters-list",
        _parameters_as_list,
        COMMANDS["predict"],
        ("parameters",),
        "parameters written as a list of objects",
    ),
    (
        "covariance-shape",
        setter("raw_covariance", value=[[1.0]]),
        [*COMMANDS["predict"], "--interval", "0.9"],
        ("raw_covariance",),
        "raw_covariance 1×1 for 2 free parameters",
    ),
    (
        "unknown-free",
        setter("free", value=["serial.time", "nope"]),
        COMMANDS["next"],
        ("nope",),
        "free lists a parameter the model lacks",
    ),
    (
        "version-string",
        setter("schema_version", value="1"),
        COMMANDS["predict"],
        ("schema_version",),
        'schema_version "1"',
    ),
    (
        "version-float",
        setter("schema_version", value=1.0),
        COMMANDS["predict"],
        ("schema_version",),
        "schema_version 1.0",
    ),
    (
        "version-bool",
        setter("schema_version", value=True),
        COMMANDS["predict"],
        ("schema_version",),
        "schema_version true",
    ),
    (
        "unknown-family",
        setter("model", "family", value="amdahl2"),
        COMMANDS["predict"],
        ("amdahl2",),
        "model.family unknown",
    ),
    (
        "string-option",
        setter("model", "options", "weak", value="no"),
        COMMANDS["predict"],
        ("weak",),
        'model.options.weak = "no" (truthy)',
    ),
    (
        "unknown-option",
        setter("model", "options", "bogus", value=1),
        COMMANDS["predict"],
        ("bogus",),
        "model.options.bogus",
    ),
    (
        "data-lengths",
        _data_lengths,
        COMMANDS["predict"],
        ("time_s",),
        "data.time_s shorter than data.gpus",
    ),
    ("negative-data", _negative_data, COMMANDS["predict"], ("time_s",), "data.time_s[1] = -0.5"),
    (
        "string-value",
        set_value("serial.time", "fast"),
        COMMANDS["predict"],
        ("serial.time",),
        'parameters.serial.time.value = "fast"',
    ),
    (
        "missing-model",
        lambda d: d.pop("model"),
        COMMANDS["predict"],
        ("model",),
        "the model key deleted",
    ),
):
    add(
        Case(
            f"{K}.{slug}.{argv[0]}",
            K,
            argv,
            {FIT_FILE: edited_fit(edit)},
            names=(FIT_FILE, *names),
            what=what,
        )
    )

add(
    Case(
        f"{K}.deep-nesting.predict",
        K,
        COMMANDS["predict"],
        {FIT_FILE: "[" * 200_000 + "]" * 200_000},
        names=(FIT_FILE,),
        what="200,000 nested brackets",
    ),
    Case(
        f"{K}.not-a-fit.predict",
        K,
        COMMANDS["predict"],
        {FIT_FILE: '{"format": "something else"}'},
        names=(FIT_FILE,),
        what="a JSON object of another format",
    ),
)


# --------------------------------------------------------------------------------------
# Fit files that are not JSON: what fit (and friends) write must parse strictly

K = "strict-json"
UNDETERMINED = ["--model", "weak_data_parallel", "--loss", "squared", "--starts", "4"]
add(
    Case(
        f"{K}.quickstart.fit",
        K,
        ["fit", "vgg16.csv", "--json"],
        {"vgg16.csv": "@vgg16.csv"},
        expect="answer",
        slow=True,  # the default fit compiles every family: about 30 s on 2 cores
        what="the README quick-start dataset, default fit, --json",
    ),
    Case(
        f"{K}.undetermined-json.fit",
        K,
        ["fit", "vgg16.csv", *UNDETERMINED, "--json"],
        {"vgg16.csv": "@vgg16.csv"},
        expect="answer",
        slow=True,  # 9 s; undetermined-file.fit is the CI one
        what="quick-start data, allreduce.transfer undetermined (infinite variance), --json",
    ),
    Case(
        f"{K}.undetermined-file.fit",
        K,
        ["fit", "vgg16.csv", *UNDETERMINED, "-o", FIT_FILE],
        {"vgg16.csv": "@vgg16.csv"},
        expect="answer",
        outputs=(FIT_FILE,),
        slow=True,  # 8 s: the default fit compiles every family; the slow run checks it
        what="quick-start data, allreduce.transfer undetermined, -o",
    ),
    Case(
        f"{K}.exact-data.fit",
        K,
        ["fit", "exact.csv", "--model", "amdahl", "--starts", "4", "-o", FIT_FILE, "--json"],
        {"exact.csv": "gpus,time_s\n" + "".join(f"{n},{1 / n!r}\n" for n in (1, 2, 4, 8, 16, 32))},
        expect="answer",
        outputs=(FIT_FILE,),
        check=good_fit(1e-3),
        slow=True,  # 7 s; tests/test_fit.py's exact fits are the CI ones
        what="time = 1/N exactly (no serial part): an exact fit",
    ),
    Case(
        f"{K}.outlier.fit",
        K,
        ["fit", "outlier.csv", "--model", "amdahl", "--starts", "4", "-o", FIT_FILE],
        {"outlier.csv": "gpus,time_s\n1,1.0\n2,0.52\n4,290\n8,0.18\n16,0.13\n32,0.115\n"},
        expect="answer",
        outputs=(FIT_FILE,),
        slow=True,  # 5 s; tests/test_collective_fit.py names an outlier in the default run
        what="one time 1000× too large",
    ),
    Case(
        f"{K}.bound-excludes-data.fit",
        K,
        [
            "fit",
            "bench.csv",
            "--model",
            "amdahl",
            "--starts",
            "8",
            "--bound",
            "serial.time=10:20",
            "-o",
            FIT_FILE,
        ],
        FIT_FILES,
        expect="either",
        outputs=(FIT_FILE,),
        names=("serial.time",),
        slow=True,  # 9 s; tests/test_fit.py's bounded fits are the CI ones
        what="--bound serial.time=10:20 on data whose step takes at most 1 s",
    ),
    Case(
        f"{K}.joint.fit",
        K,
        ["fit", "joint.csv", "--with-collective", "ring8.log", "--starts", "4", "-o", FIT_FILE],
        {"joint.csv": "@joint_noserial.csv", "ring8.log": "@ring8.log"},
        expect="answer",
        outputs=(FIT_FILE,),
        slow=True,  # a joint fit compiles its own loss: about 10 s
        what="joint fit with nccl-tests, serial.time undetermined",
    ),
)


# --------------------------------------------------------------------------------------
# Output paths

K = "output-path"
WRITERS = {  # command -> (argv with OUT for the output, files, extension)
    "fit": (["fit", "bench.csv", *FIT, "-o", "OUT"], FIT_FILES, ".json"),
    "fit-report": (["fit", "bench.csv", *FIT, "--report", "OUT"], FIT_FILES, ".html"),
    "whatif": (
        ["whatif", FIT_FILE, "--set", "serial.time=x0.5", "--gpus", "1,8", "-o", "OUT"],
        SAVED,
        ".json",
    ),
    "plot": (["plot", FIT_FILE, "-o", "OUT"], SAVED, ".png"),
    "report": (["report", FIT_FILE, "-o", "OUT"], SAVED, ".html"),
    "sweep": (["sweep", "space.toml", "-o", "OUT"], SWEEP_FILES, ".json"),
    "fit-collective": (
        ["fit-collective", "ring8.log", "-o", "OUT"],
        {"ring8.log": "@ring8.log"},
        ".json",
    ),
}


def writer(command: str, out: str):
    argv, files, ext = WRITERS[command]
    out = out.replace("EXT", ext)
    return [a.replace("OUT", out) for a in argv], dict(files), out


for command in WRITERS:
    argv, files, out = writer(command, "outEXT")
    add(
        Case(
            f"{K}.existing-directory.{command}",
            K,
            argv,
            files,
            setup=make_dir(out),
            names=(out,),
            slow=command in ("fit-report", "fit-collective"),  # same cause, 5-8 s each
            what=f"the output {out} is an existing directory",
        )
    )
for command in ("whatif", "fit", "sweep"):
    argv, files, out = writer(command, "ro/outEXT")
    setup, teardown = read_only("ro")
    add(
        Case(
            f"{K}.read-only-directory.{command}",
            K,
            argv,
            files,
            setup=setup,
            teardown=teardown,
            names=(out,),
            what="the output's directory is read-only",
        )
    )
argv, files, out = writer("whatif", "outEXT")
setup, teardown = read_only(out)
add(
    Case(
        f"{K}.read-only-file.whatif",
        K,
        argv,
        {**files, out: "@fit.json"},
        setup=setup,
        teardown=teardown,
        names=(out,),
        what="the output exists and is read-only",
    )
)
for command in ("whatif", "sweep"):
    argv, files, out = writer(command, "n" * 300 + "EXT")
    add(
        Case(
            f"{K}.name-too-long.{command}",
            K,
            argv,
            files,
            names=(out[:40],),
            what="an output file name of 300 characters",
        )
    )
for command, folder in (("whatif", "/proc"), ("report", "/proc"), ("fit", "/sys")):
    argv, files, out = writer(command, f"{folder}/outEXT")
    add(
        Case(
            f"{K}.{folder.strip('/')}.{command}",
            K,
            argv,
            files,
            names=(out,),
            what=f"an output in {folder}, where no file can be created",
        )
    )
for command in ("whatif", "sweep"):
    argv, files, out = writer(command, "outEXT")
    add(
        Case(
            f"{K}.disk-full.{command}",
            K,
            argv,
            files,
            mode="limited",
            fsize=64,
            names=(out,),
            slow=command == "whatif",  # 9 s (a fit first); disk-full.sweep is the CI one
            what="the disk fills after 64 bytes (RLIMIT_FSIZE)",
        )
    )
add(
    Case(
        f"{K}.output-is-input.fit",
        K,
        ["fit", "bench.csv", *FIT, "-o", "bench.csv"],
        FIT_FILES,
        names=("bench.csv",),
        what="-o names the input CSV",
    ),
    Case(
        f"{K}.output-is-input.whatif",
        K,
        ["whatif", FIT_FILE, "--set", "serial.time=x0.5", "--gpus", "1,8", "-o", FIT_FILE],
        SAVED,
        names=(FIT_FILE,),
        what="-o names the input fit",
    ),
    Case(
        f"{K}.output-is-input.sweep",
        K,
        ["sweep", "space.toml", "-o", "space.toml"],
        SWEEP_FILES,
        names=("space.toml",),
        what="-o names the space file",
    ),
    Case(
        f"{K}.report-fails-after-fit.fit",
        K,
        ["fit", "bench.csv", *FIT, "-o", FIT_FILE, "--report", "rdir.html"],
        FIT_FILES,
        setup=make_dir("rdir.html"),
        names=("rdir.html",),
        what="--report names a directory: the fit must not be written either",
    ),
    Case(
        f"{K}.unreadable-input.fit",
        K,
        ["fit", UNREADABLE, *FIT],
        {},
        names=(UNREADABLE,),
        what="an input CSV that exists and cannot be read",
    ),
    Case(
        f"{K}.unreadable-input.predict",
        K,
        ["predict", UNREADABLE, "--gpus", "1"],
        {},
        names=(UNREADABLE,),
        what="an input fit that exists and cannot be read",
    ),
    Case(
        f"{K}.unreadable-input.sweep",
        K,
        ["sweep", UNREADABLE],
        {},
        names=(UNREADABLE,),
        what="a space file that exists and cannot be read",
    ),
    Case(
        f"{K}.unreadable-input.fit-collective",
        K,
        ["fit-collective", UNREADABLE],
        {},
        names=(UNREADABLE,),
        what="an nccl-tests log that cannot be read",
    ),
)


# kill -9 during a write, and eight writers at once -------------------------------------

KILLER = (
    "import os, signal, sys\n"
    "def kill(*args, **kwargs):\n"
    "    os.kill(os.getpid(), signal.SIGKILL)\n"
    "os.replace = os.rename = kill\n"
    "from perfmodel._cli import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


def _temporaries(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".") and "tmp" in p.name)


def kill_during_write(argv: list[str], output: str):
    """kill -9 the moment the output would be renamed into place, then run once more."""

    def run(folder: Path):
        old = (folder / output).read_bytes()
        done = subprocess.run(
            [sys.executable, "-c", KILLER, *argv],
            cwd=folder,
            env=subprocess_env(),
            capture_output=True,
            text=True,
            timeout=120,
        )
        problems = []
        if (folder / output).read_bytes() != old:
            try:
                strict_json((folder / output).read_text())
            except ValueError:
                problems.append(f"{output} is neither the old file nor a complete new one")
        left = _temporaries(folder)
        again = run_inprocess(argv, folder)
        if again.rc != 0:
            problems.append(f"the next run failed (exit {again.rc})")
        still = _temporaries(folder)
        if still:
            problems.append(f"temporary {still[0]} from the kill is still there after a new run")
        note = f"killed: exit {done.returncode}; left {left or 'nothing'}"
        return problems, Outcome(done.returncode, done.stdout, done.stderr, note=note)

    return run


CONCURRENT = (
    "import os, sys\n"
    "from perfmodel._io import load_fit, save_fit\n"
    "fit = load_fit('fit.json')\n"
    "children = []\n"
    "for _ in range(8):\n"
    "    pid = os.fork()\n"
    "    if pid == 0:\n"
    "        status = 0\n"
    "        try:\n"
    "            for _ in range(10):\n"
    "                save_fit(fit, 'out.json')\n"
    "        except BaseException as error:\n"
    "            print(repr(error), file=sys.stderr)\n"
    "            status = 1\n"
    "        os._exit(status)\n"
    "    children.append(pid)\n"
    "codes = [os.waitpid(pid, 0)[1] for pid in children]\n"
    "print(codes)\n"
    "sys.exit(1 if any(codes) else 0)\n"
)


def concurrent_writers(folder: Path):
    """Eight processes (forked after one import) each write out.json ten times at once."""
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", CONCURRENT],
        cwd=folder,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    problems = [] if done.returncode == 0 else [f"writers failed: {done.stdout.strip()}"]
    try:
        strict_json((folder / "out.json").read_text())
    except (OSError, ValueError) as error:
        problems.append(f"out.json is not a valid file after 8 writers ({error})")
    if _temporaries(folder):
        problems.append(f"temporaries left: {_temporaries(folder)}")
    return problems, Outcome(done.returncode, done.stdout, done.stderr[-2000:])


add(
    Case(
        f"{K}.kill-9.fit",
        K,
        ["fit", "bench.csv", *FIT, "-o", FIT_FILE],
        {**FIT_FILES, **SAVED},
        mode="custom",
        api=kill_during_write(["fit", "bench.csv", *FIT, "-o", FIT_FILE], FIT_FILE),
        slow=True,  # a subprocess fit, then a fit here: kill-9.whatif is the CI one
        what="kill -9 between writing and renaming fit -o; then fit -o again",
    ),
    Case(
        f"{K}.kill-9.whatif",
        K,
        None,
        {**SAVED, "out.json": "@fit.json"},
        mode="custom",
        api=kill_during_write(
            ["whatif", FIT_FILE, "--set", "serial.time=x0.5", "--gpus", "1", "-o", "out.json"],
            "out.json",
        ),
        what="kill -9 between writing and renaming whatif -o; then whatif -o again",
    ),
    Case(
        f"{K}.concurrent-writers.save_fit",
        K,
        None,
        SAVED,
        mode="custom",
        api=concurrent_writers,
        slow=True,  # 3 s: 80 writes from 8 processes
        what="8 processes writing one path 10 times each",
    ),
)


# --------------------------------------------------------------------------------------
# Extreme but valid CSVs

K = "extreme-csv"
JSON_FIT = ["--model", "amdahl", "--starts", "4", "--json"]
for slug, text, expect, check, what in (
    ("time-1e300", amdahl_csv(1e300), "either", good_fit(1.0), "times of about 1e300 s"),
    ("time-1e-300", amdahl_csv(1e-300), "either", good_fit(1.0), "times of about 1e-300 s"),
    (
        "600-decades",
        "gpus,time_s\n1,1e300\n2,1e180\n4,1e60\n8,1e-60\n16,1e-180\n32,1e-300\n",
        "either",
        good_fit(math.inf),
        "times spanning 600 decades",
    ),
    (
        "throughput-1e300",
        amdahl_csv(1e-300, "throughput"),
        "either",
        good_fit(1.0),
        "throughputs of about 1e300",
    ),
    (
        "gpus-1e300",
        "gpus,time_s\n1,1.0\n2,0.55\n4,0.33\n8,0.21\n16,0.16\n1e300,0.1\n",
        "either",
        good_fit(math.inf),
        "a GPU count of 1e300",
    ),
):
    add(
        Case(
            f"{K}.{slug}.fit",
            K,
            ["fit", "x.csv", *JSON_FIT],
            {"x.csv": text},
            expect=expect,
            check=check,
            names=("x.csv",),
            what=what,
        )
    )
add(
    Case(
        f"{K}.constant.fit",
        K,
        ["fit", "x.csv", "--model", "amdahl", "--starts", "4"],
        {"x.csv": "gpus,time_s\n" + "".join(f"{n},1.0\n" for n in (1, 2, 4, 8, 16, 32))},
        expect="answer",
        slow=True,  # 6 s: the default fit of a constant series
        what="the same time at every GPU count (no scaling)",
    ),
    Case(
        f"{K}.perfect-scaling.fit",
        K,
        ["fit", "x.csv", "--model", "amdahl", "--starts", "4"],
        {"x.csv": "gpus,time_s\n" + "".join(f"{n},{1 / n!r}\n" for n in (1, 2, 4, 8, 16, 32))},
        expect="answer",
        what="time = 1/N exactly (perfect scaling), text output",
    ),
)


def _float32_denormal(folder):
    import numpy as np

    import perfmodel as pm

    n = np.array([1, 2, 4, 8, 16, 32], dtype=np.float32)
    t = (np.float32(1e-41) * (np.float32(0.1) + np.float32(0.9) / n)).astype(np.float32)
    return pm.fit("amdahl", pm.from_arrays(n, t), n_starts=8)


def _mape_under(limit):
    def check(outcome, folder):
        fit = outcome.value
        if not (math.isfinite(fit.r2) and fit.mape < limit):
            return f"R² {fit.r2}, MAPE {fit.mape:.3g}%"
        return None

    return check


add(
    Case(
        f"{K}.float32-1e-41.python",
        K,
        mode="api",
        api=_float32_denormal,
        expect="either",
        check=_mape_under(1.0),
        what="pm.fit of float32 times of 1e-41 s (denormal)",
    )
)


# --------------------------------------------------------------------------------------
# Ambiguous input

K = "ambiguous"
add(
    Case(
        f"{K}.two-time-columns.fit",
        K,
        ["fit", "x.csv", *FIT],
        {"x.csv": "gpus,time_s,time_s\n1,1.0,2.0\n2,0.52,1.1\n4,0.29,0.6\n8,0.18,0.4\n"},
        names=("x.csv", "time_s"),
        what="two columns named time_s",
    ),
    Case(
        f"{K}.two-gpus-columns.fit",
        K,
        ["fit", "x.csv", *FIT],
        {"x.csv": "gpus,gpus,time_s\n1,8,1.0\n2,16,0.52\n4,32,0.29\n8,64,0.18\n"},
        names=("x.csv", "gpus"),
        what="two columns named gpus",
    ),
    Case(
        f"{K}.time-and-throughput.fit",
        K,
        ["fit", "x.csv", *FIT],
        {"x.csv": "gpus,time_s,throughput\n1,1.0,1.0\n2,0.52,1.9\n4,0.29,3.4\n"},
        names=("x.csv", "time_s", "throughput"),
        what="time_s and throughput both given",
    ),
    Case(
        f"{K}.weak-scaling-fixed-global-batch.fit",
        K,
        ["fit", "x.csv", "--weak-scaling", *FIT],
        {"x.csv": "gpus,time_s,global_batch\n1,1.0,256\n2,0.52,256\n4,0.29,256\n"},
        names=("--weak-scaling", "global_batch"),
        what="--weak-scaling when the global_batch column says strong scaling",
    ),
    Case(
        f"{K}.fix-and-bound.fit",
        K,
        ["fit", "bench.csv", *FIT, "--fix", "serial.time=0.1", "--bound", "serial.time=1:2"],
        FIT_FILES,
        names=("serial.time", "--fix", "--bound"),
        what="--fix outside the --bound of the same parameter",
    ),
    Case(
        f"{K}.fix-twice.fit",
        K,
        ["fit", "bench.csv", *FIT, "--fix", "serial.time=0.1", "--fix", "serial.time=0.2"],
        FIT_FILES,
        names=("serial.time",),
        what="the same --fix twice with different values",
    ),
    Case(
        f"{K}.negative-price.optimal",
        K,
        ["optimal", FIT_FILE, "--objective", "cost", "--price-per-gpu-hour", "-2"],
        SAVED,
        names=("--price-per-gpu-hour",),
        what="a price of -2 per GPU-hour",
    ),
    Case(
        f"{K}.nan-price.optimal",
        K,
        ["optimal", FIT_FILE, "--objective", "cost", "--price-per-gpu-hour", "nan"],
        SAVED,
        names=("--price-per-gpu-hour",),
        what="a price of NaN per GPU-hour",
    ),
    Case(
        f"{K}.budget-without-price.optimal",
        K,
        ["optimal", FIT_FILE, "--budget", "10"],
        SAVED,
        names=("--budget", "--price-per-gpu-hour"),
        what="--budget without a price per GPU-hour",
    ),
    Case(
        f"{K}.fractional-gpus.require",
        K,
        ["require", FIT_FILE, "--param", "serial.time", "--efficiency", "0.8", "--gpus", "6.5"],
        SAVED,
        names=("--gpus",),
        what="require at 6.5 GPUs",
    ),
    Case(
        f"{K}.empty-output.fit",
        K,
        ["fit", "bench.csv", *FIT, "-o", ""],
        FIT_FILES,
        names=("-o",),
        what='-o "" (nothing written, exit 0)',
    ),
    Case(
        f"{K}.empty-output.whatif",
        K,
        ["whatif", FIT_FILE, "--set", "serial.time=x0.5", "--gpus", "1", "-o", ""],
        SAVED,
        names=("-o",),
        what='-o ""',
    ),
)


def _ring8(edit) -> str:
    lines = (FILES / "ring8.log").read_text().splitlines()
    return "\n".join(edit(lines)) + "\n"


def _flag_wrong(lines):
    # line 16: the fourth data row; its out-of-place #wrong becomes 3
    cells = lines[15].split()
    cells[8] = "3"
    lines[15] = " ".join(cells)
    return lines


add(
    Case(
        f"{K}.nccl-wrong-rows.fit-collective",
        K,
        ["fit-collective", "wrong.log"],
        {"wrong.log": _ring8(_flag_wrong)},
        names=("wrong.log", "line 16"),
        what="an nccl-tests row whose #wrong is 3 (results were wrong)",
    ),
    Case(
        f"{K}.nccl-one-size.fit-collective",
        K,
        ["fit-collective", "one.log"],
        {"one.log": _ring8(lambda lines: lines[:13])},
        names=("one.log",),
        what="an nccl-tests log with one message size",
    ),
)


# --------------------------------------------------------------------------------------
# Sizes that blow up (run in one subprocess limited to 3 GiB, 25 s a case)

K = "size"
E9, E12 = "1000000000", "1000000000000"
add(
    Case(
        f"{K}.max-gpus-1e9.optimal",
        K,
        ["optimal", FIT_FILE, "--max-gpus", E9],
        SAVED,
        mode="limited",
        names=("--max-gpus",),
        what="--max-gpus 10^9",
    ),
    Case(
        f"{K}.max-gpus-1e12.optimal",
        K,
        ["optimal", FIT_FILE, "--max-gpus", E12],
        SAVED,
        mode="limited",
        names=("--max-gpus",),
        what="--max-gpus 10^12",
    ),
    Case(
        f"{K}.max-gpus-1e12.plot",
        K,
        ["plot", FIT_FILE, "-o", "p.png", "--max-gpus", E12],
        SAVED,
        mode="limited",
        names=("--max-gpus",),
        what="--max-gpus 10^12",
    ),
    Case(
        f"{K}.max-gpus-1e12.whatif",
        K,
        ["whatif", FIT_FILE, "--set", "serial.time=x0.5", "--max-gpus", E12],
        SAVED,
        mode="limited",
        names=("--max-gpus",),
        what="--max-gpus 10^12",
    ),
    Case(
        f"{K}.max-gpus-1e12.next",
        K,
        ["next", FIT_FILE, "--candidates", "64", "--max-gpus", E12],
        SAVED,
        mode="limited",
        names=("--max-gpus",),
        what="--max-gpus 10^12",
    ),
    Case(
        f"{K}.max-gpus-1e12.report",
        K,
        ["report", FIT_FILE, "-o", "r.html", "--max-gpus", E12],
        SAVED,
        mode="limited",
        names=("--max-gpus",),
        what="--max-gpus 10^12",
    ),
    Case(
        f"{K}.max-gpus-1e12.require",
        K,
        ["require", FIT_FILE, "--param", "gpus", "--efficiency", "0.5", "--max-gpus", "1e12"],
        SAVED,
        mode="limited",
        expect="either",
        names=("--max-gpus",),
        what="require --max-gpus 1e12 (a float option)",
    ),
    Case(
        f"{K}.range-1e10.sweep",
        K,
        ["sweep", "s.toml"],
        {"s.toml": AMDAHL_SPACE + "[axes]\ngpus = { start = 1, stop = 1e10, step = 1 }\n"},
        mode="limited",
        names=("s.toml", "one axis may hold"),
        what="a range of 10^10 values, more than one axis may hold",
    ),
    Case(
        f"{K}.num-1e8.sweep",
        K,
        ["sweep", "s.toml"],
        {"s.toml": AMDAHL_SPACE + "[axes]\ngpus = { start = 1, stop = 1e8, num = 100000000 }\n"},
        mode="limited",
        names=("s.toml", "one axis may hold"),
        what="num = 100000000, more than one axis may hold",
    ),
    Case(
        f"{K}.huge-top.sweep",
        K,
        ["sweep", "space.toml", "--top", E12],
        SWEEP_FILES,
        mode="limited",
        expect="either",
        names=("--top",),
        what="--top 10^12 on 3 configurations",
    ),
    Case(
        f"{K}.num-float.sweep",
        K,
        ["sweep", "s.toml"],
        {"s.toml": AMDAHL_SPACE + "[axes]\ngpus = { start = 1, stop = 1e8, num = 1e8 }\n"},
        names=("s.toml", "num"),
        what="num = 1e8 written as a float (TOML): refused before any allocation",
    ),
    Case(
        f"{K}.huge-starts.fit",
        K,
        ["fit", "bench.csv", "--model", "amdahl", "--starts", E9],
        FIT_FILES,
        mode="limited",
        names=("--starts",),
        what="--starts 10^9",
    ),
)


# --------------------------------------------------------------------------------------
# Tracebacks on options

K = "option"


def sweep_axis(spec: str) -> dict:
    return {"s.toml": AMDAHL_SPACE + f"[axes]\ngpus = {spec}\n"}


for slug, spec in (
    ("nan-axis", "[1, nan]"),
    ("inf-axis", "[1, inf]"),
    ("inf-stop", "{ start = 1, stop = inf, step = 1 }"),
    ("nan-step", "{ start = 1, stop = 8, step = nan }"),
    ("nan-start", "{ start = nan, stop = 8, num = 4 }"),
    ("inf-stop-num", "{ start = 1, stop = inf, num = 4 }"),
):
    add(
        Case(
            f"{K}.{slug}.sweep",
            K,
            ["sweep", "s.toml"],
            sweep_axis(spec),
            names=("s.toml", "axes.gpus"),
            what=f"gpus = {spec}",
        )
    )
add(
    Case(
        f"{K}.string-model-option.sweep",
        K,
        ["sweep", "s.toml"],
        {
            "s.toml": '[model]\nfamily = "amdahl"\noptions = { weak = "no" }\n'
            "[axes]\ngpus = [1, 8]\n"
        },
        names=("s.toml", "weak"),
        what='options = { weak = "no" }',
    ),
    Case(
        f"{K}.fix-every-parameter.fit",
        K,
        [
            "fit",
            "bench.csv",
            "--model",
            "amdahl",
            "--fix",
            "serial.time=0.1",
            "--fix",
            "compute.time=0.9",
        ],
        FIT_FILES,
        expect="either",
        names=("--fix",),
        what="--fix of every parameter",
    ),
    Case(
        f"{K}.negative-seed.fit",
        K,
        ["fit", "bench.csv", *FIT, "--seed", "-1"],
        FIT_FILES,
        expect="either",
        names=("--seed",),
        what="--seed -1",
    ),
    Case(
        f"{K}.distributed-no-peers.sweep",
        K,
        [
            "sweep",
            "space.toml",
            "--distributed",
            "--coordinator",
            "127.0.0.1:{port}",
            "--num-processes",
            "2",
            "--process-id",
            "0",
            "--init-timeout",
            "1",
        ],
        SWEEP_FILES,
        mode="subprocess",
        timeout=90,
        names=("--distributed",),
        slow=True,  # 3 s: waits out --init-timeout
        what="sweep --distributed, the second process never comes",
    ),
    Case(
        f"{K}.non-integer-max-gpus.optimal",
        K,
        ["optimal", FIT_FILE, "--max-gpus", "1e9"],
        SAVED,
        names=("--max-gpus",),
        what="--max-gpus 1e9 (argparse's int refuses it: its own 'perfmodel optimal: error:')",
    ),
    Case(
        f"{K}.nan-factor.explain",
        K,
        ["explain", FIT_FILE, "--gpus", "64", "--factor", "nan"],
        SAVED,
        names=("--factor",),
        what="--factor nan",
    ),
    Case(
        f"{K}.zero-factor.explain",
        K,
        ["explain", FIT_FILE, "--gpus", "64", "--factor", "0"],
        SAVED,
        names=("--factor",),
        what="--factor 0",
    ),
    Case(
        f"{K}.nan-level.next",
        K,
        ["next", FIT_FILE, "--candidates", "64", "--level", "nan"],
        SAVED,
        names=("level",),
        what="--level nan",
    ),
    Case(
        f"{K}.nan-interval.predict",
        K,
        ["predict", FIT_FILE, "--gpus", "1,8", "--interval", "nan"],
        SAVED,
        names=("interval",),
        what="--interval nan",
    ),
    Case(
        f"{K}.nan-efficiency.require",
        K,
        ["require", FIT_FILE, "--param", "gpus", "--efficiency", "nan"],
        SAVED,
        names=("efficiency",),
        what="--efficiency nan",
    ),
    Case(
        f"{K}.nan-set.whatif",
        K,
        ["whatif", FIT_FILE, "--set", "serial.time=nan"],
        SAVED,
        names=("serial.time",),
        what="--set serial.time=nan",
    ),
    Case(
        f"{K}.negative-set.predict",
        K,
        ["predict", FIT_FILE, "--gpus", "1,8", "--set", "serial.time=-1"],
        SAVED,
        names=("serial.time",),
        what="--set serial.time=-1",
    ),
    Case(
        f"{K}.nan-deadline.optimal",
        K,
        ["optimal", FIT_FILE, "--objective", "cost", "--deadline", "nan"],
        SAVED,
        names=("deadline",),
        what="--deadline nan",
    ),
    Case(
        f"{K}.inf-threshold.optimal",
        K,
        ["optimal", FIT_FILE, "--threshold", "inf"],
        SAVED,
        names=("threshold",),
        what="--threshold inf",
    ),
    Case(
        f"{K}.nan-link-bandwidth.fit-collective",
        K,
        ["fit-collective", "ring8.log", "--factor", "fitted", "--link-bandwidth", "nan"],
        {"ring8.log": "@ring8.log"},
        names=("bandwidth",),
        what="--link-bandwidth nan",
    ),
    Case(
        f"{K}.nan-collective-weight.fit",
        K,
        [
            "fit",
            "joint.csv",
            "--with-collective",
            "ring8.log",
            "--starts",
            "4",
            "--collective-weight",
            "nan",
        ],
        {"joint.csv": "@joint.csv", "ring8.log": "@ring8.log"},
        names=("--collective-weight",),
        what="--collective-weight nan",
    ),
)


# --------------------------------------------------------------------------------------
# Python API

K = "python"


def _loaded():
    import perfmodel as pm

    return pm.load_fit(FILES / FIT_FILE)


def _predict(gpus):
    return lambda folder: _loaded().predict(gpus)


def _optimal_inf(folder):
    import perfmodel as pm

    return pm.optimal_gpus(_loaded(), max_gpus=math.inf)


def _what_if_negative(folder):
    import perfmodel as pm

    return pm.what_if(_loaded(), {"serial.time": -1.0})


def _fit_nan_fix(folder):
    import perfmodel as pm

    data = pm.load_benchmarks(FILES / "bench.csv")
    return pm.fit("amdahl", data, fix={"serial.time": math.nan}, n_starts=4)


def _load_nan(folder):
    import perfmodel as pm

    path = folder / FIT_FILE
    edited_fit(set_value("serial.time", math.nan))(path)
    return pm.load_fit(path)


for slug, call, names, what in (
    ("predict-zero", _predict([0]), ("gpus",), "FitResult.predict([0])"),
    ("predict-negative", _predict([-8]), ("gpus",), "FitResult.predict([-8])"),
    ("predict-nan", _predict([math.nan]), ("gpus",), "FitResult.predict([nan])"),
    ("optimal-inf", _optimal_inf, ("max_gpus",), "optimal_gpus(max_gpus=inf)"),
    ("what-if-negative", _what_if_negative, ("serial.time",), "what_if(serial.time=-1)"),
    ("fit-nan-fix", _fit_nan_fix, ("serial.time",), "fit(fix={serial.time: nan})"),
    ("load-nan", _load_nan, ("serial.time",), "load_fit of a NaN parameter"),
):
    add(Case(f"{K}.{slug}.python", K, mode="api", api=call, names=names, what=what))


# --------------------------------------------------------------------------------------
# Messages

K = "message"
add(
    Case(
        f"{K}.blank-lines.fit",
        K,
        ["fit", "x.csv", *FIT],
        {"x.csv": "gpus,time_s\n1,1.0\n\n2,x\n4,0.3\n"},
        names=("x.csv", "line 4", "time_s"),
        what="a blank line before the bad row: the error must name line 4",
    ),
    Case(
        f"{K}.trailing-comma.fit",
        K,
        ["fit", "x.csv", *FIT, "--json"],
        # six rows, as bench.csv: the fit reuses the compiled one (CI time)
        {"x.csv": "gpus,time_s\n1,1.0,\n2,0.52,\n4,0.29,\n8,0.18,\n16,0.13,\n32,0.115,\n"},
        expect="either",
        check=read_gpus([1.0, 2.0, 4.0, 8.0, 16.0, 32.0]),
        names=("x.csv", "line 2"),
        what="every data row ends in a comma the header lacks",
    ),
    Case(
        f"{K}.trailing-comma-bad-cell.fit",
        K,
        ["fit", "x.csv", *FIT],
        {"x.csv": "gpus,time_s\n1,1.0,\n2,x,\n4,0.29,\n"},
        names=("x.csv", "line 3", "'x'"),
        what="trailing commas and a bad time on line 3",
    ),
    Case(
        f"{K}.same-column-twice.fit",
        K,
        ["fit", "bench.csv", *FIT, "--gpus-column", "gpus", "--time-column", "gpus"],
        FIT_FILES,
        names=("--gpus-column", "--time-column"),
        what="--gpus-column gpus --time-column gpus",
    ),
    Case(
        f"{K}.crlf.fit",
        K,
        ["fit", "x.csv", *FIT],
        {"x.csv": "gpus,time_s\r\n1,1\r\n2,x\r\n"},
        names=("x.csv", "line 3"),
        what="CRLF line ends, a bad cell on line 3",
    ),
)


def closed_pipe(argv):
    def run(folder: Path):
        process = subprocess.Popen(
            [sys.executable, "-m", "perfmodel", *argv],
            cwd=folder,
            env=subprocess_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        process.stdout.close()  # like `| head` that has already exited
        with process.stderr:
            err = process.stderr.read().decode(errors="replace")
        rc = process.wait(timeout=120)
        problems = []
        if "Traceback" in err:
            problems.append("traceback")
        lines = [line for line in err.splitlines() if line.strip()]
        if len(lines) > 1:
            problems.append(f"{len(lines)} lines on stderr")
        return problems, Outcome(rc, "", err)

    return run


add(
    Case(
        f"{K}.closed-pipe.datasets",
        K,
        ["datasets"],
        mode="custom",
        api=closed_pipe(["datasets"]),
        what="perfmodel datasets | head (the pipe closed)",
    ),
    Case(
        f"{K}.closed-pipe.sweep",
        K,
        ["sweep"],
        SWEEP_FILES,
        mode="custom",
        api=closed_pipe(["sweep", "space.toml"]),
        slow=True,  # a subprocess sweep
        what="perfmodel sweep | head",
    ),
)


# Not staged: a full file system other than by RLIMIT_FSIZE (needs a mount), and
# chmod-based read-only paths when running as root (chattr +i is used instead).
