"""The README's and docs/'s examples run as written, so they cannot rot.

Each page runs in a fresh folder that holds links to the repository's `datasets/` and
`benchmarks/`: ```python blocks run in one namespace per page, in order, and every line
of a ```bash block that starts with ``perfmodel`` runs through the CLI and must exit 0.
A block preceded by ``<!-- no-test -->`` is skipped (install commands, sketches).
"""

import contextlib
import io
import os
from pathlib import Path
import re
import shlex

import pytest

from perfmodel._cli import main

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"(<!-- no-test -->\s*)?```(python|bash)\n(.*?)```", re.S)


def blocks(page: Path):
    """``(language, code)`` of each fenced block that is to run."""
    return [(m[2], m[3]) for m in BLOCK.finditer(page.read_text()) if not m[1]]


def commands(code: str) -> list[list[str]]:
    """The ``perfmodel ...`` lines of a bash block, comments and continuations handled."""
    joined = code.replace("\\\n", " ")
    out = []
    for line in joined.splitlines():
        line = line.split(" #", 1)[0].strip()
        if line.startswith("perfmodel "):
            out.append(shlex.split(line)[1:])
    return out


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_examples_run(page, tmp_path, monkeypatch):
    for name in ("datasets", "benchmarks", "fit"):
        (tmp_path / name).symlink_to(ROOT / name)
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    for language, code in blocks(page):
        if language == "python":
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(code, f"{page.name} example", "exec"), namespace)
            continue
        for argv in commands(code):
            with contextlib.redirect_stdout(io.StringIO()) as out:
                status = main(argv)
            assert status == 0, f"{page.name}: perfmodel {shlex.join(argv)} exited {status}"
            assert "Traceback" not in out.getvalue()


def test_every_page_is_linked_from_the_readme():
    readme = (ROOT / "README.md").read_text()
    for page in PAGES[1:]:
        assert f"docs/{page.name}" in readme, f"README does not link docs/{page.name}"
    assert os.path.getsize(ROOT / "README.md") < 8 * 1024


def test_cli_reference_is_current():
    import importlib.util

    spec = importlib.util.spec_from_file_location("cli_ref", ROOT / "docs/make_cli_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert (ROOT / "docs/cli.md").read_text() == module.reference(), (
        "docs/cli.md is out of date: run python docs/make_cli_reference.py"
    )


def _anchors(page: Path) -> set[str]:
    """GitHub's anchors of a page's headings (lower case, punctuation dropped, - for space)."""
    out, fenced = set(), False
    for line in page.read_text().splitlines():
        fenced ^= line.startswith("```")
        heading = None if fenced else re.match(r"#+\s+(.*)", line)
        if heading:
            out.add(re.sub(r"[^\w\- ]", "", heading[1].strip().lower()).replace(" ", "-"))
    return out


def test_relative_links_resolve():
    # A link in docs/ is relative to docs/: `fit/x.png` there was a broken image on GitHub.
    broken = []
    for page in PAGES:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            linked = (page.parent / path) if path else page
            if not linked.exists():
                broken.append(f"{page.name}: {target} (no such file)")
            elif anchor and linked.suffix == ".md" and anchor not in _anchors(linked):
                broken.append(f"{page.name}: {target} (no such heading)")
    assert not broken, broken
