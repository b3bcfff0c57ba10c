"""The main of the case scripts: every grid named on the command line runs every case.

``python CASES.py RxC ...`` under ``mpiexec``: per grid, ``check_graph`` on each
graph and format (or one format a graph, turning: :func:`run_cases`), then
``check_bad_input``; rank 0 prints ``ALL OK <cases>``.
Any failure raises, and the excepthook ends the job with a non-zero status.
A grid ``RxC`` runs on the first ``R·C`` ranks of the job (:func:`sub_grid`), so one
launch covers grids of several sizes, smallest first.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from spbfs import Config, Graph
from spbfs.edges import EdgeList
from spbfs.mpi import DistGraph, ProcessGrid, install_excepthook

#: Longest sleep between polls of a rank waiting idle at the end of a grid (:func:`first_ranks`).
IDLE_POLL_S = 0.05


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


@contextmanager
def first_ranks(count: int) -> Iterator[Any]:
    """A communicator of the job's first ``count`` ranks (None on the others, which wait idle).

    One launch then covers communicators of several sizes, smallest first: each
    rank starts once (imports, numba's cache) for all of them, and a first one
    of one rank compiles the kernels alone for the larger ones. The idle ranks
    poll the closing barrier with growing sleeps (:data:`IDLE_POLL_S`), so they
    leave the shared cores to the working ones.
    """
    from mpi4py import MPI

    world = MPI.COMM_WORLD
    inside = world.Get_rank() < count
    sub = world.Split(0 if inside else 1, world.Get_rank())
    try:
        yield sub if inside else None
    except BaseException:
        # Not to the closing barrier: the other ranks may wait for this one in a
        # collective, and the job would hang with the error unreported. The job's hook
        # (spbfs.mpi.install_excepthook) reports it and aborts every rank.
        sys.excepthook(*sys.exc_info())
        raise
    finally:
        sub.Free()
        done = world.Ibarrier()
        # Sleeps growing to IDLE_POLL_S: a rank idle for a whole grid wakes 20 times
        # a second instead of 200 (each wake takes a share of the cores the working
        # ranks need); a grid's end then waits at most that long for its progress.
        nap = 0.001
        while not done.Test():
            time.sleep(nap)
            nap = min(2 * nap, IDLE_POLL_S)


def each_first_ranks(check: Callable[[Any], None], counts: list[str]) -> None:
    """``check(comm)`` on the job's first ``Q`` ranks for each ``Q`` in ``counts``
    (command-line words; none: the whole job), smallest first as given."""
    from mpi4py import MPI

    for count in [int(q) for q in counts] or [MPI.COMM_WORLD.Get_size()]:
        with first_ranks(count) as comm:
            if comm is not None:
                check(comm)


@contextmanager
def sub_grid(shape: str) -> Iterator[ProcessGrid | None]:
    """The grid ``RxC`` on the first ``R·C`` ranks (:func:`first_ranks`; None on the others).

    One launch covers smaller grids too (a 1x1 in a two-rank job, a 2x2 in a
    six-rank one).
    """
    r, c = (int(x) for x in shape.split("x"))
    with first_ranks(r * c) as comm:
        grid = ProcessGrid(shape, comm=comm) if comm is not None else None
        try:
            yield grid
        finally:
            if grid is not None:
                grid.free()


#: The word that separates two command lines.
SEPARATOR = ":::"


def command_lines(words: list[str]) -> list[list[str]]:
    """``words`` cut at every :data:`SEPARATOR` (an empty command line is an error): the
    command lines of ``cli_runs.py``, the parts of ``jobs.py``."""
    lines: list[list[str]] = [[]]
    for w in words:
        if w == SEPARATOR:
            lines.append([])
        else:
            lines[-1].append(w)
    if any(not line for line in lines):
        raise SystemExit(f"an empty command line (two {SEPARATOR} in a row, or one at an end) "
                         f"in {words}")
    return lines


def run_cases(graphs: Callable[[], list[tuple[str, Any, bool]]],
              check_graph: Callable[..., None],
              check_bad_input: Callable[[ProcessGrid], None], *,
              turn_formats: bool = False) -> None:
    """Run the cases on the grids of ``sys.argv[1:]``.

    ``turn_formats``: each graph in one format, the formats turning with the
    graph and the grid's ``pr + pc`` (graph ``k`` in ``("csr", "dcsc")[(k + pr +
    pc) % 2]``), half the cases of both formats everywhere. With two graphs or
    more, and grids of both parities of ``pr + pc`` in the launch, every grid
    still runs both formats and every graph both formats: the (grid, format),
    (graph, format) and (grid, graph) pairs are all covered.
    """
    install_excepthook()
    cases = [0]
    for shape in sys.argv[1:]:
        with sub_grid(shape) as grid:
            if grid is None:
                continue
            for k, (name, el, directed) in enumerate(graphs()):
                for f, fmt in enumerate(("csr", "dcsc")):
                    if turn_formats and (k + grid.pr + grid.pc) % 2 != f:
                        continue
                    check_graph(grid, name, el, directed, fmt, cases)
            check_bad_input(grid)
    from mpi4py import MPI

    if MPI.COMM_WORLD.Get_rank() == 0:
        print(f"ALL OK {cases[0]} cases on grids {' '.join(sys.argv[1:])}", flush=True)
