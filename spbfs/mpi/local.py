"""The grid's local-engine seam: one rank's local work of a search, behind one protocol.

The grid search (:class:`spbfs.mpi.bfs.GridEngine`) moves frontiers and pairs
between ranks and decides each level's direction; everything a rank computes
on its own block between two exchanges goes through a :class:`LocalEngine`.
Which top-down operation a level asks for is the plan's choice by grid shape
(a *route*, fixed per graph: :func:`topdown_route`), never a branch on how an
engine works inside.

An engine owns the rank's search state (``parents``, ``levels`` and which of
its piece's vertices are reached) and the level state the messages are made
of (the new frontier piece, the pairs it sends, the bottom-up ``completed``
bitmaps and the column chunk's frontier) where its arrays live; the level loop
sees counts only, and the phases hand the engine's arrays to MPI and back
through its ``wire`` (:class:`spbfs.mpi.staging.Staging`). Two engines
implement it:

* :class:`NumbaLocal` (here): the numba kernels of :mod:`spbfs.mpi._kernels`
  over host arrays, one call per operation and level, its state the grid's own
  host arrays.
* :class:`spbfs.mpi.local_array.ArrayLocal`: whole-array steps written once
  against ``xp`` (numpy on the CPU, cupy on a GPU), its state on its device.

A new local engine implements the methods of :class:`LocalEngine` and is named
in :func:`local_engine`; the phases, the routes and the level loop stay as
they are.
"""

from __future__ import annotations

from typing import Any, Protocol

import numba
import numpy as np

from spbfs.kernels.bfs_steps import NO_INDEX, search_index
from spbfs.mpi import _kernels as K

__all__ = ["BFS_BACKENDS", "ROUTES", "LocalEngine", "NumbaLocal", "bfs_backend", "local_engine",
           "topdown_route"]

#: The local engines of the grid search, by ``Config.backend``.
BFS_BACKENDS = ("numba", "numpy", "cupy")

#: The top-down routes by grid shape (see :func:`topdown_route`).
ROUTES = ("own", "fold", "pairs", "duo")


def bfs_backend(config: Any, comm: Any = None, *, graph: Any = None) -> str:
    """The grid's local engine for ``config.backend`` (the same on every rank).

    ``cupy`` runs the array engine on each rank's GPU; where a rank has no
    usable GPU (no cupy, no device, a cupy older than the package needs),
    every rank raises. ``auto`` is cupy where every rank has a usable GPU,
    else numba, silently: the user did not ask for a GPU. Whether every rank
    has one is agreed on ``comm`` (one small Allreduce, collective) and kept
    with ``graph`` when given, so a graph's searches agree once.

    Raises
    ------
    CollectiveError
        For ``cupy`` without a usable GPU on some rank, naming ``backend``.
    """
    backend = config.backend
    if backend not in ("auto", "cupy"):
        return backend
    why = getattr(graph, "_gpu_missing", None)
    if why is None:
        why = _gpu_missing(comm)
        if graph is not None:
            graph._gpu_missing = why
    if not why:
        return "cupy"
    if backend == "auto":
        return "numba"
    from spbfs.mpi.comm import CollectiveError

    raise CollectiveError(f"config 'backend' is 'cupy' but the grid cannot run it: {why}; "
                          f"the grid's CPU engines are numba or numpy")


def _gpu_missing(comm: Any) -> str:
    """Why some rank of ``comm`` has no usable GPU; empty when every rank has one."""
    from semirings.backend import get_backend
    from spbfs.mpi import comm as C

    why = ""
    try:
        get_backend("cupy")
    except RuntimeError as exc:
        why = str(exc)
    if comm is not None and comm.Get_size() > 1:
        ok = C.allreduce(comm, np.array([0 if why else 1]), "min")[0]
        if ok == 0 and not why:
            why = "another rank of the grid has no usable GPU"
    return why


def topdown_route(transposed: bool, pr: int, pc: int, duo: bool) -> str:
    """The top-down operation a grid asks of its local engine, by shape.

    ``own``: the product's children are all this rank's piece (one processor
    column, or one row for the transposed product): search and update in one
    pass. ``fold``: children go to the row's ranks as pairs (``B x`` with
    ``pc > 1``). ``pairs``: the transposed product's children go down the
    column as pairs, the own part's taken at once. ``duo``: the 2 x 1 grid's
    pairs route that counts the partner's level too (``duo`` says the plan
    and the engine allow it).
    """
    if transposed:
        if pr == 1:
            return "own"
        return "duo" if duo else "pairs"
    return "own" if pc == 1 else "fold"


class LocalEngine(Protocol):
    """One rank's local work of a grid search, and the level's state its messages are made of.

    Ids are local: rows of the top-down block are the child side, columns the
    frontier side (padded chunk ids, :class:`spbfs.mpi.grid.Distribution`);
    parents are written as global ids. Frontiers, the pairs a step sends and
    the ``completed`` bitmaps of the bottom-up rotation are arrays in the
    engine's memory (device arrays for a GPU engine); the phases hand them to
    MPI and back through :attr:`wire`. Only counts come to the level loop.
    """

    #: Backend name (``"numba"``, ``"numpy"``, ``"cupy"``).
    name: str
    #: Whether the engine runs the ``duo`` route (it reads the host state directly).
    duo: bool
    #: How the engine's arrays reach MPI (:class:`spbfs.mpi.staging.Staging`).
    wire: Any
    #: The newest frontier piece's bitmap as an int64 message (None: the phases'
    #: ``visited ^ prev``).
    bitmap: Any

    def begin(self, parents: np.ndarray, levels: np.ndarray) -> None:
        """A search starts: ``parents``/``levels`` (host, the piece) get its results."""

    def claim(self, v: int, parent: int) -> Any:
        """Mark piece-local ``v`` reached at level 0 with ``parent``; the one-vertex frontier."""

    def no_frontier(self) -> Any:
        """An empty frontier piece."""

    def reached(self, v: int) -> bool:
        """Whether piece-local ``v`` has a parent."""

    def finish(self) -> None:
        """Write the search's parents and levels to the host arrays of :meth:`begin`."""

    def next_level(self, depth: int) -> None:
        """A level starts: what it finds is the new frontier of :meth:`new_frontier`."""

    def new_frontier(self, k: int) -> Any:
        """The level's new frontier piece, sorted (``k`` ids found by its steps)."""

    def found(self, k: int) -> Any:
        """:meth:`new_frontier` where its ``k`` ids were found in increasing order."""

    def chunk_ids(self, parts: list[tuple[Any, bool]]) -> Any:
        """A chunk's frontier pieces (ids, or bitmaps as int64 words) as sorted chunk ids."""

    def topdown_own(self, cols: Any, depth: int, nparts: int) -> tuple[int, int, int]:
        """Route ``own``: children of ``cols`` taken at once.

        Returns (count, edges scanned, degree sum of the new).
        """

    def topdown_fold(self, cols: Any, own: int, parts: int) -> tuple[list[Any], int, int, int]:
        """Route ``fold``: pairs ``(row in part, parent)`` for each of ``parts`` parts.

        Returns (the parts' pair messages, pairs, edges scanned, parts other
        than ``own`` with pairs).
        """

    def topdown_pairs(self, cols: Any, own: int, parts: int, depth: int,
                      packed: bool) -> tuple[list[Any], int, int, int]:
        """Route ``pairs``: part ``own``'s children taken, the others' as pair messages.

        ``packed``: one word a pair. Returns (messages by part, edges scanned,
        own children, their degree sum).
        """

    def load_front(self, parts: list[tuple[Any, bool]] | None, mark_sent: bool) -> None:
        """A bottom-up level's column-chunk frontier from its pieces (``mark_sent``: also
        "sent"); ``None``: the engine's front buffer was filled already (the duo route)."""

    def completed(self) -> Any:
        """The own segment's ``completed`` bitmap as a bottom-up level starts."""

    def spare(self, comp: Any) -> Any:
        """The bitmap buffer the next rotated segment is received into (not ``comp``)."""

    def reserve(self, t: int, comp: Any, k: int, pairs: bool) -> None:
        """Room for segment ``t``'s finds after ``k`` pairs (``pairs``: found for others)."""

    def bottomup_segment(self, t: int, own: bool, comp: Any, depth: int, nk: int,
                         k0: int) -> tuple[int, int, int, int]:
        """Parents for segment ``t``'s open rows; finds marked in ``comp``.

        ``own``: finds taken (new frontier from ``nk``); else pairs ``(row,
        parent)`` from pair ``k0``. Returns (new k, edges scanned, degree sum
        of own finds, new nk).
        """

    def updates(self, segs: list[int], bounds: list[int]) -> tuple[list[Any], int]:
        """The level's pairs for other segments, by row rank (sub-step ``s`` found
        pairs ``bounds[s]`` to ``bounds[s + 1]`` for segment ``segs[s]``), and how
        many are not empty."""

    def merge(self, recv: list[Any], skip: int, depth: int, k: int,
              packed: bool) -> tuple[int, int]:
        """Apply received pairs (``recv[skip]`` passed over); returns (new k, degree sum)."""

    def visited_in_degrees(self) -> int:
        """The in-degrees summed over the piece's vertices visited since the last call."""


class NumbaLocal:
    """The numba kernels of :mod:`spbfs.mpi._kernels` as the grid's local engine.

    Its state is the grid's host arrays (``visited``/``prev`` and "sent"
    bitmaps, ``parents``, ``levels``, the new-frontier, pair and bitmap
    buffers kept with the graph, :class:`spbfs.mpi.bfs._Kept`): nothing to
    copy at the exchange. Made once per graph.
    """

    name = "numba"
    duo = True
    bitmap = None  # the phases' visited ^ prev

    def __init__(self, g: Any, kept: Any) -> None:
        from spbfs.mpi.staging import Staging

        grid, d = g.grid, g.dist
        self.g = g
        self.kept = kept
        (self.finds, self.newbufs, self.sent, self.cand, self.sendbufs,
         self.front, self.comp_a, self.comp_b, _, self.counts) = kept.arrays
        self.visited, self.prev = kept.visited, kept.prev
        self.wire = Staging(np, False)
        self.deg = g._deg
        self.b, self.B = d.b, d.B64
        self.bw = d.bw
        self.pc = grid.pc
        self.transposed = g.transposed_topdown
        # The top-down block and the global piece of its column 0.
        self.td_piece0 = grid.i * grid.pc if self.transposed else grid.j * grid.pr
        self.bu_piece0 = grid.j * grid.pr
        self.reset_sent = (grid.pr if self.transposed else grid.pc) > 1
        nthreads = numba.get_num_threads()
        self.nchunks = 4 * nthreads if nthreads > 1 else 1
        self.ncand = [-1] * grid.pc
        self.bits = self.sent[:0]  # the column chunk's frontier bitmap of a bottom-up level
        self.parents = self.levels = np.empty(0, np.int64)
        self.flip = 0
        self.newbuf = self.newbufs[0]
        self._indexes: dict[int, tuple[np.ndarray, int]] = {}

    def _td(self) -> tuple[Any, Any, Any, bool]:
        # Column access of the product the top-down runs (built on first use).
        return self.g._traw if self.transposed else self.g._raw

    def _index(self, jc: np.ndarray, dcsc: bool) -> tuple[np.ndarray, int]:
        # The column index the top-down kernels take: a dcsc block's columns are
        # found by bisection over jc (kept per block size: one array, not one a level).
        if not dcsc:
            return NO_INDEX, 0
        got = self._indexes.get(jc.shape[0])
        if got is None:
            got = self._indexes[jc.shape[0]] = search_index(jc)
        return got

    def begin(self, parents: np.ndarray, levels: np.ndarray) -> None:
        self.parents, self.levels = parents, levels
        self.ncand = [-1] * self.pc
        self.flip = 0
        self.newbuf = self.newbufs[0]
        if self.reset_sent:
            self.sent.fill(0)
        if self.kept.in_mark is not None:  # nothing summed yet (visited_in_degrees)
            np.copyto(self.kept.in_mark, self.kept.visited0)

    def claim(self, v: int, parent: int) -> np.ndarray:
        self.parents[v] = parent
        self.levels[v] = 0
        K.set_bits(np.array([v], np.int64), self.visited, 0)
        return np.array([v], dtype=self.newbufs[0].dtype)

    def no_frontier(self) -> np.ndarray:
        return self.newbufs[0][:0]

    def reached(self, v: int) -> bool:
        return bool(self.parents[v] != -1)

    def finish(self) -> None:
        pass  # the kernels wrote the host arrays

    # -- the level's new frontier -----------------------------------------------------
    def next_level(self, depth: int) -> None:
        # Two buffers in turn (the old frontier is still read); ``prev`` is ``visited``
        # as the level found it, so ``visited ^ prev`` is what the level marked.
        self.flip ^= 1
        self.newbuf = self.newbufs[self.flip]
        self.prev[:] = self.visited

    def new_frontier(self, k: int) -> np.ndarray:
        # Large pieces are read off the bits this level set in ``visited``, in order.
        if k * 64 > self.B:
            k = K.ids_and_not(self.visited, self.prev, 0, self.newbuf)
            return self.newbuf[:k]
        return np.sort(self.newbuf[:k])

    def found(self, k: int) -> np.ndarray:
        return self.newbuf[:k]

    def chunk_ids(self, parts: list[tuple[np.ndarray, bool]]) -> np.ndarray:
        B = self.B
        if len(parts) == 1 and not parts[0][1]:
            return parts[0][0]
        total = sum(B if bits else m.shape[0] for m, bits in parts)
        cols = np.empty(total, dtype=np.int64)
        k = 0
        for i2, (m, bits) in enumerate(parts):
            if bits:
                k = K.ids_from_bits(m.view(np.uint64), i2 * B, cols, k)
            else:
                cols[k:k + m.shape[0]] = m
                if i2:
                    cols[k:k + m.shape[0]] += i2 * B
                k += m.shape[0]
        return cols[:k]

    # -- top-down routes ---------------------------------------------------------------
    def topdown_own(self, cols: np.ndarray, depth: int, nparts: int) -> tuple[int, int, int]:
        ptr, ind, jc, dcsc = self._td()
        aux, shift = self._index(jc, dcsc)
        return K.topdown_own(ptr, ind, jc, aux, shift, cols, self.visited, self.parents,
                             self.levels, depth, self.deg, self.td_piece0, self.b, self.B,
                             self.newbuf, nparts, **K.formats(dcsc))

    def topdown_fold(self, cols: np.ndarray, own: int,
                     parts: int) -> tuple[list[np.ndarray], int, int, int]:
        ptr, ind, jc, dcsc = self.g._raw
        aux, shift = self._index(jc, dcsc)
        counts, out, B = self.counts[:parts], self.sendbufs[0], self.B
        nc, scanned, msgs = K.topdown_fold(ptr, ind, jc, aux, shift, cols, self.sent,
                                           self.visited, own, self.bw, parts, counts, out,
                                           self.td_piece0, self.b, B, **K.formats(dcsc))
        # Part t's pairs are written from word 2 t B64 on.
        sends = [out[2 * t * B:2 * (t * B + c)] for t, c in enumerate(counts.tolist())]
        return sends, nc, scanned, msgs

    def topdown_pairs(self, cols: np.ndarray, own: int, parts: int, depth: int,
                      packed: bool) -> tuple[list[np.ndarray], int, int, int]:
        tptr, tind, tjc, tdcsc = self.g._traw
        B, counts, holder = self.B, self.counts[:parts], self.sendbufs
        counts[:] = 0
        w = 1 if packed else 2
        buf = holder[0]
        cap = buf.shape[0] // (w * parts)
        at, e, scanned, k, degsum = 0, -1, 0, 0, 0
        nf = cols.shape[0]
        fmt = K.formats(tdcsc)
        while True:
            at, e, sc, k, ds = K.topdown_pairs(tptr, tind, tjc, cols, self.sent, counts, buf,
                                               cap, self.td_piece0, self.b, B, at, e, own,
                                               self.visited, self.parents, self.levels, depth,
                                               self.deg, self.newbuf, k, packed, **fmt)
            scanned += sc
            degsum += ds
            if at == nf:
                # Pairs of part t at pair t * cap.
                sends = [buf[w * t * cap:w * (t * cap + c)]
                         for t, c in enumerate(counts.tolist())]
                return sends, scanned, k, degsum
            # A part is full: grow every part's room (the first levels pay a few).
            new_cap = min(B, max(cap + cap // 2, 4096))
            grown = np.empty(w * parts * new_cap, np.int64)
            for t, c in enumerate(counts.tolist()):
                grown[w * t * new_cap:w * (t * new_cap + c)] = buf[w * t * cap:w * (t * cap + c)]
            buf, cap = grown, new_cap
            holder[0] = buf

    # -- bottom-up ---------------------------------------------------------------------
    def load_front(self, parts: list[tuple[np.ndarray, bool]] | None, mark_sent: bool) -> None:
        front, B, bw = self.front, self.B, self.bw
        if parts is not None:
            for i2, (m, bits) in enumerate(parts):
                if bits:
                    front[i2 * bw:(i2 + 1) * bw] = m.view(np.uint64)
                else:
                    front[i2 * bw:(i2 + 1) * bw] = 0
                    K.set_bits(m, front, i2 * B)
        self.bits = front
        if mark_sent:
            np.bitwise_or(self.sent, front, out=self.sent)

    def completed(self) -> np.ndarray:
        # One processor column: the own segment is the whole search, no copy needed.
        if self.pc == 1:
            return self.visited
        comp = self.comp_a
        comp[:] = self.visited
        return comp

    def spare(self, comp: np.ndarray) -> np.ndarray:
        return self.comp_b if comp is self.comp_a else self.comp_a

    def _candidates(self, t: int, comp: np.ndarray) -> int:
        """At least the finds segment ``t`` can have (candidates listed where kept)."""
        nc = self.ncand[t]
        ne = self.g.nonempty
        if nc < 0 and ne is not None:  # csr, first bottom-up level: list the open rows
            B, bw = self.B, self.bw
            nc = self.ncand[t] = K.ids_and_not(ne[t * bw:(t + 1) * bw], comp, t * B,
                                               self.cand[t * B:(t + 1) * B])
        if nc >= 0:
            return nc
        slots = self.g.seg_slots
        return int(slots[t + 1] - slots[t])

    def reserve(self, t: int, comp: np.ndarray, k: int, pairs: bool) -> None:
        # Grown to what a level needed, not to the row chunk: a search with few
        # candidates keeps little; the first k pairs already written stay.
        need = k + self._candidates(t, comp)
        # A little room beyond the need: the next searches need about as much.
        size = min(need + need // 8, self.pc * self.B)
        if self.nchunks > 1 and self.finds[0].shape[0] < need:
            # The scratch of the search in parallel chunks.
            self.finds[0] = np.empty(size, np.int64)
            self.finds[1] = np.empty(size if self.pc > 1 else 0, np.int64)
        buf = self.sendbufs[0]
        if pairs and buf.shape[0] < 2 * need:
            grown = np.empty(2 * size, np.int64)
            grown[:2 * k] = buf[:2 * k]
            self.sendbufs[0] = grown

    def bottomup_segment(self, t: int, own: bool, comp: np.ndarray, depth: int, nk: int,
                         k0: int) -> tuple[int, int, int, int]:
        tptr, tind, tjc, tdcsc = self.g._traw
        slots = self.g.seg_slots
        B = self.B
        new, pairs = self.newbuf, self.sendbufs[0]
        if self.nchunks > 1:
            rows, pars = self.finds
        elif own:
            # One chunk: the own finds are written where they end up (the new
            # frontier from nk), the others' in place as pairs, so there is no
            # scratch to keep.
            rows, pars = new, pairs
        else:
            rows, pars = pairs[0::2], pairs[1::2]
        k, self.ncand[t], sc, ds, nk = K.bottomup_search(
            tptr, tind, tjc, tdcsc, slots[t], slots[t + 1], t * B, self.bits, comp,
            self.cand[t * B:(t + 1) * B], self.ncand[t], own, self.parents, self.levels, depth,
            self.deg, self.visited, new, nk, rows, pars, k0, self.bu_piece0, self.b, B,
            self.nchunks, pairs)
        return k, sc, ds, nk

    def updates(self, segs: list[int], bounds: list[int]) -> tuple[list[Any], int]:
        sends: list[Any] = [None] * self.pc
        msgs = 0
        buf = self.sendbufs[0]
        for s in range(1, self.pc):
            sends[segs[s]] = buf[2 * bounds[s]:2 * bounds[s + 1]]
            msgs += bounds[s + 1] > bounds[s]
        return sends, msgs

    def merge(self, recv: list[np.ndarray], skip: int, depth: int, k: int,
              packed: bool) -> tuple[int, int]:
        degsum = 0
        for t, part in enumerate(recv):
            if t != skip and part.shape[0]:
                k, ds = K.apply_pairs(part, self.parents, self.levels, depth, self.visited,
                                      self.newbuf, k, self.deg, packed)
                degsum += ds
        return k, degsum

    def visited_in_degrees(self) -> int:
        mark = self.kept.in_mark
        # The ids go to the frontier buffer the next level writes (the new frontier
        # is in the other one).
        spare = self.newbufs[self.flip ^ 1]
        k = K.ids_and_not(self.visited, mark, 0, spare)
        np.copyto(mark, self.visited)
        return int(self.kept.in_deg[spare[:k]].sum())


def local_engine(name: str, g: Any, kept: Any) -> Any:
    """The local engine of backend ``name`` for graph ``g`` (made once per graph).

    ``numba``: :class:`NumbaLocal` over the search buffers ``kept`` with the
    graph; ``numpy`` and ``cupy``: the array engine
    (:class:`spbfs.mpi.local_array.ArrayLocal`) on that array module, its
    level state its own.
    """
    if name == "numba":
        return NumbaLocal(g, kept)
    from spbfs.mpi.local_array import ArrayLocal

    return ArrayLocal(name, g, kept.in_deg)
