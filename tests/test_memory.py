"""Memory of one-process graphs: the streamed build, its index dtypes, validation on blocks.

The streamed build (:meth:`spbfs.graph.Graph.from_source`) must give the graph the
in-memory builder gives, bit for bit, whatever the slice size; both are checked
against a graph scipy assembles independently. The validator on the graph's own
blocks must agree with the edge-list validator on valid and on broken trees.
"""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest
import scipy.sparse as sp
from _reference import reference_bfs

import semirings.blocks as blocks_mod
from semirings._build import finish_compressed
from semirings.blocks import block_from_edges
from spbfs.config import Config
from spbfs.edges import EdgeList, EdgeSource
from spbfs.generators import KroneckerSource, kronecker, rmat
from spbfs.graph import Graph
from spbfs.graph500 import run_benchmark, traversed_edges
from spbfs.validate import (
    ValidationError,
    reference_levels,
    validate_bfs_tree,
    validate_bfs_tree_graph,
)

FORMATS = ("csr", "dcsc")


# --------------------------------------------------------------------------- references


def scipy_structure(src, dst, n, directed):
    """Column pointers, row ids and non-empty columns of ``B`` (out-block), by scipy.

    Column ``u`` of ``B`` lists the out-neighbours of ``u``: ``B[v, u]`` for an
    edge ``u -> v``; undirected adds the mirror. Self-loops and repeats go.
    """
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    keep = src != dst
    s, d = src[keep], dst[keep]
    if not directed:
        s, d = np.concatenate([s, d]), np.concatenate([d, s])
    b = sp.csc_matrix((np.ones(s.size), (d, s)), shape=(n, n))
    b.sum_duplicates()
    b.sort_indices()
    return b.indptr.astype(np.int64), b.indices.astype(np.int64)


def assert_block_is(block, indptr, indices):
    """``block`` (csr or dcsc) holds exactly the structure ``(indptr, indices)``."""
    ind = np.asarray(block.ind)
    np.testing.assert_array_equal(ind.astype(np.int64), indices)
    if block.format == "csr":
        np.testing.assert_array_equal(np.asarray(block.ptr).astype(np.int64), indptr)
    else:
        lengths = np.diff(indptr)
        jc = np.flatnonzero(lengths)
        np.testing.assert_array_equal(np.asarray(block.jc).astype(np.int64), jc)
        np.testing.assert_array_equal(np.asarray(block.ptr).astype(np.int64),
                                      np.concatenate([[0], np.cumsum(lengths[jc])]))


def assert_same_blocks(a, b):
    for x, y in ((a.out_block, b.out_block), (a.in_block, b.in_block)):
        assert x.format == y.format and x.shape == y.shape
        assert x.index_dtype == y.index_dtype
        np.testing.assert_array_equal(x.ptr, y.ptr)
        np.testing.assert_array_equal(x.ind, y.ind)
        if x.jc is not None or y.jc is not None:
            np.testing.assert_array_equal(x.jc, y.jc)


def runs_edges(seed=0):
    """Edges in long runs: repeats of one edge, one source's edges in a row, loops."""
    rng = np.random.default_rng(seed)
    n = 40
    src, dst = [], []
    for _ in range(60):
        u = int(rng.integers(n))
        kind = rng.integers(3)
        length = int(rng.integers(1, 12))
        if kind == 0:      # the same edge again and again
            v = int(rng.integers(n))
            src += [u] * length
            dst += [v] * length
        elif kind == 1:    # a vertex's neighbours in a row, some repeated
            src += [u] * length
            dst += rng.integers(n, size=length).tolist()
        else:              # self-loops among them
            src += [u] * length
            dst += [u if k % 2 else int(rng.integers(n)) for k in range(length)]
    return np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64), n


class ListSource:
    """An edge source over arrays that is not an EdgeList (checked as it is read)."""

    def __init__(self, src, dst, n, directed=None):
        self.src, self.dst, self.n, self.directed = src, dst, n, directed
        self.meta: dict = {}
        self.reads: list[tuple[int, int]] = []

    @property
    def num_edges(self):
        return int(self.src.shape[0])

    def chunk(self, start, stop):
        self.reads.append((start, stop))
        return self.src[start:stop], self.dst[start:stop]


# --------------------------------------------------------------------------- streamed build


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("chunk", [1, 2, 7, 64, 1000, 10**9])
def test_streamed_equals_in_memory_on_runs(fmt, directed, chunk):
    src, dst, n = runs_edges(seed=chunk)
    cfg = Config(format=fmt)
    el = EdgeList(src, dst, n, directed=directed)
    g = Graph.from_source(ListSource(src, dst, n, directed), config=cfg, chunk_edges=chunk)
    mem = Graph.from_edgelist(el, config=cfg)
    assert_same_blocks(g, mem)
    indptr, indices = scipy_structure(src, dst, n, directed)
    assert_block_is(g.out_block, indptr, indices)
    if directed:
        tptr, tind = scipy_structure(dst, src, n, True)
        assert_block_is(g.in_block, tptr, tind)
    else:
        assert g.in_block is g.out_block
    # The in-memory builder of the whole edge list, as blocks were built before streaming.
    old = block_from_edges(fmt, dst, src, (n, n), symmetric=not directed, drop_loops=True)
    np.testing.assert_array_equal(g.out_block.ind, old.ind)
    np.testing.assert_array_equal(g.out_block.ptr, old.ptr)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("scale", [5, 9])
def test_kronecker_source_equals_kronecker_graph(fmt, scale):
    cfg = Config(format=fmt)
    el = kronecker(scale, 16, seed=scale)
    m = el.num_edges
    mem = Graph.from_edgelist(el, config=cfg)
    indptr, indices = scipy_structure(el.src, el.dst, el.n, False)
    assert_block_is(mem.out_block, indptr, indices)
    # Slices that divide m, that do not, one edge, and all at once.
    for chunk in (1 if scale == 5 else 3, 97, m // 4, m - 1, m, 2 * m):
        source = KroneckerSource(scale, 16, seed=scale)
        g = Graph.from_source(source, config=cfg, chunk_edges=chunk)
        assert_same_blocks(g, mem)
        assert g.edges is None and g.num_input_edges == m
        assert source.seconds > 0


def test_kronecker_source_slices_are_kronecker():
    source = KroneckerSource(7, 8, seed=11)
    el = kronecker(7, 8, seed=11)
    assert (source.n, source.num_edges, source.directed) == (el.n, el.num_edges, el.directed)
    assert source.meta == el.meta
    assert isinstance(source, EdgeSource) and isinstance(el, EdgeSource)
    s, d = source.chunk(100, 333)
    np.testing.assert_array_equal(s, el.src[100:333])
    np.testing.assert_array_equal(d, el.dst[100:333])
    whole = source.edgelist()
    np.testing.assert_array_equal(whole.src, el.src)


@pytest.mark.parametrize("directed", [False, True])
def test_input_degree_counts_tuples(directed):
    src, dst, n = runs_edges(seed=5)
    g = Graph.from_source(ListSource(src, dst, n), directed=directed, chunk_edges=13)
    if directed:
        expected = np.bincount(src, minlength=n)
    else:  # a tuple at both endpoints; a self-loop twice at its vertex
        expected = np.bincount(src, minlength=n) + np.bincount(dst, minlength=n)
    np.testing.assert_array_equal(g.input_degree, expected)
    assert g.num_input_edges == src.size
    # from_edgelist counts the same, and with_config keeps the counts.
    el = EdgeList(src, dst, n, directed=directed)
    np.testing.assert_array_equal(Graph.from_edgelist(el).input_degree, expected)
    again = g.with_config(Config(format="dcsc"))
    np.testing.assert_array_equal(again.input_degree, expected)


def test_streamed_build_reads_each_slice_twice():
    src, dst, n = runs_edges(seed=2)
    source = ListSource(src, dst, n)
    calls = []
    Graph.from_source(source, chunk_edges=50, progress=lambda i, k: calls.append((i, k)))
    slices = [(lo, min(lo + 50, src.size)) for lo in range(0, src.size, 50)]
    assert source.reads == slices + slices
    assert calls == [(i + 1, 2 * len(slices)) for i in range(2 * len(slices))]


def test_streamed_build_rejects_bad_input():
    src, dst, n = runs_edges()
    with pytest.raises(ValueError, match="chunk_edges"):
        Graph.from_source(ListSource(src, dst, n), chunk_edges=0)
    bad = dst.copy()
    bad[77] = n  # out of range, in the second slice
    with pytest.raises(ValueError, match=r"source.chunk\(64, 128\)\[1\].*out of range"):
        Graph.from_source(ListSource(src, bad, n), chunk_edges=64)
    with pytest.raises(TypeError, match="EdgeSource"):
        Graph.from_source((src, dst))
    with pytest.raises(TypeError, match="EdgeList"):
        Graph.from_edgelist(ListSource(src, dst, n))
    with pytest.raises(TypeError, match="integer"):
        Graph.from_source(ListSource(src.astype(float), dst, n))


def test_finish_shrinks_in_place():
    # Two columns with repeats: the merged entries stay in the same array, shrunk.
    ptr = np.array([0, 4, 7], dtype=np.int64)
    idx = np.array([3, 1, 3, 1, 2, 2, 0], dtype=np.int32)
    before = idx
    ptr2, idx2, vals = finish_compressed(ptr, idx)
    assert idx2 is before and vals is None
    assert idx2.flags.owndata and idx2.nbytes == 4 * 4
    np.testing.assert_array_equal(ptr2, [0, 2, 4])
    np.testing.assert_array_equal(idx2, [1, 3, 0, 2])
    # Values are summed over repeats, as scipy sums duplicates.
    ptr = np.array([0, 3], dtype=np.int64)
    idx = np.array([5, 1, 5], dtype=np.int64)
    w = np.array([1.0, 2.0, 4.0])
    _, idx3, w3 = finish_compressed(ptr, idx, vals=w)
    np.testing.assert_array_equal(idx3, [1, 5])
    np.testing.assert_array_equal(w3, [2.0, 5.0])


# --------------------------------------------------------------------------- index dtypes


@pytest.mark.parametrize("fmt", FORMATS)
def test_int32_where_ids_fit_int64_where_forced(fmt):
    el = kronecker(8, 8, seed=2)
    g = Graph.from_source(KroneckerSource(8, 8, seed=2), config=Config(format=fmt))
    assert g.out_block.index_dtype == np.int32
    assert g.out_block.ptr.dtype == np.int32
    # 4 bytes per stored entry (plus the pointers).
    assert g.out_block.ind.nbytes == 4 * g.nnz
    g64 = Graph.from_edgelist(el, config=Config(format=fmt, index_dtype="int64"))
    assert g64.out_block.index_dtype == np.int64 and g64.out_block.ptr.dtype == np.int64
    g32 = Graph.from_edges(el.src, el.dst, el.n, config=Config(format=fmt, index_dtype="int32"))
    assert g32.out_block.index_dtype == np.int32
    for other in (g64, g32):
        np.testing.assert_array_equal(np.asarray(other.out_block.ind, dtype=np.int64),
                                      np.asarray(g.out_block.ind, dtype=np.int64))


def test_dtype_follows_merged_entries_not_input(monkeypatch):
    """int32 is decided on the merged entries: repeats that would overflow do not count."""
    # Pretend int32 ends at 100: 60 tuples, stored twice (120 > 100) but only 10
    # distinct pairs (20 entries) once merged.
    monkeypatch.setattr(blocks_mod, "_INT32_MAX", 100)
    src = np.repeat(np.arange(10), 6)
    dst = np.repeat(np.arange(1, 11), 6)
    el = EdgeList(src, dst, 11, directed=False)
    old = block_from_edges("csr", dst, src, (11, 11), symmetric=True, drop_loops=True)
    assert old.index_dtype == np.int64  # the whole-list builder counts the repeats
    g = Graph.from_edgelist(el)
    assert g.out_block.index_dtype == np.int32 and g.nnz == 20
    np.testing.assert_array_equal(g.out_block.ind, old.ind)
    # Over the limit once merged: the ids were placed as int32, the block widens.
    pairs = np.array(list(itertools.combinations(range(20), 2))[:60])
    src, dst = pairs[:, 0], pairs[:, 1]
    wide = Graph.from_edges(src, dst, 20)
    assert wide.nnz == 120 and wide.out_block.index_dtype == np.int64
    indptr, indices = scipy_structure(src, dst, 20, False)
    assert_block_is(wide.out_block, indptr, indices)
    with pytest.raises(OverflowError, match="int32"):
        Graph.from_edges(src, dst, 20, config=Config(index_dtype="int32"))


def test_ids_beyond_int32_through_the_generic_path():
    big = 2**31 + 5
    n = 2**31 + 10
    src = np.array([0, big, 7, big, 3], dtype=np.int64)
    dst = np.array([big, 7, 7, 2**31 + 9, 0], dtype=np.int64)
    cfg = Config(format="dcsc")  # hypersparse: nothing n-sized is allocated
    for g in (Graph.from_edges(src, dst, n, config=cfg),
              Graph.from_source(ListSource(src, dst, n), config=cfg, chunk_edges=2)):
        b = g.out_block
        assert b.index_dtype == np.int64 and b.jc.dtype == np.int64
        assert g.input_degree is None
        # Expected by hand: each undirected pair both ways, the loop (7, 7) gone.
        pairs = {(0, big), (big, 7), (big, 2**31 + 9), (3, 0)}
        cols = {}
        for u, v in pairs:
            cols.setdefault(u, set()).add(v)
            cols.setdefault(v, set()).add(u)
        jc = sorted(cols)
        np.testing.assert_array_equal(b.jc, jc)
        np.testing.assert_array_equal(b.ind, [v for u in jc for v in sorted(cols[u])])
    with pytest.raises(OverflowError, match="int32"):
        Graph.from_edges(src, dst, n, config=Config(format="dcsc", index_dtype="int32"))


# --------------------------------------------------------------------------- validation


def two_components(directed=False):
    """A Kronecker graph on 0..255, a path 256-257-258-259 apart, and isolated 260."""
    el = kronecker(8, 8, seed=4)
    src = np.concatenate([el.src, [256, 257, 258]])
    dst = np.concatenate([el.dst, [257, 258, 259]])
    return EdgeList(src, dst, 261, directed=directed)


def graphs_of(el):
    return [Graph.from_source(ListSource(el.src, el.dst, el.n, el.directed),
                              config=Config(format=fmt), chunk_edges=333)
            for fmt in FORMATS]


def both_verdicts(el, graphs, source, parents, levels=None):
    """The rule each validator names (None when it accepts), edge list first."""
    out = []
    try:
        validate_bfs_tree(el, source, parents, levels)
        out.append(None)
    except ValidationError as e:
        out.append(e.rule)
    for g in graphs:
        try:
            validate_bfs_tree_graph(g, source, parents, levels)
            out.append(None)
        except ValidationError as e:
            out.append(e.rule)
    return out


@pytest.mark.parametrize("directed", [False, True])
def test_graph_validator_accepts_and_counts_like_the_edge_list(directed):
    el = two_components(directed)
    graphs = graphs_of(el)
    deg = np.bincount(el.src[el.src != el.dst], minlength=el.n)
    for source in [int(v) for v in np.flatnonzero(deg)[:6]] + [256]:
        parents, levels = reference_bfs(el.n, el.src, el.dst, source, directed)
        np.testing.assert_array_equal(
            levels, reference_levels(el.src, el.dst, el.n, source, directed=directed))
        want = validate_bfs_tree(el, source, parents, levels)
        for g in graphs:
            got = validate_bfs_tree_graph(g, source, parents, levels)
            assert got == want
            assert traversed_edges(g, parents) == traversed_edges(el, parents)


def test_graph_validator_without_input_degree_counts_graph_edges():
    el = two_components()
    g = Graph.from_matrix(sp.csr_matrix((np.ones(el.num_edges), (el.src, el.dst)),
                                        shape=(el.n, el.n)), directed=False)
    assert g.input_degree is None
    parents, levels = reference_bfs(el.n, el.src, el.dst, 256, False)
    assert validate_bfs_tree_graph(g, 256, parents, levels)["component_edges"] == 3
    source = int(el.src[0])
    parents, _ = reference_bfs(el.n, el.src, el.dst, source, False)
    a = sp.coo_matrix((np.ones(el.num_edges), (el.src, el.dst)), shape=(el.n, el.n))
    a = ((a + a.T) > 0).tocsr()
    inside = parents >= 0
    sub = a[inside][:, inside]
    expected = (sub.nnz + int(sub.diagonal().sum())) // 2  # each edge once, loops once
    assert validate_bfs_tree_graph(g, source, parents)["component_edges"] == expected


def broken_trees(el, directed):
    """(name, source, parents, levels, rule) for trees broken one way each."""
    source = int(el.src[np.flatnonzero(el.src != el.dst)[0]])
    parents, levels = reference_bfs(el.n, el.src, el.dst, source, directed)
    depth = levels
    reached = np.flatnonzero(parents >= 0)
    children = reached[reached != source]
    deep = children[np.argsort(-depth[children], kind="stable")]
    out = []

    # A cycle: a vertex made the parent of its own parent.
    p = parents.copy()
    v = int(deep[0])
    p[int(parents[v])] = v
    out.append(("cycle", source, p, None, 1))

    # A parent that is no edge: a reached vertex hung under one it has no edge to.
    nbrs = set()
    for u, w in zip(el.src.tolist(), el.dst.tolist(), strict=True):
        if u == v:
            nbrs.add(w)
        if w == v and not directed:
            nbrs.add(u)
    same_level = [int(w) for w in reached if depth[w] == depth[parents[v]] and w not in nbrs
                  and w != parents[v]]
    p = parents.copy()
    p[v] = same_level[0]
    out.append(("non-edge parent", source, p, None, 5))

    # Wrong level: the levels given disagree with the tree (one vertex off by one).
    lv = levels.copy()
    lv[v] += 1
    out.append(("wrong level", source, parents, lv, 2))

    # A reached vertex missing: a vertex with a reached neighbour marked unreached.
    leaf = next(int(w) for w in deep if not np.any(parents == w))
    p = parents.copy()
    p[leaf] = -1
    out.append(("reached vertex missing", source, p, None, 4))

    # A parent outside the component: the whole path, levels consistent along it,
    # hung under the source, which has no edge to it.
    p = parents.copy()
    p[256], p[257], p[258], p[259] = source, 256, 257, 258
    out.append(("parent outside component", source, p, None, 5))

    # An isolated vertex hung under a reached one.
    p = parents.copy()
    p[260] = int(deep[-1])
    out.append(("isolated vertex in the tree", source, p, None, 5))

    # A reached vertex whose parent is unreached (in the other component).
    p = parents.copy()
    p[v] = 258
    out.append(("parent unreached", source, p, None, 1))
    return out


@pytest.mark.parametrize("directed", [False, True])
def test_graph_validator_rejects_broken_trees_like_the_edge_list(directed):
    el = two_components(directed)
    graphs = graphs_of(el)
    for name, source, parents, levels, rule in broken_trees(el, directed):
        verdicts = both_verdicts(el, graphs, source, parents, levels)
        assert verdicts == [rule] * 3, (name, verdicts)


def test_graph_validator_rule_3():
    # Path 0-1-2-3 with a chord 0-3: a tree along the path puts 3 at level 3,
    # two levels from its neighbour 0.
    src = np.array([0, 1, 2, 0])
    dst = np.array([1, 2, 3, 3])
    el = EdgeList(src, dst, 4, directed=False)
    parents = np.array([0, 0, 1, 2])
    for g in graphs_of(el):
        with pytest.raises(ValidationError, match=r"rule 3") as info:
            validate_bfs_tree_graph(g, 0, parents)
        assert info.value.rule == 3 and set(info.value.example) == {0, 3}
    with pytest.raises(ValidationError, match=r"rule 3"):
        validate_bfs_tree(el, 0, parents)


def test_graph_validator_checks_arguments():
    el = two_components()
    g = graphs_of(el)[0]
    parents, _ = reference_bfs(el.n, el.src, el.dst, 256, False)
    with pytest.raises(TypeError, match="graph must be"):
        validate_bfs_tree_graph(el, 256, parents)
    with pytest.raises(ValueError, match=r"shape \(261,\)"):
        validate_bfs_tree_graph(g, 256, parents[:-1])
    with pytest.raises(TypeError, match="integer"):
        validate_bfs_tree_graph(g, 256, parents.astype(float))


@pytest.mark.parametrize("fmt", FORMATS)
def test_benchmark_on_a_streamed_graph(fmt):
    import spbfs

    cfg = Config(format=fmt)
    g = Graph.from_source(KroneckerSource(9, 16, seed=1), config=cfg, chunk_edges=1000)
    el = kronecker(9, 16, seed=1)
    roots = [int(v) for v in np.flatnonzero(g.out_degree)[:4]]

    def one(root):
        r = spbfs.bfs(g, root)
        return r.parents, r.levels

    on_graph = run_benchmark(one, g, roots, warmup=False)
    on_edges = run_benchmark(one, el, roots, warmup=False)
    unchecked = run_benchmark(one, g, roots, validate=False, warmup=False)
    np.testing.assert_array_equal(on_graph.nedges, on_edges.nedges)
    np.testing.assert_array_equal(unchecked.nedges, on_edges.nedges)
    with pytest.raises(ValueError, match="disagrees"):
        run_benchmark(one, g, roots, directed=True)


# --------------------------------------------------------------------------- the CLI


def test_bench_and_info_report_peak_bytes_per_edge(tmp_path, capsys):
    from spbfs.cli import main

    assert main(["bench", "--scale", "8", "--roots", "2"]) == 0
    out = capsys.readouterr().out
    fields = dict(re.findall(r"^(\w[\w ]*):\s+(\S+)$", out, re.M))
    m = 16 << 8
    peak = float(fields["peak_rss_bytes"])
    assert float(fields["peak_bytes_per_edge"]) == pytest.approx(peak / m, rel=1e-6)
    graph_bpe = float(fields["bytes_per_edge"])
    g = Graph.from_edgelist(kronecker(8, 16, seed=1))
    assert graph_bpe == pytest.approx(g.nbytes / m, rel=1e-6)
    assert peak > g.nbytes
    # Validated: the edge counts are those the edge list gives.
    el = kronecker(8, 16, seed=1)
    assert float(fields["max_nedge"]) <= el.num_edges

    path = tmp_path / "g.txt"
    np.savetxt(path, np.stack([el.src, el.dst], axis=1), fmt="%d")
    assert main(["info", str(path)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^peak RSS:\s+[\d.]+ MiB, [\d.]+ B per input edge", out, re.M)
    assert re.search(r"csr block: [\d.]+ MiB \(int32 local ids\), [\d.]+ B per input edge", out)


def test_directed_streamed_graph_searches_like_reference():
    import spbfs

    el = rmat(9, 8, seed=3)
    g = Graph.from_source(ListSource(el.src, el.dst, el.n, True), chunk_edges=500)
    assert g.directed
    for source in [int(v) for v in np.flatnonzero(np.bincount(el.src, minlength=el.n))[:3]]:
        r = spbfs.bfs(g, source)
        np.testing.assert_array_equal(
            r.levels, reference_levels(el.src, el.dst, el.n, source, directed=True))
        validate_bfs_tree_graph(g, source, r.parents, r.levels)


@pytest.mark.mpi
def test_grid_bench_reports_peak_bytes_per_edge(tmp_path):
    import json

    from mpi_launch import MPIEXEC, launch

    if MPIEXEC is None:
        pytest.skip("needs mpiexec")
    js = tmp_path / "b.json"
    rc, out, err, _ = launch(2, ["-m", "spbfs.mpi", "bench", "--scale", "8", "--roots", "2",
                                 "--grid", "1x2", "--json", str(js)], timeout=120)
    assert rc == 0, err
    header = json.loads(js.read_text())["header"]
    m = 16 << 8
    assert header["peak_bytes_per_edge"] == pytest.approx(header["peak_rss_bytes"] / m)
    # Two ranks, each a Python process with numba loaded: far more than the blocks.
    assert header["peak_rss_bytes"] > header["bytes_per_edge"] * m
    assert re.search(r"^peak_bytes_per_edge:\s+[\d.]+$", out, re.M)
