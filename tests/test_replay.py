"""A repeated `perfmodel fit` or `demo` prints and writes what its recorded run did, and
only while the inputs, the arguments and perfmodel itself are the same
(`perfmodel._cli.replay`)."""

import contextlib
import io
import json
import os
from pathlib import Path
import subprocess
import sys

import pytest

from perfmodel._cli import app, replay

ROOT = Path(__file__).resolve().parent.parent
CSV = "gpus,time_s\n1,1.0\n2,0.53\n4,0.29\n8,0.18\n"


@pytest.fixture
def answers(cli_cache, tmp_path, monkeypatch):
    """The command line's cache turned on, the working folder with a small CSV; the
    folder of the records."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bench.csv").write_text(CSV)
    return cli_cache / "answers"


def run(argv) -> tuple[int, str, str]:
    with contextlib.redirect_stdout(io.StringIO()) as out:
        with contextlib.redirect_stderr(io.StringIO()) as err:
            status = app.main(argv)
    return status, out.getvalue(), err.getvalue()


def no_fit(monkeypatch):
    """Make any fit fail loudly: what answers now must be the record."""

    def refuse(*args, **kwargs):
        raise AssertionError("fitted again")

    monkeypatch.setattr("perfmodel._cli.fit.fit_model", refuse)


def without_created(path: Path) -> dict:
    document = json.loads(path.read_text())
    assert document.pop("created")
    return document


ARGV = ["fit", "bench.csv", "--model", "amdahl", "-o", "fit.json"]


@pytest.mark.slow  # 5 s: the default run stays under 4 minutes
def test_a_repeated_fit_prints_and_writes_what_the_first_did(answers, tmp_path, monkeypatch):
    first = run(ARGV)
    written = without_created(tmp_path / "fit.json")
    assert first[0] == 0 and first[1].startswith("Buy ") and len(os.listdir(answers)) == 1
    (tmp_path / "fit.json").unlink()  # a repeat writes it again
    no_fit(monkeypatch)
    assert run(ARGV) == first
    assert without_created(tmp_path / "fit.json") == written
    # The file written by the repeat answers predict as the first one did.
    assert run(["predict", "fit.json", "--gpus", "1,8"])[0] == 0


def test_an_edited_input_other_arguments_or_code_fit_again(answers, tmp_path, monkeypatch):
    status, text, _ = run(ARGV)
    assert status == 0
    (tmp_path / "bench.csv").write_text(CSV.replace("0.18", "0.2"))
    edited = run(ARGV)
    assert edited[0] == 0 and edited[1] != text  # fitted again, on the new bytes
    assert run([*ARGV, "--json"])[1].startswith("{")  # other arguments: another record
    assert len(os.listdir(answers)) == 2
    monkeypatch.setattr(replay, "_FORMAT", 0)  # another perfmodel: records not read
    no_fit(monkeypatch)
    with pytest.raises(AssertionError, match="fitted again"):
        run(ARGV)


def test_a_code_change_misses(answers, monkeypatch):
    key = replay.call_key(ARGV)
    original = replay._code_digest
    monkeypatch.setattr(replay, "_code_digest", lambda d: (original(d), d.update(b"edit")))
    assert key is not None and replay.call_key(ARGV) != key


def test_a_json_repeat_has_its_own_created_time(answers, tmp_path, monkeypatch):
    status, text, _ = run(["fit", "bench.csv", "--model", "amdahl", "--json"])
    assert status == 0
    (record,) = answers.iterdir()
    stale = record.read_text().replace(json.loads(text)["created"], "2000-01-01T00:00:00+00:00")
    record.write_text(stale)
    no_fit(monkeypatch)
    again = json.loads(run(["fit", "bench.csv", "--model", "amdahl", "--json"])[1])
    assert again["created"] != "2000-01-01T00:00:00+00:00"
    assert {**again, "created": 0} == {**json.loads(text), "created": 0}


@pytest.mark.parametrize(
    "argv",
    [
        ["fit", "missing.csv", "--model", "amdahl"],  # an error
        ["fit", "bench.csv", "--model", "nonsense"],  # refused by name
    ],
)
def test_no_record_of_failures(answers, argv):
    run(argv)
    assert not answers.exists() or not os.listdir(answers)


def test_the_cache_switch_turns_records_off(answers, monkeypatch):
    monkeypatch.setenv("PERFMODEL_NO_CACHE", "1")
    assert replay.call_key(ARGV) is None
    assert run(ARGV)[0] == 0
    assert not answers.exists()


def test_folders_standard_input_and_reports_are_not_recorded(answers, tmp_path):
    (tmp_path / "logs").mkdir()
    assert replay.call_key(["fit", "logs", "--model", "amdahl"]) is None
    assert replay.call_key(["fit", "-", "--model", "amdahl"]) is None
    assert replay.call_key(["fit", "--help"]) is None
    assert replay.call_key(["fit", "bench.csv", "--report", "r.md"]) is None  # writes more
    assert replay.call_key(["predict", "fit.json", "--gpus", "8"]) is None


def test_a_corrupt_record_runs_in_full(answers, tmp_path):
    first = run(ARGV)
    (record,) = answers.iterdir()
    record.write_text("{not json")
    assert run(ARGV) == first


def test_a_repeat_imports_no_jax(answers, tmp_path):
    assert run(ARGV)[0] == 0
    code = (
        "import sys, contextlib, io\n"
        "from perfmodel._cli.app import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        f"    assert main({ARGV!r}) == 0\n"
        "assert out.getvalue().startswith('Buy'), out.getvalue()\n"
        "loaded = {'jax', 'jaxlib', 'equinox', 'optax', 'jaxtyping', 'scipy', 'pandas'}\n"
        "assert not loaded & set(sys.modules), loaded & set(sys.modules)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr


def test_the_command_line_asks_for_records_of_the_recorded_commands_only():
    assert app.REPLAYED == replay.COMMANDS  # app checks its own copy before importing replay


def test_pipes_and_devices_are_not_recorded(answers, tmp_path):
    os.mkfifo(tmp_path / "pipe.csv")
    assert replay.call_key(["fit", "pipe.csv", "--model", "amdahl"]) is None
    assert replay.call_key(["fit", "/dev/null", "--model", "amdahl"]) is None


def test_the_record_holds_what_the_run_wrote(answers, tmp_path, monkeypatch):
    from perfmodel._cli import fit as fit_command

    marked = fit_command.mark_checked

    def replaced(path):  # another process writes the same -o before the record is kept
        marked(path)
        Path(path).write_text('{"another": "fit"}')

    monkeypatch.setattr(fit_command, "mark_checked", replaced)
    first = run(ARGV)
    assert first[0] == 0
    monkeypatch.setattr(fit_command, "mark_checked", marked)
    no_fit(monkeypatch)
    assert run(ARGV) == first
    assert without_created(tmp_path / "fit.json")["format"] == "perfmodel.fit"


def test_a_repeat_refuses_an_output_that_became_an_input(answers, tmp_path):
    assert run(ARGV)[0] == 0
    (tmp_path / "fit.json").unlink()
    os.link(tmp_path / "bench.csv", tmp_path / "fit.json")  # -o is now the CSV itself
    status, _, err = run(ARGV)
    assert status == 2 and "fit.json" in err
    assert (tmp_path / "bench.csv").read_text() == CSV


def test_a_shipped_dataset_named_by_fit_is_an_input_of_the_record():
    """`fit NAME` reads the shipped CSV: its bytes are checked like any input file's."""
    from perfmodel._files import datasets_dir

    recording = replay.Recording(["perfmodel", "fit", "tf_dgx1_p100_resnet50_real"], "key")
    expected = str(datasets_dir() / "tf_dgx1_p100_resnet50_real.csv")
    assert set(recording.inputs) == {expected} and recording.inputs[expected]
    assert replay.Recording(["perfmodel", "fit", "not_a_dataset"], "key").inputs == {}
