"""LAGraph's direction-optimizing ("push-pull") BFS, written with python-graphblas.

A line-by-line port of ``LG_BreadthFirstSearch_SSGrB`` (the SuiteSparse
branch of ``LAGr_BreadthFirstSearch`` in github.com/GraphBLAS/LAGraph,
``src/algorithm/LG_BreadthFirstSearch_SSGrB.c``), used by
``benchmarks/peers.py`` as the "GraphBLAS done right" baseline:

* each level is one masked product ``q<!visited, replace> = q ⊕.⊗ A``: a
  ``vxm`` (push, ``q`` sparse) or an ``mxv`` with ``A.T`` (pull, ``q``
  bitmap, so SuiteSparse runs a dot-product kernel over the unvisited rows);
* the semiring is ``any_secondi`` (parents: ``secondi`` yields the index of
  the frontier vertex that reached a vertex, ``any`` keeps whichever comes
  first), or ``min_secondi`` for the deterministic smallest parent that spbfs
  reports; with levels only, ``any_pair`` over booleans;
* push switches to pull when the frontier grows and the edges out of it
  exceed ``1/alpha`` of the still-unexplored edges (alpha = 8); after the
  first pull phase only the frontier size is watched (grow past ``n/beta1``,
  beta1 = 8); pull switches back to push when the frontier shrinks to
  ``n/beta2`` vertices or fewer (beta2 = 512); with fewer unexplored edges
  than vertices push-pull is disabled, exactly as in LAGraph.

The parent/level vectors are bitmap-or-full and the frontier's sparsity is set
per level (sparse for push, bitmap for pull), as in the C code.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["ALPHA", "BETA1", "BETA2", "LAGraphBFS"]

ALPHA = 8.0
BETA1 = 8.0
BETA2 = 512.0

_INT32_MAX = np.iinfo(np.int32).max


class LAGraphBFS:
    """Push-pull BFS over a GraphBLAS adjacency matrix.

    Parameters
    ----------
    matrix : scipy.sparse matrix
        Adjacency ``A`` with ``A[u, v] != 0`` for an edge ``u -> v``; stored
        entries are edges whatever their value (the GraphBLAS matrix is an iso
        boolean pattern).
    symmetric : bool or None
        Whether ``A`` is structurally symmetric (an undirected graph), so that
        ``A`` serves as its own transpose. None checks.
    semiring : {"any", "min"}
        ``any_secondi`` as LAGraph (any valid parent), or ``min_secondi``
        (the smallest frontier neighbour, spbfs's convention).

    Attributes
    ----------
    A, AT : graphblas.Matrix
        The pattern and its transpose (the same object when symmetric).
    degree : graphblas.Vector
        Out-degree of every vertex (int64), LAGraph's ``G->rowdegree``.
    levels_of_last_run : int
        BFS levels (products) done by the last :meth:`run`.
    directions_of_last_run : str
        One letter per level of the last run: ``T`` push (top-down), ``B``
        pull (bottom-up).
    """

    def __init__(self, matrix: Any, *, symmetric: bool | None = None,
                 semiring: str = "any") -> None:
        import graphblas as gb
        import scipy.sparse as sp

        if semiring not in ("any", "min"):
            raise ValueError(f"semiring must be 'any' or 'min', got {semiring!r}")
        a = sp.csr_matrix(matrix)
        if a.shape[0] != a.shape[1]:
            raise ValueError(f"adjacency must be square, got shape {a.shape}")
        self.gb = gb
        self.n = int(a.shape[0])
        self.int_type = gb.dtypes.INT32 if self.n <= _INT32_MAX else gb.dtypes.INT64
        self.A = gb.Matrix.from_csr(a.indptr.astype(np.int64), a.indices.astype(np.int64),
                                    True, dtype=gb.dtypes.BOOL, nrows=self.n, ncols=self.n)
        if symmetric is None:
            symmetric = bool(self.A.isequal(self.A.T))
        self.symmetric = symmetric
        self.AT = self.A if symmetric else self.A.T.new()
        self.degree = self.A.reduce_rowwise(gb.agg.count).new(dtype=gb.dtypes.INT64)
        tag = "any_secondi" if semiring == "any" else "min_secondi"
        self.parent_semiring = getattr(gb.semiring.ss, tag)[self.int_type]
        self.level_semiring = gb.semiring.any_pair[gb.dtypes.BOOL]
        self.levels_of_last_run = 0
        self.directions_of_last_run = ""

    @property
    def nvals(self) -> int:
        """Stored entries of ``A`` (arcs; an undirected edge counts twice)."""
        return int(self.A.nvals)

    def run(self, src: int, *, parents: bool = True, levels: bool = True,
            pushpull: bool = True) -> tuple[Any, Any]:
        """BFS from ``src``; returns ``(level, parent)`` GraphBLAS vectors (None if not asked).

        ``parent(src) == src`` and ``level(src) == 0``; unreached vertices
        have no entry. ``pushpull=False`` runs push (top-down) only.
        """
        gb = self.gb
        n = self.n
        if not 0 <= src < n:
            raise ValueError(f"source {src} out of range for {n} vertices")
        if not (parents or levels):
            return None, None
        A, AT = self.A, self.AT
        int_type = self.int_type
        pi = v = w = None
        if parents:
            semiring = self.parent_semiring
            pi = gb.Vector(int_type, n)
            pi.ss.config["sparsity_control"] = ["bitmap", "full"]
            pi[src] = src
            q = gb.Vector(int_type, n)
            q[src] = src
        else:
            semiring = self.level_semiring
            q = gb.Vector(gb.dtypes.BOOL, n)
            q[src] = True
        if levels:
            v = gb.Vector(int_type, n)
            v.ss.config["sparsity_control"] = ["bitmap", "full"]
            v[src] = 0
        push_pull = pushpull
        if push_pull:
            w = gb.Vector(gb.dtypes.INT64, n)

        nq = 1
        n_over_beta1 = int(n / BETA1)
        n_over_beta2 = int(n / BETA2)
        do_push = True
        last_nq = 0
        edges_unexplored = self.nvals
        any_pull = False
        mask = pi if parents else v
        plus = gb.monoid.plus[gb.dtypes.INT64]
        qconfig = q.ss.config
        dirs: list[str] = []

        nvisited = 1
        k = 1
        while nvisited < n:
            # ---- select push vs pull
            if push_pull:
                if do_push:
                    growing = nq > last_nq
                    switch_to_pull = False
                    if edges_unexplored < n:
                        push_pull = False  # very little of the graph left: no pull
                    elif any_pull:
                        switch_to_pull = growing and nq > n_over_beta1
                    else:
                        # w<q, struct, replace> = Degree; edges in frontier = sum(w)
                        w(q.S, replace=True) << self.degree
                        edges_in_frontier = int(w.reduce(plus).new().value or 0)
                        edges_unexplored -= edges_in_frontier
                        switch_to_pull = growing and (
                            edges_in_frontier > edges_unexplored / ALPHA
                        )
                    if switch_to_pull:
                        do_push = False
                else:
                    shrinking = nq < last_nq
                    if shrinking and nq <= n_over_beta2:
                        do_push = True
                any_pull = any_pull or not do_push

            # ---- q = k-th level: q<!mask, struct, replace> = q'A (push) or A'q (pull)
            qconfig["sparsity_control"] = "sparse" if do_push else "bitmap"
            if do_push:
                q(~mask.S, replace=True) << q.vxm(A, semiring)
            else:
                q(~mask.S, replace=True) << AT.mxv(q, semiring)
            dirs.append("T" if do_push else "B")

            last_nq = nq
            nq = int(q.nvals)
            if nq == 0:
                break
            # ---- pi{q} = q ; v{q} = k
            if parents:
                pi(q.S) << q
            if levels:
                v(q.S) << k
            nvisited += nq
            k += 1

        self.levels_of_last_run = len(dirs)
        self.directions_of_last_run = "".join(dirs)
        return v, pi

    def levels_array(self, level: Any) -> np.ndarray:
        """A level vector as an int64 numpy array, ``-1`` where unreached."""
        return np.asarray(level.to_dense(fill_value=-1), dtype=np.int64)

    def parents_array(self, parent: Any) -> np.ndarray:
        """A parent vector as an int64 numpy array, ``-1`` where unreached."""
        return np.asarray(parent.to_dense(fill_value=-1), dtype=np.int64)
