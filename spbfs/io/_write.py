"""The writers: edge lists, Matrix Market files and spbfs ``.npz`` archives.

Not public API (see :mod:`spbfs.io`, which exports :func:`write_edgelist`,
:func:`write_mtx` and :func:`save_npz`). Text is rendered by the compiled
:func:`spbfs.io.scanner.format_int_rows`, so each file reads back with the
matching reader. The MPI ranks' parallel ``.npz`` writer is
:mod:`spbfs.io.parallel_npz`.
"""

from __future__ import annotations

from typing import IO

import numpy as np

from spbfs.edges import EdgeList
from spbfs.io._common import PathLike, open_write
from spbfs.io.scanner import format_int_rows

__all__ = ["save_npz", "write_edgelist", "write_mtx"]

_WRITE_CHUNK = 1 << 20  # rows rendered per write: bounds the text buffer


def _write_rows(
    f: IO[bytes], cols: list[np.ndarray], weights: np.ndarray | None, shift: int
) -> None:
    """Write one tab-separated line per edge: the ``cols``, ``shift`` added, then a weight."""
    m = cols[0].shape[0]
    float_w = weights is not None and not np.issubdtype(weights.dtype, np.integer)
    if weights is not None and not float_w:
        cols = [*cols, weights.astype(np.int64)]
    stack = np.ascontiguousarray(np.stack(cols)) if cols[0].size else np.zeros((len(cols), 0))
    stack = stack.astype(np.int64, copy=False)
    for lo in range(0, m, _WRITE_CHUNK):
        hi = min(m, lo + _WRITE_CHUNK)
        if not float_w:
            f.write(format_int_rows(stack, shift, lo, hi).tobytes())
        else:
            # repr() gives the shortest text that reads back to the same double.
            rows = map(
                "{}\t{}\t{!r}\n".format,
                (stack[0, lo:hi] + shift).tolist(),
                (stack[1, lo:hi] + shift).tolist(),
                weights[lo:hi].astype(np.float64).tolist(),
            )
            f.write("".join(rows).encode())


def _weights_kind(el: EdgeList) -> str:
    """The Matrix Market field of ``el``'s weights: pattern, integer or real."""
    w = el.weights
    if w is None:
        return "pattern"
    if np.issubdtype(w.dtype, np.bool_) or np.issubdtype(w.dtype, np.integer):
        return "integer"
    if np.issubdtype(w.dtype, np.floating):
        return "real"
    raise ValueError(f"cannot write weights of dtype {w.dtype}")


def write_edgelist(path: PathLike, edgelist: EdgeList, *, count_line: bool = True) -> None:
    """Write an edge list readable by :func:`read_edgelist`.

    The file starts with ``#`` comments (vertex and edge counts, direction),
    then, with ``count_line``, a line holding ``n`` so that isolated vertices
    survive a round trip, then one tab-separated ``src dst [weight]`` line
    per edge, 0-based. A ``.gz`` suffix compresses the output.

    Parameters
    ----------
    path : str or os.PathLike
        Destination.
    edgelist : EdgeList
        The edges to write.
    count_line : bool, default True
        Whether to write the vertex count line.
    """
    kind = _weights_kind(edgelist)
    with open_write(path) as f:
        f.write(
            f"# spbfs edge list: n={edgelist.n} edges={edgelist.num_edges} "
            f"directed={edgelist.directed} weights={kind}\n".encode()
        )
        if count_line:
            f.write(f"{edgelist.n}\n".encode())
        _write_rows(f, [edgelist.src, edgelist.dst], edgelist.weights, 0)


def write_mtx(path: PathLike, edgelist: EdgeList) -> None:
    """Write a Matrix Market coordinate file readable by :func:`read_mtx`.

    An undirected edge list (``directed=False``) is written ``symmetric``
    with each entry moved to the lower triangle (row >= column), as the
    format requires; otherwise ``general``. The field is ``pattern`` without
    weights, else ``integer`` or ``real`` after the weights' dtype.

    Parameters
    ----------
    path : str or os.PathLike
        Destination (``.gz`` compresses).
    edgelist : EdgeList
        The edges to write.
    """
    field = _weights_kind(edgelist)
    symmetric = edgelist.directed is False
    src, dst = edgelist.src, edgelist.dst
    if symmetric:
        src, dst = np.maximum(src, dst), np.minimum(src, dst)
    n, m = edgelist.n, edgelist.num_edges
    with open_write(path) as f:
        f.write(
            f"%%MatrixMarket matrix coordinate {field} "
            f"{'symmetric' if symmetric else 'general'}\n"
            f"% written by spbfs: directed={edgelist.directed}\n"
            f"{n} {n} {m}\n".encode()
        )
        _write_rows(f, [src, dst], edgelist.weights, 1)


def save_npz(path: PathLike, edgelist: EdgeList, *, compressed: bool = False) -> None:
    """Save an edge list as ``.npz`` (arrays ``src``, ``dst``, ``n``, ``directed``...).

    ``directed`` is stored as int8 (1, 0, or -1 for unspecified) so the
    archive loads without pickle; ``weights`` and ``ids`` are stored when
    present. The exact path is used (no ``.npz`` is appended).

    Parameters
    ----------
    path : str or os.PathLike
        Destination.
    edgelist : EdgeList
        The edges to save.
    compressed : bool, default False
        Use zip deflate (smaller, slower).
    """
    arrays = {
        "src": edgelist.src,
        "dst": edgelist.dst,
        "n": np.int64(edgelist.n),
        "directed": np.int8({None: -1, False: 0, True: 1}[edgelist.directed]),
    }
    if edgelist.weights is not None:
        arrays["weights"] = edgelist.weights
    if edgelist.ids is not None:
        arrays["ids"] = edgelist.ids
    saver = np.savez_compressed if compressed else np.savez
    with open_write(path) as f:
        saver(f, **arrays)
