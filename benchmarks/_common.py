"""Functions shared by the benchmark scripts: load, tables, memory, machine state, and
the source and cached build of a peer written in C/C++."""

from __future__ import annotations

import hashlib
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "cached_build",
    "compiler_version",
    "describe_tree",
    "format_ms",
    "format_table",
    "free_memory_bytes",
    "git",
    "interleaved",
    "load_average",
    "load_edges",
    "machine_line",
    "median",
    "mpiexec",
    "peak_rss_bytes",
    "peer_cache",
    "peer_graph_names",
    "peer_graphs",
    "peer_source",
    "rss_bytes",
    "set_omp_wait",
    "tree_hash",
]


def load_edges(scale: int, edgefactor: int, seed: int, graph: str | None) -> tuple[Any, str]:
    """The benchmark's edge list and a one-line description of it.

    A Kronecker (Graph500) graph unless ``graph`` names a file, which is read
    with :func:`spbfs.io.read_graph`.
    """
    if graph:
        from spbfs.io import read_graph

        edges = read_graph(graph)
        kind = "directed" if edges.directed else "undirected"
        desc = f"{Path(graph).name}: n={edges.n:,} input edges={edges.num_edges:,} ({kind})"
    else:
        from spbfs.generators import kronecker

        edges = kronecker(scale, edgefactor, seed=seed)
        desc = (f"Kronecker scale {scale}, edge factor {edgefactor}, seed {seed}: "
                f"n={edges.n:,} input edges={edges.num_edges:,}")
    return edges, desc


#: The graphs every algorithm is compared on (name -> how it is made): a road network,
#: a grid and a mesh (high diameter), two power-law graphs (one directed) and Kronecker.
PEER_GRAPHS = {
    "luxembourg_osm": "spbfs.datasets.load('luxembourg_osm'), undirected",
    "grid1000": "spbfs.generators.grid2d(1000, 1000)",
    "mesh": "spbfs.generators.fe_mesh(500_000, seed=1)",
    "musae_git": "spbfs.datasets.load('musae_git'), undirected",
    "p2p-Gnutella31": "spbfs.datasets.load('p2p_gnutella31'), directed",
    "kron18": "spbfs.generators.kronecker(18, 16, seed=1)",
    "kron20": "spbfs.generators.kronecker(20, 16, seed=1)",
}


def peer_graph_names(spec: str | None) -> list[str]:
    """The names a ``--graphs`` option lists (comma-separated; all of them when empty)."""
    if not spec:
        return list(PEER_GRAPHS)
    names = [s.strip() for s in spec.split(",") if s.strip()]
    bad = [s for s in names if s not in PEER_GRAPHS]
    if bad:
        raise SystemExit(f"--graphs: unknown {bad}; choose from {', '.join(PEER_GRAPHS)}")
    return names


def peer_graphs(spec: str | None = None) -> Any:
    """Yield ``(name, edges)`` for the graphs named in ``spec`` (see :data:`PEER_GRAPHS`).

    Each is built when it is reached, so a run over several graphs holds one
    edge list at a time.
    """
    import spbfs.datasets as ds
    from spbfs.generators import fe_mesh, grid2d, kronecker

    makers = {
        "luxembourg_osm": lambda: ds.edges("luxembourg_osm"),
        "grid1000": lambda: grid2d(1000, 1000),
        "mesh": lambda: fe_mesh(500_000, seed=1),
        "musae_git": lambda: ds.edges("musae_git"),
        "p2p-Gnutella31": lambda: ds.edges("p2p_gnutella31"),
        "kron18": lambda: kronecker(18, 16, seed=1),
        "kron20": lambda: kronecker(20, 16, seed=1),
    }
    for name in peer_graph_names(spec):
        yield name, makers[name]()


def set_omp_wait(policy: str | None) -> None:
    """Set ``OMP_WAIT_POLICY`` for this process (``None``/``"unset"`` leaves it alone).

    Must run before the OpenMP runtime loads: before the first numba parallel
    kernel (numba's ``omp`` threading layer) and before ``import graphblas``.
    ``passive`` makes idle OpenMP workers sleep at once instead of spinning,
    which matters on an oversubscribed machine: a spinning worker takes a
    core from the thread that runs the next (often serial) step.
    """
    if policy and policy != "unset":
        os.environ["OMP_WAIT_POLICY"] = policy.upper()


def peak_rss_bytes() -> int:
    """Peak resident set size of this process so far (``ru_maxrss``, KiB on Linux)."""
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024


def rss_bytes() -> int:
    """Current resident set size (``/proc/self/statm``), 0 where unavailable."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def free_memory_bytes() -> int:
    """``MemAvailable`` from ``/proc/meminfo`` (what ``free`` calls available), or 0."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def load_average() -> str:
    """The 1/5/15-minute load averages, as ``uptime`` prints them."""
    try:
        a, b, c = os.getloadavg()
    except OSError:
        return "n/a"
    return f"{a:.2f}, {b:.2f}, {c:.2f}"


def machine_line() -> str:
    """Cores, numba threads, available memory and load: the context of a measurement."""
    try:
        import numba

        threads = str(numba.get_num_threads())
    except Exception:  # numba is a hard dependency; be robust anyway
        threads = "?"
    wait = os.environ.get("OMP_WAIT_POLICY", "unset")
    return (f"machine: {os.cpu_count()} cores, numba threads {threads}, OMP_WAIT_POLICY {wait}, "
            f"{free_memory_bytes() / 2**30:.1f} GiB available, load average {load_average()}")


def format_ms(seconds: float) -> str:
    """Seconds as milliseconds with two decimals, for a table cell.

    Parameters
    ----------
    seconds : float
        A time in seconds; NaN or infinite where there is no measurement.

    Returns
    -------
    str
        ``"12.35"`` for 0.012345 s; ``"-"`` where ``seconds`` is not finite,
        so that a system that did not run leaves a blank-looking cell, not ``nan``.
    """
    return f"{seconds * 1e3:.2f}" if np.isfinite(seconds) else "-"


def format_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], *,
                 markdown: bool = False, align: str | None = None) -> str:
    """Render rows as a fixed-width text table or a GitHub markdown table.

    Parameters
    ----------
    headers : sequence of str
        Column titles.
    rows : sequence of sequences
        Cells (converted with ``str``).
    markdown : bool
        Markdown pipes instead of padded columns.
    align : str, optional
        One of ``l``/``r`` per column; default: first column left, others right.
    """
    cells = [[str(c) for c in r] for r in rows]
    ncol = len(headers)
    align = align or ("l" + "r" * (ncol - 1))
    widths = [max([len(headers[j])] + [len(r[j]) for r in cells]) for j in range(ncol)]

    def fmt(r: Sequence[str]) -> list[str]:
        return [r[j].ljust(widths[j]) if align[j] == "l" else r[j].rjust(widths[j])
                for j in range(ncol)]

    if markdown:
        sep = ["-" * max(3, widths[j] - 1) + (":" if align[j] == "r" else "-")
               for j in range(ncol)]
        lines = ["| " + " | ".join(fmt(list(headers))) + " |", "| " + " | ".join(sep) + " |"]
        lines += ["| " + " | ".join(fmt(r)) + " |" for r in cells]
    else:
        lines = ["  ".join(fmt(list(headers))), "  ".join("-" * w for w in widths)]
        lines += ["  ".join(fmt(r)) for r in cells]
    return "\n".join(line.rstrip() for line in lines)


def median(x: Sequence[float] | np.ndarray) -> float:
    """Median of a non-empty sequence."""
    return float(np.median(np.asarray(x, dtype=np.float64)))


def interleaved(calls: dict[str, Any], rounds: int, *, warm: bool = True) -> dict[str, list[float]]:
    """Time each zero-argument callable once per round, rotating the order every round.

    Returns the seconds per round of each name. ``warm`` runs every callable once
    first, untimed (compilation, caches), so no compile time is ever measured.
    Rotating the order lets a load change on a shared machine hit every system alike.
    """
    names = list(calls)
    if warm:
        for name in names:
            calls[name]()
    times: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        k = r % len(names) if names else 0
        for name in names[k:] + names[:k]:
            t0 = time.perf_counter()
            calls[name]()
            times[name].append(time.perf_counter() - t0)
    return times


#: What a busy process runs: one core kept busy.
BUSY = "while True: pass"


def uptime() -> str:
    """``uptime``'s line, or the load averages where the command is missing."""
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return f"load average: {load_average()}"


def start_busy(k: int, nice: int = 0) -> list[subprocess.Popen]:
    """``k`` processes that keep a core busy each (at niceness ``nice``), running once
    this returns."""
    code = f"import os; os.nice({nice}); {BUSY}" if nice else BUSY
    procs = [subprocess.Popen([sys.executable, "-c", code]) for _ in range(k)]
    time.sleep(0.3 if k else 0.0)  # past the interpreter's start-up
    return procs


def stop_busy(procs: list[subprocess.Popen]) -> None:
    """End what :func:`start_busy` started."""
    for p in procs:
        p.kill()
    for p in procs:
        p.wait()


# ------------------------------------------------------------------------ peers built from source


def mpiexec() -> str:
    """The ``mpiexec`` beside this interpreter (the ``mpich`` wheel's), else on ``PATH``."""
    here = str(Path(sys.executable).parent)
    exe = shutil.which("mpiexec", path=here + os.pathsep + os.environ.get("PATH", ""))
    if exe is None:
        sys.exit("mpiexec not found (install the mpich wheel: pip install mpich)")
    return os.path.normpath(os.path.abspath(exe))  # one spelling: a build cache key holds it


def peer_cache(name: str) -> Path:
    """``$XDG_CACHE_HOME/spbfs/<name>`` (``~/.cache/spbfs/<name>``): a peer's source and builds."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "spbfs" / name


def git(*args: str) -> str:
    """``git args...``'s standard output (raises ``CalledProcessError`` on failure)."""
    return subprocess.run(["git", *args], check=True, capture_output=True, text=True).stdout


def describe_tree(tree: Path) -> str:
    """``commit <short hash>`` of a checkout, or ``not a git checkout``."""
    try:
        return "commit " + git("-C", str(tree), "rev-parse", "--short=12", "HEAD").strip()
    except (OSError, subprocess.CalledProcessError):
        return "not a git checkout"


def _glob_literal(path: str) -> str:
    """A sparse-checkout pattern matching exactly ``path`` (glob characters escaped)."""
    return "".join("\\" + ch if ch in "*?[]\\!#" else ch for ch in path)


def _checkout_present(dest: Path) -> int:
    """Check out HEAD in a ``--no-checkout`` clone, leaving out files whose blobs are absent.

    A stored snapshot of a repository may lack some large data files; ``git
    checkout`` would then fail as a whole. The absent ones (none of them sources,
    for the peers built here) are left out with a sparse checkout. Returns how
    many were left out.
    """
    tree = git("-C", str(dest), "ls-tree", "-r", "-z", "HEAD").split("\0")
    entries = [e.split("\t", 1) for e in tree if e]
    blobs = [(meta.split()[2], path) for meta, path in entries if meta.split()[1] == "blob"]
    check = subprocess.run(["git", "-C", str(dest), "cat-file", "--batch-check"],
                           input="".join(f"{sha}\n" for sha, _ in blobs), capture_output=True,
                           text=True, check=True).stdout.splitlines()
    missing = [path for (_, path), line in zip(blobs, check, strict=True)
               if line.endswith(" missing")]
    if missing:
        git("-C", str(dest), "sparse-checkout", "set", "--no-cone", "/*",
            *("!/" + _glob_literal(p) for p in missing))
    git("-C", str(dest), "checkout", "--quiet", "HEAD")
    return len(missing)


def peer_source(spec: str | None, cache: Path, *, name: str, marker: str, url: str,
                option: str) -> tuple[Path, str]:
    """A peer's source tree and a one-line description of where it came from.

    Parameters
    ----------
    spec : str or None
        A source checkout (holding ``marker``), a git directory (bare or
        ``.git``: cloned into ``cache/src-<commit>``), or None: clone ``url``
        into ``cache/src`` once (needs internet).
    cache : pathlib.Path
        The cache folder.
    name : str
        The peer's name, for messages.
    marker : str
        A file every source tree of the peer holds (``src/bfs.cc``).
    url : str
        The peer's public repository.
    option : str
        The command-line option that passes ``spec``, for messages.
    """
    if spec is None:
        dest = cache / "src"
        if not (dest / marker).exists():
            cache.mkdir(parents=True, exist_ok=True)
            try:
                subprocess.run(["git", "clone", "--quiet", "--depth", "1", url, str(dest)],
                               check=True, capture_output=True, text=True)
            except (OSError, subprocess.CalledProcessError) as exc:
                err = getattr(exc, "stderr", "") or exc
                raise SystemExit(f"cannot clone {url} into {dest} ({err}); without internet "
                                 f"pass {option} DIR (a {name} checkout or git "
                                 f"directory)") from None
        return dest, f"{url} ({describe_tree(dest)})"
    path = Path(spec).expanduser().resolve()
    if (path / marker).exists():
        return path, f"{path} ({describe_tree(path)})"
    try:
        commit = git("--git-dir", str(path), "rev-parse", "HEAD").strip()
    except (OSError, subprocess.CalledProcessError):
        raise SystemExit(f"{option} {spec}: neither a {name} source tree (no {marker}) nor a "
                         f"git directory") from None
    dest = cache / f"src-{commit[:12]}"
    left_out = 0
    if not (dest / marker).exists():
        cache.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(dest, ignore_errors=True)
        git("clone", "--quiet", "--no-checkout", str(path), str(dest))
        left_out = _checkout_present(dest)
        if not (dest / marker).exists():
            raise SystemExit(f"{option} {spec}: its HEAD has no {marker}; is it {name}?")
    note = f", {left_out} data files absent from the git directory left out" if left_out else ""
    return dest, f"{path} (commit {commit[:12]}{note})"


def compiler_version(cmd: Sequence[str], what: str) -> str:
    """``cmd --version``'s output (part of a build's cache key); exits if it fails."""
    try:
        return subprocess.run([*cmd, "--version"], check=True, capture_output=True,
                              text=True).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        raise SystemExit(f"{what}: {' '.join(cmd)} --version failed ({exc})") from None


def tree_hash(src: Path, keep: Callable[[Path], bool], *extra: str) -> str:
    """A hash of the files of ``src`` that ``keep(relative path)`` selects, and ``extra``.

    ``.git`` is never read. The key of a cached build: sources, build files,
    compiler version and flags.
    """
    h = hashlib.sha256("\0".join(extra).encode())
    for f in sorted(src.rglob("*")):
        rel = f.relative_to(src)
        if f.is_file() and rel.parts[0] != ".git" and keep(rel):
            h.update(str(rel).encode())
            h.update(f.read_bytes())
    return h.hexdigest()[:16]


def cached_build(cache: Path, key: str, build: Callable[[Path], None],
                 outputs: Sequence[str]) -> dict[str, Path]:
    """The ``outputs`` (paths relative to the build folder) of ``cache/build-<key>``.

    Where they are missing, ``build(folder)`` fills a fresh temporary folder,
    which then replaces ``cache/build-<key>`` whole: a build that failed or was
    interrupted never looks complete.
    """
    dest = cache / f"build-{key}"
    paths = {o: dest / o for o in outputs}
    if all(p.exists() for p in paths.values()):
        return paths
    cache.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="build-", dir=cache))
    try:
        build(tmp)
        missing = [o for o in outputs if not (tmp / o).exists()]
        if missing:
            raise SystemExit(f"the build in {tmp} made no {', '.join(missing)}")
        shutil.rmtree(dest, ignore_errors=True)
        tmp.rename(dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return paths
