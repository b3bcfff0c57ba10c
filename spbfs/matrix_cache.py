"""Searches on raw scipy matrices: one-off searches read the matrix, repeated ones reuse a Graph.

``spbfs.bfs(A, s)`` on a scipy sparse matrix has two good plans, and which one
is better depends on what comes next:

- a **one-off** search reads the rows of ``A`` as they are (out-edges,
  top-down, :func:`spbfs.kernels.rows_bfs.rows_search`): no transpose, no
  symmetry check, no copy of a csr matrix's structure;
- **repeated** searches want the :class:`~spbfs.graph.Graph` (in-edges,
  the direction-optimizing search, degree arrays, scratch kept between
  searches), whose construction costs several searches.

A :class:`MatrixCache` remembers the matrices it has seen: the first search on
a matrix is a one-off; the second builds the Graph and keeps it; later ones
reuse it. A kept Graph is served only while the matrix is unchanged, checked
on every call by reading the whole structure: a digest of ``indptr`` and
``indices`` (``row`` and ``col`` for coo), the shape, the format and the
identity of those arrays. So a matrix edited in place (its ``indices``,
``indptr``, a ``resize``, a ``sort_indices``), given new arrays, or a new
matrix that got the id of a collected one, is never served a stale Graph; a
changed matrix goes back to one-off searches until it is searched unchanged
again. The first search on a matrix reads no digest (it keeps nothing that
could go stale, and a one-off must cost what scipy's own search costs); the
second takes the digest of the content it builds the Graph from. Values are
not part of the digest: a search ignores them (every stored entry, explicit
zeros included, is an edge, as :meth:`~spbfs.graph.Graph.from_matrix` has it).

**Where the cache lives.** The cache is an object, not hidden module state: :func:`spbfs.bfs` takes
``cache=`` (a :class:`MatrixCache`, ``True`` or ``False``). Code that searches
several matrices repeatedly, or that wants the memory back at a known point,
makes its own ``MatrixCache`` and passes it. ``cache=True``, the default, uses
the one :class:`MatrixCache` the process holds (:func:`process_cache`),
because a user who writes ``spbfs.bfs(A, s)`` in a loop expects the second
call to be faster than the first, as with numba's or ``re``'s caches. That
instance can only change the speed of a search, never its answer: it holds
matrices by weak reference (a matrix collected by the garbage collector leaves
the cache with its Graph at once), it checks every matrix's content on every
call, and it keeps at most :attr:`MatrixCache.max_matrices` matrices.
``cache=False`` neither reads nor fills any cache: every call is a one-off
where one is possible.

Memory: a cached Graph of a csr matrix with int32 ids and a symmetric
structure shares the matrix's arrays and adds about 40 bytes per vertex
(degrees, the search's kept scratch); a directed matrix adds its in-edges (a
copy of the structure, transposed).
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np

from spbfs.config import Config
from spbfs.graph import Graph
from spbfs.matrix_structure import check_compressed, fingerprint

__all__ = ["MatrixCache", "RowsInput", "process_cache", "rows_input"]


@dataclass(frozen=True)
class RowsInput:
    """A checked csr structure for a one-off search over its rows.

    Attributes
    ----------
    indptr, indices : numpy.ndarray
        The csr arrays (the matrix's own for a csr input; pointers valid and
        ids in ``[0, n)``, checked).
    n : int
        Number of vertices.
    """

    indptr: np.ndarray
    indices: np.ndarray
    n: int


def _structure_arrays(matrix: Any) -> tuple[np.ndarray, ...] | None:
    """The arrays that hold a matrix's pattern, or None for a format not digested."""
    fmt = matrix.format
    if fmt in ("csr", "csc"):
        return (matrix.indptr, matrix.indices)
    if fmt == "coo":
        return tuple(matrix.coords)
    return None


def rows_input(matrix: Any) -> RowsInput:
    """The csr structure of a scipy ``matrix`` (its own arrays for csr), checked.

    Raises
    ------
    ValueError
        When ``matrix`` is not square, or its structure is invalid (pointers or
        ids out of range: :func:`~spbfs.matrix_structure.check_compressed`).
    """
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        raise ValueError(
            f"matrix must be square to be an adjacency matrix, got shape "
            f"{'x'.join(str(d) for d in matrix.shape)}"
        )
    a = matrix if matrix.format == "csr" else matrix.tocsr()
    n = int(a.shape[0])
    check_compressed(a.indptr, a.indices, n)
    return RowsInput(a.indptr, a.indices, n)


class _Entry:
    """What the cache knows of one matrix."""

    __slots__ = ("arrays", "digest", "graphs", "ref", "seen", "signature")

    def __init__(self, ref: weakref.ref, arrays: tuple[np.ndarray, ...],
                 signature: tuple[Any, ...], digest: tuple[Any, ...] | None) -> None:
        self.ref = ref
        # Weak references to the structure's arrays: "the same arrays" is checked by
        # identity without keeping arrays the matrix has dropped alive.
        self.arrays = tuple(weakref.ref(a) for a in arrays)
        self.signature = signature
        # None until a search reads it (a matrix seen once, by a one-off).
        self.digest = digest
        self.seen = 1
        self.graphs: dict[tuple[Any, ...], Graph] = {}

    def same_arrays(self, arrays: tuple[np.ndarray, ...]) -> bool:
        return len(arrays) == len(self.arrays) and all(
            r() is a for r, a in zip(self.arrays, arrays, strict=True))


class MatrixCache:
    """Graphs built from scipy matrices, reused while a matrix is alive and unchanged.

    See the module docstring for the policy (one-off first, Graph from the
    second search on the same content) and why :func:`process_cache` exists.
    Thread-safe: searches in several threads may share one cache.

    Parameters
    ----------
    max_matrices : int
        Matrices remembered at most; the least recently searched is forgotten
        first (its Graph with it).

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> import spbfs
    >>> A = sp.csr_array(([1, 1, 1], ([0, 1, 2], [1, 2, 3])), shape=(4, 4))
    >>> cache = spbfs.MatrixCache()
    >>> spbfs.bfs(A, 0, cache=cache).levels.tolist()      # one-off: reads A's rows
    [0, 1, 2, 3]
    >>> spbfs.bfs(A, 0, cache=cache).levels.tolist()      # builds and keeps the Graph
    [0, 1, 2, 3]
    >>> len(cache)
    1
    >>> A.indices[2] = 0                                    # edited in place: not stale
    >>> spbfs.bfs(A, 0, cache=cache).levels.tolist()
    [0, 1, 2, -1]
    """

    def __init__(self, max_matrices: int = 8) -> None:
        if isinstance(max_matrices, bool) or not isinstance(max_matrices, int | np.integer):
            raise TypeError(f"max_matrices must be an integer, got {type(max_matrices).__name__}")
        if max_matrices < 1:
            raise ValueError(f"max_matrices must be >= 1, got {max_matrices}")
        self.max_matrices = int(max_matrices)
        # A re-entrant lock: a weak reference's callback may run (a matrix collected)
        # while this thread holds the lock.
        self._lock = threading.RLock()
        self._entries: OrderedDict[int, _Entry] = OrderedDict()

    def __len__(self) -> int:
        """Matrices remembered (alive, with their last seen content)."""
        with self._lock:
            return len(self._entries)

    def __repr__(self) -> str:
        return (f"MatrixCache({len(self)} matrices, {self.num_graphs} graphs, "
                f"max_matrices={self.max_matrices})")

    @property
    def num_graphs(self) -> int:
        """Graphs kept (a matrix searched under several storages or ``directed`` has several)."""
        with self._lock:
            return sum(len(e.graphs) for e in self._entries.values())

    def clear(self) -> None:
        """Forget every matrix and drop every Graph kept."""
        with self._lock:
            self._entries.clear()

    def forget(self, matrix: Any) -> bool:
        """Forget ``matrix`` (and its Graphs); return whether it was remembered."""
        with self._lock:
            entry = self._entries.get(id(matrix))
            if entry is None or entry.ref() is not matrix:
                return False
            del self._entries[id(matrix)]
            return True

    def _drop(self, key: int, ref: weakref.ref) -> None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry.ref is ref:
                del self._entries[key]

    def prepare(self, matrix: Any, *, directed: bool | None, config: Config,
                rows_ok: bool) -> Graph | RowsInput:
        """What to search ``matrix`` with: a kept or new Graph, or its rows for a one-off.

        Parameters
        ----------
        matrix : scipy sparse matrix or array
            The adjacency matrix (``A[u, v]``: edge ``u -> v``).
        directed : bool or None
            As for :meth:`~spbfs.graph.Graph.from_matrix`.
        config : Config
            The format, index dtype and backend of a Graph built here.
        rows_ok : bool
            Whether this search can run over the rows alone (top-down along
            out-edges, numba backend). When False a Graph is returned, and
            kept.

        Returns
        -------
        Graph or RowsInput
            A :class:`RowsInput` for the first search on this content (when
            ``rows_ok``), else a Graph. A Graph from here may share the
            matrix's ``indptr`` and ``indices``: it is valid for the search at
            hand, and is served again only after the next call has checked the
            digest (keep the matrix, not the Graph, or use
            :meth:`~spbfs.graph.Graph.from_matrix`, which copies).
        """
        arrays = _structure_arrays(matrix)
        if arrays is None or matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
            # lil, dok, bsr, dia (nothing cheap to digest), or a shape from_matrix refuses.
            if rows_ok and matrix.ndim == 2 and matrix.shape[0] == matrix.shape[1]:
                return rows_input(matrix.tocsr())
            return Graph.from_matrix(matrix, directed=directed, config=config)
        signature = (matrix.format, tuple(matrix.shape),
                     tuple((a.dtype.str, a.shape) for a in arrays))
        gkey = (directed, config.format, config.index_dtype, config.backend)
        key = id(matrix)
        with self._lock:
            entry = self._entries.get(key)
            known = (entry is not None and entry.ref() is matrix
                     and entry.signature == signature and entry.same_arrays(arrays))
        # The digest is read outside the lock (it reads the whole structure); a
        # matrix seen for the first time with a one-off ahead needs none.
        digest = fingerprint(*arrays)[:2] if known or not rows_ok else None
        with self._lock:
            if known and self._entries.get(key) is entry:
                self._entries.move_to_end(key)
                if entry.digest is None:
                    # Second search: the Graph is built from the content digested now,
                    # whatever it held at the first.
                    entry.digest = digest
                    entry.seen += 1
                elif entry.digest == digest:
                    graph = entry.graphs.get(gkey)
                    if graph is not None:
                        return graph
                    entry.seen += 1
                else:
                    # Changed since its Graphs were built: drop them, and build again
                    # only if the next search finds this content unchanged.
                    entry.digest = digest
                    entry.graphs.clear()
                    entry.seen = 1
            else:
                entry = _Entry(weakref.ref(matrix, _forgetter(self, key)), arrays, signature,
                               digest)
                self._entries[key] = entry
                self._entries.move_to_end(key)
                while len(self._entries) > self.max_matrices:
                    self._entries.popitem(last=False)
            build = not rows_ok or entry.seen >= 2
        if not build:
            return rows_input(matrix)
        # The graph shares the matrix's arrays: safe, since every later use is preceded
        # by the digest check above (a copy would cost the second search its gain).
        graph = Graph._from_matrix(matrix, directed=directed, config=config, share=True)
        with self._lock:
            if self._entries.get(key) is entry:
                entry.graphs[gkey] = graph
        return graph


def _forgetter(cache: MatrixCache, key: int) -> Any:
    """The weak-reference callback that drops ``key`` from ``cache`` (held weakly too)."""
    cache_ref = weakref.ref(cache)

    def forget(ref: weakref.ref) -> None:
        c = cache_ref()
        if c is not None:
            c._drop(key, ref)

    return forget


def process_cache() -> MatrixCache:
    """The :class:`MatrixCache` :func:`spbfs.bfs` uses with ``cache=True`` (the default).

    One per process, made when this module is imported; see the module
    docstring for why it exists and what it holds. ``process_cache().clear()`` drops its Graphs.
    """
    return _PROCESS_CACHE


# The process's shared cache (see "Where the cache lives" above): weak references
# to matrices, content checked on every use, bounded, so it changes only speed.
_PROCESS_CACHE = MatrixCache()
