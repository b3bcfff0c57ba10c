"""spbfs.bfs(A, s) on a raw scipy csr matrix against scipy's own breadth_first_order.

The matrix is what a scipy user holds: a Kronecker graph (Graph500 generator,
edge factor 16) as a symmetric csr matrix, int32 ids, float64 values, both
directions of every edge stored. scipy runs
``breadth_first_order(A, s, directed=True, return_predecessors=True)``.
spbfs runs:

=====================  ==========================================================
row                    call
=====================  ==========================================================
one-off                ``spbfs.bfs(A, s, cache=MatrixCache())``: a fresh cache,
                       so the first search on ``A`` (checks, the rows of ``A``
                       read top-down; no digest, no Graph built)
one-off, no cache      ``spbfs.bfs(A, s, cache=False)`` (nothing remembered)
second call            the call that builds and keeps the Graph (a cache that
                       has seen ``A`` once); once per round, first root only
repeated               ``spbfs.bfs(A, s)`` with the Graph kept (digest of
                       ``A``'s structure on every call, then the search)
Graph, no matrix       ``spbfs.bfs(g, s)`` on the same Graph: what the digest adds
scipy, loop            scipy on every root in turn, per root: a user's loop
repeated, loop         ``spbfs.bfs(A, s)`` on every root in turn, per root
=====================  ==========================================================

Rounds are interleaved (every row for a root, then the next root; the order
of the rows alternates between rounds). Between two calls of one row the
other rows run, so each call finds the caches holding the other calls' data;
the two loop rows (one loop each per round, their order alternating, "x
scipy" against scipy's loop) time the calls back to back instead, as a
script that searches one matrix from many roots runs them. The table gives medians over rounds
and roots (roots drawn from the giant component) of wall time and of the
process's CPU time (all threads: on a machine whose cores are shared the wall
time holds the waits, the CPU time the work), each as a multiple of scipy's
(< 1: spbfs faster), and edges per second (nnz / 2) by wall time. Every
path's levels are checked equal to scipy's once per scale.

Run ``python benchmarks/scipy_input.py`` (``--scales 16 18``, ``--rounds``,
``--roots``, ``--threads`` to pin spbfs's numba threads, ``--markdown``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.sparse import csgraph

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import format_table, load_average, machine_line, median

import spbfs
from spbfs.generators import kronecker
from spbfs.matrix_cache import MatrixCache

ROWS = ["scipy", "one-off", "one-off, no cache", "second call", "repeated", "Graph, no matrix",
        "scipy, loop", "repeated, loop"]
LOOPS = {"scipy, loop": "scipy", "repeated, loop": "repeated"}


def scipy_levels(a: Any, s: int) -> np.ndarray:
    order, pred = csgraph.breadth_first_order(a, s, directed=True, return_predecessors=True)
    levels = np.full(a.shape[0], -1, dtype=np.int64)
    levels[s] = 0
    for v in order[1:]:
        levels[v] = levels[pred[v]] + 1
    return levels


def run_scale(scale: int, rounds: int, nroots: int, seed: int, cfg: spbfs.Config,
              ) -> tuple[list[list[Any]], str]:
    g0 = spbfs.Graph.from_edgelist(kronecker(scale, 16, seed=seed))
    a = g0.to_scipy()
    del g0
    n = a.shape[0]
    deg = np.diff(a.indptr)
    rng = np.random.default_rng(seed)
    # Roots in the giant component (the hub's): a root in a tiny one measures nothing.
    giant = np.flatnonzero(scipy_levels(a, int(np.argmax(deg))) >= 0)
    roots = rng.choice(giant, nroots, replace=False).tolist()
    kept = MatrixCache()
    for _ in range(2):  # numba compiles; the second call builds the kept Graph
        spbfs.bfs(a, roots[0], config=cfg, cache=kept)
    g = spbfs.Graph.from_matrix(a, config=cfg)

    ref = scipy_levels(a, roots[0])
    seen = MatrixCache()
    checks = {
        "one-off": spbfs.bfs(a, roots[0], config=cfg, cache=MatrixCache()),
        "one-off, no cache": spbfs.bfs(a, roots[0], config=cfg, cache=False),
        "second call": (spbfs.bfs(a, roots[0], config=cfg, cache=seen),
                        spbfs.bfs(a, roots[0], config=cfg, cache=seen))[1],
        "repeated": spbfs.bfs(a, roots[0], config=cfg, cache=kept),
        "Graph, no matrix": spbfs.bfs(g, roots[0], config=cfg),
    }
    for name, r in checks.items():
        if not np.array_equal(r.levels, ref):
            raise AssertionError(f"{name}: levels differ from scipy's")

    calls: dict[str, Callable[[int], Any]] = {
        "scipy": lambda s: csgraph.breadth_first_order(a, s, directed=True,
                                                       return_predecessors=True),
        "one-off": lambda s: spbfs.bfs(a, s, config=cfg, cache=MatrixCache()),
        "one-off, no cache": lambda s: spbfs.bfs(a, s, config=cfg, cache=False),
        "repeated": lambda s: spbfs.bfs(a, s, config=cfg, cache=kept),
        "Graph, no matrix": lambda s: spbfs.bfs(g, s, config=cfg),
    }
    times: dict[str, list[float]] = {k: [] for k in ROWS}
    cpu: dict[str, list[float]] = {k: [] for k in ROWS}
    clock, cpu_clock = time.perf_counter, time.process_time
    for rnd in range(rounds):
        order = list(calls) if rnd % 2 == 0 else list(reversed(calls))
        for k, s in enumerate(roots):
            if k == 0:
                fresh = MatrixCache()
                spbfs.bfs(a, s, config=cfg, cache=fresh)
                t0, c0 = clock(), cpu_clock()
                spbfs.bfs(a, s, config=cfg, cache=fresh)
                times["second call"].append(clock() - t0)
                cpu["second call"].append(cpu_clock() - c0)
            for name in order:
                t0, c0 = clock(), cpu_clock()
                calls[name](s)
                times[name].append(clock() - t0)
                cpu[name].append(cpu_clock() - c0)
        for name in (list(LOOPS) if rnd % 2 == 0 else list(reversed(LOOPS))):
            call = calls[LOOPS[name]]
            t0, c0 = clock(), cpu_clock()
            for s in roots:
                call(s)
            times[name].append((clock() - t0) / len(roots))
            cpu[name].append((cpu_clock() - c0) / len(roots))
    edges = a.nnz / 2  # undirected edges, as Graph500 counts them
    rows = []
    for name in ROWS:
        base = "scipy, loop" if name in LOOPS else "scipy"
        t, t_scipy = median(times[name]), median(times[base])
        c, c_scipy = median(cpu[name]), median(cpu[base])
        rows.append([name, f"{t * 1e3:.2f}", f"{t / t_scipy:.2f}", f"{c * 1e3:.2f}",
                     f"{c / c_scipy:.2f}", f"{edges / t / 1e6:.0f}"])
    desc = (f"Kronecker scale {scale} (n={n:,}, nnz={a.nnz:,}), {nroots} roots x {rounds} "
            f"rounds, threads={cfg.threads or 'default'}")
    return rows, desc


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scales", type=int, nargs="+", default=[16, 18])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--roots", type=int, default=4)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args(argv)
    cfg = spbfs.Config(threads=args.threads)
    print(machine_line())
    for scale in args.scales:
        load0 = load_average()
        rows, desc = run_scale(scale, args.rounds, args.roots, args.seed, cfg)
        print(f"\n{desc}; load before {load0}, after {load_average()}")
        print(format_table(["spbfs.bfs(A, s)", "wall ms", "x scipy", "CPU ms", "x scipy (CPU)",
                            "M edges/s (wall)"], rows, markdown=args.markdown, align="lrrrrr"))


if __name__ == "__main__":
    main()
