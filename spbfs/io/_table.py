"""Edge lists and CSV files: one ``src dst [weight]`` record per line.

Not public API (see :mod:`spbfs.io`, which exports :func:`read_edgelist` and
:func:`read_csv`). The parallel reader :mod:`spbfs.mpi.read` finds the first
record with :func:`table_head`.
"""

from __future__ import annotations

import logging
import os
import re
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

__all__ = ["read_csv", "read_edgelist", "table_head"]

_log = logging.getLogger(__name__)

#: A field that is a number as the scanner reads one: a decimal literal with an
#: optional sign and exponent; for a weight, also ``nan``, ``inf`` and ``infinity``.
_NUMERAL = re.compile(rb"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_WORD = re.compile(rb"[+-]?(nan|inf|infinity)", re.IGNORECASE)


def read_edgelist(
    path: PathLike,
    *,
    directed: bool | None = None,
    one_based: bool | None = None,
    renumber: bool = False,
    n: int | None = None,
    max_ratio: float | None = MAX_RATIO,
) -> EdgeList:
    """Read a SNAP-style edge list: one ``src dst [weight]`` record per line.

    Fields are separated by spaces or tabs; CRLF line ends, blank lines and
    comment lines starting with ``#`` or ``%`` are accepted. All records must
    have the same number of fields (2, or 3 with a weight). Weights are int64
    when every one is an integer, float64 otherwise. Ids are 0-based unless
    ``one_based=True``. ``directed`` stays None unless given: the format does
    not say.

    **Count line.** The first non-comment line may give the size of the graph
    instead of an edge:

    * a line with a single integer ``n`` is always a count line (an edge
      needs two fields); ``n`` becomes the vertex count, and every id must be
      below it;
    * a line with two integers ``n m`` is a count line when exactly ``m``
      records follow and every id in them is below ``n`` (``<= n`` when
      1-based) and ``n > 0``; otherwise it is the first edge (and, before
      weighted records, a field-count error). A lone line ``n 0`` with
      ``n > 0`` is thus an empty graph on ``n`` vertices, not a single edge.

    Anything else is an edge: a first line is never dropped on a guess. When a
    count line is found it is stored in ``meta["count_line"]`` (and its line
    in ``meta["count_line_at"]``), logged at INFO level by the ``spbfs.io``
    logger, and shown by ``spbfs info``. See :func:`read_graph` for the
    parameters (``n``, ``max_ratio``).
    """
    return _read_table(path, "edgelist", directed, one_based, renumber, n, max_ratio)


def read_csv(
    path: PathLike,
    *,
    directed: bool | None = None,
    one_based: bool | None = None,
    renumber: bool = False,
    n: int | None = None,
    max_ratio: float | None = MAX_RATIO,
) -> EdgeList:
    """Read a CSV edge list ``src,dst[,weight]``, 0-based unless ``one_based=True``.

    The first non-comment line is the header when one of its fields is
    neither empty nor a number (e.g. ``id_1,id_2``); its names go to
    ``meta["columns"]``. A first line of numbers is an edge whatever they
    are: ``0,1,0.5`` and ``0,1,nan`` are weighted edges, ``1.5,2`` and
    ``0,1,`` are errors at line 1, never a header dropped on a guess. Lines
    starting with ``#`` are comments. Spaces around fields are ignored;
    quoted fields are not supported. See :func:`read_graph` for the
    parameters (``n``, ``max_ratio``).
    """
    return _read_table(path, "csv", directed, one_based, renumber, n, max_ratio)


def table_head(path: PathLike, data: bytes, fmt: str) -> tuple[int, dict]:
    """Find the first record of an edge list or CSV file (past a CSV header line).

    Parameters
    ----------
    path : str or os.PathLike
        The file, for error messages and ``meta``.
    data : bytes
        The file's content from its start (a prefix that holds the first record will do).
    fmt : {"edgelist", "csv"}
        The format.

    Returns
    -------
    start : int
        The offset of the first record.
    meta : dict
        The file's ``meta``, with the CSV column names in ``"columns"``.

    Raises
    ------
    GraphFormatError
        If there is no record, or the CSV header does not name 2 or 3 columns.
    """
    comma = fmt == "csv"
    comments = b"#" if comma else b"#%"
    start, stop, first = next_record(data, 0, comments)
    if start < 0:
        raise GraphFormatError(path, 1, "empty file: no edges")
    meta: dict = {"path": os.fspath(path), "format": fmt}
    if comma:
        names = [t.strip() for t in first.split(b",")]
        if any(t and not _is_number(t, k >= 2) for k, t in enumerate(names)):
            meta["columns"] = [t.decode("utf-8", "replace").strip("\"'") for t in names]
            if not 2 <= len(names) <= 3:
                raise GraphFormatError(
                    path,
                    lines_before(data, start),
                    f"header {show(first)} must name 2 or 3 columns: src,dst[,weight]",
                )
            start, _, _ = next_record(data, stop, comments)
            if start < 0:
                raise GraphFormatError(path, last_line(data), "no edges after header")
    return start, meta


def _read_table(
    path: PathLike,
    fmt: str,
    directed: bool | None,
    one_based: bool | None,
    do_renumber: bool,
    n: int | None,
    max_ratio: float | None,
) -> EdgeList:
    """:func:`read_edgelist` or :func:`read_csv` after ``fmt``."""
    insist = check_n(n, do_renumber)
    data = read_bytes(path, max_ratio)
    comma = fmt == "csv"
    comments = b"#" if comma else b"#%"
    start, meta = table_head(path, data, fmt)
    line0 = lines_before(data, start)
    buf = np.frombuffer(data, np.uint8)
    c1, c2 = (comments + comments)[:2]
    with allocating(path, f"the edge arrays of {len(data)} bytes of text"):
        res = scanner.scan(
            buf,
            start,
            line0,
            2,
            3,
            comma,
            c1,
            c2,
            not comma,
            -1,
            scanner.I64_MIN,
            scanner.I64_MAX,
            0,
            scanner.INF,
            scanner.INFINITY,
            scanner.NAN,
        )
    what = record_shape(fmt)
    if res[10]:
        scanner.raise_scan_error(path, data, res, what)
    nrows, src, dst = int(res[0]), res[1], res[2]
    ncols_first, ncols = int(res[5]), int(res[6])

    lo = 0  # index of the first edge record
    n_decl = None
    if not comma:
        a, b = int(src[0]), int(dst[0])
        rest = slice(1, nrows)
        if ncols_first == 1:
            lo, n_decl = 1, a
            meta["count_line"] = (a,)
        elif ncols_first == 2 and b == nrows - 1 and a > 0 and insist in (None, a):
            # 1-based ids run up to n inclusive, 0-based ones up to n - 1.
            first_id, last_id = (1, a) if one_based else (0, a - 1)
            below = nrows == 1 or (
                max(int(src[rest].max()), int(dst[rest].max())) <= last_id
                and min(int(src[rest].min()), int(dst[rest].min())) >= first_id
            )
            if below:
                lo, n_decl = 1, a
                meta["count_line"] = (a, b)
        if lo == 0 and ncols and ncols != ncols_first:
            # The first record was an edge after all, so it must look like the rest.
            line1 = scanner.row_line(buf, start, line0, c1, c2, 1)
            raise GraphFormatError(
                path,
                int(line1),
                f"line has {ncols} fields but line {line0} has {ncols_first}; expected {what}",
            )
        if n_decl is not None and n_decl < 0:
            raise GraphFormatError(path, line0, f"negative vertex count {n_decl}")
        if lo:
            meta["count_line_at"] = line0
            _log.info("%s, line %d: read as a count line %s, not an edge", path, line0,
                      " ".join(map(str, meta["count_line"])))
        ncols = ncols or ncols_first
    if ncols == 1:  # only a count line (edge lists) - no edges
        ncols = 2
    weights = None
    if ncols == 3:
        weights = scanner.convert_weights(path, buf, res, nrows, lo, None)
    src = scanner.compact(src, nrows)[lo:]
    dst = scanner.compact(dst, nrows)[lo:]

    def locate(row: int, problem: str) -> NoReturn:
        scanner.fail_at_row(path, buf, start, line0, comments, row + lo, problem)

    if one_based and not do_renumber:
        if src.size and min(int(src.min()), int(dst.min())) < 1:
            row = int(np.flatnonzero((src < 1) | (dst < 1))[0])
            locate(row, f"vertex id {min(src[row], dst[row])} in a 1-based file")
        src = src - 1
        dst = dst - 1
    return finish(
        path,
        src,
        dst,
        n=n_decl,
        directed=directed,
        weights=weights,
        do_renumber=do_renumber,
        meta=meta,
        locate=locate,
        insist=insist,
        declared_by=f"the count line (line {line0})",
    )


def _is_number(tok: bytes, weight: bool) -> bool:
    """Whether a CSV field reads as a number (``nan``/``inf`` count for a weight)."""
    return bool(_NUMERAL.fullmatch(tok) or (weight and _WORD.fullmatch(tok)))
