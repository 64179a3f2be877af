"""Atomic writes, output checks and reading (perfmodel/_files.py).

The reliability corpus stages the dangerous cases (kill -9, full disk, read-only folders,
eight concurrent writers); these are the unit checks behind them.
"""

import os
import subprocess
import sys

import pytest

import perfmodel as pm
from perfmodel._files import (
    all_or_nothing,
    atomic_write,
    check_output,
    read_bytes,
    remove_stale_temporaries,
)


def _dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    return int(done.stdout)


def test_atomic_write_replaces_only_on_success(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_write(path) as stream:
            stream.write("half")
            raise RuntimeError("fails half-way")
    assert path.read_text() == "old" and sorted(os.listdir(tmp_path)) == ["out.txt"]
    with atomic_write(path) as stream:
        stream.write("new ü")
    assert path.read_text(encoding="utf-8") == "new ü"


@pytest.mark.parametrize(
    "name, message",
    [
        ("", "expected a file name, got an empty string"),
        ("folder", "folder: is a directory"),
        ("missing/out.json", "does not exist"),
        ("n" * 300 + ".json", "file name longer than"),
        ("folder/../plain.txt/out.json", "plain.txt is a file, not a directory"),
    ],
)
def test_bad_targets_are_one_line_errors(tmp_path, name, message):
    (tmp_path / "folder").mkdir()
    (tmp_path / "plain.txt").write_text("")
    path = str(tmp_path / name) if name else ""
    for attempt in (lambda: check_output(path), lambda: atomic_write(path).__enter__()):
        with pytest.raises(pm.InputError, match=message):
            attempt()
    assert sorted(os.listdir(tmp_path)) == ["folder", "plain.txt"]


def test_an_output_that_is_an_input_is_refused(tmp_path):
    data = tmp_path / "bench.csv"
    data.write_text("gpus,time_s\n1,1\n")
    link = tmp_path / "link.csv"
    link.symlink_to(data)
    for output in (data, link, tmp_path / "." / "bench.csv"):
        with pytest.raises(pm.InputError, match="-o names an input of this command"):
            check_output(output, inputs=[str(data)])
    check_output(tmp_path / "fit.json", inputs=[str(data)])  # another name is fine
    assert sorted(os.listdir(tmp_path)) == ["bench.csv", "link.csv"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes read-only files and folders")
def test_read_only_targets(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        with pytest.raises(pm.InputError, match="cannot write"):
            check_output(folder / "out.json")
    finally:
        folder.chmod(0o755)
    path = tmp_path / "out.json"
    path.write_text("{}")
    path.chmod(0o444)
    with pytest.raises(pm.InputError, match="read-only"):
        check_output(path)


def test_os_errors_on_writing_name_the_path(tmp_path, monkeypatch):
    from perfmodel import _files

    def full(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(_files.os, "replace", full)
    with pytest.raises(pm.InputError, match=r"out.json: cannot write \(No space left"):
        with atomic_write(tmp_path / "out.json") as stream:
            stream.write("x")
    assert os.listdir(tmp_path) == []


def test_stale_temporaries_of_dead_writers_are_removed(tmp_path):
    dead = tmp_path / f".perfmodel-{_dead_pid()}-abc.tmp"
    alive = tmp_path / f".perfmodel-{os.getppid()}-abc.tmp"  # our parent is running
    other = tmp_path / ".perfmodel-old.tmp"  # not ours to judge: no pid in the name
    for path in (dead, alive, other):
        path.write_text("partial")
    with atomic_write(tmp_path / "out.json") as stream:
        stream.write("{}")
    assert sorted(os.listdir(tmp_path)) == sorted([alive.name, other.name, "out.json"])
    assert remove_stale_temporaries(tmp_path) == []


def test_all_or_nothing_writes_every_output_or_none(tmp_path):
    first, second = tmp_path / "fit.json", tmp_path / "report.html"
    with pytest.raises(pm.InputError):
        with all_or_nothing():
            with atomic_write(first) as stream:
                stream.write("fit")
            assert not first.exists()  # held back until the block ends
            with atomic_write(tmp_path / "missing" / "report.html") as stream:
                stream.write("report")
    assert os.listdir(tmp_path) == []
    with all_or_nothing():
        for path in (first, second):
            with atomic_write(path) as stream:
                stream.write(path.name)
    assert first.read_text() == "fit.json" and second.read_text() == "report.html"
    assert sorted(os.listdir(tmp_path)) == ["fit.json", "report.html"]


def test_reading_names_the_path(tmp_path):
    with pytest.raises(pm.InputError, match="nope.csv: no such file"):
        read_bytes(tmp_path / "nope.csv")
    with pytest.raises(pm.InputError, match="is a directory"):
        read_bytes(tmp_path)
    if os.path.exists("/proc/self/mem"):  # exists, is a file, reading fails (EIO)
        with pytest.raises(pm.InputError, match=r"/proc/self/mem: cannot read \("):
            read_bytes("/proc/self/mem")


def test_special_files_are_refused_and_links_written_through(tmp_path):
    """`-o` onto a FIFO (or, as root, /dev/full) replaced it with a regular file, and a
    symbolic link was replaced by a file while its target kept the old text."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for attempt in (lambda: check_output(fifo), lambda: atomic_write(fifo).__enter__()):
        with pytest.raises(pm.InputError, match="is not a regular file"):
            attempt()
    assert not fifo.is_file() and fifo.exists()
    with pytest.raises(pm.InputError, match="got '-'"):
        check_output("-")
    target, link = tmp_path / "real.json", tmp_path / "link.json"
    target.write_text("old")
    link.symlink_to(target.name)
    check_output(link)
    with atomic_write(link) as stream:
        stream.write("new")
    assert link.is_symlink() and target.read_text() == "new"
