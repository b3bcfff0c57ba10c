"""Semiring traversals on the grid (``spbfs.mpi.bfs(..., semiring=...)``) under mpiexec.

``tests/mpi/semiring_cases.py`` runs on the grid shapes of each rank count, in the
jobs it shares with test_mpi.py's cases (:data:`mpi_launch.SHARED`): shortest-path
counts over ``plus_second`` (the generic grid engine) and levels over ``any_pair``
(the fused grid search), gathered and compared on rank 0 with the one-process
``spbfs.bfs`` (values, levels, per-level counts), plus bad arguments that must
raise the same error on every rank. The job is killed (whole process group) if it
hangs.
"""

from __future__ import annotations

import pytest
from mpi_launch import SharedJobs, needs_mpi, on_grids, shared_args


@pytest.mark.mpi
@needs_mpi
# A grid runs on the first ranks of its job (case_runner.sub_grid).
@on_grids(shared_args("semiring_cases.py"))
def test_semiring_traversal_matches_one_process(nranks: int, grids: list[str],
                                                shared_jobs: SharedJobs) -> None:
    """Gathered values and levels equal the one-process traversal on every grid."""
    ended, out, err = shared_jobs.part(nranks, "semiring_cases.py", grids)
    assert ended, f"stdout:\n{out}\nstderr:\n{err}"
    assert "ALL OK" in out, out
