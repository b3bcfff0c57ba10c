"""BFS steps written with whole-array operations, for numpy and cupy alike.

This is the reference path (numpy) and the GPU path (cupy): the same code runs
on both through ``xp``, so the CPU test suite covers the logic the GPU runs.
The top-down step is the masked ``min_second`` SpMSV: gather the frontier's
columns, drop visited rows, keep the first (smallest) parent of each row.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from semirings.blocks import Block


def _expand(xp: Any, block: Block, cols: Any) -> tuple[Any, Any, Any, Any]:
    """Entries of the columns ``cols``: (row ids, owner slot, offsets, start)."""
    start, stop = block.col_ranges(cols)
    lengths = (stop - start).astype(np.int64)
    offsets = xp.zeros(cols.shape[0] + 1, dtype=np.int64)
    xp.cumsum(lengths, out=offsets[1:])
    owner = xp.repeat(xp.arange(cols.shape[0], dtype=np.int64), lengths)
    pos = xp.arange(int(offsets[-1]), dtype=np.int64) - offsets[owner] + start[owner]
    return block.ind[pos], owner, offsets, start


def topdown_step(
    xp: Any, block: Block, frontier: Any, parents: Any, levels: Any, want_levels: bool,
    depth: int, deg: Any,
) -> tuple[Any, int, int]:
    """Expand the sorted ``frontier``; return (next frontier sorted, scanned, degree sum)."""
    rows, owner, _, _ = _expand(xp, block, frontier)
    scanned = int(rows.shape[0])
    fresh = parents[rows] == -1
    rows = rows[fresh]
    owner = owner[fresh]
    # Columns come in increasing frontier order, so a row's first entry carries its min parent.
    new, first = xp.unique(rows, return_index=True)
    new = new.astype(np.int64)
    parents[new] = frontier[owner[first]]
    if want_levels:
        levels[new] = depth
    return new, scanned, int(deg[new].sum())


def bottomup_step(
    xp: Any, block: Block, front: Any, parents: Any, levels: Any, want_levels: bool,
    depth: int, deg: Any,
) -> tuple[Any, int, int]:
    """Bottom-up level over a bool frontier map; return (next map, scanned, degree sum)."""
    cand = xp.flatnonzero(parents == -1)
    nbrs, owner, offsets, _ = _expand(xp, block, cand)
    hits = xp.flatnonzero(front[nbrs])
    seg, first = xp.unique(owner[hits], return_index=True)
    new = cand[seg]
    parents[new] = nbrs[hits[first]]
    if want_levels:
        levels[new] = depth
    nxt = xp.zeros(front.shape[0], dtype=bool)
    nxt[new] = True
    # Edges a sequential scan would examine: up to the first hit, or the whole list.
    lengths = offsets[1:] - offsets[:-1]
    scanned = int(lengths.sum() - lengths[seg].sum() + (hits[first] - offsets[seg] + 1).sum())
    return nxt, scanned, int(deg[new].sum())
