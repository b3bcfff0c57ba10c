"""Is the default the fast choice? ``spbfs.bfs`` as called, against its own best and scipy.

Two tables, from one interleaved run (every setting searches the same sources,
source by source, each call following every other equally often, so load changes
and what the call before left in the caches hit every setting alike):

**Per call**: microseconds of one search on small inputs, where fixed costs
rule: the prebuilt karate graph (source 0), a vertex without edges of the
largest graph given (or of a generated one), a 100-vertex path (end vertex),
and, from a vertex of the most edges, graphs of 10-21 k arcs, large enough for
the numba engine (a random graph of 1,000 vertices and 10 k arcs, a 60 x 60 grid
from its corner, Kronecker scale 10 of 21 k arcs), each as ``spbfs.bfs(g, s)``
against ``scipy.sparse.csgraph.breadth_first_order`` on the graph's csr matrix
(float64 data, int32 indices: nothing for scipy to convert); and
``list(nx.bfs_edges(G, 0, backend="spbfs"))``, and the same call with
``nx.config.backend_priority.algos = ["spbfs"]``, against networkx's own on
karate and on a random graph of 10^4 edges (2,500 nodes). On karate also the
same two calls to a do-nothing backend registered for the run (its ``bfs_edges``
is networkx's own function on the graph it was given; it converts nothing, and
declines through ``should_run`` under ``backend_priority`` as spbfs does): what
networkx's dispatcher alone costs, which no backend can take back.

**Per graph**: median milliseconds (median over the sources of each source's
median) of the default (``spbfs.bfs(g, s)``, nothing set), ``threads=1``, every
setting of threads (1, 2) x direction (auto, top-down) with the best of them
named, and scipy; quiet and with ``--busy`` processes (``while True: pass``)
beside it. The ratios: default / best setting and default / scipy. ``uptime``
is printed before each pass. With ``--gapbs DIR`` (a GAPBS checkout built with
``make``: ``DIR/bfs``) also GAPBS on the same graph (written as its ``.sg``,
directed graphs with their in-edges) and sources, one process per source and
thread count (1 and 2, ``OMP_NUM_THREADS``) under the same busy processes, the
median of its ``Trial Time`` lines after the first; the better of the two counts
is the column. GAPBS times trials that follow each other in one process, from
one source: the caches and the CPU's clock are as the trial before left them.
The interleaved default is not (another setting, or scipy, and a 2 ms pause came
before it: on this machine a 2 ms pause alone makes a 65 µs search 200 µs, and
scipy's 160 µs one 280 µs), so each is compared with its like:

* ``in a row / GAPBS``: the default timed as GAPBS times, ``repeat`` calls in a
  row from each source after one untimed (``default in a row``), against GAPBS;
* ``paused / GAPBS paused``: the default timed as GAPBS's paused build times,
  ``repeat`` calls in a row from each source with a 2 ms sleep before each
  (``default paused``), against GAPBS built from ``DIR``'s source with a 2 ms
  sleep before each trial's clock starts (:func:`gapbs.build_gapbs`
  ``pause_ms``; cached). Neither has other work between its calls: the
  interleaved default has the other settings' and scipy's searches, whose data
  (scipy's copy of the matrix, the settings' scratch arrays) push the default's
  out of the core's caches (wiki-Vote-like: 0.18 ms interleaved, 0.14 ms paused
  alone, 0.12 ms in a row).

Both compare a search repeated from one source, which no real workload runs: the
CPU's branch predictors learn that one search, and two threads, with a predictor
each, learn it better (wiki-Vote-like: two threads 2.5x one on the first bottom-up
level in a row, 1.5x with a new source each call). So GAPBS also runs as its own
benchmark does, without ``-r``: up to ``--trials`` trials in one process, each
from the next source its picker draws (a fixed seed), per thread count; *drawn*
times the default over the same sources in turn, three rounds. Both sides' figure
is the mean of their times without the 10 % lowest and highest (GAPBS prints 10 µs
steps; a median of many is one of them). The grid rows have one named source each
(searched in ``--roots`` blocks, each in its own order) and no such column.

Both time a whole search with its
O(n) setup (GAPBS: the parent array's allocation and fill, its queue and
bitmaps; spbfs: the int64 parents and levels written from the search's state,
which is reset in the same pass); spbfs's also includes the Python call and the
result object.

Graphs: the files given (``--gnutella``, ``--osm``: SNAP edge list, Matrix
Market; skipped when absent), a wiki-Vote-like and a pgp-like directed graph
(R-MAT, :func:`spbfs.generators.rmat`, directed: scale 13 / edge factor 13,
8,192 vertices and 106 k arcs, against wiki-Vote's 7,115 and 104 k; scale 14 /
edge factor 2, 16,384 vertices and 33 k arcs, against the PGP network's 10,680
and 24 k edges), the 1000 x 1000 grid (corner and centre sources), a 2-D
finite-element mesh (:func:`spbfs.generators.fe_mesh`), Kronecker at the
``--scales`` given (Graph500 parameters, undirected).

Usage (repository root, venv active)::

    python benchmarks/defaults.py --gnutella /path/p2p-Gnutella31.txt \\
        --osm /path/luxembourg_osm.mtx --busy 0 1
    python benchmarks/defaults.py --per-call-only
    python benchmarks/defaults.py --gapbs /work/gapbs --scales 18 20 22 --busy 0 1
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np
from _common import format_table, machine_line, set_omp_wait, start_busy, stop_busy, uptime

SETTINGS = [(t, d) for t in (1, 2) for d in ("auto", "top-down")]


def _calls_each(n: int, repeat: int) -> int:
    """How many times each of ``n`` calls runs in :func:`_balanced_order` for ``repeat``:
    ``repeat`` rounded up to whole circuits of ``n - 1`` calls each."""
    return repeat if n == 1 else -(-repeat // (n - 1)) * (n - 1)


def _balanced_order(n: int, repeat: int, rng: np.random.Generator) -> list[int]:
    """An order of ``n`` calls in which each runs at least ``repeat`` times and follows
    every other call equally often, never itself: random Eulerian circuits of the
    complete directed graph on the calls, one after another (each call ``n - 1`` times
    a circuit; the circuits share their start, so the step from one into the next is
    the closing arc of the first).

    The call before decides much of a large search's time: scipy's copy of the matrix
    and the top-down settings' scratch push the graph out of the caches, and on
    Kronecker 20 a search after one of them took about 3x one after an auto setting
    (40-80 against 13-25 ms). In a new random order each round, how many of a setting's
    searches came after such a call varied between settings and runs, and their
    medians fell on one side or the other of the two clusters (the default 1.1-1.5x
    its own best setting in runs of the same code).
    """
    if n == 1:
        return [0] * repeat
    start = int(rng.integers(n))
    order: list[int] = []
    for _ in range(_calls_each(n, repeat) // (n - 1)):
        arcs = {v: [w for w in rng.permutation(n).tolist() if w != v] for v in range(n)}
        stack, circuit = [start], []
        while stack:  # Hierholzer's algorithm
            v = stack[-1]
            if arcs[v]:
                stack.append(arcs[v].pop())
            else:
                circuit.append(stack.pop())
        order += circuit[::-1][:-1]
    return order


def _interleaved(calls: dict[str, Callable[[], Any]], repeat: int, seed: int = 0,
                 pause: float = 0.0,
                 after: Callable[[], Any] | None = None) -> dict[str, float]:
    """Median seconds of each call over at least ``repeat`` calls, in an order where every
    call follows every other equally often (:func:`_balanced_order`).

    Not a rotation: with one, a call always follows the same other call, and the
    two-thread settings' workers, still spinning or queued after their search on
    a busy machine, slowed the call after them in every round (scipy and the
    default after ``t2 top-down``, 20x on luxembourg_osm). The order comes from
    ``seed`` (give each source its own), and ``pause`` seconds pass between two
    calls, untimed, for the workers of the call before to go to sleep. ``after``,
    where given, runs untimed after every call.
    """
    names = list(calls)
    for f in calls.values():  # warm: compilation, caches, kept scratch arrays
        f()
        if after is not None:
            after()
    times: dict[str, list[float]] = {k: [] for k in names}
    clock = time.perf_counter
    rng = np.random.default_rng([len(names) * 7919 + repeat, seed])
    for i in _balanced_order(len(names), repeat, rng):
        k = names[i]
        f = calls[k]
        if pause:
            time.sleep(pause)
        t0 = clock()
        f()
        times[k].append(clock() - t0)
        if after is not None:
            after()
    return {k: float(np.median(v)) for k, v in times.items()}


def _back_to_back(f: Callable[[], Any], repeat: int, pause: float = 0.0) -> float:
    """Median seconds of ``repeat`` calls of ``f`` in a row, after one untimed: how GAPBS
    times its trials (one process, one source, each trial right after the one before,
    caches and the CPU's clock as the last trial left them). With ``pause``, that many
    seconds of sleep come before each call, untimed: how GAPBS's paused build times
    them."""
    f()
    clock = time.perf_counter
    times = []
    for _ in range(repeat):
        if pause:
            time.sleep(pause)
        t0 = clock()
        f()
        times.append(clock() - t0)
    return float(np.median(times))


def _trimmed_mean(times: list[float], cut: float = 0.1) -> float:
    """The mean of ``times`` without its ``cut`` lowest and highest: GAPBS prints its
    trial times in 10 µs steps, whose median is a step, where a mean of many falls
    between them."""
    t = np.sort(np.asarray(times, dtype=float))
    k = int(t.shape[0] * cut)
    return float(t[k:t.shape[0] - k].mean())


def _rotating(f: Callable[[int], Any], sources: list[int], rounds: int) -> float:
    """Trimmed mean (:func:`_trimmed_mean`) seconds of ``f(s)`` over ``sources`` in turn,
    ``rounds`` times: each search from another source than the one before, as GAPBS's
    own benchmark runs its trials (and no branch history or cache holds the last
    search's answer for the next)."""
    clock = time.perf_counter
    times = []
    for _ in range(rounds):
        for s in sources:
            t0 = clock()
            f(s)
            times.append(clock() - t0)
    return _trimmed_mean(times)


def _gapbs_rotating(exe: Path, sg: Path, trials: int) -> tuple[list[int], dict[int, float]]:
    """GAPBS in its own benchmark mode: ``trials`` searches in one process, each from the
    next source its picker draws (a fixed seed: every run draws the same). Returns the
    sources of the trials after the first (read from a run with ``-l``, which prints
    them; its times are not used) and per thread count (1, 2) the trimmed mean of
    those trials' ``Trial Time``, ms."""
    from gapbs import run_gapbs

    args = ["-f", str(sg), "-n", str(trials)]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    sources = run_gapbs(exe, [*args, "-l"], env).sources[1:]
    out = {}
    for threads in (1, 2):
        env = dict(os.environ, OMP_NUM_THREADS=str(threads))
        out[threads] = _trimmed_mean(run_gapbs(exe, args, env).trial_s[1:]) * 1e3
    return sources, out


def _scipy_matrix(g: Any) -> Any:
    import scipy.sparse as sp

    a = sp.csr_matrix(g.to_scipy(), dtype=np.float64)
    a.indices = a.indices.astype(np.int32)
    a.indptr = a.indptr.astype(np.int32)
    return a


def _scipy_bfs(a: Any, s: int) -> Callable[[], Any]:
    from scipy.sparse.csgraph import breadth_first_order

    return lambda: breadth_first_order(a, s, directed=True, return_predecessors=True)


class _DoNothing:
    """A networkx backend that runs networkx's own ``bfs_edges`` on the graph it is given."""

    def __init__(self, should_run: bool) -> None:
        self._should = should_run

    def convert_from_nx(self, graph: Any, **kwargs: Any) -> Any:
        return graph

    @staticmethod
    def convert_to_nx(obj: Any, **kwargs: Any) -> Any:
        return obj

    def can_run(self, name: str, args: Any, kwargs: Any) -> bool:
        return True

    def should_run(self, name: str, args: Any, kwargs: Any) -> bool:
        return self._should

    def bfs_edges(self, G: Any, source: Any, reverse: bool = False, depth_limit: Any = None,
                  sort_neighbors: Any = None) -> Any:
        from networkx.utils import backends

        own = backends._registered_algorithms["bfs_edges"].orig_func
        return own(G, source, reverse, depth_limit, sort_neighbors)


def _register_do_nothing() -> None:
    """Backends ``nop`` (runs) and ``nop_declines`` (declines in ``should_run``), for this
    process, through networkx's registry of installed backends."""
    import networkx as nx
    from networkx.utils import backends

    class Entry:
        def __init__(self, should_run: bool) -> None:
            self.should_run = should_run

        def load(self) -> _DoNothing:
            return _DoNothing(self.should_run)

    for name, should in (("nop", True), ("nop_declines", False)):
        backends.backends[name] = Entry(should)
        backends.backend_info[name] = {}
    # The do-nothing backend's graph is the networkx graph: networkx caches it and would
    # warn on every call.
    nx.config.warnings_to_ignore.add("cache")


def _hub(g: Any) -> int:
    """A vertex of the most out-edges."""
    return int(np.argmax(np.asarray(g.out_degree)))


def per_call(big: Any, repeat: int, markdown: bool) -> None:
    """The per-call table (microseconds)."""
    import networkx as nx

    import spbfs
    from spbfs.generators import erdos_renyi, grid2d, kronecker, path

    karate = spbfs.datasets.karate()
    line = spbfs.Graph.from_edgelist(path(100))
    iso = int(np.flatnonzero(np.asarray(big.out_degree) == 0)[0])
    # Graphs of 10-21 k arcs (searched from a vertex of the most edges), where the
    # engine's fixed cost is a large part of a search.
    rand = spbfs.Graph.from_edgelist(erdos_renyi(1000, m=5000, seed=1))
    square = spbfs.Graph.from_edgelist(grid2d(60, 60))
    kron = spbfs.Graph.from_edgelist(kronecker(10, 16, seed=1))
    rows = []
    for name, g, s in (("karate, source 0", karate, 0),
                       (f"isolated vertex ({big.n} vertices)", big, iso),
                       ("100-vertex path, end", line, 0),
                       ("random, 1,000 vertices, 10 k arcs", rand, _hub(rand)),
                       ("60 x 60 grid, corner", square, 0),
                       ("Kronecker 10, 21 k arcs", kron, _hub(kron))):
        a = _scipy_matrix(g)
        t = _interleaved({"spbfs": lambda g=g, s=s: spbfs.bfs(g, s),
                          "scipy": _scipy_bfs(a, s)}, repeat)
        rows.append([name, "spbfs.bfs (prebuilt)", f"{t['spbfs'] * 1e6:.1f}",
                     f"{t['scipy'] * 1e6:.1f}", f"{t['spbfs'] / t['scipy']:.2f}"])
    for name, G in (("karate", nx.karate_club_graph()),
                    ("random, 10^4 edges", nx.gnm_random_graph(2500, 10_000, seed=1))):
        t = _interleaved({"spbfs": lambda G=G: list(nx.bfs_edges(G, 0, backend="spbfs")),
                          "networkx": lambda G=G: list(nx.bfs_edges(G, 0))}, repeat)
        rows.append([name, "nx.bfs_edges backend=spbfs", f"{t['spbfs'] * 1e6:.1f}",
                     f"{t['networkx'] * 1e6:.1f}", f"{t['spbfs'] / t['networkx']:.2f}"])
        nx.config.backend_priority.algos = ["spbfs"]
        try:
            t = _interleaved({"spbfs": lambda G=G: list(nx.bfs_edges(G, 0)),
                              "networkx": lambda G=G: list(nx.bfs_edges(G, 0, backend="networkx"))},
                             repeat)
        finally:
            nx.config.backend_priority.algos = []
        rows.append([name, "nx.bfs_edges, backend_priority", f"{t['spbfs'] * 1e6:.1f}",
                     f"{t['networkx'] * 1e6:.1f}", f"{t['spbfs'] / t['networkx']:.2f}"])
        if name != "karate":
            continue
        _register_do_nothing()
        t = _interleaved({"nop": lambda G=G: list(nx.bfs_edges(G, 0, backend="nop")),
                          "spbfs": lambda G=G: list(nx.bfs_edges(G, 0, backend="spbfs")),
                          "networkx": lambda G=G: list(nx.bfs_edges(G, 0))}, repeat)
        rows.append([name, "backend=do-nothing (spbfs)", f"{t['nop'] * 1e6:.1f} "
                     f"({t['spbfs'] * 1e6:.1f})", f"{t['networkx'] * 1e6:.1f}",
                     f"{t['nop'] / t['networkx']:.2f} ({t['spbfs'] / t['networkx']:.2f})"])
        nx.config.backend_priority.algos = ["nop_declines"]
        try:
            nop = _interleaved({"nop": lambda G=G: list(nx.bfs_edges(G, 0)),
                                "networkx": lambda G=G: list(nx.bfs_edges(G, 0,
                                                                          backend="networkx"))},
                               repeat)
        finally:
            nx.config.backend_priority.algos = []
        rows.append([name, "backend_priority, do-nothing declines", f"{nop['nop'] * 1e6:.1f}",
                     f"{nop['networkx'] * 1e6:.1f}", f"{nop['nop'] / nop['networkx']:.2f}"])
    print(f"\nper call, median µs of {repeat} ({uptime()})")
    print(format_table(["input", "spbfs call", "spbfs µs", "peer µs (scipy / networkx)",
                        "ratio"], rows, markdown=markdown))


def _graphs(args: argparse.Namespace) -> list[tuple[str, Any, list[int]]]:
    """``(name, graph, sources)`` of every graph of the per-graph table."""
    import spbfs
    from spbfs.generators import fe_mesh, grid2d, kronecker, rmat

    rng = np.random.default_rng(args.seed)

    def roots(g: Any) -> list[int]:
        deg = np.asarray(g.out_degree)
        have = np.flatnonzero(deg > 0)
        return rng.choice(have, size=min(args.roots, have.shape[0]), replace=False).tolist()

    def want(name: str) -> bool:
        return args.only is None or any(name.startswith(k) for k in args.only.split(","))

    out = []
    if args.gnutella and Path(args.gnutella).exists() and want("p2p-Gnutella31"):
        g = spbfs.Graph.load(args.gnutella, directed=True)
        out.append(("p2p-Gnutella31", g, [0, *roots(g)[:args.roots - 1]]))
    for name, scale, ef in (("wiki-Vote-like (R-MAT 13/13)", 13, 13),
                            ("pgp-like (R-MAT 14/2)", 14, 2)):
        if want(name):
            g = spbfs.Graph.from_edgelist(rmat(scale, ef, seed=args.seed), directed=True)
            out.append((name, g, roots(g)))
    if args.osm and Path(args.osm).exists() and want("luxembourg_osm"):
        g = spbfs.Graph.load(args.osm)
        out.append(("luxembourg_osm", g, roots(g)))
    if args.small_only:
        return out
    if want("grid"):
        grid = spbfs.Graph.from_edgelist(grid2d(1000, 1000))
        # One named source each, searched in as many interleaved blocks (each its own
        # order) as the other graphs have sources: as many samples behind each median.
        out.append(("grid 1000x1000, corner", grid, [0] * args.roots))
        out.append(("grid 1000x1000, centre", grid, [500 * 1000 + 500] * args.roots))
    if want("fe_mesh"):
        g = spbfs.Graph.from_edgelist(fe_mesh(args.mesh, seed=args.seed))
        out.append((f"fe_mesh {args.mesh}", g, roots(g)))
    for scale in args.scales:
        if want(f"Kronecker {scale}"):
            g = spbfs.Graph.from_edgelist(kronecker(scale, 16, seed=args.seed))
            out.append((f"Kronecker {scale}", g, roots(g)))
    return out


def _write_sg(g: Any, path: Path) -> None:
    """``g`` in GAPBS's ``.sg`` format (a directed graph with its in-edges)."""
    from gapbs import write_sg

    a = g.to_scipy().tocsr()  # rows: out-edges
    inverse = None
    if g.directed:
        t = a.T.tocsr()
        inverse = (t.indptr, t.indices)
    write_sg(path, a.indptr, a.indices, inverse)


def _gapbs_ms(exe: Path, sg: Path, sources: list[int], repeat: int) -> dict[int, float]:
    """Per thread count (1, 2): GAPBS's median over ``sources`` of its per-source median
    ``Trial Time`` (the first trial of each process left out), ms."""
    from gapbs import run_gapbs

    out = {}
    for threads in (1, 2):
        env = dict(os.environ, OMP_NUM_THREADS=str(threads))
        per = []
        for s in sources:
            run = run_gapbs(exe, ["-f", str(sg), "-r", str(s), "-n", str(repeat + 1)], env)
            per.append(float(np.median(run.trial_s[1:])))
        out[threads] = float(np.median(per)) * 1e3
    return out


def per_graph(graphs: list[tuple[str, Any, list[int]]], busy: int, repeat: int,
              markdown: bool, gapbs: tuple[Path, Path] | None = None,
              workdir: Path | None = None, burst: float = 0.0, trials: int = 128) -> None:
    """The per-graph table (milliseconds) with ``busy`` competing processes; GAPBS's
    columns where ``gapbs`` (its ``bfs`` and the paused build's) is given (``.sg``
    files written in ``workdir``; GAPBS's own benchmark mode runs up to ``trials``
    trials, see :func:`_gapbs_rotating`).
    ``burst`` seconds of every CPU busy go before it (then stop)."""
    import numba

    import spbfs

    # A search given a thread count leaves numba's count set (Config.threads, as the
    # command line reports it), and the default searches on at most numba's count: set
    # back after every call, so that the default runs as in a program that never gave a
    # count. Left set, the default followed a threads=1 setting in about half of the
    # rounds and ran on one thread (Kronecker 20: 1.35x the best setting on a quiet
    # machine).
    ceiling = numba.get_num_threads()

    def restore() -> None:
        if numba.get_num_threads() != ceiling:
            numba.set_num_threads(ceiling)

    if burst > 0:
        # As a build or a test run just before would: the 1-minute load average is
        # high when the table starts, the machine quiet (or as busy as ``busy`` makes it).
        hogs = start_busy(os.cpu_count() or 1)
        time.sleep(burst)
        stop_busy(hogs)
        print(f"\nafter {burst:g} s of every CPU busy:")
    hogs = start_busy(busy)
    try:
        print(f"\nper graph, {busy} busy process(es), median over sources of the median of "
              f"{_calls_each(len(SETTINGS) + 2, repeat)} ({uptime()})")
        rows = []
        for name, g, sources in graphs:
            variants = {"default": g}
            for t, d in SETTINGS:
                variants[f"t{t} {d}"] = g.with_config(g.config.replace(threads=t, direction=d))
            a = _scipy_matrix(g)
            per: dict[str, list[float]] = {}
            for i, s in enumerate(sources):
                calls = {k: (lambda v=v, s=s: spbfs.bfs(v, s)) for k, v in variants.items()}
                calls["scipy"] = _scipy_bfs(a, s)
                for k, v in _interleaved(calls, repeat, seed=s + i * g.n, pause=0.002,
                                         after=restore).items():
                    per.setdefault(k, []).append(v)
                if gapbs is not None:
                    per.setdefault("in a row", []).append(_back_to_back(calls["default"],
                                                                        repeat))
                    per.setdefault("paused", []).append(_back_to_back(calls["default"],
                                                                      repeat, pause=0.002))
            med = {k: float(np.median(v)) for k, v in per.items()}
            best = min((k for k in med if k.startswith("t")), key=med.__getitem__)
            sched = spbfs.bfs(g, sources[0]).stats.direction
            row = [name, f"{g.n}/{g.nnz}", f"{med['default'] * 1e3:.2f}",
                   f"{med['t1 auto'] * 1e3:.2f}", f"{best} {med[best] * 1e3:.2f}",
                   f"{med['scipy'] * 1e3:.2f}", f"{med['default'] / med[best]:.2f}",
                   f"{med['default'] / med['scipy']:.2f}"]
            if gapbs is not None and workdir is not None:
                sg = workdir / f"{id(g)}.sg"
                if not sg.exists():
                    _write_sg(g, sg)
                gt, gp = (_gapbs_ms(exe, sg, sources, repeat) for exe in gapbs)
                row += [f"{gt[1]:.2f} / {gt[2]:.2f}", f"{med['in a row'] * 1e3:.2f}",
                        f"{med['in a row'] * 1e3 / min(gt.values()):.2f}",
                        f"{gp[1]:.2f} / {gp[2]:.2f}", f"{med['paused'] * 1e3:.2f}",
                        f"{med['paused'] * 1e3 / min(gp.values()):.2f}"]
                if name.startswith("grid"):  # one named source: nothing to rotate over
                    row += ["-", "-", "-"]
                else:
                    # As many trials as take about a second of the default's searches.
                    n_trials = int(np.clip(1.0 / med["default"], 8, trials)) + 1
                    drawn, gr = _gapbs_rotating(gapbs[0], sg, n_trials)
                    ours = _rotating(lambda s, g=g: spbfs.bfs(g, s), drawn, 3)
                    row += [f"{gr[1]:.2f} / {gr[2]:.2f}", f"{ours * 1e3:.2f}",
                            f"{ours * 1e3 / min(gr.values()):.2f}"]
            rows.append([*row, f"{int(sched.sum())}/{sched.shape[0]}"])
        heads = ["graph", "n/arcs", "default ms", "threads=1 ms", "best setting ms",
                 "scipy ms", "default/best", "default/scipy"]
        if gapbs is not None:
            heads += ["GAPBS 1 / 2 threads ms", "default in a row ms", "in a row/GAPBS best",
                      "GAPBS paused 1 / 2 threads ms", "default paused ms",
                      "paused/GAPBS paused best", "GAPBS drawn sources 1 / 2 threads ms",
                      "default drawn sources ms", "drawn/GAPBS best"]
        print(format_table([*heads, "bottom-up levels (1st source)"], rows,
                           markdown=markdown))
    finally:
        stop_busy(hogs)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--gnutella", help="p2p-Gnutella31.txt (SNAP edge list)")
    p.add_argument("--osm", help="luxembourg_osm.mtx (Matrix Market)")
    p.add_argument("--scales", type=int, nargs="*", default=[18, 20])
    p.add_argument("--mesh", type=int, default=500_000, help="fe_mesh points")
    p.add_argument("--busy", type=int, nargs="*", default=[0, 1])
    p.add_argument("--burst", type=float, default=0.0, metavar="SECONDS",
                   help="per graph: keep every CPU busy this long before each pass (a "
                        "quiet pass then starts with a high 1-minute load average)")
    p.add_argument("--roots", type=int, default=4)
    p.add_argument("--repeat", type=int, default=9)
    p.add_argument("--call-repeat", type=int, default=500)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--per-call-only", action="store_true")
    p.add_argument("--per-graph-only", action="store_true")
    p.add_argument("--small-only", action="store_true",
                   help="per graph: the files and the R-MAT graphs only")
    p.add_argument("--only", metavar="NAMES",
                   help="per graph: only the graphs whose names start with one of these "
                        "comma-separated prefixes (e.g. 'Kronecker 22,grid')")
    p.add_argument("--omp-wait", choices=["active", "passive"],
                   help="OMP_WAIT_POLICY for numba's omp workers (default: unset)")
    p.add_argument("--gapbs", type=Path, metavar="DIR",
                   help="a GAPBS checkout built with make (DIR/bfs; its source is also "
                        "built with a pause before each trial): its columns in the "
                        "per-graph table")
    p.add_argument("--trials", type=int, default=128,
                   help="with --gapbs: the most trials of GAPBS's own benchmark mode (each "
                        "from a new source its picker draws) per graph and thread count")
    p.add_argument("--markdown", action="store_true")
    args = p.parse_args(argv)
    if args.trials < 2:
        p.error(f"--trials {args.trials}: at least 2 (the first trial is not counted)")
    set_omp_wait(args.omp_wait)

    import spbfs
    from spbfs.generators import erdos_renyi

    print(machine_line())
    if args.gnutella and Path(args.gnutella).exists():
        big = spbfs.Graph.load(args.gnutella, directed=True)
    else:
        big = spbfs.Graph.from_edgelist(erdos_renyi(60_000, m=60_000, seed=args.seed))
    if not args.per_graph_only:
        per_call(big, args.call_repeat, args.markdown)
    if args.per_call_only:
        return
    exe = None
    if args.gapbs is not None:
        from gapbs import build_gapbs, default_cache

        if not (args.gapbs / "bfs").is_file():
            p.error(f"--gapbs {args.gapbs}: no GAPBS bfs binary there (build it with make)")
        if not (args.gapbs / "src" / "benchmark.h").is_file():
            p.error(f"--gapbs {args.gapbs}: no GAPBS source there (src/benchmark.h)")
        paused = build_gapbs(args.gapbs, default_cache(), ("bfs",), pause_ms=2.0)["bfs"]
        exe = (args.gapbs / "bfs", paused)
    graphs = _graphs(args)
    with tempfile.TemporaryDirectory() as work:
        for busy in args.busy:
            per_graph(graphs, busy, args.repeat, args.markdown, exe, Path(work), args.burst,
                      args.trials)


if __name__ == "__main__":
    main()
