"""Parallel file reading under mpiexec: every rank's slice against the serial reader.

Run as ``mpiexec -n P python tests/mpi/read_cases.py DATA_DIR [Q ...]``: on the
job's first ``Q`` ranks for each ``Q`` named (default: all ``P``). Rank 0 writes
the synthetic files; each file is read by :func:`spbfs.mpi.read.read_edges`
and the slices, concatenated in rank order, must be exactly the serial
reader's edges (same order); a malformed file must fail on every rank with
the serial reader's line number. Gzip copies of the files are streamed by
rank 0 and must read the same. Prints ``READ OK <k> files on <Q> ranks``.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from typing import Any

import numpy as np
from case_runner import each_first_ranks

from spbfs.io import GraphFormatError, read_graph
from spbfs.mpi import CollectiveError, DistGraph, ProcessGrid, install_excepthook
from spbfs.mpi import comm as C
from spbfs.mpi.read import read_edges


def _lines(k: int, seed: int, weights: bool = False, sep: str = " ") -> list[str]:
    rng = np.random.default_rng(seed)
    src = rng.integers(0, 997, k)
    dst = rng.integers(0, 997, k)
    if weights:
        return [f"{a}{sep}{b}{sep}{w:.3f}" for a, b, w in zip(src, dst, rng.random(k),
                                                            strict=True)]
    return [f"{a}{sep}{b}" for a, b in zip(src, dst, strict=True)]


def good_files() -> dict[str, tuple[str, dict]]:
    """name -> (text, read options)."""
    body = _lines(3000, 1)
    noisy = []
    for k, line in enumerate(body):  # comments and blank lines everywhere
        if k % 97 == 0:
            noisy.append("# a comment")
        if k % 131 == 0:
            noisy.append("")
        noisy.append(line if k % 3 else "\t" + line.replace(" ", "\t") + "  ")
    mtx = ["%%MatrixMarket matrix coordinate integer symmetric", "% comment", "997 997 1500"]
    mtx += [f"{a + 1} {b + 1} {k}" for k, (a, b) in enumerate(
        map(int, s.split()) for s in _lines(1500, 2))]
    return {
        "plain.txt": ("\n".join(body) + "\n", {}),
        "noisy.txt": ("# header comment\n% another\n" + "\n".join(noisy) + "\n", {}),
        "crlf_nolf.txt": ("\r\n".join(body[:500]), {}),
        "count1.txt": ("1000\n" + "\n".join(body[:800]) + "\n", {}),
        "count2.txt": (f"1000 {len(body)}\n" + "\n".join(body) + "\n", {}),
        "count2_edge.txt": ("5 3\n" + "\n".join(body[:40]) + "\n", {}),
        "weighted.txt": ("\n".join(_lines(2000, 3, True)) + "\n", {}),
        "one_based.txt": ("\n".join(f"{int(a) + 1} {int(b) + 1}" for a, b in
                                    (s.split() for s in body)) + "\n", {"one_based": True}),
        "header.csv": ("id_1,id_2\n" + "\n".join(_lines(2500, 4, sep=",")) + "\n", {}),
        "bare.csv": ("\ufeff" + "\n".join(_lines(700, 5, sep=" , ")) + "\n", {}),
        "tiny.txt": ("0 1\n1 2\n", {}),
        "one_line.txt": ("3 4", {}),
        "sym.mtx": ("\n".join(mtx) + "\n", {}),
        "general.mtx": ("%%MatrixMarket matrix coordinate pattern general\n4 4 3\n1 2\n2 3\n"
                        "4 1\n", {}),
    }


def bad_files() -> dict[str, tuple[str, dict]]:
    body = _lines(3000, 6)
    late = 2400  # past the middle: another rank than the head's
    bad_token = body.copy()
    bad_token[late] = "12 x3"
    fields = body.copy()
    fields[late] = "12 13 14"
    neg = body.copy()
    neg[late] = "-4 5"
    zero = [f"{int(a) + 1} {int(b) + 1}" for a, b in (s.split() for s in body)]
    zero[late] = "0 7"
    mtx = ["%%MatrixMarket matrix coordinate pattern general", "997 997 3000"]
    mtx += [f"{int(a) + 1} {int(b) + 1}" for a, b in (s.split() for s in body)]
    out_of_range = mtx.copy()
    out_of_range[2 + late] = "998 1"
    return {
        "bad_token.txt": ("\n".join(bad_token) + "\n", {}),
        "bad_fields.txt": ("\n".join(fields) + "\n", {}),
        "negative.txt": ("\n".join(neg) + "\n", {}),
        "zero_in_one_based.txt": ("\n".join(zero) + "\n", {"one_based": True}),
        "beyond_count.txt": ("900\n" + "\n".join(body) + "\n", {}),
        "short.mtx": ("\n".join(mtx[:-5]) + "\n", {}),
        "long.mtx": ("\n".join([*mtx, "1 1", "2 2"]) + "\n", {}),
        "range.mtx": ("\n".join(out_of_range) + "\n", {}),
        "empty.txt": ("", {}),
        "only_comments.txt": ("# nothing\n\n", {}),
    }


def same_edges(comm, path: str, **opts) -> None:
    """The ranks' slices, in rank order, are the serial reader's edges (same n, direction)."""
    got = read_edges(comm, path, **opts)
    assert got is not None, path
    src, dst, n, directed = got
    all_src, all_dst = C.gatherv(comm, src), C.gatherv(comm, dst)
    if comm.Get_rank() == 0:
        el = read_graph(path, **opts)
        assert (n, directed) == (el.n, bool(el.directed)), (path, n, directed)
        assert np.array_equal(all_src, el.src) and np.array_equal(all_dst, el.dst), path


def same_error(comm, path: str, exact: bool, **opts) -> None:
    """Every rank fails with the serial reader's line number (``exact``: its whole message)."""
    want = None
    if comm.Get_rank() == 0:
        try:
            read_graph(path, **opts)
        except GraphFormatError as exc:
            want = f"cannot read {path}: {exc}"
        assert want is not None, f"{path}: the serial reader accepted it"
    want = C.bcast_obj(comm, want)
    try:
        read_edges(comm, path, **opts)
    except CollectiveError as exc:
        msg = str(exc)
        assert msg.startswith(f"cannot read {path}"), msg
        assert _line_of(msg) == _line_of(want), f"{path}: {msg!r} vs serial {want!r}"
        assert not exact or msg == want, f"{path}: {msg!r} vs serial {want!r}"
    else:
        raise AssertionError(f"{path}: accepted")


def npz_files(tmp: str, size: int) -> tuple[list[str], list[str], list[str]]:
    """Archives read in slices, archives left to rank 0, malformed sliced archives."""
    from spbfs.edges import EdgeList
    from spbfs.io import save_npz

    rng = np.random.default_rng(7)
    src = rng.integers(0, 997, 3001)
    dst = rng.integers(0, 997, 3001)
    paths: dict[str, str] = {}

    def put(name: str, **arrays: np.ndarray) -> None:
        paths[name] = os.path.join(tmp, name)
        with open(paths[name], "wb") as f:
            np.savez(f, **arrays)

    save_npz(os.path.join(tmp, "edges.npz"),
             EdgeList(src, dst, 1000, directed=True, weights=rng.random(3001)))
    paths["edges.npz"] = os.path.join(tmp, "edges.npz")
    put("no_n.npz", src=src.astype(np.int32), dst=dst.astype(np.uint16))
    put("tiny.npz", src=np.array([0]), dst=np.array([1]), n=np.int64(2))
    put("empty_edges.npz", src=np.zeros(0, np.int64), dst=np.zeros(0, np.int64),
        n=np.int64(4))
    save_npz(os.path.join(tmp, "zipped.npz"), EdgeList(src, dst, 1000, directed=True),
             compressed=True)
    paths["zipped.npz"] = os.path.join(tmp, "zipped.npz")
    paths["zipped_small.npz"] = os.path.join(tmp, "zipped_small.npz")
    np.savez_compressed(paths["zipped_small.npz"], src=src.astype(np.int32),
                        dst=dst.astype(np.uint16), n=np.int64(1000))
    put("labels.npz", src=src, dst=dst, n=np.int64(1000), ids=np.arange(1000) * 3)
    put("bad_labels.npz", src=src, dst=dst, n=np.int64(1000), ids=np.arange(999))
    put("floats.npz", src=src.astype(float), dst=dst)
    late = 2400
    neg = src.copy()
    neg[late] = -4
    put("negative.npz", src=neg, dst=dst)
    far = dst.copy()
    far[late] = 1000
    put("beyond_n.npz", src=src, dst=far, n=np.int64(1000))
    paths["negative_zipped.npz"] = os.path.join(tmp, "negative_zipped.npz")
    np.savez_compressed(paths["negative_zipped.npz"], src=neg, dst=dst)
    sliced, whole, bad = scipy_files(tmp, size, put)
    return (["edges.npz", "no_n.npz", "tiny.npz", "empty_edges.npz", "zipped.npz",
             "zipped_small.npz", "labels.npz", *sliced],
            ["bad_labels.npz", "floats.npz", *whole],
            ["negative.npz", "beyond_n.npz", "negative_zipped.npz", *bad])


def scipy_files(tmp: str, size: int, put) -> tuple[list[str], list[str], list[str]]:
    """scipy.sparse archives: sliced (coo, csr, csc), left to rank 0, malformed.

    ``size`` ranks read them: one malformed pointer decreases exactly where
    rank 0's slice of ``indptr`` meets rank 1's, which only the check across
    slices can see.
    """
    import scipy.sparse as sp

    rng = np.random.default_rng(11)
    a = sp.random(1000, 1000, density=0.003, format="lil", random_state=rng)
    a[7, :] = 1.0  # a hub row longer than any rank's share of the edges
    a = a.tocsr()
    names = []

    def save(name: str, mat, compressed: bool = False) -> None:
        sp.save_npz(os.path.join(tmp, name), mat, compressed=compressed)
        names.append(name)

    for fmt in ("csr", "csc", "coo"):
        save(f"sp_{fmt}.npz", a.asformat(fmt))
        save(f"sp_{fmt}_zipped.npz", a.asformat(fmt), compressed=True)
    save("sp_csr_array.npz", sp.csr_array(a))
    save("sp_tiny.npz", sp.csr_matrix(np.array([[0, 1], [1, 0]])))  # fewer rows than ranks
    save("sp_empty.npz", sp.csc_matrix((5, 5)))
    sliced, names = names, []
    save("sp_bsr.npz", a.tobsr())
    save("sp_dia.npz", sp.dia_matrix(np.eye(4)))
    save("sp_rect.npz", a[:, :900].tocsr())
    put("sp_short_ptr.npz", indices=a.indices, indptr=a.indptr[:-1], format=np.bytes_(b"csr"),
        shape=np.array([1000, 1000]), data=a.data)
    whole, names = [*names, "sp_short_ptr.npz"], []
    late = a.indptr[800]
    ind = a.indices.copy()
    ind[late] = 1000
    put("sp_beyond_n.npz", indices=ind, indptr=a.indptr, format=np.bytes_(b"csr"),
        shape=np.array([1000, 1000]), data=a.data)
    ind[late] = -3
    np.savez_compressed(os.path.join(tmp, "sp_negative.npz"), indices=ind, indptr=a.indptr,
                        format=np.bytes_(b"csc"), shape=np.array([1000, 1000]), data=a.data)
    ptr = a.indptr.copy()
    ptr[700] = ptr[702]  # decreases from entry 700 to 701, inside some rank's slice
    put("sp_down.npz", indices=a.indices, indptr=ptr, format=np.bytes_(b"csr"),
        shape=np.array([1000, 1000]), data=a.data)
    edge = 1001 // size if size > 1 else 500  # rank 1's first pointer entry
    ptr = a.indptr.copy()
    ptr[edge - 1] = ptr[edge] + 1
    put("sp_down_at_cut.npz", indices=a.indices, indptr=ptr, format=np.bytes_(b"csr"),
        shape=np.array([1000, 1000]), data=a.data)
    ptr = a.indptr.copy()
    ptr[-1] -= 2  # scipy would drop the last two entries
    np.savez_compressed(os.path.join(tmp, "sp_drops.npz"), indices=a.indices, indptr=ptr,
                        format=np.bytes_(b"csr"), shape=np.array([1000, 1000]), data=a.data)
    ptr = a.indptr.copy()
    ptr[0] = 1
    put("sp_start.npz", indices=a.indices, indptr=ptr, format=np.bytes_(b"csr"),
        shape=np.array([1000, 1000]), data=a.data)
    return sliced, whole, ["sp_beyond_n.npz", "sp_negative.npz", "sp_down.npz",
                           "sp_down_at_cut.npz", "sp_drops.npz", "sp_start.npz"]


def check_npz(grid: ProcessGrid, tmp: str) -> int:
    """Sliced archives give the serial reader's edges; the others go to rank 0.

    Compressed archives are streamed by rank 0: read with the default message
    size and with 1000-byte messages (slices over several messages), and a
    corrupt one fails on every rank instead of hanging the receivers.
    """
    from spbfs.mpi import read as R

    comm = grid.comm
    rank = comm.Get_rank()
    names = npz_files(tmp, comm.Get_size()) if rank == 0 else None
    sliced, whole, bad = C.bcast_obj(comm, names)
    default = R.GZ_CHUNK
    runs = [(name, default) for name in sliced] + [("zipped.npz", 1000),
                                                   ("zipped_small.npz", 1000)]
    for name, chunk in runs:
        R.GZ_CHUNK = chunk
        try:
            same_edges(comm, os.path.join(tmp, name))
        finally:
            R.GZ_CHUNK = default
    if rank == 0:
        with open(os.path.join(tmp, "zipped.npz"), "rb") as f:
            raw = bytearray(f.read())
        raw[len(raw) // 3:len(raw) // 3 + 64] = bytes(64)  # inside src.npy's deflate data
        with open(os.path.join(tmp, "corrupt_zipped.npz"), "wb") as f:
            f.write(raw)
    C.wait_barrier(comm)
    try:
        read_edges(comm, os.path.join(tmp, "corrupt_zipped.npz"))
    except CollectiveError as exc:
        assert "corrupt_zipped.npz" in str(exc), str(exc)
    else:
        raise AssertionError("corrupt_zipped.npz: accepted")
    for name in whole:
        assert read_edges(comm, os.path.join(tmp, name)) is None, name
    for name in bad:
        same_error(comm, os.path.join(tmp, name), True)
    # The same edges, read in slices or streamed by rank 0, make the same graph.
    for name in ("edges.npz", "zipped.npz"):
        g = DistGraph.from_file(os.path.join(tmp, name), grid=grid)
        entries = g.global_entries()
        if rank == 0:
            if name == "edges.npz":
                first = entries
            else:
                assert all(np.array_equal(a, b) for a, b in zip(first, entries, strict=True))
    return len(sliced) + len(whole) + len(bad)


def check_gzip(grid: ProcessGrid, tmp: str, good: dict, bad: dict) -> int:
    """Gzip files are streamed by rank 0 in line-aligned ranges: the same edges and errors.

    Run twice: with the default message size and with 1000-byte messages, so
    ranges span several messages and cuts fall at message boundaries.
    """
    import gzip

    from spbfs.mpi import read as R

    comm = grid.comm
    rank = comm.Get_rank()
    if rank == 0:
        for name, (text, _) in {**good, **bad}.items():
            with gzip.open(os.path.join(tmp, name + ".gz"), "wt", newline="") as f:
                f.write(text)
        raw = good["noisy.txt"][0].encode()
        # Two gzip members, and gzip data under a name without the suffix.
        with open(os.path.join(tmp, "members.txt.gz"), "wb") as f:
            f.write(gzip.compress(raw[:5000]) + gzip.compress(raw[5000:]))
        with open(os.path.join(tmp, "magic.txt"), "wb") as f:
            f.write(gzip.compress(good["sym.mtx"][0].encode()))
        whole = gzip.compress(raw)
        with open(os.path.join(tmp, "cut.txt.gz"), "wb") as f:
            f.write(whole[:len(whole) // 2])
        with open(os.path.join(tmp, "garbage.txt.gz"), "wb") as f:
            f.write(whole[:12] + bytes(200) + whole[212:])
    C.wait_barrier(comm)
    goods = [(k + ".gz", o) for k, (_, o) in good.items()] + [("members.txt.gz", {}),
                                                              ("magic.txt", {})]
    bads = [(k + ".gz", o) for k, (_, o) in bad.items()] + [("cut.txt.gz", {}),
                                                            ("garbage.txt.gz", {})]
    checked = 0
    default = R.GZ_CHUNK
    try:
        for chunk in (default, 1000):
            R.GZ_CHUNK = chunk
            for name, opts in goods:
                same_edges(comm, os.path.join(tmp, name), **opts)
                checked += chunk == default
            for name, opts in bads:
                # A corrupt stream fails with the serial reader's exact message.
                same_error(comm, os.path.join(tmp, name), name in ("cut.txt.gz",
                                                                    "garbage.txt.gz"), **opts)
                checked += chunk == default
    finally:
        R.GZ_CHUNK = default
    return checked


def _line_of(message: str) -> str | None:
    m = re.search(r"line (\d+)", message)
    return m.group(1) if m else None


def check(world: Any) -> None:
    """Every case on the ranks of communicator ``world``."""
    grid = ProcessGrid(None, comm=world)
    comm = grid.comm
    rank = comm.Get_rank()
    tmp = C.bcast_obj(comm, tempfile.mkdtemp() if rank == 0 else None)
    good, bad = good_files(), bad_files()
    if rank == 0:
        for name, (text, _) in {**good, **bad}.items():
            with open(os.path.join(tmp, name), "w", newline="") as f:
                f.write(text)
    C.wait_barrier(comm)
    files = [(os.path.join(tmp, k), o) for k, (_, o) in good.items()]
    files += [(os.path.join(sys.argv[1], k), {}) for k in sorted(os.listdir(sys.argv[1]))
              if k.endswith((".mtx", ".txt", ".csv")) and k != "README.md"]
    checked = 0
    for path, opts in files:
        same_edges(comm, path, **opts)
        checked += 1
    for name, (_, opts) in bad.items():
        same_error(comm, os.path.join(tmp, name), False, **opts)
        checked += 1
    checked += check_gzip(grid, tmp, good, bad)
    checked += check_npz(grid, tmp)
    # The graph built from slices is the graph built from the whole file.
    path = os.path.join(tmp, "noisy.txt")
    g = DistGraph.from_file(path, grid=grid)
    rows_cols = g.global_entries()
    if rank == 0:
        from spbfs import Graph

        ref = Graph.from_edgelist(read_graph(path)).out_block.to_scipy().tocoo()
        order = np.lexsort((ref.row, ref.col))
        assert np.array_equal(rows_cols[0], ref.row[order]), "from_file rows"
        assert np.array_equal(rows_cols[1], ref.col[order]), "from_file cols"
        for name in os.listdir(tmp):
            os.remove(os.path.join(tmp, name))
        os.rmdir(tmp)
        print(f"READ OK {checked} files on {comm.Get_size()} ranks", flush=True)
    grid.free()


def main() -> None:
    install_excepthook()
    each_first_ranks(check, sys.argv[2:])


if __name__ == "__main__":
    main()
