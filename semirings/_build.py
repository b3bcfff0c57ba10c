"""Numba builders for compressed sparse structures (no COO round trip).

A counting sort scatters edges into their major slots in O(m) time and one
output-sized allocation, then each slot is sorted (and optionally deduplicated)
in parallel. This is what lets a 500-million-edge block be built on a laptop:
an ``argsort`` of the edge list would need several times the memory. Merged
repeats are squeezed out in place and the array shrunk by ``realloc``, so the
entries are never held twice.

:func:`count_into`, :func:`scatter_into` and :func:`finish_compressed` are the
same three steps for pairs that arrive in chunks (a generator run twice, an
edge list read in slices): count every chunk, allocate once, scatter every
chunk, finish. :func:`build_compressed` is them for pairs held in memory.

Each step runs its numba kernel, except on a small input while the kernel is
not compiled yet (:func:`kernel_ready`): numpy does the same there, in the
same order, instead of a first call that compiles for seconds.
"""

from __future__ import annotations

import os
from typing import Any

import numba as nb
import numpy as np

__all__ = ["build_compressed", "count_into", "finish_compressed", "kernel_ready",
           "scatter_into"]

#: Pairs up to which a step runs on numpy while its kernel is not compiled.
SMALL_PAIRS = 1 << 16


def kernel_ready(kernel: Any) -> bool:
    """Whether numba dispatcher ``kernel`` runs without compiling (as far as is cheap to say).

    True when it holds machine code in this process, or when its on-disk cache
    index exists (numba checks the source's time stamp and the signature only
    when loading: an edited source or new argument types still compile). At
    most one ``stat`` call, and none once the kernel has run in this process.
    """
    if kernel.overloads:
        return True
    cache_file = getattr(getattr(kernel, "_cache", None), "_cache_file", None)
    path = getattr(cache_file, "_index_path", None)
    return path is not None and os.path.exists(path)


def _numpy_first(kernel: Any, pairs: int) -> bool:
    return pairs <= SMALL_PAIRS and not kernel_ready(kernel)


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


@nb.njit(cache=True)
def _compact_inplace(ptr, idx, vals, has_values, newlen, newptr):
    # Segment i moves down from ptr[i] to newptr[i] <= ptr[i]; in increasing i, a
    # move never overwrites a segment that is still to move, so no second array
    # (the size of the whole block) is needed. Serial for that reason.
    n = ptr.shape[0] - 1
    for i in range(n):
        src = ptr[i]
        dst = newptr[i]
        if src == dst:
            continue
        for k in range(newlen[i]):
            idx[dst + k] = idx[src + k]
            if has_values:
                vals[dst + k] = vals[src + k]


def count_into(counts: np.ndarray, loops: np.ndarray, major: np.ndarray, minor: np.ndarray,
               symmetric: bool, drop_loops: bool, count_loops: bool) -> None:
    """Add the entries of one chunk of pairs to ``counts[slot + 1]`` (kept loops too).

    ``loops[a]`` counts the self-loops ``(a, a)`` when ``count_loops``:
    with the counts, that gives each slot's number of input pairs.
    """
    if not _numpy_first(_count_into, major.shape[0]):
        _count_into(counts, loops, major, minor, symmetric, drop_loops, count_loops)
        return
    loop = major == minor
    if count_loops:
        np.add.at(loops, major[loop], 1)
    keep = ~loop if drop_loops else np.ones(major.shape[0], bool)
    np.add.at(counts, major[keep] + 1, 1)
    if symmetric:
        np.add.at(counts, minor[keep & ~loop] + 1, 1)


@nb.njit(cache=True)
def _count_into(counts, loops, major, minor, symmetric, drop_loops, count_loops):
    for k in range(major.shape[0]):
        a = major[k]
        b = minor[k]
        if a == b:
            if count_loops:
                loops[a] += 1
            if drop_loops:
                continue
        counts[a + 1] += 1
        if symmetric and a != b:
            counts[b + 1] += 1


def scatter_into(pos: np.ndarray, idx: np.ndarray, major: np.ndarray, minor: np.ndarray,
                 symmetric: bool, drop_loops: bool, values: np.ndarray | None = None,
                 vals: np.ndarray | None = None) -> None:
    """Write one chunk of pairs into their slots; ``pos[slot]`` is the next free place.

    With ``values``, entry ``k``'s value goes to ``vals`` beside its index.
    """
    if not _numpy_first(_scatter_into, major.shape[0]):
        if values is None:
            _scatter_into(pos, idx, major, minor, symmetric, drop_loops)
        else:
            _scatter_into(pos, idx, major, minor, symmetric, drop_loops, values, vals)
        return
    # The kernel's order: pair k, then its mirror, then pair k + 1.
    k = major.shape[0]
    slot = np.stack([major, minor], axis=1).reshape(-1)
    entry = np.stack([minor, major], axis=1).reshape(-1)
    loop = np.repeat(major == minor, 2)
    keep = np.ones(2 * k, bool)
    keep[1::2] = symmetric
    keep[1::2] &= ~loop[1::2]
    if drop_loops:
        keep &= ~loop
    slot, entry = slot[keep], entry[keep]
    order = np.argsort(slot, kind="stable")
    sorted_slot = slot[order]
    first = np.searchsorted(sorted_slot, sorted_slot, side="left")
    place = np.empty_like(order)
    place[order] = pos[sorted_slot] + (np.arange(order.shape[0]) - first)
    idx[place] = entry
    if values is not None and vals is not None:
        vals[place] = np.repeat(values, 2)[keep]
    np.add.at(pos, slot, 1)


@nb.njit(cache=True)
def _scatter_into(pos, idx, major, minor, symmetric, drop_loops, values=None, vals=None):
    has_values = values is not None
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


def finish_compressed(
    ptr: np.ndarray,
    idx: np.ndarray,
    *,
    vals: np.ndarray | None = None,
    dedup: bool = True,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Sort every slot of a filled structure, merge repeats, and shrink it in place.

    Parameters
    ----------
    ptr : numpy.ndarray
        int64 offsets, ``nmajor + 1``, of the filled (unsorted) slots.
    idx : numpy.ndarray
        Minor indices, filled slot by slot. Must own its memory and have no
        other view: when repeats are merged it is compacted in place and
        shrunk with ``ndarray.resize`` (a ``realloc``), so no second array
        of its size is ever allocated.
    vals : numpy.ndarray, optional
        Values aligned with ``idx`` (summed over repeats), under the same rules.
    dedup : bool
        Merge repeated minor indices within a slot.

    Returns
    -------
    ptr, idx, vals
        The int64 offsets after merging (a new array when anything merged),
        and ``idx`` and ``vals`` (the same objects, possibly shorter).
    """
    has_values = vals is not None
    nmajor = ptr.shape[0] - 1
    if _numpy_first(_sort_segments, idx.shape[0]):
        return _finish_numpy(ptr, idx, vals, dedup)
    newlen = np.empty(nmajor, np.int64)
    _sort_segments(ptr, idx, vals if has_values else np.empty(0), has_values, dedup, newlen)
    if dedup and int(newlen.sum()) != idx.shape[0]:
        newptr = np.zeros(nmajor + 1, np.int64)
        np.cumsum(newlen, out=newptr[1:])
        nnz = int(newptr[-1])
        _compact_inplace(ptr, idx, vals if has_values else np.empty(0), has_values,
                         newlen, newptr)
        _shrink(idx, nnz)
        if has_values:
            _shrink(vals, nnz)
        ptr = newptr
    return ptr, idx, vals


def _finish_numpy(ptr: np.ndarray, idx: np.ndarray, vals: np.ndarray | None,
                  dedup: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """:func:`finish_compressed` in numpy, for a small structure (same result)."""
    nmajor = ptr.shape[0] - 1
    slot = np.repeat(np.arange(nmajor), np.diff(ptr))
    # Stable, as the kernel's merge sort: repeats keep their order of arrival.
    order = np.lexsort((idx, slot))
    idx[:] = idx[order]
    if vals is not None:
        vals[:] = vals[order]
    if not dedup or idx.shape[0] < 2:
        return ptr, idx, vals
    new = np.ones(idx.shape[0], bool)
    new[1:] = (idx[1:] != idx[:-1]) | (slot[1:] != slot[:-1])
    nnz = int(new.sum())
    if nnz == idx.shape[0]:
        return ptr, idx, vals
    starts = np.flatnonzero(new)
    if vals is not None:
        summed = np.add.reduceat(vals, starts)
        vals[:nnz] = summed
        _shrink(vals, nnz)
    idx[:nnz] = idx[starts]
    _shrink(idx, nnz)
    newptr = np.zeros(nmajor + 1, np.int64)
    np.cumsum(np.bincount(slot[starts], minlength=nmajor), out=newptr[1:])
    return newptr, idx, vals


def _shrink(a: np.ndarray, size: int) -> None:
    """Cut ``a`` to its first ``size`` entries in place, handing the rest back."""
    if a.base is None and a.flags.owndata:
        a.resize(size, refcheck=False)  # realloc: shrinking keeps the data where it is
    else:  # pragma: no cover - every caller here allocates its own arrays
        raise ValueError("finish_compressed needs arrays that own their memory")


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
    if _numpy_first(_counts, major.shape[0]):
        ptr = np.zeros(int(nmajor) + 1, np.int64)
        count_into(ptr, ptr[:0], major, minor, symmetric, drop_loops, False)
        np.cumsum(ptr, out=ptr)
    else:
        ptr = _counts(major, minor, int(nmajor), symmetric, drop_loops)
    total = int(ptr[-1])
    idx = np.empty(total, dtype=index_dtype)
    vals = np.empty(total, dtype=values.dtype) if has_values else np.empty(0)
    if has_values:
        scatter_into(ptr[:-1].copy(), idx, major, minor, symmetric, drop_loops, values, vals)
    else:
        scatter_into(ptr[:-1].copy(), idx, major, minor, symmetric, drop_loops)
    ptr, idx, out_vals = finish_compressed(ptr, idx, vals=vals if has_values else None,
                                           dedup=dedup)
    return ptr.astype(index_dtype, copy=False), idx, out_vals
