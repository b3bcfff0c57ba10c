"""The distributed algorithms' time on a process grid: one row per algorithm.

Run under mpiexec, e.g. ``mpiexec -n 4 python benchmarks/dist_algorithms.py
--grid 2x2 --scale 16``: a Kronecker graph (edge factor 16) built from every
rank's share of the edges, then each algorithm of
:mod:`spbfs.algorithms.distributed` once to warm up (numba compiles) and
``--repeat`` times timed; rank 0 prints the median seconds per algorithm, the
engine (``--backend``), the grid and the load average. Compare two trees by
running this script from each in turn (interleaved rounds), on the same
machine state.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--grid", default="2x2")
    ap.add_argument("--scale", type=int, default=16)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--backend", default="numba", choices=("numba", "numpy"))
    ap.add_argument("--tag", default="", help="a label printed in every row (the tree)")
    ap.add_argument("--only", default="", help="comma-separated algorithm names (default: all)")
    args = ap.parse_args()

    import spbfs.algorithms.distributed as D
    from spbfs import Config
    from spbfs.generators import kronecker
    from spbfs.mpi import DistGraph, ProcessGrid

    grid = ProcessGrid(args.grid)
    rank, size = grid.rank, grid.size
    el = kronecker(args.scale, 16, seed=1)
    m = el.src.shape[0]
    mine = slice(rank * m // size, (rank + 1) * m // size)
    g = DistGraph.from_edges(el.src[mine], el.dst[mine], el.n, grid=grid,
                             config=Config(backend=args.backend))
    w = np.random.default_rng(2).uniform(1.0, 100.0, m)
    wb = D.dist_weighted_block(g, el.src[mine], el.dst[mine], w[mine])
    deg = np.bincount(el.src, minlength=el.n)
    hubs = np.argsort(-deg, kind="stable")[:8].astype(np.int64)
    work: dict[str, Callable[[], Any]] = {
        "pagerank": lambda: D.dist_pagerank(g),
        "components": lambda: D.dist_connected_components(g),
        "sssp": lambda: D.dist_sssp(g, int(hubs[0]), weights=wb),
        "msbfs 8": lambda: D.dist_multi_source_bfs(g, hubs),
        "betweenness 8": lambda: D.dist_betweenness_centrality(g, sources=hubs, batch_size=8),
        "triangles": lambda: D.dist_triangle_count(g),
    }
    if args.only:
        keep = args.only.split(",")
        work = {k: v for k, v in work.items() if k.split()[0] in keep}
    rows = []
    for name, fn in work.items():
        fn()
        times = []
        for _ in range(args.repeat):
            grid.comm.Barrier()
            t0 = time.perf_counter()
            fn()
            grid.comm.Barrier()
            times.append(time.perf_counter() - t0)
        rows.append((name, statistics.median(times)))
    if rank == 0:
        load = os.getloadavg()[0]
        for name, t in rows:
            print(f"| {args.tag} | {args.grid} | {args.backend} | scale {args.scale} | {name} | "
                  f"{t * 1e3:.1f} ms | load {load:.1f} |", flush=True)
    grid.free()


if __name__ == "__main__":
    main()
