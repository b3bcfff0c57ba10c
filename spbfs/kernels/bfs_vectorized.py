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


def expand(xp: Any, block: Block, cols: Any) -> tuple[Any, Any, Any]:
    """Entries of the columns ``cols``: (row ids, owner slot in ``cols``, offsets).

    ``offsets[c] .. offsets[c + 1]`` are column ``cols[c]``'s entries, rows in
    increasing order within a column.
    """
    start, stop = block.col_ranges(cols)
    lengths = (stop - start).astype(np.int64)
    offsets = xp.zeros(cols.shape[0] + 1, dtype=np.int64)
    xp.cumsum(lengths, out=offsets[1:])
    owner = xp.repeat(xp.arange(cols.shape[0], dtype=np.int64), lengths)
    pos = xp.arange(int(offsets[-1]), dtype=np.int64) - offsets[owner] + start[owner]
    return block.ind[pos].astype(np.int64), owner, offsets


def first_parents(xp: Any, rows: Any, owner: Any) -> tuple[Any, Any]:
    """Each distinct row once (sorted) and the owner slot of its first entry.

    Entries come column by column in increasing frontier order, so the first
    entry of a row carries its smallest parent.
    """
    new, first = xp.unique(rows, return_index=True)
    return new.astype(np.int64), owner[first]


def first_hits(xp: Any, block: Block, cand: Any, front: Any) -> tuple[Any, Any, int]:
    """Per candidate column, its first entry whose row is set in the bool map ``front``.

    Returns (positions in ``cand`` that have one, sorted; that entry's row; the
    edges a sequential scan would examine: up to the first hit, or the whole list).
    """
    nbrs, owner, offsets = expand(xp, block, cand)
    hits = xp.flatnonzero(front[nbrs])
    seg, first = xp.unique(owner[hits], return_index=True)
    at = hits[first]
    lengths = offsets[1:] - offsets[:-1]
    scanned = int(lengths.sum() - lengths[seg].sum() + (at - offsets[seg] + 1).sum())
    return seg, nbrs[at], scanned


def topdown_step(
    xp: Any, block: Block, frontier: Any, parents: Any, levels: Any, want_levels: bool,
    depth: int, deg: Any, parent_ids: Any = None,
) -> tuple[Any, int, int]:
    """Expand the sorted ``frontier``; return (next frontier sorted, scanned, degree sum).

    ``parent_ids`` (aligned with ``frontier``) are the ids written as parents,
    where the block's column ids are not the vertex ids (a grid block's local
    columns); default the frontier itself.
    """
    rows, owner, _ = expand(xp, block, frontier)
    scanned = int(rows.shape[0])
    fresh = parents[rows] == -1
    new, at = first_parents(xp, rows[fresh], owner[fresh])
    parents[new] = (frontier if parent_ids is None else parent_ids)[at]
    if want_levels:
        levels[new] = depth
    return new, scanned, int(deg[new].sum())


def bottomup_step(
    xp: Any, block: Block, front: Any, parents: Any, levels: Any, want_levels: bool,
    depth: int, deg: Any,
) -> tuple[Any, int, int]:
    """Bottom-up level over a bool frontier map; return (next map, scanned, degree sum)."""
    cand = xp.flatnonzero(parents == -1)
    seg, par, scanned = first_hits(xp, block, cand, front)
    new = cand[seg]
    parents[new] = par
    if want_levels:
        levels[new] = depth
    nxt = xp.zeros(front.shape[0], dtype=bool)
    nxt[new] = True
    return nxt, scanned, int(deg[new].sum())
