"""The BFS's fused kernels, one module per backend family, and the bitmaps they share.

:mod:`~spbfs.kernels.bfs_numba` (one process on the CPU: the masked ``min_second``
SpMSV fused with the update of parents and levels, the bottom-up sweep over the
candidates still without a parent, a compiled run of small top-down levels),
:mod:`~spbfs.kernels.bfs_vectorized` (whole-array steps for numpy and cupy),
:mod:`~spbfs.kernels.bfs_cuda` (hand-written CUDA kernels and their engine) and
:mod:`~spbfs.kernels.bitmaps` (uint64 bitmaps of vertex ids, shared with the
grid's kernels in :mod:`spbfs.mpi`). The generic semiring kernels are
:mod:`semirings.kernels`; the engines that call these are in :mod:`spbfs.search`.

Nothing is imported here: numba compiles (or loads) a module's kernels on import.
"""
