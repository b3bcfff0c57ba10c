"""What every format shares: the error type, format names, file bytes and error wording.

Not public API (see :mod:`spbfs.io`); the parallel reader :mod:`spbfs.mpi.read`
uses the gzip functions, :func:`resolve_format`, :func:`lines_before` and
:func:`record_shape` so that its messages are the serial reader's.
"""

from __future__ import annotations

import gzip
import os
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

__all__ = [
    "BOM",
    "FORMATS",
    "GZIP_ERRORS",
    "GZIP_MAGIC",
    "MAX_RATIO",
    "RATIO_FLOOR",
    "GraphFormatError",
    "PathLike",
    "allocating",
    "check_ratio",
    "gunzip",
    "gzip_error",
    "last_line",
    "lines_before",
    "next_record",
    "open_write",
    "read_bytes",
    "record_shape",
    "resolve_format",
    "show",
    "split_gz",
]

#: Valid values of the ``fmt`` argument of :func:`spbfs.io.read_graph`.
FORMATS: tuple[str, ...] = ("mtx", "edgelist", "csv", "npz")

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


#: The first bytes of a gzip stream, and the UTF-8 byte order mark of spreadsheet exports.
GZIP_MAGIC = b"\x1f\x8b"
BOM = b"\xef\xbb\xbf"

#: What decompressing a corrupt gzip stream raises (zlib.error: bad deflate data).
GZIP_ERRORS = (OSError, EOFError, zipfile.BadZipFile, zlib.error)


def record_shape(fmt: str, ncols: int = 3) -> str:
    """What a record of ``fmt`` should look like, for error messages.

    Parameters
    ----------
    fmt : str
        One of :data:`FORMATS` (``"npz"`` has no records; it reads as an edge list).
    ncols : int, default 3
        Fields per Matrix Market entry: 2 for a ``pattern`` file, else 3.

    Returns
    -------
    str
        The record's fields in quotes, e.g. ``"'row col value'"``.
    """
    if fmt == "mtx":
        return "'row col'" if ncols == 2 else "'row col value'"
    if fmt == "csv":
        return "'src,dst' or 'src,dst,weight'"
    return "'src dst' or 'src dst weight'"


def split_gz(path: PathLike) -> tuple[str, bool]:
    """The file's lower-case suffix without ``.gz``, and whether it ends in ``.gz``.

    Parameters
    ----------
    path : str or os.PathLike
        A file name.

    Returns
    -------
    suffix : str
        E.g. ``".mtx"`` for ``graph.MTX.gz``.
    gz : bool
        Whether the name ends in ``.gz``.
    """
    name = os.fspath(path).lower()
    gz = name.endswith(".gz")
    if gz:
        name = name[:-3]
    return Path(name).suffix, gz


def gzip_error(path: PathLike, exc: BaseException) -> GraphFormatError:
    """The error for a gzip stream that does not decompress (the parallel reader's too).

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    exc : BaseException
        What decompressing it raised (one of :data:`GZIP_ERRORS`).

    Returns
    -------
    GraphFormatError
    """
    return GraphFormatError(path, None, f"not a valid gzip file ({exc})")


#: Default of the readers' ``max_ratio``: how many times its compressed size a file
#: (a gzip stream, an ``.npz`` member) may expand to. Graph files compress 2-4x
#: (the bundled ones 2.3-3.6x; sorted ids rarely beyond 20x), deflate at most about
#: 1032x: past 100x a file is far more likely a decompression bomb than a graph.
MAX_RATIO: float = 100.0
#: Output below this many bytes is never refused whatever the ratio: it costs
#: little memory, and tiny files of repeated lines compress far beyond any ratio.
RATIO_FLOOR: int = 1 << 28


def _limit(compressed: int, max_ratio: float | None) -> int | None:
    """Bytes that ``compressed`` bytes may expand to under ``max_ratio`` (None: any)."""
    if max_ratio is None:
        return None
    return max(RATIO_FLOOR, int(max_ratio * compressed))


def check_ratio(
    path: PathLike, what: str, compressed: int, size: int, max_ratio: float | None
) -> None:
    """Refuse ``size`` bytes expanded from ``compressed`` beyond ``max_ratio``.

    Parameters
    ----------
    path : str or os.PathLike
        The file, for the message.
    what : str
        What expands (``"gzip stream"``, ``"member 'src'"``).
    compressed, size : int
        Its compressed size and what it expands (or declares it expands) to.
    max_ratio : float or None
        The readers' ``max_ratio``; None accepts any size.

    Raises
    ------
    GraphFormatError
        If ``size`` exceeds ``max(RATIO_FLOOR, max_ratio * compressed)``.
    """
    limit = _limit(compressed, max_ratio)
    if limit is not None and size > limit:
        raise GraphFormatError(
            path,
            None,
            f"{what} expands to over {limit} bytes, more than {max_ratio:g} times its "
            f"{compressed} compressed bytes (a decompression bomb?); pass max_ratio=None "
            "or a larger ratio to read it anyway",
        )


def gunzip(path: PathLike, raw: bytes, max_ratio: float | None = MAX_RATIO) -> bytes:
    """Decompress the gzip stream ``raw`` (one or more members), at most ``max_ratio`` times.

    zlib checks each member's CRC and length itself, and stops at the limit
    rather than filling memory: a few MB that expand to GB fail in a second
    with the file's name instead of after a minute of swapping.

    Parameters
    ----------
    path : str or os.PathLike
        The file, for messages.
    raw : bytes
        Its bytes.
    max_ratio : float or None, default MAX_RATIO
        See :func:`check_ratio`.

    Returns
    -------
    bytes

    Raises
    ------
    GraphFormatError
        If the stream does not decompress, ends early, or expands beyond the limit.
    MemoryError
        If the output does not fit in memory; the message names the file.
    """
    limit = _limit(len(raw), max_ratio)
    parts = []
    total = 0
    data = raw
    with allocating(path, "the decompressed file"):
        while True:
            # 16 + MAX_WBITS: a gzip header and trailer around the deflate data.
            d = zlib.decompressobj(16 + zlib.MAX_WBITS)
            try:
                # max_length 0 means no limit; one past the limit tells "over it".
                part = d.decompress(data, 0 if limit is None else limit - total + 1)
            except zlib.error as exc:
                raise gzip_error(path, exc) from None
            total += len(part)
            if limit is not None and total > limit:
                check_ratio(path, "the gzip stream", len(raw), total, max_ratio)
            if not d.eof:
                # gzip's own words, which the parallel reader's stream reports.
                raise gzip_error(path, EOFError(
                    "Compressed file ended before the end-of-stream marker was reached"))
            parts.append(part)
            # Concatenated members are one file (pigz, bgzip); zero padding is allowed.
            data = d.unused_data.lstrip(b"\x00")
            if not data:
                return parts[0] if len(parts) == 1 else b"".join(parts)


def read_bytes(path: PathLike, max_ratio: float | None = MAX_RATIO) -> bytes:
    """The whole file, decompressed when gzip (by suffix or content), without a BOM.

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    max_ratio : float or None, default MAX_RATIO
        How many times its size a gzip file may expand to (:func:`gunzip`).

    Returns
    -------
    bytes

    Raises
    ------
    GraphFormatError
        If a gzip stream does not decompress or expands beyond ``max_ratio``.
    ValueError
        If ``max_ratio`` is not a positive number or None.
    """
    if max_ratio is not None and (
        isinstance(max_ratio, bool) or not isinstance(max_ratio, int | float) or not max_ratio > 0
    ):
        raise ValueError(f"max_ratio must be a positive number or None, got {max_ratio!r}")
    raw = Path(path).read_bytes()
    if split_gz(path)[1] or raw[:2] == GZIP_MAGIC:
        raw = gunzip(path, raw, max_ratio)
    if raw.startswith(BOM):
        raw = raw[len(BOM):]
    return raw


def _size(nbytes: int) -> str:
    """``nbytes`` for a message: ``"3.2 GiB"``."""
    size = float(nbytes)
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{nbytes} bytes" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")  # pragma: no cover


@contextmanager
def allocating(path: PathLike | None, what: str, nbytes: int | None = None) -> Iterator[None]:
    """Name what was being built, and its size, in a MemoryError raised inside.

    numpy says "Unable to allocate 3.2 GiB for an array ..." and numba
    "Allocation failed (probably too large)." without the file or the
    structure; this re-raises with both, so the user knows which input to shrink.

    Parameters
    ----------
    path : str or os.PathLike or None
        The file being read, if any.
    what : str
        What is being built (``"the edge arrays"``).
    nbytes : int, optional
        Its size, when known beforehand.

    Raises
    ------
    MemoryError
        ``"<path>: out of memory building <what> (<size>): <original message>"``.
    """
    try:
        yield
    except MemoryError as exc:
        size = "" if nbytes is None else f" ({_size(nbytes)})"
        where = "" if path is None else f"{os.fspath(path)}: "
        raise MemoryError(f"{where}out of memory building {what}{size}: {exc}") from None


def open_write(path: PathLike) -> IO[bytes]:
    """Open ``path`` for writing bytes, gzip-compressed when it ends in ``.gz``.

    Parameters
    ----------
    path : str or os.PathLike
        Destination.

    Returns
    -------
    typing.IO[bytes]
        A binary file object (a context manager).
    """
    if split_gz(path)[1]:
        return gzip.open(path, "wb", compresslevel=6)
    return open(path, "wb")


def lines_before(data: bytes, pos: int) -> int:
    """1-based line number of the line containing byte offset ``pos``.

    Parameters
    ----------
    data : bytes
        File content.
    pos : int
        A byte offset into ``data``.

    Returns
    -------
    int
    """
    return data.count(b"\n", 0, pos) + 1


def last_line(data: bytes) -> int:
    """1-based number of the last line of ``data`` (1 for an empty file).

    Parameters
    ----------
    data : bytes
        File content.

    Returns
    -------
    int
    """
    return max(1, data.count(b"\n") + (0 if data.endswith(b"\n") else 1))


def next_record(data: bytes, pos: int, comments: bytes) -> tuple[int, int, bytes]:
    """Find the next non-blank, non-comment line at or after ``pos``.

    Parameters
    ----------
    data : bytes
        File content.
    pos : int
        Where to start looking (a line start).
    comments : bytes
        The bytes that start a comment line (each one on its own).

    Returns
    -------
    start : int
        Offset of the line, ``-1`` when there is none.
    end : int
        Offset just past its newline (``len(data)`` when there is none).
    text : bytes
        The line without surrounding whitespace.
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


def show(token: bytes, limit: int = 40) -> str:
    """A token of the file as an error message quotes it: decoded, cut at ``limit``.

    Parameters
    ----------
    token : bytes
        The offending bytes.
    limit : int, default 40
        Characters kept before ``...``.

    Returns
    -------
    str
        The ``repr`` of the (shortened) text.
    """
    text = token.decode("utf-8", "replace")
    return repr(text if len(text) <= limit else text[:limit] + "...")


def resolve_format(path: PathLike, fmt: str | None) -> str:
    """Check ``fmt``, or infer it from the suffix of ``path`` (before any ``.gz``).

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    fmt : str or None
        One of :data:`FORMATS`, or None to infer it.

    Returns
    -------
    str
        One of :data:`FORMATS`.

    Raises
    ------
    ValueError
        If ``fmt`` is unknown, or None and the suffix is not one of a format.
    """
    if fmt is not None:
        if fmt not in FORMATS:
            raise ValueError(f"unknown graph format {fmt!r}; valid formats: {', '.join(FORMATS)}")
        return fmt
    suffix, _ = split_gz(path)
    try:
        return _SUFFIX_FORMAT[suffix]
    except KeyError:
        known = ", ".join(sorted(_SUFFIX_FORMAT))
        raise ValueError(
            f"cannot infer the format of {os.fspath(path)!r} from suffix {suffix!r} "
            f"(known: {known}); pass fmt= one of {', '.join(FORMATS)}"
        ) from None
