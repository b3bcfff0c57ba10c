"""Local sparse blocks: CSR and DCSC behind one small protocol.

A block stands for a logical matrix ``B`` of shape ``(nrows, ncols)`` on which
kernels compute ``y = B ⊕.⊗ x``. For BFS, ``B`` is the *pre-transposed*
adjacency block (Buluç et al., *Distributed-Memory Breadth-First Search on Massive
Graphs*, Section 4.1): ``B[v, u] != 0`` when there is an edge
``u -> v``, so column ``u`` of ``B`` lists the vertices a frontier vertex ``u``
reaches. Both formats therefore store ``B`` column-major, which is what the
top-down SpMSV needs (gather the columns named by the frontier):

``csr``
    The adjacency lists of the columns, one pointer per column: a
    ``scipy.sparse.csr_matrix`` of ``B.T`` (rows ``u``, column indices ``v``),
    exactly the "CSR-like representation" of Buluç et al.'s Section 5.1. Memory
    ``O(ncols + nnz)``.
``dcsc``
    Doubly compressed sparse columns: ``JC`` (the ``nzc`` non-empty column
    ids), ``CP`` (``nzc + 1`` column pointers) and ``IR`` (``nnz`` row ids),
    held as a ``csc_matrix`` over the non-empty columns plus ``JC``. Memory
    ``O(nzc + nnz)``, which is ``O(nnz)`` for the hypersparse blocks a 2D
    decomposition makes.

Row access (the bottom-up step scans the in-edges of unvisited vertices) is
column access of ``B.T``: :meth:`Block.transpose` builds that block in the same
format, and graphs share one block when ``B`` is symmetric.

The canonical storage is a set of plain arrays (``ptr``, ``ind``, ``data``,
``jc``) on the block's backend; :attr:`Block.matrix` wraps them, without a
copy, as the scipy/cupyx matrix named above.
"""

from __future__ import annotations

from typing import Any

import numba as nb
import numpy as np

from semirings._build import build_compressed
from semirings.backend import Backend, get_backend

__all__ = [
    "FORMATS",
    "Block",
    "CSRBlock",
    "DCSCBlock",
    "block_from_edges",
    "block_from_scipy",
    "choose_index_dtype",
]

FORMATS = ("csr", "dcsc")
_INT32_MAX = np.iinfo(np.int32).max


def choose_index_dtype(
    nrows: int, ncols: int, nnz: int, requested: str | np.dtype | type = "auto"
) -> np.dtype:
    """Pick the local index dtype: int32 where every id and offset fits.

    Parameters
    ----------
    nrows, ncols, nnz : int
        Block dimensions and number of stored entries.
    requested : {"auto", "int32", "int64"} or dtype
        ``auto`` chooses; an explicit int32 that does not fit is an error.

    Raises
    ------
    OverflowError
        When int32 is requested but an id or offset would not fit.
    ValueError
        For any other dtype.
    """
    fits32 = max(nrows, ncols, nnz) <= _INT32_MAX
    if isinstance(requested, str) and requested == "auto":
        return np.dtype(np.int32 if fits32 else np.int64)
    dt = np.dtype(requested)
    if dt == np.int64:
        return dt
    if dt == np.int32:
        if not fits32:
            raise OverflowError(
                f"index_dtype int32 cannot hold this block: shape ({nrows}, {ncols}) with "
                f"{nnz} entries exceeds 2**31 - 1; use index_dtype='int64' or 'auto'"
            )
        return dt
    raise ValueError(f"index_dtype must be 'auto', 'int32' or 'int64'; got {requested!r}")


def repeat_counts(xp: Any, values: Any, counts: Any, offsets: Any = None) -> Any:
    """``values[k]`` repeated ``counts[k]`` times, on numpy and cupy alike.

    ``cupy.repeat`` takes no array of counts; on the GPU a binary search of every
    output slot in the running offsets does the same in one kernel.
    """
    if xp is np:
        return np.repeat(values, counts)
    if offsets is None:
        offsets = xp.zeros(counts.shape[0] + 1, dtype=np.int64)
        xp.cumsum(counts, out=offsets[1:])
    total = int(offsets[-1])
    owner = xp.searchsorted(offsets[1:], xp.arange(total, dtype=np.int64), side="right")
    return values[owner]


class Block:
    """Protocol shared by :class:`CSRBlock` and :class:`DCSCBlock`.

    Attributes
    ----------
    shape : tuple of int
        ``(nrows, ncols)`` of the logical matrix ``B``.
    ptr : array
        Column pointers: ``ncols + 1`` entries (csr) or ``nzc + 1`` (dcsc).
    ind : array
        Row ids of the entries, sorted within each column (``IR``).
    data : array or None
        Entry values, or None for a pattern (every entry is 1 / "an edge").
    jc : array or None
        Non-empty column ids (dcsc only).
    backend : Backend
        Where the arrays live.
    """

    format: str = ""
    ptr: Any
    ind: Any
    data: Any
    jc: Any

    def __init__(
        self,
        shape: tuple[int, int],
        ptr: Any,
        ind: Any,
        data: Any = None,
        jc: Any = None,
        backend: Backend | str = "numpy",
    ) -> None:
        self.shape = (int(shape[0]), int(shape[1]))
        self.backend = get_backend(backend)
        xp = self.backend.xp
        self.ptr = xp.asarray(ptr)
        self.ind = xp.asarray(ind)
        self.data = None if data is None else xp.asarray(data)
        self.jc = None if jc is None else xp.asarray(jc)
        self._transpose: Block | None = None

    # -- sizes ---------------------------------------------------------------
    @property
    def nnz(self) -> int:
        """Number of stored entries."""
        return int(self.ind.shape[0])

    @property
    def nzc(self) -> int:
        """Number of non-empty columns."""
        raise NotImplementedError

    @property
    def index_dtype(self) -> np.dtype:
        """dtype of the local indices."""
        return np.dtype(self.ind.dtype)

    @property
    def kernel_view(self) -> tuple[Any, Any, Any, bool]:
        """``(ptr, ind, jc, is_dcsc)``: the block as the compiled kernels take it.

        A csr block has no ``jc``; it gets an empty array of the index dtype, so
        that one kernel signature serves both formats.
        """
        if self.jc is None:
            return self.ptr, self.ind, self.ind[:0], False
        return self.ptr, self.ind, self.jc, True

    @property
    def nbytes(self) -> int:
        """Bytes held by this block's arrays (not its cached transpose)."""
        arrays = (self.ptr, self.ind, self.data, self.jc)
        return int(sum(a.nbytes for a in arrays if a is not None))

    # -- access ----------------------------------------------------------------
    def col_ranges(self, cols: Any) -> tuple[Any, Any]:
        """Return ``(start, stop)`` offsets into :attr:`ind` for columns ``cols``.

        Columns with no entries get an empty range.
        """
        raise NotImplementedError

    def gather(self, cols: Any) -> tuple[Any, Any]:
        """Gather a sparse set of columns.

        Returns
        -------
        offsets : array
            ``len(cols) + 1`` offsets into ``rows``.
        rows : array
            Row ids of the gathered columns, concatenated in ``cols`` order.
        """
        xp = self.backend.xp
        cols = xp.asarray(cols, dtype=np.int64)
        start, stop = self.col_ranges(cols)
        lengths = (stop - start).astype(np.int64)
        offsets = xp.zeros(cols.shape[0] + 1, dtype=np.int64)
        xp.cumsum(lengths, out=offsets[1:])
        total = int(offsets[-1])
        # Position of each output slot inside self.ind: its column's start plus its rank.
        owner = repeat_counts(xp, xp.arange(cols.shape[0], dtype=np.int64), lengths, offsets)
        pos = xp.arange(total, dtype=np.int64) - offsets[owner] + start[owner]
        return offsets, self.ind[pos]

    def column_ids(self) -> Any:
        """Column id of every stored entry (length nnz), for conversions."""
        raise NotImplementedError

    @property
    def matrix(self) -> Any:
        """The storage as a scipy/cupyx sparse matrix sharing these arrays."""
        raise NotImplementedError

    def to_scipy(self) -> Any:
        """``B`` as a ``scipy.sparse.csr_matrix`` on the host (copies)."""
        import scipy.sparse as sp

        to_host = self.backend.to_host
        rows = to_host(self.ind).astype(np.int64)
        cols = to_host(self.column_ids())
        data = np.ones(self.nnz) if self.data is None else to_host(self.data)
        m = sp.coo_matrix((data, (rows, cols)), shape=self.shape).tocsr()
        return m

    @property
    def has_transpose(self) -> bool:
        """Whether the transpose is already built (row access costs nothing more)."""
        return self._transpose is not None

    def transpose(self) -> Block:
        """Block of ``B.T`` in the same format (cached): row access of ``B``."""
        # A hypersparse dcsc block keeps the generic path: no array of its row count.
        if self._transpose is None and self.backend.xp is np and (
            self.format == "csr" or self.shape[0] <= 4 * self.nnz + 1024
        ):
            t = _transpose_host(self)
            t._transpose = self
            self._transpose = t
        if self._transpose is None:
            to_host = self.backend.to_host
            t = block_from_edges(
                self.format,
                to_host(self.column_ids()),
                to_host(self.ind).astype(np.int64),
                (self.shape[1], self.shape[0]),
                values=None if self.data is None else to_host(self.data),
                index_dtype=self.index_dtype,
                dedup=False,
                backend=self.backend,
            )
            t._transpose = self
            self._transpose = t
        return self._transpose

    def to_backend(self, backend: Backend | str) -> Block:
        """Copy of this block on another backend."""
        backend = get_backend(backend)
        to_host = self.backend.to_host

        def move(a: Any) -> Any:
            return None if a is None else backend.xp.asarray(to_host(a))

        return type(self)(
            self.shape, move(self.ptr), move(self.ind), move(self.data), move(self.jc), backend
        )

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(shape={self.shape}, nnz={self.nnz}, nzc={self.nzc}, "
            f"index={self.index_dtype}, {self.nbytes} bytes, backend={self.backend.name})"
        )


class CSRBlock(Block):
    """Adjacency lists of every column: ``ptr`` has ``ncols + 1`` entries."""

    format = "csr"

    @property
    def nzc(self) -> int:
        xp = self.backend.xp
        return int(xp.count_nonzero(xp.diff(self.ptr)))

    def col_ranges(self, cols: Any) -> tuple[Any, Any]:
        return self.ptr[cols], self.ptr[cols + 1]

    def column_ids(self) -> Any:
        xp = self.backend.xp
        return repeat_counts(xp, xp.arange(self.shape[1], dtype=np.int64), xp.diff(self.ptr))

    @property
    def matrix(self) -> Any:
        """``B.T`` as a csr_matrix (rows are the columns of ``B``)."""
        xp = self.backend.xp
        data = xp.ones(self.nnz, dtype=bool) if self.data is None else self.data
        return self.backend.sparse.csr_matrix(
            (data, self.ind, self.ptr), shape=(self.shape[1], self.shape[0])
        )


class DCSCBlock(Block):
    """Doubly compressed sparse columns: ``jc`` (nzc), ``ptr`` (= CP, nzc+1), ``ind`` (= IR)."""

    format = "dcsc"

    @property
    def nzc(self) -> int:
        return int(self.jc.shape[0])

    def column_index(self) -> tuple[np.ndarray, int]:
        """``(aux, shift)``: where each chunk of ``2**shift`` columns starts in ``jc`` (cached).

        Buluç and Gilbert's AUX array for DCSC: the columns are cut in chunks of
        ``2**shift >= ncols / (2 nzc)`` ids, and ``aux[c]`` is the first slot of
        ``jc`` holding a column ``>= c << shift`` (``aux[-1] = nzc``), so a
        column is found by scanning a chunk's few slots instead of a binary
        search over all of ``jc``. At most ``2 max(nzc, 1) + 2`` entries: O(nzc)
        memory like the block itself. Half of Buluç and Gilbert's chunk size
        makes one column per chunk (``shift == 0``) whenever at least half the
        columns have entries, as in a one-process graph: the lookup is then
        ``ptr[aux[u]], ptr[aux[u + 1]]``, without a branch. Host blocks only;
        see ``semirings._intrinsics.dcsc_column_range`` for the lookup.
        """
        cached = getattr(self, "_column_index", None)
        if cached is not None:
            return cached
        if self.backend.xp is not np:
            raise TypeError("column_index is built for host (numpy) blocks only")
        ncols, nzc = self.shape[1], self.nzc
        shift = 0
        while (ncols >> shift) > 2 * max(nzc, 1):
            shift += 1
        nchunks = (ncols >> shift) + 1
        starts = np.arange(nchunks + 1, dtype=np.int64) << shift
        aux = np.searchsorted(self.jc, starts).astype(self.index_dtype)
        self._column_index = (aux, shift)
        return self._column_index

    def col_ranges(self, cols: Any) -> tuple[Any, Any]:
        xp = self.backend.xp
        nzc = self.jc.shape[0]
        pos = xp.searchsorted(self.jc, cols)
        posc = xp.minimum(pos, max(nzc - 1, 0))
        if nzc == 0:
            z = xp.zeros(cols.shape[0], dtype=self.ptr.dtype)
            return z, z
        found = (pos < nzc) & (self.jc[posc] == cols)
        start = xp.where(found, self.ptr[posc], 0)
        stop = xp.where(found, self.ptr[posc + 1], 0)
        return start, stop

    def column_ids(self) -> Any:
        xp = self.backend.xp
        return repeat_counts(xp, self.jc.astype(np.int64), xp.diff(self.ptr))

    @property
    def matrix(self) -> Any:
        """The non-empty columns as a csc_matrix of shape ``(nrows, nzc)``; pair it with ``jc``."""
        xp = self.backend.xp
        data = xp.ones(self.nnz, dtype=bool) if self.data is None else self.data
        return self.backend.sparse.csc_matrix(
            (data, self.ind, self.ptr), shape=(self.shape[0], self.nzc)
        )


_CLASSES: dict[str, type[Block]] = {"csr": CSRBlock, "dcsc": DCSCBlock}


@nb.njit(cache=True)
def _transpose_fill(  # type: ignore[no-untyped-def]
    ptr, ind, jc, dcsc, data, has_values, tptr, tind, tdata
):
    # Columns are read in increasing order, so every row's list comes out sorted.
    for r in range(ind.shape[0]):
        tptr[np.int64(ind[r]) + 1] += 1
    for r in range(tptr.shape[0] - 1):
        tptr[r + 1] += tptr[r]
    pos = tptr[:-1].copy()
    for s in range(ptr.shape[0] - 1):
        c = np.int64(jc[s]) if dcsc else np.int64(s)
        for e in range(ptr[s], ptr[s + 1]):
            r = np.int64(ind[e])
            p = pos[r]
            tind[p] = c
            if has_values:
                tdata[p] = data[e]
            pos[r] = p + 1


def _transpose_host(block: Block) -> Block:
    """``B.T`` of a host block by one counting pass over its entries.

    Why not :func:`block_from_edges` of the entries: that makes int64 copies of
    both coordinates (16 bytes per entry) and sorts every row again, where
    scanning the columns in order already leaves each row sorted. The entry
    order, repeated entries included, is the same.
    """
    nrows, ncols = block.shape
    dt = block.index_dtype
    jc = block.ind[:0] if block.jc is None else block.jc
    has_values = block.data is not None
    data = block.data if has_values else np.empty(0)
    full = np.zeros(nrows + 1, dtype=np.int64)
    tind = np.empty(block.nnz, dtype=dt)
    tdata = np.empty(block.nnz, dtype=block.data.dtype) if has_values else np.empty(0)
    _transpose_fill(block.ptr, block.ind, jc, block.format == "dcsc", data, has_values, full,
                    tind, tdata)
    values = tdata if has_values else None
    if block.format == "csr":
        return CSRBlock((ncols, nrows), full.astype(dt), tind, values, None, block.backend)
    lengths = np.diff(full)
    del full
    tjc = np.flatnonzero(lengths)
    tptr = np.zeros(tjc.size + 1, dtype=dt)
    np.cumsum(lengths[tjc], out=tptr[1:])
    return DCSCBlock((ncols, nrows), tptr, tind, values, tjc.astype(dt), block.backend)


def _check_format(fmt: str) -> type[Block]:
    try:
        return _CLASSES[fmt]
    except KeyError:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}; got {fmt!r}") from None


def _check_ids(a: Any, bound: int, name: str) -> np.ndarray:
    a = np.asarray(a)
    if a.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {a.shape}")
    if a.size and not np.issubdtype(a.dtype, np.integer):
        raise TypeError(f"{name} must be an integer array, got dtype {a.dtype}")
    if a.dtype != np.int32:  # int32 ids stay: numba compiles for them, no 8-byte copy
        a = a.astype(np.int64, copy=False)
    if a.size:
        lo, hi = int(a.min()), int(a.max())
        if lo < 0:
            raise ValueError(f"{name} holds a negative index ({lo})")
        if hi >= bound:
            raise ValueError(f"{name} holds index {hi}, out of range for dimension {bound}")
    return a


def block_from_edges(
    fmt: str,
    rows: Any,
    cols: Any,
    shape: tuple[int, int],
    *,
    values: Any = None,
    index_dtype: str | np.dtype | type = "auto",
    dedup: bool = True,
    symmetric: bool = False,
    drop_loops: bool = False,
    backend: Backend | str = "numpy",
) -> Block:
    """Build a block of ``B`` from entry coordinates ``B[rows[k], cols[k]]``.

    Parameters
    ----------
    fmt : {"csr", "dcsc"}
        Storage format.
    rows, cols : array_like
        Integer coordinates (global-to-block translation is the caller's).
    shape : tuple of int
        ``(nrows, ncols)``.
    values : array_like, optional
        Entry values; None builds a pattern.
    index_dtype : {"auto", "int32", "int64"}
        Local index dtype (int32 only where it fits; checked).
    dedup : bool
        Merge repeated coordinates (values summed).
    symmetric : bool
        Also store every entry mirrored (an undirected graph from one
        direction of each edge); needs a square shape.
    drop_loops : bool
        Skip diagonal entries (self-loops).
    backend : Backend or str
        Where the block's arrays live.

    Raises
    ------
    ValueError, TypeError, OverflowError
        For out-of-range or negative ids, non-integer ids, mismatched lengths,
        or an int32 request that does not fit.
    """
    cls = _check_format(fmt)
    nrows, ncols = (int(s) for s in shape)
    if nrows < 0 or ncols < 0:
        raise ValueError(f"shape must be non-negative, got {shape}")
    rows = _check_ids(rows, nrows, "rows")
    cols = _check_ids(cols, ncols, "cols")
    if rows.shape != cols.shape:
        raise ValueError(f"rows and cols differ in length ({rows.size} vs {cols.size})")
    if values is not None:
        values = np.asarray(values)
        if values.shape != rows.shape:
            raise ValueError(f"values must have one entry per coordinate ({rows.size})")
    if symmetric and nrows != ncols:
        raise ValueError(f"symmetric=True needs a square shape, got {shape}")
    dt = choose_index_dtype(nrows, ncols, rows.size * (2 if symmetric else 1), index_dtype)
    backend = get_backend(backend)
    opts = {"dedup": dedup, "symmetric": symmetric, "drop_loops": drop_loops}
    if cls is CSRBlock:
        ptr, ind, data = build_compressed(cols, rows, ncols, values=values, index_dtype=dt, **opts)
        return CSRBlock((nrows, ncols), ptr, ind, data, None, backend)
    if ncols <= 4 * rows.size + 1024:
        # A temporary full pointer array is no bigger than the entries themselves here,
        # and a counting sort beats sorting the column ids.
        full, ind, data = build_compressed(cols, rows, ncols, values=values, index_dtype=dt, **opts)
        lengths = np.diff(full)
        jc = np.flatnonzero(lengths)
        ptr = np.zeros(jc.size + 1, dtype=dt)
        np.cumsum(lengths[jc], out=ptr[1:])
    else:
        # Hypersparse: compress column ids first so no array is O(ncols).
        if symmetric:
            rows, cols = np.concatenate([rows, cols]), np.concatenate([cols, rows])
            values = None if values is None else np.concatenate([values, values])
        if drop_loops:
            keep = rows != cols
            rows, cols = rows[keep], cols[keep]
            values = None if values is None else values[keep]
        jc = np.unique(cols)
        ccols = np.searchsorted(jc, cols)
        ptr, ind, data = build_compressed(
            ccols, rows, jc.size, values=values, index_dtype=dt, dedup=dedup
        )
    return DCSCBlock((nrows, ncols), ptr, ind, data, jc.astype(dt), backend)


def block_from_scipy(
    fmt: str,
    matrix: Any,
    *,
    pattern: bool = False,
    index_dtype: str | np.dtype | type = "auto",
    backend: Backend | str = "numpy",
) -> Block:
    """Build a block of ``B = matrix`` from a scipy/cupyx sparse matrix.

    A CSC input becomes a csr block without copying the structure (its
    ``indptr``/``indices`` already are column-major); other layouts are
    converted by scipy. Duplicate entries are kept as separate terms.

    Parameters
    ----------
    fmt : {"csr", "dcsc"}
        Storage format.
    matrix : sparse matrix or array
        The logical matrix ``B``.
    pattern : bool
        Drop values (every stored entry, explicit zeros included, is "an edge").
    index_dtype : {"auto", "int32", "int64"}
        Local index dtype.
    backend : Backend or str
        Where the block's arrays live.
    """
    import scipy.sparse as sp

    cls = _check_format(fmt)
    backend = get_backend(backend)
    if hasattr(matrix, "get") and not sp.issparse(matrix):  # cupyx matrix -> host once
        matrix = matrix.get()
    if not sp.issparse(matrix):
        raise TypeError(f"matrix must be a scipy/cupyx sparse matrix, got {type(matrix).__name__}")
    if matrix.ndim != 2:
        raise ValueError(f"matrix must be 2-D, got shape {matrix.shape}")
    csc = matrix.tocsc() if matrix.format != "csc" else matrix
    nrows, ncols = csc.shape
    dt = choose_index_dtype(nrows, ncols, csc.nnz, index_dtype)
    data = None if pattern else np.asarray(csc.data)
    ptr = csc.indptr.astype(dt, copy=False)
    ind = csc.indices.astype(dt, copy=False)
    if not csc.has_sorted_indices:
        csc = csc.sorted_indices()
        ptr = csc.indptr.astype(dt, copy=False)
        ind = csc.indices.astype(dt, copy=False)
        data = None if pattern else np.asarray(csc.data)
    if cls is CSRBlock:
        return CSRBlock((nrows, ncols), ptr, ind, data, None, backend)
    lengths = np.diff(csc.indptr)
    jc = np.flatnonzero(lengths).astype(dt)
    cp = np.zeros(jc.size + 1, dtype=dt)
    np.cumsum(lengths[jc], out=cp[1:])
    return DCSCBlock((nrows, ncols), cp, ind, data, jc, backend)
