"""Tests for spbfs.io: readers, writers, renumbering and error reporting."""

from __future__ import annotations

import gzip
import pickle
import time
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spbfs.edges import EdgeList
from spbfs.io import (
    FORMATS,
    GraphFormatError,
    read_graph,
    renumber,
    save_npz,
    write_edgelist,
    write_mtx,
)


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(text.encode() if isinstance(text, str) else text)
    return p


def edges(el: EdgeList) -> list[tuple[int, int]]:
    return list(zip(el.src.tolist(), el.dst.tolist(), strict=True))


def raises_at(path: Path, line: int | None, match: str | None = None, **kw) -> GraphFormatError:
    """Read ``path`` expecting a GraphFormatError at ``line`` naming the file."""
    with pytest.raises(GraphFormatError, match=match) as info:
        read_graph(path, **kw)
    err = info.value
    assert err.line == line
    assert str(path) in str(err)
    if line is not None:
        assert f"line {line}" in str(err)
    return err


# --------------------------------------------------------------------------- real data
# The bundled graphs (spbfs.datasets), uncompressed under their own names by conftest's
# data_dir fixture so that scipy reads the same bytes.


@pytest.mark.parametrize(
    ("name", "n", "m", "directed", "weighted"),
    [
        ("karate.mtx", 34, 78, False, False),
        ("west0067.mtx", 67, 294, True, True),
        ("luxembourg_osm.mtx", 114_599, 119_666, False, False),
        ("musae_git_edges.csv", 37_700, 289_003, None, False),
        ("p2p-Gnutella31.txt", 62_586, 147_892, None, False),
    ],
)
def test_data_files_counts(data_dir, name, n, m, directed, weighted):
    el = read_graph(data_dir / name)
    assert el.n == n
    assert el.num_edges == m
    assert el.directed is directed
    assert (el.weights is not None) == weighted
    assert el.src.dtype == np.int64 and el.dst.dtype == np.int64


def test_musae_max_degree(data_dir):
    el = read_graph(data_dir / "musae_git_edges.csv")
    assert el.meta["columns"] == ["id_1", "id_2"]
    deg = np.bincount(el.src, minlength=el.n) + np.bincount(el.dst, minlength=el.n)
    assert deg.max() == 9458


def test_gnutella_count_line(data_dir):
    el = read_graph(data_dir / "p2p-Gnutella31.txt")
    assert el.meta["count_line"] == (62_586,)
    assert edges(el)[:2] == [(0, 1), (0, 2)]


@pytest.mark.parametrize("name", ["karate.mtx", "west0067.mtx", "luxembourg_osm.mtx"])
def test_mtx_matches_scipy(data_dir, name):
    el = read_graph(data_dir / name)
    ref = scipy.io.mmread(data_dir / name).tocoo()
    if el.directed is False:  # scipy mirrors the stored triangle: keep the stored one
        keep = ref.row >= ref.col
        ref = sp.coo_matrix((ref.data[keep], (ref.row[keep], ref.col[keep])), shape=ref.shape)
    mine = sorted(zip(el.src.tolist(), el.dst.tolist(), strict=True))
    theirs = sorted(zip(ref.row.tolist(), ref.col.tolist(), strict=True))
    assert mine == theirs
    if el.weights is not None:
        a = sp.coo_matrix((el.weights, (el.src, el.dst)), shape=ref.shape).toarray()
        np.testing.assert_array_equal(a, ref.toarray())


def test_luxembourg_is_fast(data_dir):
    read_graph(data_dir / "luxembourg_osm.mtx")  # warm the compiled kernels
    t = time.perf_counter()
    read_graph(data_dir / "luxembourg_osm.mtx")
    assert time.perf_counter() - t < 1.0


# --------------------------------------------------------------------------- Matrix Market

MM_BODY = {
    "pattern": ["1 2", "3 1", "2 2", "4 3"],
    "real": ["1 2 0.5", "3 1 -1e-3", "2 2 0", "4 3 2."],
    "integer": ["1 2 5", "3 1 -7", "2 2 0", "4 3 12"],
}
MM_WEIGHTS = {"real": [0.5, -1e-3, 0.0, 2.0], "integer": [5, -7, 0, 12]}


@pytest.mark.parametrize("field", ["pattern", "real", "integer"])
@pytest.mark.parametrize("symmetry", ["general", "symmetric", "skew-symmetric", "hermitian"])
def test_mtx_header_variants(tmp_path, field, symmetry):
    body = MM_BODY[field]
    text = (
        f"%%MatrixMarket matrix coordinate {field} {symmetry}\n"
        "% a comment\n"
        "%\n"
        "\n"
        "4 4 4\n"
        f"{body[0]}\n"
        "% comment between entries\n"
        f"{body[1]}\n"
        "\n"
        f"   {body[2]}  \n"
        f"{body[3]}"  # no final newline
    )
    el = read_graph(write(tmp_path, "g.mtx", text))
    assert el.n == 4
    assert edges(el) == [(0, 1), (2, 0), (1, 1), (3, 2)]
    assert el.directed is (symmetry == "general")
    assert el.meta["field"] == field and el.meta["symmetry"] == symmetry
    if field == "pattern":
        assert el.weights is None
    else:
        assert el.weights.dtype == (np.float64 if field == "real" else np.int64)
        np.testing.assert_array_equal(el.weights, MM_WEIGHTS[field])  # explicit 0 kept


def test_mtx_case_insensitive_banner_and_crlf(tmp_path):
    text = "%%MatrixMarket MATRIX Coordinate Pattern SYMMETRIC\r\n3 3 2\r\n2 1\r\n3 2\r\n"
    el = read_graph(write(tmp_path, "g.mtx", text))
    assert edges(el) == [(1, 0), (2, 1)] and el.directed is False


def test_mtx_directed_override_and_duplicates(tmp_path):
    text = "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 3\n2 1\n2 1\n3 3\n"
    el = read_graph(write(tmp_path, "g.mtx", text), directed=True)
    assert el.directed is True
    assert edges(el) == [(1, 0), (1, 0), (2, 2)]  # duplicates and self-loops kept


def test_mtx_empty_matrix(tmp_path):
    el = read_graph(
        write(tmp_path, "g.mtx", "%%MatrixMarket matrix coordinate pattern general\n5 5 0\n")
    )
    assert el.n == 5 and el.num_edges == 0


def test_mtx_one_based_false_rejected(tmp_path):
    p = write(tmp_path, "g.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 2\n")
    with pytest.raises(ValueError, match="1-based"):
        read_graph(p, one_based=False)


HDR = "%%MatrixMarket matrix coordinate pattern general\n"


@pytest.mark.parametrize(
    ("text", "line", "match"),
    [
        ("", 1, "empty"),
        ("   \n\n", 1, "empty"),
        ("3 3 1\n1 2\n", 1, "missing '%%MatrixMarket'"),
        ("%%MatrixMarket matrix array real general\n3 3\n1\n", 1, "array"),
        ("%%MatrixMarket matrix coordinate complex general\n3 3 1\n1 2 1 0\n", 1, "complex"),
        ("%%MatrixMarket matrix coordinate pattern weird\n3 3 1\n1 2\n", 1, "symmetry"),
        ("%%MatrixMarket vector coordinate pattern general\n3 3 1\n1 2\n", 1, "object"),
        ("%%MatrixMarket matrix coordinate pattern\n3 3 1\n1 2\n", 1, "header must read"),
        (HDR + "% only comments\n", 2, "size line"),
        (HDR + "3 x 1\n1 2\n", 2, "three integers"),
        (HDR + "%c\n3 4 1\n1 2\n", 3, "matrix is 3x4: a graph's adjacency must be square"),
        (HDR + "3 3 3\n1 2\n2 3\n", 4, "truncated"),
        (HDR + "3 3 1\n1 2\n2 3\n", 4, "more entries"),
        (HDR + "3 3 2\n1 2\n2 x\n", 4, "bad vertex id 'x'"),
        (HDR + "3 3 2\n1 2\n2 1.5\n", 4, "not an integer"),
        (HDR + "3 3 2\n1 2\n\n2 4\n", 5, r"out of range"),
        (HDR + "3 3 2\n1 2\n0 1\n", 4, r"out of range"),
        (HDR + "3 3 2\n1 2\n-1 1\n", 4, r"out of range"),
        (HDR + "3 3 2\n1 2\n1\n", 4, "too few fields"),
        (HDR + "3 3 2\n1 2\n1 2 3\n", 4, "too many fields"),
        (HDR + "3 3 1\n99999999999999999999 1\n", 3, "int64"),
        (
            "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 2 1\n2 3 abc\n",
            4,
            "not a number",
        ),
        ("%%MatrixMarket matrix coordinate integer general\n3 3 2\n1 2 1\n2 3 1.5\n", 4, "integer"),
        ("%%MatrixMarket matrix coordinate real general\n3 3 2\n1 2 1\n2 3\n", 4, "too few"),
    ],
)
def test_mtx_malformed(tmp_path, text, line, match):
    raises_at(write(tmp_path, "bad.mtx", text), line, match)


# --------------------------------------------------------------------------- SNAP edge lists


def test_snap_comments_crlf_tabs(tmp_path):
    text = (
        "# Directed graph: test.txt\r\n"
        "# Nodes: 4 Edges: 3\r\n"
        "% also a comment\r\n"
        "0\t1\r\n"
        "\r\n"
        "1 \t 3\r\n"
        "# mid comment\r\n"
        "3\t0"
    )
    el = read_graph(write(tmp_path, "g.txt", text))
    assert edges(el) == [(0, 1), (1, 3), (3, 0)]
    assert el.n == 4 and el.directed is None and el.weights is None
    assert "count_line" not in el.meta


def test_snap_single_count_line(tmp_path):
    el = read_graph(write(tmp_path, "g.txt", "# c\n10\n0 1\n2 3\n"))
    assert el.n == 10 and edges(el) == [(0, 1), (2, 3)]
    assert el.meta["count_line"] == (10,)


def test_snap_count_line_only(tmp_path):
    el = read_graph(write(tmp_path, "g.txt", "7\n"))
    assert el.n == 7 and el.num_edges == 0


def test_snap_two_number_count_line(tmp_path):
    el = read_graph(write(tmp_path, "g.el", "6 2\n0 1\n4 5\n"))
    assert el.n == 6 and edges(el) == [(0, 1), (4, 5)] and el.meta["count_line"] == (6, 2)
    # m does not match the remaining line count: the first line is an edge
    el = read_graph(write(tmp_path, "g2.el", "6 3\n0 1\n4 5\n"))
    assert el.n == 7 and edges(el) == [(6, 3), (0, 1), (4, 5)]
    # m matches but an id is not below n: an edge too
    el = read_graph(write(tmp_path, "g3.el", "3 2\n0 1\n4 5\n"))
    assert el.n == 6 and el.num_edges == 3
    # before weighted edges too; if m does not match, the line is a short edge
    el = read_graph(write(tmp_path, "g4.el", "9 2\n0 1 0.5\n4 5 2\n"))
    assert el.n == 9 and el.weights.tolist() == [0.5, 2.0]
    raises_at(write(tmp_path, "g5.el", "9 3\n0 1 0.5\n4 5 2\n"), 2, "3 fields but line 1 has 2")


def test_snap_weights_int_and_float(tmp_path):
    el = read_graph(write(tmp_path, "g.txt", "0 1 3\n1 2 -4\n"))
    assert el.weights.dtype == np.int64 and el.weights.tolist() == [3, -4]
    el = read_graph(write(tmp_path, "g.txt", "0 1 3\n1 2 2.5e-1\n2 0 nan\n"))
    assert el.weights.dtype == np.float64
    assert el.weights[:2].tolist() == [3.0, 0.25] and np.isnan(el.weights[2])


def test_snap_one_based(tmp_path):
    p = write(tmp_path, "g.txt", "3\n1 2\n3 1\n")
    el = read_graph(p, one_based=True)
    assert el.n == 3 and edges(el) == [(0, 1), (2, 0)]
    raises_at(write(tmp_path, "z.txt", "1 2\n0 1\n"), 2, "1-based", one_based=True)


def test_snap_gzip_and_fmt_override(tmp_path):
    p = tmp_path / "g.edges.gz"
    p.write_bytes(gzip.compress(b"0 1\n1 2\n"))
    assert edges(read_graph(p)) == [(0, 1), (1, 2)]
    q = write(tmp_path, "weird.dat", "0 1\n")
    assert read_graph(q, fmt="edgelist").num_edges == 1


@pytest.mark.parametrize(
    ("text", "line", "match"),
    [
        ("", 1, "empty"),
        ("# only\n# comments\n", 1, "empty"),
        ("0 1\n1 2\n2 q\n", 3, "bad vertex id 'q'"),
        ("0 1\n1 2.0\n", 2, "not an integer"),
        ("0 1\n1 2 3 4\n", 2, "too many"),
        ("0 1\n1 2 5\n", 2, "3 fields but line 1 has 2"),
        ("1\n0 1\n1 2 5\n", 3, "different number of fields"),
        ("0 1 5\n1 2\n", 2, "fields"),
        ("0 1\n5\n", 2, "too few"),
        ("3\n0 1\n1 3\n", 3, "out of range for declared n=3"),
        ("0 1\n-2 1\n", 2, "negative vertex id"),
        ("0 1 x\n", 1, "not a number"),
        ("-4\n0 1\n", 1, "negative vertex count"),
    ],
)
def test_snap_malformed(tmp_path, text, line, match):
    raises_at(write(tmp_path, "bad.txt", text), line, match)


# --------------------------------------------------------------------------- CSV


def test_csv_header_and_weights(tmp_path):
    el = read_graph(write(tmp_path, "g.csv", "source,target,weight\n0,1,0.5\n2, 0 ,1.5\r\n"))
    assert edges(el) == [(0, 1), (2, 0)]
    assert el.weights.tolist() == [0.5, 1.5]
    assert el.meta["columns"] == ["source", "target", "weight"]


def test_csv_without_header_and_one_based(tmp_path):
    el = read_graph(write(tmp_path, "g.csv", "1,2\n2,3\n"), one_based=True)
    assert el.n == 3 and edges(el) == [(0, 1), (1, 2)]


@pytest.mark.parametrize(
    ("text", "line", "match"),
    [
        ("", 1, "empty"),
        ("id_1,id_2\n", 1, "no edges"),
        ("a,b,c,d\n0,1\n", 1, "2 or 3 columns"),
        ("id_1,id_2\n0,1\n1,,2\n", 3, "empty field"),
        ("id_1,id_2\n0,1\n1,\n", 3, "empty field"),
        ("id_1,id_2\n0,1\n1 2\n", 3, "expected ','"),
        ("id_1,id_2\n0,1\n1,x\n", 3, "bad vertex id"),
        ("id_1,id_2\n0,1\n1,2,3\n", 3, "fields"),
    ],
)
def test_csv_malformed(tmp_path, text, line, match):
    raises_at(write(tmp_path, "bad.csv", text), line, match)


# --------------------------------------------------------------------------- npz


def test_npz_roundtrip_all_fields(tmp_path):
    el = EdgeList(
        [0, 3, 2], [1, 1, 4], 6, directed=False, weights=[1.5, 0.0, -2.0], ids=np.arange(6) * 10**12
    )
    for compressed in (False, True):
        p = tmp_path / f"g{compressed}.npz"
        save_npz(p, el, compressed=compressed)
        back = read_graph(p)
        assert edges(back) == edges(el) and back.n == 6 and back.directed is False
        np.testing.assert_array_equal(back.weights, el.weights)
        np.testing.assert_array_equal(back.ids, el.ids)


@pytest.mark.parametrize("directed", [None, True, False])
def test_npz_directed_values(tmp_path, directed):
    p = tmp_path / "g.npz"
    save_npz(p, EdgeList([0], [1], 2, directed=directed))
    assert read_graph(p).directed is directed
    assert read_graph(p, directed=True).directed is True


def test_npz_minimal_arrays(tmp_path):
    p = tmp_path / "g.npz"
    np.savez(p, src=np.array([0, 5], np.int32), dst=np.array([2, 2], np.uint16))
    el = read_graph(p)
    assert el.n == 6 and edges(el) == [(0, 2), (5, 2)] and el.directed is None


@pytest.mark.parametrize("kind", ["csr", "coo", "csc"])
def test_npz_scipy_sparse(tmp_path, kind):
    mat = sp.csr_matrix(
        (np.array([1.0, 0.0, 3.0]), np.array([1, 2, 0]), np.array([0, 2, 2, 3])), shape=(3, 3)
    ).asformat(kind)
    p = tmp_path / "m.npz"
    sp.save_npz(p, mat, compressed=False)
    el = read_graph(p)
    assert el.n == 3 and el.meta["layout"] == "scipy.sparse"
    got = sorted(zip(el.src.tolist(), el.dst.tolist(), el.weights.tolist(), strict=True))
    assert got == [(0, 1, 1.0), (0, 2, 0.0), (2, 0, 3.0)]  # explicit zero kept


def test_npz_errors(tmp_path):
    p = tmp_path / "rect.npz"
    sp.save_npz(p, sp.csr_matrix(np.ones((3, 4))))
    raises_at(p, None, "matrix is 3x4")
    p = tmp_path / "keys.npz"
    np.savez(p, a=np.arange(3))
    raises_at(p, None, "expected arrays 'src' and 'dst'")
    p = write(tmp_path, "junk.npz", b"not a zip at all")
    raises_at(p, None, "not a readable")
    p = write(tmp_path, "empty.npz", b"")
    raises_at(p, None, "empty")
    p = tmp_path / "float.npz"
    np.savez(p, src=np.array([0.5]), dst=np.array([1.0]))
    raises_at(p, None, "non-integer")
    p = tmp_path / "range.npz"
    np.savez(p, src=np.array([0, 9]), dst=np.array([1, 1]), n=np.int64(4))
    raises_at(p, None, "out of range")
    with pytest.raises(ValueError, match="0-based"):
        read_graph(p, one_based=True)


def _csr_arrays(p, indptr, indices, kind="csr", data=None, shape=(3, 3)):
    indices = np.asarray(indices, np.int32)
    np.savez(p, indptr=np.asarray(indptr, np.int32), indices=indices, format=np.bytes_(kind),
             shape=np.array(shape), data=np.ones(indices.size) if data is None else data)


def test_npz_scipy_sparse_in_file_order(tmp_path):
    # Edges come in the stored order (csc: column by column), as the parallel reader's
    # slices do; bsr and dia still go through scipy.
    p = tmp_path / "c.npz"
    _csr_arrays(p, [0, 1, 3, 3], [2, 0, 1], kind="csc")
    el = read_graph(p)
    assert edges(el) == [(2, 0), (0, 1), (1, 1)] and el.meta["sparse_format"] == "csc"
    for kind in ("bsr", "dia"):
        sp.save_npz(p, sp.eye(3, format=kind))
        assert sorted(edges(read_graph(p))) == [(0, 0), (1, 1), (2, 2)]


def test_npz_scipy_sparse_errors(tmp_path):
    # scipy loads all of these without complaint (or with a message naming no file).
    p = tmp_path / "m.npz"
    _csr_arrays(p, [0, 2, 1, 3], [1, 2, 0])
    raises_at(p, None, "'indptr' must not decrease: entry 2 is 1 < 2")
    _csr_arrays(p, [0, 1, 2, 2], [1, 2, 0])
    raises_at(p, None, r"'indptr' ends at 2 but 'indices' has shape \(3,\)")
    _csr_arrays(p, [1, 1, 2, 3], [1, 2, 0])
    raises_at(p, None, "'indptr' must start at 0, not 1")
    _csr_arrays(p, [0, 1, 3], [1, 2, 0])
    raises_at(p, None, "'indptr' has 3 entries, expected 4 for 3x3")
    _csr_arrays(p, [0, 1, 2, 3], [1, 3, 0])
    raises_at(p, None, "edge 1: vertex id 3 out of range for declared n=3")
    _csr_arrays(p, [0, 1, 2, 3], [1, 2, 0], data=np.ones(2))
    raises_at(p, None, r"'data' has shape \(2,\), expected \(3,\)")
    np.savez(p, row=np.array([0, 1]), col=np.array([2, -1]), format=np.bytes_("coo"),
             shape=np.array([3, 3]), data=np.ones(2))
    raises_at(p, None, "edge 1: negative vertex id -1")
    np.savez(p, row=np.array([0, 1]), col=np.array([2]), format=np.bytes_("coo"),
             shape=np.array([3, 3]), data=np.ones(2))
    raises_at(p, None, "'row' and 'col' must be of equal length")


# --------------------------------------------------------------------------- renumbering


def test_renumber_function():
    src = np.array([2**40 + 7, 5, -3])
    dst = np.array([5, 10**12, 2**40 + 7])
    s2, d2, ids = renumber(src, dst)
    assert ids.tolist() == sorted({*src.tolist(), *dst.tolist()})
    np.testing.assert_array_equal(ids[s2], src)
    np.testing.assert_array_equal(ids[d2], dst)
    assert s2.dtype == np.int64 and s2.max() < len(ids)


@pytest.mark.parametrize("big", [2**31 + 5, 2**40 + 1, 10**15])
def test_renumber_large_labels_roundtrip(tmp_path, big):
    labels = [[big, 3], [3, big + 2**20], [big + 2**20, big]]
    p = write(tmp_path, "big.txt", "".join(f"{a}\t{b}\n" for a, b in labels))
    el = read_graph(p, renumber=True)
    assert el.n == 3 and el.ids.tolist() == [3, big, big + 2**20]
    assert [(int(el.ids[a]), int(el.ids[b])) for a, b in edges(el)] == [tuple(x) for x in labels]
    # the renumbered graph survives every writer with its labels
    q = tmp_path / "big.npz"
    save_npz(q, el)
    np.testing.assert_array_equal(read_graph(q).ids, el.ids)
    if big > 2**40:
        raises_at(p, 1, "renumber=True")
    else:
        # Three edges on 2**31 vertices: refused before anything n-sized exists, at the
        # line of the largest id.
        raises_at(p, 2, f"the largest vertex id is {big + 2**20}")


def test_negative_labels_need_renumber(tmp_path):
    p = write(tmp_path, "neg.txt", "0 1\n-5 1\n")
    raises_at(p, 2, "renumber=True")
    el = read_graph(p, renumber=True)
    assert el.ids.tolist() == [-5, 0, 1] and edges(el) == [(1, 2), (0, 2)]


def test_mtx_huge_declared_size_needs_renumber(tmp_path):
    p = write(tmp_path, "huge.mtx", HDR + f"{2**41} {2**41} 1\n{2**41} 7\n")
    raises_at(p, None, "renumber=True")
    el = read_graph(p, renumber=True)
    assert el.n == 2 and el.ids.tolist() == [7, 2**41] and el.meta["declared_n"] == 2**41


def test_renumber_mtx_keeps_file_labels(tmp_path):
    p = write(tmp_path, "g.mtx", HDR + "9 9 2\n9 2\n2 5\n")
    el = read_graph(p, renumber=True)
    assert el.n == 3 and el.ids.tolist() == [2, 5, 9] and edges(el) == [(2, 0), (0, 1)]


# --------------------------------------------------------------------------- writers


def sample_edgelists():
    yield EdgeList([0, 1, 4, 4], [1, 1, 2, 0], 7, directed=True)
    yield EdgeList([0, 1, 4], [1, 3, 2], 5, directed=False, weights=[0.1, -2.5e300, 0.0])
    yield EdgeList([2, 1], [0, 1], 3, directed=None, weights=np.array([7, -9], np.int32))
    yield EdgeList(np.zeros(0, np.int64), np.zeros(0, np.int64), 4, directed=True)


@pytest.mark.parametrize("suffix", ["txt", "txt.gz", "mtx", "mtx.gz", "npz"])
@pytest.mark.parametrize("k", range(4))
def test_writers_roundtrip(tmp_path, suffix, k):
    el = list(sample_edgelists())[k]
    p = tmp_path / f"g.{suffix}"
    {"txt": write_edgelist, "mtx": write_mtx, "npz": save_npz}[suffix.split(".")[0]](p, el)
    back = read_graph(p, directed=el.directed if suffix.startswith("txt") else None)
    assert back.n == el.n and back.num_edges == el.num_edges
    if suffix.startswith("mtx") and el.directed is None:
        assert back.directed is True  # 'general' reads back as directed
    else:
        assert back.directed is el.directed
    src, dst = el.src, el.dst
    if suffix.startswith("mtx") and el.directed is False:  # stored in the lower triangle
        src, dst = np.maximum(src, dst), np.minimum(src, dst)
    np.testing.assert_array_equal(back.src, src)
    np.testing.assert_array_equal(back.dst, dst)
    if el.weights is None:
        assert back.weights is None
    else:
        np.testing.assert_array_equal(back.weights, el.weights)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(st.tuples(st.integers(0, 2**40 - 3), st.integers(0, 2**40 - 3)), max_size=30),
    st.sampled_from(["txt", "mtx", "npz"]),
)
def test_writers_roundtrip_hypothesis(tmp_path, pairs, kind):
    src = np.array([a for a, _ in pairs], np.int64)
    dst = np.array([b for _, b in pairs], np.int64)
    n = int(max(src.max(initial=-1), dst.max(initial=-1))) + 1 + len(pairs) % 3
    el = EdgeList(src, dst, n, directed=True)
    p = tmp_path / f"h.{kind}"
    {"txt": write_edgelist, "mtx": write_mtx, "npz": save_npz}[kind](p, el)
    back = read_graph(p, directed=True, n=n)  # ids up to 2**40: the caller insists on n
    assert back.n == n
    np.testing.assert_array_equal(back.src, src)
    np.testing.assert_array_equal(back.dst, dst)


# --------------------------------------------------------------------------- dispatch


def test_bad_fmt_lists_valid(tmp_path):
    p = write(tmp_path, "g.txt", "0 1\n")
    with pytest.raises(ValueError, match="valid formats: mtx, edgelist, csv, npz"):
        read_graph(p, fmt="graphml")
    with pytest.raises(ValueError, match="cannot infer"):
        read_graph(write(tmp_path, "g.xyz", "0 1\n"))
    assert FORMATS == ("mtx", "edgelist", "csv", "npz")


@pytest.mark.parametrize("suffix", ["txt", "el", "tsv", "edges", "snap", "csv", "mtx"])
def test_suffix_dispatch(tmp_path, suffix):
    text = {"csv": "a,b\n0,1\n", "mtx": HDR + "2 2 1\n1 2\n"}.get(suffix, "0\t1\n")
    el = read_graph(write(tmp_path, f"g.{suffix}", text))
    assert edges(el) == [(0, 1)]
    assert el.meta["format"] == {"csv": "csv", "mtx": "mtx"}.get(suffix, "edgelist")


def test_bad_gzip(tmp_path):
    raises_at(write(tmp_path, "g.txt.gz", b"\x1f\x8bnot really gzip"), None, "gzip")


def test_error_is_valueerror_and_picklable(tmp_path):
    p = write(tmp_path, "g.txt", "0 1\nx y\n")
    with pytest.raises(ValueError) as info:
        read_graph(p)
    err = pickle.loads(pickle.dumps(info.value))
    assert isinstance(err, GraphFormatError) and err.line == 2 and str(err) == str(info.value)


# ------------------------------------------------------------------- no row dropped on a guess


@pytest.mark.parametrize(
    ("text", "weights"),
    [
        ("0,1,0.5\n1,2,1.5\n", [0.5, 1.5]),
        ("0,1,nan\n1,2,1\n", [np.nan, 1.0]),
        ("0,1,-inf\n1,2,2\n", [-np.inf, 2.0]),
        ("0,1,1e3\n1,2,7\n", [1000.0, 7.0]),
    ],
)
def test_csv_first_row_of_numbers_is_an_edge(tmp_path, text, weights):
    el = read_graph(write(tmp_path, "g.csv", text))
    assert edges(el) == [(0, 1), (1, 2)] and el.n == 3
    assert "columns" not in el.meta
    np.testing.assert_array_equal(el.weights, weights)


@pytest.mark.parametrize(
    ("text", "match"),
    [("0,1,\n1,2,\n", "empty field"), ("1.5,2\n2,3\n", "bad vertex id '1.5'")],
)
def test_csv_first_row_that_is_no_edge_is_an_error_not_a_header(tmp_path, text, match):
    raises_at(write(tmp_path, "g.csv", text), 1, match)


@pytest.mark.parametrize("header", ["src,dst,weight", "a,b,", "nan,1,2", "0,1,w"])
def test_csv_header_needs_a_field_that_is_no_number(tmp_path, header):
    el = read_graph(write(tmp_path, "g.csv", f"{header}\n0,1,2\n"))
    assert edges(el) == [(0, 1)] and el.meta["columns"][0] == header.split(",")[0]


def test_count_line_is_reported_in_meta_the_log_and_info(tmp_path, caplog, capsys):
    from spbfs.cli import main

    p = write(tmp_path, "g.txt", "# c\n3 2\n0 1\n1 2\n")
    with caplog.at_level("INFO", logger="spbfs.io"):
        el = read_graph(p)
    assert el.meta["count_line"] == (3, 2) and el.meta["count_line_at"] == 2
    assert f"{p}, line 2: read as a count line 3 2" in caplog.text
    assert main(["info", str(p)]) == 0
    assert "count line:  line 2, 3 2 (vertices, edges)" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("text", "expect"),
    [
        ("3 2\n0 1\n", [(3, 2), (0, 1)]),  # 2 records declared, 1 follows
        ("3 2\n0 1\n1 3\n", [(3, 2), (0, 1), (1, 3)]),  # id 3 is not below n = 3
        ("0 2\n0 1\n1 0\n", [(0, 2), (0, 1), (1, 0)]),  # n = 0
    ],
)
def test_first_edge_that_does_not_match_the_file_is_kept(tmp_path, text, expect, caplog):
    with caplog.at_level("INFO", logger="spbfs.io"):
        el = read_graph(write(tmp_path, "g.txt", text))
    assert edges(el) == expect and "count_line" not in el.meta
    assert "count line" not in caplog.text


# --------------------------------------------------------------------------- declared sizes


BIG = 2**26


def test_declared_size_follows_the_inferred_size_rule(tmp_path):
    p = write(tmp_path, "g.mtx", HDR + f"{BIG} {BIG} 1\n1 2\n")
    err = raises_at(p, None, rf"the size line \(line 2\) declares {BIG} vertices for 1 edges")
    assert f"pass n={BIG} (command line: --n {BIG}) to insist" in str(err)
    el = read_graph(p, n=BIG)
    assert el.n == BIG and edges(el) == [(0, 1)]
    with pytest.raises(ValueError, match=f"n={BIG + 1} contradicts .*g.mtx.* declares {BIG}"):
        read_graph(p, n=BIG + 1)
    # 2**39 is refused the same way, not by an allocation naming nothing.
    raises_at(write(tmp_path, "h.mtx", HDR + f"{2**39} {2**39} 1\n1 2\n"), None,
              "declares 549755813888 vertices for 1 edges")
    # A size within the rule is kept as declared (isolated vertices).
    assert read_graph(write(tmp_path, "s.mtx", HDR + "100 100 1\n1 2\n")).n == 100


def test_declared_size_in_a_count_line_or_npz(tmp_path):
    raises_at(write(tmp_path, "g.txt", f"{BIG}\n0 1\n"), None,
              r"the count line \(line 1\) declares")
    assert read_graph(write(tmp_path, "h.txt", f"{BIG} 1\n0 1\n"), n=BIG).n == BIG
    p = tmp_path / "g.npz"
    np.savez(p, src=np.array([0]), dst=np.array([1]), n=np.int64(BIG))
    raises_at(p, None, "its 'n' declares 67108864 vertices")
    assert read_graph(p, n=BIG).n == BIG
    q = tmp_path / "s.npz"
    sp.save_npz(q, sp.coo_array(([1.0], ([0], [1])), shape=(BIG, BIG)))
    raises_at(q, None, "its 'shape' declares 67108864 vertices")


def test_inferred_size_can_be_insisted_on(tmp_path):
    p = write(tmp_path, "g.txt", f"0 {BIG}\n")
    raises_at(p, 1, "largest vertex id is 67108864.*or pass n to insist")
    assert read_graph(p, n=BIG + 1).n == BIG + 1
    raises_at(p, 1, "vertex id 67108864 out of range for n=5", n=5)


@pytest.mark.parametrize(
    ("n", "kw", "exc", "match"),
    [
        (3.7, {}, ValueError, "n must be a whole number of vertices, got 3.7"),
        (True, {}, TypeError, "n must be an integer, got bool"),
        ("4", {}, TypeError, "n must be an integer, got str"),
        (-1, {}, ValueError, "n must be non-negative"),
        (2**41, {}, ValueError, "exceeds 2\\*\\*40"),
        (4, {"renumber": True}, ValueError, "n and renumber=True contradict"),
    ],
)
def test_n_argument_is_checked(tmp_path, n, kw, exc, match):
    with pytest.raises(exc, match=match):
        read_graph(write(tmp_path, "g.txt", "0 1\n"), n=n, **kw)


def test_n_argument_takes_an_integral_float_as_every_vertex_count_does(tmp_path):
    assert read_graph(write(tmp_path, "g.txt", "0 1\n"), n=4.0).n == 4


def test_cli_n_insists_and_is_checked(tmp_path, capsys):
    from spbfs.cli import main

    p = write(tmp_path, "g.mtx", HDR + "3 3 1\n1 2\n")
    assert main(["info", str(p), "--n", "3"]) == 0
    assert "vertices:    3" in capsys.readouterr().out
    assert main(["info", str(p), "--n", "4"]) == 1
    assert "n=4 contradicts" in capsys.readouterr().err
    q = write(tmp_path, "big.mtx", HDR + f"{BIG} {BIG} 1\n1 2\n")
    assert main(["info", str(q)]) == 1
    assert f"--n {BIG}) to insist" in capsys.readouterr().err


def test_memory_error_names_the_file_and_what_was_built(tmp_path, monkeypatch):
    from spbfs.io import _common, scanner

    def exhausted(*args):
        raise MemoryError("Allocation failed (probably too large).")

    monkeypatch.setattr(scanner, "scan", exhausted)
    p = write(tmp_path, "g.txt", "0 1\n")
    with pytest.raises(MemoryError, match=r"g\.txt: out of memory building the edge arrays "
                                          r"of 4 bytes of text: Allocation failed"):
        read_graph(p)
    with pytest.raises(MemoryError, match=r"^out of memory building x \(3\.0 GiB\): boom$"):
        with _common.allocating(None, "x", 3 * 2**30):
            raise MemoryError("boom")


# --------------------------------------------------------------------------- decompression limits


def test_gzip_bomb_is_refused_with_the_file_name(tmp_path, monkeypatch):
    from spbfs.io import _common

    monkeypatch.setattr(_common, "RATIO_FLOOR", 1 << 16)  # a small bomb stands in for GBs
    text = HDR + "2 2 200000\n" + "1 1\n" * 200_000
    p = tmp_path / "bomb.mtx.gz"
    p.write_bytes(gzip.compress(text.encode(), 9))
    ratio = len(text) / p.stat().st_size
    assert ratio > 100
    err = raises_at(p, None, r"the gzip stream expands to over \d+ bytes, more than 100 times")
    assert "max_ratio=None" in str(err)
    assert read_graph(p, max_ratio=None).num_edges == 200_000
    assert read_graph(p, max_ratio=ratio + 1).num_edges == 200_000
    # Below the floor nothing is refused, whatever the ratio.
    monkeypatch.setattr(_common, "RATIO_FLOOR", 1 << 28)
    assert read_graph(p).num_edges == 200_000


def test_gzip_members_padding_and_damage(tmp_path):
    one, two = gzip.compress(b"0 1\n"), gzip.compress(b"1 2\n")
    p = write(tmp_path, "g.txt.gz", one + two + b"\0\0\0")
    assert edges(read_graph(p)) == [(0, 1), (1, 2)]
    damaged = [(one[:-5], "ended before the end-of-stream marker"),
               (one + b"junk", "not a valid gzip"), (one[:-8] + b"\0" * 8, "not a valid gzip")]
    for bad, match in damaged:
        raises_at(write(tmp_path, "b.txt.gz", bad), None, match)


def test_npz_member_bomb_is_refused(tmp_path, monkeypatch):
    from spbfs.io import _common

    monkeypatch.setattr(_common, "RATIO_FLOOR", 1 << 16)
    p = tmp_path / "g.npz"
    zeros = np.zeros(100_000, np.int64)
    np.savez_compressed(p, src=zeros, dst=zeros)
    raises_at(p, None, r"member 'src.npy' expands to over")
    assert read_graph(p, max_ratio=None).num_edges == 100_000


# --------------------------------------------------------------------------- npz members


@pytest.mark.parametrize(
    ("member", "value", "match"),
    [
        ("directed", np.array("yes"), r"'directed' must be a bool or integer scalar, got <U3"),
        ("directed", np.array([1, 0]), r"member 'directed' .* shape \(2,\)"),
        ("n", np.array("3"), r"member 'n' must be an integer scalar"),
        ("n", np.array(3.5), r"member 'n' must be an integer scalar, got float64"),
        ("n", np.uint64(2**64 - 1), r"member 'n' = 18446744073709551615 does not fit in int64"),
        ("weights", np.array(["a", "b"]), r"'weights' has dtype <U1"),
        ("weights", np.array([1 + 2j, 1j]), r"'weights' has dtype complex128"),
    ],
)
def test_npz_bad_member_names_file_and_member(tmp_path, member, value, match):
    arrays = {"src": np.array([0, 1]), "dst": np.array([1, 2]), "n": np.int64(3), member: value}
    p = tmp_path / "g.npz"
    np.savez(p, **arrays)
    raises_at(p, None, match)


def test_npz_pickled_member_is_an_error_naming_it(tmp_path):
    p = tmp_path / "g.npz"
    np.savez(p, src=np.array([0]), dst=np.array([1]), weights=np.array([object()]))
    raises_at(p, None, r"member 'weights' is unreadable")


@pytest.mark.parametrize(
    ("fmt", "match"),
    [(np.array(np.nan), r"'format' must be a string, got float64"),
     (np.array("xyz"), r"unknown scipy.sparse format 'xyz'")],
)
def test_scipy_npz_bad_format_member(tmp_path, fmt, match):
    p = tmp_path / "g.npz"
    np.savez(p, format=fmt, shape=np.array([2, 2]), data=np.array([1.0]),
             row=np.array([0]), col=np.array([1]))
    raises_at(p, None, match)


@pytest.mark.parametrize(
    ("value", "want"),
    [("1" * 100_000, np.inf), ("0." + "0" * 300 + "1e302", 10.0),
     ("0" * 80 + "7", 7), ("-" + "0" * 80 + "2.5", -2.5)],
)
def test_one_long_value_does_not_size_every_value(tmp_path, monkeypatch, value, want):
    """Values are parsed from a rows x width matrix: one long value must not widen it."""
    from spbfs.io import scanner

    widths = []
    gather = scanner._gather_tokens

    def spy(buf, ws, we, nrows, width):
        widths.append(width)
        return gather(buf, ws, we, nrows, width)

    monkeypatch.setattr(scanner, "_gather_tokens", spy)
    rows = "".join(f"{k} {k + 1} {k}\n" for k in range(20_000))
    el = read_graph(write(tmp_path, "g.txt", f"0 1 {value}\n" + rows))
    assert el.weights[0] == want and el.weights[1:].tolist() == list(range(20_000))
    assert widths and max(widths) <= 64


@pytest.mark.parametrize("ratio", [0, -1.0, "100", True, float("nan")])
def test_max_ratio_is_checked(tmp_path, ratio):
    with pytest.raises(ValueError, match="max_ratio must be a positive number or None"):
        read_graph(write(tmp_path, "g.txt", "0 1\n"), max_ratio=ratio)
