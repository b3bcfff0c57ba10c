"""Warm-up: compile (or load from numba's cache) every kernel a user may hit, ahead of use.

``spbfs warmup`` runs :func:`warmup` for images and clusters; ``spbfs bench``
runs :func:`warm_bench` so that what it times finds its kernels compiled. The
first-use notice and the test of whether a kernel is compiled are
:mod:`spbfs._compile`'s, which the search itself uses.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from spbfs import threads
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


def _steps(aside: subprocess.Popen[bytes] | None = None) -> list[tuple[str, Callable[[], Any]]]:
    """What ``spbfs warmup`` runs: calls that reach every kernel a user may hit.

    ``aside`` is a process compiling the csr search kernel (:func:`_search_aside`):
    the dcsc searches come first, and the csr ones wait for it.
    """
    import numpy as np

    import spbfs
    from spbfs.config import Config

    steps: list[tuple[str, Callable[[], Any]]] = []

    def searches(fmt: str) -> None:
        if fmt == "csr" and aside is not None:
            aside.wait()  # its kernels are in the cache now, to be loaded
        threads.warm()
        for directed in (False, True):
            g = _kronecker(Config(format=fmt, backend="numba"), directed)
            root = int(np.argmax(g.backend.to_host(g.out_degree)))
            for direction in ("auto", "top-down", "bottom-up"):
                for output in ("both", "levels", "parents"):
                    spbfs.bfs(g, root, direction=direction, output=output)
                spbfs.bfs(g, root, direction=direction, max_depth=1)
                spbfs.bfs(g, root, direction=direction, target=(root + 1) % g.n)

    for fmt in ("dcsc", "csr"):
        steps.append((f"bfs, {fmt}", lambda fmt=fmt: searches(fmt)))

    def bench_path() -> None:
        for fmt in ("csr", "dcsc"):
            warm_bench(Config(format=fmt, backend="numba"))

    steps.append(("generate, build, validate", bench_path))

    def algorithms() -> None:
        g = _kronecker(Config(backend="numba"))
        spbfs.connected_components(g)
        spbfs.connected_components(_kronecker(Config(backend="numba"), True), connection="strong")
        spbfs.pagerank(g)
        spbfs.kernels.ranking_numba.warm_parallel()  # large graphs' parallel iteration
        spbfs.betweenness_centrality(g, k=2, seed=1)
        spbfs.triangle_count(g)
        spbfs.multi_source_bfs(g, [0, 1])
        spbfs.multi_source_bfs(g, [0, 1], output="levels")  # the queue kernel of deep graphs
        spbfs.sssp(g.to_scipy().astype(np.float64), 0)
        spbfs.sssp(g.to_scipy().astype(np.float64), 0, delta=2.0)  # light edges: split_light

    steps.append(("algorithms", algorithms))

    def csgraph() -> None:
        import scipy.sparse as sp

        from spbfs import csgraph as cs
        from spbfs.kernels import components_numba as cc

        g = _kronecker(Config(backend="numba"))
        m = g.to_scipy().astype(np.float64)
        cs.dijkstra(m, indices=0)
        cs.dijkstra(m, indices=0, return_predecessors=True)
        cs.breadth_first_order(m, 0)
        cs.breadth_first_order(m, 0, directed=False)  # the symmetry check as well
        cs.breadth_first_tree(m, 0)
        upper = sp.triu(m).tocsr()  # not symmetric: undirected calls build the transpose
        cs.breadth_first_order(upper, 0, directed=False)
        cs.dijkstra(upper, directed=False, indices=0)
        cs.connected_components(m)
        # Sources in parallel chunks, as a large graph's multi-source call runs them.
        from spbfs.kernels import sssp_numba

        two = np.array([0, 1, 2], dtype=np.int64)
        for pred in (None, np.full((2, m.shape[0]), -9999, dtype=np.int32)):
            sssp_numba.run(m.indptr, m.indices, m.data, two, two[:2], pred=pred, parts=2)
        # Directly: the csgraph call hands a graph this small to scipy until it is compiled.
        cc.strong_labels(cc.unsigned(m.indptr), cc.unsigned(m.indices))

    steps.append(("csgraph", csgraph))

    def networkx_backend() -> None:
        from spbfs.nxbackend._algorithms import _queue_into

        # Its one-source searches in networkx's order (int64 rows, as converted).
        ptr, nbr = np.array([0, 1, 2], np.int64), np.array([1, 0], np.int64)
        _queue_into(ptr, nbr, 0, 2, True, np.full(2, -1, np.int64), np.empty(2, np.int64),
                    np.empty(2, np.int64))

    steps.append(("networkx backend", networkx_backend))
    return steps


def _cores() -> int:
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else os.cpu_count() or 1


def _search_aside(config: Any) -> subprocess.Popen[bytes] | None:
    """Start compiling the search kernel of :func:`_kronecker`'s graph on ``config`` in a
    second process.

    numba compiles on one thread per process, and the search kernel
    (``search_levels`` and its callees) is most of a first warm-up: it then
    compiles on a second core while this process compiles the others (the
    generator's, the build's and the validation's in :func:`warm_bench`, the
    other format's in :func:`warmup`). The two meet in numba's on-disk cache,
    from which this process loads what the other wrote; what it did not write
    (no writable cache, a failed process) this process compiles itself, as it
    would have. None on one core.
    """
    if _cores() < 2:
        return None
    import spbfs

    # The package this process runs, first on the path: the same kernels, the same cache.
    root = str(Path(spbfs.__file__).resolve().parents[1])
    env = {**os.environ,
           "PYTHONPATH": os.pathsep.join(filter(None, (root, os.environ.get("PYTHONPATH"))))}
    fields = repr(dataclasses.asdict(config))
    code = f"from spbfs.warmup import _compile_search; _compile_search({fields!r})"
    return subprocess.Popen([sys.executable, "-c", code], env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _search_graph(config: Any) -> Any:
    """A small graph whose search kernels have the types of :func:`_kronecker`'s.

    Built on numpy (a small input is while the build's kernels are not
    compiled: :func:`_compile_search` leaves those to the other process). Half
    of the ids are isolated, as in a Kronecker graph: a dcsc block then has
    empty columns, which select its kernels' form.
    """
    import numpy as np

    import spbfs

    n = 1 << 10
    rng = np.random.default_rng(1)
    src, dst = rng.integers(0, n // 2, (2, 4 * n))
    return spbfs.Graph.from_edges(src, dst, n=n, config=config)


def _compile_search(fields: str) -> None:
    """:func:`_search_aside`'s process: a search of :func:`_search_graph` on
    ``Config(**fields)``, bottom-up (a small graph's top-down search takes the
    small search, not the numba search kernel)."""
    import ast

    import spbfs
    from spbfs.config import Config

    with quiet_notice():
        g = _search_graph(_numba(Config(**ast.literal_eval(fields))))
        spbfs.bfs(g, int(g.backend.to_host(g.out_degree).argmax()), direction="bottom-up")


def warm_bench(config: Any, *, validate: bool = True) -> float:
    """Run ``spbfs bench``'s path on a small Kronecker graph; returns the seconds.

    Generation, the streamed build, searches in every direction and the
    validation of :func:`spbfs.graph500.run_benchmark`, with ``config``: what
    the benchmark then times finds its kernels compiled. Where the search
    kernel is not compiled, a second process compiles it meanwhile
    (:func:`_search_aside`).
    """
    import spbfs
    from spbfs.graph500 import run_benchmark, sample_roots
    from spbfs.kernels import bfs_numba

    t0 = time.perf_counter()
    aside = None
    if not ready(bfs_numba.search_levels):
        install_notice().announce("bench", BENCH_SECONDS)  # one line for all it compiles
        aside = _search_aside(_numba(config))

    def one(root: int) -> tuple[Any, Any]:
        r = spbfs.bfs(g, int(root))
        return r.parents, r.levels

    try:
        with quiet_notice():
            g = _kronecker(_numba(config))
            roots = sample_roots(g.backend.to_host(g.out_degree), 2, seed=1)
            if aside is not None:
                # Meanwhile this process compiles the validation's kernels, on a search
                # by numpy (the same int64 results), then loads the other's from the cache.
                r = spbfs.bfs(g, int(roots[0]), config=config.replace(backend="numpy"))
                run_benchmark(lambda root: (r.parents, r.levels), g, roots[:1],
                              validate=validate, warmup=False)
                aside.wait()
            for direction in ("top-down", "bottom-up"):
                spbfs.bfs(g, int(roots[0]), direction=direction)
            run_benchmark(one, g, roots, validate=validate, warmup=False)
            threads.warm()  # the first reading of the machine, in a larger graph's search
    finally:
        if aside is not None and aside.poll() is None:
            aside.kill()
            aside.wait()
    return time.perf_counter() - t0


def warmup(file: TextIO | None = None) -> float:
    """Compile (or load from the cache) every kernel a user may hit; returns the seconds.

    Each step is printed with its time on ``file`` (stdout by default). Run it
    once in an image or on a cluster's shared file system, where numba's cache
    (``__pycache__`` beside the sources, or ``$NUMBA_CACHE_DIR``) is written for
    every later process. Where the search kernel is not compiled, a second
    process compiles its csr form meanwhile (:func:`_search_aside`).
    """
    from spbfs.config import Config
    from spbfs.kernels import bfs_numba

    out = sys.stdout if file is None else file
    t0 = time.perf_counter()
    aside = None
    if not ready(bfs_numba.search_levels):
        aside = _search_aside(Config(format="csr", backend="numba"))
    try:
        with quiet_notice():
            for label, step in _steps(aside):
                t = time.perf_counter()
                out.write(f"warmup  {label:<28}")
                out.flush()
                step()
                out.write(f"{time.perf_counter() - t:7.1f} s\n")
                out.flush()
    finally:
        if aside is not None and aside.poll() is None:
            aside.kill()
            aside.wait()
    total = time.perf_counter() - t0
    out.write(f"warmup  {'total':<28}{total:7.1f} s\n")
    out.flush()
    return total
