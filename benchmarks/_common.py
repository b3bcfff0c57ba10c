"""Functions shared by the benchmark scripts: load, tables, memory and machine state."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "format_ms",
    "format_table",
    "free_memory_bytes",
    "interleaved",
    "load_average",
    "load_edges",
    "machine_line",
    "median",
    "peak_rss_bytes",
    "peer_graph_names",
    "peer_graphs",
    "rss_bytes",
    "set_omp_wait",
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
