"""User semirings on the grid's array engine, under ``mpiexec``.

Each launch runs ``tests/mpi/grid_semiring_cases.py --standin``: traversals over
semirings built with :class:`semirings.Semiring` on 1x1, 2x1, 1x2 and 2x2
grids, with ``backend="numpy"`` and ``backend="cupy"`` (the strict cupy
stand-in), must give the values, levels and per-level counts of
``backend="numba"`` (itself equal to one process), both formats, every
direction; a semiring without a vectorized form is refused on every rank,
and without the stand-in (no GPU) so is ``backend="cupy"``.
"""

from __future__ import annotations

import pytest
from mpi_launch import SCRIPTS, launch, needs_mpi, on_grids

SCRIPT = SCRIPTS / "grid_semiring_cases.py"


@pytest.mark.mpi
@needs_mpi
# A grid runs on the first ranks of its launch (case_runner.sub_grid).
@on_grids({4: ["1x1", "2x1", "1x2", "2x2"]})
def test_user_semirings_on_the_array_engine_match_numba(nranks: int, grids: list[str]) -> None:
    rc, out, err, _ = launch(nranks, [str(SCRIPT), "--standin", *grids], timeout=400)
    assert rc == 0, f"stdout:\n{out}\nstderr:\n{err}"
    assert "ALL OK" in out, out


@pytest.mark.mpi
@needs_mpi
def test_numpy_engine_and_cupy_refusal_without_the_standin() -> None:
    """Without the stand-in: numpy equals numba; ``cupy`` is refused on both ranks."""
    rc, out, err, _ = launch(2, [str(SCRIPT), "2x1"], timeout=400)
    assert rc == 0, f"stdout:\n{out}\nstderr:\n{err}"
    assert "ALL OK" in out, out
