"""Edge lists: the interchange format between readers, generators and graphs.

Readers (:mod:`spbfs.io`) and generators (:mod:`spbfs.generators`) produce an
:class:`EdgeList`; :class:`spbfs.graph.Graph` is built from one. Keeping the raw
edges around (rather than only the sparse matrix) is what the Graph500
validation rules need: they are stated on the input edge list.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from spbfs.matrix_structure import largest_unsigned

__all__ = ["EdgeList", "EdgeSource", "check_count", "check_vertex_ids"]


@runtime_checkable
class EdgeSource(Protocol):
    """Edges that can be read, any slice any number of times, without holding them all.

    What a streaming graph build needs (:meth:`spbfs.graph.Graph.from_source`):
    it reads every slice twice, once to count each vertex's edges and once to
    place them, so a generator behind a source must give the same edges each
    time (:class:`spbfs.generators.KroneckerSource` regenerates them from its
    counter-based stream). An :class:`EdgeList` is a source over the arrays it
    holds.

    Attributes
    ----------
    n : int
        Number of vertices.
    num_edges : int
        Number of edges, duplicates and self-loops included.
    directed : bool or None
        As in :class:`EdgeList`.
    meta : dict
        Provenance.
    """

    n: int
    directed: bool | None
    meta: dict

    @property
    def num_edges(self) -> int:
        """Number of edges."""
        ...

    def chunk(self, start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
        """Edges ``start .. stop-1`` as integer ``(src, dst)`` arrays with ids in ``[0, n)``."""
        ...


@dataclass
class EdgeList:
    """A list of edges ``src[k] -> dst[k]`` over vertices ``0 .. n-1``.

    Parameters
    ----------
    src, dst : numpy.ndarray
        int64 arrays of equal length. Self-loops and duplicates are allowed
        here; graph construction removes them.
    n : int
        Number of vertices. Every id must lie in ``[0, n)``.
    directed : bool or None
        What the source says about the edges: ``False`` when each edge stands
        for both directions (Matrix Market ``symmetric``, Graph500 Kronecker),
        ``True`` when the source says the edges are arcs, ``None`` when the
        source does not say (the caller decides).
    weights : numpy.ndarray or None
        Optional edge values. BFS ignores them: an edge is an edge, explicit
        zeros included.
    ids : numpy.ndarray or None
        When the input used arbitrary vertex labels, ``ids[k]`` is the original
        label of vertex ``k`` (see :func:`spbfs.io.renumber`).
    meta : dict
        Free-form provenance (file name, header, generator parameters).

    Notes
    -----
    The arrays are the caller's (int64 input is not copied) and stay writable,
    so the ids are checked here and again whenever a graph is built from the
    list; a :class:`~spbfs.graph.Graph` keeps its own copy of the list it was
    built from (:attr:`spbfs.graph.Graph.edges`), so a later edit of this one
    never reaches it.
    """

    src: np.ndarray
    dst: np.ndarray
    n: int
    directed: bool | None = None
    weights: np.ndarray | None = None
    ids: np.ndarray | None = None
    meta: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.src = np.asarray(self.src)
        self.dst = np.asarray(self.dst)
        if self.src.shape != self.dst.shape or self.src.ndim != 1:
            raise ValueError(
                f"src and dst must be 1-D arrays of equal length, got shapes "
                f"{self.src.shape} and {self.dst.shape}"
            )
        if self.weights is not None:
            self.weights = np.asarray(self.weights)
            if self.weights.shape != self.src.shape:
                raise ValueError(
                    f"weights must have one value per edge ({self.src.shape[0]}), "
                    f"got shape {self.weights.shape}"
                )
        self.n = check_count(self.n, "n")
        self.src = check_vertex_ids(self.src, self.n, "src")
        self.dst = check_vertex_ids(self.dst, self.n, "dst")

    @property
    def num_edges(self) -> int:
        """Number of edges as listed (duplicates and self-loops included)."""
        return int(self.src.shape[0])

    def __len__(self) -> int:
        return self.num_edges

    def chunk(self, start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
        """Edges ``start .. stop-1`` as views of :attr:`src` and :attr:`dst` (no copy).

        Raises
        ------
        ValueError
            When ``0 <= start <= stop <= num_edges`` does not hold.
        """
        start, stop = int(start), int(stop)
        if not 0 <= start <= stop <= self.num_edges:
            raise ValueError(f"chunk [start, stop) = [{start}, {stop}) must lie within "
                             f"[0, {self.num_edges}]")
        return self.src[start:stop], self.dst[start:stop]

    def __repr__(self) -> str:
        kind = {None: "unspecified", True: "directed", False: "undirected"}[self.directed]
        return f"EdgeList(n={self.n}, edges={self.num_edges}, {kind})"


#: A vertex count inferred from the largest id (no ``n`` given) is refused when it
#: exceeds both this many vertices per edge and :data:`SPARSE_IDS_MIN`: the ids are
#: then labels, and n-sized arrays (tens of bytes per vertex) would dwarf the graph.
IDS_PER_EDGE = 16
SPARSE_IDS_MIN = 1 << 24


def sparse_ids_problem(largest: int, num_edges: int, otherwise: str = "") -> str | None:
    """Why ``n = largest + 1`` vertices is no graph for ``num_edges`` edges, or None.

    Checked before anything n-sized is allocated, so that a file with one id
    of 2**32 fails with a message instead of exhausting memory. ``otherwise``
    names the caller's other way out (", or give n explicitly").
    """
    n = largest + 1
    if n <= SPARSE_IDS_MIN or n <= IDS_PER_EDGE * max(num_edges, 1):
        return None
    return (f"the largest vertex id is {largest}: without renumbering the graph would have "
            f"{n} vertices for {num_edges} edges (over {IDS_PER_EDGE} per edge); pass "
            f"renumber=True to number the ids 0..k-1 in order{otherwise}")


def check_vertex_ids(ids: np.ndarray, n: int, name: str) -> np.ndarray:
    """Return ``ids`` as int64 after checking they are integers in ``[0, n)``.

    Parameters
    ----------
    ids : array_like
        Vertex ids.
    n : int
        Number of vertices.
    name : str
        Argument name used in error messages.

    Raises
    ------
    TypeError
        If ``ids`` is not an integer array.
    ValueError
        If an id is negative or ``>= n``.
    """
    ids = np.asarray(ids)
    if ids.size and not np.issubdtype(ids.dtype, np.integer):
        raise TypeError(f"{name} must hold integer vertex ids, got dtype {ids.dtype}")
    if ids.dtype.kind == "i" and ids.dtype != np.int64:
        # Narrow signed ids read as unsigned could wrap below n (int8 -1 is 255).
        ids = ids.astype(np.int64)
    # One pass: read as unsigned, a negative id is larger than any valid one, so a
    # single maximum says whether every id lies in [0, n). On the calling thread: see
    # largest_unsigned for what a parallel pass costs on a busy machine.
    if ids.size and largest_unsigned(ids, parallel=False) >= n:
        _raise_out_of_range(ids, n, name)
    if ids.dtype != np.int64:
        ids = ids.astype(np.int64)
    return ids


def _raise_out_of_range(ids: np.ndarray, n: int, name: str) -> None:
    """Raise the ValueError for ``ids`` holding an id outside ``[0, n)`` (the slow path)."""
    if ids.dtype.kind == "i":
        lo = int(ids.min())
        if lo < 0:
            raise ValueError(f"{name} holds a negative vertex id ({lo})")
    hi = int(ids.max())
    if hi > _INT64_MAX:
        raise ValueError(f"{name} holds vertex id {hi}, too large: vertex ids are int64 "
                         f"(at most 2**63 - 1 = {_INT64_MAX})")
    raise ValueError(f"{name} holds vertex id {hi}, out of range for n={n}")


_INT64_MAX = int(np.iinfo(np.int64).max)


def check_count(n: Any, name: str = "n") -> int:
    """Return the vertex count ``n`` as an int after checking it is a non-negative integer.

    Integral floats (``1e6``) are taken; a fraction is refused rather than cut
    (``n=3.7`` is not three vertices).

    Raises
    ------
    TypeError
        For anything but an integer or an integral float (``bool`` included).
    ValueError
        For a negative count or a float with a fractional part.
    """
    if isinstance(n, bool):
        raise TypeError(f"{name} must be an integer, got bool")
    if isinstance(n, float | np.floating):
        if not np.isfinite(n) or not float(n).is_integer():
            raise ValueError(f"{name} must be a whole number of vertices, got {float(n)!r}")
        n = int(n)
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"{name} must be an integer, got {type(n).__name__}") from None
    if n < 0:
        raise ValueError(f"{name} must be non-negative, got {n}")
    return n
