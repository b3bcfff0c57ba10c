"""2D-distributed direction-optimizing BFS over MPI (mpi4py).

The graph's pre-transposed adjacency ``B`` and the vectors are spread over a
``pr x pc`` process grid as in Buluç, Beamer, Madduri, Asanović and Patterson,
*Distributed-Memory Breadth-First Search on Massive Graphs* (2017):
rank ``(i, j)`` holds block ``B[row chunk i, column chunk j]`` (stored
transposed, once for an undirected graph unless ``Config.grid_blocks`` is
``"both"``) and vector piece ``i * pc + j``.
Top-down levels are Algorithm 3 (transpose, expand down the processor
column, local SpMSV over ``min_second``, fold along the row; for an
undirected graph with one stored block its transposed form, expand along
the row and fold down the column);
bottom-up levels are Algorithm 4 (frontier bitmap gathered down the column,
``pc`` sub-steps rotating the ``completed`` bitmap along the row). The
direction of each level comes from globally reduced counts with the
one-process heuristics.

The modules, each with one job: :mod:`~spbfs.mpi.grid` (the process grid and
who owns which ids), :mod:`~spbfs.mpi.graph` (the distributed graph and its
construction; kernels in ``_construct``), :mod:`~spbfs.mpi.comm` (waits that
yield, chunked collectives, errors that end the job), :mod:`~spbfs.mpi.spmsv`
(the grid's SpMSV in named phases: every vector that moves, moves there),
:mod:`~spbfs.mpi.exchange` (how a row or column moves a set of messages:
posted point-to-point, MPI collectives or :mod:`~spbfs.mpi.butterfly`),
:mod:`~spbfs.mpi.codec` (compressed frontiers and pairs),
:mod:`~spbfs.mpi.costmodel` and :mod:`~spbfs.mpi.planner` (what an exchange costs,
and the choices a search makes from it), :mod:`~spbfs.mpi.network` (the link
model, its measurement, and the emulated slow network),
:mod:`~spbfs.mpi.bfs` (the grid engine of the one BFS driver, its kernels in
``_kernels``, and its result), :mod:`~spbfs.mpi.semiring_engine` (the grid
engine of other semirings), :mod:`~spbfs.mpi.read` (graph files read in
slices by every rank) and :mod:`~spbfs.mpi.validate` (the Graph500 checks,
distributed).

Every function and constructor here is *collective*: all ranks of the grid
call it with the same arguments, which its first collective checks (a bad
or differing argument on one rank raises :class:`CollectiveError` on every
rank). Importing this package does not initialize MPI (mpi4py is imported on
first use; constructing a :class:`ProcessGrid` does), but installs
:func:`install_excepthook`, so that an uncaught exception or the end of the
script on one rank ends the whole job instead of leaving the others waiting;
in a process without MPI the hook changes nothing. Every wait has a
watchdog (an hour unless :class:`ProcessGrid` is given ``watchdog=``).

Examples
--------
Run with ``mpiexec -n 4 python script.py``::

    from spbfs.mpi import DistGraph, bfs

    g = DistGraph.kronecker(12, 16, seed=1, grid=(2, 2))
    r = bfs(g, int(g.sample_roots(1)[0]))
    info = r.validate(g)
    full = r.gather()          # a spbfs.BFSResult on rank 0
"""

from __future__ import annotations

from spbfs._namespace import public_dir
from spbfs.mpi.bfs import DistBFSResult, bfs, traversed_edges
from spbfs.mpi.comm import CollectiveError, install_excepthook
from spbfs.mpi.graph import DistGraph
from spbfs.mpi.grid import Distribution, ProcessGrid, auto_grid_shape

# Cheap (no MPI): whatever a script does next, one rank's failure or exit ends the job.
install_excepthook()

# ``bfs`` is also the name of a submodule: the import above leaves the function bound here.
__all__ = [
    "CollectiveError",
    "DistBFSResult",
    "DistGraph",
    "Distribution",
    "ProcessGrid",
    "auto_grid_shape",
    "bfs",
    "install_excepthook",
    "traversed_edges",
]

__dir__ = public_dir(__name__, __all__)
