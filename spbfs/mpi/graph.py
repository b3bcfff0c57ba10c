"""The distributed graph: one block of ``B`` per rank (two for a directed graph).

Construction is collective. Every rank passes its share of the input edges
(any share: the union is the graph); each input tuple ``u -> v`` is routed
with an Alltoallv to the owner of its entry ``B[v, u]``, as a pair of local
ids of that rank's block; undirected, the owner then routes the mirror entry
``B[u, v]`` on. The edges go in rounds of a bounded number per rank (a
Kronecker graph's are generated round by round), so that a rank holds the
records it received and one round's scratch, not its share of int64 edges
beside them. Each rank builds its block ``B_ij`` *transposed* over padded
local ids in the configured format (``tblock``: row access, what the
bottom-up step scans). An undirected graph needs nothing more: ``B`` is
symmetric, so the top-down product ``B x`` runs as ``Bᵀ x`` over the same
block (:mod:`spbfs.mpi.bfs`), and a rank holds one copy of its entries. A
directed graph's ranks also hold ``B_ij`` itself (column access for the
top-down). A rank whose searches run on an array engine (``Config.backend``
``numpy`` or ``cupy``, or ``auto`` where every rank has a GPU) builds its
blocks with array operations on that engine's device from the routed records
(:meth:`~spbfs.mpi._construct.ColumnBuckets.build_on`: one upload, no host
block; numpy runs the same steps). The routed tuples themselves (self-loops
and duplicates included) stay on the block owner for the distributed Graph500 validation and edge
counts, kept as a count per stored entry plus the self-loops
(:mod:`spbfs.mpi._construct`), and rebuilt on demand.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from typing import Any

import numpy as np

from semirings.backend import get_backend
from semirings.blocks import Block, CSRBlock, DCSCBlock
from spbfs.config import Config, as_config
from spbfs.edges import check_vertex_ids
from spbfs.mpi import _construct as K
from spbfs.mpi import comm as C
from spbfs.mpi.grid import Distribution, ProcessGrid, as_grid
from spbfs.mpi.local import bfs_backend

__all__ = ["DistGraph"]

#: What a device-built graph makes on the host only when a host kernel reads it.
_HOST_VIEWS = ("tblock", "_traw", "_tuple_counts")


def _place(grid: ProcessGrid, config: Config) -> str:
    """Numba threads per rank (one when ranks share a machine, unless configured), then pinning.

    Idle OpenMP workers are made to sleep instead of spinning (unless the user
    chose otherwise): between parallel regions, spinning workers took the core
    the serial kernels needed, which made a 1x1 search 1.5x slower on a
    shared 2-core machine. This only works before numba starts its threads,
    as does the pinning (:meth:`ProcessGrid.bind_to_core`), which they inherit.
    A backend the grid cannot run (cupy without a usable GPU) is refused first,
    before any block is built. Returns the searches' local engine (where the
    blocks are built).
    """
    engine = bfs_backend(config, grid.comm)
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import numba

    if config.threads is not None:
        threads = min(config.threads, numba.config.NUMBA_NUM_THREADS)
    elif grid.local_size > 1:
        threads = 1
    else:
        threads = numba.get_num_threads()
    if grid.cpu is None:
        grid.bind_to_core(config.bind, threads)
    numba.set_num_threads(threads)
    return engine


#: Edges a rank routes per round (default): what the construction holds beside the records
#: it has received is a few bytes per edge of one round, not of the whole share.
ROUTE_CHUNK = 1 << 20
#: Column groups a rank's block is built in (see :class:`spbfs.mpi._construct.ColumnBuckets`).
BUILD_BUCKETS = 16


def _route(grid: ProcessGrid, box: list[np.ndarray], counts: np.ndarray,
           ) -> tuple[np.ndarray, np.ndarray]:
    """Alltoallv of the records in ``box[0]`` (``counts[r]`` pairs for rank ``r``).

    Returns what arrived and the pairs from every rank. ``box`` is emptied, so
    that the send buffer goes once the exchange is done (one rank: the
    records stay where they are).
    """
    send = box.pop()
    if grid.size == 1:
        return send, counts.copy()
    recv, got = C.alltoallv(grid.comm, send, 2 * counts)
    return recv, got // 2


def _check_chunk(chunk: Any) -> int:
    """``chunk`` as a positive int, or a ValueError naming it."""
    if isinstance(chunk, bool) or not isinstance(chunk, int | np.integer) or chunk < 1:
        raise ValueError(f"chunk must be a positive int (edges per round), got {chunk!r}")
    return int(chunk)


def _slices(box: list[np.ndarray], chunk: int, rounds: int,
            ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """``rounds`` pieces of ``chunk`` edges of ``box = [src, dst]`` (emptied; the last ones empty).

    The whole arrays are let go before the last piece is handed out, so that
    nothing here keeps them once the caller drops its pieces.
    """
    src, dst = box
    box.clear()
    for k in range(rounds):
        lo, hi = min(k * chunk, src.shape[0]), min((k + 1) * chunk, src.shape[0])
        piece = (src[lo:hi], dst[lo:hi])
        if k == rounds - 1:
            del src, dst
        yield piece
        del piece


class _KroneckerPieces:
    """Edges ``[lo, hi)`` of :func:`spbfs.generators.kronecker_edges`, ``chunk`` at a time.

    ``rounds`` pieces (the last ones empty where this rank's share is the
    shorter); :attr:`seconds` adds up the time spent generating them.
    """

    def __init__(self, scale: int, edgefactor: int, seed: int, lo: int, hi: int, chunk: int,
                 rounds: int) -> None:
        from spbfs.generators import kronecker_edges

        self.generate = kronecker_edges
        self.args = (int(scale), int(edgefactor), seed)
        self.lo, self.hi, self.chunk, self.rounds = lo, hi, chunk, max(1, rounds)
        self.seconds = 0.0
        # The arguments are checked here, on every rank, before any collective.
        self.generate(*self.args[:2], seed=seed, start=lo, stop=lo)

    def __iter__(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        scale, edgefactor, seed = self.args
        for k in range(self.rounds):
            lo = min(self.hi, self.lo + k * self.chunk)
            hi = min(self.hi, lo + self.chunk)
            t0 = time.perf_counter()
            src, dst = self.generate(scale, edgefactor, seed=seed, start=lo, stop=hi)
            self.seconds += time.perf_counter() - t0
            yield src, dst
            del src, dst


def _starts(counts: np.ndarray) -> np.ndarray:
    """First pair of every destination's group in a buffer grouped by destination."""
    pos = np.zeros(counts.shape[0], dtype=np.int64)
    np.cumsum(counts[:-1], out=pos[1:])
    return pos


def _as_block(fmt: str, shape: tuple[int, int], ptr: Any, ind: Any,
              backend: Any = None) -> Block:
    """A csr or dcsc block from full column pointers (int64) and rows, on ``backend``
    (numpy by default; the arrays are already there)."""
    backend = get_backend("numpy" if backend is None else backend)
    xp = backend.xp
    dt = ind.dtype
    if fmt == "csr":
        return CSRBlock(shape, ptr.astype(dt), ind, None, None, backend)
    lengths = xp.diff(ptr)
    jc = xp.flatnonzero(lengths)
    cp = xp.zeros(jc.shape[0] + 1, dtype=dt)
    cp[1:] = xp.cumsum(lengths[jc])
    return DCSCBlock(shape, cp, ind, None, jc.astype(dt), backend)


def _transposed(block: Block) -> Block:
    """``Bᵀ`` of a block where it lives: the host's counting pass, or array steps on a
    device (:func:`~spbfs.mpi._construct.compress_on`; the same arrays)."""
    backend = block.backend
    xp = backend.xp
    if xp is np:
        return block.transpose()
    if block._transpose is None:
        lens, ind, _ = K.compress_on(xp, block.column_ids(), block.ind, block.shape[0], 0)
        ptr = xp.zeros(block.shape[0] + 1, dtype=np.int64)
        ptr[1:] = xp.cumsum(lens)
        t = _on_device(_as_block(block.format, (block.shape[1], block.shape[0]), ptr,
                                 ind.astype(block.index_dtype), backend))
        t._transpose = block
        block._transpose = t
    return block._transpose


def _on_device(block: Block) -> Block:
    """A block built on a GPU held as a ``cupyx.scipy.sparse`` matrix (as the array
    engine keeps its blocks, :func:`~spbfs.mpi.local_array.device_block`)."""
    if block.backend.xp is np:
        return block
    from spbfs.mpi.local_array import device_block

    return device_block(block.backend, block)


class DistGraph:
    """A graph distributed over a :class:`ProcessGrid` (construction is collective).

    Build one with :meth:`from_edges`, :meth:`kronecker` or :meth:`from_file`.

    Attributes
    ----------
    grid : ProcessGrid
        The process grid.
    dist : Distribution
        Who owns which ids (``dist.b``, ``dist.B64``, ``dist.bw``).
    n : int
        Number of vertices.
    directed : bool
        Whether edges are followed one way only.
    config : Config
        Format, direction heuristics, frontier encoding, threads.
    tblock : Block
        ``B_ij`` transposed (``pr * B64`` rows by ``pc * B64`` columns, local
        ids): row access of this rank's block, the one every rank stores.
    block : Block
        This rank's ``B_ij`` (``pc * B64`` rows by ``pr * B64`` columns), column
        access: ``tblock`` itself where ``B_ij`` is symmetric (undirected graph,
        square grid, ``i == j``); held beside it for a directed graph; for an
        undirected one built on first access (the BFS does not need it).
    transposed_topdown : bool
        The top-down runs over ``tblock`` (undirected graphs).
    lo, hi : int
        Global ids ``[lo, hi)`` of this rank's vector piece.
    input_edges : int
        Input edge tuples over all ranks (duplicates and self-loops included).
    local_tuples : int
        Input tuples kept on this rank (those of its block's entries and its
        self-loops; see :attr:`_tuples`).
    construction_time : float
        Seconds the collective construction took (the slowest rank).
    generation_time : float
        Seconds the Kronecker generator took (the slowest rank; 0 otherwise).
    """

    def __init__(self, grid: ProcessGrid, n: int, directed: bool, config: Config,
                 block: Block | None, tblock: Block, tuple_counts: np.ndarray,
                 loops: tuple[np.ndarray, np.ndarray], deg: np.ndarray,
                 input_edges: int) -> None:
        self.grid = grid
        self.n = int(n)
        self.directed = bool(directed)
        self.config = config
        self.dist = Distribution(n, grid.pr, grid.pc)
        #: ``tblock`` where it lives: on the device of the searches' array engine for a
        #: graph built there (:attr:`tblock` is then its host copy, made on first use).
        self.stored_tblock = tblock
        #: Whether the top-down runs the transposed product over ``tblock`` (an
        #: undirected graph: B is symmetric, so ``B x = Bᵀ x``), which lets the
        #: rank keep one block (``Config.grid_blocks``).
        self.transposed_topdown = not self.directed and config.grid_blocks == "one"
        if block is None and not self.transposed_topdown:
            block = _transposed(tblock)  # "both": held from the start, like a directed graph's
        if block is not None and block is not tblock:
            tblock._transpose = block
            block._transpose = tblock
        # The input tuples on this rank: how many fell on each entry of ``tblock``
        # (aligned with tblock.ind), and the self-loops as (local rows, local cols).
        self._loops = loops
        self.local_tuples = int(tuple_counts.sum(dtype=np.int64)) + int(loops[0].shape[0])
        # Blocks built on a device keep no host copy until a host kernel asks for one
        # (the numba engine, the validation, the Graph500 edge counts: _host_views).
        backend = tblock.backend
        self._counts = tuple_counts  # where the blocks live
        if backend.xp is np:
            self._tuple_counts = tuple_counts
            self.tblock = tblock
        self._deg = deg
        self.lo, self.hi = self.dist.piece_range(grid.rank)
        self.input_edges = int(input_edges)
        self.total_degree = int(C.allreduce(grid.comm, np.array([int(deg.sum())]))[0])
        self.construction_time = 0.0
        self.generation_time = 0.0
        # What the search engine keeps between searches: its buffers, bitmaps and phases
        # (``spbfs.mpi.bfs._Kept``, made by the first search) and the pair channels,
        # whose receive sizes every rank grows alike.
        self._search_buffers: Any = None
        self._pair_channels: dict[tuple[str, int], Any] = {}
        # The semiring searches' array engines by backend: a GPU's copies of the
        # blocks are made by the graph's first such search, not by every search.
        self._semiring_locals: dict[str, Any] = {}
        d = self.dist
        xp, to_host = backend.xp, backend.to_host
        # Where each segment (piece of the row chunk) starts among tblock's column slots.
        starts = np.arange(grid.pc + 1, dtype=np.int64) * d.B64
        # csr: a bitmap of the rows with entries (one bit per row of the row chunk;
        # dcsc stores no others). The first bottom-up level lists its candidates
        # from it, without the rows already done (see bitmaps.ids_and_not). Both are
        # read on the host: made where the block is, then brought over (small).
        self.nonempty: np.ndarray | None = None
        if tblock.format == "dcsc":
            self.seg_slots = to_host(xp.searchsorted(tblock.jc, xp.asarray(starts))
                                     ).astype(np.int64)
        else:
            self.seg_slots = starts
            tptr = tblock.ptr
            # Bit r of word r // 64 (as set_bits writes it): bytes of little-endian bits.
            bits = xp.packbits(tptr[1:] != tptr[:-1], bitorder="little")
            self.nonempty = np.ascontiguousarray(to_host(bits)).view(np.uint64)
        if backend.xp is np:
            self._traw = tblock.kernel_view

    @property
    def block(self) -> Block:
        """``B_ij`` with column access (top-down of a directed graph, the algorithms).

        An undirected graph's rank stores only :attr:`tblock`; the first access
        builds the transpose and keeps it (with the memory that costs: the grid
        BFS never asks for it), where the blocks live.
        """
        return self.tblock.transpose()

    @property
    def stored_block(self) -> Block:
        """:attr:`block` where the blocks live (see :attr:`stored_tblock`)."""
        return _transposed(self.stored_tblock)

    @property
    def _raw(self) -> tuple[Any, Any, Any, bool]:
        """``block.kernel_view`` (see :attr:`block`)."""
        return self.block.kernel_view

    def __getattr__(self, name: str) -> Any:
        # Only attributes not set reach here: a device-built graph's host views,
        # made by the first host code that reads them.
        if name in _HOST_VIEWS and "_counts" in self.__dict__:
            self._host_views()
            return self.__dict__[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _host_views(self) -> None:
        """A device-built graph's blocks and tuple counts copied to the host, kept.

        Only host code needs them: the numba engine (a search with
        ``backend="numba"`` on this graph), the distributed validation and the
        Graph500 edge counts (:meth:`reached_tuples`, :meth:`iter_tuples`), the
        entry listing of :meth:`global_entries`, and whoever reads
        :attr:`tblock` or :attr:`block` (the triangle count's adjacency lists,
        an algorithm given ``g.block``). A graph searched on its device alone
        never makes them.
        """
        tb = self.stored_tblock
        host = tb.to_backend("numpy")
        if tb.has_transpose and tb._transpose is not tb:
            held = tb._transpose.to_backend("numpy")
            host._transpose, held._transpose = held, host
        elif tb._transpose is tb:
            host._transpose = host
        self.tblock = host
        self._traw = host.kernel_view
        self._tuple_counts = tb.backend.to_host(self._counts)

    def block_held(self) -> bool:
        """Whether ``B_ij`` is held beside ``tblock`` (directed, or built on demand)."""
        tb = self.stored_tblock
        return tb.has_transpose and tb._transpose is not tb

    # -- construction ----------------------------------------------------------------
    @classmethod
    def from_edges(cls, src: Any, dst: Any, n: int, *, directed: bool = False,
                   grid: ProcessGrid | str | tuple[int, int] | None = None,
                   config: Config | None = None, chunk: int = ROUTE_CHUNK) -> DistGraph:
        """Build from this rank's share of the edges ``src[k] -> dst[k]`` (collective).

        Parameters
        ----------
        src, dst : array_like of int
            This rank's edges; any split of the edge list over the ranks works.
        n : int
            Number of vertices (the same on every rank).
        directed : bool, default False
            Follow arcs only; otherwise every edge goes both ways.
        grid : ProcessGrid, str or tuple, optional
            The grid, or its shape; default ``config.grid`` or the rank count's
            :func:`~spbfs.mpi.grid.auto_grid_shape`.
        config : Config or mapping, optional
            Block format and search settings (:func:`spbfs.config.as_config`: a
            mapping goes over the default, None is the ``SPBFS_*`` environment's).
        chunk : int, default ROUTE_CHUNK
            Edges a rank routes per round (the same on every rank): the
            construction's scratch beside the records received is that of one
            round. The graph does not depend on it.

        Returns
        -------
        DistGraph

        Raises
        ------
        CollectiveError
            On every rank when any rank's ids are out of range or not integers,
            or when ranks pass different ``n``, ``directed``, ``config`` or
            ``chunk``.
        """
        config = as_config(config)
        return cls._from_box(as_grid(grid, config), [src, dst], n, directed, config, chunk)

    @classmethod
    def _from_box(cls, g: ProcessGrid, box: list[Any], n: Any, directed: bool,
                  config: Config, chunk: int | None = None) -> DistGraph:
        """:meth:`from_edges` of the arrays ``box = [src, dst]``, which it empties.

        Taking the arrays out of the list lets the build free an edge list that
        nobody else holds (a read one) once it is routed: ``chunk`` None routes
        the share in one round, which frees such a list before the records
        arrive (routed in rounds, it would stay beside them to the last one).
        """
        t0 = time.perf_counter()
        engine = _place(g, config)
        msg = None
        try:
            n = int(n)
            if n < 1:
                raise ValueError(f"n must be positive, got {n}")
            src = check_vertex_ids(np.asarray(box[0]).reshape(-1), n, "src")
            dst = check_vertex_ids(np.asarray(box[1]).reshape(-1), n, "dst")
            if src.shape != dst.shape:
                raise ValueError(f"src and dst differ in length ({src.size} vs {dst.size})")
            if chunk is not None:
                chunk = _check_chunk(chunk)
        except (TypeError, ValueError) as exc:
            msg = f"rank {g.rank}: {exc}"
        box.clear()
        C.agree_call(g.comm, msg, n=n, directed=bool(directed), config=config, chunk=chunk)
        input_edges = int(C.allreduce(g.comm, np.array([src.shape[0]]))[0])
        most = int(C.allreduce(g.comm, np.array([src.shape[0]]), "max")[0])
        chunk = max(1, most) if chunk is None else chunk
        rounds = max(1, -(-most // chunk))
        box += [src, dst]
        del src, dst
        self = cls._build(g, _slices(box, chunk, rounds), n, bool(directed), config,
                          input_edges, engine)
        C.wait_barrier(g.comm)
        self.construction_time = float(
            C.allreduce(g.comm, np.array([time.perf_counter() - t0]), "max")[0])
        return self

    @classmethod
    def _build(cls, g: ProcessGrid, pieces: Iterator[tuple[np.ndarray, np.ndarray]], n: int,
               directed: bool, config: Config, input_edges: int,
               engine: str = "numba") -> DistGraph:
        """The graph of the edge pieces (as many on every rank), routed one piece at a time.

        Every input tuple ``u -> v`` goes to the owner of ``B[v, u]`` as local ids
        there; undirected, that owner sends the mirror entry ``B[u, v]`` on as
        soon as the piece has arrived. The records are kept by column group
        (:class:`~spbfs.mpi._construct.ColumnBuckets`), so a rank holds its
        records and one piece's scratch, never its whole share of int64 edges
        beside them, and builds its block one column group at a time: on the
        host (numba), or on the device of the searches' array ``engine``.
        """
        d = Distribution(n, g.pr, g.pc)
        ldt = d.local_dtype()
        b, B64, pr, pc = d.b, d.B64, g.pr, g.pc
        row0, col0 = g.i * pc, g.j * pr
        # The rank stores B_ij transposed (row access: the bottom-up scans, and for an
        # undirected graph the top-down's transposed product too); the tuple counts
        # follow its entries.
        tshape = (pr * B64, pc * B64)
        cols = K.ColumnBuckets(tshape[1], BUILD_BUCKETS, row0, col0, b, B64, True, g.size, ldt)
        counts = np.zeros(g.size, dtype=np.int64)
        box: list[np.ndarray] = []
        for src, dst in pieces:
            counts[:] = 0
            K.count_global(dst, src, b, B64, pr, pc, counts)
            send = np.empty(2 * src.shape[0], dtype=ldt)
            K.fill_global(dst, src, b, B64, pr, pc, _starts(counts), send)
            del src, dst
            box.append(send)
            del send
            tup, sources = _route(g, box, counts)
            if not directed:
                # The owner of B[v, u] sends the mirror entry B[u, v] on (not for self-loops).
                counts[:] = 0
                K.count_mirrors(tup, row0, col0, b, B64, pr, pc, counts)
                send = np.empty(2 * int(counts.sum()), dtype=ldt)
                K.fill_mirrors(tup, row0, col0, b, B64, pr, pc, _starts(counts), send)
                box.append(send)
                del send
                box.append(_route(g, box, counts)[0])
                cols.add(box)
            box.append(tup)
            del tup
            cols.add(box, sources)
        # Out-degrees: column counts of B_ij (rows of the transpose) summed down the
        # processor column, each rank keeping the piece it holds in the column layout,
        # sent back to its owner.
        if engine in ("numpy", "cupy"):
            backend = get_backend(engine)
            xp = backend.xp
            ptr, ind, tcounts, loops = cols.build_on(xp, tshape[0], config.index_dtype)
            colcount = backend.to_host(xp.bincount(ind, minlength=tshape[0])).astype(np.int64)
            tblock = _on_device(_as_block(config.format, tshape, ptr, ind, backend))
        else:
            ptr, ind, tcounts, loops = cols.build(tshape[0], config.index_dtype)
            colcount = np.zeros(tshape[0], dtype=np.int64)
            K.count_rows(ind, colcount)
            tblock = _as_block(config.format, tshape, ptr, ind)
        del ptr, ind
        K.release_freed()
        block: Block | None = None
        if not directed and pr == pc and g.i == g.j:
            # B_ii of a symmetric B on a square grid is symmetric: its transpose is itself.
            block = tblock
            tblock._transpose = tblock
        elif directed:
            # Arcs go one way: the top-down needs the column access of B_ij itself.
            block = _transposed(tblock)
        deg = _reduce_scatter_columns(g, d, colcount)
        lo, hi = d.piece_range(g.rank)
        return cls(g, n, directed, config, block, tblock, tcounts, loops, deg[:hi - lo],
                   input_edges)

    @classmethod
    def kronecker(cls, scale: int, edgefactor: int = 16, *, seed: int = 0,
                  grid: ProcessGrid | str | tuple[int, int] | None = None,
                  config: Config | None = None, chunk: int = ROUTE_CHUNK) -> DistGraph:
        """The Graph500 Kronecker graph of :func:`spbfs.generators.kronecker`, generated in place.

        Rank ``r`` generates edges ``[r m / p, (r + 1) m / p)`` of the
        counter-based generator, ``chunk`` at a time, and routes each piece
        before generating the next, so the graph depends on ``seed`` only,
        never on the grid or ``chunk``, and no rank holds its share as int64
        edges. The generation time is kept in :attr:`generation_time`, the rest
        in :attr:`construction_time`.

        Parameters
        ----------
        scale, edgefactor, seed : int
            As for :func:`spbfs.generators.kronecker`.
        grid : ProcessGrid, str or tuple, optional
            The grid or its shape.
        config : Config or mapping, optional
            Block format and search settings (:func:`spbfs.config.as_config`: a
            mapping goes over the default, None is the ``SPBFS_*`` environment's).
        chunk : int, default ROUTE_CHUNK
            Edges a rank generates and routes per round (the same on every rank).

        Returns
        -------
        DistGraph

        Raises
        ------
        CollectiveError
            On every rank when an argument is out of range on any rank, or when
            ranks pass different ones.
        """
        config = as_config(config)
        g = as_grid(grid, config)
        t0 = time.perf_counter()
        engine = _place(g, config)
        msg = None
        try:
            m = int(edgefactor) << int(scale)
            lo, hi = g.rank * m // g.size, (g.rank + 1) * m // g.size
            chunk = _check_chunk(chunk)
            most = -(-m // g.size)  # the longest share: every rank routes as many rounds
            pieces = _KroneckerPieces(scale, edgefactor, seed, lo, hi, chunk, -(-most // chunk))
        except (TypeError, ValueError) as exc:
            msg = str(exc)
        C.agree_call(g.comm, msg, scale=scale, edgefactor=edgefactor, seed=seed, config=config,
                     chunk=chunk)
        self = cls._build(g, iter(pieces), 1 << int(scale), False, config, m, engine)
        C.wait_barrier(g.comm)
        took = time.perf_counter() - t0
        times = C.allreduce(g.comm, np.array([took - pieces.seconds, pieces.seconds]), "max")
        self.construction_time, self.generation_time = float(times[0]), float(times[1])
        return self

    @classmethod
    def from_file(cls, path: str, *, directed: bool | None = None,
                  one_based: bool | None = None, reverse: bool = False,
                  grid: ProcessGrid | str | tuple[int, int] | None = None,
                  config: Config | None = None) -> DistGraph:
        """Read a graph file, every rank its own slice, and distribute it (collective).

        Text formats (Matrix Market, edge lists, CSV) are cut into byte ranges at
        line starts and each rank parses one (:func:`spbfs.mpi.read.read_edges`;
        a gzip file is decompressed by rank 0, which sends each rank its range),
        so no rank holds the whole graph; a ``.npz`` of :func:`spbfs.io.save_npz`
        is read in slices at the arrays' offsets, or streamed by rank 0 when
        compressed (:func:`spbfs.mpi.read.read_npz_edges`), and so is a coo, csr
        or csc ``scipy.sparse`` archive; others (bsr, dia) are read on rank 0
        and scattered.

        Parameters
        ----------
        path : str
            Any file :func:`spbfs.io.read_graph` reads.
        directed : bool, optional
            Override what the file says (undirected when it says nothing).
        one_based : bool, optional
            Edge-list ids start at 1.
        reverse : bool
            Follow in-edges (directed graphs): the arcs are reversed.
        grid, config
            As for :meth:`from_edges`.

        Raises
        ------
        CollectiveError
            On every rank when the file cannot be read or is malformed
            (``cannot read PATH, line K: ...``, as :func:`spbfs.io.read_graph` says),
            when the ranks do not see the same file, or when they pass different
            options.
        """
        from spbfs.io import read_graph
        from spbfs.mpi.read import read_edges

        config = as_config(config)
        g = as_grid(grid, config)
        # Not the path: ranks may read copies of the file at different paths.
        C.agree_call(g.comm, None, directed=directed, one_based=one_based, reverse=reverse,
                     config=config)
        got = read_edges(g.comm, os.fspath(path), directed=directed, one_based=one_based)
        if got is not None:
            src, dst, n, is_dir = got
            del got
            box = [dst, src] if reverse and is_dir else [src, dst]
            del src, dst  # the build frees the edges read once they are routed
            return cls._from_box(g, box, n, is_dir, config, None)
        msg = None
        src = dst = np.zeros(0, np.int64)
        info: tuple[int, bool] = (0, False)
        if g.rank == 0:
            try:
                el = read_graph(path, directed=directed, one_based=one_based)
                src, dst = el.src, el.dst
                is_dir = bool(el.directed) if directed is None else bool(directed)
                info = (el.n, is_dir)
                if el.n < 1:
                    raise ValueError("the graph has no vertices")
            except (OSError, ValueError, TypeError) as exc:
                msg = f"cannot read {path}: {exc}"
        C.agree(g.comm, msg)
        n, is_dir = C.bcast_obj(g.comm, info)
        box = [dst, src] if reverse and is_dir else [src, dst]
        del src, dst
        return cls._from_box(g, box, n, is_dir, config, None)

    # -- queries ---------------------------------------------------------------------
    @property
    def _tuples(self) -> tuple[np.ndarray, np.ndarray]:
        """``(rows, cols)``: local ids of every input tuple on this rank (a new copy).

        Tuple ``u -> v`` is ``B[v, u]``: ``v`` a local row, ``u`` a local
        column; duplicates and self-loops included, ordered by row then column
        (the order of ``tblock``'s entries; the self-loops last). Rebuilt from
        the block and the counts on every access: :meth:`iter_tuples` gives
        them in bounded pieces and :meth:`reached_tuples` counts without them.
        """
        lr, lc = self._loops
        rows = np.empty(self.local_tuples, dtype=self.dist.local_dtype())
        cols = np.empty_like(rows)
        k, _, _ = K.expand_tuples(*self._traw, self._tuple_counts, 0, 0, cols, rows)
        rows[k:] = lr
        cols[k:] = lc
        return rows, cols

    def iter_tuples(self, chunk: int = 1 << 20) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """This rank's input tuples as ``(rows, cols)`` pieces of about ``chunk`` tuples.

        The same tuples, in the same order, as :attr:`_tuples`; each piece is
        a fresh pair of arrays of the local id dtype.
        """
        counts = self._tuple_counts
        ptr, ind, jc, dcsc = self._traw
        dt = self.dist.local_dtype()
        # Every entry's copies go to one piece: a piece holds the largest count.
        cap = max(int(chunk), int(counts.max(initial=0)), 1)
        nslots = ptr.shape[0] - 1
        s = e = 0
        while s < nslots:
            rows = np.empty(cap, dtype=dt)
            cols = np.empty(cap, dtype=dt)
            k, s, e = K.expand_tuples(ptr, ind, jc, dcsc, counts, s, e, cols, rows)
            if k:
                yield rows[:k], cols[:k]
        if self._loops[0].shape[0]:
            yield self._loops[0].copy(), self._loops[1].copy()

    def reached_tuples(self, col_levels: np.ndarray) -> int:
        """Input tuples on this rank whose column ``u`` has ``col_levels[u] >= 0``.

        ``col_levels`` is indexed by local column ids (the column chunk, see
        :func:`spbfs.mpi.validate.column_chunk_of_piece`). Equal to
        ``np.count_nonzero(col_levels[self._tuples[1]] >= 0)``, without
        rebuilding the tuples.
        """
        ptr, ind, jc, dcsc = self._traw
        return int(K.reached_tuples(ptr, ind, jc, dcsc, self._tuple_counts, self._loops[1],
                                    col_levels, True))

    def piece_degrees(self) -> np.ndarray:
        """Out-degree (duplicates and self-loops removed) of this rank's vertices ``lo .. hi-1``."""
        return self._deg

    def piece_in_degrees(self) -> np.ndarray:
        """In-degree of this rank's vertices ``lo .. hi-1``, counted as :meth:`piece_degrees`.

        Collective (one reduce-scatter along the processor row): ``tblock``'s
        column lengths are the in-arcs of the row chunk's vertices within the
        block, and the row chunk's part ``j`` is this rank's own piece. What a
        bottom-up sweep of a directed graph reads (:mod:`spbfs.direction`).
        """
        tb, B = self.stored_tblock, self.dist.B64
        g = self.grid
        lens = tb.backend.to_host(tb.backend.xp.diff(tb.ptr)).astype(np.int64)
        rowcount = np.zeros(g.pc * B, dtype=np.int64)
        if tb.jc is None:
            rowcount[:] = lens
        else:
            rowcount[tb.backend.to_host(tb.jc)] = lens
        if g.pc == 1:
            mine = rowcount
        else:
            mine = np.empty(B, dtype=np.int64)
            req = g.row_comm.Ireduce_scatter_block(rowcount, mine, op=C.mpi().SUM)
            C.policy().wait(req, rowcount.nbytes >= C.BULK_BYTES)
        return mine[:self.hi - self.lo].copy()

    def global_entries(self) -> tuple[np.ndarray, np.ndarray] | None:
        """All entries of ``B`` as global ``(rows, cols)`` on rank 0, sorted by (col, row).

        ``B[v, u] != 0`` for an edge ``u -> v``, as in
        :attr:`spbfs.Graph.out_block`. Collective; None on the other ranks.
        """
        d, g = self.dist, self.grid
        tb = self.tblock
        rows = d.global_rows(np.asarray(tb.column_ids(), dtype=np.int64), g.i)
        cols = d.global_cols(np.asarray(tb.ind, dtype=np.int64), g.j)
        all_rows = C.gatherv(g.comm, rows)
        all_cols = C.gatherv(g.comm, cols)
        if g.rank != 0:
            return None
        order = np.lexsort((all_rows, all_cols))
        return all_rows[order], all_cols[order]

    def sample_roots(self, k: int, seed: int | None = 0) -> np.ndarray:
        """``k`` distinct search keys among vertices of degree >= 1 (collective).

        The same keys as :func:`spbfs.graph500.sample_roots` on the one-process
        graph's degrees with the same seed, whatever the grid.
        """
        g = self.grid
        cand = self.lo + np.flatnonzero(self._deg >= 1).astype(np.int64)
        allc = C.gatherv(g.comm, cand)
        roots = None
        if g.rank == 0:
            rng = np.random.default_rng(seed)
            roots = rng.permutation(allc) if allc.size <= k else \
                rng.choice(allc, size=int(k), replace=False)
            roots = np.asarray(roots, dtype=np.int64)
        return C.bcast_obj(g.comm, roots)

    @property
    def stored_entries(self) -> int:
        """Entries of ``B`` over all ranks (collective)."""
        return int(C.allreduce(self.grid.comm, np.array([self.stored_tblock.nnz]))[0])

    def index_bytes(self) -> int:
        """Bytes of this rank's bottom-up index (segment starts; csr: the rows with entries)."""
        extra = 0 if self.nonempty is None else self.nonempty.nbytes
        return int(self.seg_slots.nbytes + extra)

    def tuple_bytes(self) -> int:
        """Bytes of this rank's input tuples (entry counts and self-loops)."""
        return int(self._counts.nbytes + self._loops[0].nbytes + self._loops[1].nbytes)

    def memory(self) -> dict[str, int]:
        """Bytes over all ranks (collective) by part: ``block``, ``tblock``, ``index``, ``tuples``.

        ``tblock`` is B^T (every rank's stored block), ``block`` B where a rank
        holds it too (a directed graph; an undirected one's built on demand, see
        :attr:`block`), ``index`` the bottom-up index (:meth:`index_bytes`),
        ``tuples`` the input tuples (:meth:`tuple_bytes`).
        """
        held = self.stored_tblock._transpose if self.block_held() else None
        bb = 0 if held is None else held.nbytes
        local = np.array([bb, self.stored_tblock.nbytes, self.index_bytes(),
                          self.tuple_bytes()])
        tot = C.allreduce(self.grid.comm, local)
        return {"block": int(tot[0]), "tblock": int(tot[1]), "index": int(tot[2]),
                "tuples": int(tot[3])}

    def __repr__(self) -> str:
        kind = "directed" if self.directed else "undirected"
        return (f"DistGraph(n={self.n}, {kind}, grid {self.grid.pr}x{self.grid.pc}, "
                f"format={self.config.format}, rank {self.grid.rank}: "
                f"{self.stored_tblock.nnz} entries)")


def _reduce_scatter_columns(g: ProcessGrid, d: Distribution, colcount: np.ndarray) -> np.ndarray:
    """Sum a column-chunk vector down the processor column; each owner gets its piece."""
    B = d.B64
    if g.pr == 1:
        mine = colcount[:B].copy()
    else:
        MPI = C.mpi()
        mine = np.empty(B, dtype=np.int64)
        req = g.col_comm.Ireduce_scatter_block(colcount, mine, op=MPI.SUM)
        C.policy().wait(req, colcount.nbytes >= C.BULK_BYTES)
    # This rank holds piece j*pr + i (the column layout); send it to its owner.
    if g.transpose_dest == g.rank:
        return mine
    out = np.empty(B, dtype=np.int64)
    C.sendrecv(g.comm, mine, g.transpose_src, out, g.transpose_dest, tag=7)
    return out
