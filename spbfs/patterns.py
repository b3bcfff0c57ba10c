"""The grid's exchange patterns and message encodings: the one registry of their names.

:class:`~spbfs.Config` validates ``exchange`` and ``frontier_encoding`` against
it (reading it when it checks), the command line offers its names as choices, the cost model
(:mod:`spbfs.mpi.costmodel`) prices every pattern and encoding listed here,
the planner picks among them and :class:`spbfs.mpi.exchange.Exchange` runs
each pattern. The module holds names and one-line descriptions only (no MPI,
no numpy), so that the configuration below everything else can read it
without importing the grid.

A new pattern is one entry here and one module: an object with the four
methods of :class:`ExchangePattern` (how it moves an allgather and a
personalized all-to-all, and what each costs), named by ``module:attribute``
in :data:`PATTERN_CODE`. :class:`~spbfs.mpi.exchange.Exchange` and the cost
model find it through :func:`implementation`; ``tests/test_patterns.py``
fails while a registered name lacks its object or one of its methods.

A new message encoding is the same: one object with the attributes and
methods of :class:`spbfs.mpi.encodings.MessageEncoding` (how it encodes and
decodes a frontier, pairs and a bitmap, its size and CPU time), named here in
:data:`ENCODING_HELP` and :data:`ENCODING_CODE`. The registry is read-only: an
encoding is added by its line here, not at run time (no process-wide state that
ranks could disagree on). The readers (``Config``, the command line, the cost
model, the BFS's phases) look the registry up when they check or price a name,
never from a copy made at import, so a test can put an encoding of its own in
for its duration.
"""

from __future__ import annotations

import importlib
from types import MappingProxyType
from typing import Any, Protocol

__all__ = ["AUTO_ENCODINGS", "ENCODINGS", "ENCODING_CODE", "ENCODING_HELP", "PATTERNS",
           "PATTERN_CODE", "PATTERN_HELP", "ExchangePattern", "encoding", "implementation"]

#: Exchange pattern -> what it does (the ``exchange`` setting, ``auto`` besides).
PATTERN_HELP = MappingProxyType({
    "p2p": "posted point-to-point messages, one to each partner in one round",
    "collective": "MPI's Allgatherv / Alltoallv after the lengths",
    "butterfly": "Green's butterfly: ceil(log_f q) rounds of f - 1 messages",
})
#: Exchange pattern -> ``module:attribute`` of its :class:`ExchangePattern` object.
PATTERN_CODE = MappingProxyType({
    "p2p": "spbfs.mpi.p2p:POINT_TO_POINT",
    "collective": "spbfs.mpi.collective:COLLECTIVE",
    "butterfly": "spbfs.mpi.butterfly:BUTTERFLY",
})
#: Message encoding -> what it sends (the ``frontier_encoding`` setting, ``auto`` besides).
ENCODING_HELP = MappingProxyType({
    "list": "sorted ids, 64 bits each",
    "bitmap": "one bit per vertex of the range",
    "compressed": "ids delta and frame-of-reference bit-packed in blocks",
})
#: Message encoding -> ``module:attribute`` of its ``MessageEncoding`` object.
ENCODING_CODE = MappingProxyType({
    "list": "spbfs.mpi.encodings:LIST",
    "bitmap": "spbfs.mpi.encodings:BITMAP",
    "compressed": "spbfs.mpi.encodings:COMPRESSED",
})
#: The encodings ``frontier_encoding="auto"`` picks among, message by message:
#: their messages tell themselves apart (a bitmap's length, a compressed
#: message's negative first word), which a registered one's need not.
AUTO_ENCODINGS: tuple[str, ...] = ("list", "bitmap", "compressed")
#: The exchange patterns, in the order the docs list them.
PATTERNS: tuple[str, ...] = tuple(PATTERN_HELP)
#: The message encodings, in the order the docs list them.
ENCODINGS: tuple[str, ...] = tuple(ENCODING_HELP)


class ExchangePattern(Protocol):
    """How one pattern moves a phase's messages inside a group of ``q`` ranks, and its price.

    ``ex`` is the group's :class:`~spbfs.mpi.exchange.Exchange` (communicator,
    rank, receive buffers, tag); both moves return the received messages by
    source rank and the (messages, 64-bit words) this rank sent. The prices take
    the group size, the encoding, the busiest rank's load, the piece span, the
    link's latency and bandwidth, the butterfly fanout, the parents' span, the
    codec speeds and the encoding's message sizes
    (:class:`spbfs.mpi.pricing.MessageSizes`), and return a
    :class:`spbfs.mpi.pricing.Estimate` for the busiest rank.
    """

    def allgather(self, ex: Any, msg: Any, maxlen: int | None) -> tuple[list[Any], int, int]:
        """Every rank's ``msg`` by rank (the expand and the bottom-up gather)."""
        ...

    def alltoall(self, ex: Any, sends: list[Any], maxlen: int | None) -> tuple[list[Any], int, int]:
        """What every rank sent here, by rank (the fold and the bottom-up updates)."""
        ...

    def gather_cost(self, q: int, enc: str, mx: float, span: int, lat: float, bw: float,
                    f: int, psp: int, codec: Any, z: Any) -> Any:
        """The price of an allgather."""
        ...

    def alltoall_cost(self, q: int, enc: str, mx: float, span: int, lat: float, bw: float,
                      f: int, psp: int, codec: Any, z: Any) -> Any:
        """The price of a personalized all-to-all."""
        ...


def implementation(pattern: str) -> ExchangePattern:
    """The object that runs and prices ``pattern`` (its module is imported on first use).

    Raises
    ------
    ValueError
        For a name that is not registered.
    """
    return _load(PATTERN_CODE, pattern, "exchange pattern must be one of {}; got {!r}",
                 PATTERNS)  # type: ignore[no-any-return]


def encoding(name: str) -> Any:
    """The ``MessageEncoding`` object of encoding ``name``; as :func:`implementation` otherwise."""
    return _load(ENCODING_CODE, name, "encoding must be one of {}, got {!r}", ENCODINGS)


def _load(codes: Any, name: str, bad: str, names: tuple[str, ...]) -> Any:
    """The object ``codes[name]`` names as ``module:attribute``; ``bad`` for a stranger."""
    code = codes.get(name)
    if code is None:
        raise ValueError(bad.format(names, name))
    module, _, attr = code.partition(":")
    return getattr(importlib.import_module(module), attr)
