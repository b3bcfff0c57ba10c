"""The array engine of the grid: a rank's local work as whole-array steps over ``xp``.

One implementation of :class:`spbfs.mpi.local.LocalEngine` for numpy (the
grid's CPU reference) and cupy (each rank's GPU): the products are the
one-process steps of :mod:`spbfs.kernels.bfs_vectorized` (expand a frontier's
columns, keep each row's first entry, first hit of a candidate in a frontier
map) with the grid's id map, global parent ids ``(piece0 + u // B64) * b +
u % B64`` of the chunk-local columns.

State on the device: the rank's block (a cupy block is the
:class:`~semirings.blocks.Block`'s arrays, those of a ``cupyx.scipy.sparse``
matrix: csr, or dcsc's non-empty columns only), the piece's parents, levels
and degrees, the "already sent" map and the column chunk's frontier map
(bool arrays), and the level state the messages are made of: frontier
pieces (sorted int64 ids; their bitmap is packed from ``levels == depth``),
the pairs each step sends (one array, a view per destination), the
bottom-up ``completed`` bitmaps (uint64 words, as they rotate). The phases
hand these to MPI and back through the engine's
:class:`~spbfs.mpi.staging.Staging`: as device buffers where the MPI library
is CUDA-aware, else through pinned host buffers, one copy down per sent
message and one up per received one. What comes to the host during a level
is counts: the degree sums and edge counts of the level's Allreduce, and a
count per destination of a step's pairs (MPI is told how much to send).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from semirings.backend import get_backend
from semirings.kernels import spmsv, spmv
from semirings.vector import SparseVector
from spbfs.kernels import bfs_vectorized as vk
from spbfs.mpi.staging import Staging, cuda_aware

__all__ = ["ArrayLocal", "array_local", "device_block"]


class ArrayLocal:
    """The grid's local engine on an array module (``name``: ``"numpy"`` or ``"cupy"``).

    Made once per graph; its device copies of the blocks and degrees stay for
    the graph's next searches. Its level state is its own, on its device:
    the new frontier's pieces as the steps find them (:attr:`fresh`), the
    pairs of the bottom-up sub-steps for other pieces, the ``completed``
    bitmaps (int64 words, as they rotate) and the column chunk's frontier map.
    """

    duo = False  # the 2 x 1 route reads host bitmaps as its state
    nchunks = 1

    def __init__(self, name: str, g: Any, in_deg: np.ndarray | None = None) -> None:
        self.name = name
        backend = self.backend = get_backend(name)
        self.xp = xp = backend.xp
        self.to_host = backend.to_host
        # Every message crosses through it: pinned host buffers kept with the graph, or
        # device buffers where the MPI library takes them (spbfs.mpi.staging).
        self.staging = self.wire = Staging(xp, name == "cupy" and
                                           cuda_aware(g.config.cuda_aware))
        self.bitmap = self.newest_bitmap
        grid, d = g.grid, g.dist
        if name == "cupy":
            # Ranks sharing a node take its devices in turn, by node-local rank.
            xp.cuda.Device(grid.local_rank % xp.cuda.runtime.getDeviceCount()).use()
        self.g = g
        self.b, self.B = d.b, d.B64
        self.size = g.hi - g.lo
        self.pc = grid.pc
        self.transposed = g.transposed_topdown
        self.td_piece0 = grid.i * grid.pc if self.transposed else grid.j * grid.pr
        self.bu_piece0 = grid.j * grid.pr
        B = self.B
        self.tblock = self.resident(g.stored_tblock)
        self._td_block: Any = self.tblock if self.transposed else None
        # The segments' rows with entries (tblock's non-empty columns): the only rows
        # a bottom-up level can find a parent for.
        ncols = self.tblock.shape[1]
        self.open = xp.zeros(ncols, dtype=bool)
        if self.tblock.jc is None:
            ptr = self.tblock.ptr
            self.open[:] = ptr[1:] != ptr[:-1]
        else:
            self.open[self.tblock.jc.astype(np.int64)] = True
        deg = np.zeros(B, np.int64)
        deg[:self.size] = g._deg
        # The padding ids beyond the piece: done from the start (never reached).
        self.pad = xp.arange(B) >= self.size
        # A directed graph's in-degrees of the piece (the search's, given by the
        # grid engine): what visited_in_degrees sums.
        self.in_deg: Any = None
        if in_deg is not None:
            deg_in = np.zeros(B, np.int64)
            deg_in[:self.size] = in_deg
            deg, deg_in = self.up(deg, deg_in)
            self.in_deg = deg_in
            self.in_mark = xp.zeros(B, dtype=bool)
        else:
            (deg,) = self.up(deg)
        self.deg = deg
        self.parents = xp.full(B, -1, dtype=np.int64)
        self.levels = xp.full(B, -1, dtype=np.int64)
        nsent = (grid.pr if self.transposed else grid.pc) * B
        self.sent = xp.zeros(nsent, dtype=bool)
        self.reset_sent = nsent > B
        self.front = xp.zeros(grid.pr * B, dtype=bool)
        # The completed bitmaps a bottom-up level rotates (two: one is being received).
        self.comps = (xp.zeros(d.bw, np.uint64), xp.zeros(d.bw, np.uint64))
        self.fresh: list[Any] = []  # the level's new frontier, as its steps found it
        self.found_for: dict[int, Any] = {}  # a bottom-up level's pairs, by segment
        self.depth = 0
        self.out: tuple[np.ndarray, np.ndarray] | None = None
        self._block: Any = None  # B_ij on the device, for semiring products (first use)

    def resident(self, block: Any) -> Any:
        """``block`` on this engine's device: itself when there already, else a copy
        held as a ``cupyx.scipy.sparse`` matrix (:func:`device_block`); on the host,
        a device-built graph's host copy of its block (made once, kept with the graph)."""
        if block.backend.xp is self.xp:
            return block
        if self.xp is np:
            g = self.g
            if block is g.stored_tblock:
                return g.tblock
            if block is g.stored_block:
                return g.block
            return block.to_backend(self.backend)
        return device_block(self.backend, block)

    @property
    def td_block(self) -> Any:
        """Column access of the top-down product (a directed graph's ``B_ij``, on first use)."""
        if self._td_block is None:
            self._td_block = self.resident(self.g.stored_block)
        return self._td_block

    def block(self, transpose: bool = False) -> Any:
        """``B_ij`` (``transpose``: the stored ``Bᵀ`` block) on the device (first use)."""
        if transpose:
            return self.tblock
        if self._block is None:
            self._block = self.td_block if not self.transposed else \
                self.resident(self.g.stored_block)
        return self._block

    # -- the search's state ------------------------------------------------------------
    def begin(self, parents: np.ndarray, levels: np.ndarray) -> None:
        self.out = (parents, levels)
        self.parents.fill(-1)
        self.levels.fill(-1)
        if self.reset_sent:
            self.sent.fill(False)
        if self.in_deg is not None:
            self.in_mark.fill(False)

    def claim(self, v: int, parent: int) -> Any:
        self.parents[v] = parent
        self.levels[v] = 0
        self.depth = 0
        return self.xp.full(1, v, dtype=np.int64)

    def no_frontier(self) -> Any:
        return self.xp.zeros(0, np.int64)

    def reached(self, v: int) -> bool:
        return bool(self.parents[v] != -1)

    def finish(self) -> None:
        parents, levels = self.out  # type: ignore[misc]
        n = self.size
        parents[:] = self.to_host(self.parents[:n])
        levels[:] = self.to_host(self.levels[:n])

    # -- the level's new frontier -----------------------------------------------------
    def next_level(self, depth: int) -> None:
        self.depth = depth
        self.fresh = []
        self.found_for = {}

    def new_frontier(self, k: int) -> Any:
        fresh = self.fresh
        if not fresh:
            return self.xp.zeros(0, np.int64)
        if len(fresh) == 1:  # each step lists its finds sorted
            return fresh[0]
        return self.xp.sort(self.xp.concatenate(fresh))

    found = new_frontier

    def newest_bitmap(self) -> Any:
        """The newest frontier piece's bitmap (its vertices' level is the latest level's),
        as int64 words on the device: the message of the bitmap encoding."""
        return self._pack(self.levels == self.depth).view(np.int64)

    def _pack(self, flags: Any) -> Any:
        """A bool map of ``B64``-aligned length as uint64 words (bit ``i % 64`` of word
        ``i // 64``, as the host bitmaps)."""
        return self.xp.packbits(flags, bitorder="little").view(np.uint64)

    def _unpack(self, words: Any) -> Any:
        """Words of a bitmap as a bool map (a new array)."""
        return self.xp.unpackbits(words.view(np.uint8), bitorder="little").view(bool)

    def chunk_ids(self, parts: list[tuple[Any, bool]]) -> Any:
        xp, B = self.xp, self.B
        if len(parts) == 1 and not parts[0][1]:
            return parts[0][0].astype(np.int64, copy=False)
        pieces = []
        for i2, (m, bits) in enumerate(parts):
            ids = xp.flatnonzero(self._unpack(m)) if bits else m.astype(np.int64, copy=False)
            pieces.append(ids + i2 * B if i2 else ids)
        return xp.concatenate(pieces)

    def _global(self, u: Any, piece0: int) -> Any:
        """Global ids of chunk-local ids ``u`` (pieces of ``B64`` padded slots, ``b`` ids)."""
        B = self.B
        return (piece0 + u // B) * self.b + u % B

    def _take(self, kids: Any, par: Any, depth: int) -> int:
        """Own children reached at ``depth``: parents, levels, listed in the new frontier;
        their degree sum (a scalar read)."""
        self.parents[kids] = par
        self.levels[kids] = depth
        self.fresh.append(kids)
        return int(self.deg[kids].sum())

    def _split(self, flat: Any, t: Any, parts: int, w: int) -> list[Any]:
        """``flat`` (``w`` words an item, sorted by part ``t``) as one message per part.

        The parts' lengths come to the host through the staging (a count per
        part: MPI is told how much to send); the messages are views of ``flat``.
        """
        cl = self.staging.down(self.xp.bincount(t, minlength=parts).astype(np.int64)).tolist()
        sends = []
        at = 0
        for c in cl:
            sends.append(flat[w * at:w * (at + c)])
            at += c
        return sends

    # -- top-down routes -----------------------------------------------------------------
    def topdown_own(self, cols: Any, depth: int, nparts: int) -> tuple[int, int, int]:
        kids, scanned, degsum = vk.topdown_step(self.xp, self.td_block, cols, self.parents,
                                                self.levels, True, depth, self.deg,
                                                parent_ids=self._global(cols, self.td_piece0))
        self.fresh.append(kids)
        return int(kids.shape[0]), scanned, degsum

    def topdown_fold(self, cols: Any, own: int, parts: int) -> tuple[list[Any], int, int, int]:
        xp, B = self.xp, self.B
        sent = self.sent
        # Never send a vertex of the own piece already reached.
        sent[own * B:(own + 1) * B] |= self.parents != -1
        rows, owner, _ = vk.expand(xp, self.td_block, cols)
        keep = ~sent[rows]
        kids, at = vk.first_parents(xp, rows[keep], owner[keep])
        sent[kids] = True
        t = kids // B  # kids are sorted: so are their parts
        pairs = xp.stack([kids - t * B, self._global(cols[at], self.td_piece0)], axis=1)
        sends = self._split(pairs.reshape(-1), t, parts, 2)
        msgs = sum(1 for p, x in enumerate(sends) if p != own and x.shape[0])
        return sends, int(kids.shape[0]), int(rows.shape[0]), msgs

    def topdown_pairs(self, cols: Any, own: int, parts: int, depth: int,
                      packed: bool) -> tuple[list[Any], int, int, int]:
        xp, B = self.xp, self.B
        rows, owner, _ = vk.expand(xp, self.td_block, cols)
        olo = own * B if own >= 0 else -1
        mine = (rows >= olo) & (rows < olo + B) if own >= 0 else xp.zeros(rows.shape[0], bool)
        # The own part's children are taken at once (not reached yet); the others are
        # sent once per search ("sent").
        fresh = xp.where(mine, self.parents[xp.where(mine, rows - olo, 0)] == -1, ~self.sent[rows])
        kids, at = vk.first_parents(xp, rows[fresh], owner[fresh])
        par = self._global(cols[at], self.td_piece0)
        ok = (kids >= olo) & (kids < olo + B) if own >= 0 else xp.zeros(kids.shape[0], bool)
        ours = kids[ok] - olo
        ds = self._take(ours, par[ok], depth)
        others = kids[~ok]
        self.sent[others] = True
        t = others // B
        local = others - t * B
        if packed:
            words = (local << 32) | par[~ok]
        else:
            words = xp.stack([local, par[~ok]], axis=1).reshape(-1)
        sends = self._split(words, t, parts, 1 if packed else 2)
        return sends, int(rows.shape[0]), int(ours.shape[0]), ds

    # -- bottom-up -----------------------------------------------------------------------
    def load_front(self, parts: list[tuple[Any, bool]] | None, mark_sent: bool) -> None:
        xp, B = self.xp, self.B
        maps = []
        for m, bits in parts or ():
            if bits:
                maps.append(self._unpack(m))
            else:
                f = xp.zeros(B, dtype=bool)
                f[m] = True
                maps.append(f)
        self.front = maps[0] if len(maps) == 1 else xp.concatenate(maps)
        if mark_sent:
            self.sent |= self.front[:self.sent.shape[0]]

    def completed(self) -> Any:
        comp = self.comps[0]
        comp[...] = self._pack((self.parents != -1) | self.pad)
        return comp

    def spare(self, comp: Any) -> Any:
        return self.comps[1] if comp is self.comps[0] else self.comps[0]

    def reserve(self, t: int, comp: Any, k: int, pairs: bool) -> None:
        pass  # the finds are arrays of their own

    def bottomup_segment(self, t: int, own: bool, comp: Any, depth: int, nk: int,
                         k0: int) -> tuple[int, int, int, int]:
        xp, B = self.xp, self.B
        done = self._unpack(comp)
        cand = xp.flatnonzero(self.open[t * B:(t + 1) * B] & ~done)
        seg, nbr, scanned = vk.first_hits(xp, self.tblock, cand + t * B, self.front)
        rows = cand[seg]
        par = self._global(nbr, self.bu_piece0)
        done[rows] = True
        comp[...] = self._pack(done)
        m = int(rows.shape[0])
        if own:
            return k0, scanned, self._take(rows, par, depth), nk + m
        self.found_for[t] = xp.stack([rows, par], axis=1).reshape(-1)
        return k0 + m, scanned, 0, nk

    def updates(self, segs: list[int], bounds: list[int]) -> tuple[list[Any], int]:
        sends: list[Any] = [None] * self.pc
        msgs = 0
        for t, x in self.found_for.items():
            sends[t] = x
            msgs += x.shape[0] > 0
        return sends, msgs

    # -- merge ---------------------------------------------------------------------------
    def merge(self, recv: list[Any], skip: int, depth: int, k: int,
              packed: bool) -> tuple[int, int]:
        got = [p for t, p in enumerate(recv) if t != skip and p is not None and p.shape[0]]
        if not got:
            return k, 0
        xp = self.xp
        d = got[0] if len(got) == 1 else xp.concatenate(got)
        if packed:
            v, par = d >> 32, d & 0xFFFFFFFF
        else:
            v, par = d[0::2], d[1::2]
        # Each child once, with its smallest parent.
        order = xp.lexsort(xp.stack([par, v]))
        v, par = v[order], par[order]
        v, first = xp.unique(v, return_index=True)
        par = par[first]
        old = self.parents[v]
        fresh = old == -1
        # A child reached earlier in this level keeps the smaller parent.
        again = ~fresh & (self.levels[v] == depth)
        self.parents[v[again]] = xp.minimum(old[again], par[again])
        kids = v[fresh]
        ds = self._take(kids, par[fresh], depth)
        return k + int(kids.shape[0]), ds

    def visited_in_degrees(self) -> int:
        reached = self.parents != -1
        newly = reached & ~self.in_mark
        self.in_mark = reached
        return int(self.in_deg[newly].sum())

    # -- moving data (the other semirings' products) -------------------------------------
    def _up(self, a: np.ndarray) -> Any:
        """A received buffer on the device, as int64 (through the staging)."""
        return self.staging.up(a)

    def _down(self, *parts: Any) -> list[np.ndarray]:
        """Device int64 arrays to the host in one transfer, split again.

        Views of the staging's buffer, valid until the next call: callers copy them.
        """
        xp = self.xp
        sizes = [int(p.size) for p in parts]
        flat = self.staging.down(xp.concatenate([p.reshape(-1).astype(np.int64) for p in parts]))
        out = []
        at = 0
        for s in sizes:
            out.append(flat[at:at + s])
            at += s
        return out

    def up(self, *parts: np.ndarray) -> list[Any]:
        """Host arrays on the device in one transfer, each in its own dtype.

        8-byte dtypes travel bit for bit (as int64 words), others as int64 and
        are cast back (bool, int32).
        """
        if not parts:
            return []
        flat = self._up(np.concatenate([_words(p.reshape(-1)) for p in parts]))
        ends = np.cumsum([p.size for p in parts]).tolist()
        return _typed([flat[e - p.size:e] for e, p in zip(ends, parts, strict=True)], parts)

    def down(self, *parts: Any) -> list[np.ndarray]:
        """Device arrays on the host in one transfer, each in its own dtype (see :meth:`up`)."""
        if not parts:
            return []
        words = self._down(*[_words(p) for p in parts])
        if self.staging.mode == "pinned":
            # Views of the staging buffer, overwritten by the next transfer: the
            # algorithms keep what comes down across several of them.
            words = [w.copy() for w in words]
        return _typed(words, parts)

    # -- other semirings -----------------------------------------------------------------
    def semiring_product(self, cols: np.ndarray, vals: np.ndarray, semiring: Any,
                         dtype: np.dtype, *, transpose: bool = False,
                         done: np.ndarray | None = None,
                         block: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """The local multiply of a product over any semiring, host in and host out.

        ``x`` is sparse: chunk-local ids ``cols`` and their 8-byte ``vals``, as
        the expand brought them. Without ``done``: ``y = B ⊕.⊗ x``
        (:func:`semirings.kernels.spmsv`; ``transpose``: over ``Bᵀ``, the
        stored ``tblock``). With ``done`` (a bool per row of the row chunk, the
        gathered visited flags): the bottom-up pull of the rows not done
        (:func:`semirings.kernels.spmv` with ``x`` dense and its entries in
        ``present``). The kernels are the semiring package's for this
        engine's backend (the numba ones on host arrays when ``name`` is
        ``"numba"``). One transfer up per message (``x``, ``done``), one down:
        the result's ``(rows, values)``, values in ``dtype`` (8 bytes).
        ``block``: a block already on this engine's device (a weighted one, see
        :meth:`resident`) is multiplied instead; a host one is the graph's own,
        whose device copy is used.
        """
        xp = self.xp
        if block is None or block.backend.xp is not xp:
            block = self.block(transpose)
        n = cols.shape[0]
        both = self._up(np.concatenate([cols.astype(np.int64, copy=False),
                                        vals.view(np.int64)]))
        c, v = both[:n], both[n:].view(vals.dtype)
        if done is None:
            y = spmsv(block, SparseVector(c, v, block.shape[1], check=False), semiring,
                      backend=self.backend, check=False)
        else:
            x = xp.zeros(block.shape[1], dtype=vals.dtype)
            x[c] = v
            present = xp.zeros(block.shape[1], dtype=bool)
            present[c] = True
            y = spmv(block, x, semiring, mask=xp.asarray(done), complement=True,
                     present=present, backend=self.backend, method="pull", check=False)
        rows, got = self._down(y.indices, y.values.astype(dtype).view(np.int64))
        return rows, got.view(dtype)


def device_block(backend: Any, block: Any) -> Any:
    """A host block on the GPU, held as a ``cupyx.scipy.sparse.csr_matrix``.

    The matrix is ``Bᵀ`` by rows (row ``u`` lists the entries of column ``u``
    of ``B``): over every column for csr, over the ``nzc`` non-empty columns
    only for dcsc, whose column ids ``jc`` stay a device array beside it, so
    no pointer array of the block's width is made and a hypersparse block
    keeps its ``O(nnz + nzc)`` memory. The returned block's ``ptr``/``ind``
    (and values) *are* the matrix's ``indptr``/``indices`` (``data``): the
    kernels read the matrix, in the index dtype cupyx chose. A pattern's
    matrix holds bool ones (cupyx stores bool, float and complex values
    only), as does a block whose values are of another dtype, which then
    keep their own device array. Each host array goes up once.
    """
    xp = backend.xp
    values = None if block.data is None else xp.asarray(block.data)
    stored = values is not None and values.dtype.char in "?fdFD"
    rows = block.nzc if block.jc is not None else block.shape[1]
    m = backend.sparse.csr_matrix(
        (values if stored else xp.ones(block.nnz, dtype=bool), xp.asarray(block.ind),
         xp.asarray(block.ptr)), shape=(rows, block.shape[0]))
    jc = None if block.jc is None else xp.asarray(block.jc)
    out = type(block)(block.shape, m.indptr, m.indices, m.data if stored else values, jc,
                      backend=backend)
    out.matrix_on_device = m  # the storage itself, kept with its view
    return out


def array_local(g: Any, name: str) -> ArrayLocal:
    """The array engine of ``g`` on ``name`` for products over any semiring (made once).

    Kept with the graph (its device copies of the blocks serve the graph's
    next semiring searches and algorithms); not the BFS's engine, whose
    ``visited`` bitmap is the search's own.
    """
    local = g._semiring_locals.get(name)
    if local is None:
        local = g._semiring_locals[name] = ArrayLocal(name, g)
    return local


def _words(a: Any) -> Any:
    """``a`` as int64 words: 8-byte values bit for bit, others converted."""
    return a.view(np.int64) if a.dtype.itemsize == 8 else a.astype(np.int64)


def _typed(words: list[Any], like: tuple[Any, ...]) -> list[Any]:
    """Flat int64 ``words`` back in the dtypes and shapes of ``like``."""
    return [(w.view(p.dtype) if p.dtype.itemsize == 8 else w.astype(p.dtype)).reshape(p.shape)
            for w, p in zip(words, like, strict=True)]
