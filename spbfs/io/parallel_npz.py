"""Parallel ``np.savez``: every rank writes its pieces of the result arrays with MPI-IO.

Rank 0 lays out an uncompressed zip (ZIP64 when it reaches 4 GiB) and writes
its headers and central directory; each rank checksums its own pieces, and
rank 0 combines the CRCs without seeing the data.

:mod:`spbfs.io` does not import this module, and this module imports
:mod:`spbfs.mpi` only when :func:`save_npz` runs, so reading and writing files
on one process never needs MPI. Its user is :meth:`spbfs.mpi.DistBFSResult.save`.
"""

from __future__ import annotations

import io
import struct
import zlib
from typing import Any

import numpy as np

__all__ = ["save_npz"]


def _gf2_times(mat: list[int], vec: int) -> int:
    s = 0
    k = 0
    while vec:
        if vec & 1:
            s ^= mat[k]
        vec >>= 1
        k += 1
    return s


def _gf2_square(mat: list[int]) -> list[int]:
    return [_gf2_times(mat, mat[k]) for k in range(32)]


def _crc32_combine(crc1: int, crc2: int, len2: int) -> int:
    """CRC-32 of ``A + B`` from ``crc32(A)``, ``crc32(B)`` and ``len(B)`` (zlib's algorithm).

    Lets every rank checksum its own piece of an array and rank 0 assemble the
    zip entry's CRC without seeing the data.
    """
    if len2 <= 0:
        return crc1 & 0xFFFFFFFF
    op = [0xEDB88320] + [1 << k for k in range(31)]  # operator for one zero bit
    op = _gf2_square(_gf2_square(op))  # four zero bits
    crc1 &= 0xFFFFFFFF
    # Square-and-multiply over the bits of len2: squaring first makes the k-th
    # pass's operator append 2**k zero bytes, and the test before squaring
    # spares the square that no remaining bit would use.
    while len2:
        op = _gf2_square(op)
        if len2 & 1:
            crc1 = _gf2_times(op, crc1)
        len2 >>= 1
    return (crc1 ^ crc2) & 0xFFFFFFFF


def _npy_header(n: int) -> bytes:
    f = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        f, {"descr": np.lib.format.dtype_to_descr(np.dtype("<i8")), "fortran_order": False,
            "shape": (n,)})
    return f.getvalue()


_U32 = 0xFFFFFFFF
#: Bytes per MPI-IO write call (its count is a C int).
_WRITE_CHUNK = 1 << 30


def _zip_local(name: bytes, crc: int, size: int, z64: bool) -> bytes:
    if not z64:
        return struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 0, 0, 0x21, crc, size, size,
                           len(name), 0) + name
    # ZIP64: the sizes live in an extra field (id 1: uncompressed, compressed).
    return struct.pack("<IHHHHHIIIHH", 0x04034B50, 45, 0, 0, 0, 0x21, crc, _U32, _U32,
                       len(name), 20) + name + struct.pack("<HHQQ", 1, 16, size, size)


def _zip_central(name: bytes, crc: int, size: int, offset: int, z64: bool) -> bytes:
    if not z64:
        return struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 0, 0, 0x21, crc, size,
                           size, len(name), 0, 0, 0, 0, 0x01800000, offset) + name
    return struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 45, 0, 0, 0, 0x21, crc, _U32,
                       _U32, len(name), 28, 0, 0, 0, 0x01800000, _U32) + name + struct.pack(
                           "<HHQQQ", 1, 24, size, size, offset)


def _zip_end(count: int, cd_size: int, cd_start: int, z64: bool) -> bytes:
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, count, count, cd_size,
                      _U32 if z64 else cd_start, 0)
    if not z64:
        return end
    # ZIP64 end of central directory record, then its locator, then the plain record.
    rec = struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, count, count, cd_size,
                      cd_start)
    loc = struct.pack("<IIQI", 0x07064B50, 0, cd_start + cd_size, 1)
    return rec + loc + end


def save_npz(comm: Any, path: str, source: int, n: int, lo: int,
              arrays: list[tuple[str, np.ndarray]], zip64: bool | None = None) -> None:
    """Parallel ``np.savez``: rank 0 writes the zip structure, every rank its pieces.

    Collective: every rank of ``comm`` calls it with its own piece of each array.
    The archive holds ``source`` (a scalar) and one int64 array of length
    ``n`` per entry of ``arrays``.

    Parameters
    ----------
    comm : mpi4py.MPI.Comm
        The ranks that write together.
    path : str
        Destination, on a file system every rank sees (overwritten).
    source : int
        Stored as the scalar ``source``.
    n : int
        Length of every array in the archive.
    lo : int
        Where this rank's pieces start in the arrays.
    arrays : list of (str, numpy.ndarray)
        Name and this rank's piece of each array, in the same order on every rank.
    zip64 : bool, optional
        Write the ZIP64 records ``zipfile`` and ``numpy.load`` read for large
        archives (default: when the file reaches 4 GiB).
    """
    # spbfs.mpi imports this module (its bfs), so a top-level import of it
    # would be circular whenever this module is imported first.
    from spbfs.mpi import comm as C

    rank = comm.Get_rank()
    hdr = _npy_header(n)
    src_bytes = io.BytesIO()
    np.save(src_bytes, np.int64(source))
    src_npy = src_bytes.getvalue()
    pieces = [np.ascontiguousarray(a, dtype="<i8") for _, a in arrays]
    crcs = np.array([zlib.crc32(p) for p in pieces], dtype=np.int64)
    lens = np.array([p.nbytes for p in pieces], dtype=np.int64)
    all_crc = C.gatherv(comm, crcs)
    all_len = C.gatherv(comm, lens)
    entries = [(b"source.npy", len(src_npy))] + [
        (f"{name}.npy".encode(), len(hdr) + 8 * n) for name, _ in arrays]

    def layout(z64: bool) -> tuple[list[int], int]:
        offsets, pos = [], 0
        for name, size in entries:
            offsets.append(pos)
            pos += 30 + len(name) + (20 if z64 else 0) + size
        return offsets, pos

    z64 = zip64
    if z64 is None:
        offsets, cd_start = layout(False)
        z64 = cd_start + sum(46 + len(nm) for nm, _ in entries) + 22 > _U32
    offsets, cd_start = layout(z64)
    data_at = [o + 30 + len(nm) + (20 if z64 else 0)
               for o, (nm, _) in zip(offsets, entries, strict=True)]
    writes: list[tuple[int, bytes | np.ndarray]] = []
    if rank == 0:
        p = comm.Get_size()
        crc_tab = all_crc.reshape(p, len(arrays))
        len_tab = all_len.reshape(p, len(arrays))
        ecrc = [zlib.crc32(src_npy)]
        for a in range(len(arrays)):
            c = zlib.crc32(hdr)
            for r in range(p):
                c = _crc32_combine(c, int(crc_tab[r, a]), int(len_tab[r, a]))
            ecrc.append(c)
        central = b""
        for k, (name, size) in enumerate(entries):
            local = _zip_local(name, ecrc[k], size, z64)
            writes.append((offsets[k], local + (src_npy if k == 0 else hdr)))
            central += _zip_central(name, ecrc[k], size, offsets[k], z64)
        writes.append((cd_start, central + _zip_end(len(entries), len(central), cd_start, z64)))
    for k, piece in enumerate(pieces):
        writes.append((data_at[k + 1] + len(hdr) + 8 * lo, piece))
    MPI = C.mpi()
    fh = MPI.File.Open(comm, path, MPI.MODE_WRONLY | MPI.MODE_CREATE)
    try:
        fh.Set_size(0)
        C.wait_barrier(comm)
        for off, buf in writes:
            arr = np.frombuffer(buf, dtype=np.uint8) if isinstance(buf, bytes) else buf
            arr = arr.reshape(-1).view(np.uint8)
            # MPI counts are C ints: a piece of 2 GiB or more goes in several writes.
            for at in range(0, arr.size, _WRITE_CHUNK):
                fh.Write_at(off + at, arr[at:at + _WRITE_CHUNK])
        fh.Sync()
    finally:
        fh.Close()
