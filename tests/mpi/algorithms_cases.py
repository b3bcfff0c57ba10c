"""Cases of the distributed algorithms: ``mpiexec -n P python algorithms_cases.py GRID...``.

Every grid named on the command line (``RxC`` with ``R·C = P``) runs the whole
suite on small graphs whose sizes do not divide by the rank count (a Kronecker
graph with isolated vertices, a 2-D lattice, a directed random graph, a path
padded with isolated vertices), each graph in one format, the formats turning
with the graph and the grid (``case_runner.run_cases``: every grid runs both
formats and every graph both formats over the grids). Every result is gathered on
rank 0 and compared with the one-process function of :mod:`spbfs.algorithms`
and with scipy / networkx. Bad input must raise the same
:class:`~spbfs.mpi.CollectiveError` on every rank. Any failure raises, and the
installed excepthook aborts the job with a non-zero status. Prints
``ALL OK <cases>`` on rank 0 at the end. Every grid also runs every algorithm on
the grid's engines (``Config(backend="numba")`` and ``"numpy"``), both formats,
against the one-process numba result (:func:`check_engines`); ``--engines``
runs only that, on grids ``RxC`` of the first ``R·C`` ranks (``RxC:a,b``: on
the engines ``a`` and ``b`` only; ``--backends=a,b`` for every grid; ``--bfs``
adds the BFS engine cases of ``engine_cases.py`` on the grids of all ranks).
With ``--standin`` (the strict cupy stand-in of ``tests/_cupy_standin.py``)
the engine is ``backend="cupy"`` (by default), and each grid also checks that
a received piece left on the host raises and that ``auto`` takes the GPUs
only where every rank has one.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

# ruff: noqa: E402 -- the stand-in must be installed before the imports below load cupy
STANDIN = "--standin" in sys.argv
if STANDIN:  # the strict cupy stand-in, installed before anything imports cupy
    sys.argv.remove("--standin")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from _cupy_standin import HostLeak, install

    install()
#: The grid engines check_engines runs: ``--backends=a,b``; default numba and numpy, or
#: cupy alone on the stand-in.
BACKENDS = ("cupy",) if STANDIN else ("numba", "numpy")
for _arg in [a for a in sys.argv if a.startswith("--backends=")]:
    sys.argv.remove(_arg)
    BACKENDS = tuple(_arg.split("=", 1)[1].split(","))

import networkx as nx
import numpy as np
import scipy.sparse as sp
from case_runner import both_graphs, run_cases, share, sub_grid
from mpi4py import MPI
from scipy.sparse import csgraph

import spbfs
from semirings.backend import gpu_available
from spbfs import Config, datasets
from spbfs.algorithms.distributed import (
    dist_betweenness_centrality,
    dist_connected_components,
    dist_multi_source_bfs,
    dist_pagerank,
    dist_sssp,
    dist_triangle_count,
    dist_weighted_block,
)
from spbfs.algorithms.operations import GridVectorOps
from spbfs.edges import EdgeList
from spbfs.generators import erdos_renyi, grid2d, kronecker, path
from spbfs.mpi import CollectiveError, DistGraph, ProcessGrid, bfs, install_excepthook
from spbfs.mpi.local import bfs_backend
from spbfs.mpi.local_array import ArrayLocal


def graphs() -> list[tuple[str, EdgeList, bool]]:
    kron = kronecker(8, 4, seed=5)  # sparse enough to leave isolated vertices
    lattice = grid2d(13, 11)  # n = 143, high diameter
    er = erdos_renyi(203, m=500, seed=2, directed=True)
    p = path(6)
    padded = EdgeList(p.src, p.dst, 11)  # 5 isolated vertices at the end
    out = [("kron8", kron, False), ("grid13x11", lattice, False), ("er203d", er, True),
           ("path6+5", padded, False)]
    # Real graphs (bundled): karate (undirected) and west0067 (directed; its pattern only).
    for name in ("karate", "west0067"):
        el, directed = datasets.edges(name), datasets.info(name).directed
        out.append((name, EdgeList(el.src, el.dst, el.n, directed=directed), directed))
    return out


def sources_for(el: EdgeList) -> list[int]:
    deg = np.bincount(el.src, minlength=el.n) + np.bincount(el.dst, minlength=el.n)
    isolated = np.flatnonzero(deg == 0)
    srcs = [0, el.n - 1, int(np.argmax(deg))]
    if isolated.size:
        srcs.append(int(isolated[0]))
    return srcs


def weighted(el: EdgeList) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The edges without repeated (u, v) pairs, with weights in [0.1, 5) (same on every rank)."""
    key = np.unique(el.src.astype(np.int64) * el.n + el.dst)
    u, v = key // el.n, key % el.n
    w = np.random.default_rng(7).uniform(0.1, 5.0, size=key.shape[0])
    return u, v, w


def nx_graph(el: EdgeList, directed: bool) -> nx.Graph:
    G = nx.DiGraph() if directed else nx.Graph()
    G.add_nodes_from(range(el.n))
    G.add_edges_from((int(a), int(b)) for a, b in zip(el.src, el.dst, strict=True) if a != b)
    return G


def check_graph(grid: ProcessGrid, name: str, el: EdgeList, directed: bool, fmt: str,
                cases: list[int]) -> None:
    rank, size = grid.rank, grid.size
    g, serial = both_graphs(grid, el, directed, fmt)
    root = rank == 0
    tag = f"{grid.pr}x{grid.pc} {name} {fmt}"
    G = nx_graph(el, directed) if root else None
    adj = serial.to_scipy() if root else None

    # PageRank
    r = dist_pagerank(g).gather()
    if root:
        ref = spbfs.pagerank(serial)
        assert np.allclose(r.scores, ref.scores, rtol=1e-10, atol=1e-13), f"{tag}: pagerank"
        assert abs(r.iterations - ref.iterations) <= 1 and r.converged == ref.converged, tag
    r = dist_pagerank(g, tol=1e-12, max_iter=1000).gather()
    if root:
        want = nx.pagerank(G, tol=1e-10)
        assert np.allclose(r.scores, [want[v] for v in range(el.n)], atol=1e-7), (
            f"{tag}: pagerank vs networkx")
    # The top-level functions take the DistGraph and run these grid versions.
    r = spbfs.pagerank(g, alpha=0.5, max_iter=3).gather()
    if root:
        ref = spbfs.pagerank(serial, alpha=0.5, max_iter=3)
        assert np.allclose(r.scores, ref.scores, rtol=1e-10, atol=1e-13), f"{tag}: pagerank 3"
        assert r.iterations == 3 and not r.converged, tag
    # igraph's stopping rule (L1 change <= tol): the same iterations as one process.
    r = dist_pagerank(g, tol=1e-9, stop="l1", max_iter=1000).gather()
    if root:
        ref = spbfs.pagerank(serial, tol=1e-9, stop="l1", max_iter=1000)
        assert np.allclose(r.scores, ref.scores, rtol=1e-10, atol=1e-13), f"{tag}: pagerank l1"
        assert abs(r.iterations - ref.iterations) <= 1 and r.converged, tag
    cases[0] += 3

    # Connected components
    d = spbfs.connected_components(g) if fmt == "dcsc" else dist_connected_components(g)
    r = d.gather()
    assert len(set(grid.comm.allgather((d.n_components, d.rounds)))) == 1, tag
    if root:
        ref = spbfs.connected_components(serial)
        assert r.n_components == ref.n_components, f"{tag}: components count"
        assert np.array_equal(r.labels, ref.labels), f"{tag}: component labels"
        assert np.array_equal(r.roots, ref.roots), f"{tag}: component roots"
        # FastSV's rounds grow with log n, not with the diameter (path6+5, grid13x11).
        assert 1 <= r.rounds <= 2 * max(el.n, 2).bit_length() + 2, f"{tag}: {r.rounds} rounds"
        nc, lab = csgraph.connected_components(adj, directed=directed, connection="weak")
        assert nc == r.n_components and np.array_equal(lab, r.labels), f"{tag}: scipy cc"
    cases[0] += 1

    # SSSP, weighted (edge shares) and unit weights
    u, v, w = weighted(el)
    wb = dist_weighted_block(g, share(u, rank, size), share(v, rank, size),
                             share(w, rank, size))
    W = sp.csr_matrix((w, (u, v)), shape=(el.n, el.n)) if root else None
    for s in sources_for(el):
        r = dist_sssp(g, s, weights=wb).gather()
        if root:
            ref = spbfs.sssp(serial, s, weights=W)
            assert np.array_equal(r.distances, ref.distances), f"{tag}: sssp from {s}"
            want = csgraph.dijkstra(W, directed=directed, indices=s)
            assert np.allclose(r.distances, want, rtol=1e-12), f"{tag}: dijkstra from {s}"
        r = spbfs.sssp(g, s).gather()
        if root:
            ref = spbfs.sssp(serial, s)
            assert np.array_equal(r.distances, ref.distances), f"{tag}: unit sssp from {s}"
            lv = csgraph.shortest_path(adj, unweighted=True, directed=directed, indices=s)
            assert np.array_equal(r.distances, lv), f"{tag}: unit sssp vs scipy from {s}"
        cases[0] += 2
    s0 = sources_for(el)[2]
    r = dist_sssp(g, s0, weights=(share(u, rank, size), share(v, rank, size),
                                  share(w, rank, size)), max_rounds=2).gather()
    if root:
        ref = spbfs.sssp(serial, s0, weights=W, max_rounds=2)
        assert np.array_equal(r.distances, ref.distances) and r.rounds == ref.rounds, tag
    cases[0] += 1

    # Multi-source BFS
    srcs = [*sources_for(el), 0]  # a repeated source gets its own (equal) row
    r = dist_multi_source_bfs(g, srcs).gather()
    if root:
        ref = spbfs.multi_source_bfs(serial, srcs)
        assert np.array_equal(r.levels, ref.levels), f"{tag}: msbfs levels"
        assert np.array_equal(r.parents, ref.parents), f"{tag}: msbfs parents"
        assert r.depth == ref.depth, f"{tag}: msbfs depth {r.depth} vs {ref.depth}"
        for row, s in enumerate(srcs):
            lv = csgraph.shortest_path(adj, unweighted=True, directed=directed, indices=s)
            lv = np.where(np.isinf(lv), -1, lv).astype(np.int64)
            assert np.array_equal(r.levels[row], lv), f"{tag}: msbfs vs scipy from {s}"
    for kw in ({"output": "levels"}, {"output": "parents", "max_depth": 2},
               {"reverse": True}, {"max_depth": 0}):
        r = spbfs.multi_source_bfs(g, srcs[:3], **kw).gather()
        if root:
            ref = spbfs.multi_source_bfs(serial, srcs[:3], **kw)
            for attr in ("levels", "parents"):
                a, b = getattr(r, attr), getattr(ref, attr)
                assert (a is None) == (b is None), f"{tag}: msbfs {kw} {attr}"
                assert a is None or np.array_equal(a, b), f"{tag}: msbfs {kw} {attr}"
            assert r.depth == ref.depth, f"{tag}: msbfs {kw} depth"
    cases[0] += 5

    # Betweenness: sampled (one-process estimator) and, on the small graph, exact
    r = dist_betweenness_centrality(g, k=6, seed=3, batch_size=4).gather()
    if root:
        ref = spbfs.betweenness_centrality(serial, k=6, seed=3)
        assert np.allclose(r, ref, rtol=1e-9, atol=1e-12, equal_nan=True), f"{tag}: bc k=6"
    if name.startswith("path") or name.startswith("grid"):
        r = spbfs.betweenness_centrality(g, normalized=False).gather()
        if root:
            want = nx.betweenness_centrality(G, normalized=False)
            assert np.allclose(r, [want[x] for x in range(el.n)]), f"{tag}: bc vs networkx"
    cases[0] += 2

    # Triangles
    d = spbfs.triangle_count(g) if fmt == "csr" else dist_triangle_count(g)
    r = d.gather()
    assert len(set(grid.comm.allgather(d.total))) == 1, tag
    if root:
        ref = spbfs.triangle_count(serial)
        assert r.total == ref.total, f"{tag}: triangles {r.total} vs {ref.total}"
        assert np.array_equal(r.per_vertex, ref.per_vertex), f"{tag}: per-vertex triangles"
        want = nx.triangles(G.to_undirected() if directed else G)
        assert np.array_equal(r.per_vertex, [want[x] for x in range(el.n)]), tag
    if name in ("kron8", "karate"):
        check_triangle_rows(grid, el, fmt, tag)
    cases[0] += 1


def check_triangle_rows(grid: ProcessGrid, el: EdgeList, fmt: str, tag: str) -> None:
    """Triangles with self-loops, repeated and reversed edges, directed or not: networkx's;
    a rank fetches the rows of its vertices' out-neighbours owned elsewhere, each once, and
    no other rows."""
    from spbfs.algorithms.triangles import count_triangles

    rank, size = grid.rank, grid.size
    loops = np.arange(0, el.n, 3)
    src = np.concatenate([el.src, loops, el.dst[:30], el.src[:7]])
    dst = np.concatenate([el.dst, loops, el.src[:30], el.dst[:7]])
    G = nx.Graph()
    G.add_nodes_from(range(el.n))
    G.add_edges_from((int(a), int(b)) for a, b in zip(src, dst, strict=True) if a != b)
    want = nx.triangles(G)

    class Watched(GridVectorOps):
        def request(self, gids, answer):  # type: ignore[no-untyped-def]
            asked.append(self.to_host(gids))
            out = super().request(gids, answer)
            asked.append(self.to_host(out[1]))
            return out

    for directed in (False, True):
        g = DistGraph.from_edges(share(src, rank, size), share(dst, rank, size), el.n,
                                 directed=directed, grid=grid, config=Config(format=fmt))
        asked: list[np.ndarray] = []
        per, total = count_triangles(Watched(g))
        t = f"{tag} loops+repeats directed={directed}"
        assert np.array_equal(per, [want[x] for x in range(g.lo, g.hi)]), t
        assert total == sum(want.values()) // 3, t
        (ids, lengths), (lo, hi) = asked, (g.lo, g.hi)
        assert np.unique(ids).shape[0] == ids.shape[0], f"{t}: a row fetched twice"
        # The rows fetched: the out-neighbours (higher rank) of this rank's vertices owned
        # elsewhere, no others; each no longer than its vertex's degree.
        def rank_of(x: int) -> tuple[int, int]:
            return G.degree(x), x

        needed = {u for v in range(lo, hi) for u in G[v]
                  if not lo <= u < hi and rank_of(u) > rank_of(v)}
        assert set(ids.tolist()) == needed, f"{t}: rows fetched that are not needed"
        assert np.all(lengths <= [G.degree(int(x)) for x in ids]), t


def check_bad_input(grid: ProcessGrid) -> None:
    el = path(10)
    g = DistGraph.from_edges(el.src, el.dst, 10, grid=grid)

    def expect(fn: object, text: str, *args: object, **kwargs: object) -> None:
        try:
            fn(*args, **kwargs)
        except CollectiveError as exc:
            assert text in str(exc), (text, str(exc))
        else:
            raise AssertionError(f"{fn.__name__}{args}{kwargs} accepted bad input")

    expect(dist_sssp, "source=10 is out of range", g, 10)
    expect(dist_sssp, "source=-1 is out of range", g, -1)
    expect(dist_sssp, "max_rounds must be >= 0", g, 0, max_rounds=-1)
    expect(dist_multi_source_bfs, "sources[1]=12 is out of range", g, [1, 12])
    expect(dist_multi_source_bfs, "sources is empty", g, [])
    expect(dist_multi_source_bfs, "output must be one of", g, [1], output="tree")
    expect(dist_pagerank, "alpha must lie in [0, 1]", g, alpha=2.0)
    expect(dist_pagerank, "stop must be one of networkx, l1", g, stop="l2")
    expect(dist_betweenness_centrality, "exceeds the number of vertices", g, k=11)
    # The checks each one-process twin runs, with its messages.
    expect(dist_pagerank, "g must be a spbfs.mpi.DistGraph", "not a graph")
    expect(dist_pagerank, "max_iter must be >= 1", g, max_iter=0)
    expect(dist_sssp, "max_rounds must be an integer", g, 0, max_rounds=1.5)
    expect(dist_sssp, "source must be an integer vertex id", g, True)
    expect(dist_multi_source_bfs, "max_depth must be >= 0", g, [1], max_depth=-1)
    expect(dist_betweenness_centrality, "not both", g, k=2, sources=[1])
    expect(dist_betweenness_centrality, "sources must be distinct", g, sources=[1, 1])
    expect(dist_betweenness_centrality, "batch_size must be >= 1", g, batch_size=0)
    # A bad argument on one rank only, or arguments that differ: an error on every rank.
    last = grid.rank == grid.size - 1
    expect(dist_sssp, "source=10 is out of range", g, 10 if last else 0)
    expect(dist_multi_source_bfs, "sources[1]=12 is out of range", g, [1, 12 if last else 2])
    if grid.size > 1:
        expect(dist_sssp, "ranks pass different max_rounds (2 to 3)", g, 0,
               max_rounds=3 if last else 2)
        expect(dist_pagerank, "ranks pass different alpha", g, alpha=0.5 if last else 0.85)
    # A negative weight on the last rank only: the same error everywhere.
    w = np.ones(el.src.shape[0])
    if grid.rank == grid.size - 1:
        w[3] = -2.0
    expect(dist_weighted_block, "weights must be non-negative", g, el.src, el.dst, w)
    expect(dist_sssp, "edge 3 -> 4 has weight -2.0", g, 0, weights=(el.src, el.dst, w))
    # The top-level functions on a DistGraph: what the grid versions lack is refused.
    for fn, kwargs, text in (
            (spbfs.pagerank, {"weights": sp.eye(10, format="csr")}, "weights is not supported"),
            (spbfs.connected_components, {"config": g.config.replace(alpha=3.0)}, "config:"),
            (spbfs.bfs, {"source": 0, "reverse": True}, "reverse=True")):
        try:
            fn(g, **kwargs)
        except ValueError as exc:
            assert text in str(exc), (text, str(exc))
        else:
            raise AssertionError(f"{fn.__name__}{kwargs} accepted a DistGraph option it lacks")
    try:
        spbfs.as_graph(g)
    except TypeError as exc:
        assert "stays distributed" in str(exc), str(exc)
    else:
        raise AssertionError("as_graph converted a DistGraph")
    bad = el.dst.copy()
    if grid.rank == 0:
        bad[0] = 99
    expect(dist_weighted_block, "out of range", g, el.src, bad, np.ones(bad.shape[0]))


def reference(el: EdgeList, directed: bool) -> dict[str, object]:
    """The one-process numba results the grid's engines must give (rank 0)."""
    g = spbfs.Graph.from_edgelist(el, directed=directed, config=Config(backend="numba"))
    u, v, w = weighted(el)
    W = sp.csr_matrix((w, (u, v)), shape=(el.n, el.n))
    srcs = sources_for(el)
    return {"pagerank": spbfs.pagerank(g, tol=1e-10),
            "components": spbfs.connected_components(g),
            "sssp": [spbfs.sssp(g, s, weights=W).distances for s in srcs],
            "msbfs": spbfs.multi_source_bfs(g, [*srcs, 0]),
            "betweenness": spbfs.betweenness_centrality(g, k=6, seed=3),
            "triangles": spbfs.triangle_count(g)}


def check_cupy_grid(grid: ProcessGrid) -> None:
    """On the stand-in: a received piece left on the host (a missing upload) is caught."""
    rank, size = grid.rank, grid.size
    el = graphs()[0][1]
    g = DistGraph.from_edges(share(el.src, rank, size), share(el.dst, rank, size), el.n,
                             grid=grid, config=Config(backend="cupy"))
    good = ArrayLocal.up

    def up_forgotten(self: ArrayLocal, *parts: np.ndarray) -> list[np.ndarray]:
        return list(parts)  # what an exchange brought, left on the host

    ArrayLocal.up = up_forgotten
    try:
        dist_pagerank(g)
    except HostLeak:
        pass
    else:
        raise AssertionError("the stand-in missed a received piece left on the host")
    finally:
        ArrayLocal.up = good


def check_auto_backend(grid: ProcessGrid) -> None:
    """``auto`` on the grid: cupy where every rank has a GPU; numba on all where one lacks it."""
    el = graphs()[0][1]
    rank, size = grid.rank, grid.size

    def built() -> DistGraph:
        return DistGraph.from_edges(share(el.src, rank, size), share(el.dst, rank, size), el.n,
                                    grid=grid, config=Config())

    assert bfs_backend(Config(), grid.comm) == "cupy"
    assert GridVectorOps(built()).local is not None, "auto left the GPUs idle"
    runtime = sys.modules["cupy"].cuda.runtime
    count = runtime.getDeviceCount
    if rank == size - 1:
        runtime.getDeviceCount = lambda: 0  # this rank's GPU is gone
        gpu_available.cache_clear()
    try:
        assert bfs_backend(Config(), grid.comm) == "numba"
        g = built()
        assert GridVectorOps(g).local is None, "auto chose the GPU where a rank lacks one"
        assert bfs(g, 0, direction="top-down").levels.shape[0] == g.hi - g.lo
        try:
            bfs_backend(Config(backend="cupy"), grid.comm)
        except CollectiveError as exc:
            assert "no usable GPU" in str(exc), str(exc)
        else:
            raise AssertionError("backend 'cupy' accepted a grid with a rank without a GPU")
    finally:
        runtime.getDeviceCount = count
        gpu_available.cache_clear()


def check_engines(grid: ProcessGrid, cases: list[int],
                  backends: tuple[str, ...] = BACKENDS) -> None:
    """Every algorithm on the grid's engines ``backends``, both formats: numba's results.

    One loop per algorithm serves every engine (and one process): ranks to
    1e-9, labels, distances, levels, parents and triangles exactly. Each graph
    runs on each engine in one format, the formats alternating (turned by the
    grid's ``pr + pc``): every grid still runs every engine in both formats and
    every graph in both formats (with two engines or more; one engine alone
    turns over the grids), half the searches of the whole product.
    """
    rank, size = grid.rank, grid.size
    for k, (name, el, directed) in enumerate(graphs()[:4]):
        ref = reference(el, directed) if rank == 0 else None
        u, v, w = weighted(el)
        srcs = sources_for(el)
        for b, backend in enumerate(backends):
            fmt = ("csr", "dcsc")[(k + b + grid.pr + grid.pc) % 2]
            tag = f"{grid.pr}x{grid.pc} {name} {fmt} {backend}"
            g = DistGraph.from_edges(share(el.src, rank, size), share(el.dst, rank, size),
                                     el.n, directed=directed, grid=grid,
                                     config=Config(format=fmt, backend=backend))
            pr = dist_pagerank(g, tol=1e-10).gather()
            cc = dist_connected_components(g).gather()
            wb = dist_weighted_block(g, share(u, rank, size), share(v, rank, size),
                                     share(w, rank, size))
            dist = [dist_sssp(g, s, weights=wb).gather() for s in srcs]
            ms = dist_multi_source_bfs(g, [*srcs, 0]).gather()
            bc = dist_betweenness_centrality(g, k=6, seed=3, batch_size=4).gather()
            tri = dist_triangle_count(g).gather()
            cases[0] += 6
            if rank != 0:
                continue
            assert np.allclose(pr.scores, ref["pagerank"].scores, rtol=1e-9, atol=1e-15), \
                f"{tag}: pagerank"
            assert pr.iterations == ref["pagerank"].iterations, f"{tag}: pagerank iterations"
            assert np.array_equal(cc.labels, ref["components"].labels), f"{tag}: components"
            assert np.array_equal(cc.roots, ref["components"].roots), f"{tag}: roots"
            for s, r, want in zip(srcs, dist, ref["sssp"], strict=True):
                assert np.array_equal(r.distances, want), f"{tag}: sssp from {s}"
            assert np.array_equal(ms.levels, ref["msbfs"].levels), f"{tag}: msbfs levels"
            assert np.array_equal(ms.parents, ref["msbfs"].parents), f"{tag}: msbfs parents"
            assert np.allclose(bc, ref["betweenness"], rtol=1e-9, atol=1e-12,
                               equal_nan=True), f"{tag}: betweenness"
            assert np.array_equal(tri.per_vertex, ref["triangles"].per_vertex), \
                f"{tag}: triangles"


def main() -> None:
    """All cases on the grids of the command line; ``--engines``: the engine comparison only."""
    if "--engines" in sys.argv:
        sys.argv.remove("--engines")
        bfs_too = "--bfs" in sys.argv
        if bfs_too:
            sys.argv.remove("--bfs")
        install_excepthook()
        cases = [0]
        for shape in sys.argv[1:]:
            shape, _, only = shape.partition(":")
            with sub_grid(shape) as grid:
                if grid is None:
                    continue
                if bfs_too and grid.size == MPI.COMM_WORLD.Get_size():
                    from engine_cases import check_grid as check_bfs

                    t0 = time.perf_counter()
                    check_bfs(shape, cases, brief=True)  # the BFS on every engine, same launch
                    if grid.rank == 0:
                        print(f"{shape} BFS engine cases: {time.perf_counter() - t0:.1f} s")
                t0 = time.perf_counter()
                check_engines(grid, cases, tuple(only.split(",")) if only else BACKENDS)
                if STANDIN:
                    check_cupy_grid(grid)
                    check_auto_backend(grid)
                if grid.rank == 0:
                    print(f"{shape} algorithm cases: {time.perf_counter() - t0:.1f} s")
        if MPI.COMM_WORLD.Get_rank() == 0:
            bfs_note = " (the BFS engine cases too)" if bfs_too else ""
            print(f"ALL OK {cases[0]} cases on grids {' '.join(sys.argv[1:])}{bfs_note}",
                  flush=True)
        return

    def per_grid(grid: ProcessGrid) -> None:
        check_bad_input(grid)
        check_engines(grid, [0])

    run_cases(graphs, check_graph, per_grid, turn_formats=True)


if __name__ == "__main__":
    main()
