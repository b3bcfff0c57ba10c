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
and degrees, the "already sent" map and the column chunk's frontier map (bool
arrays). The grid's messages are host buffers (the MPI library takes host
memory), so data crosses only at the exchange, explicitly, once per message,
through the engine's :class:`~spbfs.mpi.staging.Staging`: a received frontier,
bitmap or set of pairs goes up; what a step sends (its pairs with their
counts, its new frontier piece with its degree sum) comes down in one
transfer. The host ``visited`` bitmap the exchange reads is kept from those ids.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from semirings.backend import get_backend
from semirings.kernels import spmsv, spmv
from semirings.vector import SparseVector
from spbfs.kernels import bfs_vectorized as vk
from spbfs.kernels.bitmaps import set_bits
from spbfs.mpi.staging import Staging, cuda_aware

__all__ = ["ArrayLocal", "array_local", "device_block"]


class ArrayLocal:
    """The grid's local engine on an array module (``name``: ``"numpy"`` or ``"cupy"``).

    Made once per graph; its device copies of the blocks and degrees stay for
    the graph's next searches.
    """

    duo = False  # the 2 x 1 route reads host bitmaps as its state
    nchunks = 1

    def __init__(self, name: str, g: Any, visited: np.ndarray) -> None:
        self.name = name
        backend = self.backend = get_backend(name)
        self.xp = xp = backend.xp
        self.to_host = backend.to_host
        # Every message crosses through it: pinned host buffers kept with the graph, or
        # device buffers where the MPI library takes them (spbfs.mpi.staging).
        self.staging = Staging(xp, name == "cupy" and cuda_aware(g.config.cuda_aware))
        grid, d = g.grid, g.dist
        if name == "cupy":
            # Ranks sharing a node take its devices in turn, by node-local rank.
            xp.cuda.Device(grid.local_rank % xp.cuda.runtime.getDeviceCount()).use()
        self.g = g
        self.visited = visited
        self.b, self.B = d.b, d.B64
        self.size = g.hi - g.lo
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
        self.deg = xp.asarray(deg)
        self.parents = xp.full(B, -1, dtype=np.int64)
        self.levels = xp.full(B, -1, dtype=np.int64)
        nsent = (grid.pr if self.transposed else grid.pc) * B
        self.sent = xp.zeros(nsent, dtype=bool)
        self.reset_sent = nsent > B
        self.front = xp.zeros(grid.pr * B, dtype=bool)
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

    def claim(self, v: int, parent: int) -> None:
        self.parents[v] = parent
        self.levels[v] = 0
        set_bits(np.array([v], np.int64), self.visited, 0)

    def reached(self, v: int) -> bool:
        return bool(self.parents[v] != -1)

    def finish(self) -> None:
        parents, levels = self.out  # type: ignore[misc]
        n = self.size
        parents[:] = self.to_host(self.parents[:n])
        levels[:] = self.to_host(self.levels[:n])

    # -- moving data ------------------------------------------------------------------
    def _up(self, a: np.ndarray) -> Any:
        """A received buffer on the device, as int64 (through the staging)."""
        return self.staging.up(a)

    def _bits(self, words: np.ndarray) -> Any:
        """A host bitmap (uint64 words) as a bool map on the device.

        Through the staging as every received message (the words bit for bit
        as int64): pinned by default, as it came where the library is CUDA-aware.
        """
        raw = self.staging.up(words.view(np.int64)).view(np.uint8)
        return self.xp.unpackbits(raw, bitorder="little").view(bool)

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

    def _global(self, u: Any, piece0: int) -> Any:
        """Global ids of chunk-local ids ``u`` (pieces of ``B64`` padded slots, ``b`` ids)."""
        B = self.B
        return (piece0 + u // B) * self.b + u % B

    def _take(self, kids: Any, par: Any, depth: int) -> Any:
        """Own children reached at ``depth``: parents and levels; their degrees (device)."""
        self.parents[kids] = par
        self.levels[kids] = depth
        return self.deg[kids].sum().reshape(1)

    def _listed(self, ids: np.ndarray, new: np.ndarray, k: int) -> int:
        """New own ids (host) appended to ``new`` from ``k`` and marked in ``visited``."""
        m = ids.shape[0]
        new[k:k + m] = ids
        set_bits(ids, self.visited, 0)
        return k + m

    # -- top-down routes -----------------------------------------------------------------
    def topdown_own(self, cols: np.ndarray, depth: int, new: np.ndarray,
                    nparts: int) -> tuple[int, int, int]:
        f = self._up(cols)
        kids, scanned, degsum = vk.topdown_step(self.xp, self.td_block, f, self.parents,
                                                self.levels, True, depth, self.deg,
                                                parent_ids=self._global(f, self.td_piece0))
        (ids,) = self._down(kids)
        return self._listed(ids, new, 0), scanned, degsum

    def topdown_fold(self, cols: np.ndarray, own: int, counts: np.ndarray,
                     out: np.ndarray) -> tuple[int, int, int]:
        xp, B = self.xp, self.B
        nparts = counts.shape[0]
        f = self._up(cols)
        sent = self.sent
        # Never send a vertex of the own piece already reached.
        sent[own * B:(own + 1) * B] |= self.parents != -1
        rows, owner, _ = vk.expand(xp, self.td_block, f)
        keep = ~sent[rows]
        kids, at = vk.first_parents(xp, rows[keep], owner[keep])
        sent[kids] = True
        t = kids // B
        cnt = xp.bincount(t, minlength=nparts)
        pairs = xp.stack([kids - t * B, self._global(f[at], self.td_piece0)], axis=1)
        cl, words = self._down(cnt, pairs)
        counts[:] = cl
        # Part t's pairs go to words 2 t B64 on, as the senders read them.
        at0 = 0
        msgs = 0
        for p, c in enumerate(cl.tolist()):
            out[2 * p * B:2 * (p * B + c)] = words[2 * at0:2 * (at0 + c)]
            at0 += c
            msgs += p != own and c > 0
        return at0, int(rows.shape[0]), msgs

    def topdown_pairs(self, cols: np.ndarray, own: int, counts: np.ndarray, depth: int,
                      new: np.ndarray, packed: bool,
                      holder: list[np.ndarray]) -> tuple[np.ndarray, int, int, int, int]:
        xp, B = self.xp, self.B
        parts = counts.shape[0]
        f = self._up(cols)
        rows, owner, _ = vk.expand(xp, self.td_block, f)
        olo = own * B if own >= 0 else -1
        mine = (rows >= olo) & (rows < olo + B) if own >= 0 else xp.zeros(rows.shape[0], bool)
        # The own part's children are taken at once (not reached yet); the others are
        # sent once per search ("sent").
        fresh = xp.where(mine, self.parents[xp.where(mine, rows - olo, 0)] == -1, ~self.sent[rows])
        kids, at = vk.first_parents(xp, rows[fresh], owner[fresh])
        par = self._global(f[at], self.td_piece0)
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
            words = xp.stack([local, par[~ok]], axis=1)
        cnt = xp.bincount(t, minlength=parts)
        cl, ids, dsum, flat = self._down(cnt, ours, ds, words)
        counts[:] = cl
        k = self._listed(ids, new, 0)
        w = 1 if packed else 2
        cap = max(int(cl.max()) if parts else 0, 1)
        buf = holder[0]
        if buf.shape[0] < w * parts * cap:
            buf = holder[0] = np.empty(w * parts * cap, np.int64)
        at0 = 0
        for p, c in enumerate(cl.tolist()):
            buf[w * p * cap:w * (p * cap + c)] = flat[w * at0:w * (at0 + c)]
            at0 += c
        return buf, cap, int(rows.shape[0]), k, int(dsum[0])

    # -- bottom-up -----------------------------------------------------------------------
    def load_front(self, front: np.ndarray, mark_sent: bool) -> None:
        self.front = self._bits(front)
        if mark_sent:
            self.sent |= self.front[:self.sent.shape[0]]

    def candidates(self, t: int, comp: np.ndarray) -> int:
        slots = self.g.seg_slots
        return int(slots[t + 1] - slots[t])

    def bottomup_segment(self, t: int, own: bool, comp: np.ndarray, depth: int,
                         new: np.ndarray, nk: int, k0: int,
                         pairs: np.ndarray) -> tuple[int, int, int, int]:
        xp, B = self.xp, self.B
        done = self._bits(comp)[:B]
        cand = xp.flatnonzero(self.open[t * B:(t + 1) * B] & ~done)
        seg, nbr, scanned = vk.first_hits(xp, self.tblock, cand + t * B, self.front)
        rows = cand[seg]
        par = self._global(nbr, self.bu_piece0)
        if own:
            ds = self._take(rows, par, depth)
            ids, dsum = self._down(rows, ds)
            set_bits(ids, comp, 0)
            return k0, scanned, int(dsum[0]), self._listed(ids, new, nk)
        (words,) = self._down(xp.stack([rows, par], axis=1))
        m = words.shape[0] // 2
        pairs[2 * k0:2 * (k0 + m)] = words
        set_bits(words[0::2], comp, 0)
        return k0 + m, scanned, 0, nk

    # -- merge ---------------------------------------------------------------------------
    def merge(self, recv: list[np.ndarray], skip: int, depth: int, new: np.ndarray, k: int,
              packed: bool) -> tuple[int, int]:
        got = [p for t, p in enumerate(recv) if t != skip and p.shape[0]]
        if not got:
            return k, 0
        xp = self.xp
        d = self._up(got[0] if len(got) == 1 else np.concatenate(got))
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
        ids, dsum = self._down(kids, ds)
        return self._listed(ids, new, k), int(dsum[0])

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
        local = g._semiring_locals[name] = ArrayLocal(name, g, np.zeros(g.dist.bw, np.uint64))
    return local


def _words(a: Any) -> Any:
    """``a`` as int64 words: 8-byte values bit for bit, others converted."""
    return a.view(np.int64) if a.dtype.itemsize == 8 else a.astype(np.int64)


def _typed(words: list[Any], like: tuple[Any, ...]) -> list[Any]:
    """Flat int64 ``words`` back in the dtypes and shapes of ``like``."""
    return [(w.view(p.dtype) if p.dtype.itemsize == 8 else w.astype(p.dtype)).reshape(p.shape)
            for w, p in zip(words, like, strict=True)]
