"""Reading a graph file in parallel: every rank parses its own byte range.

Rank 0 reads the head of the file (the Matrix Market banner and size line, or
the comments and CSV header before the first record) from a prefix, never the
whole file. The body is then cut into ``p`` byte ranges, each moved forward
to the next line start, so every line belongs to exactly one rank; each rank
reads only its range and parses it with the serial reader's scanner
(:func:`spbfs.io.scanner.scan`). Line numbers for error messages come from an
exclusive prefix sum of the ranges' line counts, so a malformed line is
reported exactly as :func:`spbfs.io.read_graph` reports it.

Every rank first checks that all see the same file: its size and a CRC of a
common 256 KiB sample, in one Allreduce (:func:`_check_same_file`).
What needs the whole file is agreed with small collectives: the edge count
against the Matrix Market size line, the field count of every line, an edge
list's count line (``n m``: a count line only when exactly ``m`` records follow
and all ids are below ``n``), the largest id (``n``) and the id range checks.

A gzip-compressed text file cannot be cut by byte offsets, so rank 0 streams
it: it takes the decompressed size from the gzip trailer (or, where that
cannot be trusted, from a counting pass), cuts the stream at the line starts
an uncompressed file would be cut at and sends each rank its range in
messages of :data:`GZ_CHUNK` bytes. No rank holds more than its range and one
message; the parse and every check after it are those of an uncompressed file.

An uncompressed ``.npz`` archive of :func:`spbfs.io.save_npz` is read the same
way without parsing: rank 0 reads the zip directory and the ``.npy`` headers of
``src`` and ``dst``, and every rank reads its slice of both arrays at their
offsets in the file (:func:`read_npz_edges`); a compressed member is streamed
by rank 0 like a gzip file, each rank getting its slice; vertex labels
(``ids``) are checked for shape and left alone, as a search does not use them.
A ``scipy.sparse`` archive in coo format is read like ``src`` and ``dst``; in
csr or csc, every rank reads an equal slice of ``indptr`` and sends its rows
as (row, length) runs to the ranks whose slices of ``indices`` they cover
(:func:`_expand_pointer`). Other formats (bsr, dia) and archives that do not
look right are read on rank 0 (:func:`read_edges` returns None and the caller
falls back to the serial reader, which says what is wrong).
"""

from __future__ import annotations

import gzip
import os
import struct
import zipfile
import zlib
from typing import Any

import numpy as np

from spbfs.edges import IDS_PER_EDGE, sparse_ids_problem
from spbfs.io import MAX_VERTEX_BITS, GraphFormatError, scanner
from spbfs.io._common import (
    BOM,
    GZIP_ERRORS,
    GZIP_MAGIC,
    gzip_error,
    lines_before,
    record_shape,
    resolve_format,
    split_gz,
)
from spbfs.io._ids import too_many
from spbfs.io._mtx import MTX_ONE_BASED, mtx_head
from spbfs.io._npz import sparse_pointer_problem
from spbfs.io._table import table_head
from spbfs.mpi import comm as C

__all__ = ["read_edges", "read_npz_edges"]

#: First prefix rank 0 reads to find the head; it grows 16x until the head fits.
_PREFIX = 1 << 16
#: Bytes per message when rank 0 hands out a decompressed stream (gzip text, compressed npz).
GZ_CHUNK = 1 << 24


def _align(f: Any, x: int, b0: int, size: int) -> int:
    """The first line start at or after byte ``x`` of the body ``[b0, size)``."""
    if x <= b0:
        return b0
    if x >= size:
        return size
    f.seek(x - 1)
    pos = x - 1
    while True:
        chunk = f.read(1 << 16)
        if not chunk:
            return size
        k = chunk.find(b"\n")
        if k >= 0:
            return pos + k + 1
        pos += len(chunk)


def _head(path: str, fmt: str, size: int, one_based: bool | None, gz: bool = False) -> dict:
    """Parse the head on rank 0 from a prefix of the file (grown until it holds it).

    ``gz``: the file is gzip-compressed and ``size`` is its decompressed size.
    """
    if fmt == "mtx" and one_based is False:
        raise ValueError(MTX_ONE_BASED)
    k = _PREFIX
    with (gzip.open(path, "rb") if gz else open(path, "rb")) as f:
        while True:
            f.seek(0)
            pre = f.read(k)
            # A gzip size may be an estimate (see _gz_size): a short read is the end.
            whole = len(pre) < k if gz else len(pre) >= size
            bom = len(BOM) if pre.startswith(BOM) else 0
            # Only whole lines: a cut size line would parse as a different one.
            data = pre[bom:] if whole else pre[bom:pre.rfind(b"\n") + 1]
            try:
                if fmt == "mtx":
                    field, symmetry, rows, nnz, body, size_line = mtx_head(path, data)
                    ncols = 2 if field == "pattern" else 3
                    return {"b0": bom + body, "line0": size_line + 1, "mincols": ncols,
                            "maxcols": ncols, "comma": False, "comments": b"%",
                            "first_free": False, "id_lo": 1, "id_hi": rows, "shift": 1,
                            "n": rows, "nnz": nnz, "size_line": size_line,
                            "integer": field == "integer", "directed": symmetry == "general"}
                start, _ = table_head(path, data, fmt)
            except GraphFormatError:
                if whole:
                    raise
                k *= 16
                continue
            comma = fmt == "csv"
            return {"b0": bom + start, "line0": lines_before(data, start), "mincols": 2,
                    "maxcols": 3, "comma": comma, "comments": b"#" if comma else b"#%",
                    "first_free": not comma, "id_lo": scanner.I64_MIN, "id_hi": scanner.I64_MAX,
                    "shift": 0, "n": None, "nnz": -1, "integer": False, "directed": None}


def _at_record(path: str, buf: np.ndarray, line0: int, c1: int, c2: int, row: int,
               problem: str) -> str:
    """The error message for record ``row`` of this rank's slice (its line in the file)."""
    line = int(scanner.row_line(buf, 0, line0, c1, c2, row))
    return f"cannot read {path}: {GraphFormatError(path, line, problem)}"


def _gz(path: str) -> bool:
    if split_gz(path)[1]:
        return True
    with open(path, "rb") as f:
        return f.read(2) == GZIP_MAGIC


def _gz_error(path: str, exc: BaseException) -> str:
    """The serial reader's message for a corrupt gzip file."""
    return f"cannot read {path}: {gzip_error(path, exc)}"


def _gz_size(path: str) -> int:
    """The decompressed size of a gzip file, or a close estimate.

    The trailer's size field (modulo 2**32, the last member only) when it is
    plausible: at least the compressed size, of a file under 256 MiB (so the
    true size is under 4 GiB unless the text compresses more than 16x).
    Otherwise one streaming pass counts the bytes (zlib runs at ~200 MB/s here:
    0.3 s for 55 MB of text). The size only places the cuts: an estimate off
    by any amount still gives every line to exactly one rank.
    """
    csize = os.path.getsize(path)
    if 18 <= csize < 1 << 28:  # 18: a gzip header and trailer
        with open(path, "rb") as f:
            f.seek(csize - 4)
            isize = struct.unpack("<I", f.read(4))[0]
        if isize >= csize:
            return isize
    size = 0
    with gzip.open(path, "rb") as f:
        while block := f.read(GZ_CHUNK):
            size += len(block)
    return size


def _gz_cuts(f: Any, b0: int, targets: list[int], emit: Any) -> tuple[list[int], bool]:
    """Stream the decompressed body of ``f`` to ranks in line-aligned ranges.

    Rank ``r`` gets ``[cut[r], cut[r + 1])`` where ``cut[r]`` is the first line
    start at or after ``targets[r]`` (``cut[0] = b0``), exactly as
    :func:`_align` cuts an uncompressed file; ``emit(r, piece)`` receives the
    range in order, in pieces. Returns the cuts (``p + 1`` offsets) and whether
    the stream ends with a newline.
    """
    p = len(targets) - 1
    cuts = [b0]
    r = 0
    cut = b0  # the last cut: a line start
    pos = 0  # stream offset of the block
    last_nl = False
    while True:
        # Ranks whose target is at or before the last cut get an empty range.
        while r < p - 1 and targets[r + 1] <= cut:
            r += 1
            cuts.append(cut)
        block = f.read(GZ_CHUNK)
        if not block:
            break
        last_nl = block.endswith(b"\n")
        i = max(0, b0 - pos)
        n = len(block)
        while i < n:
            if r == p - 1:
                emit(r, block[i:])
                break
            k = block.find(b"\n", max(i, targets[r + 1] - 1 - pos))
            if k < 0:
                emit(r, block[i:])
                break
            emit(r, block[i:k + 1])
            i = k + 1
            cut = pos + i
            r += 1
            cuts.append(cut)
            while r < p - 1 and targets[r + 1] <= cut:
                r += 1
                cuts.append(cut)
        pos += n
    end = max(pos, b0)
    cuts += [end] * (p + 1 - len(cuts))
    return cuts, last_nl


def _gz_share(comm: Any, path: str, b0: int, size: int) -> tuple[bytes, int, int, bool, str | None]:
    """This rank's line-aligned range of a gzip file's decompressed body (collective).

    Rank 0 decompresses the stream and sends every other rank its range in
    messages of at most :data:`GZ_CHUNK` bytes, all full but the last (maybe
    empty), so a receiver knows the end without a count. Returns (data,
    start, end, the stream ends with a newline, error message or None).
    """
    rank, p = comm.Get_rank(), comm.Get_size()
    targets = [b0 + (size - b0) * r // p for r in range(p + 1)]
    msg = None
    if rank == 0:
        mine: list[bytes] = []
        out = C.StreamSender(comm, GZ_CHUNK, tag=31)

        def emit(r: int, piece: bytes) -> None:
            if r == 0:
                mine.append(piece)
            else:
                out.put(r, piece)

        cuts, last_nl = [b0] * (p + 1), False
        try:
            with gzip.open(path, "rb") as f:
                cuts, last_nl = _gz_cuts(f, b0, targets, emit)
        except GZIP_ERRORS as exc:
            msg = _gz_error(path, exc)
        out.close_all(p)
        data = b"".join(mine)
        info = (cuts, last_nl, msg)
    else:
        data = C.recv_bytes(comm, 0, GZ_CHUNK, tag=31)
        info = None
    cuts, last_nl, msg = C.bcast_obj(comm, info)
    return data, cuts[rank], cuts[rank + 1], last_nl, msg


#: The common sample every rank reads to check that all see the same file: this many
#: windows of :data:`SAMPLE_WINDOW` bytes, spread evenly over the file (all of a smaller file).
SAMPLE_WINDOWS = 64
SAMPLE_WINDOW = 4096


def _sample_digest(path: str, size: int) -> int:
    """CRC-32 of the common sample of a file of ``size`` bytes (see :func:`_check_same_file`)."""
    crc = 0
    with open(path, "rb") as f:
        if size <= SAMPLE_WINDOWS * SAMPLE_WINDOW:
            return zlib.crc32(f.read(size))
        for k in range(SAMPLE_WINDOWS):
            f.seek((size - SAMPLE_WINDOW) * k // (SAMPLE_WINDOWS - 1))
            crc = zlib.crc32(f.read(SAMPLE_WINDOW), crc)
    return crc


def _check_same_file(comm: Any, path: str, problem: str | None) -> None:
    """Raise a CollectiveError on every rank unless every rank sees the same file.

    A rank reads only its own range, so a rank with another file (another
    copy on a node's local disk, a file rewritten between reads) would build
    another graph without any error. Every rank compares, in one Allreduce,
    the size and a CRC of a common sample: :data:`SAMPLE_WINDOWS` windows of
    :data:`SAMPLE_WINDOW` bytes spread evenly over the file (256 KiB read per
    rank; the whole file when smaller). Another file of the same size differs
    in the sample; an edit of a few bytes between two windows is not seen.
    """
    size = digest = None
    if problem is None:
        try:
            size = os.path.getsize(path)
            digest = _sample_digest(path, size)
        except OSError as exc:
            problem = f"cannot read {path}: {exc}"
    shown = path.replace("{", "{{").replace("}", "}}")  # a format below
    C.agree_call(comm, problem, size=size, content=None if digest is None else f"{digest:08x}",
                 mismatch=f"cannot read {shown}: the ranks do not see the same file, its "
                          "{name} differs between ranks{shown}; every rank must read the same "
                          "file")


def read_edges(comm: Any, path: str, *, directed: bool | None = None,
               one_based: bool | None = None) -> tuple[np.ndarray, np.ndarray, int, bool] | None:
    """This rank's share of the edges of a text graph file (collective).

    Parameters
    ----------
    comm : mpi4py.MPI.Comm
        The ranks that read together.
    path : str
        A Matrix Market, edge-list or CSV file (see :func:`spbfs.io.read_graph`),
        on a file system every rank sees.
    directed : bool, optional
        Override what the file says (undirected when it says nothing).
    one_based : bool, optional
        Edge-list and CSV ids start at 1.

    Returns
    -------
    (src, dst, n, directed) or None
        0-based int64 endpoints of the edges in this rank's byte range (of the
        decompressed stream for a gzip file), the vertex count and
        directedness (the same on every rank). None (on every rank) for the
        ``.npz`` archives that need one reader (see the module).

    Raises
    ------
    CollectiveError
        On every rank, reading ``cannot read PATH: ...`` with the serial
        reader's message (file and line) for a malformed or unreadable file,
        or when the ranks do not see the same file (:func:`_check_same_file`).
    """
    rank, p = comm.Get_rank(), comm.Get_size()
    msg = None
    head: dict | None = None
    gz = False
    try:
        fmt = resolve_format(path, None)
        size = os.path.getsize(path)
        special = fmt == "npz"
        gz = not special and _gz(path)
        if rank == 0 and not special:
            if gz:
                size = _gz_size(path)
            head = _head(path, fmt, size, one_based, gz)
            head["size"] = size
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:  # a corrupt gzip stream
        msg = _gz_error(path, exc)
        special = False
    except (OSError, ValueError) as exc:
        msg = f"cannot read {path}: {exc}"
        special = False
    _check_same_file(comm, path, msg)
    if C.allreduce(comm, np.array([int(special)]), "max")[0]:
        if fmt == "npz" and not _gz(path):
            return read_npz_edges(comm, path, directed=directed, one_based=one_based)
        return None
    head = C.bcast_obj(comm, head)
    size = head["size"]

    # This rank's lines: [start, end) of the body, moved to line starts.
    b0 = head["b0"]
    lo, hi = b0 + (size - b0) * rank // p, b0 + (size - b0) * (rank + 1) // p
    data = b""
    start = end = b0
    if gz:
        data, start, end, last_nl, msg = _gz_share(comm, path, b0, size)
    else:
        try:
            with open(path, "rb") as f:
                start, end = _align(f, lo, b0, size), _align(f, hi, b0, size)
                if end > start:
                    f.seek(start)
                    data = f.read(end - start)
                    if len(data) != end - start:
                        raise OSError(f"read {len(data)} of {end - start} bytes at offset "
                                      f"{start}")
        except OSError as exc:
            msg = f"cannot read {path}: {exc}"
    C.agree(comm, msg)
    lines = C.allgather_int(comm, data.count(b"\n"))
    line0 = head["line0"] + int(lines[:rank].sum())

    # Parse with the serial scanner; the first record of the body may be a count line.
    buf = np.frombuffer(data, np.uint8)
    c1, c2 = (head["comments"] * 2)[:2]
    first = start == b0 and end > start
    res = scanner.scan(buf, 0, line0, head["mincols"], head["maxcols"], head["comma"], c1, c2,
                       head["first_free"] and first, -1, head["id_lo"], head["id_hi"],
                       head["shift"], scanner.INF, scanner.INFINITY, scanner.NAN)
    what = record_shape(fmt, head["mincols"])
    nrows = int(res[0])

    def fail(problem: str, row: int) -> str:
        return _at_record(path, buf, line0, c1, c2, row, problem)

    try:
        if res[10]:
            rng = f"1..{head['n']}" if head["nnz"] >= 0 else ""
            scanner.raise_scan_error(path, data, res, what, rng)
        if head["integer"] and head["maxcols"] == 3 and not res[8]:
            raise GraphFormatError(path, int(res[9]), "expected an integer value")
    except GraphFormatError as exc:
        msg = f"cannot read {path}: {exc}"
    C.agree(comm, msg)
    src, dst = scanner.compact(res[1], nrows), scanner.compact(res[2], nrows)
    ncols_first, ncols = int(res[5]), int(res[6])

    # Whole-file facts, per rank: [records, fields per record (after a first one), holds
    # the first record of an edge list, its fields, its two ids, smallest and largest id of
    # the other records].
    skip = 1 if first and head["first_free"] and nrows else 0
    rest = slice(skip, nrows)
    has_rest = nrows > skip
    mine = [nrows, ncols, skip, ncols_first,
            int(src[0]) if skip else 0, int(dst[0]) if skip else 0,
            min(int(src[rest].min()), int(dst[rest].min())) if has_rest else scanner.I64_MAX,
            max(int(src[rest].max()), int(dst[rest].max())) if has_rest else scanner.I64_MIN]
    table = C.allgatherv(comm, np.array(mine, dtype=np.int64),
                         np.full(p, len(mine), dtype=np.int64)).reshape(p, len(mine))
    total = int(table[:, 0].sum())
    row0 = int(table[:rank, 0].sum())  # global index of this rank's first record

    n_decl = head["n"]
    drop = False  # the first record is an edge list's count line
    holder = np.flatnonzero(table[:, 2])
    if head["nnz"] >= 0:  # Matrix Market: the size line's entry count is exact
        nnz = head["nnz"]
        if total < nnz:
            last = head["line0"] - 1 + int(lines.sum())  # newlines in the file
            if gz:
                last += not last_nl
            else:
                with open(path, "rb") as f:
                    f.seek(size - 1)
                    last += f.read(1) != b"\n"
            msg = f"cannot read {path}: " + str(GraphFormatError(
                path, max(1, last), f"file ends after {total} entries but the size line "
                                    f"(line {head['size_line']}) declares {nnz}: truncated file?"))
        elif row0 <= nnz < row0 + nrows:
            msg = fail("more entries than the header declares", nnz - row0)
    elif holder.size:
        nf, a, b = (int(x) for x in table[holder[0], 3:6])
        if nf == 1:
            drop, n_decl = True, a
        elif nf == 2 and b == total - 1 and a > 0:
            # 1-based ids run up to n inclusive, 0-based ones up to n - 1.
            first_id, last_id = (1, a) if one_based else (0, a - 1)
            if total == 1 or (int(table[:, 7].max()) <= last_id
                              and int(table[:, 6].min()) >= first_id):
                drop, n_decl = True, a
        if n_decl is not None and n_decl < 0:
            msg = f"cannot read {path}: " + str(GraphFormatError(
                path, head["line0"], f"negative vertex count {n_decl}"))
    C.agree(comm, msg)
    # Every record has the fields of the first (a count line excepted).
    fields = [int(c) for c in table[:, 1] if c]
    if holder.size and not drop:
        fields.insert(0, int(table[holder[0], 3]))
    if fields and has_rest and ncols != fields[0]:
        msg = fail(f"line has {ncols} fields but the lines before it have {fields[0]}; "
                   f"expected {what}", skip)
    C.agree(comm, msg)
    if drop and skip:
        src, dst = src[1:], dst[1:]
    return _finish_ids(comm, path, src, dst, buf, line0, c1, c2, drop and bool(skip), head,
                       n_decl, one_based, directed)


def _finish_ids(comm: Any, path: str, src: np.ndarray, dst: np.ndarray, buf: np.ndarray,
                line0: int, c1: int, c2: int, dropped: bool, head: dict, n_decl: int | None,
                one_based: bool | None,
                directed: bool | None) -> tuple[np.ndarray, np.ndarray, int, bool]:
    """The range checks of every rank's ids, the 1-based shift and ``n``."""
    msg = None
    off = 1 if dropped else 0  # record index of src[0] in this rank's buffer

    def fail(problem: str, row: int) -> str:
        return _at_record(path, buf, line0, c1, c2, row + off, problem)

    text = head["nnz"] < 0  # Matrix Market ids were checked and shifted by the scan
    if text and one_based:
        if src.size and min(int(src.min()), int(dst.min())) < 1:
            row = int(np.flatnonzero((src < 1) | (dst < 1))[0])
            msg = fail(f"vertex id {min(src[row], dst[row])} in a 1-based file", row)
        C.agree(comm, msg)
        src, dst = src - 1, dst - 1
    elif text and src.size and min(int(src.min()), int(dst.min())) < 0:
        row = int(np.flatnonzero((src < 0) | (dst < 0))[0])
        msg = fail(f"negative vertex id {min(src[row], dst[row])}", row)
    C.agree(comm, msg)
    top = max(int(src.max()), int(dst.max())) if src.size else -1
    if n_decl is not None and top >= n_decl:
        row = int(np.flatnonzero((src >= n_decl) | (dst >= n_decl))[0])
        msg = fail(f"vertex id {max(src[row], dst[row])} out of range for declared "
                   f"n={n_decl}", row)
    C.agree(comm, msg)
    n = int(n_decl) if n_decl is not None else int(
        C.allreduce(comm, np.array([top], dtype=np.int64), "max")[0]) + 1
    if n > 2**MAX_VERTEX_BITS:
        msg = f"cannot read {path}: {GraphFormatError(path, None, too_many(n))}"
    elif n < 1:
        msg = f"cannot read {path}: the graph has no vertices"
    C.agree(comm, msg)
    # Refused before anything n-sized exists, as the serial readers do, whether the
    # size was declared or inferred.
    m = int(C.allreduce(comm, np.array([src.shape[0]], dtype=np.int64))[0])
    problem = sparse_ids_problem(n - 1, m)
    if problem is not None and n_decl is None:
        if top == n - 1:  # the lowest rank holding the largest id names its first line
            msg = fail(problem, int(np.flatnonzero((src == top) | (dst == top))[0]))
    elif problem is not None:
        msg = (f"cannot read {path}: it declares {n} vertices for {m} edges (over "
               f"{IDS_PER_EDGE} per edge): refused before allocating per-vertex arrays; "
               f"read it with spbfs.io.read_graph(path, n={n}) (command line: --n {n}) "
               "to insist")
    C.agree(comm, msg)
    if directed is None:
        directed = bool(head["directed"])
    return src, dst, n, bool(directed)


# --------------------------------------------------------------------------- npz


def _npy_header(f: Any) -> tuple[tuple[int, ...], np.dtype]:
    """Read a ``.npy`` header from ``f``, leaving it at the data: (shape, dtype)."""
    major, _ = np.lib.format.read_magic(f)
    read = (np.lib.format.read_array_header_1_0 if major == 1
            else np.lib.format.read_array_header_2_0)
    shape, _, dtype = read(f)
    return shape, dtype


def _npz_stream(comm: Any, path: str, key: str, dt: np.dtype, m: int
                ) -> tuple[np.ndarray, str | None]:
    """This rank's slice of the compressed member ``key`` (collective).

    Rank 0 decompresses the member once, in order, keeping its own slice and
    sending every other rank its slice through a :class:`~spbfs.mpi.comm.StreamSender`
    as :func:`_gz_share` does, so no rank holds more than its slice and one
    message. Returns (the slice as int64, error message or None);
    on an error every rank still gets its closing message, so none hangs.
    """
    rank, p = comm.Get_rank(), comm.Get_size()
    size = dt.itemsize
    if rank != 0:
        raw = C.recv_bytes(comm, 0, GZ_CHUNK, tag=32)
        a = np.frombuffer(raw[:len(raw) - len(raw) % size], dt).astype(np.int64)
        return a, C.bcast_obj(comm, None)
    msg = None
    mine = np.zeros(0, np.int64)
    out = C.StreamSender(comm, GZ_CHUNK, tag=32)
    try:
        with zipfile.ZipFile(path) as z, z.open(f"{key}.npy") as f:
            _npy_header(f)
            for r in range(p):  # rank r's slice: edges [r m / p, (r + 1) m / p)
                left = (m * (r + 1) // p - m * r // p) * size
                while left:
                    piece = f.read(left if r == 0 else min(GZ_CHUNK, left))
                    if not piece:
                        raise EOFError(f"{key}.npy ends before its {m} ids")
                    left -= len(piece)
                    if r == 0:
                        if left:  # zipfile reads return what they ask for, short at the end
                            raise EOFError(f"{key}.npy ends before its {m} ids")
                        mine = np.frombuffer(piece, dt).astype(np.int64)
                    else:
                        out.put(r, piece)
    except (OSError, EOFError, ValueError, zlib.error, zipfile.BadZipFile) as exc:
        msg = f"cannot read {path}: {key}.npy: {exc}"
    out.close_all(p)  # also after an error: every waiting rank gets its closing message
    return mine, C.bcast_obj(comm, msg)


def _member(z: zipfile.ZipFile, f: Any, info: zipfile.ZipInfo
            ) -> tuple[tuple[int, ...], np.dtype, int | None]:
    """(shape, dtype, offset of the data in the file) of a ``.npy`` member.

    The offset is None for a compressed member (rank 0 streams it, see
    :func:`_npz_stream`). Raises ValueError where the data would run past the
    member's end.
    """
    if info.compress_type != zipfile.ZIP_STORED:
        with z.open(info) as g:
            shape, dtype = _npy_header(g)
        return shape, dtype, None
    # The data follow the local header, whose extra field may differ from the
    # central directory's.
    f.seek(info.header_offset)
    local = f.read(30)
    if len(local) != 30 or local[:4] != b"PK\x03\x04":
        raise ValueError(f"{info.filename}: no local header")
    nlen, xlen = struct.unpack("<HH", local[26:30])
    begin = info.header_offset + 30 + nlen + xlen
    f.seek(begin)
    shape, dtype = _npy_header(f)
    offset = f.tell()
    if offset + int(np.prod(shape)) * dtype.itemsize > begin + info.file_size:
        raise ValueError(f"{info.filename}: data past the member's end")
    return shape, dtype, offset


def _ints(shape: tuple[int, ...], dtype: np.dtype) -> bool:
    return len(shape) == 1 and dtype.kind in "iu"


def _npz_layout(path: str) -> dict | None:
    """Where the edges lie in a ``.npz`` archive, or None.

    For a spbfs archive: ``src`` and ``dst``; for a ``scipy.sparse`` archive:
    ``row`` and ``col`` (coo) or ``indices`` and ``indptr`` (csr, csc), its
    ``kind``. Each is ``(member name without .npy, dtype, offset of the data
    in the file)``, the offset None for a compressed member. None for
    anything the serial reader must handle: another layout, malformed
    arrays or labels (``ids`` not one per vertex; it then reports the
    problem).
    """
    with zipfile.ZipFile(path) as z, open(path, "rb") as f:
        members = {i.filename: i for i in z.infolist()}
        names = set(members)
        if {"src.npy", "dst.npy"} <= names:
            if names - {"src.npy", "dst.npy", "n.npy", "directed.npy", "weights.npy", "ids.npy"}:
                return None
            return _edges_layout(z, f, members)
        if {"format.npy", "shape.npy", "data.npy"} <= names:
            return _sparse_layout(z, f, members)
    return None


def _edges_layout(z: zipfile.ZipFile, f: Any, members: dict) -> dict | None:
    """:func:`_npz_layout` of a :func:`spbfs.io.save_npz` archive."""
    arrays = {key: _member(z, f, members[f"{key}.npy"])
              for key in ("src", "dst", "weights") if f"{key}.npy" in members}
    (src_shape, src_dt, _), (dst_shape, dst_dt, _) = arrays["src"], arrays["dst"]
    m = src_shape[0] if src_shape else -1
    weights = arrays.get("weights", ((m,), np.dtype(np.float64), None))
    if not (_ints(src_shape, src_dt) and _ints(dst_shape, dst_dt)) or \
            dst_shape != (m,) or weights[0] != (m,) or weights[1].hasobject:
        return None
    n = directed = None
    if "n.npy" in members:
        with z.open("n.npy") as g:
            n = int(np.lib.format.read_array(g, allow_pickle=False))
    if "directed.npy" in members:
        with z.open("directed.npy") as g:
            value = np.lib.format.read_array(g, allow_pickle=False).item()
        directed = None if (not isinstance(value, bool) and value < 0) else bool(value)
    if "ids.npy" in members:
        # Vertex labels: metadata a search does not use (nor does the rank-0 path),
        # but the serial reader requires one per vertex; it reports any other shape.
        with z.open("ids.npy") as g:
            shape, _ = _npy_header(g)
        if n is None or tuple(shape) != (n,):
            return None
    return {"kind": "edges", "m": m, "src": ("src", src_dt.str, arrays["src"][2]),
            "dst": ("dst", dst_dt.str, arrays["dst"][2]), "n": n, "directed": directed}


def _sparse_layout(z: zipfile.ZipFile, f: Any, members: dict) -> dict | None:
    """:func:`_npz_layout` of a square coo, csr or csc ``scipy.sparse`` archive.

    Checks what scipy checks on load (shapes and lengths); anything else (bsr,
    dia, a non-square shape) is left to the serial reader, which says what is
    wrong. The pointer's values are checked as the slices are read.
    """
    with z.open("format.npy") as g:
        kind = np.lib.format.read_array(g, allow_pickle=False)
    with z.open("shape.npy") as g:
        shape = np.lib.format.read_array(g, allow_pickle=False)
    if kind.shape != () or kind.dtype.kind != "S" or shape.shape != (2,) or \
            shape.dtype.kind not in "iu" or shape[0] != shape[1]:
        return None
    kind = kind.item().decode("ascii", "replace")
    keys = {"coo": ("row", "col"), "csr": ("indptr", "indices"),
            "csc": ("indptr", "indices")}.get(kind)
    if keys is None or set(members) != {f"{k}.npy" for k in (*keys, "format", "shape",
                                                             "data")} | \
            ({"_is_array.npy"} & set(members)):
        return None
    n = int(shape[0])
    arrays = {key: _member(z, f, members[f"{key}.npy"]) for key in (*keys, "data")}
    first, second, data = (arrays[k] for k in (*keys, "data"))
    m = second[0][0] if second[0] else -1
    if not (_ints(*first[:2]) and _ints(*second[:2])) or data[0] != (m,) or data[1].hasobject or \
            first[0] != ((n + 1,) if kind != "coo" else (m,)):
        return None
    layout = {"kind": kind, "m": m, "n": n, "directed": None}
    for key, (_, dt, offset) in arrays.items():
        layout[key] = (key, dt.str, offset)
    if kind == "coo":
        layout["src"], layout["dst"] = layout.pop("row"), layout.pop("col")
    return layout


def _slice(comm: Any, path: str, where: tuple[str, str, int | None], total: int
           ) -> np.ndarray:
    """This rank's slice ``[r total / p, (r + 1) total / p)`` of a member (collective).

    ``where`` is the member's (name without ``.npy``, dtype, offset) from :func:`_npz_layout`.

    Read at its offset in the file, or streamed by rank 0 for a compressed
    member; returned as int64. Raises CollectiveError on every rank on failure.
    """
    rank, p = comm.Get_rank(), comm.Get_size()
    key, dtype, offset = where
    dt = np.dtype(dtype)
    if offset is None:
        a, msg = _npz_stream(comm, path, key, dt, total)
        C.agree(comm, msg)
        return a
    lo, hi = total * rank // p, total * (rank + 1) // p
    msg = None
    a = np.zeros(0, np.int64)
    try:
        a = np.fromfile(path, dtype=dt, count=hi - lo, offset=offset + lo * dt.itemsize)
        if a.shape[0] != hi - lo:
            raise OSError(f"read {a.shape[0]} of {hi - lo} ids at offset {offset}")
    except OSError as exc:
        msg = f"cannot read {path}: {exc}"
    C.agree(comm, msg)
    return a.astype(np.int64, copy=False)


def _expand_pointer(comm: Any, path: str, layout: dict) -> np.ndarray:
    """The major ids (rows of csr, columns of csc) of this rank's edges (collective).

    Every rank reads an equal slice of ``indptr`` and turns its nonempty rows
    into runs (row, length), split at the edge cuts ``r m / p``; an Alltoallv
    sends each run to the rank whose edges it covers, which expands them in
    order. No rank holds more than its slice of the pointer and its edges'
    runs. The pointer is checked with the serial reader's words.
    """
    rank, p = comm.Get_rank(), comm.Get_size()
    n, m = layout["n"], layout["m"]
    ptr = _slice(comm, path, layout["indptr"], n + 1)
    first = (n + 1) * rank // p
    last = (n + 1) * (rank + 1) // p == n + 1
    heads = C.allgather_int(comm, int(ptr[0]) if ptr.size else 0)
    # The entry after this slice starts the next nonempty slice.
    sizes = np.diff((n + 1) * np.arange(p + 1, dtype=np.int64) // p)
    later = np.flatnonzero(sizes[rank + 1:]) + rank + 1
    after = int(heads[later[0]]) if ptr.size and later.size else None
    problem = sparse_pointer_problem(ptr, (m,), first, last)
    if problem is None and after is not None and ptr.size and after < ptr[-1]:
        k = first + ptr.size - 1
        problem = f"'indptr' must not decrease: entry {k + 1} is {after} < {ptr[-1]}"
    # Slices are in file order: the lowest rank's problem, which agree() reports,
    # is the one the serial reader meets first.
    C.agree(comm, None if problem is None else
            f"cannot read {path}: " + str(GraphFormatError(path, None, problem)))
    ends = np.append(ptr[1:], after) if after is not None else ptr[1:]
    starts = ptr[:ends.size]
    rows = np.flatnonzero(ends > starts)
    cuts = m * np.arange(1, p, dtype=np.int64) // p
    lo, hi = (int(starts[0]), int(ends[-1])) if ends.size else (0, 0)
    # Pieces start at every nonempty run's start and at every cut inside this span.
    inner = cuts[(cuts > lo) & (cuts < hi)]
    at = np.union1d(starts[rows], inner)
    length = np.diff(np.append(at, hi))
    row = first + rows[np.searchsorted(starts[rows], at, side="right") - 1]
    owner = np.searchsorted(cuts, at, side="right")
    counts = np.bincount(owner, minlength=p)
    got_rows, _ = C.alltoallv(comm, row, counts)
    got_len, _ = C.alltoallv(comm, length, counts)
    return np.repeat(got_rows, got_len)


def read_npz_edges(comm: Any, path: str, *, directed: bool | None = None,
                   one_based: bool | None = None
                   ) -> tuple[np.ndarray, np.ndarray, int, bool] | None:
    """This rank's share of the edges of a ``.npz`` archive (collective).

    The archive is one :func:`spbfs.io.save_npz` writes (``src``, ``dst`` and
    optionally ``n``, ``directed``, ``weights``, which a search does not use),
    or a square coo, csr or csc ``scipy.sparse`` archive, whose edges are its
    stored entries in file order.
    Rank ``r`` of ``p`` gets edges ``[r m / p, (r + 1) m / p)``: read straight
    from the file, or for a compressed archive sent by rank 0 as it
    decompresses (:func:`_npz_stream`); the range checks are those of
    :func:`spbfs.io.read_graph`, with the same messages.

    Returns
    -------
    (src, dst, n, directed) or None
        As :func:`read_edges`; None (on every rank) for archives this cannot
        slice (a bsr or dia matrix, malformed arrays or labels,
        ``one_based``), which the caller reads on rank 0 with the serial reader.

    Raises
    ------
    CollectiveError
        On every rank, ``cannot read PATH: PATH: edge K: ...`` as the serial
        reader says it, for an id out of range, or ``... 'indptr' ...`` for a
        pointer that does not start at 0, decreases or ends early.
    """
    rank, p = comm.Get_rank(), comm.Get_size()
    layout = None
    if rank == 0 and not one_based:
        try:
            layout = _npz_layout(path)
        except (OSError, ValueError, zipfile.BadZipFile, struct.error):
            layout = None  # the serial reader says what is wrong
    layout = C.bcast_obj(comm, layout)
    if layout is None:
        return None
    m = layout["m"]
    lo = m * rank // p
    if layout["kind"] in ("csr", "csc"):
        major = _expand_pointer(comm, path, layout)
        minor = _slice(comm, path, layout["indices"], m)
        src, dst = (major, minor) if layout["kind"] == "csr" else (minor, major)
    else:
        src = _slice(comm, path, layout["src"], m)
        dst = _slice(comm, path, layout["dst"], m)
    msg = None

    def fail(problem: str, bad: np.ndarray) -> str:
        row = int(np.flatnonzero(bad)[0])  # the lowest rank with a bad edge holds the first
        return f"cannot read {path}: " + str(GraphFormatError(
            path, None, f"edge {lo + row}: {problem}"))

    has = src.shape[0] > 0
    bounds = np.array([min(int(src.min()), int(dst.min())) if has else scanner.I64_MAX,
                       -max(int(src.max()), int(dst.max())) if has else scanner.I64_MAX])
    low, top = (int(x) for x in C.allreduce(comm, bounds, "min"))
    top = -top if m else -1
    n = layout["n"]
    if low < 0 and has and min(int(src.min()), int(dst.min())) < 0:
        msg = fail(f"negative vertex id {low} (pass renumber=True for arbitrary labels)",
                   (src < 0) | (dst < 0))
    C.agree(comm, msg)
    if n is not None and top >= n:
        bad = (src >= n) | (dst >= n)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            msg = fail(f"vertex id {max(src[row], dst[row])} out of range for declared n={n}",
                       bad)
    C.agree(comm, msg)
    big = 2**MAX_VERTEX_BITS
    if n is None:
        n = top + 1
        if n > big:
            bad = (src >= big) | (dst >= big)
            if bad.any():
                msg = fail(too_many(n), bad)
        elif (problem := sparse_ids_problem(top, m)) is not None:
            bad = (src == top) | (dst == top)
            if bad.any():
                msg = fail(problem, bad)
    elif n > big:
        msg = f"cannot read {path}: " + str(GraphFormatError(
            path, None, f"declared size: {too_many(n)}"))
    C.agree(comm, msg)
    if n < 1:
        C.agree(comm, f"cannot read {path}: the graph has no vertices")
    if directed is None:
        directed = layout["directed"]
    return src, dst, int(n), bool(directed)
