"""Tests for spbfs.generators.fe_mesh and the GAPBS benchmark's pure helpers."""

from __future__ import annotations

import importlib.util
import struct
import sys
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse import csgraph

from spbfs.edges import EdgeList
from spbfs.generators import fe_mesh

# --------------------------------------------------------------------------- fe_mesh


def _adjacency(el: EdgeList) -> sp.csr_matrix:
    a = sp.coo_matrix((np.ones(el.num_edges), (el.src, el.dst)), shape=(el.n, el.n)).tocsr()
    return a


@pytest.mark.parametrize("dim, n", [(2, 500), (2, 3000), (3, 800)])
def test_mesh_edges_are_simple_undirected_and_connected(dim, n):
    el = fe_mesh(n, seed=7, dim=dim)
    assert isinstance(el, EdgeList) and el.directed is False and el.n == n
    assert el.src.dtype == np.int64 and el.dst.dtype == np.int64
    # each edge listed once, as src < dst: no self-loops, no reversed copies
    assert np.all(el.src < el.dst)
    keys = el.src * n + el.dst
    assert np.unique(keys).size == keys.size, "duplicate edges"
    a = _adjacency(el)
    ncomp, _ = csgraph.connected_components(a, directed=False)
    assert ncomp == 1
    deg = np.bincount(np.concatenate([el.src, el.dst]), minlength=n)
    assert deg.min() >= dim  # every vertex lies in at least one simplex


def test_mesh_2d_is_a_planar_triangulation():
    n = 1500
    el = fe_mesh(n, seed=3)
    m = el.num_edges
    # planar graphs have at most 3n - 6 edges; a triangulation with h hull points has
    # exactly 3n - 3 - h, and random points have few hull points (O(log n))
    assert m <= 3 * n - 6
    assert m >= 3 * n - 3 - n // 20
    g = nx.Graph()
    g.add_nodes_from(range(n))
    g.add_edges_from(zip(el.src.tolist(), el.dst.tolist(), strict=True))
    planar, _ = nx.check_planarity(g)
    assert planar
    # Euler on the embedding: a triangulation's faces (bounded ones) are triangles
    assert sum(nx.triangles(g).values()) // 3 >= m - n + 1


def test_mesh_3d_is_a_tetrahedral_mesh():
    n = 2000
    el = fe_mesh(n, seed=5, dim=3)
    mean_degree = 2 * el.num_edges / n
    # random Delaunay tetrahedralizations: ~15.5 in the bulk, less at the boundary
    assert 12.0 < mean_degree < 16.0
    g = nx.Graph(zip(el.src.tolist(), el.dst.tolist(), strict=True))
    assert not nx.check_planarity(g)[0]


def test_mesh_deterministic_per_seed():
    a = fe_mesh(700, seed=11)
    b = fe_mesh(700, seed=11)
    c = fe_mesh(700, seed=12)
    assert np.array_equal(a.src, b.src) and np.array_equal(a.dst, b.dst)
    assert not (a.num_edges == c.num_edges and np.array_equal(a.src, c.src)
                and np.array_equal(a.dst, c.dst))
    assert a.meta == {"generator": "fe_mesh", "n_points": 700, "seed": 11, "dim": 2,
                      "order": "morton"}


def test_mesh_order_changes_numbering_not_graph():
    n = 4000
    zm = fe_mesh(n, seed=2, order="morton")
    rnd = fe_mesh(n, seed=2, order="random")
    # Same point set, so the same triangulation up to relabelling: same edge count and
    # the same sorted degree sequence.
    assert zm.num_edges == rnd.num_edges
    dz = np.sort(np.bincount(np.concatenate([zm.src, zm.dst]), minlength=n))
    dr = np.sort(np.bincount(np.concatenate([rnd.src, rnd.dst]), minlength=n))
    assert np.array_equal(dz, dr)
    # Morton numbering keeps mesh neighbours close in id; random numbering does not.
    assert np.median(zm.dst - zm.src) < n / 50
    assert np.median(rnd.dst - rnd.src) > n / 10


def test_mesh_smallest():
    el = fe_mesh(3, seed=0)
    assert sorted(zip(el.src.tolist(), el.dst.tolist(), strict=True)) == [(0, 1), (0, 2), (1, 2)]
    assert fe_mesh(4, seed=0, dim=3).num_edges == 6


@pytest.mark.parametrize("kwargs, exc, word", [
    ({"n_points": 2}, ValueError, "n_points"),
    ({"n_points": 3, "dim": 3}, ValueError, "n_points"),
    ({"n_points": -5}, ValueError, "n_points"),
    ({"n_points": 10.0}, TypeError, "n_points"),
    ({"n_points": True}, TypeError, "n_points"),
    ({"n_points": 10, "dim": 1}, ValueError, "dim"),
    ({"n_points": 10, "dim": 4}, ValueError, "dim"),
    ({"n_points": 10, "dim": "2"}, TypeError, "dim"),
    ({"n_points": 10, "seed": -1}, ValueError, "seed"),
    ({"n_points": 10, "seed": 1.5}, TypeError, "seed"),
    ({"n_points": 10, "order": "hilbert"}, ValueError, "order"),
    ({"n_points": 10, "order": None}, ValueError, "order"),
])
def test_mesh_bad_arguments(kwargs, exc, word):
    with pytest.raises(exc, match=word):
        fe_mesh(**kwargs)


# --------------------------------------------------------------------------- benchmarks/gapbs.py


def _bench_module(name: str):
    """``benchmarks/<name>.py`` imported as a module (the folder is not a package)."""
    path = Path(__file__).resolve().parents[1] / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"_bench_{name}", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(f"_bench_{name}", mod)
    spec.loader.exec_module(mod)
    return mod


def _gapbs_module():
    return _bench_module("gapbs")


def test_sg_writer_layout(tmp_path):
    """The bytes follow GAPBS's reader.h: bool directed, int64 edges, int64 nodes,
    int64 offsets[n+1], int32 neighbours[edges] (one CSR for an undirected graph)."""
    gap = _gapbs_module()
    el = EdgeList(np.array([0, 0, 1, 3]), np.array([1, 2, 2, 4]), 6, directed=False)
    a = _adjacency(el)
    a = (a + a.T).tocsr()
    out = tmp_path / "g.sg"
    gap.write_sg(out, a.indptr, a.indices)
    raw = out.read_bytes()
    n, nnz = 6, 8
    assert len(raw) == 1 + 8 + 8 + 8 * (n + 1) + 4 * nnz
    directed, num_edges, num_nodes = struct.unpack_from("<?qq", raw, 0)
    assert (directed, num_edges, num_nodes) == (False, nnz, n)
    offsets = struct.unpack_from(f"<{n + 1}q", raw, 17)
    neigh = struct.unpack_from(f"<{nnz}i", raw, 17 + 8 * (n + 1))
    assert list(offsets) == [0, 2, 4, 6, 7, 8, 8]
    # vertex 0: 1, 2; 1: 0, 2; 2: 0, 1; 3: 4; 4: 3; 5 isolated
    rows = [sorted(neigh[offsets[v]:offsets[v + 1]]) for v in range(n)]
    assert rows == [[1, 2], [0, 2], [0, 1], [4], [3], []]


def test_sg_writer_rejects_bad_csr(tmp_path):
    gap = _gapbs_module()
    with pytest.raises(ValueError, match="indptr"):
        gap.write_sg(tmp_path / "x.sg", np.array([0, 2, 1]), np.array([1, 0], dtype=np.int32))
    with pytest.raises(ValueError, match="indices"):
        gap.write_sg(tmp_path / "x.sg", np.array([0, 1, 2]), np.array([1, 5]))
    with pytest.raises(ValueError, match="indices"):
        gap.write_sg(tmp_path / "x.sg", np.array([0, 1, 3]), np.array([1, 0]))


def test_parse_gapbs_output():
    gap = _gapbs_module()
    text = ("Read Time:           0.01234\n"
            "Graph has 6 nodes and 4 undirected edges for degree: 0\n"
            "Trial Time:          0.00150\n"
            "Verification:           PASS\n"
            "Verification Time:   0.00010\n"
            "Trial Time:          0.00120\n"
            "Average Time:        0.00135\n")
    run = gap.parse_output(text)
    assert run.trial_s == [0.0015, 0.0012]
    assert run.nodes == 6 and run.undirected_edges == 4
    assert run.verified == ["PASS"]
    with pytest.raises(ValueError, match="Trial Time"):
        gap.parse_output("Graph has 6 nodes and 4 undirected edges for degree: 0\n")


# --------------------------------------------------------------------------- benchmarks/combblas.py


def _combblas_module():
    return _bench_module("combblas")


#: Lines of a real ``mpiexec -n 1 dobfs 12`` run (CombBLAS 2381a1f7a028), two searches.
DOBFS_SAMPLE = """\
As a whole: 4096 rows and 4096 columns and 48369 nonzeros
Converted to Boolean and removed 56 loops
As a whole: 3306 rows and 3306 columns and 48369 nonzeros
Symmetricized
Threading activated with 1 threads
As a whole: 3306 rows and 3306 columns and 96738 nonzeros
0.174927 seconds elapsed for Kernel #1
As a whole, Degrees array has length 3306
A BFS iteration is starting
param 3306 vertices with 96738 edges
 5d              0        0.00001
0th starting vertex was 3246
Number iterations: 6
Number of vertices found: 3306
Number of edges traversed: 65536
BFS time: 0.000294586 seconds
MTEPS: 222.468
A BFS iteration is starting
1th starting vertex was 1093
Number iterations: 5
Number of vertices found: 3306
Number of edges traversed: 65536
BFS time: 0.000158575 seconds
MTEPS: 413.277
Finished
"""


def test_parse_dobfs_output():
    cb = _combblas_module()
    run = cb.parse_dobfs(DOBFS_SAMPLE)
    assert run.times == [0.000294586, 0.000158575]
    assert run.traversed == [65536, 65536] and run.found == [3306, 3306]
    # The symmetric matrix searched: the last size line, not the input's.
    assert (run.vertices, run.nnz, run.threads) == (3306, 96738, 1)


def test_parse_dobfs_rejects_broken_output():
    cb = _combblas_module()
    with pytest.raises(ValueError, match="BFS time"):
        cb.parse_dobfs(DOBFS_SAMPLE.split("A BFS iteration")[0])
    with pytest.raises(ValueError, match="one of each per search"):
        cb.parse_dobfs(DOBFS_SAMPLE.replace("Number of vertices found: 3306\n", "", 1))
