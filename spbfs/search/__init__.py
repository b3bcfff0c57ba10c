"""The one breadth-first search: its level loop, its argument checks and its engines.

:mod:`~spbfs.search.driver` holds the loop every engine runs under and the
:class:`~spbfs.search.driver.Engine` protocol; :mod:`~spbfs.search.checks`
the argument checks all searches share. The one-process engines live beside
them (:mod:`~spbfs.search.numba_engine`, :mod:`~spbfs.search.vectorized_engine`;
the CUDA engine in :mod:`spbfs.kernels.bfs_cuda`); the grid engine is
:class:`spbfs.mpi.bfs.GridEngine`. A traversal over any other semiring than
``min_second`` / ``any_pair`` runs :mod:`~spbfs.search.semiring_engine` (on the
grid :mod:`spbfs.mpi.semiring_engine`).

Nothing is imported here: the checks are used by modules the driver itself
imports (results, graphs), and importing the package must not import them back.
"""
