"""Every notebook in notebooks/ runs top to bottom, and is committed without outputs.

Each notebook is executed with nbclient in a temporary copy (its working directory is a
temporary folder, so a notebook cannot depend on where it is started from). The
distributed notebook launches ``mpiexec`` and is skipped only when no ``mpiexec`` can be
found, the same way the notebook itself looks for one; its live-grid section runs on
ipyparallel MPI engines where ipyparallel is installed, else on its ``mpiexec`` stand-in.
The notebooks' real graphs come from :mod:`spbfs.datasets` (inside the package), so none
is skipped for want of data.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from contextlib import nullcontext
from pathlib import Path

import pytest
from mpi_launch import one_job_at_a_time

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
pytest.importorskip("matplotlib")

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
CELL_TIMEOUT_S = 240
NEEDS_MPI = ("04_distributed",)


def _mpiexec() -> str | None:
    return shutil.which("mpiexec") or shutil.which(
        "mpiexec", path=str(Path(sys.executable).parent)
    )


def test_there_are_notebooks():
    assert [p.stem for p in NOTEBOOKS] == [
        "01_quickstart", "02_semirings", "03_formats", "04_distributed"
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_committed_without_outputs(path: Path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    for k, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "code":
            assert cell.get("outputs") == [], f"{path.name} cell {k} has outputs"
            assert cell.get("execution_count") is None, f"{path.name} cell {k} was executed"


def _params() -> list:
    out = []
    for p in NOTEBOOKS:
        marks = [pytest.mark.mpi] if p.stem in NEEDS_MPI else []
        out.append(pytest.param(p, id=p.stem, marks=marks))
    return out


@pytest.mark.timeout(600)
@pytest.mark.parametrize("path", _params())
def test_notebook_runs(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    if path.stem in NEEDS_MPI and _mpiexec() is None:
        pytest.skip("mpiexec not found (install the project: the mpich wheel provides it)")
    copy = tmp_path / path.name
    shutil.copyfile(path, copy)
    nb = nbformat.read(copy, as_version=4)
    # The kernel imports this checkout even when the project is not installed.
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]))
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    client = nbclient.NotebookClient(
        nb, timeout=CELL_TIMEOUT_S, kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    )
    t0 = time.perf_counter()
    # The distributed notebook's jobs wait for the other worker's (mpi_launch).
    with one_job_at_a_time() if path.stem in NEEDS_MPI else nullcontext():
        client.execute()
    elapsed = time.perf_counter() - t0
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors, errors[0].get("evalue")
    images = sum("image/png" in o.get("data", {}) for c in nb.cells if c.cell_type == "code"
                 for o in c.get("outputs", []))
    if path.stem != "02_semirings":  # the algebra notebook prints, the others also plot
        assert images >= 1, f"{path.name} drew no figure"
    if path.stem == "04_distributed":
        # The live-grid section takes ipyparallel's engines where it is installed (the
        # notebook extra) and its mpiexec stand-in for %%px elsewhere (the test extra).
        # %%px shows the engines' output as display data, the stand-in prints it.
        texts = "".join(o.get("text", "") + o.get("data", {}).get("text/plain", "")
                        for c in nb.cells if c.cell_type == "code"
                        for o in c.get("outputs", []))
        try:
            import ipyparallel  # noqa: F401 (the kernel runs this interpreter)
            with_ipp = True
        except ImportError:
            with_ipp = False
        expected = "MPI engines up" if with_ipp else "each %%px cell runs as one mpiexec job"
        assert expected in texts, f"the %%px section did not take the expected path: {expected}"
        assert "levels equal to the one-process search" in texts
    print(f"{path.name}: {elapsed:.1f} s")
