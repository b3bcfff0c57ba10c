"""Compiled connected components on one process: weak by sampling and hooking, strong by Pearce.

**Weak components** (:func:`weak_roots`) follow Sutton, Ben-Nun and Besta,
"Optimizing Parallel Graph Connectivity Computation via Subgraph Sampling"
(Afforest; the method of LAGraph's ``LAGr_ConnectedComponents``): every
vertex starts as its own tree (``comp[u] = u``); an edge *hooks* the root of
one endpoint's tree under the other's, always the larger root id under the
smaller, so that a root is the smallest vertex of its tree and ``comp[u] <= u``
holds throughout. The first ``sample`` entries of every adjacency list are
hooked first; a compression then makes ``comp`` a root everywhere, and a
few hundred vertices drawn at fixed strides name the component most of them
are in (on a graph with a giant component, almost surely the giant one).
The remaining entries are then hooked for every vertex *outside* that
component only: on a symmetric structure an edge from a vertex of the giant
component to a vertex outside it is also stored in the other vertex's list,
which is scanned, so the giant component's lists, most of the edges, are never
read. On a structure that is not symmetric (a directed graph, or scipy's
``directed=False`` on an unsymmetric matrix) every entry is hooked: an edge
stored only on the giant side would otherwise be missed. One process has no
races, so a hook is a plain store, and the finds halve their paths as they go
(each visited vertex is pointed at its grandparent), which keeps every tree
shallow without a separate pass. The result is, for every vertex, the
smallest vertex id of its component, the labels the rest of spbfs and scipy
number components by.

**Strong components** (:func:`strong_labels`) follow D. J. Pearce, "A
space-efficient algorithm for finding strongly connected components"
(Information Processing Letters 116, 2016): Tarjan's algorithm without
recursion, where one array holds a visited vertex's DFS index while it is
open and its component number once assigned (numbers count down from
``n - 1`` while indices count up, so the two never collide and a minimum over
the successors ignores finished components without a test). The DFS visits
vertices in the order of :func:`scipy.sparse.csgraph.connected_components`
(roots in id order; when a vertex is opened, all its unopened successors are
pushed at once, a successor already on the stack moved to its top, and the
last pushed is opened next), so the components come out in the same order
and the labels equal scipy's element for element. That search reads every
arc twice (once to push, once to close); where the order is free,
:func:`strong_partition` runs Pearce's search reading each arc once (about
1.3-2x faster). :func:`dfs_strong_labels` runs the search of
``networkx.strongly_connected_components`` instead (Tarjan
with Nuutila's refinement, one successor at a time), whose completion order
networkx's callers see (``networkx.condensation`` numbers its nodes by it).

The kernels take the structure's own index arrays (int32 or int64, as the
caller holds them), viewed as unsigned (:func:`unsigned`: an index that cannot
be negative needs no wraparound test, about 1.3x on the searches), and write
int64 ids.
"""

from __future__ import annotations

import numba as nb
import numpy as np

__all__ = ["SAMPLE_ENTRIES", "SAMPLE_VERTICES", "dfs_strong_labels", "number_by_root",
           "strong_labels", "strong_partition", "strong_roots", "unsigned", "weak_roots"]

#: Leading entries of every adjacency list hooked before the giant component is
#: named: Sutton et al. find two enough for the sample to see a component's final
#: shape on every graph class they measure.
SAMPLE_ENTRIES = 2
#: Vertices drawn to name the most frequent component (Sutton et al.'s 1024).
SAMPLE_VERTICES = 1024


@nb.njit(cache=True, nogil=True)
def _find(comp, x):  # type: ignore[no-untyped-def]
    """Root of ``x``'s tree, pointing every vertex on the way at its grandparent."""
    while comp[x] != x:
        up = comp[comp[x]]
        comp[x] = up
        x = up
    return x


@nb.njit(cache=True, nogil=True)
def _hook(comp, u, v):  # type: ignore[no-untyped-def]
    """Join the trees of ``u`` and ``v``: the larger root goes under the smaller."""
    ru = _find(comp, u)
    rv = _find(comp, v)
    if ru < rv:
        comp[rv] = ru
    elif rv < ru:
        comp[ru] = rv


@nb.njit(cache=True, nogil=True)
def _compress(comp):  # type: ignore[no-untyped-def]
    """Every entry to its root, in one pass: ``comp[u] <= u``, so ``comp[u]`` is final first."""
    for u in range(comp.shape[0]):
        comp[u] = comp[comp[u]]


@nb.njit(cache=True, nogil=True)
def _most_frequent_root(comp):  # type: ignore[no-untyped-def]
    """The root held by most of :data:`SAMPLE_VERTICES` vertices drawn at a fixed stride."""
    n = comp.shape[0]
    # A tally by root id: n counters cost less than a pass over the edges, and (unlike
    # a sort of the draws) add nothing to what the first call compiles.
    tally = np.zeros(n, dtype=np.int32)
    best, best_count = comp[0], 0
    for i in range(min(SAMPLE_VERTICES, n)):
        # Knuth's multiplicative hash of i spreads the draws over the whole id range,
        # whatever its size (ids are often ordered by locality).
        c = comp[(np.uint64(i) * np.uint64(2654435761)) % np.uint64(n)]
        tally[c] += 1
        if tally[c] > best_count:
            best, best_count = c, tally[c]
    return best


@nb.njit(cache=True, nogil=True)
def weak_roots(ptr, ind, symmetric):  # type: ignore[no-untyped-def]
    """Smallest vertex id of every vertex's component (int64, length ``len(ptr) - 1``).

    Parameters
    ----------
    ptr, ind : numpy.ndarray
        A csr structure over all ``n`` vertices, viewed as unsigned
        (:func:`unsigned`): the entries of list ``u`` are
        ``ind[ptr[u]:ptr[u + 1]]`` (row or column lists; direction never matters).
    symmetric : bool
        Every entry ``(u, v)`` has its mirror ``(v, u)``: the giant component's
        lists may then be skipped (see the module's description).
    """
    n = ptr.shape[0] - 1
    # Unsigned ids: an index that cannot be negative needs no wraparound test.
    comp = np.arange(n, dtype=np.uint64)
    if n == 0:
        return comp.view(np.int64)
    one = np.uint64(1)
    first = np.uint64(SAMPLE_ENTRIES)
    for r in range(SAMPLE_ENTRIES):
        for i in range(n):
            u = np.uint64(i)
            k = np.uint64(ptr[u]) + np.uint64(r)
            if k < np.uint64(ptr[u + one]):
                _hook(comp, u, np.uint64(ind[k]))
    _compress(comp)
    skip = _most_frequent_root(comp) if symmetric else np.uint64(n)
    for i in range(n):
        u = np.uint64(i)
        if comp[u] == skip:
            continue
        for k in range(np.uint64(ptr[u]) + first, np.uint64(ptr[u + one])):
            _hook(comp, u, np.uint64(ind[k]))
    _compress(comp)
    return comp.view(np.int64)


@nb.njit(cache=True, nogil=True)
def number_by_root(roots):  # type: ignore[no-untyped-def]
    """Component numbers ``0 .. k-1`` in order of each component's root, and ``k``.

    ``roots[u]`` is the smallest vertex of ``u``'s component (so ``roots[u] <= u``).
    """
    n = roots.shape[0]
    labels = np.empty(n, dtype=np.int64)
    k = 0
    for u in range(n):
        if roots[u] == u:
            labels[u] = k
            k += 1
        else:
            labels[u] = labels[roots[u]]
    return labels, k


@nb.njit(cache=True, nogil=True)
def strong_roots(labels):  # type: ignore[no-untyped-def]
    """Smallest vertex of every vertex's component, from component numbers ``labels``."""
    n = labels.shape[0]
    first = np.full(n, -1, dtype=np.int64)
    roots = np.empty(n, dtype=np.int64)
    for u in range(n):
        c = labels[u]
        if first[c] < 0:
            first[c] = u  # the scan meets each component's smallest vertex first
        roots[u] = first[c]
    return roots


@nb.njit(cache=True, nogil=True)
def _closing_order(rindex, label):  # type: ignore[no-untyped-def]
    """(labels, count): Pearce's numbers, counted down from ``n - 1``, as 0, 1, ... by closing."""
    n = rindex.shape[0]
    labels = np.empty(n, dtype=np.int64)
    for v in range(n):
        labels[v] = n - 1 - np.int64(rindex[v])
    return labels, n - np.int64(label)


@nb.njit(cache=True, nogil=True)
def strong_labels(ptr, ind):  # type: ignore[no-untyped-def]
    """Strongly connected components of the csr structure: (labels, count).

    ``labels`` (int64) numbers the components in the order the search
    completes them, scipy's numbering (see the module's description); the
    arcs are ``u -> ind[k]`` for ``k`` in ``ptr[u]:ptr[u + 1]``. ``ptr`` and
    ``ind`` are the structure's arrays viewed as unsigned (:func:`unsigned`).
    """
    n = ptr.shape[0] - 1
    one = np.uint64(1)
    none = np.uint64(0xFFFFFFFFFFFFFFFF)
    end = np.uint64(0xFFFFFFFFFFFFFFFE)
    # rindex: none while unvisited; an open vertex's DFS index (counting up); a
    # finished vertex's component number (counting down from n - 1, flipped at the
    # end). Every successor of a vertex is visited when the vertex closes, so none,
    # the largest value, never wins a minimum.
    rindex = np.full(n, none, dtype=np.uint64)
    # The DFS stack as a doubly linked list (below[v], above[v]) so that a vertex
    # pushed again moves to the top; a closed vertex not yet in a component waits on
    # the component stack, linked by ``below`` (a vertex is on one stack at a time).
    # Ids and links are unsigned: an index that cannot be negative needs no test.
    below = np.full(n, none, dtype=np.uint64)
    above = np.full(n, none, dtype=np.uint64)
    waiting = end
    index = np.uint64(0)
    label = np.uint64(n)  # the next number is label - 1
    for start in range(n):
        root = np.uint64(start)
        if rindex[root] != none:
            continue
        top = root
        below[root] = end
        above[root] = end
        while top != end:
            v = top
            if rindex[v] == none:
                rindex[v] = index
                index += one
                for k in range(np.uint64(ptr[v]), np.uint64(ptr[v + one])):
                    w = np.uint64(ind[k])
                    if rindex[w] != none or w == top:  # w == top: a repeated entry
                        continue
                    if below[w] != none:  # already on the stack: unlink it
                        b, a = below[w], above[w]
                        if a != end:
                            below[a] = b
                        if b != end:
                            above[b] = a
                    below[w] = top
                    above[w] = end
                    above[top] = w
                    top = w
                continue
            # v is done: pop it and take the smallest index among its successors.
            top = below[v]
            if top != end:
                above[top] = end
            below[v] = none
            above[v] = none
            low = rindex[v]
            is_root = True
            for k in range(np.uint64(ptr[v]), np.uint64(ptr[v + one])):
                lw = rindex[np.uint64(ind[k])]
                if lw < low:
                    low = lw
                    is_root = False
            rindex[v] = low
            if not is_root:
                below[v] = waiting
                waiting = v
                continue
            label -= one
            index -= one
            while waiting != end and low <= rindex[waiting]:
                w = waiting
                waiting = below[w]
                below[w] = none
                rindex[w] = label
                index -= one
            rindex[v] = label
    return _closing_order(rindex, label)


@nb.njit(cache=True, nogil=True)
def strong_partition(ptr, ind):  # type: ignore[no-untyped-def]
    """Strongly connected components, each arc read once: (labels, count).

    Pearce's search with each vertex resuming its list where it left it, and
    the arc to a child taken into account when the child finishes (no second
    pass over the lists as in :func:`strong_labels`, which keeps scipy's
    order). The numbering is the search's completion order, no promise to
    callers (:func:`spbfs.algorithms.connected_components` renumbers).
    ``ptr`` and ``ind`` as in :func:`strong_labels`.
    """
    n = ptr.shape[0] - 1
    one = np.uint64(1)
    none = np.uint64(0xFFFFFFFFFFFFFFFF)
    rindex = np.full(n, none, dtype=np.uint64)  # as in strong_labels
    is_root = np.zeros(n, dtype=np.bool_)
    nxt = np.zeros(n, dtype=np.uint64)  # where each open vertex resumes its list
    path = np.empty(n, dtype=np.uint64)  # the search's path, root first
    waiting = np.empty(n, dtype=np.uint64)  # closed vertices of open components
    nwait = 0
    index = np.uint64(0)
    label = np.uint64(n)  # the next number is label - 1
    for start in range(n):
        root = np.uint64(start)
        if rindex[root] != none:
            continue
        rindex[root] = index
        index += one
        is_root[root] = True
        nxt[root] = np.uint64(ptr[root])
        path[0] = root
        depth = 1
        while depth:
            v = path[depth - 1]
            stop = np.uint64(ptr[v + one])
            k = nxt[v]
            descended = False
            while k < stop:
                w = np.uint64(ind[k])
                rw = rindex[w]
                if rw == none:
                    nxt[v] = k  # back to this arc when w finishes
                    rindex[w] = index
                    index += one
                    is_root[w] = True
                    nxt[w] = np.uint64(ptr[w])
                    path[depth] = w
                    depth += 1
                    descended = True
                    break
                if rw < rindex[v]:
                    rindex[v] = rw
                    is_root[v] = False
                k += one
            if descended:
                continue
            depth -= 1
            if is_root[v]:
                label -= one
                index -= one
                low = rindex[v]
                while nwait and low <= rindex[waiting[nwait - 1]]:
                    nwait -= 1
                    rindex[waiting[nwait]] = label
                    index -= one
                rindex[v] = label
            else:
                waiting[nwait] = v
                nwait += 1
            if depth:
                # The parent's arc to v: v's low value, unless v's component is closed
                # (its number is then above every open index).
                u = path[depth - 1]
                if rindex[v] < rindex[u]:
                    rindex[u] = rindex[v]
                    is_root[u] = False
                nxt[u] += one
    return _closing_order(rindex, label)


@nb.njit(cache=True, nogil=True)
def dfs_strong_labels(ptr, ind):  # type: ignore[no-untyped-def]
    """Strong components in the order networkx's search completes them: (labels, count).

    Tarjan's search with Nuutila's refinement as ``networkx.strongly_connected_components``
    runs it: roots in id order, one successor at a time in stored order (each
    vertex resumes its list where it left it), a component closed when its
    first vertex finishes. ``ptr`` and ``ind`` as in :func:`strong_labels`.
    """
    n = ptr.shape[0] - 1
    one = np.uint64(1)
    pre = np.zeros(n, dtype=np.int64)  # preorder number from 1; 0: not visited
    low = np.zeros(n, dtype=np.int64)
    nxt = np.zeros(n, dtype=np.uint64)  # where each open vertex resumes its list
    labels = np.full(n, -1, dtype=np.int64)  # >= 0: the vertex's component is closed
    path = np.empty(n, dtype=np.uint64)  # the search's path, root first
    waiting = np.empty(n, dtype=np.uint64)  # finished vertices of open components
    nwait = 0
    counter = 0
    k = 0
    for start in range(n):
        root = np.uint64(start)
        if pre[root]:
            continue
        counter += 1
        pre[root] = counter
        nxt[root] = np.uint64(ptr[root])
        path[0] = root
        depth = 1
        while depth:
            v = path[depth - 1]
            descended = False
            stop = np.uint64(ptr[v + one])
            while nxt[v] < stop:
                w = np.uint64(ind[nxt[v]])
                nxt[v] += one
                if not pre[w]:
                    counter += 1
                    pre[w] = counter
                    nxt[w] = np.uint64(ptr[w])
                    path[depth] = w
                    depth += 1
                    descended = True
                    break
            if descended:
                continue
            lo = pre[v]
            for e in range(np.uint64(ptr[v]), stop):
                w = np.uint64(ind[e])
                if labels[w] < 0:
                    lo = min(lo, low[w] if pre[w] > pre[v] else pre[w])
            low[v] = lo
            depth -= 1
            if lo != pre[v]:
                waiting[nwait] = v
                nwait += 1
                continue
            labels[v] = k
            while nwait and pre[waiting[nwait - 1]] > pre[v]:
                nwait -= 1
                labels[waiting[nwait]] = k
            k += 1
    return labels, k


def unsigned(a: np.ndarray) -> np.ndarray:
    """``a`` (int32 or int64, non-negative) viewed as unsigned of the same width, no copy."""
    return a.view(np.uint32 if a.dtype.itemsize == 4 else np.uint64)
