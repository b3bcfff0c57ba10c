"""Direction optimization: when to go bottom-up and when to come back.

Beamer, Asanović and Patterson (SC 2012) switch from top-down to bottom-up
when the edges out of the frontier, ``m_f``, exceed ``m_u / alpha``, the
edges out of still-unvisited vertices: past that point a bottom-up scan is
likely to find a parent after a few edges and skip the rest. They switch back
when the frontier has stopped growing and holds fewer than ``n / beta``
vertices, where the per-vertex cost of a bottom-up sweep over all unvisited
vertices no longer pays. The published constants are alpha = 14 and
beta = 24 (LAGraph uses 8 / 8 / 512 with a slightly different test).

One guard is added: the first bottom-up sweep reads every vertex once
(later sweeps only the survivors), a cost the edge counts do not see. At
the tail of a road-network search, where ``m_u`` has shrunk to a few
hundred edges, Beamer's test fires on a frontier of twenty vertices and the
switch costs a hundred times what each remaining top-down level does. So
the search goes bottom-up only when also ``m_f >= n / gamma`` (gamma = 32;
a Kronecker graph switches at ``m_f`` in the millions, n/32 = 32 k at scale 20).

The same policy object serves one process and the 2D grid; on a grid the
counts are global sums (one Allreduce per level).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BOTTOM_UP", "TOP_DOWN", "DirectionPolicy", "leave_top_down"]

TOP_DOWN = 0
BOTTOM_UP = 1


def leave_top_down(m_f: float, m_u: float, n: float, alpha: float, gamma: float) -> bool:
    """Beamer's test with the first-sweep guard: whether to go bottom-up after a top-down level.

    A plain function of numbers, so that the compiled top-down loops
    (``numba.njit(leave_top_down)``) run this very test instead of a copy.
    """
    return m_f * alpha > m_u and m_f * gamma >= n


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
        (``inf``: no such guard).
    """

    mode: str = "auto"
    alpha: float = 14.0
    beta: float = 24.0
    gamma: float = 32.0

    @property
    def fused_switch(self) -> tuple[float, float, bool]:
        """``(alpha, gamma, auto)`` for a compiled loop of top-down levels.

        The loop applies :func:`leave_top_down` with these thresholds, and only
        when ``auto`` (a forced direction never switches).
        """
        return self.alpha, self.gamma, self.mode == "auto"

    def choose(self, current: int, n_f: int, m_f: int, m_u: int, n: int, growing: bool) -> int:
        """Direction for the next level.

        Parameters
        ----------
        current : int
            Direction of the level just done (``TOP_DOWN`` or ``BOTTOM_UP``).
        n_f, m_f : int
            Vertices in the next frontier and the sum of their degrees.
        m_u : int
            Sum of the degrees of vertices still unvisited.
        n : int
            Number of vertices.
        growing : bool
            Whether the frontier grew in the level just done.
        """
        if self.mode == "top-down":
            return TOP_DOWN
        if self.mode == "bottom-up":
            return BOTTOM_UP
        if current == TOP_DOWN:
            return BOTTOM_UP if leave_top_down(m_f, m_u, n, self.alpha, self.gamma) else TOP_DOWN
        if growing or n_f * self.beta > n:
            return BOTTOM_UP
        return TOP_DOWN
