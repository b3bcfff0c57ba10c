"""The main of the case scripts: every grid named on the command line runs every case.

``python CASES.py RxC ...`` under ``mpiexec``: per grid, ``check_graph`` on each
graph and format, then ``check_bad_input``; rank 0 prints ``ALL OK <cases>``.
Any failure raises, and the excepthook ends the job with a non-zero status.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from spbfs.mpi import ProcessGrid, install_excepthook


def run_cases(graphs: Callable[[], list[tuple[str, Any, bool]]],
              check_graph: Callable[..., None],
              check_bad_input: Callable[[ProcessGrid], None]) -> None:
    """Run the cases on the grids of ``sys.argv[1:]``."""
    install_excepthook()
    cases = [0]
    for shape in sys.argv[1:]:
        grid = ProcessGrid(shape)
        for name, el, directed in graphs():
            for fmt in ("csr", "dcsc"):
                check_graph(grid, name, el, directed, fmt, cases)
        check_bad_input(grid)
        grid.free()
    from mpi4py import MPI

    if MPI.COMM_WORLD.Get_rank() == 0:
        print(f"ALL OK {cases[0]} cases on grids {' '.join(sys.argv[1:])}", flush=True)
