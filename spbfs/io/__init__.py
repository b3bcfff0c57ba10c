"""Graph file readers and writers.

Every reader returns an :class:`~spbfs.edges.EdgeList` that reports faithfully
what the file says: duplicates, self-loops and explicit zeros are kept, and a
symmetric Matrix Market file yields each stored entry once with
``directed=False`` (graph construction, not the reader, adds the mirror
edges).

Supported formats (``fmt`` argument of :func:`read_graph`):

``"mtx"``
    Matrix Market coordinate files (``.mtx``), 1-based.
``"edgelist"``
    SNAP-style whitespace separated ``src dst [weight]`` lines (``.txt``,
    ``.el``, ``.tsv``, ``.edges``, ``.snap``), 0-based by default.
``"csv"``
    Comma separated ``src,dst[,weight]`` with a header line (``.csv``), 0-based.
``"npz"``
    NumPy archives written by :func:`save_npz`, or ``scipy.sparse.save_npz``
    matrices (``.npz``).

Any of these may be gzip-compressed (``.gz`` suffix).

Text parsing is done in one compiled pass over the raw bytes (numba), so a
malformed file is reported with the exact line number at no cost to the
well-formed case. Every malformed file raises :class:`GraphFormatError`.
"""

from __future__ import annotations

import gzip
import io as _stdio
import os
import zipfile
import zlib
from pathlib import Path

import numpy as np
from numba import njit

from spbfs.edges import EdgeList

__all__ = [
    "FORMATS",
    "MAX_VERTEX_BITS",
    "GraphFormatError",
    "read_csv",
    "read_edgelist",
    "read_graph",
    "read_mtx",
    "read_npz",
    "renumber",
    "save_npz",
    "write_edgelist",
    "write_mtx",
]

#: Valid values of the ``fmt`` argument of :func:`read_graph`.
FORMATS: tuple[str, ...] = ("mtx", "edgelist", "csv", "npz")

#: Without renumbering, ``n = max id + 1`` must not exceed ``2**MAX_VERTEX_BITS``:
#: beyond that, per-vertex arrays would not fit in memory, and the ids are
#: almost surely sparse labels that :func:`renumber` should compact.
MAX_VERTEX_BITS: int = 40

_SUFFIX_FORMAT = {
    ".mtx": "mtx",
    ".txt": "edgelist",
    ".el": "edgelist",
    ".tsv": "edgelist",
    ".edges": "edgelist",
    ".snap": "edgelist",
    ".csv": "csv",
    ".npz": "npz",
}

PathLike = str | os.PathLike


class GraphFormatError(ValueError):
    """A graph file is malformed.

    The message reads ``"<path>, line <k>: <problem>"`` (or ``"<path>: <problem>"``
    when no line applies, e.g. for binary formats).

    Parameters
    ----------
    path : str or os.PathLike
        The offending file.
    line : int or None
        1-based line number of the problem, if it has one.
    problem : str
        What is wrong.
    """

    def __init__(self, path: PathLike, line: int | None, problem: str) -> None:
        self.path = str(path)
        self.line = line
        self.problem = problem
        where = self.path if line is None else f"{self.path}, line {line}"
        super().__init__(f"{where}: {problem}")

    def __reduce__(self):  # keep the exception picklable (multiprocessing, MPI)
        return (type(self), (self.path, self.line, self.problem))


# ---------------------------------------------------------------------------
# Compiled scanning kernels
# ---------------------------------------------------------------------------

# Error codes returned by _scan (0 = fine).
_E_FEW, _E_MANY, _E_NCOLS, _E_INT, _E_BIG, _E_EMPTY, _E_NUM, _E_ROWS, _E_SEP, _E_RANGE = range(
    1, 11
)


@njit(cache=True, inline="always")
def _is_space(c):
    # Newline (10) is deliberately not whitespace: it ends a record. CR counts
    # as whitespace so CRLF files need no special case.
    return c == 32 or c == 9 or c == 13 or c == 11 or c == 12


@njit(cache=True)
def _parse_int(buf, s, e):
    """Parse buf[s:e] as a decimal int64: return (value, status 0 ok/1 bad/2 overflow)."""
    i = s
    neg = False
    c = buf[i]
    if c == 45 or c == 43:
        neg = c == 45
        i += 1
        if i == e:
            return 0, 1
    while i < e - 1 and buf[i] == 48:  # leading zeros do not count toward overflow
        i += 1
    if e - i > 19:
        for k in range(i, e):
            if buf[k] < 48 or buf[k] > 57:
                return 0, 1
        return 0, 2
    # 19 decimal digits always fit in uint64, so the loop needs no overflow
    # test (a division per digit would dominate the parse); check once after.
    acc = np.uint64(0)
    while i < e:
        d = np.uint64(buf[i]) - np.uint64(48)
        if d > np.uint64(9):  # unsigned: bytes below '0' wrap around too
            return 0, 1
        acc = acc * np.uint64(10) + d
        i += 1
    if acc > np.uint64(9223372036854775807):
        return 0, 2
    val = np.int64(acc)
    if neg:
        val = -val
    return val, 0


@njit(cache=True)
def _word_at(buf, i, e, word):
    """Case-insensitive test that buf[i:e] equals the ASCII lower-case ``word``."""
    if e - i != len(word):
        return False
    for k in range(len(word)):
        if (buf[i + k] | 32) != word[k]:
            return False
    return True


_I64_MIN = np.iinfo(np.int64).min
_I64_MAX = np.iinfo(np.int64).max
_INF = np.frombuffer(b"inf", np.uint8)
_INFINITY = np.frombuffer(b"infinity", np.uint8)
_NAN = np.frombuffer(b"nan", np.uint8)


@njit(cache=True)
def _is_float(buf, s, e, inf, infinity, nan):
    """True when buf[s:e] is a decimal float literal that numpy's cast accepts."""
    i = s
    if buf[i] == 45 or buf[i] == 43:
        i += 1
    if i == e:
        return False
    if _word_at(buf, i, e, inf) or _word_at(buf, i, e, infinity) or _word_at(buf, i, e, nan):
        return True
    digits = 0
    while i < e and 48 <= buf[i] <= 57:
        i += 1
        digits += 1
    if i < e and buf[i] == 46:
        i += 1
        while i < e and 48 <= buf[i] <= 57:
            i += 1
            digits += 1
    if digits == 0:
        return False
    if i < e and (buf[i] == 101 or buf[i] == 69):
        i += 1
        if i < e and (buf[i] == 45 or buf[i] == 43):
            i += 1
        exp_digits = 0
        while i < e and 48 <= buf[i] <= 57:
            i += 1
            exp_digits += 1
        if exp_digits == 0:
            return False
    return i == e


@njit(cache=True)
def _scan(
    buf,
    pos,
    line,
    mincols,
    maxcols,
    comma,
    c1,
    c2,
    first_free,
    max_rows,
    id_lo,
    id_hi,
    shift,
    inf,
    infinity,
    nan,
):
    """Parse records ``id id [value]`` from ``buf[pos:]``.

    Blank lines and lines whose first non-blank byte is ``c1`` or ``c2`` are
    skipped. The first two fields are parsed as int64; a third is only checked
    to be a number and its byte span recorded (numpy converts the spans with
    correct rounding). With ``first_free`` the first record may have any
    number of fields (a count line); the field count must agree from the next
    record on. Ids outside ``[id_lo, id_hi]`` are an error; ``shift`` is
    subtracted from the stored ids (1-based files), which spares the caller
    full passes over the arrays. Returns the arrays and, on the first error,
    its code, line and the offending byte span.
    """
    n = buf.shape[0]
    cap = 1
    for k in range(pos, n):
        if buf[k] == 10:
            cap += 1
    if max_rows >= 0 and cap > max_rows:
        cap = max_rows
    src = np.empty(cap, np.int64)
    dst = np.empty(cap, np.int64)
    wcap = cap if maxcols > 2 else 0
    ws = np.empty(wcap, np.int64)
    we = np.empty(wcap, np.int64)
    nrows = 0
    ncols_first = 0
    ncols = 0
    maxlen = 0
    all_int = True
    nonint_line = -1
    err = 0
    ts = pos
    te = pos
    while pos < n:
        p = pos
        while p < n and _is_space(buf[p]):
            p += 1
        if p >= n:
            break
        c = buf[p]
        if c == 10:
            pos = p + 1
            line += 1
            continue
        if c == c1 or c == c2:
            while p < n and buf[p] != 10:
                p += 1
            pos = p + 1
            line += 1
            continue
        ls = p
        ts = p
        te = p
        if max_rows >= 0 and nrows >= max_rows:
            err = _E_ROWS
            break
        col = 0
        while True:
            s = p
            while p < n:
                c = buf[p]
                if c == 10 or _is_space(c) or (comma and c == 44):
                    break
                p += 1
            e = p
            ts = s
            te = e
            if s == e:
                err = _E_EMPTY
                break
            if col >= maxcols:
                err = _E_MANY
                break
            if col < 2:
                v, st = _parse_int(buf, s, e)
                if st != 0:
                    err = _E_INT if st == 1 else _E_BIG
                    break
                if v < id_lo or v > id_hi:
                    err = _E_RANGE
                    break
                v -= shift
                if col == 0:
                    src[nrows] = v
                else:
                    dst[nrows] = v
            else:
                if not _is_float(buf, s, e, inf, infinity, nan):
                    err = _E_NUM
                    break
                ws[nrows] = s
                we[nrows] = e
                if e - s > maxlen:
                    maxlen = e - s
                if all_int:
                    _, st = _parse_int(buf, s, e)
                    if st != 0:
                        all_int = False
                        nonint_line = line
            col += 1
            while p < n and _is_space(buf[p]):
                p += 1
            if p >= n or buf[p] == 10:
                break
            if comma:
                if buf[p] != 44:
                    ts = p
                    te = p + 1
                    err = _E_SEP
                    break
                p += 1
                while p < n and _is_space(buf[p]):
                    p += 1
                if p >= n or buf[p] == 10:
                    ts = p
                    te = p
                    err = _E_EMPTY
                    break
        if err != 0:
            break
        free = first_free and nrows == 0
        if col < (1 if free else mincols) or (not free and ncols != 0 and col != ncols):
            err = _E_FEW if col < mincols else _E_NCOLS
            ts = ls
            te = p
            break
        if free:
            ncols_first = col
        elif ncols == 0:
            ncols = col
        nrows += 1
        pos = p + 1
        line += 1
    return (
        nrows,
        src,
        dst,
        ws,
        we,
        ncols_first,
        ncols,
        maxlen,
        all_int,
        nonint_line,
        err,
        line,
        ts,
        te,
    )


@njit(cache=True)
def _row_line(buf, pos, line, c1, c2, row):
    """Line number of data record number ``row`` (0-based) counted from ``pos``."""
    n = buf.shape[0]
    k = 0
    while pos < n:
        p = pos
        while p < n and _is_space(buf[p]):
            p += 1
        if p >= n:
            break
        c = buf[p]
        data = not (c == 10 or c == c1 or c == c2)
        if data:
            if k == row:
                return line
            k += 1
        while p < n and buf[p] != 10:
            p += 1
        pos = p + 1
        line += 1
    return -1


@njit(cache=True)
def _gather_tokens(buf, ws, we, nrows, width):
    out = np.zeros((nrows, width), np.uint8)
    for i in range(nrows):
        s = ws[i]
        for k in range(we[i] - s):
            out[i, k] = buf[s + k]
    return out


@njit(cache=True)
def _format_int_rows(cols, shift, lo, hi):
    """Render rows ``lo:hi`` of int64 columns as tab-separated text lines.

    ``shift`` is added to the first two columns (1-based output).
    """
    k = cols.shape[0]
    size = 0
    for i in range(lo, hi):
        for j in range(k):
            v = cols[j, i] + (shift if j < 2 else 0)
            if v < 0:
                size += 1
                v = -v
            d = 1
            while v >= 10:
                v //= 10
                d += 1
            size += d + 1
    out = np.empty(size, np.uint8)
    p = 0
    tmp = np.empty(20, np.uint8)
    for i in range(lo, hi):
        for j in range(k):
            v = cols[j, i] + (shift if j < 2 else 0)
            if v < 0:
                out[p] = 45
                p += 1
                v = -v
            d = 0
            while True:
                tmp[d] = 48 + v % 10
                d += 1
                v //= 10
                if v == 0:
                    break
            for q in range(d):
                out[p + q] = tmp[d - 1 - q]
            p += d
            out[p] = 9 if j < k - 1 else 10
            p += 1
    return out


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------


#: The first bytes of a gzip stream, and the UTF-8 byte order mark of spreadsheet exports.
_GZIP_MAGIC = b"\x1f\x8b"
_BOM = b"\xef\xbb\xbf"
_MTX_ONE_BASED = "Matrix Market files are 1-based; one_based=False contradicts the format"


def _record_shape(fmt: str, ncols: int = 3) -> str:
    """What a record of ``fmt`` should look like, for error messages."""
    if fmt == "mtx":
        return "'row col'" if ncols == 2 else "'row col value'"
    if fmt == "csv":
        return "'src,dst' or 'src,dst,weight'"
    return "'src dst' or 'src dst weight'"


def _split_gz(path: PathLike) -> tuple[str, bool]:
    """Return (lower-case suffix without .gz, whether gzip-compressed)."""
    name = os.fspath(path).lower()
    gz = name.endswith(".gz")
    if gz:
        name = name[:-3]
    return Path(name).suffix, gz


#: What decompressing a corrupt gzip stream raises (zlib.error: bad deflate data).
_GZIP_ERRORS = (OSError, EOFError, zipfile.BadZipFile, zlib.error)


def _gzip_error(path: PathLike, exc: BaseException) -> GraphFormatError:
    """The error for a gzip stream that does not decompress (the parallel reader's too)."""
    return GraphFormatError(path, None, f"not a valid gzip file ({exc})")


def _read_bytes(path: PathLike) -> bytes:
    raw = Path(path).read_bytes()
    if _split_gz(path)[1] or raw[:2] == _GZIP_MAGIC:
        try:
            raw = gzip.decompress(raw)
        except _GZIP_ERRORS as exc:
            raise _gzip_error(path, exc) from None
    if raw.startswith(_BOM):
        raw = raw[len(_BOM):]
    return raw


def _open_write(path: PathLike):
    if _split_gz(path)[1]:
        return gzip.open(path, "wb", compresslevel=6)
    return open(path, "wb")


def _lines_before(data: bytes, pos: int) -> int:
    """1-based line number of the line containing byte offset ``pos``."""
    return data.count(b"\n", 0, pos) + 1


def _last_line(data: bytes) -> int:
    """1-based number of the last line of ``data`` (1 for an empty file)."""
    return max(1, data.count(b"\n") + (0 if data.endswith(b"\n") else 1))


def _next_record(data: bytes, pos: int, comments: bytes) -> tuple[int, int, bytes]:
    """Find the next non-blank, non-comment line at or after ``pos``.

    Returns ``(start, end, line_bytes)`` with ``end`` just past the newline;
    ``start == -1`` when there is none.
    """
    n = len(data)
    while pos < n:
        end = data.find(b"\n", pos)
        end = n if end < 0 else end + 1
        text = data[pos:end].strip()
        if text and text[:1] not in comments:
            return pos, end, text
        pos = end
    return -1, n, b""


def _show(token: bytes, limit: int = 40) -> str:
    text = token.decode("utf-8", "replace")
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _raise_scan_error(path, data, res, what_cols: str, id_range: str = "") -> None:
    err, line, ts, te = res[10], res[11], res[12], res[13]
    tok = _show(data[ts:te])
    if err == _E_FEW:
        problem = f"too few fields ({tok}); expected {what_cols}"
    elif err == _E_MANY:
        problem = f"too many fields (unexpected {tok}); expected {what_cols}"
    elif err == _E_NCOLS:
        problem = (
            f"line has a different number of fields than the lines before it ({tok}); "
            f"expected {what_cols}"
        )
    elif err == _E_INT:
        problem = f"bad vertex id {tok}: not an integer"
    elif err == _E_BIG:
        problem = f"vertex id {tok} does not fit in int64"
    elif err == _E_EMPTY:
        problem = "empty field"
    elif err == _E_NUM:
        problem = f"bad value {tok}: not a number"
    elif err == _E_SEP:
        problem = f"expected ',' between fields, got {tok}"
    elif err == _E_RANGE:
        problem = f"vertex id {tok} out of range {id_range}"
    elif err == _E_ROWS:
        problem = "more entries than the header declares"
    else:  # pragma: no cover - all codes are listed above
        problem = f"parse error {err}"
    raise GraphFormatError(path, int(line), problem)


def _convert_weights(path, buf, res, nrows: int, lo: int, want_int: bool | None):
    """Turn the recorded weight spans into an int64 or float64 array."""
    ws, we, maxlen, all_int, nonint_line = res[3], res[4], res[7], res[8], res[9]
    if want_int and not all_int:
        raise GraphFormatError(path, int(nonint_line), "expected an integer value")
    width = max(int(maxlen), 1)
    tokens = _gather_tokens(buf, ws[lo:nrows], we[lo:nrows], nrows - lo, width)
    text = tokens.view(f"S{width}").ravel()
    if want_int is False or not all_int:
        return text.astype(np.float64)
    try:
        return text.astype(np.int64)
    except (OverflowError, ValueError):
        if want_int:
            raise GraphFormatError(path, None, "an integer value does not fit in int64") from None
        return text.astype(np.float64)


def _fail_at_row(path, buf, pos, line, comments: bytes, row: int, problem: str):
    c1, c2 = (comments + comments)[:2]
    raise GraphFormatError(path, int(_row_line(buf, pos, line, c1, c2, row)), problem)


def _too_many(n: int) -> str:
    return (
        f"vertex ids need n = {n} > 2**{MAX_VERTEX_BITS}: the ids look like sparse labels; "
        "pass renumber=True to map them to 0..k-1"
    )


def _compact(arr: np.ndarray, nrows: int) -> np.ndarray:
    # The scan over-allocates by the number of comment/blank lines: copy only
    # when that slack is large, to keep memory at the size of the edges.
    view = arr[:nrows]
    return view.copy() if nrows < 0.9 * arr.shape[0] else view


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


def _finish(
    path,
    src: np.ndarray,
    dst: np.ndarray,
    *,
    n: int | None,
    directed: bool | None,
    weights: np.ndarray | None,
    do_renumber: bool,
    meta: dict,
    locate,
    ids: np.ndarray | None = None,
) -> EdgeList:
    """Range checks, renumbering and EdgeList construction shared by readers.

    ``locate(row, problem)`` raises a GraphFormatError at the line of a record.
    ``n`` is a declared vertex count (None: infer from the ids).
    """
    if do_renumber:
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
    if src.size:
        lo = min(int(src.min()), int(dst.min()))
        if lo < 0:
            row = int(np.flatnonzero((src < 0) | (dst < 0))[0])
            locate(row, f"negative vertex id {lo} (pass renumber=True for arbitrary labels)")
        hi = max(int(src.max()), int(dst.max()))
        if n is not None and hi >= n:
            row = int(np.flatnonzero((src >= n) | (dst >= n))[0])
            locate(row, f"vertex id {max(src[row], dst[row])} out of range for declared n={n}")
    else:
        hi = -1
    if n is None:
        n = hi + 1
        if n > 2**MAX_VERTEX_BITS:
            row = int(np.flatnonzero((src >= 2**MAX_VERTEX_BITS) | (dst >= 2**MAX_VERTEX_BITS))[0])
            locate(row, _too_many(n))
    elif n > 2**MAX_VERTEX_BITS:
        raise GraphFormatError(path, None, f"declared size: {_too_many(n)}")
    return EdgeList(src, dst, n, directed=directed, weights=weights, ids=ids, meta=meta)


# ---------------------------------------------------------------------------
# Readers
# ---------------------------------------------------------------------------


def read_graph(
    path: PathLike,
    fmt: str | None = None,
    *,
    directed: bool | None = None,
    one_based: bool | None = None,
    renumber: bool = False,
) -> EdgeList:
    """Read a graph file into an :class:`~spbfs.edges.EdgeList`.

    Parameters
    ----------
    path : str or os.PathLike
        The file; a ``.gz`` suffix means gzip-compressed.
    fmt : {"mtx", "edgelist", "csv", "npz"}, optional
        File format. Inferred from the suffix when omitted: ``.mtx``;
        ``.txt``/``.el``/``.tsv``/``.edges``/``.snap`` (edge list); ``.csv``;
        ``.npz`` (before any ``.gz``).
    directed : bool, optional
        Overrides what the format says (Matrix Market ``symmetric`` means
        undirected, ``general`` directed; the other formats say nothing).
    one_based : bool, optional
        Whether ids in an edge list or CSV file start at 1 (default: 0-based).
        Matrix Market is always 1-based and npz always 0-based; contradicting
        that raises ValueError.
    renumber : bool, default False
        Map the labels found in the file to ``0 .. k-1`` with :func:`renumber`
        and store the labels, as written in the file, in ``EdgeList.ids``.
        Needed for negative or very sparse labels (``n > 2**40``). Vertices
        that appear in no edge are dropped, whatever the declared size.

    Returns
    -------
    EdgeList

    Raises
    ------
    GraphFormatError
        If the file is malformed; the message names the file and line.
    ValueError
        If ``fmt`` is not a known format or cannot be inferred.
    """
    fmt = _resolve_format(path, fmt)
    if fmt == "mtx":
        return read_mtx(path, directed=directed, one_based=one_based, renumber=renumber)
    if fmt == "edgelist":
        return read_edgelist(path, directed=directed, one_based=one_based, renumber=renumber)
    if fmt == "csv":
        return read_csv(path, directed=directed, one_based=one_based, renumber=renumber)
    return read_npz(path, directed=directed, one_based=one_based, renumber=renumber)


def _resolve_format(path: PathLike, fmt: str | None) -> str:
    if fmt is not None:
        if fmt not in FORMATS:
            raise ValueError(f"unknown graph format {fmt!r}; valid formats: {', '.join(FORMATS)}")
        return fmt
    suffix, _ = _split_gz(path)
    try:
        return _SUFFIX_FORMAT[suffix]
    except KeyError:
        known = ", ".join(sorted(_SUFFIX_FORMAT))
        raise ValueError(
            f"cannot infer the format of {os.fspath(path)!r} from suffix {suffix!r} "
            f"(known: {known}); pass fmt= one of {', '.join(FORMATS)}"
        ) from None


_MM_FIELDS = ("pattern", "real", "integer")
_MM_SYMMETRY = ("general", "symmetric", "skew-symmetric", "hermitian")


def _mtx_head(path: PathLike, data: bytes) -> tuple[str, str, int, int, int, int]:
    """Check a Matrix Market banner and size line.

    Returns ``(field, symmetry, rows, nnz, body, size_line)``: ``body`` is the
    offset just past the size line, ``size_line`` its 1-based line number.
    """
    if not data or data.isspace():
        raise GraphFormatError(path, 1, "empty file")
    end = data.find(b"\n")
    end = len(data) if end < 0 else end + 1
    banner = data[:end].strip()
    if not banner.lower().startswith(b"%%matrixmarket"):
        raise GraphFormatError(
            path, 1, f"missing '%%MatrixMarket' header line (got {_show(banner)})"
        )
    words = banner.decode("ascii", "replace").lower().split()
    if len(words) != 5:
        raise GraphFormatError(
            path,
            1,
            "header must read '%%MatrixMarket matrix coordinate FIELD SYMMETRY', "
            f"got {_show(banner)}",
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

    start, body, size = _next_record(data, end, b"%")
    if start < 0:
        raise GraphFormatError(path, _last_line(data), "missing size line 'M N NNZ'")
    size_line = _lines_before(data, start)
    try:
        rows, cols, nnz = (int(t) for t in size.split())
    except ValueError:
        raise GraphFormatError(
            path, size_line, f"size line must be three integers 'M N NNZ', got {_show(size)}"
        ) from None
    if min(rows, cols, nnz) < 0:
        raise GraphFormatError(path, size_line, f"negative size in {_show(size)}")
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
    entry lines exactly. Comment and blank lines are allowed anywhere after
    the banner. See :func:`read_graph` for the parameters.
    """
    if one_based is False:
        raise ValueError(_MTX_ONE_BASED)
    data = _read_bytes(path)
    field, symmetry, rows, nnz, body, size_line = _mtx_head(path, data)
    buf = np.frombuffer(data, np.uint8)
    ncols = 2 if field == "pattern" else 3
    line0 = size_line + 1
    # The range check and the 1-based shift happen inside the scan; renumbering
    # keeps the labels as written, so no shift then.
    res = _scan(
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
        _INF,
        _INFINITY,
        _NAN,
    )
    what = _record_shape("mtx", ncols)
    if res[10]:
        _raise_scan_error(path, data, res, what, f"1..{rows}")
    nrows = int(res[0])
    if nrows < nnz:
        raise GraphFormatError(
            path,
            _last_line(data),
            f"file ends after {nrows} entries but the size line (line {size_line}) "
            f"declares {nnz}: truncated file?",
        )
    src = res[1][:nrows]
    dst = res[2][:nrows]

    def locate(row: int, problem: str):
        _fail_at_row(path, buf, body, line0, b"%", row, problem)

    weights = None
    if ncols == 3:
        weights = _convert_weights(path, buf, res, nrows, 0, field == "integer")
    meta = {"path": os.fspath(path), "format": "mtx", "field": field, "symmetry": symmetry}
    if directed is None:
        directed = symmetry == "general"
    return _finish(
        path,
        src,
        dst,
        n=rows,
        directed=directed,
        weights=weights,
        do_renumber=renumber,
        meta=meta,
        locate=locate,
    )


def read_edgelist(
    path: PathLike,
    *,
    directed: bool | None = None,
    one_based: bool | None = None,
    renumber: bool = False,
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

    When a count line is found it is stored in ``meta["count_line"]``. See
    :func:`read_graph` for the parameters.
    """
    return _read_table(path, "edgelist", directed, one_based, renumber)


def read_csv(
    path: PathLike,
    *,
    directed: bool | None = None,
    one_based: bool | None = None,
    renumber: bool = False,
) -> EdgeList:
    """Read a CSV edge list ``src,dst[,weight]``, 0-based unless ``one_based=True``.

    The first non-comment line is taken as the header when any of its fields
    is not an integer (e.g. ``id_1,id_2``); its names go to
    ``meta["columns"]``. Lines starting with ``#`` are comments. Spaces around
    fields are ignored; quoted fields are not supported. See
    :func:`read_graph` for the parameters.
    """
    return _read_table(path, "csv", directed, one_based, renumber)


def _table_head(path: PathLike, data: bytes, fmt: str) -> tuple[int, dict]:
    """Find the first record of an edge list or CSV file (past a CSV header line).

    Returns its offset and the file's ``meta`` (with the CSV column names).
    """
    comma = fmt == "csv"
    comments = b"#" if comma else b"#%"
    start, stop, first = _next_record(data, 0, comments)
    if start < 0:
        raise GraphFormatError(path, 1, "empty file: no edges")
    meta: dict = {"path": os.fspath(path), "format": fmt}
    if comma:
        names = [t.strip() for t in first.split(b",")]
        if not all(_is_int_token(t) for t in names):
            meta["columns"] = [t.decode("utf-8", "replace").strip("\"'") for t in names]
            if not 2 <= len(names) <= 3:
                raise GraphFormatError(
                    path,
                    _lines_before(data, start),
                    f"header {_show(first)} must name 2 or 3 columns: src,dst[,weight]",
                )
            start, _, _ = _next_record(data, stop, comments)
            if start < 0:
                raise GraphFormatError(path, _last_line(data), "no edges after header")
    return start, meta


def _read_table(path, fmt: str, directed, one_based, do_renumber: bool) -> EdgeList:
    data = _read_bytes(path)
    comma = fmt == "csv"
    comments = b"#" if comma else b"#%"
    start, meta = _table_head(path, data, fmt)
    line0 = _lines_before(data, start)
    buf = np.frombuffer(data, np.uint8)
    c1, c2 = (comments + comments)[:2]
    res = _scan(
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
        _I64_MIN,
        _I64_MAX,
        0,
        _INF,
        _INFINITY,
        _NAN,
    )
    what = _record_shape(fmt)
    if res[10]:
        _raise_scan_error(path, data, res, what)
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
        elif ncols_first == 2 and b == nrows - 1 and a > 0:
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
            line1 = _row_line(buf, start, line0, c1, c2, 1)
            raise GraphFormatError(
                path,
                int(line1),
                f"line has {ncols} fields but line {line0} has {ncols_first}; expected {what}",
            )
        if n_decl is not None and n_decl < 0:
            raise GraphFormatError(path, line0, f"negative vertex count {n_decl}")
        ncols = ncols or ncols_first
    if ncols == 1:  # only a count line (edge lists) - no edges
        ncols = 2
    weights = None
    if ncols == 3:
        weights = _convert_weights(path, buf, res, nrows, lo, None)
    src = _compact(src, nrows)[lo:]
    dst = _compact(dst, nrows)[lo:]

    def locate(row: int, problem: str):
        _fail_at_row(path, buf, start, line0, comments, row + lo, problem)

    if one_based and not do_renumber:
        if src.size and min(int(src.min()), int(dst.min())) < 1:
            row = int(np.flatnonzero((src < 1) | (dst < 1))[0])
            locate(row, f"vertex id {min(src[row], dst[row])} in a 1-based file")
        src = src - 1
        dst = dst - 1
    return _finish(
        path,
        src,
        dst,
        n=n_decl,
        directed=directed,
        weights=weights,
        do_renumber=do_renumber,
        meta=meta,
        locate=locate,
    )


def _is_int_token(tok: bytes) -> bool:
    t = tok.strip()
    if t[:1] in (b"+", b"-"):
        t = t[1:]
    return t.isdigit()


def _sparse_pointer_problem(
    indptr: np.ndarray, indices_shape: tuple[int, ...], first: int = 0, last: bool = True
) -> str | None:
    """What is wrong with a ``scipy.sparse`` archive's ``indptr``, or None.

    ``indptr`` may be a slice starting at entry ``first`` of the whole array
    (``last``: it holds the final entry), so the parallel reader checks its
    slices with the serial reader's words. The order across slice boundaries
    is the caller's to check.
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
        kind = kind.item().decode("ascii", "replace") if kind.dtype.kind == "S" else str(kind)
        shape = arch["shape"]
        if kind in ("coo", "csr", "csc"):
            first, second = ("row", "col") if kind == "coo" else ("indptr", "indices")
            a, b, data = arch[first], arch[second], arch["data"]
    except (ValueError, TypeError, KeyError) as exc:
        raise bad(f"unreadable scipy.sparse matrix ({exc})") from None
    if shape.shape != (2,) or not np.issubdtype(shape.dtype, np.integer):
        raise bad(f"unreadable scipy.sparse matrix ('shape' is {shape!r})")
    if shape[0] != shape[1]:
        raise bad(f"matrix is {shape[0]}x{shape[1]}: a graph's adjacency must be square")
    n = int(shape[0])
    if kind not in ("coo", "csr", "csc"):
        import scipy.sparse as sp

        try:
            coo = sp.load_npz(_stdio.BytesIO(raw)).tocoo()
        except (ValueError, OSError, KeyError, IndexError) as exc:
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
    problem = _sparse_pointer_problem(a, b.shape)
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

    Ids are 0-based. See :func:`read_graph` for the parameters.
    """
    if one_based:
        raise ValueError("npz archives hold 0-based ids; one_based=True contradicts the format")
    raw = _read_bytes(path)
    if not raw:
        raise GraphFormatError(path, None, "empty file")
    try:
        arch = np.load(_stdio.BytesIO(raw), allow_pickle=False)
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
        raise GraphFormatError(path, None, f"not a readable .npz archive ({exc})") from None
    if not isinstance(arch, np.lib.npyio.NpzFile):
        raise GraphFormatError(path, None, "a single .npy array, not an .npz archive")
    meta: dict = {"path": os.fspath(path), "format": "npz"}

    def locate(row: int, problem: str):
        raise GraphFormatError(path, None, f"edge {row}: {problem}")

    with arch:
        keys = set(arch.files)
        if {"src", "dst"} <= keys:
            try:
                src = np.asarray(arch["src"])
                dst = np.asarray(arch["dst"])
                n = int(arch["n"]) if "n" in keys else None
                weights = arch["weights"] if "weights" in keys else None
                ids = arch["ids"] if "ids" in keys else None
                stored = arch["directed"] if "directed" in keys else None
            except (ValueError, TypeError) as exc:
                raise GraphFormatError(path, None, f"unreadable array ({exc})") from None
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
            if weights is not None and weights.shape != src.shape:
                raise GraphFormatError(
                    path, None, f"'weights' has shape {weights.shape}, expected {src.shape}"
                )
            if stored is not None and directed is None:
                value = stored.item()
                directed = None if (not isinstance(value, bool) and value < 0) else bool(value)
            if ids is not None and not renumber and (n is None or ids.shape != (n,)):
                raise GraphFormatError(path, None, f"'ids' has shape {ids.shape}, expected ({n},)")
            meta["layout"] = "edges"
        elif {"format", "shape", "data"} <= keys:
            src, dst, weights, n, kind = _sparse_edges(path, arch, raw)
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
    return _finish(
        path,
        src,
        dst,
        n=n,
        directed=directed,
        weights=weights,
        do_renumber=renumber,
        meta=meta,
        locate=locate,
        ids=ids,
    )


# ---------------------------------------------------------------------------
# Writers
# ---------------------------------------------------------------------------

_WRITE_CHUNK = 1 << 20  # rows rendered per write: bounds the text buffer


def _write_rows(f, cols: list[np.ndarray], weights: np.ndarray | None, shift: int) -> None:
    m = cols[0].shape[0]
    float_w = weights is not None and not np.issubdtype(weights.dtype, np.integer)
    if weights is not None and not float_w:
        cols = [*cols, weights.astype(np.int64)]
    stack = np.ascontiguousarray(np.stack(cols)) if cols[0].size else np.zeros((len(cols), 0))
    stack = stack.astype(np.int64, copy=False)
    for lo in range(0, m, _WRITE_CHUNK):
        hi = min(m, lo + _WRITE_CHUNK)
        if not float_w:
            f.write(_format_int_rows(stack, shift, lo, hi).tobytes())
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
    with _open_write(path) as f:
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
    with _open_write(path) as f:
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
    with _open_write(path) as f:
        saver(f, **arrays)
