"""The notebooks in notebooks/: stored clean, and executed so that they never rot."""

from pathlib import Path
import re

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
EXPECTED = {"quickstart.ipynb", "your_own_csv.ipynb", "design_space_sweep.ipynb"}


def _read(path: Path):
    return nbformat.read(path, as_version=4)


def test_the_three_notebooks_are_there():
    assert {p.name for p in NOTEBOOKS} == EXPECTED


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_stored_clean(path):
    notebook = _read(path)
    nbformat.validate(notebook)
    cells = notebook.cells
    # A title, one paragraph, then the imports (STYLE.md §11).
    assert cells[0].cell_type == "markdown" and cells[0].source.startswith("# ")
    assert cells[1].cell_type == "code" and "import perfmodel as pm" in cells[1].source
    for cell in cells:
        if cell.cell_type != "code":
            continue
        assert cell.outputs == [] and cell.execution_count is None, "stored with outputs"
        # No library code in notebooks: helpers belong in perfmodel/.
        assert not re.search(r"^\s*(def|class) ", cell.source, re.MULTILINE), cell.source
        assert "shared" not in cell.source


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(path, tmp_path):
    notebook = _read(path)
    client = nbclient.NotebookClient(
        notebook,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute()  # raises CellExecutionError, with the cell and traceback, on error
    errors = [o for c in notebook.cells for o in c.get("outputs", []) if o.output_type == "error"]
    assert not errors
    assert list(tmp_path.iterdir()) == [], "notebooks write only to their own temp folders"
