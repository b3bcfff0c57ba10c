"""Bitmaps of vertex ids (uint64 words) for the numba kernels, one process and grid alike."""

from __future__ import annotations

import numba as nb
import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros

__all__ = ["bit_index", "first_member", "first_member_blocked", "ids_and_not", "ids_from_bits",
           "set_bits", "test_and_set"]


@nb.njit(cache=True, inline="always")
def bit_index(word):  # type: ignore[no-untyped-def]
    """Position of the lowest set bit of a non-zero word (one ``tzcnt``)."""
    return np.int64(trailing_zeros(word))


@nb.njit(cache=True, inline="always")
def _bit(bits, u):  # type: ignore[no-untyped-def]
    """Bit ``u`` (unsigned) of ``bits``, as 0 or 1."""
    return (bits[u >> np.uint64(6)] >> (u & np.uint64(63))) & np.uint64(1)


@nb.njit(cache=True, inline="always")
def first_member(bits, ind, lo, hi):  # type: ignore[no-untyped-def]
    """First ``e`` in ``lo .. hi-1`` whose id ``ind[e]`` has its bit set, or ``hi``.

    The bottom-up scan of one vertex's in-neighbours (sorted: the first hit is
    the smallest frontier neighbour), shared by the one-process and grid kernels.
    """
    # Unsigned indices: a signed one costs a negative-index fix-up at every load, and
    # the first bottom-up level of Kronecker scale 18 and 20 ran 6-16% slower with them.
    for e in range(np.uint64(lo), np.uint64(hi)):
        if _bit(bits, np.uint64(ind[e])):
            return np.int64(e)
    return hi


@nb.njit(cache=True, inline="always")
def first_member_blocked(bits, ind, lo, hi):  # type: ignore[no-untyped-def]
    """:func:`first_member`, testing four ids at a time.

    Their four bits are gathered into one word, whose lowest set bit is the
    hit: one branch per four ids. Where about a third to a half of a
    vertex's in-neighbours are in the frontier (a power-law graph's first
    bottom-up level), the branch per id of :func:`first_member` goes either
    way at random and the CPU mispredicts it; this took 0.40-0.96x its
    time there. Where nearly every first in-neighbour is a hit, or nearly none
    is, that branch is predicted and this one's extra loads cost 1.2-2.5x
    (:func:`spbfs.kernels.bfs_numba.blocked_sweep` chooses per level).
    """
    e = np.uint64(lo)
    end = np.uint64(hi)
    four = np.uint64(4)
    one = np.uint64(1)
    while e + four <= end:
        hits = (_bit(bits, np.uint64(ind[e]))
                | _bit(bits, np.uint64(ind[e + one])) << one
                | _bit(bits, np.uint64(ind[e + np.uint64(2)])) << np.uint64(2)
                | _bit(bits, np.uint64(ind[e + np.uint64(3)])) << np.uint64(3))
        if hits:
            return np.int64(e) + np.int64(trailing_zeros(hits))
        e += four
    while e < end:
        if _bit(bits, np.uint64(ind[e])):
            return np.int64(e)
        e += one
    return hi


@nb.njit(cache=True, inline="always")
def test_and_set(bits, v):  # type: ignore[no-untyped-def]
    """Whether bit ``v`` was set already; it is set afterwards."""
    u = np.uint64(v)  # unsigned: no negative-index fix-up
    w = u >> np.uint64(6)
    bit = np.uint64(1) << (u & np.uint64(63))
    if bits[w] & bit:
        return True
    bits[w] |= bit
    return False


@nb.njit(cache=True, nogil=True)
def set_bits(ids, bits, offset):  # type: ignore[no-untyped-def]
    """Set bits ``ids + offset`` of a uint64 bitmap."""
    one = np.uint64(1)
    for x in range(ids.shape[0]):
        u = np.uint64(ids[x] + offset)  # unsigned: no negative-index fix-up
        bits[u >> np.uint64(6)] |= one << (u & np.uint64(63))


@nb.njit(cache=True, nogil=True)
def ids_from_bits(bits, offset, out, k0):  # type: ignore[no-untyped-def]
    """Append ``offset + position`` of every set bit (increasing) to ``out`` from ``k0``."""
    k = k0
    one = np.uint64(1)
    for w in range(bits.shape[0]):
        word = bits[w]
        while word:
            out[k] = offset + w * 64 + bit_index(word)
            k += 1
            word &= word - one
    return k


@nb.njit(cache=True, nogil=True)
def ids_and_not(bits, mask, offset, out):  # type: ignore[no-untyped-def]
    """``offset + position`` of every bit set in ``bits`` and clear in ``mask``,
    increasing, into ``out`` from 0; returns the count.

    O(words + found) sequential work, 64 positions per word. The grid BFS reads
    a level's new frontier piece this way (``visited`` and not ``prev``: sorted,
    without a scatter or a sort) and the candidates of a first bottom-up level
    (rows with entries and not done: a later sub-step, where most rows were
    found before it, skips them 64 at a time).
    """
    k = 0
    one = np.uint64(1)
    for w in range(bits.shape[0]):
        word = bits[w] & ~mask[w]
        while word:
            out[k] = offset + w * 64 + bit_index(word)
            k += 1
            word &= word - one
    return k
