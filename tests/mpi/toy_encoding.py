"""A message encoding from outside the package: a list of ids and a checksum word.

The proof that a new encoding is one object and one registry entry
(:func:`install` adds the entry to :mod:`spbfs.patterns` for the process, as a
line there would): the BFS's phases, ``Config``, the command line and the cost
model take it with no other change. Its frontier
message is the sorted ids followed by their sum; the receiver checks the sum
(a message cut short or mixed up fails loudly). It has no pair form (pairs
travel as a list) and no bitmap form. ``decoded`` counts the messages it
checked, so a test can tell it really ran.
"""

from __future__ import annotations

from typing import Any

import numpy as np

NAME = "checked"
HELP = "sorted ids and their sum, checked on receipt"
CODE = "toy_encoding:CHECKED"


class ChecksumList:
    """Sorted ids (64 bits each) and one more word: their sum."""

    name = NAME
    bitmap_sized = False
    pairs = False

    def __init__(self) -> None:
        self.decoded = 0

    def encode(self, ph: Any, ids: np.ndarray) -> np.ndarray:
        msg = np.empty(ids.shape[0] + 1, np.int64)
        msg[:-1] = ids
        msg[-1] = int(ids.sum())
        return msg

    def decode(self, ph: Any, msg: np.ndarray, slot: int) -> tuple[np.ndarray, bool]:
        if msg.shape[0] < 1 or int(msg[:-1].sum()) != int(msg[-1]):
            raise ValueError(f"checked message of {msg.shape[0]} words fails its checksum")
        self.decoded += 1
        return msg[:-1], False

    def encode_pairs(self, ph: Any, pairs: np.ndarray) -> np.ndarray:
        return pairs

    def decode_pairs(self, ph: Any, msg: np.ndarray | None) -> np.ndarray | None:
        return msg

    def nbytes(self, n: float, span: int, pairs: bool, parent_span: int) -> float:
        return 16.0 * n if pairs else 8.0 * (n + 1)

    def seconds(self, n: float, span: int, pairs: bool, codec: Any, encode: bool) -> float:
        return 0.0 if pairs else 8.0 * n / codec.scan_Bps  # one pass to sum


CHECKED = ChecksumList()


def install() -> None:
    """Put this encoding into the registry of :mod:`spbfs.patterns` for this process.

    The registry's mappings are replaced, not changed in place (they are
    read-only); a test that must restore them saves the three names first.
    """
    from types import MappingProxyType

    from spbfs import patterns

    if NAME in patterns.ENCODING_CODE:
        return
    patterns.ENCODING_HELP = MappingProxyType({**patterns.ENCODING_HELP, NAME: HELP})
    patterns.ENCODING_CODE = MappingProxyType({**patterns.ENCODING_CODE, NAME: CODE})
    patterns.ENCODINGS = tuple(patterns.ENCODING_HELP)
