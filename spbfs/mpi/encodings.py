"""The grid's message encodings: each one object, written once.

An encoding says how the BFS's frontier messages (a piece's ids, or its
bitmap where the encoding has a bitmap form) and its ``(child, parent)`` pair
messages travel, and what that costs: its encoded size and its CPU time,
which the cost model (:mod:`spbfs.mpi.pricing`, :mod:`spbfs.mpi.costmodel`)
charges. :class:`~spbfs.mpi.spmsv.FrontierPhases` holds the object of the
search's ``frontier_encoding`` (or :data:`AUTO`, which picks one of the
built-in three per message) and calls it; it has no branch per encoding.

A new encoding is one object with the attributes and methods of
:class:`MessageEncoding` and one entry in :mod:`spbfs.patterns` (a line of
``ENCODING_HELP`` and of ``ENCODING_CODE``).

The encoders take the phase object ``ph`` (the rank's
:class:`~spbfs.mpi.spmsv.FrontierPhases`) as their context: its piece length
``B``, bitmap length ``bw``, the newest frontier's bitmap
(``ph.newest_bitmap()``), its ``wire`` (:class:`~spbfs.mpi.staging.Staging`)
and the decode and sort scratch it keeps per graph.

Where the arrays are: a frontier piece handed to :meth:`~MessageEncoding.encode`
and the pairs handed to ``encode_pairs`` are the local engine's (device arrays
for a GPU engine), and so are the messages ``encode`` returns; ``decode`` and
``decode_pairs`` read messages as MPI received them (device memory where the
library is CUDA-aware) and may return host arrays, which the phases move to the
engine (``ph.wire.recv``). ``list`` and ``bitmap`` are array operations on either
side; ``compressed`` (the codec's numba kernels) works on the host only, and
on a device engine moves its input down and its output up through
``ph.wire`` (:meth:`~spbfs.mpi.staging.Staging.host`): a host fallback for that
encoding alone. :data:`DEVICE_AUTO` is auto's choice on a device, among
``list`` and ``bitmap``, so the default encoding never leaves the device.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from spbfs.mpi import _kernels as K
from spbfs.mpi import codec

if TYPE_CHECKING:
    from spbfs.mpi.pricing import CodecSpeed

__all__ = ["AUTO", "BITMAP", "COMPRESSED", "DEVICE_AUTO", "LIST", "AutoEncoding",
           "DeviceAutoEncoding", "MessageEncoding"]

#: Framing of compressed messages: a first word ``-(2 L + kind) - 1`` (negative, so
#: never a list's first id) before the codec's ``L`` words.
_COMPRESSED_IDS, _COMPRESSED_BITMAP = 0, 1
# The compressed size model (bytes): ids per bit-packed block, a block's header
# (first value, width, count), a message's header (kind and length).
_BLOCK = 128
_BLOCK_HEADER = 16
_MSG_HEADER = 8
_LN_BLOCK = math.log(_BLOCK)


class MessageEncoding(Protocol):
    """What one encoding does to the BFS's messages, and its price.

    Attributes
    ----------
    name : str
        Its name in :mod:`spbfs.patterns` (the ``frontier_encoding`` setting).
    bitmap_sized : bool
        Its frontier messages are never longer than a bitmap of the piece
        (``bw`` words): receivers post buffers of that length, kept per source.
    pairs : bool
        It encodes pair messages (else they travel as plain interleaved pairs
        and :meth:`encode_pairs`/:meth:`decode_pairs` are never called).
    """

    name: str
    bitmap_sized: bool
    pairs: bool

    def encode(self, ph: Any, ids: np.ndarray) -> np.ndarray:
        """The frontier piece ``ids`` (sorted, piece-local) as an int64 message."""
        ...

    def decode(self, ph: Any, msg: np.ndarray, slot: int) -> tuple[np.ndarray, bool]:
        """A received message as (ids, or bitmap words as int64; whether a bitmap).

        ``slot``: the piece's place in the chunk (for decode buffers kept per piece).
        """
        ...

    def encode_pairs(self, ph: Any, pairs: np.ndarray) -> np.ndarray:
        """Interleaved ``(child, parent)`` pairs (non-empty) as a message."""
        ...

    def decode_pairs(self, ph: Any, msg: np.ndarray | None) -> np.ndarray | None:
        """A received pair message as interleaved pairs (None and empty as they are)."""
        ...

    def nbytes(self, n: float, span: int, pairs: bool, parent_span: int) -> float:
        """Bytes of one message of ``n`` ids (or pairs) over ``span`` local ids (``n > 0``)."""
        ...

    def seconds(self, n: float, span: int, pairs: bool, codec: CodecSpeed,
                encode: bool) -> float:
        """CPU seconds to encode (or decode) one message of ``n`` ids or pairs."""
        ...


class _Plain:
    """Pairs travel as they are (the encodings without a pair form)."""

    pairs = False

    def encode_pairs(self, ph: Any, pairs: np.ndarray) -> np.ndarray:
        return pairs

    def decode_pairs(self, ph: Any, msg: np.ndarray | None) -> np.ndarray | None:
        return msg


class ListEncoding(_Plain):
    """Sorted ids, 64 bits each; pairs 16 bytes. No codec time."""

    name = "list"
    bitmap_sized = False

    def encode(self, ph: Any, ids: np.ndarray) -> np.ndarray:
        return ids.astype(np.int64, copy=False)

    def decode(self, ph: Any, msg: np.ndarray, slot: int) -> tuple[np.ndarray, bool]:
        return msg, False

    def nbytes(self, n: float, span: int, pairs: bool, parent_span: int) -> float:
        return 16.0 * n if pairs else 8.0 * n

    def seconds(self, n: float, span: int, pairs: bool, codec: CodecSpeed,
                encode: bool) -> float:
        return 0.0


class BitmapEncoding(_Plain):
    """One bit per vertex of the piece (Bisson, Bernaschi and Mastrostefano, Section 5).

    Pairs have no bitmap form here and travel as a list; the model prices them
    as the children's bitmap plus the parents, 8 bytes each, in child order.
    """

    name = "bitmap"
    bitmap_sized = True

    def encode(self, ph: Any, ids: np.ndarray) -> np.ndarray:
        return ph.newest_bitmap()  # type: ignore[no-any-return]

    def decode(self, ph: Any, msg: np.ndarray, slot: int) -> tuple[np.ndarray, bool]:
        return msg, True

    def nbytes(self, n: float, span: int, pairs: bool, parent_span: int) -> float:
        bitmap = 8 * math.ceil(span / 64)
        return bitmap + 8.0 * n if pairs else float(bitmap)

    def seconds(self, n: float, span: int, pairs: bool, codec: CodecSpeed,
                encode: bool) -> float:
        return (span / 8 + (16.0 if pairs else 8.0) * n) / codec.scan_Bps


def _packed(k: float, span: float) -> float:
    """Bytes of ``k`` sorted ids over ``span``, delta + FOR in blocks (headers included)."""
    if k <= 0:
        return 0.0
    w = min(64, max(1, math.ceil(math.log2(max(span / k, 1.0) * _LN_BLOCK))))
    return math.ceil(k / _BLOCK) * _BLOCK_HEADER + math.ceil(k * w / 8)


class CompressedEncoding:
    """Ids delta and frame-of-reference bit-packed in blocks (:mod:`spbfs.mpi.codec`).

    A piece with at least ``bw`` ids sends its bitmap through the codec
    instead (which sends the clear bits of a dense one); pairs are sorted by
    child and both columns packed. A message is framed by a negative first
    word (see ``_COMPRESSED_IDS``), so a plain list (the own piece, an empty
    message) reads as itself.
    """

    name = "compressed"
    bitmap_sized = False
    pairs = True

    def encode(self, ph: Any, ids: np.ndarray) -> np.ndarray:
        n = ids.shape[0]
        if n >= ph.bw:
            bits = ph.wire.host(ph.newest_bitmap()).view(np.uint64)
            return _framed(ph.bw, _COMPRESSED_BITMAP, codec.max_encoded_words(ph.bw, "bitmap"),
                           lambda out: codec.encode_bitmap(bits, out))
        ids = ph.wire.host(ids)
        return _framed(ph.bw, _COMPRESSED_IDS, codec.max_encoded_words(n),
                       lambda out: codec.encode_ids(ids, out))

    def decode(self, ph: Any, msg: np.ndarray, slot: int) -> tuple[np.ndarray, bool]:
        msg = ph.wire.host(msg)
        if msg.shape[0] == 0 or msg[0] >= 0:
            return msg, False
        code = -int(msg[0]) - 1
        payload = msg[1:1 + code // 2]
        if not ph.dec_ids:
            q = max(ph.grid.pr, ph.grid.pc)
            ph.dec_ids = [np.empty(ph.B, np.int64) for _ in range(q)]
            ph.dec_bits = [np.empty(ph.bw, np.uint64) for _ in range(q)]
        if code % 2 == _COMPRESSED_BITMAP:
            bits = ph.dec_bits[slot]
            codec.decode_bitmap(payload, bits)
            return bits.view(np.int64), True
        return codec.decode_ids(payload, out=ph.dec_ids[slot]), False

    def encode_pairs(self, ph: Any, pairs: np.ndarray) -> np.ndarray:
        # Sorted by child through a bitmap (the codec wants sorted children).
        if not ph.sort_bits.shape[0]:
            ph.sort_bits = np.zeros(ph.bw, np.uint64)
            ph.sort_par = np.empty(ph.B, np.int64)
        pairs = ph.wire.host(pairs)
        n = pairs.shape[0] // 2
        children = np.empty(n, np.int64)
        parents = np.empty(n, np.int64)
        n = K.sort_pairs(pairs, ph.sort_bits, ph.sort_par, children, parents)
        children, parents = children[:n], parents[:n]
        return _framed(ph.bw, _COMPRESSED_IDS, codec.max_encoded_words(n, "pairs"),
                       lambda out: codec.encode_pairs(children, parents, out))

    def decode_pairs(self, ph: Any, msg: np.ndarray | None) -> np.ndarray | None:
        if msg is None or msg.shape[0] == 0:
            return msg
        msg = ph.wire.host(msg)
        if msg[0] >= 0:
            return msg
        code = -int(msg[0]) - 1
        children, parents = codec.decode_pairs(msg[1:1 + code // 2])
        out = np.empty(2 * children.shape[0], np.int64)
        out[0::2] = children
        out[1::2] = parents
        return out

    def nbytes(self, n: float, span: int, pairs: bool, parent_span: int) -> float:
        bitmap = 8 * math.ceil(span / 64)
        if pairs:
            pb = max(1, math.ceil(math.log2(max(parent_span, 2))))
            parents = math.ceil(n / _BLOCK) * _BLOCK_HEADER + math.ceil(n * pb / 8)
            return _MSG_HEADER + min(_packed(n, span), bitmap) + parents
        k = min(n, span - n)  # a dense bitmap sends its clear bits
        return _MSG_HEADER + min(_packed(k, span), bitmap)

    def seconds(self, n: float, span: int, pairs: bool, codec: CodecSpeed,
                encode: bool) -> float:
        return (16.0 if pairs else 8.0) * n / (codec.encode_Bps if encode else codec.decode_Bps)


def _framed(bw: int, kind: int, most: int, encode: Any) -> np.ndarray:
    """A compressed message: the framing word, then ``encode(out)``'s words in place."""
    msg = np.empty(most + 2, np.int64)
    L = encode(msg[1:]).shape[0]
    msg[0] = -(2 * L + kind) - 1
    end = L + 1
    if end == bw:  # never exactly bw words long: that length means a plain bitmap
        msg[end] = 0
        end += 1
    return msg[:end]


LIST = ListEncoding()
BITMAP = BitmapEncoding()
COMPRESSED = CompressedEncoding()


class AutoEncoding:
    """``frontier_encoding="auto"``: each message in the built-in encoding the plan picks.

    The three tell their messages apart without a word more: a bitmap is
    exactly ``bw`` words long, a compressed message starts with a negative
    word, a list is anything else (so a list of exactly ``bw`` ids is sent as
    a bitmap). Registered encodings beyond these are not candidates: their
    messages could read as one of these.
    """

    name = "auto"

    def __init__(self) -> None:
        # The plan's choice (a name) to its object: the one lookup per message.
        self.by_name = {e.name: e for e in (LIST, BITMAP, COMPRESSED)}

    def pick(self, ph: Any, n: int, receivers: int) -> MessageEncoding:
        """The encoding of a frontier message of ``n`` ids to ``receivers`` ranks."""
        enc = self.by_name[ph.plan.frontier_encoding(n, receivers)]
        if enc is LIST and n == ph.bw:  # that length reads as a bitmap: send one
            return BITMAP
        return enc

    def pick_pairs(self, ph: Any, npairs: int, receivers: int) -> MessageEncoding:
        """The encoding of a fold's ``npairs`` pairs to ``receivers`` ranks."""
        return self.by_name[ph.plan.pair_encoding(npairs, receivers)]

    def decode(self, ph: Any, msg: np.ndarray, slot: int) -> tuple[np.ndarray, bool]:
        if msg.shape[0] == ph.bw:
            return msg, True
        return COMPRESSED.decode(ph, msg, slot)  # a list passes through it as itself

    def decode_pairs(self, ph: Any, msg: np.ndarray | None) -> np.ndarray | None:
        return COMPRESSED.decode_pairs(ph, msg)


AUTO = AutoEncoding()


class DeviceAutoEncoding(AutoEncoding):
    """``frontier_encoding="auto"`` on a device engine: ``list`` or ``bitmap``, on the device.

    The plan's choice, where it names ``compressed`` (host kernels) the
    shorter of the two others; pairs travel plain. A message is a bitmap
    where it is exactly ``bw`` words long, a list otherwise, so nothing is
    read off a device message to decode it.
    """

    def pick(self, ph: Any, n: int, receivers: int) -> MessageEncoding:
        enc = super().pick(ph, n, receivers)
        if enc is COMPRESSED:
            return LIST if n < ph.bw else BITMAP
        return enc

    def pick_pairs(self, ph: Any, npairs: int, receivers: int) -> MessageEncoding:
        return LIST

    def decode(self, ph: Any, msg: np.ndarray, slot: int) -> tuple[np.ndarray, bool]:
        return msg, msg.shape[0] == ph.bw

    def decode_pairs(self, ph: Any, msg: np.ndarray | None) -> np.ndarray | None:
        return msg


DEVICE_AUTO = DeviceAutoEncoding()
