"""``python -m spbfs.mpi bench|bfs``: the distributed command line.

``spbfs bench`` and ``spbfs bfs`` forward here under ``mpiexec`` or with
``--grid``. Errors every rank sees alike (a bad option, a grid that does not
match the rank count, an unreadable file) print one line ``Error: ...`` from
rank 0 and exit with status 2 on every rank, without a traceback
(``SPBFS_DEBUG=1`` shows one). Anything else raised on a single rank goes to
the hook of :func:`~spbfs.mpi.comm.install_excepthook`, which aborts the job.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
import traceback
from collections.abc import Sequence
from typing import Any, NoReturn

import numpy as np

from spbfs.cli import add_bench_arguments, add_bfs_arguments, add_config_arguments
from spbfs.mpi import comm as C
from spbfs.mpi.comm import CollectiveError

__all__ = ["main", "run_main"]


class _UsageError(Exception):
    """A command-line error (the same on every rank)."""


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of exiting, and prints help on rank 0 only."""

    rank = 0

    def error(self, message: str) -> NoReturn:
        raise _UsageError(message)

    def _print_message(self, message: str, file: Any = None) -> None:
        if _Parser.rank == 0:
            super()._print_message(message, file)


def _add_common(p: argparse.ArgumentParser) -> None:
    add_config_arguments(p)
    p.add_argument("--frontier-encoding", choices=("auto", "list", "bitmap"),
                   help="frontier messages as id lists, bitmaps, or the smaller (auto)")


def _parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="python -m spbfs.mpi",
                 description="2D-distributed direction-optimizing BFS (run under mpiexec).")
    sub = ap.add_subparsers(dest="command", required=True, parser_class=_Parser)
    b = sub.add_parser("bench", help="Graph500-style benchmark on a Kronecker graph")
    add_bench_arguments(b)
    b.add_argument("--validate-roots", type=int,
                   help="validate only the first K searches (default: all)")
    b.add_argument("--json", help="also write every measurement to this JSON file (rank 0)")
    _add_common(b)
    f = sub.add_parser("bfs", help="one search on a graph file (read in slices by all ranks)")
    add_bfs_arguments(f)
    f.add_argument("--validate", action="store_true", help="run the Graph500 checks")
    _add_common(f)
    return ap


def _config(args: argparse.Namespace) -> Any:
    from spbfs.config import load_config

    try:
        cfg = load_config(
            args.config, format=args.format, backend=args.backend, direction=args.direction,
            alpha=args.alpha, beta=args.beta, grid=args.grid, threads=args.threads,
            bind=args.bind, frontier_encoding=args.frontier_encoding,
        )
    except (OSError, ValueError) as exc:
        raise CollectiveError(str(exc)) from None
    if cfg.backend == "cupy":
        raise CollectiveError("the distributed search runs the numba CPU kernels; "
                              "--backend cupy is not supported on a grid")
    return cfg


def _pinned(grid: Any) -> str:
    """The core of every rank (``-`` where unpinned), gathered on rank 0."""
    from spbfs.mpi import comm as C

    cpus = C.gatherv(grid.comm, np.array([-1 if grid.cpu is None else grid.cpu]))
    if grid.rank != 0:
        return ""
    return "none" if (cpus < 0).all() else ",".join("-" if c < 0 else str(c) for c in cpus)


def _out(rank: int, text: str) -> None:
    if rank == 0:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        sys.stdout.flush()


def _clean(x: Any) -> Any:
    """JSON-safe: numpy scalars to Python, NaN/inf to None."""
    if isinstance(x, dict):
        return {str(k): _clean(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_clean(v) for v in x]
    if isinstance(x, np.ndarray):
        return _clean(x.tolist())
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, float | np.floating):
        x = float(x)
        return None if math.isnan(x) or math.isinf(x) else x
    return x


def _phase_table(seconds: dict[str, float], messages: dict[str, float],
                 words: dict[str, float], nsearch: int) -> str:
    total = sum(seconds.values()) or 1.0
    lines = [f"per-search phase split (mean of {nsearch} searches; ms are the mean over "
             f"ranks, messages and words the sum over ranks)",
             f"{'phase':<16}{'ms/search':>11}{'share':>8}{'messages':>11}{'words':>14}"]
    for ph, s in seconds.items():
        m = f"{messages[ph]:.0f}" if ph in messages else "-"
        w = f"{words[ph]:.0f}" if ph in words else "-"
        lines.append(f"{ph:<16}{s * 1e3:>11.3f}{100 * s / total:>7.1f}%{m:>11}{w:>14}")
    lines.append(f"{'total':<16}{total * 1e3:>11.3f}{100.0:>7.1f}%"
                 f"{sum(messages.values()):>11.0f}{sum(words.values()):>14.0f}")
    return "\n".join(lines)


def _cmd_bench(args: argparse.Namespace, cfg: Any, grid: Any) -> int:
    import numba

    from spbfs.graph500 import BenchmarkResult
    from spbfs.mpi.bfs import COMM_PHASES, LOCAL_PHASES, bfs, traversed_edges
    from spbfs.mpi.graph import DistGraph

    rank = grid.rank
    comm = grid.comm
    if args.roots < 1:
        raise CollectiveError(f"--roots must be at least 1, got {args.roots}")
    g = DistGraph.kronecker(args.scale, args.edgefactor, seed=args.seed, grid=grid, config=cfg)
    roots = g.sample_roots(args.roots, seed=args.seed)
    if roots.size == 0:
        raise CollectiveError("no vertex has an edge: nothing to search")
    nval = 0 if args.no_validate else (roots.size if args.validate_roots is None
                                       else max(0, min(args.validate_roots, roots.size)))
    # Warm-up, untimed: first touch, and numba loading each kernel on its first
    # call with a type signature (about 8 ms per kernel and rank). A few levels
    # of both directions and both frontier encodings besides, so that no load
    # falls inside a timed search: with one warm-up search, a later root whose
    # top-down level received a bitmap piece loaded ids_from_bits (2x2, scale
    # 10: 12.9 ms against 2.5 for the other searches).
    # Each result is validated or counted before the next search, so the searches
    # share one pair of output arrays (as Graph500's reference does).
    out = (np.empty(g.hi - g.lo, np.int64), np.empty(g.hi - g.lo, np.int64))
    bfs(g, int(roots[0]), out=out)
    for direction, encoding in (("top-down", "bitmap"), ("bottom-up", "list")):
        bfs(g, int(roots[0]), direction=direction, frontier_encoding=encoding, max_depth=3,
            out=out)
    nb = roots.size
    times = np.zeros(nb)
    nedges = np.zeros(nb, dtype=np.int64)
    vtimes = np.full(nb, np.nan)
    cpu = 0.0
    wall = 0.0
    bu_levels = []
    nlevels = []
    phases = COMM_PHASES + LOCAL_PHASES
    sec = dict.fromkeys(phases, 0.0)
    msgs = dict.fromkeys(COMM_PHASES, 0)
    words = dict.fromkeys(COMM_PHASES, 0)
    for k, root in enumerate(roots.tolist()):
        C.wait_barrier(comm)
        c0 = time.process_time()
        t0 = time.perf_counter()
        r = bfs(g, root, out=out)
        el = time.perf_counter() - t0
        dc = time.process_time() - c0
        red = C.allreduce(comm, np.array([el, dc]))
        times[k] = float(C.allreduce(comm, np.array([el]), "max")[0])
        cpu += float(red[1])
        wall += times[k]
        if k < nval:
            t0 = time.perf_counter()
            info = r.validate(g)
            vtimes[k] = float(C.allreduce(comm, np.array([time.perf_counter() - t0]),
                                          "max")[0])
            nedges[k] = info["component_edges"]
        else:
            nedges[k] = traversed_edges(g, r)
        bu_levels.append(r.bottomup_levels)
        nlevels.append(len(r.stats))
        for ph, s in r.phase_seconds.items():
            sec[ph] += s / nb
        for ph, v in r.messages_by_phase().items():
            msgs[ph] += v / nb
        for ph, v in r.words_by_phase().items():
            words[ph] += v / nb
    with np.errstate(divide="ignore"):
        teps = nedges / times
    mem = g.memory()
    stored = g.stored_entries
    header = {
        "SCALE": args.scale,
        "edgefactor": args.edgefactor,
        "graph_generation": g.generation_time,
        "num_mpi_processes": grid.size,
        "construction_time": g.construction_time,
        "grid": f"{grid.pr}x{grid.pc}",
        "format": cfg.format,
        "backend": "numba",
        "direction": cfg.direction,
        "frontier_encoding": cfg.frontier_encoding,
        "threads_per_rank": numba.get_num_threads(),
        "pinned_cores": _pinned(grid),
        "bytes_per_edge": (mem["block"] + mem["tblock"]) / max(g.input_edges, 1),
        "cpu_seconds_per_search": cpu / nb,
        "cores_busy_during_search": cpu / wall if wall > 0 else 0.0,
    }
    result = BenchmarkResult(roots=roots, times=times, nedges=nedges, teps=teps,
                             validate_times=vtimes, header=header)
    if rank == 0:
        st = result.statistics()
        _out(rank, result.format())
        _out(rank, "\n" + _phase_table(sec, msgs, words, nb))
        if args.json:
            doc = {
                "teps": st["teps"], "time": st["time"], "nedge": st["nedge"],
                "validate": st.get("validate"), "header": {**header, "NBFS": nb},
                "phase_seconds": sec, "phase_words": words, "phase_messages": msgs,
                "n": g.n, "input_edges": g.input_edges, "bottomup_levels": bu_levels,
                "levels": nlevels, "memory": mem, "stored_entries": stored,
                "nedges": nedges, "times": times, "teps_per_search": teps,
                "validate_times": [None if math.isnan(v) else float(v) for v in vtimes],
                "roots": roots,
            }
            with open(args.json, "w", encoding="utf-8") as fh:
                json.dump(_clean(doc), fh, indent=1)
            _out(rank, f"wrote {args.json}")
    return 0


def _cmd_bfs(args: argparse.Namespace, cfg: Any, grid: Any) -> int:
    from spbfs.mpi.bfs import bfs
    from spbfs.mpi.graph import DistGraph

    rank = grid.rank
    g = DistGraph.from_file(args.graph, directed=args.directed, one_based=args.one_based,
                            reverse=args.reverse, grid=grid, config=cfg)
    r = bfs(g, args.source, max_depth=args.max_depth, target=args.target)
    _out(rank, r.summary())
    if args.stats:
        _out(rank, r.stats.table())
    if args.validate:
        info = r.validate(g)
        _out(rank, f"validation: passed ({info['reached']} vertices reached, "
                   f"{info['component_edges']} input edges in the component)")
    if args.out:
        r.save(args.out)
        _out(rank, f"wrote {args.out}: parents, levels ({g.n} vertices)")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m spbfs.mpi``; returns the exit status (collective).

    Parameters
    ----------
    argv : sequence of str, optional
        ``["bench", ...]`` or ``["bfs", FILE, ...]``; default ``sys.argv[1:]``.

    Returns
    -------
    int
        0 on success, 2 for an error every rank sees alike (printed once, by
        rank 0), 1 when a search fails validation.
    """
    from spbfs.mpi.grid import ProcessGrid
    from spbfs.validate import ValidationError

    argv = list(sys.argv[1:] if argv is None else argv)
    MPI = C.mpi()
    rank = MPI.COMM_WORLD.Get_rank()
    _Parser.rank = rank
    grid = None
    try:
        try:
            args = _parser().parse_args(argv)
        except _UsageError as exc:
            raise CollectiveError(str(exc)) from None
        cfg = _config(args)
        grid = ProcessGrid(cfg.grid)
        cmd = {"bench": _cmd_bench, "bfs": _cmd_bfs}[args.command]
        return cmd(args, cfg, grid)
    except SystemExit as exc:  # --help
        return int(exc.code or 0)
    except (CollectiveError, ValidationError) as exc:
        if rank == 0:
            if os.environ.get("SPBFS_DEBUG"):
                traceback.print_exc()
            sys.stderr.write(f"Error: {exc}\n")
            sys.stderr.flush()
        return 1 if isinstance(exc, ValidationError) else 2
    finally:
        sys.stdout.flush()


def run_main(argv: Sequence[str] | None = None) -> NoReturn:
    """Install the abort-on-error hook, run :func:`main` and exit with its status."""
    C.install_excepthook()
    sys.exit(main(argv))
