"""Semiring traversals on the grid (``spbfs.mpi.bfs(..., semiring=...)``) under mpiexec.

Each launch runs ``tests/mpi/semiring_cases.py`` on the grid shapes of its rank
count: shortest-path counts over ``plus_second`` (the generic grid engine) and
levels over ``any_pair`` (the fused grid search), gathered and compared on
rank 0 with the one-process ``spbfs.bfs`` (values, levels, per-level counts),
plus bad arguments that must raise the same error on every rank. The job is
killed (whole process group) if it hangs.
"""

from __future__ import annotations

import pytest
from mpi_launch import SCRIPTS, launch, needs_mpi, on_grids

SCRIPT = SCRIPTS / "semiring_cases.py"


@pytest.mark.mpi
@needs_mpi
# A grid runs on the first ranks of its launch (case_runner.sub_grid).
@on_grids({2: ["1x1", "1x2", "2x1"], 6: ["2x2", "2x3", "3x2"]})
def test_semiring_traversal_matches_one_process(nranks: int, grids: list[str]) -> None:
    """Gathered values and levels equal the one-process traversal on every grid."""
    rc, out, err, _ = launch(nranks, [str(SCRIPT), *grids], timeout=300)
    assert rc == 0, f"stdout:\n{out}\nstderr:\n{err}"
    assert "ALL OK" in out, out
