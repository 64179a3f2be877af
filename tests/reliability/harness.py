"""Run reliability cases and check the contract of issue #13.

A refusal: exit status 2, exactly one line on stderr that starts with
``perfmodel: error:`` and names the file or field (`Case.names`), no traceback,
nothing on stdout, and no file in the case's folder created, changed or removed.
An answer: exit status 0, no traceback, no NaN or infinity in what is printed,
strict JSON wherever JSON is printed or written, inputs unchanged, and the case's
own check. ``either`` accepts whichever of the two the code gives, held to its rules.

Cases run in this process through ``perfmodel._cli.main`` (cheap), in one shared
subprocess under memory and file-size limits (`limited`), or in their own
subprocesses (kill -9, pipes, concurrency, JAX's distributed runtime).

Run as a script to print every case's outcome (used for docs/design/reliability-defects.md)::

    PYTHONPATH=. python tests/reliability/harness.py [--markdown] [-k SUBSTRING]
"""

from __future__ import annotations

from collections.abc import Callable
import contextlib
import dataclasses
import hashlib
import io
import json
import os
from pathlib import Path
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
import warnings

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
FILES = HERE / "files"
DRIVER = HERE / "driver.py"
KNOWN_DEFECTS = HERE / "known_defects.txt"

# Limits of the shared subprocess that runs the cases whose inputs ask for huge sizes.
LIMITED_AS_BYTES = 3 * 2**30
LIMITED_CASE_SECONDS = 25

NON_FINITE = re.compile(r"(?<![\w.])[-+]?(nan|inf|infinity)(?![\w])", re.IGNORECASE)
ALLOWED_STDERR = ("warning:", "wrote ")
FATAL_LINE = re.compile(r"^F\d{4} \d\d:\d\d:\d\d")
EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt)\b")


# --------------------------------------------------------------------------------------
# Cases


@dataclasses.dataclass
class Outcome:
    """What one run gave: exit status, streams, and the folder after it."""

    rc: int | None
    out: str = ""
    err: str = ""
    seconds: float = 0.0
    value: object = None  # what an API case returned
    note: str = ""


@dataclasses.dataclass
class Case:
    """One attack.

    Attributes:
        id: ``<class>.<what>.<command>``, stable: known_defects.txt lists these.
        klass: the issue's class the attack belongs to.
        argv: the command line after ``perfmodel`` (``{w}`` is the case's folder).
        files: name -> content (str or bytes), or a corpus file name as ``@name``,
            or a callable(folder) that writes it.
        expect: ``refuse``, ``answer`` or ``either``.
        names: substrings the one error line must contain (file, field, option).
        check: for answers, callable(outcome, folder) -> problem text or None.
        mode: ``inproc``, ``limited`` (shared subprocess with limits), ``subprocess``,
            ``api`` (`api` is called with the folder) or ``custom`` (`api` returns
            a list of problems itself).
        outputs: files an answer may create or replace (others must stay as they were).
        setup, teardown: callable(folder) around the run (read-only flags and such).
        fsize: with ``limited``, RLIMIT_FSIZE in bytes during the case (a full disk).
        what: one line saying what the attack is, for the defect list.
        slow: too slow for CI (run with -m slow).
    """

    id: str
    klass: str
    argv: list[str] | None = None
    files: dict = dataclasses.field(default_factory=dict)
    expect: str = "refuse"
    names: tuple[str, ...] = ()
    check: Callable | None = None
    mode: str = "inproc"
    outputs: tuple[str, ...] = ()
    setup: Callable | None = None
    teardown: Callable | None = None
    fsize: int | None = None
    api: Callable | None = None
    what: str = ""
    timeout: float = 120.0
    slow: bool = False

    @property
    def command(self) -> str:
        if self.argv:
            return self.argv[0]
        return "python" if self.mode == "api" else self.id.split(".")[-1]


@dataclasses.dataclass
class Verdict:
    case: Case
    passed: bool
    kind: str  # "refusal", "answer", "defect"
    problems: list[str]
    outcome: Outcome

    def summary(self) -> str:
        o = self.outcome
        last = _last_traceback_line(o.err)
        fatal = [line for line in o.err.splitlines() if FATAL_LINE.match(line)]
        bits = [f"exit {o.rc}"]
        if fatal:  # absl's LOG(FATAL) from inside XLA or the distributed runtime
            bits.append("aborted: " + fatal[0].split("] ", 1)[-1][:200])
        elif last:
            bits.append(last)
        elif o.err.strip():
            bits.append("stderr: " + " / ".join(o.err.strip().splitlines()[-2:])[:300])
        if o.rc == 0 and o.out.strip():
            bits.append("printed: " + _excerpt(o.out))
        if o.note:
            bits.append(o.note)
        return "; ".join(bits)


def _excerpt(text: str, width: int = 160) -> str:
    """Where `text` shows a non-finite number, else its first lines, on one line."""
    flat = " / ".join(line.strip() for line in text.strip().splitlines() if line.strip())
    match = NON_FINITE.search(flat)
    start = 0 if match is None else max(0, match.start() - width // 2)
    return ("…" if start else "") + flat[start : start + width] + "…" * (len(flat) > width)


def known_defects() -> set[str]:
    if not KNOWN_DEFECTS.exists():
        return set()
    lines = KNOWN_DEFECTS.read_text().splitlines()
    return {line.split("#")[0].strip() for line in lines if line.split("#")[0].strip()}


# --------------------------------------------------------------------------------------
# Folders


def prepare(case: Case, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in case.files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if callable(content):
            content(path)
        elif isinstance(content, bytes):
            path.write_bytes(content)
        elif isinstance(content, str) and content.startswith("@"):
            shutil.copyfile(FILES / content[1:], path)
        else:
            path.write_text(content)
    if case.setup:
        case.setup(folder)


def snapshot(folder: Path) -> dict[str, tuple]:
    """Every path under `folder` (hidden ones too) with its kind, mode and content hash."""
    state = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs:
            path = Path(root, name)
            state[str(path.relative_to(folder))] = ("dir",)
        for name in files:
            path = Path(root, name)
            try:
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
            except OSError:
                digest = "unreadable"
            state[str(path.relative_to(folder))] = ("file", digest)
    return state


def changes(before: dict, after: dict, allowed=()) -> list[str]:
    problems = []
    for name in sorted(set(after) - set(before)):
        if name not in allowed:
            problems.append(f"created {name}")
    for name in sorted(set(before) - set(after)):
        problems.append(f"removed {name}")
    for name in sorted(set(before) & set(after)):
        if before[name] != after[name] and name not in allowed:
            problems.append(f"changed {name}")
    return problems


@contextlib.contextmanager
def chdir(path):
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


# --------------------------------------------------------------------------------------
# Running


class Unsupported(Exception):
    """This machine cannot stage the case (e.g. no chattr for root on this file system)."""


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def expand(argv: list[str], folder: Path) -> list[str]:
    """`argv` with ``{w}`` as the case's folder and ``{port}`` as a free TCP port."""
    port = str(free_port()) if any("{port}" in a for a in argv) else ""
    return [a.replace("{w}", str(folder)).replace("{port}", port) for a in argv]


def run_inprocess(argv: list[str], folder: Path) -> Outcome:
    """``perfmodel ARGV`` through `main`, as the console script would run it."""
    from perfmodel._cli import main

    out, err = io.StringIO(), io.StringIO()
    start = time.perf_counter()
    with chdir(folder), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        with as_a_user():
            rc = _call(main, argv, err)
    return Outcome(rc, out.getvalue(), err.getvalue(), time.perf_counter() - start)


@contextlib.contextmanager
def as_a_user():
    """Undo what the test configuration changes: warnings are printed (not errors) and
    JAX promotes ranks implicitly, as in a plain `perfmodel` process."""
    import jax

    def show(message, category, filename, lineno, file=None, line=None):
        sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))

    with warnings.catch_warnings(), jax.numpy_rank_promotion("allow"):
        warnings.simplefilter("default")
        warnings.showwarning = show  # to our stderr, not to pytest's record
        yield


def _call(main, argv, err) -> int:
    try:
        return int(main(argv) or 0)
    except SystemExit as exit_:
        code = exit_.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        print(code, file=err)
        return 1
    except BaseException:  # what the interpreter would print, with status 1
        traceback.print_exc(file=err)
        return 1


def subprocess_env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env.setdefault("JAX_PLATFORMS", "cpu")
    env.pop("PERFMODEL_RELIABILITY_STRICT", None)
    return env


def run_subprocess(argv, folder: Path, timeout: float = 120.0, **kwargs) -> Outcome:
    start = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "perfmodel", *argv],
            cwd=folder,
            env=subprocess_env(),
            capture_output=True,
            text=True,
            timeout=timeout,
            **kwargs,
        )
    except subprocess.TimeoutExpired as error:
        return Outcome(
            None,
            _text(error.stdout),
            _text(error.stderr),
            time.perf_counter() - start,
            note=f"timed out after {timeout:g} s",
        )
    return Outcome(done.returncode, done.stdout, done.stderr, time.perf_counter() - start)


def run_measured(argv, folder: Path, timeout: float, as_bytes: int) -> tuple[Outcome, float]:
    """``perfmodel ARGV`` in a subprocess limited to `as_bytes`; also its peak RSS in bytes."""
    # The limit is set by the child itself: a preexec_fn would fork this (JAX) process.
    # The peak is the child's own VmHWM, written at exit: its ru_maxrss would start at
    # the RSS of this (pytest) process, which Linux carries across fork and exec.
    limited = (
        "import atexit, resource, runpy, sys\n"
        "def _peak():\n"
        "    with open('/proc/self/status') as status:\n"
        "        kb = [l.split()[1] for l in status if l.startswith('VmHWM:')]\n"
        "    open('_peak_kb.txt', 'w').write(kb[0] if kb else '')\n"
        "atexit.register(_peak)\n"
        f"resource.setrlimit(resource.RLIMIT_AS, ({as_bytes}, {as_bytes}))\n"
        "sys.argv = ['perfmodel', *sys.argv[1:]]\n"
        "runpy.run_module('perfmodel', run_name='__main__', alter_sys=True)\n"
    )
    out, err = folder / "_stdout.txt", folder / "_stderr.txt"
    start = time.perf_counter()
    with open(out, "w") as stdout, open(err, "w") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-c", limited, *argv],
            cwd=folder,
            env=subprocess_env(),
            stdout=stdout,
            stderr=stderr,
        )
        note, status, usage = "", None, None
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - start > timeout:
                process.kill()
                _, status, usage = os.wait4(process.pid, 0)
                note = f"stopped after {timeout:g} s"
                break
            time.sleep(0.05)
    seconds = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    outcome = Outcome(process.returncode, out.read_text(), err.read_text(), seconds, note=note)
    peak = folder / "_peak_kb.txt"
    kb = peak.read_text().strip() if peak.exists() else ""
    return outcome, (float(kb) if kb else float(usage.ru_maxrss)) * 1024.0


def _text(value) -> str:
    if value is None:
        return ""
    return value.decode(errors="replace") if isinstance(value, bytes) else value


def run_limited(jobs: list[dict]) -> list[Outcome]:
    """Run ``{"argv", "cwd", "fsize"}`` jobs in one subprocess under `LIMITED_AS_BYTES`.

    A job that kills the driver (an abort inside XLA) gets the driver's exit status and
    the end of its stderr; the driver is started again for the jobs after it.
    """
    outcomes: list[Outcome] = []
    while len(outcomes) < len(jobs):
        rest = jobs[len(outcomes) :]
        request = {"as_bytes": LIMITED_AS_BYTES, "seconds": LIMITED_CASE_SECONDS, "jobs": rest}
        done = subprocess.run(
            [sys.executable, str(DRIVER)],
            input=json.dumps(request),
            env=subprocess_env(),
            capture_output=True,
            text=True,
            timeout=LIMITED_CASE_SECONDS * len(rest) + 120,
        )
        for line in done.stdout.splitlines():
            if line.startswith("{"):
                item = json.loads(line)
                outcomes.append(
                    Outcome(
                        item["rc"], item["out"], item["err"], item["seconds"], note=item["note"]
                    )
                )
        if len(outcomes) < len(jobs):  # the driver died during the next job
            tail = done.stderr.strip().splitlines()[-12:]
            note = f"the process died (status {done.returncode}): " + " / ".join(tail[:2])
            outcomes.append(Outcome(done.returncode, "", "\n".join(tail), note=note[:300]))
    return outcomes


# --------------------------------------------------------------------------------------
# Checking


def _last_traceback_line(err: str) -> str:
    if "Traceback" not in err:
        return ""
    lines = [line.strip() for line in err.strip().splitlines() if line.strip()]
    named = [line for line in lines if EXCEPTION_LINE.match(line)]
    return (named or lines or [""])[-1][:300]


def strict_json(text: str):
    """Parse `text` as JSON the way strict readers do: no NaN, Infinity or -Infinity."""

    def refuse(constant):
        raise ValueError(f"non-strict JSON constant {constant}")

    return json.loads(text, parse_constant=refuse)


def refusal_problems(case: Case, outcome: Outcome, moved: list[str]) -> list[str]:
    problems = []
    if outcome.rc != 2:
        problems.append(f"exit status {outcome.rc}, expected 2")
    if "Traceback" in outcome.err:
        problems.append("traceback")
    lines = [line for line in outcome.err.splitlines() if line.strip()]
    if len(lines) != 1:
        problems.append(f"{len(lines)} lines on stderr, expected 1")
    if lines and not lines[-1].startswith("perfmodel: error:"):
        problems.append("stderr does not end in 'perfmodel: error: ...'")
    if lines:
        missing = [name for name in case.names if name not in lines[-1]]
        if missing:
            problems.append("error line does not name " + ", ".join(map(repr, missing)))
    if outcome.out.strip():
        problems.append("printed on stdout")
    return problems + moved


def answer_problems(case: Case, outcome: Outcome, folder: Path, moved: list[str]) -> list[str]:
    problems = []
    if outcome.rc != 0:
        problems.append(f"exit status {outcome.rc}, expected 0")
    if "Traceback" in outcome.err:
        problems.append("traceback")
    stray = [
        line
        for line in outcome.err.splitlines()
        if line.strip() and not line.startswith(ALLOWED_STDERR) and "Traceback" not in outcome.err
    ]
    if stray:
        problems.append(f"unexpected stderr: {stray[0][:200]!r}")
    if NON_FINITE.search(outcome.out):
        problems.append(f"non-finite number printed: {NON_FINITE.search(outcome.out).group(0)!r}")
    if case.argv and "--json" in case.argv and outcome.rc == 0:
        try:
            strict_json(outcome.out)
        except ValueError as error:
            problems.append(f"stdout is not strict JSON ({error})")
    for name in case.outputs:
        path = folder / name
        if path.suffix == ".json" and path.is_file():
            try:
                strict_json(path.read_text())
            except ValueError as error:
                problems.append(f"{name} is not strict JSON ({error})")
    if case.check is not None and not problems:
        problem = case.check(outcome, folder)
        if problem:
            problems.append(problem)
    return problems + moved


def judge(case: Case, outcome: Outcome, folder: Path, before: dict, after: dict) -> Verdict:
    refused = changes(before, after)
    answered = changes(before, after, allowed=case.outputs)
    r = refusal_problems(case, outcome, refused)
    a = answer_problems(case, outcome, folder, answered)
    if case.expect == "refuse":
        return Verdict(case, not r, "refusal" if not r else "defect", r, outcome)
    if case.expect == "answer":
        return Verdict(case, not a, "answer" if not a else "defect", a, outcome)
    if not r:
        return Verdict(case, True, "refusal", [], outcome)
    if not a:
        return Verdict(case, True, "answer", [], outcome)
    return Verdict(case, False, "defect", r if outcome.rc == 2 else a, outcome)


def judge_api(case: Case, folder: Path) -> Verdict:
    """An API case: `case.api(folder)` returns a value (an answer) or raises."""
    from perfmodel import InputError

    start = time.perf_counter()
    with as_a_user():
        try:
            with contextlib.redirect_stderr(io.StringIO()) as err:
                value = case.api(folder)
        except InputError as error:
            message = str(error)
            outcome = Outcome(2, "", f"perfmodel: error: {message}\n", time.perf_counter() - start)
            problems = []
            if "\n" in message:
                problems.append("InputError message spans several lines")
            missing = [n for n in case.names if n not in message]
            if missing:
                problems.append("error does not name " + ", ".join(map(repr, missing)))
            if case.expect == "answer":
                problems.append("raised InputError, expected an answer")
            return Verdict(
                case, not problems, "refusal" if not problems else "defect", problems, outcome
            )
        except Exception as error:  # noqa: BLE001 - any other exception is the defect
            text = traceback.format_exc()
            outcome = Outcome(1, "", text, time.perf_counter() - start)
            return Verdict(case, False, "defect", [f"raised {type(error).__name__}"], outcome)
    outcome = Outcome(0, "", err.getvalue(), time.perf_counter() - start, value=value)
    problems = []
    if case.expect == "refuse":
        problems.append(f"returned {_short(value)} instead of raising InputError")
    elif case.check is not None:
        problem = case.check(outcome, folder)
        if problem:
            problems.append(problem)
    kind = "answer" if not problems else "defect"
    return Verdict(case, not problems, kind, problems, outcome)


def _short(value) -> str:
    text = repr(value)
    return text if len(text) < 200 else text[:200] + "…"


# --------------------------------------------------------------------------------------
# One case, all cases


def run_case(case: Case, folder: Path, limited_outcome: Outcome | None = None) -> Verdict:
    """Prepare `folder`, run `case` there and judge it (teardown always runs)."""
    prepare(case, folder)
    try:
        if case.mode == "api":
            return judge_api(case, folder)
        if case.mode == "custom":
            start = time.perf_counter()
            problems, outcome = case.api(folder)
            outcome.seconds = time.perf_counter() - start
            return Verdict(
                case, not problems, "answer" if not problems else "defect", problems, outcome
            )
        before = snapshot(folder)
        argv = expand(case.argv, folder)
        if case.mode == "inproc":
            outcome = run_inprocess(argv, folder)
        elif case.mode == "subprocess":
            outcome = run_subprocess(argv, folder, timeout=case.timeout)
        elif case.mode == "limited":
            if limited_outcome is None:
                job = {"argv": argv, "cwd": str(folder), "fsize": case.fsize}
                limited_outcome = run_limited([job])[0]
            outcome = limited_outcome
        else:
            raise ValueError(f"unknown mode {case.mode!r}")
        after = snapshot(folder)
        return judge(case, outcome, folder, before, after)
    finally:
        if case.teardown:
            case.teardown(folder)


def run_limited_cases(cases: list[Case], root: Path) -> dict[str, Verdict]:
    """Every `limited` case in one driver process; verdicts by case id."""
    jobs, before = [], {}
    for case in cases:
        folder = root / case.id
        prepare(case, folder)
        before[case.id] = snapshot(folder)
        jobs.append({"argv": expand(case.argv, folder), "cwd": str(folder), "fsize": case.fsize})
    verdicts = {}
    for case, outcome in zip(cases, run_limited(jobs) if jobs else []):
        folder = root / case.id
        try:
            verdicts[case.id] = judge(case, outcome, folder, before[case.id], snapshot(folder))
        finally:
            if case.teardown:
                case.teardown(folder)
    return verdicts


def run_all(cases: list[Case], root: Path, progress=None) -> list[Verdict]:
    limited = run_limited_cases([c for c in cases if c.mode == "limited"], root)
    verdicts = []
    for case in cases:
        try:
            verdict = limited.get(case.id) or run_case(case, root / case.id)
        except Unsupported as error:
            print(f"skip {case.id}: {error}", file=sys.stderr)
            continue
        verdicts.append(verdict)
        if progress:
            progress(verdict)
    return verdicts


def format_markdown(verdicts: list[Verdict]) -> str:
    """Every case by class: what it tried, how it ended, which rules it broke."""
    out = []
    for klass in dict.fromkeys(v.case.klass for v in verdicts):
        group = [v for v in verdicts if v.case.klass == klass]
        bad = sum(not v.passed for v in group)
        out += [f"\n### {klass}: {bad} defects of {len(group)} cases\n"]
        out += ["| case | attack | result | what happened | contract broken |"]
        out += ["| --- | --- | --- | --- | --- |"]
        for v in group:
            cells = [f"`{v.case.id}`", v.case.what, v.kind, v.summary(), "; ".join(v.problems)]
            out.append(
                "| " + " | ".join(c.replace("|", "/").replace("\n", " ") for c in cells) + " |"
            )
    return "\n".join(out)


def _main(argv=None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", help="only cases whose id contains this")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--write-known", action="store_true", help="rewrite known_defects.txt")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(HERE.parent))
    import jax

    jax.config.update("jax_enable_x64", True)
    from reliability.corpus import CASES

    cases = [c for c in CASES if not args.k or args.k in c.id]
    root = Path(tempfile.mkdtemp(prefix="perfmodel-reliability-"))
    start = time.perf_counter()

    def progress(v):
        if v is None:
            return
        flag = "ok " if v.passed else "BAD"
        print(
            f"{flag} {v.case.id:55s} {v.kind:8s} {v.outcome.seconds:6.2f}s  "
            f"{'; '.join(v.problems)[:150]}  [{v.summary()[:160]}]",
            file=sys.stderr,
            flush=True,
        )

    try:
        verdicts = run_all(cases, root, progress)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    counts = {k: sum(v.kind == k for v in verdicts) for k in ("refusal", "answer", "defect")}
    print(
        f"{len(verdicts)} cases in {time.perf_counter() - start:.0f} s: {counts['refusal']} clean "
        f"refusals, {counts['answer']} correct answers, {counts['defect']} defects",
        file=sys.stderr,
    )
    if args.markdown:
        print(format_markdown(verdicts))
    if args.write_known:  # a run of some cases (-k) updates only their lines
        ran = {v.case.id for v in verdicts}
        failing = (known_defects() - ran) | {v.case.id for v in verdicts if not v.passed}
        ids = [c.id for c in CASES if c.id in failing]
        ids += sorted(failing - {c.id for c in CASES})  # scale.*: the benchmarks
        KNOWN_DEFECTS.write_text(
            "# Cases of tests/reliability/corpus.py that fail on the current code (issue #13).\n"
            "# test_reliability.py marks them xfail(strict=True): remove a line once fixed.\n"
            "# PERFMODEL_RELIABILITY_STRICT=1 ignores this list.\n" + "\n".join(ids) + "\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(_main())
