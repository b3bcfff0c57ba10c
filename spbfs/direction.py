"""Direction optimization: when to go bottom-up and when to come back.

Beamer, Asanović and Patterson (SC 2012) switch from top-down to bottom-up
when the edges out of the frontier, ``m_f``, exceed ``m_u / alpha``, the
edges out of still-unvisited vertices: past that point a bottom-up scan is
likely to find a parent after a few edges and skip the rest. They switch back
when the frontier has stopped growing and holds fewer than ``n / beta``
vertices, where the per-vertex cost of a bottom-up sweep over all unvisited
vertices no longer pays. The published constants are alpha = 14 and
beta = 24 (LAGraph uses 8 / 8 / 512 with a slightly different test).

The same policy object serves one process and the 2D grid; on a grid the
counts are global sums (one Allreduce per level).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BOTTOM_UP", "TOP_DOWN", "DirectionPolicy"]

TOP_DOWN = 0
BOTTOM_UP = 1


@dataclass(frozen=True)
class DirectionPolicy:
    """Chooses the direction of each level.

    Parameters
    ----------
    mode : {"auto", "top-down", "bottom-up"}
        ``auto`` applies the heuristic; the others force a direction.
    alpha, beta : float
        Beamer's switching constants (see the module docstring).
    """

    mode: str = "auto"
    alpha: float = 14.0
    beta: float = 24.0

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
            return BOTTOM_UP if m_f * self.alpha > m_u else TOP_DOWN
        if growing or n_f * self.beta > n:
            return BOTTOM_UP
        return TOP_DOWN
