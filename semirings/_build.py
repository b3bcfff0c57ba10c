"""Numba builders for compressed sparse structures (no COO round trip).

A counting sort scatters edges into their major slots in O(m) time and one
output-sized allocation, then each slot is sorted (and optionally deduplicated)
in parallel. This is what lets a 500-million-edge block be built on a laptop:
an ``argsort`` of the edge list would need several times the memory.
"""

from __future__ import annotations

import numba as nb
import numpy as np

__all__ = ["build_compressed"]


@nb.njit(cache=True)
def _counts(major, minor, nmajor, symmetric, drop_loops):
    ptr = np.zeros(nmajor + 1, np.int64)
    for k in range(major.shape[0]):
        a = major[k]
        b = minor[k]
        if drop_loops and a == b:
            continue
        ptr[a + 1] += 1
        if symmetric and a != b:
            ptr[b + 1] += 1
    for i in range(nmajor):
        ptr[i + 1] += ptr[i]
    return ptr


@nb.njit(cache=True)
def _scatter(major, minor, values, ptr, idx, vals, has_values, symmetric, drop_loops):
    pos = ptr[:-1].copy()
    for k in range(major.shape[0]):
        m = major[k]
        w = minor[k]
        if drop_loops and m == w:
            continue
        p = pos[m]
        idx[p] = w
        if has_values:
            vals[p] = values[k]
        pos[m] = p + 1
        if symmetric and m != w:
            p = pos[w]
            idx[p] = m
            if has_values:
                vals[p] = values[k]
            pos[w] = p + 1


@nb.njit(parallel=True, cache=True)
def _sort_segments(ptr, idx, vals, has_values, dedup, newlen):
    n = ptr.shape[0] - 1
    for i in nb.prange(n):
        lo, hi = ptr[i], ptr[i + 1]
        if hi - lo > 1:
            seg = idx[lo:hi]
            if has_values:
                order = np.argsort(seg, kind="mergesort")
                idx[lo:hi] = seg[order]
                vals[lo:hi] = vals[lo:hi][order]
            else:
                seg.sort()
        if dedup and hi - lo > 1:
            w = lo
            for r in range(lo + 1, hi):
                if idx[r] == idx[w]:
                    if has_values:
                        vals[w] += vals[r]
                else:
                    w += 1
                    idx[w] = idx[r]
                    if has_values:
                        vals[w] = vals[r]
            newlen[i] = w + 1 - lo
        else:
            newlen[i] = hi - lo


@nb.njit(parallel=True, cache=True)
def _compact(ptr, idx, vals, has_values, newlen, newptr, idx2, vals2):
    n = ptr.shape[0] - 1
    for i in nb.prange(n):
        src = ptr[i]
        dst = newptr[i]
        for k in range(newlen[i]):
            idx2[dst + k] = idx[src + k]
            if has_values:
                vals2[dst + k] = vals[src + k]


def build_compressed(
    major: np.ndarray,
    minor: np.ndarray,
    nmajor: int,
    *,
    values: np.ndarray | None = None,
    index_dtype: np.dtype | type = np.int64,
    dedup: bool = True,
    symmetric: bool = False,
    drop_loops: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Build ``(ptr, idx, vals)`` of a major-compressed structure from pairs.

    Parameters
    ----------
    major, minor : numpy.ndarray
        Integer arrays of equal length, already checked to be in range.
    nmajor : int
        Number of major slots (rows of a CSR, columns of a CSC).
    values : numpy.ndarray, optional
        Entry values; None builds a pattern (structure only).
    index_dtype : dtype
        dtype of ``ptr`` and ``idx`` (scipy wants them equal).
    dedup : bool
        Merge repeated (major, minor) pairs; values of repeats are summed
        (the scipy convention).
    symmetric : bool
        Also insert every pair mirrored (``minor, major``); needs
        ``nmajor`` to cover the minor ids too. Avoids materializing the
        doubled edge list of an undirected graph.
    drop_loops : bool
        Skip pairs with ``major == minor`` (self-loops).

    Returns
    -------
    ptr : numpy.ndarray
        ``nmajor + 1`` offsets.
    idx : numpy.ndarray
        Minor indices, sorted within each major slot.
    vals : numpy.ndarray or None
        Values aligned with ``idx``.
    """
    has_values = values is not None
    ptr = _counts(major, minor, int(nmajor), symmetric, drop_loops)
    total = int(ptr[-1])
    idx = np.empty(total, dtype=index_dtype)
    vals = np.empty(total, dtype=values.dtype) if has_values else np.empty(0)
    _scatter(
        major, minor, values if has_values else np.empty(0), ptr, idx, vals, has_values,
        symmetric, drop_loops,
    )
    newlen = np.empty(int(nmajor), np.int64)
    _sort_segments(ptr, idx, vals, has_values, dedup, newlen)
    if dedup and int(newlen.sum()) != idx.shape[0]:
        newptr = np.zeros(int(nmajor) + 1, np.int64)
        np.cumsum(newlen, out=newptr[1:])
        nnz = int(newptr[-1])
        idx2 = np.empty(nnz, dtype=index_dtype)
        vals2 = np.empty(nnz, dtype=vals.dtype) if has_values else np.empty(0)
        _compact(ptr, idx, vals, has_values, newlen, newptr, idx2, vals2)
        ptr, idx, vals = newptr, idx2, vals2
    return ptr.astype(index_dtype, copy=False), idx, (vals if has_values else None)
