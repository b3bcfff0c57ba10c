"""Building a graph's blocks from an edge source in two streaming passes.

The one-process graph is built here, whatever holds its edges: an
:class:`~spbfs.edges.EdgeList` in memory, or a source that produces any slice
on demand (:class:`~spbfs.generators.KroneckerSource`). Both go through the
same two passes over slices of ``chunk_edges`` edges:

1. count: every slice adds its edges to each vertex's count (both endpoints of
   an undirected edge; self-loops are counted apart and dropped);
2. place: one index array of the counted size is allocated and every slice,
   read again, scatters its edges into their columns.

Each column is then sorted and its repeats merged in place, and the index
array is shrunk where repeats were merged (:func:`semirings._build.finish_compressed`).
So a build holds the block's indices once (4 bytes per stored entry where ids
fit in int32), a few n-sized arrays, and one slice of edges; never the int64
edge list and never a second copy of the indices. The result is the same
graph, bit for bit, as :func:`semirings.blocks.block_from_edges` builds from
the whole edge list: the same entries per column, sorted, without repeats or
self-loops.

The index dtype is chosen once the merged entries are counted, so a graph
whose ids and stored entries fit in int32 gets int32 blocks even when its
input, counted with repeats and both directions, would not.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from semirings._build import count_into, finish_compressed, scatter_into
from semirings.backend import Backend
from semirings.blocks import Block, CSRBlock, DCSCBlock, block_from_edges, choose_index_dtype
from spbfs.edges import EdgeList, EdgeSource, check_vertex_ids

__all__ = ["DEFAULT_CHUNK_EDGES", "BuiltBlocks", "build_blocks"]

#: Edges per slice: 64 MiB of int64 endpoints, small next to any graph worth streaming,
#: large enough that a slice's Python overhead is nothing.
DEFAULT_CHUNK_EDGES = 1 << 22

_INT32_MAX = int(np.iinfo(np.int32).max)


@dataclass
class BuiltBlocks:
    """The blocks of a graph and what the build counted on the way.

    Attributes
    ----------
    out_block, in_block : Block
        ``B`` and ``B.T`` (the same object for an undirected graph).
    input_degree : numpy.ndarray or None
        Input edge tuples at each vertex, repeats and self-loops included
        (undirected: a tuple counts at both endpoints, a self-loop twice;
        directed: at its tail). int32 where ``2 * num_edges`` fits, else int64;
        None for a hypersparse dcsc build (no n-sized arrays there).
    num_edges : int
        Input edge tuples read.
    """

    out_block: Block
    in_block: Block
    input_degree: np.ndarray | None
    num_edges: int


def _slices(m: int, chunk_edges: int) -> list[tuple[int, int]]:
    return [(lo, min(lo + chunk_edges, m)) for lo in range(0, m, chunk_edges)]


def _read(source: EdgeSource, lo: int, hi: int, trusted: bool) -> tuple[np.ndarray, np.ndarray]:
    src, dst = source.chunk(lo, hi)
    if trusted:
        return src, dst
    n = source.n
    src = check_vertex_ids(src, n, f"source.chunk({lo}, {hi})[0] (src)")
    dst = check_vertex_ids(dst, n, f"source.chunk({lo}, {hi})[1] (dst)")
    if src.shape != (hi - lo,) or dst.shape != (hi - lo,):
        raise ValueError(f"source.chunk({lo}, {hi}) must return two 1-D arrays of {hi - lo} "
                         f"ids, got shapes {src.shape} and {dst.shape}")
    return src, dst


def _checked_lists(edges: EdgeList) -> tuple[np.ndarray, np.ndarray]:
    """An EdgeList's arrays, checked now: its arrays may have been edited since it was made.

    One compiled pass per array (:func:`~spbfs.edges.check_vertex_ids`), so that
    the builder's kernels, which index without bounds checks, never see an id
    outside ``[0, n)``.
    """
    if edges.src.shape != edges.dst.shape or edges.src.ndim != 1:
        raise ValueError(f"edges.src and edges.dst must be 1-D arrays of equal length, got "
                         f"shapes {edges.src.shape} and {edges.dst.shape}")
    n = edges.n
    return (check_vertex_ids(edges.src, n, "edges.src"),
            check_vertex_ids(edges.dst, n, "edges.dst"))


def _finish(fmt: str, n: int, ptr: np.ndarray, idx: np.ndarray, index_dtype: Any,
            backend: Backend) -> Block:
    """Sort and merge the filled columns, pick the index dtype, and make the block."""
    ptr, idx, _ = finish_compressed(ptr, idx, dedup=True)
    nnz = int(ptr[-1])
    dt = choose_index_dtype(n, n, nnz, index_dtype)
    if idx.dtype != dt:  # int32 ids, but more entries than int32 offsets can count
        idx = idx.astype(dt)
    if fmt == "csr":
        return CSRBlock((n, n), ptr.astype(dt, copy=False), idx, None, None, backend)
    lengths = np.diff(ptr)
    del ptr
    jc = np.flatnonzero(lengths)
    cptr = np.zeros(jc.size + 1, dtype=dt)
    np.cumsum(lengths[jc], out=cptr[1:])
    return DCSCBlock((n, n), cptr, idx, None, jc.astype(dt), backend)


def _hypersparse(source: EdgeSource, directed: bool, fmt: str, index_dtype: Any,
                 backend: Backend) -> BuiltBlocks:
    """A dcsc graph with far more vertices than edges: the in-memory builder.

    Its column ids are compressed before anything n-sized exists; with so few
    edges, holding them is cheap, and n-sized counts are what must be avoided.
    """
    m = source.num_edges
    if isinstance(source, EdgeList):
        src, dst = _checked_lists(source)
    else:
        src, dst = _read(source, 0, m, trusted=False)
    n = source.n
    kw: dict[str, Any] = {"index_dtype": index_dtype, "dedup": True, "drop_loops": True,
                          "backend": backend}
    if directed:
        out_block = block_from_edges(fmt, dst, src, (n, n), **kw)
        in_block = block_from_edges(fmt, src, dst, (n, n), **kw)
    else:
        out_block = in_block = block_from_edges(fmt, dst, src, (n, n), symmetric=True, **kw)
    return BuiltBlocks(out_block, in_block, None, m)


def build_blocks(
    source: EdgeSource,
    *,
    directed: bool,
    fmt: str,
    index_dtype: Any = "auto",
    backend: Backend,
    chunk_edges: int = DEFAULT_CHUNK_EDGES,
    on_chunk: Callable[[int, int], Any] | None = None,
    on_block: Callable[[int, int], Any] | None = None,
) -> BuiltBlocks:
    """Build the out- and in-block of a graph from ``source`` in two passes over slices.

    Parameters
    ----------
    source : EdgeSource
        The edges (an :class:`~spbfs.edges.EdgeList` or any source). Every
        slice is read twice; an EdgeList has its ids checked whole before the
        first pass, any other source slice by slice as it is read.
    directed : bool
        Follow edges as arcs (two blocks) or both ways (one symmetric block).
    fmt : {"csr", "dcsc"}
        Block format.
    index_dtype : {"auto", "int32", "int64"}
        As :func:`semirings.blocks.choose_index_dtype`, decided on the merged
        entries.
    backend : Backend
        Where the blocks live (built on the host, then moved).
    chunk_edges : int
        Edges per slice.
    on_chunk : callable, optional
        ``on_chunk(i, total)`` after each of the ``2 * slices`` reads.
    on_block : callable, optional
        ``on_block(i, nblocks)`` after each finished block.

    Returns
    -------
    BuiltBlocks

    Raises
    ------
    ValueError, TypeError, OverflowError
        A bad ``chunk_edges`` or ``fmt``, ids out of range, or an int32
        request the graph does not fit.
    """
    if isinstance(chunk_edges, bool) or not isinstance(chunk_edges, int | np.integer) \
            or int(chunk_edges) < 1:
        raise ValueError(f"chunk_edges must be a positive int, got {chunk_edges!r}")
    if fmt not in ("csr", "dcsc"):
        raise ValueError(f"fmt must be 'csr' or 'dcsc', got {fmt!r}")
    n, m = int(source.n), int(source.num_edges)
    # A hypersparse dcsc block must not get n-sized counts (the in-memory builder's rule).
    if fmt == "dcsc" and n > 4 * m + 1024:
        return _hypersparse(source, directed, fmt, index_dtype, backend)
    # The ids decide the placing buffer's dtype (an int32 request with too many ids
    # fails here, before any pass); the merged entry count decides the block's.
    buf_dt = choose_index_dtype(n, n, 0, index_dtype)
    # An EdgeList is checked whole, once, here (not when it was made: its arrays are
    # writable); its slices are then views of checked arrays. Other sources per slice.
    trusted = isinstance(source, EdgeList)
    if trusted:
        checked_src, checked_dst = _checked_lists(source)
        if checked_src is not source.src or checked_dst is not source.dst:
            # Converted to int64 on the way: slice the converted arrays.
            source = EdgeList(checked_src, checked_dst, n, source.directed)
    slices = _slices(m, int(chunk_edges))
    total_reads = 2 * len(slices)
    loop_dt = np.int32 if m <= _INT32_MAX else np.int64

    # Pass 1: counts per column (kept entries) and self-loops per vertex.
    majors = 2 if directed else 1
    counts = [np.zeros(n + 1, np.int64) for _ in range(majors)]
    loops = np.zeros(n, loop_dt)
    none = np.zeros(0, loop_dt)
    for k, (lo, hi) in enumerate(slices):
        src, dst = _read(source, lo, hi, trusted)
        count_into(counts[0], loops, src, dst, not directed, True, True)
        if directed:
            count_into(counts[1], none, dst, src, False, True, False)
        del src, dst
        if on_chunk is not None:
            on_chunk(k + 1, total_reads)
    ptrs = [np.cumsum(c, out=c) for c in counts]
    del counts

    # Input tuples per vertex: the kept entries of its column plus its self-loops
    # (twice undirected, where a loop is an endpoint twice), before repeats merge.
    deg_dt = np.int32 if 2 * m <= _INT32_MAX else np.int64
    input_degree = np.diff(ptrs[0]).astype(deg_dt)
    input_degree += loops if directed else 2 * loops
    del loops

    # Pass 2: place every entry in its column.
    idxs = [np.empty(int(p[-1]), buf_dt) for p in ptrs]
    pos = [p[:-1].copy() for p in ptrs]
    for k, (lo, hi) in enumerate(slices):
        src, dst = _read(source, lo, hi, trusted)
        scatter_into(pos[0], idxs[0], src, dst, not directed, True)
        if directed:
            scatter_into(pos[1], idxs[1], dst, src, False, True)
        del src, dst
        if on_chunk is not None:
            on_chunk(len(slices) + k + 1, total_reads)
    del pos

    blocks = []
    for b in range(majors):
        # Hand the arrays over so that finishing can shrink them in place (no other views).
        ptr, idx = ptrs[b], idxs[b]
        ptrs[b] = idxs[b] = None  # type: ignore[call-overload]
        blocks.append(_finish(fmt, n, ptr, idx, index_dtype, backend))
        del ptr, idx
        if on_block is not None:
            on_block(b + 1, majors)
    out_block = blocks[0]
    in_block = blocks[1] if directed else out_block
    return BuiltBlocks(out_block, in_block, input_degree, m)
