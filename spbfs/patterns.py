"""The grid's exchange patterns and message encodings: the one registry of their names.

:class:`~spbfs.Config` validates ``exchange`` and ``frontier_encoding`` against
it, the command line offers its names as choices, the cost model
(:mod:`spbfs.mpi.costmodel`) prices every pattern and encoding listed here,
the planner picks among them and :class:`spbfs.mpi.exchange.Exchange` runs
each pattern. The module holds names and one-line descriptions only (no MPI,
no numpy), so that the configuration below everything else can read it
without importing the grid.

A new pattern is an entry here and its code: how it moves an allgather and a
personalized all-to-all (:mod:`spbfs.mpi.exchange`, or a module of its own
as :mod:`spbfs.mpi.butterfly`) and what they cost (:mod:`spbfs.mpi.costmodel`);
``tests/test_patterns.py`` fails until both know every name registered here.
"""

from __future__ import annotations

from types import MappingProxyType

__all__ = ["ENCODINGS", "ENCODING_HELP", "PATTERNS", "PATTERN_HELP"]

#: Exchange pattern -> what it does (the ``exchange`` setting, ``auto`` besides).
PATTERN_HELP = MappingProxyType({
    "p2p": "posted point-to-point messages, one to each partner in one round",
    "collective": "MPI's Allgatherv / Alltoallv after the lengths",
    "butterfly": "Green's butterfly: ceil(log_f q) rounds of f - 1 messages",
})
#: Message encoding -> what it sends (the ``frontier_encoding`` setting, ``auto`` besides).
ENCODING_HELP = MappingProxyType({
    "list": "sorted ids, 64 bits each",
    "bitmap": "one bit per vertex of the range",
    "compressed": "ids delta and frame-of-reference bit-packed in blocks",
})
#: The exchange patterns, in the order the docs list them.
PATTERNS: tuple[str, ...] = tuple(PATTERN_HELP)
#: The message encodings, in the order the docs list them.
ENCODINGS: tuple[str, ...] = tuple(ENCODING_HELP)
