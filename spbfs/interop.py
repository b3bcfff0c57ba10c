"""Results as python-graphblas objects (the optional ``graphblas`` extra).

GraphBLAS users expect sparse results: LAGraph's BFS returns parent and level
vectors that hold only the reached vertices. The result classes keep dense
numpy arrays with a sentinel where there is no value (``-1`` for an unreached
vertex, ``inf`` for an unreachable distance); :func:`to_vector` is the one
place that turns such an array into a :class:`graphblas.Vector` with those
entries left out. ``BFSResult.to_graphblas``, ``ShortestPathsResult``,
``PageRankResult`` and ``ComponentsResult`` all call it.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np

__all__ = ["import_graphblas", "to_vector"]


def import_graphblas(what: str) -> ModuleType:
    """Import python-graphblas, or say which extra installs it.

    Parameters
    ----------
    what : str
        The caller, named in the error (``"BFSResult.to_graphblas"``).

    Raises
    ------
    ImportError
        When python-graphblas is not installed.
    """
    try:
        import graphblas
    except ImportError as e:
        raise ImportError(
            f"{what} needs python-graphblas: pip install 'spbfs[graphblas]' "
            "(or pip install python-graphblas)"
        ) from e
    return graphblas


def to_vector(values: Any, missing: Any = None, *, what: str = "to_graphblas") -> Any:
    """A :class:`graphblas.Vector` of ``values``, leaving out the entries equal to ``missing``.

    Parameters
    ----------
    values : numpy.ndarray
        A dense 1-D array, one entry per vertex (int64, float64 or bool).
    missing : scalar, optional
        The array's "no value" sentinel (``-1``, ``inf``); entries equal to it
        are not stored. None stores every entry (a full vector).
    what : str
        The caller, named in errors.

    Returns
    -------
    graphblas.Vector
        Of size ``len(values)`` and the array's dtype (``INT64``, ``FP64``,
        ``BOOL``). GraphBLAS owns a copy: changing the vector never changes
        the result object, nor the other way round.

    Raises
    ------
    ImportError
        When python-graphblas is not installed.
    ValueError
        When ``values`` is not 1-D.
    """
    gb = import_graphblas(what)
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{what}: values must be a 1-D array, got shape {arr.shape}")
    # from_dense copies into GraphBLAS and drops the sentinel in compiled code.
    return gb.Vector.from_dense(arr, missing_value=missing)
