"""Tests for spbfs.generators.fe_mesh."""

from __future__ import annotations

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
