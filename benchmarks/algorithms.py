"""spbfs's semiring algorithms against scipy, networkx and python-graphblas.

One Kronecker graph (Graph500 generator, undirected), one table: per
algorithm the median time of spbfs (numba backend, ``--format``) and of each
peer, and the peer/spbfs ratio (> 1: spbfs is faster). Every peer works on
the same input and the same sources, and its result is compared with
spbfs's before it is timed (a mismatch prints WRONG instead of a time).

=====================  ============================  ===============================
algorithm              workload                      peers
=====================  ============================  ===============================
msbfs                  levels from ``--sources``     scipy ``shortest_path(unweighted)``,
                       sources                       networkx per-source BFS (on 4
                                                     sources, scaled: marked ``*``),
                                                     graphblas masked ``any_pair`` mxm
sssp                   one source, weights uniform   scipy ``dijkstra``, networkx
                       in [1, 100) (weighted block   ``single_source_dijkstra``,
                       built once, not timed)
                                                     graphblas ``min_plus`` Bellman-Ford
cc                     all vertices                  scipy ``connected_components``,
                                                     networkx, graphblas min-label
                                                     propagation
pagerank               alpha 0.85, tol 1e-6          scipy power iteration, networkx
                                                     ``pagerank``, graphblas ``plus_times``
triangles              per-vertex counts             scipy ``(A @ A) .* A``, networkx
                                                     ``triangles``, graphblas masked
                                                     ``plus_pair`` (LAGraph Sandia LL,
                                                     total only)
betweenness            ``--bc-k`` sampled sources    networkx (same sources), graphblas
                                                     batched Brandes
=====================  ============================  ===============================

Build times are not included; each tool is warmed up once (numba compilation,
GraphBLAS initialization). networkx is timed once (it is slow), the others
``--repeat`` times.

Run ``python benchmarks/algorithms.py --scale 16``; ``--no-networkx`` skips
networkx (its graph takes a few GiB at scale 18).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import format_table, machine_line, median

import spbfs
from spbfs.algorithms import weighted_block
from spbfs.generators import kronecker

PEERS = ("scipy", "networkx", "graphblas")


def _time(f: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """Median seconds of ``repeat`` runs after one warm-up, and the last result."""
    out = f()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t)
    return median(times), out


# -- graphblas implementations (LAGraph-style) --------------------------------------
def gb_msbfs(gb: Any, a: Any, sources: np.ndarray) -> np.ndarray:
    """Levels of a multi-source BFS: ``F<!V, replace> = F any.pair A``."""
    k, n = len(sources), a.nrows
    f = gb.Matrix.from_coo(np.arange(k), sources, True, nrows=k, ncols=n)
    lev = gb.Matrix.from_coo(np.arange(k), sources, 0, dtype=gb.dtypes.INT64, nrows=k, ncols=n)
    d = 0
    while f.nvals:
        d += 1
        f(~lev.S, replace=True) << f.mxm(a, gb.semiring.any_pair)
        lev(f.S)[:, :] = d
    return lev.to_dense(fill_value=-1)


def gb_sssp(gb: Any, w: Any, source: int) -> np.ndarray:
    """Bellman-Ford over ``min_plus`` with a frontier of improved vertices."""
    n = w.nrows
    dist = gb.Vector.from_dense(np.full(n, np.inf))
    dist[source] = 0.0
    front = gb.Vector(gb.dtypes.FP64, n)
    front[source] = 0.0
    while front.nvals:
        cand = front.vxm(w, gb.semiring.min_plus).new()
        better = cand.ewise_mult(dist, gb.binary.lt).new()
        front = gb.Vector(gb.dtypes.FP64, n)
        front(better.V) << cand
        dist(front.S) << front
    return dist.to_dense()


def gb_cc(gb: Any, a: Any) -> np.ndarray:
    """Min-label propagation over ``min_second`` with shortcutting."""
    n = a.nrows
    lab = gb.Vector.from_dense(np.arange(n, dtype=np.int64))
    while True:
        y = a.mxv(lab, gb.semiring.min_second[gb.dtypes.INT64]).new()
        new = lab.ewise_add(y, gb.binary.min).new()
        vals = new.to_dense().astype(np.int64)
        while True:
            j = vals[vals]
            if np.array_equal(j, vals):
                break
            vals = j
        new = gb.Vector.from_dense(vals)
        if new.isequal(lab):
            return vals
        lab = new


def gb_pagerank(gb: Any, a: Any, alpha: float = 0.85, tol: float = 1e-6) -> np.ndarray:
    n = a.nrows
    deg = a.reduce_rowwise(gb.agg.count).new(dtype=gb.dtypes.FP64).to_dense(fill_value=0.0)
    dangling = deg == 0
    inv = np.where(dangling, 0.0, 1.0 / np.where(dangling, 1.0, deg))
    x = np.full(n, 1.0 / n)
    for _ in range(100):
        y = gb.Vector.from_dense(x * inv).vxm(a, gb.semiring.plus_times).new()
        new = alpha * (y.to_dense(fill_value=0.0) + x[dangling].sum() / n) + (1 - alpha) / n
        err = np.abs(new - x).sum()
        x = new
        if err < n * tol:
            break
    return x


def gb_triangles(gb: Any, a: Any) -> int:
    """LAGraph's Sandia LL: ``C<L> = L plus.pair L'`` summed."""
    low = gb.select.tril(a, -1).new()
    c = gb.Matrix(gb.dtypes.INT64, a.nrows, a.ncols)
    c(low.S) << low.mxm(low.T, gb.semiring.plus_pair)
    return int(c.reduce_scalar().value or 0)


def gb_betweenness(gb: Any, a: Any, sources: np.ndarray) -> np.ndarray:
    """Batched Brandes (LAGraph's LAGr_Betweenness), unnormalized sums."""
    k, n = len(sources), a.nrows
    paths = gb.Matrix.from_coo(np.arange(k), sources, 1.0, nrows=k, ncols=n)
    front = paths.dup()
    front(~paths.S, replace=True) << front.mxm(a, gb.semiring.plus_first)
    fronts = [gb.Matrix.from_coo(np.arange(k), sources, True, nrows=k, ncols=n)]
    while front.nvals:
        fronts.append(gb.Matrix(bool, k, n))
        fronts[-1](front.S) << True
        paths(gb.binary.plus) << front
        front(~paths.S, replace=True) << front.mxm(a, gb.semiring.plus_first)
    bcu = gb.Matrix.from_dense(np.ones((k, n)))
    w = gb.Matrix(gb.dtypes.FP64, k, n)
    for d in range(len(fronts) - 1, 1, -1):  # the sources themselves get nothing
        w(fronts[d].S, replace=True) << bcu.ewise_mult(paths, gb.binary.truediv)
        w(fronts[d - 1].S, replace=True) << w.mxm(a.T, gb.semiring.plus_first)
        bcu(gb.binary.plus) << w.ewise_mult(paths, gb.binary.times)
    out = bcu.reduce_columnwise().new().to_dense(fill_value=0.0) - k
    return out


# -- scipy implementations ---------------------------------------------------------------
def sp_pagerank(a: sp.csr_matrix, alpha: float = 0.85, tol: float = 1e-6) -> np.ndarray:
    n = a.shape[0]
    deg = np.asarray(a.sum(axis=1)).ravel()
    dangling = deg == 0
    inv = np.where(dangling, 0.0, 1.0 / np.where(dangling, 1.0, deg))
    at = a.T.tocsr()
    x = np.full(n, 1.0 / n)
    for _ in range(100):
        new = alpha * (at @ (x * inv) + x[dangling].sum() / n) + (1 - alpha) / n
        err = np.abs(new - x).sum()
        x = new
        if err < n * tol:
            break
    return x


def sp_triangles(a: sp.csr_matrix) -> np.ndarray:
    c = (a @ a).multiply(a)
    return np.asarray(c.sum(axis=1)).ravel().astype(np.int64) // 2


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=16)
    ap.add_argument("--edgefactor", type=int, default=16)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--format", choices=("csr", "dcsc"), default="csr")
    ap.add_argument("--sources", type=int, default=64, help="msbfs sources")
    ap.add_argument("--bc-k", type=int, default=32, help="betweenness sampled sources")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-networkx", action="store_true")
    ap.add_argument("--no-triangles-scipy", action="store_true",
                    help="skip scipy's A @ A (memory grows fast with the scale)")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args(argv)

    edges = kronecker(args.scale, args.edgefactor, seed=args.seed)
    g = spbfs.Graph.from_edgelist(edges, config=spbfs.Config(format=args.format,
                                                               backend="numba"))
    a = g.to_scipy().astype(np.float64)
    n = g.n
    print(f"Kronecker scale {args.scale}, edge factor {args.edgefactor}, seed {args.seed}: "
          f"n={n:,}, undirected edges={g.num_edges:,}, format {args.format}")
    print(machine_line())
    rng = np.random.default_rng(args.seed)
    reach = np.flatnonzero(g.out_degree > 0)
    sources = np.sort(rng.choice(reach, size=min(args.sources, reach.size), replace=False))
    upper = sp.triu(a, 1).tocoo()
    wvals = rng.uniform(1.0, 100.0, upper.nnz)
    wu = sp.coo_matrix((wvals, (upper.row, upper.col)), shape=a.shape)
    w = (wu + wu.T).tocsr()
    src0 = int(sources[0])

    import graphblas as gb

    gb_a = gb.Matrix.from_csr(a.indptr, a.indices, 1.0, nrows=n, ncols=n)
    gb_w = gb.Matrix.from_csr(w.indptr, w.indices, w.data, nrows=n, ncols=n)
    nxg: Any = None
    if not args.no_networkx:
        import networkx as nx

        t = time.perf_counter()
        nxg = nx.Graph()
        nxg.add_nodes_from(range(n))
        wc = w.tocoo()
        keep = wc.row < wc.col
        nxg.add_weighted_edges_from(zip(wc.row[keep].tolist(), wc.col[keep].tolist(),
                                        wc.data[keep].tolist(), strict=True))
        print(f"networkx graph built in {time.perf_counter() - t:.1f} s (not timed below)")
    bc_sources = np.array(random.Random(args.seed).sample(range(n), args.bc_k), dtype=np.int64)

    rows: list[list[str]] = []
    rep = args.repeat

    def row(name: str, ours: Callable[[], Any], peers: dict[str, Any],
            same: Callable[[Any, Any], bool], note: str = "") -> None:
        t_ours, ref = _time(ours, rep)
        cells = [name, f"{t_ours * 1e3:.1f}"]
        ratios = []
        for peer in PEERS:
            spec = peers.get(peer)
            if spec is None:
                cells.append("-")
                ratios.append("-")
                continue
            f, scale_by, once = spec
            t_peer, out = _time(f, 1 if once else rep)
            t_peer *= scale_by
            mark = "*" if scale_by != 1 else ""
            if out is not None and not same(ref, out):
                cells.append("WRONG")
                ratios.append("-")
                continue
            cells.append(f"{t_peer * 1e3:.1f}{mark}")
            ratios.append(f"{t_peer / t_ours:.2f}")
        rows.append(cells + ratios + [note])
        print("  done:", name, flush=True)

    # msbfs
    nx_k = min(4, len(sources))

    def nx_msbfs() -> Any:
        import networkx as nx

        for s in sources[:nx_k]:
            nx.single_source_shortest_path_length(nxg, int(s))
        return None

    from scipy.sparse.csgraph import connected_components as sp_cc
    from scipy.sparse.csgraph import dijkstra, shortest_path

    row(
        "msbfs",
        lambda: spbfs.multi_source_bfs(g, sources, output="levels").levels,
        {
            "scipy": (lambda: shortest_path(a, unweighted=True, indices=sources), 1, False),
            "networkx": None if nxg is None else (nx_msbfs, len(sources) / nx_k, True),
            "graphblas": (lambda: gb_msbfs(gb, gb_a, sources), 1, False),
        },
        lambda ours, peer: np.array_equal(np.where(ours < 0, np.inf, ours), peer)
        if peer.dtype.kind == "f" else np.array_equal(ours, peer),
        f"{len(sources)} sources",
    )

    def nx_sssp() -> np.ndarray:
        import networkx as nx

        d = nx.single_source_dijkstra_path_length(nxg, src0)
        out = np.full(n, np.inf)
        out[list(d)] = list(d.values())
        return out

    t = time.perf_counter()
    wblock = weighted_block(g, w)  # like the peers' weighted matrices: built once
    t_build = time.perf_counter() - t
    row(
        "sssp",
        lambda: spbfs.sssp(g, src0, weights=wblock).distances,
        {
            "scipy": (lambda: dijkstra(w, indices=src0), 1, False),
            "networkx": None if nxg is None else (nx_sssp, 1, True),
            "graphblas": (lambda: gb_sssp(gb, gb_w, src0), 1, False),
        },
        lambda ours, peer: np.allclose(ours, peer),
        f"1 source, weights U[1, 100); weighted block built once in {t_build * 1e3:.0f} ms",
    )

    def nx_cc() -> np.ndarray:
        import networkx as nx

        out = np.empty(n, np.int64)
        for comp in nx.connected_components(nxg):
            c = list(comp)
            out[c] = min(c)
        return out

    row(
        "cc",
        lambda: spbfs.connected_components(g).roots,
        {
            "scipy": (lambda: sp_cc(a, directed=False)[1], 1, False),
            "networkx": None if nxg is None else (nx_cc, 1, True),
            "graphblas": (lambda: gb_cc(gb, gb_a), 1, False),
        },
        lambda ours, peer: _same_partition(ours, peer),
    )

    def nx_pr() -> np.ndarray:
        import networkx as nx

        d = nx.pagerank(nxg, weight=None)
        return np.array([d[i] for i in range(n)])

    row(
        "pagerank",
        lambda: spbfs.pagerank(g).scores,
        {
            "scipy": (lambda: sp_pagerank(a), 1, False),
            "networkx": None if nxg is None else (nx_pr, 1, True),
            "graphblas": (lambda: gb_pagerank(gb, gb_a), 1, False),
        },
        lambda ours, peer: np.allclose(ours, peer, atol=1e-6),
    )

    def nx_tri() -> np.ndarray:
        import networkx as nx

        d = nx.triangles(nxg)
        return np.array([d[i] for i in range(n)])

    row(
        "triangles",
        lambda: spbfs.triangle_count(g).per_vertex,
        {
            "scipy": None if args.no_triangles_scipy else (lambda: sp_triangles(a), 1, True),
            "networkx": None if nxg is None else (nx_tri, 1, True),
            "graphblas": (lambda: gb_triangles(gb, gb_a), 1, False),
        },
        lambda ours, peer: (int(ours.sum()) // 3 == peer) if np.isscalar(peer)
        else np.array_equal(ours, peer),
        "graphblas: total only",
    )

    def nx_bc() -> np.ndarray:
        import networkx as nx

        d = nx.betweenness_centrality(nxg, k=args.bc_k, seed=args.seed, normalized=False)
        return np.array([d[i] for i in range(n)])

    def gb_bc() -> np.ndarray:
        # Raw sums scaled as spbfs/networkx scale an undirected sample.
        raw = gb_betweenness(gb, gb_a, bc_sources)
        big_n, k = n - 1, len(bc_sources)
        scale = np.full(n, big_n / (2 * k))
        scale[bc_sources] = big_n / (2 * (k - 1))
        return raw * scale

    row(
        "betweenness",
        lambda: spbfs.betweenness_centrality(g, sources=bc_sources, normalized=False),
        {
            "networkx": None if nxg is None else (nx_bc, 1, True),
            "graphblas": (gb_bc, 1, False),
        },
        lambda ours, peer: np.allclose(ours, peer, rtol=1e-8, atol=1e-6),
        f"{args.bc_k} sampled sources",
    )

    headers = ["algorithm", "spbfs ms", *(f"{p} ms" for p in PEERS),
               *(f"{p}/spbfs" for p in PEERS), "note"]
    print()
    print(format_table(headers, rows, markdown=args.markdown, align="l" + "r" * 7 + "l"))
    print("ratio = peer time / spbfs time (> 1: spbfs faster); * = networkx on "
          f"{nx_k} of {len(sources)} sources, scaled")
    return 0


def _same_partition(x: np.ndarray, y: np.ndarray) -> bool:
    """Whether two labelings put the same vertices together."""
    pairs = np.unique(np.stack([x, y]), axis=1)
    return pairs.shape[1] == np.unique(x).size == np.unique(y).size


if __name__ == "__main__":
    sys.exit(main())
