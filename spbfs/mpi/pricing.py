"""What a message costs: encoded sizes, codec seconds and the price of a phase's rounds.

The pieces shared by the cost model (:mod:`spbfs.mpi.costmodel`, which
prices a phase for every pattern and encoding) and by the exchange patterns,
each of which prices its own rounds (``gather_cost``/``alltoall_cost`` of the
pattern objects named in :mod:`spbfs.patterns`). Pure arithmetic, no MPI.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

from spbfs import patterns

__all__ = ["RING_BYTES", "CodecSpeed", "Estimate", "MessageSizes", "codec_seconds",
           "encoded_bytes", "log_rounds", "priced"]

# MPICH's ALLGATHER_LONG_MSG_SIZE: recursive doubling / Bruck below, ring from here on.
RING_BYTES = 512 * 1024


@dataclass(frozen=True)
class CodecSpeed:
    """How fast this machine encodes and decodes, and a message's host cost.

    Parameters
    ----------
    encode_Bps, decode_Bps : float
        The compressed codec's speed in *uncompressed* bytes (8 per id, 16 per
        pair) per second. Defaults: a numba delta + FOR bit-packing prototype on
        the development machine, one thread (see docs/benchmarks.md, "The cost
        model against counters"); :meth:`coerce` takes a real calibration's
        ``{"encode_Bps": ..., "decode_Bps": ...}``.
    scan_Bps : float
        A pass over a bitmap (building one, reading its ids), bitmap bytes per second.
    message_s : float
        Host seconds per message (posting and completing it from Python).
    """

    encode_Bps: float = 3.9e9
    decode_Bps: float = 7.9e9
    scan_Bps: float = 10e9
    message_s: float = 2e-6

    def __post_init__(self) -> None:
        for name in ("encode_Bps", "decode_Bps", "scan_Bps"):
            v = getattr(self, name)
            if not (isinstance(v, int | float) and v > 0 and math.isfinite(v)):
                raise ValueError(f"CodecSpeed {name} must be a finite number > 0, got {v!r}")
        if not (isinstance(self.message_s, int | float) and 0 <= self.message_s < math.inf):
            raise ValueError(f"CodecSpeed message_s must be a finite number >= 0, "
                             f"got {self.message_s!r}")

    @classmethod
    def coerce(cls, codec: CodecSpeed | dict[str, float] | None) -> CodecSpeed:
        """A CodecSpeed from itself, None (the defaults) or a dict of some of its fields.

        Raises
        ------
        ValueError
            For a dict key that is not a field, or a bad value.
        """
        if codec is None:
            return _DEFAULT_CODEC
        if isinstance(codec, cls):
            return codec
        if isinstance(codec, dict):
            known = {"encode_Bps", "decode_Bps", "scan_Bps", "message_s"}
            bad = sorted(set(codec) - known)
            if bad:
                raise ValueError(f"codec has unknown keys {bad}; known: {sorted(known)}")
            return cls(**{k: float(v) for k, v in codec.items()})
        raise ValueError(f"codec must be a CodecSpeed, a dict or None, got {type(codec).__name__}")


_DEFAULT_CODEC = CodecSpeed()


class Estimate(NamedTuple):
    """The model's price of one phase for the busiest rank of its group.

    Attributes
    ----------
    seconds : float
        Wire + codec + host time.
    messages : int
        Messages the rank sends (counts exchanges included).
    bytes : float
        Bytes it sends, as encoded.
    rounds : int
        Steps one after another (latency paid in each).
    wire_s, codec_s : float
        The link's and the codec's parts of ``seconds``.
    staging_s : float
        The host-device crossings' part (a local engine on a device whose
        messages go through host memory; 0 otherwise).
    """

    seconds: float
    messages: int
    bytes: float
    rounds: int
    wire_s: float
    codec_s: float
    staging_s: float = 0.0


class MessageSizes(NamedTuple):
    """One encoding's message sizes and codec seconds for a phase (shared by the patterns)."""

    s_max: float  # bytes of the busiest rank's message (gathers, rotate) or per partner (pairs)
    s_avg: float  # bytes of an average piece (gathers)
    s_recv: float  # bytes of one message to the busiest receiver
    codec_s: float  # encode what it sends once, decode what it receives


def encoded_bytes(encoding: str, n: float, span: int, *, pairs: bool = False,
                  parent_span: int | None = None) -> float:
    """Bytes of one message of ``n`` ids (or pairs) over ``span`` local ids.

    The registered encoding's own size (``nbytes`` of its object, see
    :mod:`spbfs.mpi.encodings`); no message is sent for nothing, except by an
    encoding of a fixed length (a bitmap).

    Parameters
    ----------
    encoding : str
        A name of :data:`spbfs.patterns.ENCODINGS`.
    n : float
        Ids, set bits or pairs in the message (an average may be fractional).
    span : int
        The ids' range (the padded piece length ``B``).
    pairs : bool
        ``(child, parent)`` pairs rather than ids.
    parent_span : int, optional
        The parents' range (default ``span``).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        For an encoding that is not registered.
    """
    enc = patterns.encoding(encoding)
    if n <= 0 and not enc.bitmap_sized:
        return 0.0
    return float(enc.nbytes(n, span, pairs, parent_span or span))


def codec_seconds(encoding: str, n: float, span: int, pairs: bool, codec: CodecSpeed,
                  encode: bool) -> float:
    """CPU seconds to encode (or decode) one message of ``n`` ids (the encoding's own)."""
    return float(patterns.encoding(encoding).seconds(n, span, pairs, codec, encode))


# --------------------------------------------------------------------------- one phase


def log_rounds(q: int, f: int) -> int:
    r, k = 0, 1
    while k < q:
        k *= f
        r += 1
    return r


def priced(wire: float, codec_s: float, msgs: int, sent: float, rounds: int,
            codec: CodecSpeed) -> Estimate:
    return Estimate(wire + codec_s + msgs * codec.message_s, msgs, sent, rounds, wire, codec_s)
