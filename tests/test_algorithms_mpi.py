"""Tests of the distributed algorithms (:mod:`spbfs.algorithms.distributed`) under mpiexec.

Each launch runs ``tests/mpi/algorithms_cases.py`` on one or two grid shapes:
PageRank, connected components, SSSP, multi-source BFS and betweenness on
several small graphs and both formats, every result compared on rank 0 with
the one-process function and with scipy / networkx, plus bad input that must
raise the same error on every rank; and every algorithm on the grid engines
(numba, numpy, and cupy on the strict stand-in of ``tests/_cupy_standin.py``)
against the one-process numba result, also on a 3x2 grid, whose launch runs
the BFS engine cases (``tests/mpi/engine_cases.py``) too.
The job is killed (whole process group) if it hangs.
"""

from __future__ import annotations

import pytest
from mpi_launch import SCRIPTS, launch, needs_mpi, on_grids

SCRIPT = SCRIPTS / "algorithms_cases.py"


@pytest.mark.mpi
@needs_mpi
# One launch: each grid on its first ranks (case_runner.sub_grid), the 1x1 first.
@on_grids({4: ["1x1", "1x2", "2x1", "2x2"]})
def test_distributed_algorithms_match_serial(nranks: int, grids: list[str]) -> None:
    """Gathered results equal the one-process functions and scipy / networkx on every grid."""
    rc, out, err, _ = launch(nranks, [str(SCRIPT), *grids], timeout=600)
    assert rc == 0, f"stdout:\n{out}\nstderr:\n{err}"
    assert "ALL OK" in out, out


@pytest.mark.mpi
@needs_mpi
@on_grids({6: ["3x2", "2x2:cupy"]})
def test_grid_engines_on_six_ranks(nranks: int, grids: list[str]) -> None:
    """One six-rank launch: on 3x2 the BFS (numba, numpy and the stand-in's cupy engines: the
    same levels and parents) and every algorithm on the three engines (numba's one-process
    results); on a 2x2 grid of four of its ranks every algorithm on cupy."""
    rc, out, err, _ = launch(nranks, [str(SCRIPT), "--standin", "--engines", "--bfs",
                                      "--backends=numba,numpy,cupy", *grids], timeout=900)
    assert rc == 0, f"stdout:\n{out}\nstderr:\n{err}"
    assert "ALL OK" in out and "BFS engine cases too" in out, out


@pytest.mark.mpi
@needs_mpi
@on_grids({2: ["2x1", "1x2", "1x1"]})
def test_distributed_algorithms_on_cupy(nranks: int, grids: list[str]) -> None:
    """Every algorithm on a grid graph for ``backend="cupy"`` (a GPU per rank, here the
    stand-in's) gives numba's one-process results; a received piece left on the host raises
    the stand-in's HostLeak; ``auto`` takes the GPUs only where every rank has one."""
    rc, out, err, _ = launch(nranks, [str(SCRIPT), "--standin", "--engines", *grids],
                             timeout=600)
    assert rc == 0, f"stdout:\n{out}\nstderr:\n{err}"
    assert "ALL OK" in out, out
