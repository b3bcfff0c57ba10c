"""The main of the case scripts: every grid named on the command line runs every case.

``python CASES.py RxC ...`` under ``mpiexec``: per grid, ``check_graph`` on each
graph and format, then ``check_bad_input``; rank 0 prints ``ALL OK <cases>``.
Any failure raises, and the excepthook ends the job with a non-zero status.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from spbfs import Config, Graph
from spbfs.edges import EdgeList
from spbfs.mpi import DistGraph, ProcessGrid, install_excepthook


def share(a: np.ndarray, rank: int, size: int) -> np.ndarray:
    """Rank ``rank``'s slice of ``size`` equal slices of ``a``: what it reads of a file."""
    m = a.shape[0]
    return a[rank * m // size:(rank + 1) * m // size]


def both_graphs(grid: ProcessGrid, el: EdgeList, directed: bool,
                fmt: str) -> tuple[DistGraph, Graph | None]:
    """The grid's graph of ``el`` from every rank's slice, and the one-process graph on rank 0."""
    cfg = Config(format=fmt)
    rank, size = grid.rank, grid.size
    g = DistGraph.from_edges(share(el.src, rank, size), share(el.dst, rank, size), el.n,
                             directed=directed, grid=grid, config=cfg)
    serial = Graph.from_edgelist(el, directed=directed, config=cfg) if rank == 0 else None
    return g, serial


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
