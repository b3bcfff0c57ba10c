"""spbfs: graph algorithms as sparse linear algebra over semirings.

The flagship is a direction-optimizing breadth-first search written as
sparse-matrix × sparse-vector products over the ``min_second`` semiring, on one
process (:func:`bfs`) or on a pr × pc MPI process grid (:mod:`spbfs.mpi`).
Other semiring algorithms (multi-source BFS, SSSP, connected components,
betweenness, PageRank, triangles) live in :mod:`spbfs.algorithms` and are
re-exported here (imported on first use, which keeps ``import spbfs`` and every
MPI rank's start-up quick).

The packages, from the top of the stack down (docs: Concepts, Architecture):

:mod:`spbfs.cli`
    The ``spbfs`` command, one process or a grid under ``mpiexec``.
:mod:`spbfs.algorithms`
    Semiring algorithms beyond BFS, each grid twin beside its original.
:mod:`spbfs.search`
    The one BFS level loop, its argument checks and the one-process engines.
:mod:`spbfs.kernels`
    The BFS's fused kernels (numba, numpy/cupy, CUDA) and their bitmaps.
:mod:`spbfs.mpi`
    The process grid, the distributed graph, the grid engine and the grid's
    SpMSV phases.
:mod:`spbfs.io`
    Graph files: one private module per format, the shared text scanner.
:mod:`spbfs.datasets`
    The small public graphs the docs and tests use, bundled (``spbfs.datasets.karate()``).
:mod:`semirings`
    The algebra, sparse vectors, CSR/DCSC blocks and the generic kernels.
"""

from typing import Any

from spbfs import _compile
from spbfs._namespace import public_dir
from spbfs.bfs import bfs
from spbfs.config import Config, load_config
from spbfs.edges import EdgeList
from spbfs.graph import Graph, as_graph
from spbfs.matrix_cache import MatrixCache
from spbfs.result import BFSResult, LevelStats

__version__ = "0.1.0"

# One line on stderr when a kernel first compiles in this process (numba calls the
# listener on cache misses only: a warm call pays nothing).
_compile.install_notice()

__all__ = [
    "BFSResult",
    "Config",
    "EdgeList",
    "Graph",
    "LevelStats",
    "MatrixCache",
    "as_graph",
    "betweenness_centrality",
    "bfs",
    "connected_components",
    "load_config",
    "multi_source_bfs",
    "pagerank",
    "sssp",
    "triangle_count",
]

#: Subpackages a plain ``import spbfs`` reaches as attributes (``spbfs.datasets.karate()``,
#: ``spbfs.algorithms.sssp(...)``), imported on first use by __getattr__.
_ON_FIRST_USE = ("algorithms", "datasets", "generators", "io", "validate")

__dir__ = public_dir(__name__, [*__all__, *_ON_FIRST_USE])


def __getattr__(name: str) -> Any:
    # The names of __all__ not bound above are the algorithms, imported on first use.
    if name in __all__:
        from spbfs import algorithms

        return getattr(algorithms, name)
    if name in _ON_FIRST_USE:
        import importlib

        return importlib.import_module(f"spbfs.{name}")
    raise AttributeError(f"module 'spbfs' has no attribute {name!r}")
