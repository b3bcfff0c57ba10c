"""Matrix Market coordinate files: the banner and size line, then the entries.

Not public API (see :mod:`spbfs.io`, which exports :func:`read_mtx`). The
parallel reader :mod:`spbfs.mpi.read` parses the head with :func:`mtx_head`
and refuses ``one_based=False`` with :data:`MTX_ONE_BASED`.
"""

from __future__ import annotations

import os
from typing import NoReturn

import numpy as np

from spbfs.edges import EdgeList
from spbfs.io import scanner
from spbfs.io._common import (
    MAX_RATIO,
    GraphFormatError,
    PathLike,
    allocating,
    last_line,
    lines_before,
    next_record,
    read_bytes,
    record_shape,
    show,
)
from spbfs.io._ids import check_n, finish

__all__ = ["MTX_ONE_BASED", "mtx_head", "read_mtx"]

#: Why ``one_based=False`` is refused for a Matrix Market file.
MTX_ONE_BASED = "Matrix Market files are 1-based; one_based=False contradicts the format"

_MM_FIELDS = ("pattern", "real", "integer")
_MM_SYMMETRY = ("general", "symmetric", "skew-symmetric", "hermitian")


def mtx_head(path: PathLike, data: bytes) -> tuple[str, str, int, int, int, int]:
    """Check a Matrix Market banner and size line.

    Parameters
    ----------
    path : str or os.PathLike
        The file, for error messages.
    data : bytes
        The file's content from its start (a prefix that holds the size line will do).

    Returns
    -------
    tuple
        ``(field, symmetry, rows, nnz, body, size_line)``: ``body`` is the
        offset just past the size line, ``size_line`` its 1-based line number.

    Raises
    ------
    GraphFormatError
        If the banner or the size line is missing or not supported.
    """
    if not data or data.isspace():
        raise GraphFormatError(path, 1, "empty file")
    end = data.find(b"\n")
    end = len(data) if end < 0 else end + 1
    banner = data[:end].strip()
    if not banner.lower().startswith(b"%%matrixmarket"):
        raise GraphFormatError(
            path, 1, f"missing '%%MatrixMarket' header line (got {show(banner)})"
        )
    words = banner.decode("ascii", "replace").lower().split()
    if len(words) != 5:
        raise GraphFormatError(
            path,
            1,
            "header must read '%%MatrixMarket matrix coordinate FIELD SYMMETRY', "
            f"got {show(banner)}",
        )
    _, obj, layout, field, symmetry = words
    if obj != "matrix":
        raise GraphFormatError(path, 1, f"object {obj!r} is not supported: expected 'matrix'")
    if layout == "array":
        raise GraphFormatError(
            path, 1, "dense 'array' format is not supported: a graph file must use 'coordinate'"
        )
    if layout != "coordinate":
        raise GraphFormatError(path, 1, f"unknown format {layout!r}: expected 'coordinate'")
    if field == "complex":
        raise GraphFormatError(path, 1, "'complex' values are not supported")
    if field not in _MM_FIELDS:
        raise GraphFormatError(
            path, 1, f"unknown field {field!r}: expected one of {', '.join(_MM_FIELDS)}"
        )
    if symmetry not in _MM_SYMMETRY:
        raise GraphFormatError(
            path, 1, f"unknown symmetry {symmetry!r}: expected one of {', '.join(_MM_SYMMETRY)}"
        )

    start, body, size = next_record(data, end, b"%")
    if start < 0:
        raise GraphFormatError(path, last_line(data), "missing size line 'M N NNZ'")
    size_line = lines_before(data, start)
    try:
        rows, cols, nnz = (int(t) for t in size.split())
    except ValueError:
        raise GraphFormatError(
            path, size_line, f"size line must be three integers 'M N NNZ', got {show(size)}"
        ) from None
    if min(rows, cols, nnz) < 0:
        raise GraphFormatError(path, size_line, f"negative size in {show(size)}")
    if rows != cols:
        raise GraphFormatError(
            path, size_line, f"matrix is {rows}x{cols}: a graph's adjacency must be square"
        )
    return field, symmetry, rows, nnz, body, size_line


def read_mtx(
    path: PathLike,
    *,
    directed: bool | None = None,
    one_based: bool | None = None,
    renumber: bool = False,
    n: int | None = None,
    max_ratio: float | None = MAX_RATIO,
) -> EdgeList:
    """Read a Matrix Market coordinate file.

    The banner ``%%MatrixMarket matrix coordinate FIELD SYMMETRY`` is
    required, with FIELD one of ``pattern``, ``real``, ``integer`` (``complex``
    is rejected) and SYMMETRY one of ``general`` (``directed=True``),
    ``symmetric``, ``skew-symmetric`` or ``hermitian`` (all three
    ``directed=False``: only the structure matters here). Entries are returned
    as stored (a symmetric file lists one triangle). ``real``/``integer``
    values become float64/int64 ``weights``, explicit zeros included.

    The matrix must be square; the declared entry count must match the
    entry lines exactly. A declared size far larger than the entries warrant
    is refused unless ``n`` repeats it. Comment and blank lines are allowed
    anywhere after the banner. See :func:`read_graph` for the parameters
    (``n``, ``max_ratio``).
    """
    if one_based is False:
        raise ValueError(MTX_ONE_BASED)
    insist = check_n(n, renumber)
    data = read_bytes(path, max_ratio)
    field, symmetry, rows, nnz, body, size_line = mtx_head(path, data)
    buf = np.frombuffer(data, np.uint8)
    ncols = 2 if field == "pattern" else 3
    line0 = size_line + 1
    # The range check and the 1-based shift happen inside the scan; renumbering
    # keeps the labels as written, so no shift then.
    with allocating(path, f"the edge arrays of {len(data)} bytes of text"):
        res = scanner.scan(
            buf,
            body,
            line0,
            ncols,
            ncols,
            False,
            ord("%"),
            ord("%"),
            False,
            nnz,
            1,
            rows,
            0 if renumber else 1,
            scanner.INF,
            scanner.INFINITY,
            scanner.NAN,
        )
    what = record_shape("mtx", ncols)
    if res[10]:
        scanner.raise_scan_error(path, data, res, what, f"1..{rows}")
    nrows = int(res[0])
    if nrows < nnz:
        raise GraphFormatError(
            path,
            last_line(data),
            f"file ends after {nrows} entries but the size line (line {size_line}) "
            f"declares {nnz}: truncated file?",
        )
    src = res[1][:nrows]
    dst = res[2][:nrows]

    def locate(row: int, problem: str) -> NoReturn:
        scanner.fail_at_row(path, buf, body, line0, b"%", row, problem)

    weights = None
    if ncols == 3:
        weights = scanner.convert_weights(path, buf, res, nrows, 0, field == "integer")
    meta = {"path": os.fspath(path), "format": "mtx", "field": field, "symmetry": symmetry}
    if directed is None:
        directed = symmetry == "general"
    return finish(
        path,
        src,
        dst,
        n=rows,
        directed=directed,
        weights=weights,
        do_renumber=renumber,
        meta=meta,
        locate=locate,
        insist=insist,
        declared_by=f"the size line (line {size_line})",
    )
