"""Issue #13, "Nothing gets through": every attack in tests/reliability/ is refused cleanly
or answered correctly.

A refusal is exit status 2 and one line on stderr, ``perfmodel: error: ...`` naming the
file or field, with no traceback, nothing on stdout and no file created or changed; an
answer is exit status 0 with finite numbers and strict JSON (see reliability/harness.py).
Cases listed in reliability/known_defects.txt (docs/design/reliability-defects.md says
why) are expected to fail until fixed (xfail, strict: a fixed one fails until its line is removed);
``PERFMODEL_RELIABILITY_STRICT=1`` ignores the list. ``-m "reliability and not slow"`` is
the CI selection; the slow ones are the default fit of the quick-start data (it compiles
every family) and the 10⁵/10⁶-row benchmarks.
"""

import os

import numpy as np
import pytest
from reliability import harness
from reliability.corpus import CASES

pytestmark = pytest.mark.reliability

STRICT = os.environ.get("PERFMODEL_RELIABILITY_STRICT") == "1"
KNOWN = set() if STRICT else harness.known_defects()
KNOWN_REASON = "known defect: docs/design/reliability-defects.md"


def _param(case):
    marks = []
    if case.slow:
        marks.append(pytest.mark.slow)
    if case.id in KNOWN:
        marks.append(pytest.mark.xfail(strict=True, reason=KNOWN_REASON))
    return pytest.param(case, id=case.id, marks=marks)


SCALE_IDS = ("scale.1e5-rows-default", "scale.1e6-rows-amdahl")


def test_known_defects_name_cases():
    assert not KNOWN - {case.id for case in CASES} - set(SCALE_IDS)


@pytest.fixture(scope="module")
def limited(tmp_path_factory):
    """The cases that ask for huge sizes, together in one subprocess under 3 GiB."""
    cases = [case for case in CASES if case.mode == "limited"]
    return harness.run_limited_cases(cases, tmp_path_factory.mktemp("limited"))


@pytest.mark.parametrize("case", [_param(case) for case in CASES])
def test_attack(case, tmp_path, request):
    if case.mode == "limited":
        verdict = request.getfixturevalue("limited")[case.id]
    else:
        try:
            verdict = harness.run_case(case, tmp_path / "case")
        except harness.Unsupported as error:
            pytest.skip(str(error))
    assert verdict.passed, (
        f"{case.id} ({case.what}): {'; '.join(verdict.problems)} [{verdict.summary()}]"
    )


# Scale: per-step timings of a few runs, 10⁵ and 10⁶ rows -----------------------------------


def _per_step_csv(path, rows: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    counts = np.array([1, 2, 4, 8, 16, 32])
    gpus = np.repeat(counts, -(-rows // counts.size))[:rows]
    times = (0.1 + 0.9 / gpus) * np.exp(rng.normal(0.0, 0.05, rows))
    with open(path, "w") as stream:
        stream.write("gpus,time_s\n")
        np.savetxt(stream, np.column_stack([gpus, times]), fmt=["%d", "%.6g"], delimiter=",")


def _scale(rows, options, name):
    known = pytest.mark.xfail(strict=True, reason=KNOWN_REASON)
    return pytest.param(rows, options, id=name, marks=[known] if f"scale.{name}" in KNOWN else [])


@pytest.mark.slow
@pytest.mark.parametrize(
    "rows, options",
    [
        _scale(10**5, [], "1e5-rows-default"),
        _scale(10**6, ["--model", "amdahl"], "1e6-rows-amdahl"),
    ],
)
def test_large_csv_fits_in_seconds(tmp_path, rows, options):
    """Scope 5 of the issue: 10⁶ rows read and fitted within a minute and under 1 GB
    (the time itself is measured by `benchmarks/scale.py`)."""
    csv = tmp_path / "steps.csv"
    _per_step_csv(csv, rows)
    outcome, peak = harness.run_measured(
        ["fit", "steps.csv", *options, "--json"], tmp_path, timeout=60, as_bytes=6 * 2**30
    )
    summary = (
        f"{outcome.seconds:.1f} s, {peak / 2**30:.2f} GiB; {outcome.note} {outcome.err[-300:]}"
    )
    assert outcome.rc == 0, summary
    # Within the 60-s timeout (a hang fails); the seconds are benchmarks/scale.py's to
    # measure (RESULTS.md), not a timed assertion here. The target is 1 GB: the
    # first-ever 10⁶-row fit (compiling, no cache) peaks at about 0.75 GB, the default
    # one at 0.73 (RESULTS.md, "10⁶-row fits").
    assert peak < 2**30, summary
    quality = harness.strict_json(outcome.out)["quality"]
    assert quality["mape_percent"] < 10, summary
