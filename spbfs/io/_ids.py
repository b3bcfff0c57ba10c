"""From parsed endpoints to an EdgeList: vertex id checks, the size limit, renumbering.

Not public API except :func:`renumber` and :data:`MAX_VERTEX_BITS`, which
:mod:`spbfs.io` exports. :mod:`spbfs.mpi.read` words its range errors with
:func:`too_many`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NoReturn

import numpy as np

from spbfs.edges import IDS_PER_EDGE, EdgeList, check_count, sparse_ids_problem
from spbfs.io._common import GraphFormatError, PathLike, allocating

__all__ = ["MAX_VERTEX_BITS", "check_n", "finish", "renumber", "too_many"]

#: Without renumbering, ``n = max id + 1`` must not exceed ``2**MAX_VERTEX_BITS``:
#: beyond that, per-vertex arrays would not fit in memory, and the ids are
#: almost surely sparse labels that :func:`renumber` should compact.
MAX_VERTEX_BITS: int = 40


def too_many(n: int) -> str:
    """The problem of a vertex count above ``2**MAX_VERTEX_BITS``, for error messages.

    Parameters
    ----------
    n : int
        The vertex count the ids (or the file) ask for.

    Returns
    -------
    str
    """
    return (
        f"vertex ids need n = {n} > 2**{MAX_VERTEX_BITS}: the ids look like sparse labels; "
        "pass renumber=True to map them to 0..k-1"
    )


def check_n(n: object, renumber: bool) -> int | None:
    """The readers' ``n`` argument as an int (None when not given).

    Parameters
    ----------
    n : object
        What the caller passed.
    renumber : bool
        The reader's ``renumber``: it numbers the vertices itself, so ``n`` contradicts it.

    Returns
    -------
    int or None

    Raises
    ------
    TypeError
        If ``n`` is not an integer (:func:`spbfs.edges.check_count`).
    ValueError
        If ``n`` is negative or a fraction (3.7 is not cut to 3), above
        ``2**MAX_VERTEX_BITS``, or given with ``renumber``.
    """
    if n is None:
        return None
    n = check_count(n)  # as every vertex count is checked: 3.0 is 3, 3.7 is refused
    if n > 2**MAX_VERTEX_BITS:
        raise ValueError(f"n={n} exceeds 2**{MAX_VERTEX_BITS} vertices")
    if renumber:
        raise ValueError("n and renumber=True contradict: renumbering counts the vertices")
    return n


def renumber(src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Map arbitrary integer vertex labels to ``0 .. k-1``.

    Parameters
    ----------
    src, dst : array_like of int
        Edge endpoints with arbitrary labels (sparse, huge or negative).

    Returns
    -------
    src2, dst2 : numpy.ndarray
        int64 endpoints in ``[0, k)``.
    ids : numpy.ndarray
        The ``k`` sorted distinct labels: ``ids[src2] == src`` and
        ``ids[dst2] == dst``.
    """
    src = np.asarray(src)
    dst = np.asarray(dst)
    if src.shape != dst.shape:
        raise ValueError(f"src and dst differ in shape: {src.shape} vs {dst.shape}")
    ids = np.unique(np.concatenate([src.ravel(), dst.ravel()]))
    # searchsorted rather than unique(return_inverse=True): it avoids a 2m-long
    # argsort permutation, the largest temporary of the inverse route.
    src2 = np.searchsorted(ids, src).astype(np.int64, copy=False)
    dst2 = np.searchsorted(ids, dst).astype(np.int64, copy=False)
    return src2, dst2, ids


def finish(
    path: PathLike,
    src: np.ndarray,
    dst: np.ndarray,
    *,
    n: int | None,
    directed: bool | None,
    weights: np.ndarray | None,
    do_renumber: bool,
    meta: dict,
    locate: Callable[[int, str], NoReturn],
    ids: np.ndarray | None = None,
    insist: int | None = None,
    declared_by: str = "the file",
) -> EdgeList:
    """Range checks, renumbering and EdgeList construction shared by readers.

    A vertex count the file declares follows the rule of one inferred from the
    ids (:func:`spbfs.edges.sparse_ids_problem`): far more vertices than the
    edges warrant is refused here, before anything n-sized exists, unless the
    caller insists with the same ``n``.

    Parameters
    ----------
    path : str or os.PathLike
        The file, for error messages.
    src, dst : numpy.ndarray
        0-based int64 endpoints (the labels as written, with ``do_renumber``).
    n : int or None
        A declared vertex count (None: infer from the ids).
    directed : bool or None
        Directedness for the EdgeList.
    weights : numpy.ndarray or None
        One value per edge.
    do_renumber : bool
        Map the labels to ``0 .. k-1`` (:func:`renumber`).
    meta : dict
        The EdgeList's ``meta`` (``declared_n`` is added when renumbering).
    locate : callable
        ``locate(row, problem)`` raises a GraphFormatError at the line (or
        edge) of a record.
    ids : numpy.ndarray, optional
        The file's own labels (``.npz``), composed with the renumbering.
    insist : int, optional
        The caller's ``n`` (checked by :func:`check_n`): the vertex count,
        however large; it must equal ``n`` when the file declares one.
    declared_by : str, default "the file"
        What declared ``n``, for messages (``"the size line (line 2)"``).

    Returns
    -------
    EdgeList
        0-based edges on ``n`` vertices (the ids' count when renumbered).

    Raises
    ------
    GraphFormatError
        For a negative id, an id not below ``n``, more than
        ``2**MAX_VERTEX_BITS`` vertices, or a declared count far above what
        the edges warrant.
    ValueError
        If ``insist`` differs from a declared count.
    """
    if do_renumber:
        with allocating(path, "the renumbered ids", 4 * src.nbytes):
            src, dst, labels = renumber(src, dst)
        if ids is not None:  # the file's own labels: compose the two maps
            if labels.size and (labels[0] < 0 or labels[-1] >= ids.shape[0]):
                raise GraphFormatError(path, None, f"vertex ids exceed the {ids.shape[0]} 'ids'")
            labels = ids[labels]
        ids = labels
        if n is not None:
            meta["declared_n"] = int(n)
        return EdgeList(
            src, dst, len(labels), directed=directed, weights=weights, ids=ids, meta=meta
        )
    m = int(src.shape[0])
    if insist is not None:
        if n is not None and n != insist:
            raise ValueError(f"n={insist} contradicts {path}: {declared_by} declares {n} vertices")
        n = insist
    elif n is not None and n > 2**MAX_VERTEX_BITS:
        raise GraphFormatError(path, None, f"declared size: {too_many(n)}")
    elif n is not None and sparse_ids_problem(n - 1, m) is not None:
        raise GraphFormatError(
            path,
            None,
            f"{declared_by} declares {n} vertices for {m} edges (over {IDS_PER_EDGE} per "
            f"edge): refused before allocating per-vertex arrays; pass n={n} (command line: "
            f"--n {n}) to insist",
        )
    if src.size:
        lo = min(int(src.min()), int(dst.min()))
        if lo < 0:
            row = int(np.flatnonzero((src < 0) | (dst < 0))[0])
            locate(row, f"negative vertex id {lo} (pass renumber=True for arbitrary labels)")
        hi = max(int(src.max()), int(dst.max()))
        if n is not None and hi >= n:
            row = int(np.flatnonzero((src >= n) | (dst >= n))[0])
            given = "" if insist is not None else "declared "
            locate(row, f"vertex id {max(src[row], dst[row])} out of range for {given}n={n}")
    else:
        hi = -1
    if n is None:
        n = hi + 1
        if n > 2**MAX_VERTEX_BITS:
            row = int(np.flatnonzero((src >= 2**MAX_VERTEX_BITS) | (dst >= 2**MAX_VERTEX_BITS))[0])
            locate(row, too_many(n))
        problem = sparse_ids_problem(hi, m, ", or pass n to insist")
        if problem is not None:
            locate(int(np.flatnonzero((src == hi) | (dst == hi))[0]), problem)
    return EdgeList(src, dst, n, directed=directed, weights=weights, ids=ids, meta=meta)
