"""The compiled text scanner every text format is parsed with, serial and parallel.

One pass over the raw bytes (numba) parses records ``id id [value]``, so a
malformed file is reported with the exact line number at no cost to the
well-formed case. :func:`scan` does the parse; :func:`raise_scan_error`,
:func:`convert_weights`, :func:`compact` and :func:`fail_at_row` turn its
result into arrays and error messages. :func:`format_int_rows` is the way
back, for the writers. :mod:`spbfs.mpi.read` runs the same functions on every
rank's slice of the file, so its messages are the serial reader's.

Every kernel is compiled with ``cache=True`` so that a new process reuses the
machine code instead of compiling for seconds before its first read.
"""

from __future__ import annotations

from typing import Any, NoReturn

import numpy as np
from numba import njit

from spbfs.io._common import GraphFormatError, PathLike, allocating, show

__all__ = [
    "I64_MAX",
    "I64_MIN",
    "INF",
    "INFINITY",
    "NAN",
    "compact",
    "convert_weights",
    "fail_at_row",
    "format_int_rows",
    "raise_scan_error",
    "row_line",
    "scan",
]

#: Bytes per value in the matrix :func:`convert_weights` gathers for numpy to parse;
#: longer values (rare: 17 significant digits and an exponent fit) are parsed alone.
_TOKEN_WIDTH = 64

# Error codes returned by scan (0 = fine).
_E_FEW, _E_MANY, _E_NCOLS, _E_INT, _E_BIG, _E_EMPTY, _E_NUM, _E_ROWS, _E_SEP, _E_RANGE = range(
    1, 11
)


@njit(cache=True, inline="always")
def _is_space(c):
    # Newline (10) is deliberately not whitespace: it ends a record. CR counts
    # as whitespace so CRLF files need no special case.
    return c == 32 or c == 9 or c == 13 or c == 11 or c == 12


@njit(cache=True, inline="always")
def _skip_spaces(buf, p, n):
    """The first index from ``p`` on that is not :func:`_is_space` (``n`` at the end)."""
    # Inlined like _is_space: this runs between every two fields of every record.
    while p < n and _is_space(buf[p]):
        p += 1
    return p


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


#: The widest id range :func:`scan` can be asked to accept (``id_lo``, ``id_hi``).
I64_MIN: int = np.iinfo(np.int64).min
I64_MAX: int = np.iinfo(np.int64).max
#: The words :func:`scan` accepts as a value besides numerals (any case, with a sign),
#: as numpy's cast does; read-only arrays, passed to it as its last three arguments.
INF: np.ndarray = np.frombuffer(b"inf", np.uint8)
INFINITY: np.ndarray = np.frombuffer(b"infinity", np.uint8)
NAN: np.ndarray = np.frombuffer(b"nan", np.uint8)


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
def scan(
    buf: np.ndarray,
    pos: int,
    line: int,
    mincols: int,
    maxcols: int,
    comma: bool,
    c1: int,
    c2: int,
    first_free: bool,
    max_rows: int,
    id_lo: int,
    id_hi: int,
    shift: int,
    inf: np.ndarray,
    infinity: np.ndarray,
    nan: np.ndarray,
) -> tuple[Any, ...]:
    """Parse records ``id id [value]`` from ``buf[pos:]``.

    Blank lines and lines whose first non-blank byte is ``c1`` or ``c2`` are
    skipped. The first two fields are parsed as int64; a third is only checked
    to be a number and its byte span recorded (numpy converts the spans with
    correct rounding). With ``first_free`` the first record may have any
    number of fields (a count line); the field count must agree from the next
    record on. Ids outside ``[id_lo, id_hi]`` are an error; ``shift`` is
    subtracted from the stored ids (1-based files), which spares the caller
    full passes over the arrays.

    Parameters
    ----------
    buf : numpy.ndarray
        The file's bytes (uint8).
    pos, line : int
        Where to start: a line start, and its 1-based line number.
    mincols, maxcols : int
        Fields a record must have (2 or 3).
    comma : bool
        Fields are separated by commas (CSV), not only by whitespace.
    c1, c2 : int
        The bytes that start a comment line (the same one twice for one).
    first_free : bool
        The first record may have any number of fields (an edge list's count line).
    max_rows : int
        Records allowed (a Matrix Market size line's count), or -1 for any.
    id_lo, id_hi : int
        The range of valid ids, as written in the file.
    shift : int
        Subtracted from every id stored.
    inf, infinity, nan : numpy.ndarray
        :data:`INF`, :data:`INFINITY` and :data:`NAN`.

    Returns
    -------
    tuple
        ``(nrows, src, dst, ws, we, ncols_first, ncols, maxlen, all_int,
        nonint_line, err, line, ts, te)``: the record count; the ids (the
        first ``nrows`` entries, see :func:`compact`); the byte spans of the
        values; the first record's field count with ``first_free`` and the
        others'; the longest value; whether every value is an integer, else
        the line of the first that is not; then the error code (0: none; see
        :func:`raise_scan_error`), the line it is on (without an error, the
        line the scan stopped at) and the byte span of the offending token.
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
        p = _skip_spaces(buf, pos, n)
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
            p = _skip_spaces(buf, p, n)
            if p >= n or buf[p] == 10:
                break
            if comma:
                if buf[p] != 44:
                    ts = p
                    te = p + 1
                    err = _E_SEP
                    break
                p += 1
                p = _skip_spaces(buf, p, n)
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
def row_line(buf: np.ndarray, pos: int, line: int, c1: int, c2: int, row: int) -> int:
    """Line number of data record number ``row`` (0-based) counted from ``pos``.

    Parameters
    ----------
    buf : numpy.ndarray
        The bytes :func:`scan` parsed (uint8).
    pos, line : int
        Where that scan started, and the line number there.
    c1, c2 : int
        The comment bytes it skipped.
    row : int
        A record index into the scan's arrays.

    Returns
    -------
    int
        The 1-based line of the record, or -1 past the last.
    """
    n = buf.shape[0]
    k = 0
    while pos < n:
        p = _skip_spaces(buf, pos, n)
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
def format_int_rows(cols: np.ndarray, shift: int, lo: int, hi: int) -> np.ndarray:
    """Render rows ``lo:hi`` of int64 columns as tab-separated text lines.

    Parameters
    ----------
    cols : numpy.ndarray
        int64 of shape ``(k, m)``: one row per column of the file.
    shift : int
        Added to the first two columns (1 for 1-based output).
    lo, hi : int
        The records to render.

    Returns
    -------
    numpy.ndarray
        The text as uint8, each line ending in a newline.
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


def raise_scan_error(
    path: PathLike, data: bytes, res: tuple[Any, ...], what_cols: str, id_range: str = ""
) -> NoReturn:
    """Raise the error :func:`scan` found, worded for the user.

    Parameters
    ----------
    path : str or os.PathLike
        The file, for the message.
    data : bytes
        The bytes scanned (the offending token is quoted from them).
    res : tuple
        What :func:`scan` returned, with a nonzero error code.
    what_cols : str
        What a record should look like (:func:`spbfs.io._common.record_shape`).
    id_range : str, optional
        The valid ids, e.g. ``"1..34"``, for an id out of range.

    Raises
    ------
    GraphFormatError
        Always, at the line of the error.
    """
    err, line, ts, te = res[10], res[11], res[12], res[13]
    tok = show(data[ts:te])
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


def convert_weights(
    path: PathLike,
    buf: np.ndarray,
    res: tuple[Any, ...],
    nrows: int,
    lo: int,
    want_int: bool | None,
) -> np.ndarray:
    """Turn the value spans :func:`scan` recorded into an int64 or float64 array.

    Parameters
    ----------
    path : str or os.PathLike
        The file, for error messages.
    buf : numpy.ndarray
        The bytes scanned.
    res : tuple
        What :func:`scan` returned.
    nrows : int
        Records scanned.
    lo : int
        The first record that is an edge (1 past a count line).
    want_int : bool or None
        True: integers required (Matrix Market ``integer``); False: float64
        whatever they are (``real``); None: int64 when every value is an
        integer that fits, else float64.

    Returns
    -------
    numpy.ndarray
        One value per edge record.

    Raises
    ------
    GraphFormatError
        If ``want_int`` and a value is not an integer or does not fit in int64.
    """
    ws, we, maxlen, all_int, nonint_line = res[3], res[4], res[7], res[8], res[9]
    if want_int and not all_int:
        raise GraphFormatError(path, int(nonint_line), "expected an integer value")
    ws, we = ws[lo:nrows], we[lo:nrows]
    width = max(int(maxlen), 1)
    long_rows = np.zeros(0, np.int64)
    ends = we
    if width > _TOKEN_WIDTH:
        # One long value must not size the whole (rows x width) matrix: gather the
        # others at a fixed width and "0" for the long ones, then parse those one
        # by one (there are at most len(buf) / _TOKEN_WIDTH of them).
        long_rows = np.flatnonzero(we - ws > _TOKEN_WIDTH)
        width = _TOKEN_WIDTH
        ends = we.copy()
        ends[long_rows] = ws[long_rows]
    with allocating(path, f"the text of {nrows - lo} values ({width} bytes each)",
                    (nrows - lo) * width):
        tokens = _gather_tokens(buf, ws, ends, nrows - lo, width)
    tokens[long_rows, 0] = ord("0")
    text = tokens.view(f"S{width}").ravel()
    longs = [buf[ws[i]:we[i]].tobytes() for i in long_rows]
    if want_int is False or not all_int:
        out = text.astype(np.float64)
        out[long_rows] = [float(t) for t in longs]
        return out
    try:
        out = text.astype(np.int64)
        # Python's int() refuses over 4300 digits (ValueError): too big for int64 anyway.
        out[long_rows] = [int(t) for t in longs]
        return out
    except (OverflowError, ValueError):
        if want_int:
            raise GraphFormatError(path, None, "an integer value does not fit in int64") from None
        out = text.astype(np.float64)
        out[long_rows] = [float(t) for t in longs]
        return out


def fail_at_row(
    path: PathLike,
    buf: np.ndarray,
    pos: int,
    line: int,
    comments: bytes,
    row: int,
    problem: str,
) -> NoReturn:
    """Raise ``problem`` at the line of record ``row`` of a scan.

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    buf : numpy.ndarray
        The bytes scanned.
    pos, line : int
        Where the scan started, and its line number there.
    comments : bytes
        The comment bytes the scan skipped (one or two).
    row : int
        The offending record.
    problem : str
        What is wrong with it.

    Raises
    ------
    GraphFormatError
        Always.
    """
    c1, c2 = (comments + comments)[:2]
    raise GraphFormatError(path, int(row_line(buf, pos, line, c1, c2, row)), problem)


def compact(arr: np.ndarray, nrows: int) -> np.ndarray:
    """The first ``nrows`` entries of an id array of :func:`scan`.

    Parameters
    ----------
    arr : numpy.ndarray
        ``src`` or ``dst`` as the scan returned it.
    nrows : int
        Records scanned.

    Returns
    -------
    numpy.ndarray
        A view, or a copy when the array is much longer than its records.
    """
    # The scan over-allocates by the number of comment/blank lines: copy only
    # when that slack is large, to keep memory at the size of the edges.
    view = arr[:nrows]
    return view.copy() if nrows < 0.9 * arr.shape[0] else view
