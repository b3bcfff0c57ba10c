"""The grid's local-engine seam: one rank's local work of a search, behind one protocol.

The grid search (:class:`spbfs.mpi.bfs.GridEngine`) moves frontiers and pairs
between ranks and decides each level's direction; everything a rank computes
on its own block between two exchanges goes through a :class:`LocalEngine`.
Which top-down operation a level asks for is the plan's choice by grid shape
(a *route*, fixed per graph: :func:`topdown_route`), never a branch on how an
engine works inside.

An engine owns the rank's search state (``parents``, ``levels`` and which of
its piece's vertices are reached) where its arrays live; the grid keeps the
host bitmaps its messages are made of (``visited``, the segments' completed
rows, the column chunk's frontier) and hands them over at the exchange
boundary. Two engines implement it:

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
    """One rank's local work of a grid search.

    Ids are local: rows of the top-down block are the child side, columns the
    frontier side (padded chunk ids, :class:`spbfs.mpi.grid.Distribution`);
    parents are written as global ids. Host arrays (``new``, ``pairs``,
    ``counts``, bitmaps) are the grid's message buffers.
    """

    #: Backend name (``"numba"``, ``"numpy"``, ``"cupy"``).
    name: str
    #: Whether the engine runs the ``duo`` route (it reads the host state directly).
    duo: bool

    def begin(self, parents: np.ndarray, levels: np.ndarray) -> None:
        """A search starts: ``parents``/``levels`` (host, the piece) get its results."""

    def claim(self, v: int, parent: int) -> None:
        """Mark piece-local ``v`` reached at level 0 with ``parent`` (the source)."""

    def reached(self, v: int) -> bool:
        """Whether piece-local ``v`` has a parent."""

    def finish(self) -> None:
        """Write the search's parents and levels to the host arrays of :meth:`begin`."""

    def topdown_own(self, cols: np.ndarray, depth: int, new: np.ndarray,
                    nparts: int) -> tuple[int, int, int]:
        """Route ``own``: children of ``cols`` taken at once, listed in ``new``.

        Returns (count, edges scanned, degree sum of the new).
        """

    def topdown_fold(self, cols: np.ndarray, own: int, counts: np.ndarray,
                     out: np.ndarray) -> tuple[int, int, int]:
        """Route ``fold``: pairs ``(row in part, parent)`` of part ``t`` at ``out[2 t B64:]``.

        Returns (pairs, edges scanned, parts other than ``own`` with pairs).
        """

    def topdown_pairs(self, cols: np.ndarray, own: int, counts: np.ndarray, depth: int,
                      new: np.ndarray, packed: bool,
                      holder: list[np.ndarray]) -> tuple[np.ndarray, int, int, int, int]:
        """Route ``pairs``: part ``own``'s children taken, the others' as pairs.

        Pairs of part ``t`` at pair ``t * cap`` of the returned buffer (``packed``:
        one word each); ``holder[0]`` is the buffer to reuse (and is replaced when
        grown). Returns (buffer, cap, edges scanned, own children, their degree sum).
        """

    def load_front(self, front: np.ndarray, mark_sent: bool) -> None:
        """A bottom-up level's column-chunk frontier bitmap (``mark_sent``: also "sent")."""

    def candidates(self, t: int, comp: np.ndarray) -> int:
        """At least the finds segment ``t`` can have (candidates listed where kept)."""

    def bottomup_segment(self, t: int, own: bool, comp: np.ndarray, depth: int,
                         new: np.ndarray, nk: int, k0: int,
                         pairs: np.ndarray) -> tuple[int, int, int, int]:
        """Parents for segment ``t``'s open rows; finds marked in host ``comp``.

        ``own``: finds taken, listed in ``new`` from ``nk``; else pairs ``(row,
        parent)`` from pair ``k0`` of ``pairs``. Returns (new k, edges scanned,
        degree sum of own finds, new nk).
        """

    def merge(self, recv: list[np.ndarray], skip: int, depth: int, new: np.ndarray, k: int,
              packed: bool) -> tuple[int, int]:
        """Apply received pairs (``recv[skip]`` passed over); returns (new k, degree sum)."""


class NumbaLocal:
    """The numba kernels of :mod:`spbfs.mpi._kernels` as the grid's local engine.

    Its state is the grid's host arrays (``visited`` and "sent" bitmaps,
    ``parents``, ``levels``): nothing to copy at the exchange. Made once per
    graph (kept with the search buffers).
    """

    name = "numba"
    duo = True

    def __init__(self, g: Any, visited: np.ndarray, sent: np.ndarray, cand: np.ndarray,
                 finds: list[np.ndarray]) -> None:
        grid, d = g.grid, g.dist
        self.g = g
        self.visited = visited
        self.sent = sent
        self.cand = cand
        self.finds = finds
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
        self.front = sent[:0]
        self.parents = self.levels = np.empty(0, np.int64)
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
        if self.reset_sent:
            self.sent.fill(0)

    def claim(self, v: int, parent: int) -> None:
        self.parents[v] = parent
        self.levels[v] = 0
        K.set_bits(np.array([v], np.int64), self.visited, 0)

    def reached(self, v: int) -> bool:
        return bool(self.parents[v] != -1)

    def finish(self) -> None:
        pass  # the kernels wrote the host arrays

    def topdown_own(self, cols: np.ndarray, depth: int, new: np.ndarray,
                    nparts: int) -> tuple[int, int, int]:
        ptr, ind, jc, dcsc = self._td()
        aux, shift = self._index(jc, dcsc)
        return K.topdown_own(ptr, ind, jc, aux, shift, cols, self.visited, self.parents,
                             self.levels, depth, self.deg, self.td_piece0, self.b, self.B, new,
                             nparts, **K.formats(dcsc))

    def topdown_fold(self, cols: np.ndarray, own: int, counts: np.ndarray,
                     out: np.ndarray) -> tuple[int, int, int]:
        ptr, ind, jc, dcsc = self.g._raw
        aux, shift = self._index(jc, dcsc)
        return K.topdown_fold(ptr, ind, jc, aux, shift, cols, self.sent, self.visited, own,
                              self.bw, counts.shape[0], counts, out, self.td_piece0, self.b,
                              self.B, **K.formats(dcsc))

    def topdown_pairs(self, cols: np.ndarray, own: int, counts: np.ndarray, depth: int,
                      new: np.ndarray, packed: bool,
                      holder: list[np.ndarray]) -> tuple[np.ndarray, int, int, int, int]:
        tptr, tind, tjc, tdcsc = self.g._traw
        B, parts = self.B, counts.shape[0]
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
                                               self.deg, new, k, packed, **fmt)
            scanned += sc
            degsum += ds
            if at == nf:
                return buf, cap, scanned, k, degsum
            # A part is full: grow every part's room (the first levels pay a few).
            new_cap = min(B, max(cap + cap // 2, 4096))
            grown = np.empty(w * parts * new_cap, np.int64)
            for t, c in enumerate(counts.tolist()):
                grown[w * t * new_cap:w * (t * new_cap + c)] = buf[w * t * cap:w * (t * cap + c)]
            buf, cap = grown, new_cap
            holder[0] = buf

    def load_front(self, front: np.ndarray, mark_sent: bool) -> None:
        self.front = front
        if mark_sent:
            np.bitwise_or(self.sent, front, out=self.sent)

    def candidates(self, t: int, comp: np.ndarray) -> int:
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

    def bottomup_segment(self, t: int, own: bool, comp: np.ndarray, depth: int,
                         new: np.ndarray, nk: int, k0: int,
                         pairs: np.ndarray) -> tuple[int, int, int, int]:
        tptr, tind, tjc, tdcsc = self.g._traw
        slots = self.g.seg_slots
        B = self.B
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
            tptr, tind, tjc, tdcsc, slots[t], slots[t + 1], t * B, self.front, comp,
            self.cand[t * B:(t + 1) * B], self.ncand[t], own, self.parents, self.levels, depth,
            self.deg, self.visited, new, nk, rows, pars, k0, self.bu_piece0, self.b, B,
            self.nchunks, pairs)
        return k, sc, ds, nk

    def merge(self, recv: list[np.ndarray], skip: int, depth: int, new: np.ndarray, k: int,
              packed: bool) -> tuple[int, int]:
        degsum = 0
        for t, part in enumerate(recv):
            if t != skip and part.shape[0]:
                k, ds = K.apply_pairs(part, self.parents, self.levels, depth, self.visited, new,
                                      k, self.deg, packed)
                degsum += ds
        return k, degsum


def local_engine(name: str, g: Any, visited: np.ndarray, sent: np.ndarray, cand: np.ndarray,
                 finds: list[np.ndarray]) -> Any:
    """The local engine of backend ``name`` for graph ``g`` (made once per graph).

    ``numba``: :class:`NumbaLocal`; ``numpy`` and ``cupy``: the array engine
    (:class:`spbfs.mpi.local_array.ArrayLocal`) on that array module.
    """
    if name == "numba":
        return NumbaLocal(g, visited, sent, cand, finds)
    from spbfs.mpi.local_array import ArrayLocal

    return ArrayLocal(name, g, visited)
