"""Direction optimization: when to go bottom-up and when to come back.

Beamer, Asanović and Patterson (SC 2012) switch from top-down to bottom-up
when the edges out of the frontier, ``m_f``, exceed ``m_u / alpha``, the
edges out of still-unvisited vertices: past that point a bottom-up scan is
likely to find a parent after a few edges and skip the rest. They switch back
when the frontier has stopped growing and holds fewer than ``n / beta``
vertices, where the per-vertex cost of a bottom-up sweep over all unvisited
vertices no longer pays. The published constants are alpha = 14 and
beta = 24 (LAGraph uses 8 / 8 / 512 with a slightly different test).

One guard is added, from what each direction touches. A top-down level
touches the frontier's out-edges, ``m_f``; a bottom-up sweep reads every
unvisited vertex at least once (the first sweep every vertex with in-edges,
later sweeps the survivors), whatever ``m_u / alpha`` says about its edges.
So the search goes bottom-up only when also ``m_f * gamma >= max(n, MIN_SWEEP)``
(gamma = 1/2: the frontier's out-edges at least twice the vertices a first sweep
reads, and at least :data:`MIN_SWEEP`, below which a whole top-down level costs
about a microsecond and the switch itself, the sweep's candidate list and bitmap,
as much). Twice, because a first sweep costs more per vertex than a top-down level
per edge: on the wiki-Vote-like graph (8,192 vertices, 104 k arcs, one thread) the
first sweeps fit about 2.2 ns per vertex plus 0.5 ns per in-edge scanned, a top-down
level about 1.6 ns per edge; and a level left top-down does not save the first
sweep, it moves it to the next level, over fewer unvisited vertices. From vertex
3841 the third level's frontier has 9,437 out-edges (1.15 n): swept, that level
took 41 µs, the whole search 61 µs; top-down, 15 µs and 40 µs (8 of 12 random
sources changed schedule, each 2-59% faster, 17% in all; sources whose switch
frontier has 2.2 n and 3.8 n edges keep theirs). Kronecker graphs switch at
``m_f`` in the millions, and on road networks, grids, meshes and p2p-Gnutella31
no frontier comes near ``n / 2`` edges at a switch: their schedules did not change
(benchmarks/defaults.py). Beamer's
test alone fires where the frontier never grows large enough to pay for that:
at the tail of a road-network search, where ``m_u`` has shrunk to a few
hundred edges, on a frontier of twenty vertices; and on a sparse directed graph,
whose unvisited vertices mostly have no in-edge from the frontier and read
all their in-edges. On p2p-Gnutella31 (62,586 vertices, 147,892 arcs) Beamer's
test fires at a frontier of 18,195 out-edges, and the bottom-up level then
read 84,890 in-edges and every vertex; with the guard the search stays
top-down and takes a third of the time or less (benchmarks/defaults.py). A Kronecker
graph switches at ``m_f`` in the millions, past ``n``: its schedules are the
same with gamma = 32 (the guard's earlier value), 1 and 1/2.

On a directed graph ``m_u`` is what a bottom-up sweep reads: the *in*-edges of
the unvisited vertices, not their out-edges (the two differ by the arcs between
the visited and the unvisited set). An engine that counts them says so
(``unvisited_in_edges``, :mod:`spbfs.search.driver`); the numba engine's compiled
loop counts them only after a top-down level whose frontier passes the guard (the
test at ``m_u = 0``), catching up over its queue of visited vertices, so a search
that never nears a switch never reads an in-degree. On p2p-Gnutella31 (from
vertex 0) and the pgp-like graph no frontier passes the guard; on the wiki-Vote-like
graph (from vertex 4160) the two levels that do have 69,845 in-edges against 70,824
out-edges (and 5,941 against 7,425) left, and both tests switch at the same level
(benchmarks/defaults.py).

The same policy object serves one process and the 2D grid; on a grid the
counts are global sums (one Allreduce per level), and on a directed graph
its ``m_u`` is the same in-edge count, counted as the numba engine counts it
(``GridEngine.unvisited_in_edges``).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BOTTOM_UP", "MIN_SWEEP", "MODES", "TOP_DOWN", "DirectionPolicy", "leave_top_down",
           "next_direction"]

TOP_DOWN = 0
BOTTOM_UP = 1
#: ``DirectionPolicy.mode`` as the number the compiled loops take (its index here).
MODES = ("auto", "top-down", "bottom-up")
#: Fewest frontier edges (times gamma) for a bottom-up level: a graph of fewer edges
#: searches top-down throughout (:func:`next_direction`).
MIN_SWEEP = 1024


def leave_top_down(m_f: float, m_u: float, n: float, alpha: float, gamma: float) -> bool:
    """Beamer's test with the first-sweep guard: whether to go bottom-up after a top-down level.

    The test itself is written once, in :func:`next_direction`.
    """
    return next_direction(0, TOP_DOWN, 0, m_f, m_u, n, True, alpha, 0.0, gamma) == BOTTOM_UP


def next_direction(mode: int, current: int, n_f: float, m_f: float, m_u: float, n: float,
                   growing: bool, alpha: float, beta: float, gamma: float) -> int:
    """The direction of the next level: the whole policy as a function of numbers.

    ``mode`` indexes :data:`MODES`. :meth:`DirectionPolicy.choose` calls it, and
    the compiled search loop of the numba engine (``numba.njit(next_direction)``)
    runs this very function, so the two cannot drift apart.
    """
    if mode == 1:
        return TOP_DOWN
    if mode == 2:
        return BOTTOM_UP
    if current == TOP_DOWN:
        # Beamer's test with the first-sweep guard (see the module docstring).
        sweep = n if n > MIN_SWEEP else MIN_SWEEP
        return BOTTOM_UP if m_f * alpha > m_u and m_f * gamma >= sweep else TOP_DOWN
    if growing or n_f * beta > n:
        return BOTTOM_UP
    return TOP_DOWN


@dataclass(frozen=True)
class DirectionPolicy:
    """Chooses the direction of each level.

    Parameters
    ----------
    mode : {"auto", "top-down", "bottom-up"}
        ``auto`` applies the heuristic; the others force a direction.
    alpha, beta : float
        Beamer's switching constants (see the module docstring).
    gamma : float
        Bottom-up only once the frontier's edges reach ``n / gamma``
        (``inf``: no such guard; see the module docstring).
    """

    mode: str = "auto"
    alpha: float = 14.0
    beta: float = 24.0
    gamma: float = 0.5

    def guess(self, current: int, n_f: int, m_f: int, m_u: int, n: int, grew: bool,
              m_f_before: int, shrink: float = 4.0) -> int:
        """The likely direction of the level after the one now running, before its counts.

        A grid posts the next level's frontier exchange before the level's
        Allreduce (:mod:`spbfs.mpi.bfs`), from the numbers of the latest one:
        the running level's frontier (``n_f`` vertices, ``m_f`` edges; the one
        before had ``m_f_before`` edges), the edges ``m_u`` out of unvisited
        vertices and whether the frontier ``grew``. After a top-down level:
        :meth:`choose`'s test on ``m_f`` grown once more as it grew last
        (a Kronecker frontier grows a thousandfold into the switch; a road
        network's or a grid's hardly at all). After a bottom-up level: top-down
        once the frontier stopped growing and holds fewer than
        ``shrink * n / beta`` vertices. Deterministic in its arguments, so
        every rank guesses alike.
        """
        if self.mode != "auto":
            return TOP_DOWN if self.mode == "top-down" else BOTTOM_UP
        if current == TOP_DOWN:
            reach = m_f * (m_f / m_f_before) if 0 < m_f_before < m_f else m_f
            return next_direction(0, TOP_DOWN, n_f, reach, m_u, n, True, self.alpha,
                                  self.beta, self.gamma)
        return TOP_DOWN if not grew and n_f * self.beta <= shrink * n else BOTTOM_UP

    @property
    def fused_switch(self) -> tuple[float, float, bool]:
        """``(alpha, gamma, auto)`` for a compiled loop of top-down levels.

        The loop applies :func:`leave_top_down` with these thresholds, and only
        when ``auto`` (a forced direction never switches).
        """
        return self.alpha, self.gamma, self.mode == "auto"

    @property
    def fused(self) -> tuple[int, float, float, float]:
        """``(mode, alpha, beta, gamma)`` for :func:`next_direction` in compiled code."""
        return MODES.index(self.mode), self.alpha, self.beta, self.gamma

    def choose(self, current: int, n_f: int, m_f: int, m_u: int, n: int, growing: bool) -> int:
        """Direction for the next level.

        Parameters
        ----------
        current : int
            Direction of the level just done (``TOP_DOWN`` or ``BOTTOM_UP``).
        n_f, m_f : int
            Vertices in the next frontier and the sum of their degrees.
        m_u : int
            Edges a bottom-up sweep would read: the in-degrees of the vertices still
            unvisited (their degrees where every edge goes both ways).
        n : int
            Number of vertices.
        growing : bool
            Whether the frontier grew in the level just done.
        """
        return next_direction(MODES.index(self.mode), current, n_f, m_f, m_u, n, growing,
                              self.alpha, self.beta, self.gamma)
