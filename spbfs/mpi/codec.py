"""Compressed frontier messages: delta + frame-of-reference bit packing in blocks.

The codec of the S4-BP128 family that Young, Romera, Hauck and Fröning chose for
the frontier exchanges of their 2D BFS (*Optimizing Communication for a
2D-Partitioned Scalable BFS*, Section V), written for spbfs's int64 ids: ids
are read and written as int64 (or int32) in the kernels themselves, so no
message pays a type-conversion pass (their codec took 32-bit input and lost
80 % of its time converting).

Message formats
---------------
Every message is a 1-D int64 array (it travels in the grid's int64 receive
buffers) that describes itself: word 0 is ``n << 8 | kind``; words after the
message's end are ignored, a message cut short is an error.

ids (sorted, unique, non-negative)
    ``[header, first id, widths..., blocks...]``. Blocks of 128 ids; in each,
    the gaps ``ids[i] - ids[i-1] - 1`` (the previous block's last id is the
    block's reference, so a run of consecutive ids costs 0 bits) are packed
    with the block's bit width ``b`` (the widest gap): a full block is exactly
    ``2 b`` words, the last one ``ceil(m b / 64)``. Widths are bytes, eight
    to a word, ahead of the blocks.
pairs (children strictly ascending, parents any non-negative)
    ``[header, first child, widths..., per block: parent minimum, packed child
    gaps, packed parent - minimum]``: children as ids, parents frame of
    reference against the block's smallest parent (no delta: parents are in
    no order). Two width bytes per block.
bitmap
    ``[header, words...]`` (dense, ``bw + 1`` words) or ``[header, ids
    message of the set bit positions]`` (sparse). The sparse form is chosen
    when a popcount estimate of its size is under 7/8 of the dense one; on
    random frontiers the gap coding of set bits beats the plain bitmap up to
    a density of about a quarter, and on the real frontiers of
    ``benchmarks/codec.py`` it never lost to "indexes of non-zero words plus
    those words", so only these two forms exist.

Worst cases: an ids message is at most ``n + 4`` words (gaps of up to 63 bits
pack into 63/64 of a word each, which pays for the headers), a pairs message at
most ``2 n + 5 + n / 128``, a bitmap ``bw + 1`` (:func:`max_encoded_words`).

Choice of codec
---------------
spbfs uses this numba codec, not a library, and no optional one either.
``pyfastpfor`` (FastPFor: S4-BP128 itself, in SIMD) encodes large sorted
lists faster even with the conversion pass int64 ids need, and decodes them a
little faster; but it packs 32-bit unsigned ints only, so ids of a 2^40 range,
or global parent ids beyond 2^32, cannot go through it at all. It could only
ever accelerate some messages beside this codec, with a second message format
that every rank must have installed, while most frontier messages are small
(where per-call costs make the two even) and fold pairs compress better here
(parents framed against their block's minimum). ``blosc2`` and ``numcodecs``
are byte-stream compressors: LZ4 after bit shuffle compresses id lists half
as well, Zstd after delta and bit shuffle compresses them about a tenth
better but runs an order of magnitude slower. The measurements are in
``docs/benchmarks.md`` ("Frontier codecs").

Validation is fused with encoding: the gaps are computed anyway, and their
bitwise OR is negative exactly when some id is not larger than the one before
(or the first is negative), so checking costs one comparison per block.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numba as nb
import numpy as np
from llvmlite import ir
from numba import types
from numba.cpython.unsafe.numbers import leading_zeros, trailing_zeros
from numba.extending import intrinsic

__all__ = [
    "BLOCK",
    "calibrate",
    "decode_bitmap",
    "decode_ids",
    "decode_pairs",
    "decoded_length",
    "encode_bitmap",
    "encode_ids",
    "encode_pairs",
    "estimate_ids_words",
    "max_encoded_words",
    "message_kind",
]

#: Ids per block: a full block of width ``b`` is exactly ``2 b`` words.
BLOCK = 128

KIND_IDS = 0xC1
KIND_PAIRS = 0xC2
KIND_BITMAP_DENSE = 0xC3
KIND_BITMAP_SPARSE = 0xC4
_KINDS = {KIND_IDS: "ids", KIND_PAIRS: "pairs", KIND_BITMAP_DENSE: "bitmap",
          KIND_BITMAP_SPARSE: "bitmap"}

# Kernel return codes (a negative "end position").
_ERR_UNSORTED = -1
_ERR_NEGATIVE = -2
_ERR_PARENT = -3
_ERR_TRUNCATED = -4
_ERR_CORRUPT = -5
_ERR_FULL = -6

_ID_DTYPES = (np.dtype(np.int64), np.dtype(np.int32))

# The sparse bitmap form must be estimated at most this share of the dense one.
_SPARSE_SHARE = 0.875


# -- bit twiddling ----------------------------------------------------------------------

@intrinsic
def _popcount(typingctx, x):  # type: ignore[no-untyped-def]
    """Set bits of a uint64 (LLVM ``ctpop``: one ``popcnt`` instruction)."""
    sig = types.uint64(types.uint64)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        i64 = ir.IntType(64)
        fnty = ir.FunctionType(i64, [i64])
        fn = builder.module.declare_intrinsic("llvm.ctpop", [i64], fnty)
        return builder.call(fn, [args[0]])

    return sig, codegen


@nb.njit(cache=True, inline="always")
def _width(x):  # type: ignore[no-untyped-def]
    """Bits needed for the non-negative value ``x`` (0 for 0)."""
    if x == 0:
        return np.int64(0)
    return np.int64(64 - leading_zeros(np.uint64(x)))


@nb.njit(cache=True, inline="always")
def _packed_words(m, b):  # type: ignore[no-untyped-def]
    """Words that ``m`` values of ``b`` bits take (``2 b`` for a full block)."""
    return (m * b + 63) >> 6


@nb.njit(cache=True, inline="always")
def _pack(vals, m, b, out, pos):  # type: ignore[no-untyped-def]
    """Pack ``vals[:m]`` (uint64, each below ``2**b``) into ``out`` from ``pos``; new pos."""
    if b == 0:
        return pos
    if b == 64:
        for i in range(m):
            out[pos + i] = vals[i]
        return pos + m
    acc = np.uint64(0)
    fill = np.int64(0)
    for i in range(m):
        v = vals[i]
        acc |= v << np.uint64(fill)
        fill += b
        if fill >= 64:
            out[pos] = acc
            pos += 1
            fill -= 64
            # the high bits of v that did not fit
            acc = v >> np.uint64(b - fill) if fill > 0 else np.uint64(0)
    if fill > 0:
        out[pos] = acc
        pos += 1
    return pos


@nb.njit(cache=True, inline="always")
def _unpack(msg, pos, m, b, vals):  # type: ignore[no-untyped-def]
    """Unpack ``m`` values of ``b`` bits from ``msg[pos:]`` into ``vals`` (uint64)."""
    if b == 0:
        for i in range(m):
            vals[i] = 0
        return pos
    if b == 64:
        for i in range(m):
            vals[i] = msg[pos + i]
        return pos + m
    ub = np.uint64(b)
    mask = (np.uint64(1) << ub) - np.uint64(1)
    acc = msg[pos]
    pos += 1
    avail = np.int64(64)
    for i in range(m):
        if avail >= b:
            vals[i] = acc & mask
            acc >>= ub
            avail -= b
        else:
            nxt = msg[pos]
            pos += 1
            vals[i] = (acc | (nxt << np.uint64(avail))) & mask
            acc = nxt >> np.uint64(b - avail)
            avail = 64 - (b - avail)
    return pos


@nb.njit(cache=True, inline="always")
def _get_byte(msg, at, k):  # type: ignore[no-untyped-def]
    """Byte ``k`` of the byte area that starts at word ``at``."""
    return np.int64((msg[at + (k >> 3)] >> np.uint64(8 * (k & 7))) & np.uint64(0xFF))


@nb.njit(cache=True, inline="always")
def _set_byte(out, at, k, v):  # type: ignore[no-untyped-def]
    out[at + (k >> 3)] |= np.uint64(v) << np.uint64(8 * (k & 7))


# -- ids ----------------------------------------------------------------------------------

@nb.njit(cache=True, inline="always")
def _gaps(src, lo, m, prev, gaps):  # type: ignore[no-untyped-def]
    """Gaps ``src[lo+i] - src[lo+i-1] - 1`` of a block into ``gaps``; their OR (int64).

    The OR is negative exactly when some gap is: an id not above the previous.
    """
    orv = np.int64(0)
    d = np.int64(src[lo]) - prev - 1
    gaps[0] = np.uint64(d)
    orv |= d
    for i in range(1, m):
        d = np.int64(src[lo + i]) - np.int64(src[lo + i - 1]) - 1
        gaps[i] = np.uint64(d)
        orv |= d
    return orv


@nb.njit(cache=True, inline="always")
def _block_gaps(src, k, gaps):  # type: ignore[no-untyped-def]
    """Block ``k`` of the sorted ids ``src``: ``(m, OR of its gaps)``, the gaps in ``gaps``.

    A block's reference is the id before it (the first block's, its first id - 1),
    which is what its decoder has seen last.
    """
    lo = k * BLOCK
    m = min(BLOCK, src.shape[0] - lo)
    prev = np.int64(src[lo - 1]) if k > 0 else np.int64(src[0]) - 1
    return m, _gaps(src, lo, m, prev, gaps)


@nb.njit(cache=True, inline="always")
def _put_block(gaps, m, orv, out, wat, k, pos, limit):  # type: ignore[no-untyped-def]
    """Pack block ``k``'s ``m`` gaps (their OR ``orv``) at ``pos``, its width as byte ``k``.

    Returns the new position, or ``_ERR_FULL`` when the block would pass word ``limit``.
    """
    b = _width(orv)
    if pos + _packed_words(m, b) > limit:
        return _ERR_FULL
    _set_byte(out, wat, k, b)
    return _pack(gaps, m, b, out, pos)


@nb.njit(cache=True, inline="always")
def _block_width(msg, wat, k, m, pos, end):  # type: ignore[no-untyped-def]
    """Bit width of block ``k`` (``m`` values at ``pos``), read from byte ``k`` at ``wat``.

    Or ``_ERR_CORRUPT`` (a width over 63), or ``_ERR_TRUNCATED`` (the block would
    pass ``end``).
    """
    b = _get_byte(msg, wat, k)
    if b > 63:
        return _ERR_CORRUPT
    if pos + _packed_words(m, b) > end:
        return _ERR_TRUNCATED
    return b


@nb.njit(cache=True, inline="always")
def _unpack_block(msg, wat, k, m, pos, end, gaps):  # type: ignore[no-untyped-def]
    """Block ``k``'s ``m`` gaps (at ``pos``) into ``gaps``; the position after the block, or
    the error code of :func:`_block_width`."""
    b = _block_width(msg, wat, k, m, pos, end)
    if b < 0:
        return b
    return _unpack(msg, pos, m, b, gaps)


@nb.njit(cache=True, nogil=True)
def _encode_ids(ids, out, pos0, limit):  # type: ignore[no-untyped-def]
    """Write the ids message of ``ids`` into ``out`` (uint64) from ``pos0``.

    Returns the end position, or a negative error code (``_ERR_FULL`` when the
    message would pass word ``limit``).
    """
    n = ids.shape[0]
    if limit - pos0 < 1:
        return _ERR_FULL
    out[pos0] = (np.uint64(n) << np.uint64(8)) | np.uint64(KIND_IDS)
    if n == 0:
        return pos0 + 1
    base = np.int64(ids[0])
    if base < 0:
        return _ERR_NEGATIVE
    nb_ = (n + BLOCK - 1) // BLOCK
    wat = pos0 + 2
    pos = wat + (nb_ + 7) // 8
    if pos > limit:
        return _ERR_FULL
    out[pos0 + 1] = np.uint64(base)
    for w in range(wat, pos):
        out[w] = 0
    gaps = np.empty(BLOCK, np.uint64)
    for k in range(nb_):
        m, orv = _block_gaps(ids, k, gaps)
        if orv < 0:
            return _ERR_UNSORTED
        pos = _put_block(gaps, m, orv, out, wat, k, pos, limit)
        if pos < 0:
            return pos
    return pos


@nb.njit(cache=True, inline="always")
def _ids_layout(msg, pos0):  # type: ignore[no-untyped-def]
    """``(n, base, width area, first block)`` of the ids message at ``pos0``."""
    n = np.int64(msg[pos0] >> np.uint64(8))
    if n == 0:
        return n, np.int64(0), pos0 + 1, pos0 + 1
    base = np.int64(msg[pos0 + 1])
    nb_ = (n + BLOCK - 1) // BLOCK
    return n, base, pos0 + 2, pos0 + 2 + (nb_ + 7) // 8


@nb.njit(cache=True, nogil=True)
def _decode_ids(msg, pos0, out, offset):  # type: ignore[no-untyped-def]
    """Decode the ids message at ``msg[pos0]`` into ``out`` (+ ``offset``); end or error."""
    end = msg.shape[0]
    n, base, wat, pos = _ids_layout(msg, pos0)
    if pos > end:
        return _ERR_TRUNCATED
    if n == 0:
        return pos
    nb_ = (n + BLOCK - 1) // BLOCK
    gaps = np.empty(BLOCK, np.uint64)
    prev = base - 1
    for k in range(nb_):
        lo = k * BLOCK
        m = min(BLOCK, n - lo)
        pos = _unpack_block(msg, wat, k, m, pos, end, gaps)
        if pos < 0:
            return pos
        for i in range(m):
            prev += np.int64(gaps[i]) + 1
            out[lo + i] = prev + offset
    return pos


# -- pairs --------------------------------------------------------------------------------

@nb.njit(cache=True, nogil=True)
def _encode_pairs(children, parents, out):  # type: ignore[no-untyped-def]
    n = children.shape[0]
    out[0] = (np.uint64(n) << np.uint64(8)) | np.uint64(KIND_PAIRS)
    if n == 0:
        return 1
    base = np.int64(children[0])
    if base < 0:
        return _ERR_NEGATIVE
    out[1] = np.uint64(base)
    nb_ = (n + BLOCK - 1) // BLOCK
    wat = 2
    pos = wat + (2 * nb_ + 7) // 8
    for w in range(wat, pos):
        out[w] = 0
    gaps = np.empty(BLOCK, np.uint64)
    rel = np.empty(BLOCK, np.uint64)
    for k in range(nb_):
        m, orv = _block_gaps(children, k, gaps)
        if orv < 0:
            return _ERR_UNSORTED
        lo = k * BLOCK
        pmin = np.int64(parents[lo])
        for i in range(1, m):
            pmin = min(pmin, np.int64(parents[lo + i]))
        if pmin < 0:
            return _ERR_PARENT
        por = np.uint64(0)
        for i in range(m):
            r = np.uint64(np.int64(parents[lo + i]) - pmin)
            rel[i] = r
            por |= r
        bc = _width(orv)
        bp = _width(por)
        _set_byte(out, wat, 2 * k, bc)
        _set_byte(out, wat, 2 * k + 1, bp)
        out[pos] = np.uint64(pmin)
        pos = _pack(gaps, m, bc, out, pos + 1)
        pos = _pack(rel, m, bp, out, pos)
    return pos


@nb.njit(cache=True, nogil=True)
def _decode_pairs(msg, cout, pout, offset):  # type: ignore[no-untyped-def]
    end = msg.shape[0]
    n = np.int64(msg[0] >> np.uint64(8))
    if n == 0:
        return 1
    if end < 2:
        return _ERR_TRUNCATED
    nb_ = (n + BLOCK - 1) // BLOCK
    wat = 2
    pos = wat + (2 * nb_ + 7) // 8
    if pos > end:
        return _ERR_TRUNCATED
    gaps = np.empty(BLOCK, np.uint64)
    prev = np.int64(msg[1]) - 1
    for k in range(nb_):
        lo = k * BLOCK
        m = min(BLOCK, n - lo)
        bc = _get_byte(msg, wat, 2 * k)
        bp = _get_byte(msg, wat, 2 * k + 1)
        if bc > 63 or bp > 63:
            return _ERR_CORRUPT
        if pos + 1 + _packed_words(m, bc) + _packed_words(m, bp) > end:
            return _ERR_TRUNCATED
        pmin = np.int64(msg[pos])
        pos = _unpack(msg, pos + 1, m, bc, gaps)
        for i in range(m):
            prev += np.int64(gaps[i]) + 1
            cout[lo + i] = prev + offset
        pos = _unpack(msg, pos, m, bp, gaps)
        for i in range(m):
            pout[lo + i] = pmin + np.int64(gaps[i])
    return pos


# -- bitmaps ------------------------------------------------------------------------------

@nb.njit(cache=True, nogil=True)
def _popcount_words(words):  # type: ignore[no-untyped-def]
    c = np.uint64(0)
    for w in range(words.shape[0]):
        c += _popcount(words[w])
    return np.int64(c)


@nb.njit(cache=True, nogil=True)
def _encode_bitmap_sparse(words, count, out, limit):  # type: ignore[no-untyped-def]
    """``[header, ids message of the set bits]`` into ``out``; end, or ``_ERR_FULL``."""
    bw = words.shape[0]
    out[0] = (np.uint64(bw) << np.uint64(8)) | np.uint64(KIND_BITMAP_SPARSE)
    out[1] = (np.uint64(count) << np.uint64(8)) | np.uint64(KIND_IDS)
    if count == 0:
        return 2
    nb_ = (count + BLOCK - 1) // BLOCK
    wat = 3
    pos = wat + (nb_ + 7) // 8
    if pos > limit:
        return _ERR_FULL
    for w in range(wat, pos):
        out[w] = 0
    ids = np.empty(BLOCK, np.int64)
    gaps = np.empty(BLOCK, np.uint64)
    one = np.uint64(1)
    prev = np.int64(-1)
    k = 0  # block
    j = 0  # ids in the block so far
    for w in range(bw):
        word = words[w]
        while word:
            ids[j] = w * 64 + np.int64(trailing_zeros(word))
            word &= word - one
            j += 1
            if j == BLOCK:
                if k == 0:
                    out[2] = np.uint64(ids[0])
                    prev = ids[0] - 1
                orv = _gaps(ids, 0, BLOCK, prev, gaps)
                prev = ids[BLOCK - 1]
                pos = _put_block(gaps, BLOCK, orv, out, wat, k, pos, limit)
                if pos < 0:
                    return pos
                k += 1
                j = 0
    if j > 0:
        if k == 0:
            out[2] = np.uint64(ids[0])
            prev = ids[0] - 1
        orv = _gaps(ids, 0, j, prev, gaps)
        return _put_block(gaps, j, orv, out, wat, k, pos, limit)
    return pos


@nb.njit(cache=True, nogil=True)
def _decode_bitmap_sparse(msg, bits):  # type: ignore[no-untyped-def]
    """Set the bits of the ids message at ``msg[1]``; end, or an error code."""
    end = msg.shape[0]
    n, base, wat, pos = _ids_layout(msg, 1)
    if pos > end:
        return _ERR_TRUNCATED
    nbits = bits.shape[0] * 64
    for w in range(bits.shape[0]):
        bits[w] = 0
    if n == 0:
        return pos
    nb_ = (n + BLOCK - 1) // BLOCK
    gaps = np.empty(BLOCK, np.uint64)
    one = np.uint64(1)
    prev = base - 1
    for k in range(nb_):
        m = min(BLOCK, n - k * BLOCK)
        pos = _unpack_block(msg, wat, k, m, pos, end, gaps)
        if pos < 0:
            return pos
        for i in range(m):
            prev += np.int64(gaps[i]) + 1
            if prev >= nbits or prev < 0:
                return _ERR_CORRUPT
            bits[prev >> 6] |= one << np.uint64(prev & 63)
    return pos


# -- estimates ----------------------------------------------------------------------------

@nb.njit(cache=True)
def _expected_width(p, m):  # type: ignore[no-untyped-def]
    """Expected bit width of a block of ``m`` gaps when each position is an id w.p. ``p``.

    A gap ``d`` (non-ids between two ids) has ``P(d >= t) = (1-p)**t``, so the
    block's width exceeds ``k`` when its largest gap reaches ``2**k``:
    ``E[width] = sum_k 1 - (1 - (1-p)**(2**k))**m``.
    """
    if p >= 1.0:
        return 0.0
    lq = math.log1p(-p)
    e = 0.0
    t = 1.0
    for _ in range(63):
        tail = math.exp(lq * t)  # P(one gap >= t)
        term = -math.expm1(m * math.log1p(-tail)) if tail < 1.0 else 1.0
        e += term
        if term < 1e-9:
            break
        t *= 2.0
    return e


# -- public API ---------------------------------------------------------------------------

def _check_ids(ids: Any, name: str) -> np.ndarray:
    if not isinstance(ids, np.ndarray):
        raise ValueError(f"{name} must be a numpy array, got {type(ids).__name__}")
    if ids.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {ids.shape}")
    if ids.dtype not in _ID_DTYPES:
        raise ValueError(f"{name} must be int64 or int32, got {ids.dtype}")
    return ids


def _out_buffer(out: np.ndarray | None, need: int, name: str = "out") -> np.ndarray:
    """``out`` as a uint64 view with room for ``need`` words (a new array if None)."""
    if out is None:
        return np.empty(need, np.uint64)
    if not isinstance(out, np.ndarray) or out.ndim != 1 or out.dtype != np.int64:
        raise ValueError(f"{name} must be a 1-D int64 array")
    if out.shape[0] < need:
        raise ValueError(f"{name} has {out.shape[0]} words; the message may need {need} "
                         "(see max_encoded_words)")
    if not out.flags.c_contiguous:
        raise ValueError(f"{name} must be contiguous")
    return out.view(np.uint64)


def _raise(code: int, what: str) -> None:
    if code == _ERR_UNSORTED:
        raise ValueError(f"{what} must be strictly increasing (sorted and unique)")
    if code == _ERR_NEGATIVE:
        raise ValueError(f"{what} must be non-negative")
    if code == _ERR_PARENT:
        raise ValueError("parents must be non-negative")
    if code == _ERR_TRUNCATED:
        raise ValueError(f"{what} is truncated: shorter than its header says")
    if code == _ERR_CORRUPT:
        raise ValueError(f"{what} is corrupt (a bit width above 63 or a bit outside the bitmap)")
    raise ValueError(f"{what}: codec error {code}")


def _header(msg: Any, name: str = "msg") -> tuple[np.ndarray, int, int]:
    """``(msg as uint64, kind, n)``; ValueError for anything that is not a message."""
    if not isinstance(msg, np.ndarray) or msg.ndim != 1 or msg.dtype != np.int64:
        raise ValueError(f"{name} must be a 1-D int64 array (an encoded message)")
    if msg.shape[0] == 0:
        raise ValueError(f"{name} is empty: a message has at least its header word")
    h = int(msg[0])
    kind = h & 0xFF
    if kind not in _KINDS or h < 0:
        raise ValueError(f"{name} is not an encoded message (header {h:#x})")
    n = h >> 8
    # Every 1024 ids or pairs take at least a word of widths: a larger count is
    # a corrupt header (and must not size an allocation).
    if kind in (KIND_IDS, KIND_PAIRS) and n > 1024 * msg.shape[0]:
        raise ValueError(f"{name} is corrupt: its header claims {n} entries in "
                         f"{msg.shape[0]} words")
    return msg.view(np.uint64), kind, n


def message_kind(msg: np.ndarray) -> str:
    """``"ids"``, ``"pairs"`` or ``"bitmap"``: what the message ``msg`` holds."""
    return _KINDS[_header(msg)[1]]


def decoded_length(msg: np.ndarray) -> int:
    """Decoded size of ``msg``: ids or pairs, or bitmap words."""
    return _header(msg)[2]


def max_encoded_words(n: int, kind: str = "ids") -> int:
    """Worst-case message length in words (to size receive buffers).

    Parameters
    ----------
    n : int
        Ids (``kind="ids"``), pairs (``"pairs"``) or bitmap words (``"bitmap"``).
    kind : {"ids", "pairs", "bitmap"}

    Returns
    -------
    int
        At most ``n + 4`` for ids, ``2 n + 5 + n // 128`` for pairs, ``n + 1``
        for a bitmap of ``n`` words.
    """
    n = int(n)
    if n < 0:
        raise ValueError(f"n must be non-negative, got {n}")
    if kind == "bitmap":
        return n + 1
    if n == 0:
        return 1
    nb_ = -(-n // BLOCK)
    full, rest = divmod(n, BLOCK)
    # gaps below 2**63: at most 63 bits each
    packed = full * 2 * 63 + -(-rest * 63 // 64)
    if kind == "ids":
        return 2 + -(-nb_ // 8) + packed
    if kind == "pairs":
        return 2 + -(-2 * nb_ // 8) + nb_ + 2 * packed
    raise ValueError(f"kind must be 'ids', 'pairs' or 'bitmap', got {kind!r}")


def estimate_ids_words(n: int, span: int) -> int:
    """Predicted size in words of the ids message of ``n`` sorted ids spread over ``[0, span)``.

    The model: each position of the span holds an id independently with
    probability ``n / span`` (a frontier of a graph with randomly labelled
    vertices); the expected width of a block follows from the distribution of
    its largest gap. Cheap (a few dozen floating-point operations).
    """
    n = int(n)
    span = int(span)
    if n < 0 or span < 0:
        raise ValueError(f"n and span must be non-negative, got n={n}, span={span}")
    if n == 0:
        return 1
    if span < n:
        raise ValueError(f"span ({span}) must be at least n ({n}): ids are unique")
    p = n / span
    nblocks = -(-n // BLOCK)
    full, rest = divmod(n, BLOCK)
    words = 2.0 + -(-nblocks // 8)
    # The first block has one gap fewer (the first id sits in the header); a
    # partial block's last word is half empty on average.
    first = min(n, BLOCK)
    bits = first * _expected_width(p, first - 1) if first > 1 else 0.0
    words += bits / 64 + (0.5 if first < BLOCK and bits else 0.0)
    words += 2 * max(full - 1, 0) * _expected_width(p, BLOCK)
    if full and rest:
        words += rest * _expected_width(p, rest) / 64 + 0.5
    return round(words)


def encode_ids(ids: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Encode sorted, unique, non-negative ids as a message (1-D int64).

    Parameters
    ----------
    ids : numpy.ndarray
        int64 or int32, strictly increasing, non-negative; read as they are
        (no conversion pass).
    out : numpy.ndarray, optional
        An int64 buffer; ``max_encoded_words(len(ids))`` words always suffice,
        fewer are fine when the message fits (else ValueError).

    Returns
    -------
    numpy.ndarray
        The message: a view of ``out`` (or a new array) of its exact length.

    Raises
    ------
    ValueError
        ``ids`` of another dtype or shape, not strictly increasing, or negative;
        ``out`` too small.
    """
    ids = _check_ids(ids, "ids")
    # The kernel checks the room it has, so a buffer under the worst case is
    # fine as long as this message fits.
    buf = _out_buffer(out, 1) if out is not None else np.empty(
        max_encoded_words(ids.shape[0]), np.uint64)
    end = _encode_ids(ids, buf, 0, buf.shape[0])
    if end < 0:
        if end == _ERR_FULL:
            raise ValueError(f"out has {buf.shape[0]} words, too few for this message "
                             f"(max_encoded_words({ids.shape[0]}) is always enough)")
        _raise(end, "ids")
    return buf[:end].view(np.int64)


def decode_ids(msg: np.ndarray, out: np.ndarray | None = None, offset: int = 0) -> np.ndarray:
    """Decode an ids message; ``offset`` is added to every id while decoding.

    Parameters
    ----------
    msg : numpy.ndarray
        A message from :func:`encode_ids` (trailing words are ignored).
    out : numpy.ndarray, optional
        int64 buffer of at least :func:`decoded_length` entries.
    offset : int
        Added to each id (piece-local to chunk-local ids at no extra pass).

    Returns
    -------
    numpy.ndarray
        int64 ids, a view of ``out`` of the decoded length.
    """
    u, kind, n = _header(msg)
    if kind != KIND_IDS:
        raise ValueError(f"msg holds {_KINDS[kind]}, not ids")
    if out is None:
        out = np.empty(n, np.int64)
    elif not isinstance(out, np.ndarray) or out.ndim != 1 or out.dtype != np.int64:
        raise ValueError("out must be a 1-D int64 array")
    elif out.shape[0] < n:
        raise ValueError(f"out has {out.shape[0]} entries; the message holds {n} ids")
    end = _decode_ids(u, 0, out, np.int64(offset))
    if end < 0:
        _raise(end, "msg")
    return out[:n]


def encode_pairs(children: np.ndarray, parents: np.ndarray,
                 out: np.ndarray | None = None) -> np.ndarray:
    """Encode ``(child, parent)`` pairs; children strictly ascending, parents non-negative.

    Children are gap coded like ids, parents packed against their block's
    minimum. A fold's pairs in discovery order must be sorted by child first
    (each child occurs once in a fold message).

    Parameters
    ----------
    children, parents : numpy.ndarray
        int64 or int32, the same length (strided views are fine).
    out : numpy.ndarray, optional
        int64 buffer of at least ``max_encoded_words(n, "pairs")`` words.

    Returns
    -------
    numpy.ndarray
        The message, a view of ``out`` (or a new array) of its exact length.
    """
    children = _check_ids(children, "children")
    parents = _check_ids(parents, "parents")
    if children.shape[0] != parents.shape[0]:
        raise ValueError(f"children and parents differ in length "
                         f"({children.shape[0]} and {parents.shape[0]})")
    buf = _out_buffer(out, max_encoded_words(children.shape[0], "pairs"))
    end = _encode_pairs(children, parents, buf)
    if end < 0:
        _raise(end, "children")
    return buf[:end].view(np.int64)


def _pair_out(arr: np.ndarray | None, n: int, name: str) -> np.ndarray:
    if arr is None:
        return np.empty(n, np.int64)
    if not isinstance(arr, np.ndarray) or arr.ndim != 1 or arr.dtype != np.int64:
        raise ValueError(f"{name} must be a 1-D int64 array")
    if arr.shape[0] < n:
        raise ValueError(f"{name} has {arr.shape[0]} entries; the message holds {n} pairs")
    return arr


def decode_pairs(msg: np.ndarray, children_out: np.ndarray | None = None,
                 parents_out: np.ndarray | None = None,
                 offset: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Decode a pairs message into ``(children + offset, parents)`` (int64 views)."""
    u, kind, n = _header(msg)
    if kind != KIND_PAIRS:
        raise ValueError(f"msg holds {_KINDS[kind]}, not pairs")
    c = _pair_out(children_out, n, "children_out")
    p = _pair_out(parents_out, n, "parents_out")
    end = _decode_pairs(u, c, p, np.int64(offset))
    if end < 0:
        _raise(end, "msg")
    return c[:n], p[:n]


def encode_bitmap(words: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Encode a bitmap (uint64 words): the set bits gap coded where sparse, else as is.

    Parameters
    ----------
    words : numpy.ndarray
        1-D uint64.
    out : numpy.ndarray, optional
        int64 buffer of at least ``len(words) + 1`` words.

    Returns
    -------
    numpy.ndarray
        The message (at most ``len(words) + 1`` words), a view of ``out`` or new.
    """
    if not isinstance(words, np.ndarray) or words.ndim != 1 or words.dtype != np.uint64:
        raise ValueError("words must be a 1-D uint64 array")
    bw = words.shape[0]
    buf = _out_buffer(out, bw + 1)
    count = _popcount_words(words)
    dense = bw + 1
    if count < bw * 16:  # beyond a quarter of the bits the sparse form never wins
        guess = 1 + estimate_ids_words(count, max(64 * bw, 1))
        if guess < _SPARSE_SHARE * dense:
            end = _encode_bitmap_sparse(words, count, buf, dense - 1)
            if end >= 0:
                return buf[:end].view(np.int64)
    buf[0] = (np.uint64(bw) << np.uint64(8)) | np.uint64(KIND_BITMAP_DENSE)
    buf[1:dense] = words
    return buf[:dense].view(np.int64)


def decode_bitmap(msg: np.ndarray, out_words: np.ndarray) -> None:
    """Decode a bitmap message into ``out_words`` (uint64, at least the encoded length).

    Words ``0 .. bw-1`` of ``out_words`` are overwritten, the rest left alone.
    """
    u, kind, bw = _header(msg)
    if kind not in (KIND_BITMAP_DENSE, KIND_BITMAP_SPARSE):
        raise ValueError(f"msg holds {_KINDS[kind]}, not a bitmap")
    if (not isinstance(out_words, np.ndarray) or out_words.ndim != 1
            or out_words.dtype != np.uint64):
        raise ValueError("out_words must be a 1-D uint64 array")
    if out_words.shape[0] < bw:
        raise ValueError(f"out_words has {out_words.shape[0]} words; the bitmap has {bw}")
    if kind == KIND_BITMAP_DENSE:
        if u.shape[0] < bw + 1:
            raise ValueError("msg is truncated: shorter than its header says")
        out_words[:bw] = u[1:bw + 1]
        return
    if u.shape[0] < 2 or (int(u[1]) & 0xFF) != KIND_IDS:
        raise ValueError("msg is corrupt: a sparse bitmap without its ids")
    end = _decode_bitmap_sparse(u, out_words[:bw])
    if end < 0:
        _raise(end, "msg")


def calibrate(seconds: float = 0.2) -> dict[str, float]:
    """Measured codec throughput on synthetic frontier pieces, for the cost model.

    Encodes and decodes random sorted id sets (64 Ki ids at densities 1/2,
    1/16 and 1/256 of their span) for about ``seconds`` in all.

    Returns
    -------
    dict
        ``encode_bytes_per_s`` and ``decode_bytes_per_s`` (bytes of int64 input
        ids per second), ``words_per_id`` (mean compressed size), and
        ``bitmap_encode_bytes_per_s`` (bytes of bitmap per second).
    """
    if not seconds > 0:
        raise ValueError(f"seconds must be positive, got {seconds}")
    rng = np.random.default_rng(12345)
    n = 1 << 16
    sets = [np.sort(rng.choice(n * d, n, replace=False)).astype(np.int64) for d in (2, 16, 256)]
    bufs = np.empty(max_encoded_words(n), np.int64)
    dec = np.empty(n, np.int64)
    msgs = [encode_ids(s).copy() for s in sets]  # also compiles
    decode_ids(msgs[0], dec)
    bits = np.zeros((n * 16) // 64, np.uint64)
    np.bitwise_or.at(bits, sets[1] >> 6, np.uint64(1) << (sets[1] & 63).astype(np.uint64))
    bmout = np.empty(bits.shape[0] + 1, np.int64)
    encode_bitmap(bits, bmout)
    share = seconds / 3

    def rate(fn: Any, nbytes: int) -> float:
        reps = 0
        t0 = time.perf_counter()
        while True:
            fn()
            reps += 1
            el = time.perf_counter() - t0
            if el >= share:
                return reps * nbytes / el

    enc = rate(lambda: [encode_ids(s, bufs) for s in sets], 3 * 8 * n)
    de = rate(lambda: [decode_ids(m, dec) for m in msgs], 3 * 8 * n)
    bm = rate(lambda: encode_bitmap(bits, bmout), bits.nbytes)
    return {"encode_bytes_per_s": enc, "decode_bytes_per_s": de,
            "words_per_id": sum(m.shape[0] for m in msgs) / (3 * n),
            "bitmap_encode_bytes_per_s": bm}
