"""The argument checks every search shares: vertex ids, depth limits, the traversal semiring.

One place, so that one process, the GPU, the grid and the algorithms built on
them refuse a bad argument with the same words.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from semirings.ops import binary, monoid
from semirings.semiring import get as get_semiring

__all__ = ["LEVELS", "MIN_SECOND", "PARENTS", "VALUES", "check_max_depth", "check_semiring",
           "check_vertex"]

#: What :func:`check_semiring` says a semiring runs as: the fused search with parents
#: (``min_second``), the fused search with levels only (``any_pair``), or the generic
#: engine, whose frontier carries values.
PARENTS, LEVELS, VALUES = "parents", "levels", "values"
#: The default traversal semiring, resolved once.
MIN_SECOND = get_semiring("min_second")


# A tuple made once: ``int | np.integer`` builds a union object on every call.
_INTEGERS = (int, np.integer)


def check_vertex(v: Any, n: int, name: str = "source") -> int:
    """Return ``v`` as an int after checking it is a vertex id of an ``n``-vertex graph.

    Raises
    ------
    TypeError
        For anything but an integer (``bool`` included: ``True`` is not a vertex).
    ValueError
        For an id outside ``0 .. n-1``.
    """
    if isinstance(v, bool) or not isinstance(v, _INTEGERS):
        raise TypeError(f"{name} must be an integer vertex id, got {type(v).__name__}")
    v = int(v)
    if not 0 <= v < n:
        raise ValueError(f"{name}={v} is out of range for a graph with {n} vertices")
    return v


_DEEPEST = 2**62


def check_max_depth(max_depth: Any) -> int | None:
    """Return ``max_depth`` (None or an int >= 0) after checking it.

    Raises
    ------
    TypeError
        For anything but None or an integer.
    ValueError
        For a negative depth.
    """
    if max_depth is None:
        return None
    if isinstance(max_depth, bool) or not isinstance(max_depth, int | np.integer):
        raise TypeError(f"max_depth must be an integer, got {type(max_depth).__name__}")
    if max_depth < 0:
        raise ValueError(f"max_depth must be >= 0, got {max_depth}")
    # Compiled loops take an int64; a depth of 2**62 or more exceeds any search's
    # (at most n - 1 < 2**62 levels), so it stops exactly where such a depth would.
    return min(int(max_depth), _DEEPEST)


def check_semiring(semiring: Any, output: str | None = None, config_output: str | None = None,
                   source_value: Any = 1) -> tuple[str, Any]:
    """Resolve a search's ``semiring`` and say which search runs it.

    Parameters
    ----------
    semiring : Semiring or str
        The traversal semiring (a name such as ``"plus_second"``).
    output : str, optional
        The ``output=`` the caller passed (None when left out).
    config_output : str, optional
        The configuration's ``output`` (None where a search has none, the grid).
    source_value : scalar
        The source's value in the frontier (generic semirings only).

    Returns
    -------
    kind : {"parents", "levels", "values"}
        :data:`PARENTS` for ``min_second`` and :data:`LEVELS` for ``any_pair``
        (both run the fused kernels), :data:`VALUES` for any other semiring
        (the generic engine). Decided by the operators, not the name, so
        ``Semiring("min", "second")`` is the fast path too.
    semiring : Semiring
        The resolved object.

    Raises
    ------
    TypeError
        For a ``semiring`` that is neither a Semiring nor a name, or a
        ``source_value`` that is not a real number.
    ValueError
        For an unknown name; for parents asked of a semiring that computes none
        (an explicit ``output`` of ``"parents"`` or ``"both"``, or a configured
        ``output="parents"``); for a ``source_value`` other than 1 with a
        semiring whose frontier carries no values of the caller's.
    """
    if semiring == "min_second" and source_value == 1:  # the default: no lookup per search
        return PARENTS, MIN_SECOND
    s = get_semiring(semiring)
    if not isinstance(source_value, int | float | np.integer | np.floating | np.bool_):
        raise TypeError(f"source_value must be a real number, got {type(source_value).__name__}")
    if s.add is monoid.min and s.mul is binary.second:
        kind = PARENTS
    elif s.add is monoid.any and s.mul is binary.pair:
        kind = LEVELS
    else:
        kind = VALUES
    # A configured "both" (the default) is not a request for parents: it gives levels here.
    asks_parents = output in ("parents", "both") or (output is None and config_output == "parents")
    if kind != PARENTS and asks_parents:
        what = "levels only" if kind == LEVELS else "levels and values"
        asked = f"output={output!r}" if output is not None else "the config's output='parents'"
        raise ValueError(
            f"semiring={s.name!r} computes {what}, no parents, but {asked} asks for parents; "
            "pass output='levels', or semiring='min_second' for parents"
        )
    if kind != VALUES and source_value != 1:
        carries = "vertex ids" if kind == PARENTS else "no values"
        raise ValueError(
            f"source_value={source_value!r} is for semirings whose frontier carries values; "
            f"with semiring={s.name!r} it carries {carries} (leave source_value out)"
        )
    return kind, s
