"""``.npz`` archives: spbfs's own ``src``/``dst`` layout and ``scipy.sparse`` matrices.

Not public API (see :mod:`spbfs.io`, which exports :func:`read_npz`; the
writer is :func:`spbfs.io.save_npz`). The parallel reader :mod:`spbfs.mpi.read`
checks its slices of a csr or csc pointer with :func:`sparse_pointer_problem`.
"""

from __future__ import annotations

import io
import os
import zipfile
import zlib
from typing import NoReturn

import numpy as np

from spbfs.edges import EdgeList
from spbfs.io._common import MAX_RATIO, GraphFormatError, PathLike, check_ratio, read_bytes
from spbfs.io._ids import check_n, finish

__all__ = ["read_npz", "sparse_pointer_problem"]

#: What a damaged archive raises when it is opened or a member is read: zipfile's
#: own errors, NotImplementedError for an unknown version or compression method,
#: RuntimeError for an "encrypted" flag, zlib.error for bad deflate data, and numpy's
#: ValueError/TypeError/EOFError for a bad ``.npy`` header or a pickled member.
_ARCHIVE_ERRORS = (ValueError, TypeError, KeyError, OSError, EOFError, zipfile.BadZipFile,
                   NotImplementedError, RuntimeError, zlib.error)


#: The formats ``scipy.sparse.save_npz`` writes.
_SCIPY_FORMATS = ("coo", "csr", "csc", "bsr", "dia")


def sparse_pointer_problem(
    indptr: np.ndarray, indices_shape: tuple[int, ...], first: int = 0, last: bool = True
) -> str | None:
    """What is wrong with a ``scipy.sparse`` archive's ``indptr``, or None.

    ``indptr`` may be a slice starting at entry ``first`` of the whole array
    (``last``: it holds the final entry), so the parallel reader checks its
    slices with the serial reader's words. The order across slice boundaries
    is the caller's to check.

    Parameters
    ----------
    indptr : numpy.ndarray
        The pointer, or a slice of it.
    indices_shape : tuple of int
        The shape of the archive's ``indices``.
    first : int, default 0
        The index of ``indptr[0]`` in the whole pointer.
    last : bool, default True
        Whether the slice holds the pointer's final entry.

    Returns
    -------
    str or None
        The problem, worded for a GraphFormatError, or None when there is none.
    """
    if indptr.ndim != 1 or not np.issubdtype(indptr.dtype, np.integer):
        return f"'indptr' must be a 1-D integer array, got {indptr.dtype} of shape {indptr.shape}"
    if indptr.size and first == 0 and indptr[0] != 0:
        return f"'indptr' must start at 0, not {indptr[0]}"
    if indptr.size > 1:
        down = np.flatnonzero(indptr[1:] < indptr[:-1])
        if down.size:
            k = int(down[0]) + first
            return (f"'indptr' must not decrease: entry {k + 1} is "
                    f"{indptr[k + 1 - first]} < {indptr[k - first]}")
    nnz = indices_shape[0] if len(indices_shape) == 1 else -1
    if last and indptr.size and indptr[-1] != nnz:
        return (f"'indptr' ends at {indptr[-1]} but 'indices' has shape {indices_shape}: "
                f"every stored entry must belong to a row or column")
    return None


def _sparse_edges(
    path: PathLike, arch: np.lib.npyio.NpzFile, raw: bytes
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, str]:
    """Edges of a square ``scipy.sparse`` archive: (src, dst, weights, n, format).

    coo, csr and csc are read from their arrays, so an id out of range is
    reported by its edge (the position of the stored entry) as for any other
    file, and a pointer that decreases or ends early is an error rather than
    rows of uninitialized memory or dropped entries (scipy checks neither on
    load). Other formats go through scipy.
    """
    def bad(problem: str) -> GraphFormatError:
        return GraphFormatError(path, None, problem)

    try:
        kind = arch["format"]
        if kind.shape != () or kind.dtype.kind not in "SU":
            raise bad(f"'format' must be a string, got {kind.dtype} of shape {kind.shape}")
        kind = kind.item().decode("ascii", "replace") if kind.dtype.kind == "S" else str(kind)
        if kind not in _SCIPY_FORMATS:
            raise bad(f"unknown scipy.sparse format {kind!r}; expected one of "
                      f"{', '.join(_SCIPY_FORMATS)}")
        shape = arch["shape"]
        if kind in ("coo", "csr", "csc"):
            first, second = ("row", "col") if kind == "coo" else ("indptr", "indices")
            a, b, data = arch[first], arch[second], arch["data"]
    except _ARCHIVE_ERRORS as exc:
        raise bad(f"unreadable scipy.sparse matrix ({exc})") from None
    if shape.shape != (2,) or not np.issubdtype(shape.dtype, np.integer):
        raise bad(f"unreadable scipy.sparse matrix ('shape' is {shape!r})")
    if shape[0] != shape[1]:
        raise bad(f"matrix is {shape[0]}x{shape[1]}: a graph's adjacency must be square")
    n = int(shape[0])
    if kind not in ("coo", "csr", "csc"):
        import scipy.sparse as sp

        try:
            coo = sp.load_npz(io.BytesIO(raw)).tocoo()
        except (*_ARCHIVE_ERRORS, IndexError) as exc:
            raise bad(f"unreadable scipy.sparse matrix ({exc})") from None
        return coo.row.astype(np.int64), coo.col.astype(np.int64), coo.data, n, kind
    for name, arr in ((first, a), (second, b)):
        if arr.ndim != 1 or not np.issubdtype(arr.dtype, np.integer):
            raise bad(f"'{name}' must be a 1-D integer array, got {arr.dtype} "
                      f"of shape {arr.shape}")
    if kind == "coo" and a.shape != b.shape:
        raise bad(f"'row' and 'col' must be of equal length, got {a.size} and {b.size}")
    if data.shape != b.shape:
        raise bad(f"'data' has shape {data.shape}, expected {b.shape}")
    if kind == "coo":
        return a.astype(np.int64), b.astype(np.int64), data, n, kind
    if a.size != n + 1:
        raise bad(f"'indptr' has {a.size} entries, expected {n + 1} for {n}x{n}")
    problem = sparse_pointer_problem(a, b.shape)
    if problem:
        raise bad(problem)
    major = np.repeat(np.arange(n, dtype=np.int64), np.diff(a))
    minor = b.astype(np.int64)
    src, dst = (major, minor) if kind == "csr" else (minor, major)
    return src, dst, data, n, kind


def read_npz(
    path: PathLike,
    *,
    directed: bool | None = None,
    one_based: bool | None = None,
    renumber: bool = False,
    n: int | None = None,
    max_ratio: float | None = MAX_RATIO,
) -> EdgeList:
    """Read a ``.npz`` archive.

    Two layouts are accepted:

    * arrays ``src``, ``dst`` and optionally ``n``, ``weights``, ``directed``
      (bool, or int8 with -1 meaning unspecified) and ``ids``, as written by
      :func:`save_npz`;
    * a ``scipy.sparse.save_npz`` matrix, which must be square: its stored
      entries (explicit zeros included) become the edges in stored order,
      their values the weights, and ``directed`` stays None. coo, csr and csc
      are read from their arrays, so a pointer that decreases or ends early
      and an id out of range are errors naming the array or the edge.

    Ids are 0-based. A member that expands to more than ``max_ratio`` times
    its compressed size (as the archive's directory declares it, which zip
    enforces) is refused before it is read. See :func:`read_graph` for the
    parameters (``n``, ``max_ratio``).
    """
    if one_based:
        raise ValueError("npz archives hold 0-based ids; one_based=True contradicts the format")
    insist = check_n(n, renumber)
    raw = read_bytes(path, max_ratio)
    if not raw:
        raise GraphFormatError(path, None, "empty file")
    try:
        arch = np.load(io.BytesIO(raw), allow_pickle=False)
    except _ARCHIVE_ERRORS as exc:
        raise GraphFormatError(path, None, f"not a readable .npz archive ({exc})") from None
    if not isinstance(arch, np.lib.npyio.NpzFile):
        raise GraphFormatError(path, None, "a single .npy array, not an .npz archive")
    meta: dict = {"path": os.fspath(path), "format": "npz"}
    for member in arch.zip.infolist():
        check_ratio(path, f"member {member.filename!r}", member.compress_size,
                    member.file_size, max_ratio)

    def locate(row: int, problem: str) -> NoReturn:
        raise GraphFormatError(path, None, f"edge {row}: {problem}")

    with arch:
        keys = set(arch.files)
        if {"src", "dst"} <= keys:
            src, dst = _member(path, arch, "src"), _member(path, arch, "dst")
            n_decl = _scalar(path, arch, "n", "iu") if "n" in keys else None
            weights = _member(path, arch, "weights") if "weights" in keys else None
            ids = _member(path, arch, "ids") if "ids" in keys else None
            stored = _scalar(path, arch, "directed", "biu") if "directed" in keys else None
            if src.ndim != 1 or src.shape != dst.shape:
                raise GraphFormatError(
                    path,
                    None,
                    f"'src' and 'dst' must be 1-D of equal length, got shapes "
                    f"{src.shape} and {dst.shape}",
                )
            for name, arr in (("src", src), ("dst", dst)):
                if arr.size and not np.issubdtype(arr.dtype, np.integer):
                    raise GraphFormatError(
                        path, None, f"'{name}' has non-integer dtype {arr.dtype}"
                    )
            src = src.astype(np.int64, copy=False)
            dst = dst.astype(np.int64, copy=False)
            if stored is not None and directed is None:
                directed = None if (not isinstance(stored, bool) and stored < 0) else bool(stored)
            if ids is not None and not renumber and (n_decl is None or ids.shape != (n_decl,)):
                raise GraphFormatError(
                    path, None, f"'ids' has shape {ids.shape}, expected ({n_decl},)"
                )
            meta["layout"] = "edges"
        elif {"format", "shape", "data"} <= keys:
            src, dst, weights, n_decl, kind = _sparse_edges(path, arch, raw)
            ids = None
            meta["layout"] = "scipy.sparse"
            meta["sparse_format"] = kind
        else:
            raise GraphFormatError(
                path,
                None,
                "expected arrays 'src' and 'dst' (spbfs) or a scipy.sparse matrix; "
                f"found {sorted(keys)}",
            )
    if weights is not None and (weights.shape != src.shape or weights.dtype.kind not in "biuf"):
        name = "weights" if meta["layout"] == "edges" else "data"
        raise GraphFormatError(
            path,
            None,
            f"'{name}' has dtype {weights.dtype} and shape {weights.shape}, expected "
            f"numbers of shape {src.shape}",
        )
    return finish(
        path,
        src,
        dst,
        n=n_decl,
        directed=directed,
        weights=weights,
        do_renumber=renumber,
        meta=meta,
        locate=locate,
        ids=ids,
        insist=insist,
        declared_by="its 'n'" if meta["layout"] == "edges" else "its 'shape'",
    )


def _member(path: PathLike, arch: np.lib.npyio.NpzFile, name: str) -> np.ndarray:
    """Array ``name`` of the archive, or a GraphFormatError naming the file and the member."""
    try:
        return np.asarray(arch[name])
    except _ARCHIVE_ERRORS as exc:
        raise GraphFormatError(path, None, f"member {name!r} is unreadable ({exc})") from None


def _scalar(path: PathLike, arch: np.lib.npyio.NpzFile, name: str, kinds: str) -> int | bool:
    """Member ``name`` as one bool or integer (dtype kinds ``kinds``), else a GraphFormatError.

    A string such as ``directed='yes'`` or an array would otherwise reach
    ``int()``/``bool()`` and fail with a TypeError naming neither file nor member,
    or be taken as true.
    """
    arr = _member(path, arch, name)
    if arr.shape != () or arr.dtype.kind not in kinds:
        want = "a bool or integer" if "b" in kinds else "an integer"
        raise GraphFormatError(
            path, None, f"member {name!r} must be {want} scalar, got {arr.dtype} of shape "
            f"{arr.shape}"
        )
    value = arr.item()
    if arr.dtype.kind == "u" and value > np.iinfo(np.int64).max:
        raise GraphFormatError(path, None, f"member {name!r} = {value} does not fit in int64")
    return value
