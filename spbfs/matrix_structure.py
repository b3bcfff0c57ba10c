"""Compiled checks of a compressed sparse matrix's structure.

The arrays of a scipy matrix are the user's: they may have been edited in place
since scipy last looked at them, so the flags scipy keeps
(``has_sorted_indices``, ``has_canonical_format``) are hints, not facts, and
an index out of range would make a compiled kernel read or write out of
bounds. The functions here read the arrays themselves, once, in compiled code:

- :func:`check_compressed` raises unless ``(indptr, indices)`` is a valid
  compressed structure (pointers that start at 0 and never decrease, ids in
  range), and :func:`row_order` says whether its rows are sorted and free of
  duplicates;
- :func:`structurally_symmetric` says whether a canonical csr pattern equals
  its transpose, without building the transpose;
- :func:`fingerprint` digests arrays' bytes, to tell whether a matrix
  changed since it was last seen (see :mod:`spbfs.matrix_cache`).
"""

from __future__ import annotations

import numba as nb
import numpy as np

__all__ = [
    "CANONICAL",
    "DUPLICATES",
    "UNSORTED",
    "check_compressed",
    "fingerprint",
    "largest_unsigned",
    "row_order",
    "structurally_symmetric",
]

#: :func:`row_order` results: rows sorted with no duplicate, sorted with
#: duplicates, unsorted.
CANONICAL, DUPLICATES, UNSORTED = 0, 1, 2

# Entries per parallel chunk of row_order: a fixed number, so that a chunk is
# worth a task and the answer does not depend on the thread count.
_ENTRIES_PER_CHUNK = 1 << 18


# Below this many bytes the id check and the digest run on one thread (a parallel
# region costs tens of microseconds). Above, they run on numba's current thread count, which
# spbfs.bfs sets from the machine's idle cores first: a parallel region on a
# machine whose cores are busy can wait tens of milliseconds for a descheduled
# thread (measured at load 12 on 2 cores: 288 ms a search against 104).
_PARALLEL_BYTES = 1 << 23


def check_compressed(indptr: np.ndarray, indices: np.ndarray, ncols: int,
                     name: str = "matrix") -> None:
    """Check that ``(indptr, indices)`` is a compressed structure a kernel may index.

    Every pointer and every id is read (the ids once, in parallel on numba's
    current threads for 8 MiB and more), so an edit made in place since scipy
    last checked the matrix is caught; the order of the ids within a row is
    :func:`row_order`'s business.

    Parameters
    ----------
    indptr : numpy.ndarray
        ``nrows + 1`` pointers into ``indices``.
    indices : numpy.ndarray
        The minor ids; only the first ``indptr[-1]`` are part of the structure.
    ncols : int
        Every id must be in ``[0, ncols)``.
    name : str
        The argument named in the error.

    Raises
    ------
    ValueError
        For pointers that do not start at 0, decrease or pass the end of
        ``indices``, or an id out of range.
    TypeError
        For ids that are not integers.
    """
    if indptr.ndim != 1 or indptr.shape[0] == 0 or int(indptr[0]) != 0:
        raise ValueError(f"{name} has an invalid indptr: it must start at 0")
    nnz = int(indptr[-1])
    if nnz > indices.shape[0] or (indptr.shape[0] > 1 and int(np.diff(indptr).min()) < 0):
        raise ValueError(
            f"{name} has an invalid indptr (decreasing, or pointing past the end of indices); "
            f"was it edited in place?"
        )
    if indices.dtype.kind not in "iu":
        raise TypeError(f"{name} has indices of dtype {indices.dtype}: they must be integers")
    # Read as unsigned, a negative id is larger than any valid one: one pass, not two.
    if nnz and largest_unsigned(indices[:nnz]) >= ncols:
        raise ValueError(
            f"{name} has an index out of range [0, {ncols}); was indices edited in place?"
        )


# Ids per parallel chunk of largest_unsigned (the answer does not depend on it).
_IDS_PER_CHUNK = 1 << 18


@nb.njit(cache=True, nogil=True)
def _chunk_max(ids, lo, hi):
    # Indexed from 0 in a slice: LLVM then vectorizes the reduction.
    v = ids[lo:hi]
    m = v[0]
    for i in range(1, v.shape[0]):
        m = max(m, v[i])
    return m


@nb.njit(cache=True, nogil=True, parallel=True)
def _chunk_maxes(ids, out):
    n = ids.shape[0]
    for c in nb.prange(out.shape[0]):
        out[c] = _chunk_max(ids, c * _IDS_PER_CHUNK, min(n, (c + 1) * _IDS_PER_CHUNK))


def largest_unsigned(ids: np.ndarray, parallel: bool = True) -> int:
    """The largest of the non-empty integer array ``ids`` read as unsigned (a negative id
    reads as 2**bits - |id|): in parallel on numba's current threads from 8 MiB on, where
    numpy's reduction runs on one.

    One pass answers "are all ids in ``[0, n)``" for signed and unsigned ids alike
    (``largest_unsigned(ids) < n``), where a minimum and a maximum take two.
    ``parallel=False`` stays on the calling thread: outside a search numba's
    thread count is not fitted to the idle cores, and on a busy machine a
    parallel region waits for descheduled threads (4M ids at load 17 on 2
    cores: median 81 ms in parallel, 1.1 ms on one thread).
    """
    u = np.ascontiguousarray(ids).view(np.dtype(f"u{ids.dtype.itemsize}"))
    if not parallel or u.nbytes < _PARALLEL_BYTES or nb.get_num_threads() < 2:
        return int(u.max())
    out = np.empty(-(-u.shape[0] // _IDS_PER_CHUNK), u.dtype)
    _chunk_maxes(u, out)
    return int(out.max())


@nb.njit(cache=True, nogil=True)
def _pairs(indices, lo, hi, out):
    # Adjacent pairs that decrease / repeat. Rows are ignored here (no row
    # lookup per entry); the pairs that straddle two rows are taken back out
    # by _count_order.
    lt = 0
    eq = 0
    for e in range(max(lo, 1), hi):
        a = indices[e - 1]
        b = indices[e]
        lt += b < a
        eq += b == a
    out[0] = lt
    out[1] = eq


@nb.njit(cache=True, nogil=True, parallel=True)
def _count_order(indptr, indices):
    nrows = indptr.shape[0] - 1
    nnz = indptr[nrows]
    nchunks = (nnz + _ENTRIES_PER_CHUNK - 1) // _ENTRIES_PER_CHUNK
    parts = np.zeros((nchunks, 2), np.int64)
    for c in nb.prange(nchunks):
        _pairs(indices, c * _ENTRIES_PER_CHUNK, min(nnz, (c + 1) * _ENTRIES_PER_CHUNK), parts[c])
    lt = parts[:, 0].sum()
    eq = parts[:, 1].sum()
    for i in range(nrows):
        e = indptr[i]
        if 0 < e < indptr[i + 1]:  # a row's first entry compared with the row before
            lt -= indices[e] < indices[e - 1]
            eq -= indices[e] == indices[e - 1]
    if lt:
        return UNSORTED
    if eq:
        return DUPLICATES
    return CANONICAL


def row_order(indptr: np.ndarray, indices: np.ndarray) -> int:
    """Whether the rows of a checked structure are sorted and free of duplicates.

    Reads every id (scipy's ``has_sorted_indices`` / ``has_canonical_format``
    flags are not trusted: an in-place edit does not reset them). The
    structure must have passed :func:`check_compressed`.

    Returns
    -------
    int
        :data:`CANONICAL`, :data:`DUPLICATES` (sorted, an id repeated in a
        row) or :data:`UNSORTED`.
    """
    if indices.dtype != indptr.dtype:  # one compiled variant per index width
        indices = indices.astype(np.int64)
        indptr = indptr.astype(np.int64)
    return int(_count_order(indptr, indices))


def structurally_symmetric(indptr: np.ndarray, indices: np.ndarray) -> bool:
    """Whether a square csr pattern with sorted, duplicate-free rows equals its transpose.

    Rows are visited in increasing order, so the entries ``(i, j)`` of column
    ``j`` arrive with ``i`` increasing: exactly the order of row ``j`` when the
    pattern is symmetric. One cursor per row walks row ``j`` as they arrive;
    a mismatch stops the scan. No transpose is built (n cursors instead of an
    nnz-long copy). The structure must have been checked
    (:func:`check_compressed`, and :func:`row_order` gives :data:`CANONICAL`).
    """
    # Ids checked in range: unsigned, they index without a negative-index test.
    unsigned = np.uint32 if indices.dtype.itemsize == 4 else np.uint64
    ind = indices.view(unsigned)
    ptr = indptr.astype(unsigned) if indptr.dtype.itemsize != ind.dtype.itemsize else (
        indptr.view(unsigned))
    return bool(_symmetric_rows(ptr, ind))


@nb.njit(cache=True, nogil=True)
def _symmetric_rows(indptr, indices):
    n = indptr.shape[0] - 1
    cur = indptr[:-1].copy()
    for i in range(n):
        for e in range(indptr[i], indptr[i + 1]):
            j = indices[e]
            p = cur[j]
            if p >= indptr[j + 1] or indices[p] != np.uint64(i):
                return False
            cur[j] = p + 1
    for j in range(n):
        if cur[j] != indptr[j + 1]:
            return False
    return True


# Words per fingerprint chunk: fixed, so the digest does not depend on the thread count.
_WORDS_PER_CHUNK = 1 << 16
_P1 = np.uint64(0x9E3779B185EBCA87)
_P3 = np.uint64(0x165667B19E3779F9)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


@nb.njit(cache=True, nogil=True, inline="always")
def _fmix(z):
    # splitmix64's finalizer: a bijection of 64-bit words.
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


@nb.njit(cache=True, nogil=True, inline="always")
def _round(h, w0, w1):
    # For fixed words, a bijection of the state; for a fixed state and either word, of
    # the other word: a chunk that differs in one word always ends in another state.
    # One multiply per two words (two per word measured 1.3x slower over 30 MB).
    h = (h ^ w0) * _P1 + w1
    return (h << np.uint64(31)) | (h >> np.uint64(33))


@nb.njit(cache=True, nogil=True)
def _chunk_digest(words, lo, hi, c):
    seed = np.uint64(c) * _P3
    h0 = seed ^ np.uint64(1)
    h1 = seed ^ np.uint64(2)
    h2 = seed ^ np.uint64(3)
    h3 = seed ^ np.uint64(4)
    h4 = seed ^ np.uint64(5)
    h5 = seed ^ np.uint64(6)
    h6 = seed ^ np.uint64(7)
    h7 = seed ^ np.uint64(8)
    # Indexed from 0 in a slice: with the signed offset ``lo`` in every index numba
    # guards each load for wraparound, and the loop ran 1.5x slower.
    w = words[lo:hi]
    full = w.shape[0] // 16
    # Eight independent lanes keep the multiplier busy: one chain waits on its latency,
    # and four measured 1.2x slower than eight.
    for r in range(full):
        i = 16 * r
        h0 = _round(h0, w[i], w[i + 1])
        h1 = _round(h1, w[i + 2], w[i + 3])
        h2 = _round(h2, w[i + 4], w[i + 5])
        h3 = _round(h3, w[i + 6], w[i + 7])
        h4 = _round(h4, w[i + 8], w[i + 9])
        h5 = _round(h5, w[i + 10], w[i + 11])
        h6 = _round(h6, w[i + 12], w[i + 13])
        h7 = _round(h7, w[i + 14], w[i + 15])
    for i in range(16 * full, w.shape[0]):
        h0 = _round(h0, w[i], np.uint64(0))
    # Nested bijections: the digest changes whenever exactly one lane does.
    return _fmix(h0 ^ _fmix(h1 ^ _fmix(h2 ^ _fmix(h3 ^ _fmix(h4 ^ _fmix(h5 ^ _fmix(
        h6 ^ _fmix(h7))))))))


@nb.njit(cache=True, nogil=True, inline="always")
def _digest_chunk_of(words, first, d, c):
    # Chunk c of the whole: array i's chunk c - first[i] (an empty array owns no chunk).
    i = np.searchsorted(first, c, side="right") - 1
    w = words[i]
    j = c - first[i]
    lo = j * _WORDS_PER_CHUNK
    d[c] = _chunk_digest(w, lo, min(w.shape[0], lo + _WORDS_PER_CHUNK), j)


@nb.njit(cache=True, nogil=True, parallel=True)
def _chunk_digests_parallel(words, first, d):
    for c in nb.prange(d.shape[0]):
        _digest_chunk_of(words, first, d, c)


@nb.njit(cache=True, nogil=True)
def _digest_words(words, tails, parallel):
    m = len(words)
    first = np.zeros(m + 1, np.int64)
    for i in range(m):
        first[i + 1] = first[i] + (words[i].shape[0] + _WORDS_PER_CHUNK - 1) // _WORDS_PER_CHUNK
    d = np.empty(first[m], np.uint64)
    if parallel:
        _chunk_digests_parallel(words, first, d)
    else:
        for c in range(d.shape[0]):
            _digest_chunk_of(words, first, d, c)
    a = _fmix(np.uint64(m))
    b = _fmix(np.uint64(m) * _P3)
    for i in range(m):
        k = np.uint64(words[i].shape[0])
        a = _fmix(a ^ _fmix(k ^ tails[i]))
        b = b + _fmix(tails[i] * _P1 + k)
        for c in range(first[i], first[i + 1]):
            a = _fmix(a ^ d[c])
            b = b + _fmix(d[c] * _P3 + np.uint64(c - first[i]))
        b = _fmix(b)  # the arrays' order counts: (x, y) is not (y, x)
    return a, b


def fingerprint(*arrays: np.ndarray) -> tuple[int, int, tuple[tuple[str, tuple[int, ...]], ...]]:
    """A digest of the bytes of ``arrays``, with their dtypes and shapes.

    Every byte is read (in compiled code; over fixed chunks, in parallel on
    numba's current threads where the arrays hold 8 MiB and more, all of them
    in one parallel region): two arrays that differ in one 8-byte word always
    get different digests, and arrays that differ more get equal ones with
    probability about 2**-64. Sampling would miss most in-place edits; this
    does not.

    Parameters
    ----------
    *arrays : numpy.ndarray
        Any arrays (a non-contiguous one is copied first), e.g. a csr
        matrix's ``indptr`` and ``indices``.

    Returns
    -------
    tuple
        ``(digest_a, digest_b, ((dtype string, shape), ...))``.
    """
    words, tails, nbytes = [], np.zeros(len(arrays), np.uint64), 0
    for i, a in enumerate(arrays):
        flat = np.ascontiguousarray(a).reshape(-1).view(np.uint8)
        k = flat.shape[0] // 8
        words.append(flat[:8 * k].view(np.uint64))
        rest = flat[8 * k:]
        if len(rest):
            tails[i] = int.from_bytes(rest.tobytes(), "little") | (len(rest) << 56)
        nbytes += flat.shape[0]
    parallel = nbytes >= _PARALLEL_BYTES and nb.get_num_threads() > 1
    h1, h2 = _digest_words(tuple(words), tails, parallel)
    return int(h1), int(h2), tuple((a.dtype.str, tuple(a.shape)) for a in arrays)
