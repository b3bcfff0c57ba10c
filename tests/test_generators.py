"""Tests for spbfs.generators."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spbfs.edges import EdgeList
from spbfs.generators import (
    erdos_renyi,
    grid2d,
    grid3d,
    kronecker,
    kronecker_edges,
    path,
    permute_vertices,
    rmat,
    star,
)

# --------------------------------------------------------------------------- Kronecker


def test_kronecker_shape_and_range():
    el = kronecker(10, 8, seed=3)
    assert isinstance(el, EdgeList)
    assert el.n == 1024 and el.num_edges == 8 * 1024
    assert el.directed is False
    assert el.src.dtype == np.int64 and el.dst.dtype == np.int64
    assert 0 <= el.src.min() and el.src.max() < 1024
    assert 0 <= el.dst.min() and el.dst.max() < 1024
    assert el.meta["generator"] == "kronecker" and el.meta["seed"] == 3


def test_kronecker_deterministic_and_seeded():
    a = kronecker(9, seed=42)
    b = kronecker(9, seed=42)
    c = kronecker(9, seed=43)
    np.testing.assert_array_equal(a.src, b.src)
    np.testing.assert_array_equal(a.dst, b.dst)
    assert not np.array_equal(a.src, c.src)
    big = kronecker_edges(9, seed=2**64 - 1)  # the whole seed range is accepted
    assert big[0].shape == (16 * 512,)


@pytest.mark.parametrize("permute", [True, False])
@pytest.mark.parametrize("scale", [1, 7, 12])
def test_kronecker_chunk_independence(scale, permute):
    m = 16 << scale
    src, dst = kronecker_edges(scale, seed=7, permute=permute)
    assert src.shape == (m,)
    for k in sorted({0, 1, m // 3, m // 2, m - 1, m}):
        s1, d1 = kronecker_edges(scale, seed=7, stop=k, permute=permute)
        s2, d2 = kronecker_edges(scale, seed=7, start=k, permute=permute)
        np.testing.assert_array_equal(np.concatenate([s1, s2]), src)
        np.testing.assert_array_equal(np.concatenate([d1, d2]), dst)
    # an uneven 5-way split, as ranks of a distributed run would use
    cuts = np.linspace(0, m, 6).astype(int)
    parts = [
        kronecker_edges(scale, seed=7, start=lo, stop=hi, permute=permute)
        for lo, hi in itertools.pairwise(cuts.tolist())
    ]
    np.testing.assert_array_equal(np.concatenate([p[0] for p in parts]), src)
    np.testing.assert_array_equal(np.concatenate([p[1] for p in parts]), dst)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 40), st.integers(0, 2**64 - 1), st.integers(0, 10**6))
def test_kronecker_chunk_anywhere(scale, seed, start):
    """Any window equals the same window cut out of a larger one."""
    m = 16 << scale
    start = min(start, m - 4)
    stop = min(start + 50, m)
    s, d = kronecker_edges(scale, seed=seed, start=start, stop=stop)
    s2, d2 = kronecker_edges(scale, seed=seed, start=start + 3, stop=stop)
    np.testing.assert_array_equal(s[3:], s2)
    np.testing.assert_array_equal(d[3:], d2)
    assert s.min(initial=0) >= 0 and s.max(initial=0) < 2**scale
    assert d.min(initial=0) >= 0 and d.max(initial=0) < 2**scale


def test_kronecker_degree_skewed():
    el = kronecker(14, seed=1)
    deg = np.bincount(el.src, minlength=el.n) + np.bincount(el.dst, minlength=el.n)
    assert deg.mean() == pytest.approx(32.0)
    assert deg.max() > 50 * deg.mean()
    assert (deg == 0).mean() > 0.2  # Kronecker graphs leave many vertices isolated


def test_kronecker_bit_probabilities():
    """Without relabelling, each id bit is 1 with probability c+d (rows), b+d (columns)."""
    scale = 12
    src, dst = kronecker_edges(scale, seed=9, permute=False, a=0.5, b=0.2, c=0.1)
    bits = np.arange(scale)
    p_src = ((src[:, None] >> bits) & 1).mean(axis=0)
    p_dst = ((dst[:, None] >> bits) & 1).mean(axis=0)
    # 65536 samples per bit: standard error ~0.0018
    np.testing.assert_allclose(p_src, 0.1 + 0.2, atol=0.01)
    np.testing.assert_allclose(p_dst, 0.2 + 0.2, atol=0.01)
    # the (0,0) quadrant at a single level: both bits 0 with probability a
    both0 = (((src >> 5) & 1) == 0) & (((dst >> 5) & 1) == 0)
    assert both0.mean() == pytest.approx(0.5, abs=0.01)


def test_kronecker_unpermuted_hub_is_vertex_zero():
    el = kronecker(10, seed=4, permute=False)
    deg = np.bincount(el.src, minlength=el.n) + np.bincount(el.dst, minlength=el.n)
    assert deg.argmax() == 0


@pytest.mark.parametrize("scale", [1, 2, 3, 5, 12, 13])
def test_permute_vertices_is_bijection(scale):
    ids = np.arange(2**scale)
    p = permute_vertices(ids, scale, seed=11)
    assert p.dtype == np.int64
    np.testing.assert_array_equal(np.sort(p), ids)
    if scale >= 5:
        assert not np.array_equal(p, ids)
        assert not np.array_equal(p, permute_vertices(ids, scale, seed=12))


def test_permute_vertices_large_scale_elementwise():
    ids = np.array([[0, 1], [2**40 - 1, 12345678901]])
    p = permute_vertices(ids, 40, seed=5)
    assert p.shape == ids.shape
    assert len(set(p.ravel().tolist())) == 4 and p.max() < 2**40
    # elementwise: each id maps the same alone or in a batch
    assert permute_vertices(ids[1, 1:], 40, seed=5)[0] == p[1, 1]


def test_kronecker_permutation_consistent():
    plain = kronecker(11, seed=6, permute=False)
    perm = kronecker(11, seed=6, permute=True)
    np.testing.assert_array_equal(perm.src, permute_vertices(plain.src, 11, seed=6))
    np.testing.assert_array_equal(perm.dst, permute_vertices(plain.dst, 11, seed=6))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"scale": 0}, "scale"),
        ({"scale": 41}, "scale"),
        ({"scale": 2.5}, "scale"),
        ({"scale": 4, "edgefactor": 0}, "edgefactor"),
        ({"scale": 4, "a": 0.0}, "a must"),
        ({"scale": 4, "b": 1.0}, "b must"),
        ({"scale": 4, "c": -0.1}, "c must"),
        ({"scale": 4, "a": 0.5, "b": 0.3, "c": 0.2}, "a \\+ b \\+ c"),
        ({"scale": 4, "seed": -1}, "seed"),
        ({"scale": 4, "seed": 2**64}, "seed"),
        ({"scale": 4, "stop": 16 * 16 + 1}, "stop"),
        ({"scale": 4, "start": 5, "stop": 4}, "start"),
    ],
)
def test_kronecker_argument_errors(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        kronecker_edges(**kwargs)


def test_permute_vertices_argument_errors():
    with pytest.raises(ValueError, match="2\\*\\*4"):
        permute_vertices(np.array([16]), 4)
    with pytest.raises(ValueError, match="scale"):
        permute_vertices(np.array([0]), 41)
    with pytest.raises(TypeError, match="integers"):
        permute_vertices(np.array([0.5]), 4)


def test_rmat():
    el = rmat(12, 8, seed=2)
    assert el.directed is True and el.n == 4096 and el.num_edges == 8 * 4096
    assert el.meta["generator"] == "rmat"
    bits = np.arange(12)
    np.testing.assert_allclose(((el.src[:, None] >> bits) & 1).mean(axis=0), 0.40, atol=0.015)
    undirected = rmat(8, a=0.6, b=0.1, c=0.1, seed=2, permute=True, directed=False)
    assert undirected.directed is False
    same = kronecker(8, a=0.6, b=0.1, c=0.1, seed=2)
    np.testing.assert_array_equal(undirected.src, same.src)


# --------------------------------------------------------------------------- Erdős–Rényi


@pytest.mark.parametrize("directed", [False, True])
def test_erdos_renyi_gnm(directed):
    n, m = 200, 3000
    el = erdos_renyi(n, m=m, seed=1, directed=directed)
    assert el.num_edges == m and el.n == n and el.directed is directed
    assert not (el.src == el.dst).any()
    keys = el.src * n + el.dst
    assert np.unique(keys).size == m
    if not directed:
        assert (el.src < el.dst).all()
    again = erdos_renyi(n, m=m, seed=1, directed=directed)
    np.testing.assert_array_equal(again.src, el.src)


@pytest.mark.parametrize("directed", [False, True])
def test_erdos_renyi_complete(directed):
    n = 30
    pairs = n * (n - 1) // (1 if directed else 2)
    el = erdos_renyi(n, m=pairs, seed=0, directed=directed)
    got = set(zip(el.src.tolist(), el.dst.tolist(), strict=True))
    want = {(i, j) for i in range(n) for j in range(n) if i != j and (directed or i < j)}
    assert got == want


def test_erdos_renyi_huge_n_sparse():
    n = 10**9  # n^2 pairs could never be materialized
    el = erdos_renyi(n, m=1000, seed=5)
    assert el.num_edges == 1000 and (el.src < el.dst).all() and el.dst.max() < n
    assert np.unique(el.src * n + el.dst).size == 1000


def test_erdos_renyi_gnp():
    n, p = 400, 0.05
    counts = [erdos_renyi(n, p=p, seed=s).num_edges for s in range(5)]
    expected = p * n * (n - 1) / 2
    assert abs(np.mean(counts) - expected) < 4 * np.sqrt(expected)
    assert erdos_renyi(n, p=0.0, seed=0).num_edges == 0
    assert erdos_renyi(10, p=1.0, seed=0).num_edges == 45


def test_erdos_renyi_errors():
    with pytest.raises(ValueError, match="exactly one"):
        erdos_renyi(10, seed=0)
    with pytest.raises(ValueError, match="exactly one"):
        erdos_renyi(10, p=0.1, m=3, seed=0)
    with pytest.raises(ValueError, match="m must"):
        erdos_renyi(10, m=46, seed=0)
    with pytest.raises(ValueError, match="p must"):
        erdos_renyi(10, p=1.5, seed=0)


# --------------------------------------------------------------------------- lattices etc.


@pytest.mark.parametrize(("nx", "ny"), [(1, 1), (1, 5), (4, 1), (3, 4), (10, 7)])
def test_grid2d(nx, ny):
    el = grid2d(nx, ny)
    assert el.n == nx * ny and el.directed is False
    assert el.num_edges == (nx - 1) * ny + nx * (ny - 1)
    x, y = el.src % nx, el.src // nx
    x2, y2 = el.dst % nx, el.dst // nx
    assert (np.abs(x - x2) + np.abs(y - y2) == 1).all()
    assert len(set(zip(el.src.tolist(), el.dst.tolist(), strict=True))) == el.num_edges


@pytest.mark.parametrize(("nx", "ny", "nz"), [(1, 1, 1), (2, 3, 4), (5, 1, 3), (4, 4, 4)])
def test_grid3d(nx, ny, nz):
    el = grid3d(nx, ny, nz)
    assert el.n == nx * ny * nz
    assert el.num_edges == (nx - 1) * ny * nz + nx * (ny - 1) * nz + nx * ny * (nz - 1)

    def coords(v):
        return v % nx, (v // nx) % ny, v // (nx * ny)

    diff = sum(np.abs(a - b) for a, b in zip(coords(el.src), coords(el.dst), strict=True))
    assert (diff == 1).all()
    deg = np.bincount(el.src, minlength=el.n) + np.bincount(el.dst, minlength=el.n)
    if min(nx, ny, nz) >= 3:
        assert deg.max() == 6
    # vertex id = x + nx*(y + ny*z): the far corner is the last id
    assert el.n - 1 == (nx - 1) + nx * ((ny - 1) + ny * (nz - 1))


def test_grid_errors():
    with pytest.raises(ValueError, match="nx"):
        grid2d(0, 3)
    with pytest.raises(ValueError, match="nz"):
        grid3d(2, 2, 0)


def test_star_and_path():
    s = star(5)
    assert s.n == 5 and s.src.tolist() == [0] * 4 and s.dst.tolist() == [1, 2, 3, 4]
    assert s.directed is False
    p = path(4)
    assert p.n == 4 and p.src.tolist() == [0, 1, 2] and p.dst.tolist() == [1, 2, 3]
    assert star(1).num_edges == 0 and path(1).num_edges == 0 and path(0).n == 0


def test_kronecker_progress_gives_the_same_graph() -> None:
    """Generating in chunks with a progress callback changes nothing but the calls."""
    calls: list[tuple[int, int]] = []
    plain = kronecker(11, 8, seed=4)
    chunked = kronecker(11, 8, seed=4, progress=lambda i, n: calls.append((i, n)))
    assert np.array_equal(plain.src, chunked.src) and np.array_equal(plain.dst, chunked.dst)
    assert calls == [(i, 16) for i in range(1, 17)]
