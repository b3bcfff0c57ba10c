"""spbfs: graph algorithms as sparse linear algebra over semirings.

The flagship is a direction-optimizing breadth-first search written as
sparse-matrix × sparse-vector products over the ``min_second`` semiring, on one
process (:func:`bfs`) or on a pr × pc MPI process grid (:mod:`spbfs.dist`).
"""

from spbfs.bfs import bfs
from spbfs.config import Config, load_config
from spbfs.edges import EdgeList
from spbfs.graph import Graph, as_graph
from spbfs.result import BFSResult, LevelStats

__version__ = "0.1.0"

__all__ = [
    "BFSResult",
    "Config",
    "EdgeList",
    "Graph",
    "LevelStats",
    "as_graph",
    "bfs",
    "load_config",
]
