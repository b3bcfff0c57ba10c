"""Tests of the distributed algorithms (:mod:`spbfs.algorithms.distributed`) under mpiexec.

Each launch runs ``tests/mpi/algorithms_cases.py`` on one or two grid shapes:
PageRank, connected components, SSSP, multi-source BFS and betweenness on
several small graphs and both formats, every result compared on rank 0 with
the one-process function and with scipy / networkx, plus bad input that must
raise the same error on every rank; and every algorithm on both grid engines
(numba and numpy) against the one-process numba result, also on a 3x2 grid.
The job is killed (whole process group) if it hangs.
"""

from __future__ import annotations

import pytest
from mpi_launch import SCRIPTS, launch, needs_mpi, on_grids

SCRIPT = SCRIPTS / "algorithms_cases.py"


@pytest.mark.mpi
@needs_mpi
@on_grids({1: ["1x1"], 2: ["1x2", "2x1"], 4: ["2x2"]})
def test_distributed_algorithms_match_serial(nranks: int, grids: list[str]) -> None:
    """Gathered results equal the one-process functions and scipy / networkx on every grid."""
    rc, out, err, _ = launch(nranks, [str(SCRIPT), *grids], timeout=300)
    assert rc == 0, f"stdout:\n{out}\nstderr:\n{err}"
    assert "ALL OK" in out, out


@pytest.mark.mpi
@needs_mpi
@on_grids({6: ["3x2"]})
def test_distributed_algorithms_both_engines_on_six_ranks(nranks: int, grids: list[str]) -> None:
    """Every algorithm on both engines of a 3x2 grid gives numba's one-process result."""
    rc, out, err, _ = launch(nranks, [str(SCRIPT), "--engines", *grids], timeout=600)
    assert rc == 0, f"stdout:\n{out}\nstderr:\n{err}"
    assert "ALL OK" in out, out


@pytest.mark.mpi
@needs_mpi
@on_grids({2: ["2x1", "1x2"]})
def test_distributed_algorithms_refuse_cupy(nranks: int, grids: list[str]) -> None:
    """A grid graph for ``backend="cupy"`` (a GPU per rank, here the stand-in's) is refused."""
    rc, out, err, _ = launch(nranks, [str(SCRIPT), "--standin", "--engines", *grids],
                             timeout=600)
    assert rc == 0, f"stdout:\n{out}\nstderr:\n{err}"
    assert "ALL OK" in out, out
