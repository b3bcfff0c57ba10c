"""Exchange patterns x frontier encodings on the grid, native and on emulated networks.

For each Kronecker scale and grid, one ``mpiexec`` job builds the graph once
and runs, in rounds (the cells in a rotated order each round, every root once
per cell and round), every ``exchange`` x ``frontier_encoding`` value
(``auto`` included) on each link: the native shared memory and the emulated
1 Gb/s and 10 Gb/s networks (``network``: every message held for latency +
bytes / bandwidth). It prints per cell the harmonic-mean TEPS, the median
search time, the bytes sent per phase (compressed sizes) and the seconds per
phase, and per link how ``auto`` (the cost model's choices) compares with the
best and the worst fixed choice.

Usage (repository root)::

    python benchmarks/exchange.py                          # scales 18 and 20, 2x1 1x2 2x2
    python benchmarks/exchange.py --scales 16 --grids 2x1 --roots 4 --rounds 1   # smoke run
    python benchmarks/exchange.py --markdown > table.md

The machine is shared: the load average is printed with every table.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from _common import format_table, load_average  # noqa: E402

PATTERNS = ("p2p", "collective", "butterfly", "auto")
ENCODINGS = ("list", "bitmap", "compressed", "auto")
NETWORKS = ("native", "10gbe", "1gbe")
#: The phases a table shows, bytes sent and seconds each (per search, over the ranks).
SHOWN = ("transpose", "expand", "frontier_gather", "fold", "rotate", "parent_updates",
         "allreduce")
SHORT = {"transpose": "transpose", "expand": "expand", "frontier_gather": "gather",
         "fold": "fold", "rotate": "rotate", "parent_updates": "updates",
         "allreduce": "allreduce"}
PHASES = ("transpose", "expand", "fold", "frontier_gather", "rotate", "parent_updates",
          "allreduce")


# --------------------------------------------------------------------------- one job (a rank)


def worker(args: argparse.Namespace) -> None:
    """Run under mpiexec: every cell on one graph; rank 0 writes the JSON."""
    from spbfs import Config
    from spbfs.mpi import DistGraph, ProcessGrid, bfs, install_excepthook, traversed_edges
    from spbfs.mpi import comm as C

    install_excepthook()
    grid = ProcessGrid(args.grid)
    g = DistGraph.kronecker(args.scale, 16, seed=1, grid=grid, config=Config())
    roots = g.sample_roots(args.roots, seed=1).tolist()
    cells = [(net, ex, enc) for net in args.networks.split(",") for ex in PATTERNS
             for enc in ENCODINGS]
    # Warm-up: every kernel and codec loaded, the link measured and cached (auto).
    for _, ex, enc in cells[:len(PATTERNS) * len(ENCODINGS)]:
        r = bfs(g, roots[0], exchange=ex, frontier_encoding=enc)
    r.validate(g)
    out: dict[str, dict] = {}
    edges = {}
    # Each root runs every cell back to back, in an order rotated from root to root
    # and round to round, so that a drift of the shared machine's speed spreads
    # over all cells instead of falling on the ones that happen to run late.
    step = 0
    for _ in range(args.rounds):
        for root in roots:
            shift = step * 7 % len(cells)
            step += 1
            for net, ex, enc in cells[shift:] + cells[:shift]:
                cfg = g.config.replace(network=net, exchange=ex, frontier_encoding=enc)
                rec = out.setdefault(f"{net} {ex} {enc}", {
                    "times": [], "teps": [], "bytes": dict.fromkeys(PHASES, 0.0),
                    "messages": dict.fromkeys(PHASES, 0.0), "seconds": {}, "choices": {}})
                C.wait_barrier(grid.comm)
                t0 = time.perf_counter()
                r = bfs(g, root, config=cfg)
                el = float(C.allreduce(grid.comm, np.array([time.perf_counter() - t0]),
                                       "max")[0])
                if root not in edges:
                    edges[root] = traversed_edges(g, r)
                rec["times"].append(el)
                rec["teps"].append(edges[root] / el)
                k = len(rec["times"])
                for ph, v in r.words_by_phase().items():
                    rec["bytes"][ph] += (8 * v - rec["bytes"][ph]) / k
                for ph, v in r.messages_by_phase().items():
                    rec["messages"][ph] += (v - rec["messages"][ph]) / k
                for ph, v in r.phase_seconds.items():
                    rec["seconds"][ph] = rec["seconds"].get(ph, 0.0) + (
                        v - rec["seconds"].get(ph, 0.0)) / k
                for e in r.exchange_log:
                    key = f'{e["phase"]}:{e["pattern"]}/{e["encoding"]}'
                    rec["choices"][key] = rec["choices"].get(key, 0) + 1
    if grid.rank == 0:
        Path(args.json).write_text(json.dumps({"scale": args.scale, "grid": args.grid,
                                               "cells": out, "load": load_average()}))
    grid.free()


# --------------------------------------------------------------------------- the driver


def launch(scale: int, grid: str, roots: int, rounds: int, networks: str) -> dict:
    pr, pc = (int(x) for x in grid.split("x"))
    here = str(Path(sys.executable).parent)
    mpiexec = os.path.join(here, "mpiexec")
    with tempfile.TemporaryDirectory() as tmp:
        js = Path(tmp) / "out.json"
        cmd = [mpiexec, "-n", str(pr * pc), sys.executable, __file__, "--worker",
               "--scale", str(scale), "--grid", grid, "--roots", str(roots), "--rounds",
               str(rounds), "--networks", networks, "--json", str(js)]
        env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep
               + os.environ.get("PYTHONPATH", "")}
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stdout}\n{proc.stderr}")
        return json.loads(js.read_text())


def hmean(x: list[float]) -> float:
    return len(x) / sum(1.0 / v for v in x)


def tables(doc: dict, markdown: bool, summary: list[list[str]] | None = None) -> str:
    """The per-cell tables of one job; appends its auto-against-fixed rows to ``summary``."""
    cells = doc["cells"]
    lines = []
    for net in dict.fromkeys(k.split()[0] for k in cells):
        rows = []
        fixed = {}
        for ex, enc in itertools.product(PATTERNS, ENCODINGS):
            rec = cells.get(f"{net} {ex} {enc}")
            if rec is None:
                continue
            teps = hmean(rec["teps"])
            if "auto" not in (ex, enc):
                fixed[ex, enc] = teps
            b, s = rec["bytes"], rec["seconds"]
            phases = [f"{b[ph] / 1024:.0f} / {1e3 * s.get(ph, 0.0):.2f}" for ph in SHOWN]
            rows.append([f"{ex}/{enc}", f"{teps / 1e6:.0f}",
                         f"{1e3 * float(np.median(rec['times'])):.2f}", *phases,
                         f"{sum(rec['messages'].values()):.0f}",
                         f"{1e3 * (s.get('local_topdown', 0) + s.get('local_bottomup', 0)):.2f}"])
        best = max(fixed.values())
        worst = min(fixed.values())
        auto = hmean(cells[f"{net} auto auto"]["teps"])
        lines.append(f"\nKronecker scale {doc['scale']}, grid {doc['grid']}, network {net} "
                     f"(load {doc['load']})\n")
        lines.append(format_table(
            ["exchange/encoding", "MTEPS", "ms (median)",
             *(f"{SHORT[ph]} KiB / ms" for ph in SHOWN), "messages", "local ms"], rows,
            markdown=markdown))
        bk = max(fixed, key=fixed.get)
        wk = min(fixed, key=fixed.get)
        if summary is not None:
            med = {k: float(np.median(cells[f"{net} {k[0]} {k[1]}"]["times"])) for k in fixed}
            med_auto = float(np.median(cells[f"{net} auto auto"]["times"]))
            summary.append([str(doc["scale"]), doc["grid"], net, "/".join(bk),
                            f"{best / 1e6:.0f}", "/".join(wk), f"{worst / 1e6:.0f}",
                            f"{auto / 1e6:.0f}", f"{auto / best:.2f}", f"{auto / worst:.2f}",
                            f"{min(med.values()) / med_auto:.2f}"])
        lines.append(f"\nauto/auto {auto / 1e6:.1f} MTEPS = {auto / best:.2f} x the best fixed "
                     f"({'/'.join(bk)}, {best / 1e6:.1f}), {auto / worst:.2f} x the worst "
                     f"({worst / 1e6:.1f}); its choices: "
                     + ", ".join(f"{k} {v}" for k, v in
                                 sorted(cells[f"{net} auto auto"]["choices"].items(),
                                        key=lambda kv: -kv[1])[:6]))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--json", help=argparse.SUPPRESS)
    ap.add_argument("--scale", type=int, default=18, help=argparse.SUPPRESS)
    ap.add_argument("--grid", default="2x1", help=argparse.SUPPRESS)
    ap.add_argument("--scales", default="18,20")
    ap.add_argument("--grids", default="2x1,1x2,2x2")
    ap.add_argument("--roots", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--networks", default=",".join(NETWORKS))
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--save", help="also write every measurement to this JSON file")
    ap.add_argument("--load", help="print the tables of a file --save wrote, running nothing")
    args = ap.parse_args(argv)
    if args.worker:
        worker(args)
        return 0
    docs = json.loads(Path(args.load).read_text()) if args.load else []
    summary: list[list[str]] = []
    if args.load:
        for doc in docs:
            print(tables(doc, args.markdown, summary), flush=True)
    for scale in (int(s) for s in args.scales.split(",")) if not args.load else ():
        for grid in args.grids.split(","):
            doc = launch(scale, grid, args.roots, args.rounds, args.networks)
            docs.append(doc)
            print(tables(doc, args.markdown, summary), flush=True)
    print(f"\nauto/auto against the fixed choices (harmonic-mean MTEPS; load now "
          f"{load_average()})\n")
    print(format_table(["scale", "grid", "network", "best fixed", "MTEPS", "worst fixed",
                        "MTEPS", "auto MTEPS", "auto / best", "auto / worst",
                        "auto / best (median times)"], summary,
                       markdown=args.markdown))
    if args.save and not args.load:
        Path(args.save).write_text(json.dumps(docs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
