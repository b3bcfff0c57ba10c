"""Warm-up: compile (or load from numba's cache) every kernel a user may hit, ahead of use.

``spbfs warmup`` runs :func:`warmup` for images and clusters; ``spbfs bench``
runs :func:`warm_bench` so that what it times finds its kernels compiled. The
first-use notice and the test of whether a kernel is compiled are
:mod:`spbfs._compile`'s, which the search itself uses.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

from spbfs._compile import BENCH_SECONDS, install_notice, quiet_notice, ready

__all__ = ["warm_bench", "warmup"]



# Kronecker scale of the warm-up graph: its 2**17 edges are above the sizes that run on
# numpy while the kernels are not compiled (SMALL_VERTICES is for backend "auto" only;
# semirings._build.SMALL_PAIRS, semirings.kernels.SMALL_ENTRIES), so the warm-up compiles
# what a large input runs, and it takes milliseconds once compiled.
_WARM_SCALE = 13


def _kronecker(config: Any, directed: bool = False) -> Any:
    import spbfs
    from spbfs.generators import KroneckerSource

    return spbfs.Graph.from_source(KroneckerSource(_WARM_SCALE, 16, seed=1), directed=directed,
                                   config=config)


def _numba(config: Any) -> Any:
    """``config`` on numba where it resolves to numba ("auto" searches small graphs on numpy)."""
    from semirings.backend import get_backend

    return config.replace(backend="numba") if get_backend(config.backend).name == "numba" \
        else config


def _steps() -> list[tuple[str, Callable[[], Any]]]:
    """What ``spbfs warmup`` runs: calls that reach every kernel a user may hit."""
    import numpy as np

    import spbfs
    from spbfs.config import Config

    steps: list[tuple[str, Callable[[], Any]]] = []

    def searches(fmt: str) -> None:
        for directed in (False, True):
            g = _kronecker(Config(format=fmt, backend="numba"), directed)
            root = int(np.argmax(g.backend.to_host(g.out_degree)))
            for direction in ("auto", "top-down", "bottom-up"):
                for output in ("both", "levels", "parents"):
                    spbfs.bfs(g, root, direction=direction, output=output)
                spbfs.bfs(g, root, direction=direction, max_depth=1)
                spbfs.bfs(g, root, direction=direction, target=(root + 1) % g.n)

    for fmt in ("csr", "dcsc"):
        steps.append((f"bfs, {fmt}", lambda fmt=fmt: searches(fmt)))

    def bench_path() -> None:
        for fmt in ("csr", "dcsc"):
            warm_bench(Config(format=fmt, backend="numba"))

    steps.append(("generate, build, validate", bench_path))

    def algorithms() -> None:
        g = _kronecker(Config(backend="numba"))
        spbfs.connected_components(g)
        spbfs.pagerank(g)
        spbfs.kernels.ranking_numba.warm_parallel()  # large graphs' parallel iteration
        spbfs.betweenness_centrality(g, k=2, seed=1)
        spbfs.triangle_count(g)
        spbfs.multi_source_bfs(g, [0, 1])
        spbfs.sssp(g.to_scipy().astype(np.float64), 0)

    steps.append(("algorithms", algorithms))

    def csgraph() -> None:
        from spbfs import csgraph as cs

        g = _kronecker(Config(backend="numba"))
        m = g.to_scipy().astype(np.float64)
        cs.dijkstra(m, indices=0)
        cs.dijkstra(m, indices=0, return_predecessors=True)
        cs.breadth_first_order(m, 0)
        cs.connected_components(m)

    steps.append(("csgraph", csgraph))
    return steps


def warm_bench(config: Any, *, validate: bool = True) -> float:
    """Run ``spbfs bench``'s path on a small Kronecker graph; returns the seconds.

    Generation, the streamed build, searches in every direction and the
    validation of :func:`spbfs.graph500.run_benchmark`, with ``config``: what
    the benchmark then times finds its kernels compiled.
    """
    import spbfs
    from spbfs.graph500 import run_benchmark, sample_roots
    from spbfs.kernels import bfs_numba

    t0 = time.perf_counter()
    if not ready(bfs_numba.search_levels):
        install_notice().announce("bench", BENCH_SECONDS)  # one line for all it compiles

    def one(root: int) -> tuple[Any, Any]:
        r = spbfs.bfs(g, int(root))
        return r.parents, r.levels

    with quiet_notice():
        g = _kronecker(_numba(config))
        roots = sample_roots(g.backend.to_host(g.out_degree), 2, seed=1)
        for direction in ("top-down", "bottom-up"):
            spbfs.bfs(g, int(roots[0]), direction=direction)
        run_benchmark(one, g, roots, validate=validate, warmup=False)
    return time.perf_counter() - t0


def warmup(file: TextIO | None = None) -> float:
    """Compile (or load from the cache) every kernel a user may hit; returns the seconds.

    Each step is printed with its time on ``file`` (stdout by default). Run it
    once in an image or on a cluster's shared file system, where numba's cache
    (``__pycache__`` beside the sources, or ``$NUMBA_CACHE_DIR``) is written for
    every later process.
    """
    out = sys.stdout if file is None else file
    t0 = time.perf_counter()
    with quiet_notice():
        for label, step in _steps():
            t = time.perf_counter()
            out.write(f"warmup  {label:<28}")
            out.flush()
            step()
            out.write(f"{time.perf_counter() - t:7.1f} s\n")
            out.flush()
    total = time.perf_counter() - t0
    out.write(f"warmup  {'total':<28}{total:7.1f} s\n")
    out.flush()
    return total
