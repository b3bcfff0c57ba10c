"""spbfs's MPI grid against CombBLAS's direction-optimizing BFS, on 1 and 4 ranks.

Systems
-------
``spbfs``
    ``mpiexec -n P python -m spbfs.mpi bench`` (the 2-D grid, ``--grid 1x1`` or
    ``2x2``, csr blocks, ``direction="auto"``, ``--threads 1``), launched through
    ``benchmarks/dist.py``'s :func:`dist.run`.
``combblas``
    CombBLAS's ``Applications/DirOptBFS.cpp`` (``dobfs``: Beamer, Buluç,
    Asanović and Patterson, "Distributed memory breadth-first search revisited:
    enabling bottom-up search"; 2-D top-down after Buluç and Madduri), built
    here with CMake (``-DCMAKE_BUILD_TYPE=Release``: ``-O3``; OpenMP found, so
    ``THREADED``) against the ``mpich`` wheel's ``mpicxx``, and run with
    ``OMP_NUM_THREADS=1``. No CombBLAS code is part of spbfs: ``--combblas DIR``
    names a source checkout or a git directory, and without it the repository is
    cloned into the cache folder (needs internet). The build is cached per source,
    compiler and flags; only the ``dobfs`` target is built.

Grids: CombBLAS's ``CommGrid(MPI_COMM_WORLD, 0, 0)`` (the one ``dobfs`` makes)
takes the square root of the rank count and aborts otherwise ("only works on a
square logical processor grid"), so 2 ranks cannot run: 1 rank (1x1) and 4 ranks
(2x2) are compared. On a 2-core machine 4 ranks oversubscribe the cores.

Same generator, not the same graph: ``dobfs`` takes only a scale and generates
its own graph with the Graph500 2.1 reference generator (``RefGen21::make_graph``,
initiator 0.57, 0.19, 0.19, 0.05, edge factor 16, vertex ids scrambled; seed 0,
since DirOptBFS.cpp defines ``DETERMINISTIC``: the same graph on any rank count),
then drops loops, duplicates and isolated vertices and symmetrizes. spbfs
generates a Kronecker graph with the same parameters from its own random stream
(:func:`spbfs.generators.kronecker`, ``--seed``). The two graphs have the same
distribution, not the same edges.

Roots: 64 for both, since ``dobfs`` fixes them (``#define ITERS 64``): CombBLAS
draws them from its non-isolated vertices with a Mersenne Twister of a fixed
seed (the same roots every run); spbfs samples 64 vertices with an edge
(``--seed``, the same roots every round).

Timing: each system's own clock around one search: CombBLAS's per-search
``BFS time:`` line (``MPI_Wtime`` between barriers, parents and frontier set up
before it), spbfs's per-search times from its JSON. Neither is warmed up by
this script (both time all 64 searches). Rounds interleave the systems: every
round runs each (scale, ranks) case once per system, the system order rotated
by one every round. A case's median is over all searches of all rounds.

Edges counted alike: TEPS = (undirected edges of the whole graph) / time, where
the undirected edges are ``nnz / 2`` of the symmetric loop-free adjacency
matrix each system built (CombBLAS's last ``As a whole: ... nonzeros`` line,
spbfs's ``stored_entries``). Both systems' own TEPS count the Graph500 input
edges instead; those are not used. Harmonic-mean TEPS over all searches.

Checks: every CombBLAS run must print 64 searches on one thread, each reaching
at most its vertex count, and a symmetric matrix (even nnz), or the script
stops. Printed side by side: both graphs' ``nnz / 2`` (same parameters: within
a few per cent; measured within 0.1 %) and CombBLAS's non-isolated vertices; the
Graph500 count of input edges in each search's component (CombBLAS's ``Number
of edges traversed``, spbfs's ``nedges``) over ``edgefactor * 2**scale``, median
over the searches, for both (the ``agree`` column says ``DIFFER`` beyond 2 per
cent: one system would not be searching the giant component). spbfs validates
its first search of every run with the Graph500 rules (:mod:`spbfs.mpi.validate`;
a failure stops the job); ``dobfs`` checks none of its trees.

Run ``python benchmarks/combblas.py --help``; see ``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import (
    cached_build,
    compiler_version,
    format_table,
    load_average,
    mpiexec,
    peer_cache,
    peer_source,
    tree_hash,
    uptime,
)
from dist import run as run_spbfs

COMBBLAS_URL = "https://github.com/PASSIONLab/CombBLAS"
#: CMake flags of the build (part of its cache key).
CMAKE_FLAGS = ("-DCMAKE_BUILD_TYPE=Release",)
#: Edge factor of both graphs (``dobfs``'s ``#define EDGEFACTOR``).
EDGEFACTOR = 16
#: Searches per ``dobfs`` run (its ``#define ITERS``).
COMBBLAS_ROOTS = 64
#: Rank counts CombBLAS runs on this machine: square grids only.
RANKS = {1: "1x1", 4: "2x2"}
SYSTEMS = ("spbfs", "combblas")

# --------------------------------------------------------------------------- CombBLAS output


@dataclass
class CombblasRun:
    """What one ``dobfs`` run printed.

    Attributes
    ----------
    times : list of float
        ``BFS time`` of each search, seconds.
    traversed : list of int
        ``Number of edges traversed`` of each search: the Graph500 count (input
        edges with duplicates and loops, of the vertices reached).
    found : list of int
        ``Number of vertices found`` of each search.
    vertices, nnz : int
        Rows and nonzeros of the symmetric matrix searched (last ``As a whole``
        line: isolated vertices dropped, loops and duplicates removed).
    threads : int
        ``Threading activated with T threads`` (-1 when absent: built without OpenMP).
    """

    times: list[float]
    traversed: list[int]
    found: list[int]
    vertices: int
    nnz: int
    threads: int = -1


_TIME_RE = re.compile(r"^BFS time: ([0-9.eE+-]+) seconds$", re.M)
_TRAVERSED_RE = re.compile(r"^Number of edges traversed: (\d+)$", re.M)
_FOUND_RE = re.compile(r"^Number of vertices found: (\d+)$", re.M)
_MATRIX_RE = re.compile(r"^As a whole: (\d+) rows and (\d+) columns and (\d+) nonzeros$", re.M)
_THREADS_RE = re.compile(r"^Threading activated with (\d+) threads$", re.M)


def parse_dobfs(text: str) -> CombblasRun:
    """Parse the standard output of CombBLAS's ``dobfs`` (``Applications/DirOptBFS.cpp``).

    Raises
    ------
    ValueError
        If no ``BFS time`` line or no matrix size is present, or the per-search
        lines do not pair up (the run failed or the output format changed): the
        end of the output is quoted.
    """
    times = [float(x) for x in _TIME_RE.findall(text)]
    traversed = [int(x) for x in _TRAVERSED_RE.findall(text)]
    found = [int(x) for x in _FOUND_RE.findall(text)]
    matrices = _MATRIX_RE.findall(text)
    if not times or not matrices:
        raise ValueError(f"no 'BFS time' or 'As a whole: ... nonzeros' line in CombBLAS's "
                         f"output:\n{text[-2000:]}")
    if not len(times) == len(traversed) == len(found):
        raise ValueError(f"CombBLAS's output has {len(times)} 'BFS time', {len(traversed)} "
                         f"'Number of edges traversed' and {len(found)} 'Number of vertices "
                         f"found' lines; one of each per search expected")
    rows, _, nnz = (int(x) for x in matrices[-1])
    threads = _THREADS_RE.findall(text)
    return CombblasRun(times, traversed, found, rows, nnz, int(threads[-1]) if threads else -1)


# --------------------------------------------------------------------------- CombBLAS build


def default_cache() -> Path:
    """``$XDG_CACHE_HOME/spbfs/combblas`` (``~/.cache/spbfs/combblas``)."""
    return peer_cache("combblas")


def _build_input(rel: Path) -> bool:
    """The files a ``dobfs`` build reads (its cache key)."""
    return (rel.parts[0] in ("include", "src", "usort", "psort-1.0", "graph500-1.2", "cmake")
            or rel.name == "CMakeLists.txt" or rel.as_posix() == "Applications/DirOptBFS.cpp")


def build_combblas(src: Path, cache: Path, jobs: int = 2) -> Path:
    """Build CombBLAS's ``dobfs`` with CMake, once per source, compiler and flags.

    CMake configures ``src`` into a build folder of the cache (the source is
    never written to) with :data:`CMAKE_FLAGS` and the ``mpicxx`` beside this
    interpreter; ``make -j jobs dobfs`` builds the library and that one target.
    Returns the executable.
    """
    bindir = Path(mpiexec()).parent
    mpicxx, mpicc = bindir / "mpicxx", bindir / "mpicc"
    version = compiler_version([str(mpicxx)], "CombBLAS needs an MPI C++ compiler (mpicxx)")
    key = tree_hash(src, _build_input, version, str(mpicxx), *CMAKE_FLAGS)

    def build(tmp: Path) -> None:
        for cmd in (["cmake", "-S", str(src), "-B", str(tmp), *CMAKE_FLAGS,
                     f"-DMPI_CXX_COMPILER={mpicxx}", f"-DMPI_C_COMPILER={mpicc}"],
                    ["make", "-C", str(tmp), f"-j{jobs}", "dobfs"]):
            res = subprocess.run(cmd, capture_output=True, text=True)
            if res.returncode != 0:
                raise SystemExit(f"building CombBLAS failed ({' '.join(cmd)}):\n"
                                 f"{res.stdout[-4000:]}\n{res.stderr[-4000:]}")

    return cached_build(cache, key, build, ["Applications/dobfs"])["Applications/dobfs"]


def run_combblas(exe: Path, ranks: int, scale: int, workdir: Path,
                 timeout: float) -> CombblasRun:
    """``mpiexec -n ranks dobfs scale`` with one OpenMP thread; its parsed output."""
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    cmd = [mpiexec(), "-n", str(ranks), str(exe), str(scale)]
    res = subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True,
                         timeout=timeout)
    if res.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {res.returncode}:\n{res.stdout[-2000:]}"
                           f"{res.stderr[-2000:]}")
    # SpParHelper::Print (the per-search lines) writes to stderr, PrintInfo to stdout.
    return parse_dobfs(res.stdout + res.stderr)


# --------------------------------------------------------------------------- measurement


@dataclass
class Sample:
    """One run's searches: times (s), undirected edges (``nnz / 2``), the median
    Graph500 count of input edges reached over ``edgefactor * 2**scale``, the
    1-minute load after the run, and the vertices searched (CombBLAS: the
    non-isolated ones; -1 where not reported)."""

    times: list[float]
    edges: int
    traversed_fraction: float
    load: float
    vertices: int = -1


def _spbfs_sample(scale: int, ranks: int, args: argparse.Namespace) -> Sample:
    doc = run_spbfs(RANKS[ranks], scale, roots=COMBBLAS_ROOTS, validate_roots=1,
                    edgefactor=EDGEFACTOR, seed=args.seed, timeout=args.timeout,
                    extra=["--threads", "1"])
    # A search that fails the Graph500 rules makes the job exit non-zero
    # (dist.run raises); this checks that the first one was validated at all.
    if doc["validate_times"][0] is None:
        raise RuntimeError("spbfs's bench validated no search")
    m = EDGEFACTOR * 2**scale
    return Sample(list(doc["times"]), doc["stored_entries"] // 2,
                  float(np.median(doc["nedges"])) / m, os.getloadavg()[0])


def _combblas_sample(exe: Path, scale: int, ranks: int, args: argparse.Namespace,
                     workdir: Path) -> Sample:
    run = run_combblas(exe, ranks, scale, workdir, args.timeout)
    if len(run.times) != COMBBLAS_ROOTS or run.threads not in (-1, 1):
        raise RuntimeError(f"dobfs ran {len(run.times)} searches on {run.threads} threads; "
                           f"{COMBBLAS_ROOTS} on 1 expected")
    if max(run.found) > run.vertices or run.nnz % 2:
        raise RuntimeError(f"dobfs reached {max(run.found)} of {run.vertices} vertices, "
                           f"nnz {run.nnz}: not a symmetric matrix's search")
    m = EDGEFACTOR * 2**scale
    return Sample(run.times, run.nnz // 2, float(np.median(run.traversed)) / m,
                  os.getloadavg()[0], run.vertices)


def measure(exe: Path, args: argparse.Namespace) -> dict[tuple[int, int, str], list[Sample]]:
    """Every (scale, ranks, system) once per round, the system order rotated each round."""
    out: dict[tuple[int, int, str], list[Sample]] = {}
    with tempfile.TemporaryDirectory(prefix="spbfs-combblas-") as tmp:
        for r in range(args.rounds):
            order = SYSTEMS[r % 2:] + SYSTEMS[:r % 2]
            for scale in args.scales:
                for ranks in args.ranks:
                    for system in order:
                        t0 = time.perf_counter()
                        s = (_spbfs_sample(scale, ranks, args) if system == "spbfs" else
                             _combblas_sample(exe, scale, ranks, args, Path(tmp)))
                        out.setdefault((scale, ranks, system), []).append(s)
                        print(f"  round {r + 1}: scale {scale}, {ranks} rank(s), {system}: "
                              f"median {np.median(s.times) * 1e3:.2f} ms "
                              f"({time.perf_counter() - t0:.0f} s, load {s.load:.1f})",
                              file=sys.stderr, flush=True)
    return out


def _hmean_teps(samples: Sequence[Sample]) -> float:
    teps = np.concatenate([s.edges / np.asarray(s.times) for s in samples])
    return float(len(teps) / np.sum(1.0 / teps))


def _mteps(teps: float) -> str:
    """Millions of TEPS: whole numbers from 100 M up, one decimal below."""
    return f"{teps / 1e6:.0f}" if teps >= 1e8 else f"{teps / 1e6:.1f}"


def report(res: dict[tuple[int, int, str], list[Sample]], args: argparse.Namespace) -> str:
    """The comparison table and the graph checks, as text."""
    rows, checks = [], []
    for scale in args.scales:
        for ranks in args.ranks:
            sp, cb = res[(scale, ranks, "spbfs")], res[(scale, ranks, "combblas")]
            ms = {k: float(np.median(np.concatenate([s.times for s in v]))) * 1e3
                  for k, v in (("spbfs", sp), ("combblas", cb))}
            teps = {"spbfs": _hmean_teps(sp), "combblas": _hmean_teps(cb)}
            paired = [_hmean_teps([a]) / _hmean_teps([b]) for a, b in zip(sp, cb, strict=True)]
            loads = [s.load for s in sp + cb]
            rows.append([scale, f"{ranks} ({RANKS[ranks]})", f"{ms['spbfs']:.2f}",
                         _mteps(teps["spbfs"]), f"{ms['combblas']:.2f}",
                         _mteps(teps["combblas"]),
                         f"{teps['spbfs'] / teps['combblas']:.1f}",
                         f"{min(paired):.1f}-{max(paired):.1f}",
                         f"{min(loads):.1f}-{max(loads):.1f}"])
            fs, fc = np.median([s.traversed_fraction for s in sp]), \
                np.median([s.traversed_fraction for s in cb])
            checks.append([scale, ranks, sp[0].edges, cb[0].edges,
                           f"{cb[0].edges / sp[0].edges:.3f}", cb[0].vertices,
                           f"{fs:.3f}", f"{fc:.3f}", "ok" if abs(fs - fc) <= 0.02 else "DIFFER"])
    table = format_table(
        ["scale", "ranks (grid)", "spbfs ms", "spbfs MTEPS", "CombBLAS ms", "CombBLAS MTEPS",
         "spbfs / CombBLAS", "per round", "load (1 min)"], rows, markdown=args.markdown)
    check = format_table(
        ["scale", "ranks", "spbfs nnz/2", "CombBLAS nnz/2", "ratio", "CombBLAS vertices",
         "spbfs Graph500 edges reached / m", "CombBLAS same", "agree"], checks,
        markdown=args.markdown)
    return (f"Kronecker (Graph500 generator parameters a=0.57, b=c=0.19, edge factor "
            f"{EDGEFACTOR}; each system its own generator, so not the same edges), "
            f"{COMBBLAS_ROOTS} roots, {args.rounds} round(s); ms: median per search; MTEPS: "
            f"harmonic mean with nnz / 2 edges; ratios of harmonic-mean TEPS (above 1: spbfs "
            f"faster), pooled and per round:\n\n{table}\n\nGraphs and searches:\n\n{check}\n")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--combblas", metavar="DIR", default=None,
                   help="CombBLAS source checkout or git directory (default: clone "
                        f"{COMBBLAS_URL} into the cache folder)")
    p.add_argument("--cache", metavar="DIR", default=None,
                   help=f"cache folder for CombBLAS's source and build (default {default_cache()})")
    p.add_argument("--scales", type=int, nargs="+", default=[16, 18],
                   help="Kronecker scales (default 16 18)")
    p.add_argument("--ranks", type=int, nargs="+", default=sorted(RANKS), choices=sorted(RANKS),
                   help="rank counts (square grids: 1 and 4)")
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    p.add_argument("--seed", type=int, default=1, help="spbfs generator and root seed (default 1)")
    p.add_argument("--timeout", type=float, default=1200, help="seconds per MPI job")
    p.add_argument("--build-only", action="store_true", help="build (or find) dobfs and stop")
    p.add_argument("--markdown", action="store_true", help="markdown tables")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.rounds < 1:
        raise SystemExit(f"--rounds {args.rounds}: at least 1")
    cache = Path(args.cache).expanduser() if args.cache else default_cache()
    t0 = time.perf_counter()
    src, where = peer_source(args.combblas, cache, name="CombBLAS",
                             marker="Applications/DirOptBFS.cpp", url=COMBBLAS_URL,
                             option="--combblas")
    exe = build_combblas(src, cache)
    print(f"combblas: {where}; dobfs built/cached in {time.perf_counter() - t0:.1f} s at {exe} "
          f"(CMake {' '.join(CMAKE_FLAGS)}, mpicxx of the mpich wheel, OMP_NUM_THREADS=1)")
    if args.build_only:
        return 0
    print(f"uptime before: {uptime()}", flush=True)
    res = measure(exe, args)
    print(f"uptime after: {uptime()} (load average now {load_average()})\n")
    print(report(res, args))
    if 4 in args.ranks and (os.cpu_count() or 1) < 4:
        print(f"4 ranks on {os.cpu_count()} cores are oversubscribed.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
