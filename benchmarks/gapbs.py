"""spbfs against GAPBS and scipy on the same graphs, roots and threads.

Systems
-------
``spbfs-csr`` / ``spbfs-dcsc``
    :func:`spbfs.bfs` on a graph built with ``Config(format=..., backend="numba")``;
    parents and levels returned (int64), or with ``--output parents`` the parents
    alone: what scipy (predecessors and the visit order) and GAPBS (parents) return.
``scipy``
    ``scipy.sparse.csgraph.breadth_first_order(A, root, directed=True,
    return_predecessors=True)`` on the symmetric adjacency matrix as a csr matrix
    with int32 indices (so csgraph copies nothing per call); one thread.
``gapbs``
    GAPBS's ``bfs`` (Beamer's direction-optimizing BFS, C++/OpenMP), built here
    from its public repository with ``make`` (``g++ -O3 -fopenmp``). No GAPBS code
    is part of spbfs: ``--gapbs DIR`` names a source checkout or a git directory,
    and without it the repository is cloned into the cache folder (needs
    internet). The build is cached per source and compiler.

Same graph: the spbfs graph's csr arrays (deduplicated, loop-free, symmetric,
neighbours sorted: what GAPBS's own builder makes of the same edge list) are
written in GAPBS's serialized ``.sg`` format (``src/reader.h``:
``bool directed, int64 num_edges, int64 num_nodes, int64 offsets[n+1], int32
neighbours[num_edges]``; one CSR for an undirected graph) and GAPBS loads them
without rebuilding. The script first checks its writer against GAPBS's own
``converter`` on a small graph (identical bytes), and every GAPBS run's
``Graph has N nodes and M undirected edges`` line against ``n`` and ``nnz / 2``.

Same roots: ``spbfs.graph500.sample_roots`` (random vertices with an edge,
``--root-seed``) for every system; the grid is searched from a fixed corner
(vertex 0) and, as a separate case, from its centre.

Timing: each system's own clock around one search. GAPBS is started once per
root and round (``bfs -f G.sg -r ROOT -n T``); its ``Trial Time`` lines time
the search alone (its ``InitParent`` included, process start and graph loading
not); the first of its ``T`` trials warms the process up and the median of the
others is the round's time. spbfs and scipy are warmed up on the first root
(numba compilation). Rounds interleave the systems: in round ``k`` the system
order is rotated by ``k``, and each system searches every root in a row; a
root's time is its median over the rounds.

Checks (first root): spbfs csr and dcsc levels, and the levels of scipy's
predecessor tree, equal the unweighted ``csgraph.shortest_path`` distances
exactly; spbfs's parents pass the Graph500 rules
(:func:`spbfs.validate.validate_bfs_tree`); GAPBS runs once with ``-v`` (its own
verifier: every parent is a neighbour one level up, reachability matches a
serial BFS) and must print ``Verification: PASS``. Its parent array is not
read back.

Reported per graph: median and minimum ms per search over roots, harmonic-mean
TEPS with ``nnz / 2`` edges (the undirected edges of the whole graph, the same
count for every system), ``µs/level`` on high-diameter graphs (search time over
BFS levels, depth + 1), and per peer how many times the spbfs csr and dcsc
searches beat it (ratio of harmonic-mean TEPS: above 1 means spbfs is faster).
Also the peak RSS of the GAPBS processes per input edge (from ``wait4``), and of
a GAPBS run that generates and builds its own Kronecker graph (``bfs -g S -k 16``,
``--rss-scale``).

Environment: ``OMP_NUM_THREADS`` = ``--threads`` for GAPBS and numba's thread
count for spbfs; ``OMP_WAIT_POLICY`` (``--omp-wait``, default ``passive``) for
numba's OpenMP layer, since on a shared 2-core machine spinning OpenMP workers
steal the core the next serial step needs; ``unset`` leaves the environment
alone. GAPBS gets ``--gapbs-omp-wait`` (default: the same as ``--omp-wait``):
its high-diameter searches run an OpenMP barrier per level, and passive waiting
puts a sleep and a wake-up in every one (luxembourg_osm measured 7x slower), so
a fair run gives each system the policy it runs best with.

Run ``python benchmarks/gapbs.py --help``; see ``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import (
    cached_build,
    compiler_version,
    format_ms,
    format_table,
    load_average,
    machine_line,
    median,
    peer_cache,
    peer_source,
    set_omp_wait,
    tree_hash,
)

GAPBS_URL = "https://github.com/sbeamer/gapbs"
SYSTEMS = ("spbfs-csr", "spbfs-dcsc", "scipy", "gapbs")
GRAPHS = ("lux", "grid", "grid-centre", "mesh", "kron20", "kron22")
#: Depth from which a graph counts as high-diameter (µs per level reported).
HIGH_DIAMETER = 100

# --------------------------------------------------------------------------- GAPBS I/O


def write_sg(path: str | os.PathLike, indptr: np.ndarray, indices: np.ndarray,
             inverse: tuple[np.ndarray, np.ndarray] | None = None) -> None:
    """Write a graph's CSR in GAPBS's serialized ``.sg`` format.

    The layout is the one ``Reader::ReadSerializedGraph`` (``src/reader.h``)
    reads: ``bool directed`` (1 byte), ``int64 num_edges`` (stored
    neighbour entries, both directions), ``int64 num_nodes``, ``int64
    offsets[num_nodes + 1]``, ``int32 neighs[num_edges]``, native byte order.
    An undirected graph stores no second (inverse) CSR; a directed one
    (``inverse`` given: the in-edges' offsets and sources) stores it after the
    first, in the same layout.

    Parameters
    ----------
    path : path-like
        Output file (GAPBS picks the reader by the ``.sg`` suffix).
    indptr : numpy.ndarray
        Row offsets, ``n + 1`` non-decreasing integers from 0 to ``len(indices)``.
    indices : numpy.ndarray
        Neighbour ids in ``[0, n)``; ``n`` must fit GAPBS's int32 ids.
    inverse : tuple of numpy.ndarray, optional
        ``(indptr, indices)`` of the in-edges: the graph is written directed.

    Raises
    ------
    ValueError
        If ``indptr`` or ``indices`` is not a valid CSR of this shape.
    """
    indptr = np.asarray(indptr)
    indices = np.asarray(indices)
    if inverse is not None and np.asarray(inverse[1]).size != indices.size:
        raise ValueError(f"inverse holds {np.asarray(inverse[1]).size} in-edges, the CSR "
                         f"{indices.size} out-edges: a directed graph has as many of each")
    if indptr.ndim != 1 or indptr.size < 1 or not np.issubdtype(indptr.dtype, np.integer):
        raise ValueError(f"indptr must be a non-empty 1-D integer array, got "
                         f"shape {indptr.shape}, dtype {indptr.dtype}")
    if indices.ndim != 1 or not np.issubdtype(indices.dtype, np.integer):
        raise ValueError(f"indices must be a 1-D integer array, got shape {indices.shape}, "
                         f"dtype {indices.dtype}")
    n = indptr.size - 1
    if indptr[0] != 0 or indptr[-1] != indices.size or np.any(np.diff(indptr) < 0):
        raise ValueError(f"indptr must rise from 0 to len(indices) = {indices.size}, got "
                         f"{indptr[0]} .. {indptr[-1]}, non-decreasing: "
                         f"{bool(np.all(np.diff(indptr) >= 0))}")
    if n >= 2**31:
        raise ValueError(f"indptr describes {n} vertices; GAPBS's .sg ids are int32")
    if indices.size and (int(indices.min()) < 0 or int(indices.max()) >= n):
        raise ValueError(f"indices must lie in [0, {n}), got {int(indices.min())} .. "
                         f"{int(indices.max())}")
    with open(path, "wb") as f:
        f.write(np.bool_(inverse is not None).tobytes())
        f.write(np.int64(indices.size).tobytes())
        f.write(np.int64(n).tobytes())
        for ptr, ind in ((indptr, indices), *(() if inverse is None else (inverse,))):
            f.write(np.ascontiguousarray(ptr, dtype=np.int64).tobytes())
            # In slices: a scale-22 graph's int32 copy would be another half GiB.
            chunk = 1 << 24
            ind = np.asarray(ind)
            for lo in range(0, ind.size, chunk):
                f.write(np.ascontiguousarray(ind[lo:lo + chunk], dtype=np.int32).tobytes())


@dataclass
class GapbsRun:
    """What one GAPBS ``bfs`` process printed (and its peak RSS).

    Attributes
    ----------
    trial_s : list of float
        ``Trial Time`` of each trial, seconds.
    nodes, undirected_edges : int
        From ``Graph has N nodes and M undirected edges`` (-1 when absent).
    verified : list of str
        ``PASS`` / ``FAIL`` of each ``Verification`` line (``-v``).
    sources : list of int
        Each trial's source, from its ``Source`` line (printed with ``-l``).
    peak_rss : int
        Peak resident set size of the process, bytes (0 when unknown).
    """

    trial_s: list[float]
    nodes: int = -1
    undirected_edges: int = -1
    verified: list[str] = field(default_factory=list)
    peak_rss: int = 0
    sources: list[int] = field(default_factory=list)


_TRIAL_RE = re.compile(r"^Trial Time:\s*([0-9.eE+-]+)\s*$", re.M)
_STATS_RE = re.compile(r"^Graph has (\d+) nodes and (\d+) (un)?directed edges", re.M)
_VERIFY_RE = re.compile(r"^Verification:\s*(\w+)\s*$", re.M)
_SOURCE_RE = re.compile(r"^Source:\s*(\d+)\s*$", re.M)


def parse_output(text: str) -> GapbsRun:
    """Parse the standard output of GAPBS ``bfs`` (``benchmark.h``, ``graph.h``).

    Raises
    ------
    ValueError
        If no ``Trial Time`` line is present (the run failed or the output
        format changed): the output is quoted.
    """
    trials = [float(x) for x in _TRIAL_RE.findall(text)]
    if not trials:
        raise ValueError(f"no 'Trial Time' line in GAPBS's output:\n{text[-2000:]}")
    run = GapbsRun(trial_s=trials, verified=_VERIFY_RE.findall(text),
                   sources=[int(x) for x in _SOURCE_RE.findall(text)])
    m = _STATS_RE.search(text)
    if m:
        run.nodes = int(m.group(1))
        run.undirected_edges = int(m.group(2)) if m.group(3) else -1
    return run


# --------------------------------------------------------------------------- GAPBS build


def default_cache() -> Path:
    """``$XDG_CACHE_HOME/spbfs/gapbs`` (``~/.cache/spbfs/gapbs``)."""
    return peer_cache("gapbs")


def gapbs_source(spec: str | None, cache: Path) -> tuple[Path, str]:
    """A GAPBS source tree and a one-line description of where it came from.

    Parameters
    ----------
    spec : str or None
        A source checkout (holding ``src/bfs.cc``), a git directory (bare or
        ``.git``, cloned into the cache), or None: clone :data:`GAPBS_URL`
        into ``cache/src`` once (needs internet).
    cache : pathlib.Path
        The cache folder.
    """
    return peer_source(spec, cache, name="GAPBS", marker="src/bfs.cc", url=GAPBS_URL,
                       option="--gapbs")


#: The lines of GAPBS's ``src/benchmark.h`` that start a trial's clock and run it; a
#: paused build sleeps before them.
_TRIAL_START = "    trial_timer.Start();\n    auto result = kernel(g);\n"


def paused_benchmark(text: str, pause_ms: float, path: Path) -> str:
    """GAPBS's ``src/benchmark.h`` (``text``, read from ``path``) with a sleep of
    ``pause_ms`` before each trial's clock starts."""
    if text.count(_TRIAL_START) != 1:
        raise SystemExit(f"{path}: not one trial start {_TRIAL_START!r} to pause before")
    sleep = ("    std::this_thread::sleep_for(std::chrono::microseconds("
             f"{round(pause_ms * 1e3)}));\n")
    return "#include <chrono>\n#include <thread>\n" + text.replace(_TRIAL_START,
                                                                   sleep + _TRIAL_START)


def build_gapbs(src: Path, cache: Path, targets: Sequence[str] = ("bfs", "converter"),
                cxx: str = "g++", pause_ms: float = 0.0) -> dict[str, Path]:
    """Build GAPBS's ``targets`` with its Makefile, once per source, compiler and pause.

    The tree (without ``.git``) is copied to ``cache/build-<key>``, where the key
    hashes the sources, the Makefiles, ``cxx --version`` and the pause; ``make``
    runs there (``-O3 -fopenmp``, GAPBS's own flags), so a source checkout is never
    written to. ``pause_ms`` > 0: each trial sleeps that long before its clock
    starts (one line added to the copy's ``src/benchmark.h``), as a search
    called now and then finds the machine: its caches and clock as other work
    and idling left them.
    """
    version = compiler_version([cxx], "GAPBS needs a C++ compiler with OpenMP")
    paused = (f"pause {pause_ms:g} ms",) if pause_ms else ()
    key = tree_hash(src, lambda rel: rel.parts[0] == "src" or rel.name == "Makefile"
                    or rel.suffix == ".mk", version, *paused)

    def build(tmp: Path) -> None:
        shutil.copytree(src, tmp, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".git"))
        if pause_ms:
            bench = tmp / "src" / "benchmark.h"
            bench.write_text(paused_benchmark(bench.read_text(), pause_ms,
                                              src / "src" / "benchmark.h"))
        res = subprocess.run(["make", f"-j{os.cpu_count() or 1}", f"CXX={cxx}", *targets],
                             cwd=tmp, capture_output=True, text=True)
        if res.returncode != 0:
            raise SystemExit(f"building GAPBS failed in {tmp}:\n{res.stdout}\n{res.stderr}")

    return cached_build(cache, key, build, targets)


#: Starts GAPBS from a small interpreter and reports its rusage. Linux records the
#: peak RSS of the memory image a process leaves at exec in that process's maxrss,
#: and a child spawned by this (large) process starts out sharing its image: GAPBS's
#: ru_maxrss would then be at least this script's RSS. From ``python -S`` it is at
#: least ~8 MiB (``/bin/true`` under it reports 8.2 MiB) instead.
_RUSAGE_WRAPPER = """
import os, sys
pid = os.posix_spawn(sys.argv[1], sys.argv[1:], os.environ)
_, status, usage = os.wait4(pid, 0)
sys.stderr.write(f"spbfs-maxrss-kib {usage.ru_maxrss}\\n")
sys.exit(os.waitstatus_to_exitcode(status))
"""
_MAXRSS_RE = re.compile(r"^spbfs-maxrss-kib (\d+)$", re.M)


def run_gapbs(exe: Path, args: Sequence[str], env: dict[str, str]) -> GapbsRun:
    """Run a GAPBS kernel, parse its output and take its peak RSS (``wait4``).

    The kernel runs under a small ``python -S`` wrapper (see
    ``_RUSAGE_WRAPPER``), so its peak RSS is its own, not this script's; the
    wrapper's ~8 MiB is the floor of what can be reported.

    Raises
    ------
    RuntimeError
        If the process fails (the end of its output is quoted).
    """
    cmd = [sys.executable, "-S", "-c", _RUSAGE_WRAPPER, str(exe), *args]
    res = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"{exe.name} {' '.join(args)} exited {res.returncode}:\n"
                           f"{res.stdout[-2000:]}{res.stderr[-2000:]}")
    run = parse_output(res.stdout)
    m = _MAXRSS_RE.search(res.stderr)
    run.peak_rss = int(m.group(1)) * 1024 if m else 0  # KiB on Linux
    return run


# --------------------------------------------------------------------------- graphs


@dataclass
class Case:
    """One graph and its roots.

    Attributes
    ----------
    name : str
        The ``--graphs`` key.
    graph_key : str
        Cases with the same key share one graph (the grid's corner and centre).
    make : callable
        Returns ``(EdgeList, description)``.
    roots : callable or None
        ``roots(graph) -> list[int]`` for fixed roots; None samples ``--roots``.
    """

    name: str
    graph_key: str
    make: Callable[[], tuple[Any, str]]
    roots: Callable[[Any], list[int]] | None = None


def make_cases(names: Sequence[str], args: argparse.Namespace) -> list[Case]:
    """The cases for ``--graphs``, in the order given."""

    def lux() -> tuple[Any, str]:
        import spbfs.datasets

        el = spbfs.datasets.edges("luxembourg_osm")
        return el, "luxembourg_osm (road network, bundled)"

    def grid() -> tuple[Any, str]:
        from spbfs.generators import grid2d

        return grid2d(args.grid, args.grid), f"grid2d({args.grid}, {args.grid})"

    def mesh() -> tuple[Any, str]:
        from spbfs.generators import fe_mesh

        el = fe_mesh(args.mesh_points, seed=args.seed)
        return el, (f"fe_mesh({args.mesh_points:,}, seed={args.seed}): 2-D Delaunay "
                    f"triangulation of random points, Morton-numbered")

    def kron(scale: int) -> Callable[[], tuple[Any, str]]:
        def make() -> tuple[Any, str]:
            from spbfs.generators import kronecker

            el = kronecker(scale, args.edgefactor, seed=args.seed)
            return el, f"kronecker({scale}, {args.edgefactor}, seed={args.seed})"

        return make

    g = args.grid
    table: dict[str, Case] = {
        "lux": Case("lux", "lux", lux),
        "grid": Case("grid", "grid", grid, lambda graph: [0]),
        "grid-centre": Case("grid-centre", "grid", grid, lambda graph: [(g // 2) * g + g // 2]),
        "mesh": Case("mesh", "mesh", mesh),
    }
    out: list[Case] = []
    for name in names:
        m = re.fullmatch(r"kron(\d+)", name)
        if m:
            scale = int(m.group(1))
            if not 1 <= scale <= 30:
                raise SystemExit(f"--graphs: Kronecker scale must be in [1, 30], got {name}")
            out.append(Case(name, name, kron(scale)))
        elif name in table:
            out.append(table[name])
        else:
            raise SystemExit(f"--graphs: unknown graph {name!r}; choose from "
                             f"{', '.join(GRAPHS)} or kronN")
    return out


# --------------------------------------------------------------------------- one case


@dataclass
class Result:
    """One system's times on one case: ``times[root][round]`` seconds."""

    system: str
    times: list[list[float]]
    check: str


def _levels_from_distances(dist: np.ndarray) -> np.ndarray:
    lv = np.full(dist.shape, -1, dtype=np.int64)
    ok = np.isfinite(dist)
    lv[ok] = dist[ok].astype(np.int64)
    return lv


class Prepared:
    """A graph built once for every system: spbfs graphs, scipy matrix, ``.sg`` file."""

    def __init__(self, edges: Any, desc: str, systems: Sequence[str], threads: int,
                 workdir: Path) -> None:
        import scipy.sparse as sp

        import spbfs

        self.edges, self.desc = edges, desc
        self.graphs: dict[str, Any] = {}
        self.build_s: dict[str, float] = {}
        for fmt in ("csr", "dcsc"):
            if f"spbfs-{fmt}" in systems or fmt == "csr":
                t0 = time.perf_counter()
                self.graphs[fmt] = spbfs.Graph.from_edgelist(
                    edges, config=spbfs.Config(format=fmt, backend="numba", threads=threads))
                self.build_s[fmt] = time.perf_counter() - t0
        g = self.graphs["csr"]
        self.n, self.nnz = int(g.n), int(g.nnz)
        a = g.to_scipy().tocsr()
        a.sort_indices()  # what GAPBS's builder (SquishCSR) makes of an edge list
        # int32 indices and indptr: csgraph's validation then copies nothing per call.
        self.matrix = sp.csr_matrix(
            (np.ones(a.nnz), a.indices.astype(np.int32), a.indptr.astype(np.int32)),
            shape=a.shape)
        if self.matrix.nnz != self.nnz:
            raise RuntimeError(f"{desc}: the adjacency matrix has {self.matrix.nnz} entries, "
                               f"the spbfs graph {self.nnz}")
        self.sg: Path | None = None
        if "gapbs" in systems:
            self.sg = workdir / "graph.sg"
            write_sg(self.sg, a.indptr, a.indices)
        del a
        self.out_degree = np.asarray(g.out_degree)


def search_fns(prep: Prepared, systems: Sequence[str],
               output: str = "both") -> dict[str, Callable[[int], Any]]:
    """``system -> search(root)`` for the in-process systems (spbfs returns ``output``)."""
    from scipy.sparse import csgraph

    import spbfs

    fns: dict[str, Callable[[int], Any]] = {}
    for fmt in ("csr", "dcsc"):
        if f"spbfs-{fmt}" in systems:
            g = prep.graphs[fmt]
            fns[f"spbfs-{fmt}"] = lambda root, g=g: spbfs.bfs(g, root, output=output)
    if "scipy" in systems:
        a = prep.matrix
        fns["scipy"] = lambda root: csgraph.breadth_first_order(
            a, root, directed=True, return_predecessors=True)
    return fns


def check_first_root(prep: Prepared, root: int, fns: dict[str, Callable[[int], Any]],
                     gapbs: dict[str, Path] | None, env: dict[str, str]) -> dict[str, str]:
    """Check every system on ``root`` against an independent reference; warm them up.

    Returns ``system -> "ok ..."``; raises RuntimeError on a wrong answer.
    """
    from scipy.sparse import csgraph

    from spbfs.validate import tree_levels, validate_bfs_tree

    dist = csgraph.shortest_path(prep.matrix, directed=False, unweighted=True, indices=root)
    ref = _levels_from_distances(np.asarray(dist))
    status: dict[str, str] = {}
    for name, fn in fns.items():
        out = fn(root)
        if name == "scipy":
            pred = np.asarray(out[1], dtype=np.int64)
            pred[pred < 0] = -1
            pred[root] = root
            levels = tree_levels(pred, root)
        elif out.levels is None:  # parents alone: the levels of their tree
            levels = tree_levels(np.asarray(out.parents), root)
        else:
            levels = np.asarray(out.levels)
        bad = int(np.count_nonzero(levels != ref))
        if bad:
            raise RuntimeError(f"{name}: {bad} levels differ from csgraph.shortest_path on "
                               f"root {root}")
        status[name] = "levels ok"
        if name.startswith("spbfs"):
            validate_bfs_tree(prep.edges, root, np.asarray(out.parents), levels)
            status[name] = "levels ok, tree valid"
    if gapbs is not None and prep.sg is not None:
        run = run_gapbs(gapbs["bfs"], ["-f", str(prep.sg), "-r", str(root), "-n", "1", "-v"],
                            env)
        if run.nodes != prep.n or run.undirected_edges * 2 != prep.nnz:
            raise RuntimeError(f"gapbs read {run.nodes} nodes / {run.undirected_edges} "
                               f"undirected edges; spbfs has {prep.n} / {prep.nnz // 2}")
        if run.verified != ["PASS"]:
            raise RuntimeError(f"gapbs -v did not pass: {run.verified}")
        status["gapbs"] = "-v PASS, same n and edges"
    return status


def time_case(prep: Prepared, roots: list[int], systems: Sequence[str],
              fns: dict[str, Callable[[int], Any]], gapbs: dict[str, Path] | None,
              env: dict[str, str], rounds: int, trials: int) -> tuple[dict[str, list[list[float]]],
                                                                      int]:
    """Interleaved rounds; returns ``system -> times[root][round]`` and GAPBS's peak RSS."""
    times = {s: [[] for _ in roots] for s in systems}
    gapbs_rss = 0
    for rnd in range(rounds):
        # Each system searches every root in a row; the order of the systems rotates
        # round by round, so a slow spell of a shared machine hits each alike.
        for j in range(len(systems)):
            s = systems[(rnd + j) % len(systems)]
            for i, root in enumerate(roots):
                if s == "gapbs":
                    assert gapbs is not None and prep.sg is not None
                    run = run_gapbs(gapbs["bfs"], ["-f", str(prep.sg), "-r", str(root),
                                                       "-n", str(trials)], env)
                    gapbs_rss = max(gapbs_rss, run.peak_rss)
                    t = run.trial_s[1:] if len(run.trial_s) > 1 else run.trial_s
                    times[s][i].append(median(t))
                else:
                    fn = fns[s]
                    t0 = time.perf_counter()
                    out = fn(root)
                    times[s][i].append(time.perf_counter() - t0)
                    del out
            gc.collect()
    return times, gapbs_rss


# --------------------------------------------------------------------------- driver


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        description="Time spbfs (csr, dcsc), scipy and GAPBS on the same graphs and roots.")
    p.add_argument("--gapbs", metavar="DIR", default=None,
                   help=f"GAPBS source checkout or git directory (default: clone {GAPBS_URL} "
                        f"into the cache folder)")
    p.add_argument("--cache", metavar="DIR", default=None,
                   help=f"cache folder for GAPBS's source and build (default {default_cache()})")
    p.add_argument("--graphs", default=",".join(GRAPHS),
                   help=f"comma-separated cases from {', '.join(GRAPHS)} or kronN "
                        f"(default: all)")
    p.add_argument("--systems", default=",".join(SYSTEMS),
                   help=f"comma-separated subset of {', '.join(SYSTEMS)}")
    p.add_argument("--formats", default="csr,dcsc",
                   help="spbfs block formats to time, a subset of csr,dcsc (default both); "
                        "the spbfs-FORMAT systems not named here are dropped")
    p.add_argument("--roots", type=int, default=16,
                   help="sampled roots per graph (grid cases: one fixed root) (default 16)")
    p.add_argument("--root-seed", type=int, default=0, help="sample_roots seed (default 0)")
    p.add_argument("--rounds", type=int, default=3,
                   help="interleaved rounds; a root's time is its median (default 3)")
    p.add_argument("--gapbs-trials", type=int, default=2,
                   help="trials per GAPBS process (-n); the first warms up, the median of the "
                        "rest counts (default 2)")
    p.add_argument("--threads", type=int, default=2,
                   help="threads of spbfs (numba) and GAPBS (OMP_NUM_THREADS) (default 2)")
    p.add_argument("--omp-wait", choices=("passive", "active", "unset"), default="passive",
                   help="OMP_WAIT_POLICY for numba's OpenMP layer and GAPBS (default passive)")
    p.add_argument("--gapbs-omp-wait", choices=("passive", "active", "unset"), default=None,
                   help="OMP_WAIT_POLICY for GAPBS alone (default: --omp-wait)")
    p.add_argument("--grid", type=int, default=1000, help="grid side (default 1000)")
    p.add_argument("--mesh-points", type=int, default=1_000_000,
                   help="vertices of the finite-element mesh (default 1,000,000)")
    p.add_argument("--edgefactor", type=int, default=16, help="Kronecker edge factor (16)")
    p.add_argument("--seed", type=int, default=1, help="Kronecker and mesh seed (default 1)")
    p.add_argument("--rss-scale", type=int, default=-1,
                   help="peak RSS of GAPBS generating and searching its own Kronecker graph of "
                        "this scale (bfs -g S -k EDGEFACTOR -n 1); default: the largest kronN "
                        "in --graphs; 0: skip")
    p.add_argument("--workdir", metavar="DIR", default=None,
                   help="folder for the temporary .sg files (default: the system's temp)")
    p.add_argument("--output", choices=("both", "parents"), default="both",
                   help="what spbfs returns: parents and levels (default), or parents alone "
                        "as scipy and GAPBS do")
    p.add_argument("--markdown", action="store_true", help="markdown tables")
    return p


def _check_sg_writer(exes: dict[str, Path], env: dict[str, str], workdir: Path) -> str:
    """Write karate with :func:`write_sg` and with GAPBS's converter; compare the bytes."""
    import spbfs.datasets

    g = spbfs.datasets.karate()
    a = g.to_scipy().tocsr()
    a.sort_indices()
    ours = workdir / "karate.sg"
    write_sg(ours, a.indptr, a.indices)
    coo = a.tocoo()
    el = workdir / "karate.el"
    keep = coo.row < coo.col
    np.savetxt(el, np.column_stack([coo.row[keep], coo.col[keep]]), fmt="%d")
    theirs = workdir / "karate-gapbs.sg"
    res = subprocess.run([str(exes["converter"]), "-f", str(el), "-s", "-b", str(theirs)],
                         env=env, capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"GAPBS converter failed:\n{res.stdout}{res.stderr}")
    if ours.read_bytes() != theirs.read_bytes():
        raise RuntimeError(f".sg writer: {ours} differs from GAPBS's converter output {theirs}")
    return "the .sg writer's karate equals GAPBS converter's byte for byte"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the comparison and print the tables; returns the exit status."""
    args = _parser().parse_args(argv)
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    unknown = sorted(set(systems) - set(SYSTEMS))
    if unknown or not systems:
        print(f"--systems: unknown {', '.join(unknown) or '(empty)'}; choose from "
              f"{', '.join(SYSTEMS)}", file=sys.stderr)
        return 2
    formats = {f.strip() for f in args.formats.split(",") if f.strip()}
    if not formats <= {"csr", "dcsc"}:
        print(f"--formats: unknown {', '.join(sorted(formats - {'csr', 'dcsc'}))}; choose from "
              f"csr, dcsc", file=sys.stderr)
        return 2
    systems = [s for s in SYSTEMS if s in systems
               and not (s.startswith("spbfs-") and s.removeprefix("spbfs-") not in formats)]
    if not systems:
        print("--systems and --formats leave nothing to time", file=sys.stderr)
        return 2
    for name in ("roots", "rounds", "gapbs_trials", "threads", "grid", "mesh_points",
                 "edgefactor"):
        if getattr(args, name) < 1:
            print(f"--{name.replace('_', '-')} must be positive, got {getattr(args, name)}",
                  file=sys.stderr)
            return 2
    cases = make_cases([g.strip() for g in args.graphs.split(",") if g.strip()], args)

    set_omp_wait(args.omp_wait)  # before numba's OpenMP layer loads
    import numba

    import spbfs
    from spbfs.graph500 import sample_roots, teps_statistics

    numba.set_num_threads(min(args.threads, numba.config.NUMBA_NUM_THREADS))
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    gapbs_wait = args.gapbs_omp_wait or args.omp_wait
    env.pop("OMP_WAIT_POLICY", None)
    if gapbs_wait != "unset":
        env["OMP_WAIT_POLICY"] = gapbs_wait.upper()

    cache = Path(args.cache).expanduser() if args.cache else default_cache()
    workroot = Path(tempfile.mkdtemp(prefix="spbfs-gapbs-", dir=args.workdir))
    exes: dict[str, Path] | None = None
    notes: list[str] = []
    try:
        print(f"load before: {load_average()}")
        if "gapbs" in systems:
            src, where = gapbs_source(args.gapbs, cache)
            t0 = time.perf_counter()
            exes = build_gapbs(src, cache)
            print(f"gapbs: {where}; built/cached in {time.perf_counter() - t0:.1f} s at "
                  f"{exes['bfs'].parent}")
            notes.append(_check_sg_writer(exes, env, workroot))
            print(f"check: {notes[-1]}")
        print(machine_line())
        print(f"spbfs {spbfs.__version__}, numba {numba.__version__} "
              f"({numba.threading_layer() if _numba_parallel_ran() else 'omp layer on first use'})"
              f", threads {args.threads}, OMP_WAIT_POLICY {args.omp_wait}; "
              f"GAPBS OMP_WAIT_POLICY {env.get('OMP_WAIT_POLICY', 'unset')}; spbfs returns "
              f"{'parents and levels' if args.output == 'both' else 'parents alone'}")

        summary: list[list[str]] = []
        prepared: tuple[str, Prepared] | None = None
        for case in cases:
            print(f"\n== {case.name}")
            if prepared is None or prepared[0] != case.graph_key:
                prepared = None
                gc.collect()
                t0 = time.perf_counter()
                edges, desc = case.make()
                gen_s = time.perf_counter() - t0
                wd = workroot / case.graph_key
                wd.mkdir(exist_ok=True)
                prep = Prepared(edges, desc, systems, args.threads, wd)
                prepared = (case.graph_key, prep)
                print(f"graph: {desc}: n={prep.n:,}, nnz={prep.nnz:,} ({prep.nnz // 2:,} "
                      f"undirected edges), input edges {edges.num_edges:,}; made in "
                      f"{gen_s:.1f} s, spbfs built in "
                      + ", ".join(f"{k} {v:.1f} s" for k, v in prep.build_s.items()))
            prep = prepared[1]
            if case.roots is not None:
                fixed = case.roots(prep)
                # A fixed root is searched --roots times per round (as many samples as a
                # sampled graph gets); each repetition is a "root" of the statistics.
                roots = (fixed * args.roots)[:max(args.roots, len(fixed))]
                what = f"fixed {', '.join(map(str, fixed))}, each {len(roots) // len(fixed)}x"
            else:
                roots = [int(r) for r in sample_roots(prep.out_degree, args.roots,
                                                      seed=args.root_seed)]
                what = f"sample_roots seed {args.root_seed}, first {roots[0] if roots else '-'}"
            if not roots:
                print("no vertex has an edge: nothing to search")
                continue
            fns = search_fns(prep, systems, args.output)
            status = check_first_root(prep, roots[0], fns, exes, env)
            # Depths from spbfs csr: BFS levels per search (depth + 1), and warm-up.
            depth_of = {r: int(np.max(spbfs.bfs(prep.graphs["csr"], r).levels))
                        for r in dict.fromkeys(roots)}
            depth = [depth_of[r] for r in roots]
            high = median(depth) >= HIGH_DIAMETER
            print(f"roots: {len(roots)} per round ({what}); depth min/median/max "
                  f"{min(depth)}/{int(median(depth))}/{max(depth)}; load {load_average()}")
            times, rss = time_case(prep, roots, systems, fns, exes, env, args.rounds,
                                   args.gapbs_trials)
            edges_per_search = prep.nnz / 2
            per_root = {s: np.array([median(t) for t in times[s]]) for s in systems}
            hmean = {s: teps_statistics(edges_per_search / per_root[s])["harmonic_mean"]
                     for s in systems}
            headers = ["system", "median ms", "min ms", "hmean MTEPS"]
            if high:
                headers.append("us/level")
            for base in ("spbfs-csr", "spbfs-dcsc"):
                if base in systems:
                    headers.append(f"{base.removeprefix('spbfs-')} speedup")
            headers.append("check")
            rows = []
            for s in systems:
                row = [s, format_ms(float(np.median(per_root[s]))),
                       format_ms(float(per_root[s].min())), f"{hmean[s] / 1e6:.1f}"]
                if high:
                    row.append(f"{np.mean(per_root[s] / (np.array(depth) + 1)) * 1e6:.2f}")
                for base in ("spbfs-csr", "spbfs-dcsc"):
                    if base in systems:
                        row.append("-" if s.startswith("spbfs") else
                                   f"{hmean[base] / hmean[s]:.2f}x")
                row.append(status.get(s, "-"))
                rows.append(row)
            print(format_table(headers, rows, markdown=args.markdown))
            if rss:
                print(f"gapbs peak RSS loading the .sg: {rss / 2**20:.0f} MiB = "
                      f"{rss / prep.edges.num_edges:.1f} B per input edge{_floor(rss)}")
            print(f"load after: {load_average()}")
            srow = [case.name, f"{int(median(depth))}"]
            for s in SYSTEMS:
                srow.append(format_ms(float(np.median(per_root[s]))) if s in systems else "-")
            for base in ("spbfs-csr", "spbfs-dcsc"):
                for peer in ("gapbs", "scipy"):
                    ok = base in systems and peer in systems
                    srow.append(f"{hmean[base] / hmean[peer]:.2f}" if ok else "-")
            summary.append(srow)

        prepared = None
        gc.collect()
        scales = [int(c.name[4:]) for c in cases if re.fullmatch(r"kron\d+", c.name)]
        rss_scale = args.rss_scale if args.rss_scale >= 0 else max(scales, default=0)
        if exes is not None and rss_scale > 0:
            run = run_gapbs(exes["bfs"], ["-g", str(rss_scale), "-k", str(args.edgefactor),
                                              "-n", "1"], env)
            m = args.edgefactor << rss_scale
            line = (f"gapbs bfs -g {rss_scale} -k {args.edgefactor} (generates and builds its "
                    f"own graph): peak RSS {run.peak_rss / 2**20:.0f} MiB = "
                    f"{run.peak_rss / m:.1f} B per input edge ({m:,} input edges)"
                    f"{_floor(run.peak_rss)}")
            print(f"\n{line}")
            notes.append(line)

        print("\nsummary (median ms per search; speedups = ratios of harmonic-mean TEPS, "
              "above 1: spbfs faster)")
        headers = ["graph", "depth", *(f"{s} ms" for s in SYSTEMS),
                   "csr/gapbs", "csr/scipy", "dcsc/gapbs", "dcsc/scipy"]
        print(format_table(headers, summary, markdown=args.markdown))
        for note in notes:
            print(f"  {note}")
        drop = ", the first dropped" if args.gapbs_trials > 1 else ""
        print(f"  TEPS: nnz/2 undirected edges per search; {args.rounds} interleaved rounds, "
              f"a root's time is its median; gapbs: {args.gapbs_trials} trial(s) per "
              f"process{drop}")
        print(f"load after all: {load_average()}")
        print(machine_line())
    finally:
        shutil.rmtree(workroot, ignore_errors=True)
    return 0


def _floor(rss: int) -> str:
    """A warning when a peak RSS is close to what the wrapper alone reports."""
    return " (near the ~8 MiB floor of the measurement)" if rss < 32 * 2**20 else ""


def _numba_parallel_ran() -> bool:
    try:
        import numba

        numba.threading_layer()
        return True
    except ValueError:  # no parallel kernel has run yet
        return False


if __name__ == "__main__":
    sys.exit(main())
