"""Top-down levels on a team of two threads against the same levels on one thread.

The numba engine hands runs of mid-size top-down levels (``TEAM_TOPDOWN`` to
``PAR_TOPDOWN`` frontier edges, 256 or more frontier vertices) to a team of two
threads in one parallel region (``spbfs.kernels.bfs_numba._team_levels``).
This script times whole searches with the team (the shipped thresholds) and
without it (the threshold raised out of reach, so those levels run serially as
before the team existed), in one process, the order rotated every round, on the
graphs where such levels occur: a 1000 x 1000 grid from a corner and from the
centre, a 2-D Delaunay mesh of a million points, and luxembourg_osm (whose
levels are too small for a team: a control) and, with ``--graphs``, Kronecker
scale 20. Other thresholds can be tried with ``--thresholds``.

Usage (repository root, venv active)::

    python benchmarks/team.py                        # 7 rounds, markdown table
    python benchmarks/team.py --graphs mesh --thresholds 1024,4096,8192 --rounds 5
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np
from _common import format_table, load_average, median, set_omp_wait

import spbfs
from spbfs.kernels import bfs_numba as nbk

GRAPHS = ("lux", "corner", "centre", "mesh")
OFF = 1 << 62  # no level expects this many edges: the team never runs


def _graph(name: str) -> tuple[spbfs.Graph, list[int]]:
    from spbfs.generators import fe_mesh, grid2d, kronecker

    if name == "lux":
        el = spbfs.datasets.edges("luxembourg_osm")
    elif name in ("corner", "centre"):
        el = grid2d(1000, 1000)
    elif name == "mesh":
        el = fe_mesh(1_000_000, seed=1)
    elif name == "kron20":
        el = kronecker(20, 16, seed=1)
    else:
        raise ValueError(f"--graphs: unknown graph {name!r}; choose from "
                         f"{', '.join((*GRAPHS, 'kron20'))}")
    g = spbfs.Graph.from_edgelist(el, config=spbfs.Config(format="csr", backend="numba"))
    if name == "corner":
        return g, [0]
    if name == "centre":
        return g, [500 * 1000 + 500]
    deg = np.asarray(g.out_degree)
    rng = np.random.default_rng(1)
    return g, [int(x) for x in rng.choice(np.flatnonzero(deg), 8, replace=False)]


def _time(g: spbfs.Graph, roots: list[int], threshold: int) -> float:
    """Median ms per search with ``TEAM_TOPDOWN = threshold`` (read when an engine is made)."""
    nbk.TEAM_TOPDOWN = threshold
    spbfs.bfs(g, roots[0])  # warm: compile, scratch, the thread policy's probe
    times = []
    for r in roots * max(1, 8 // len(roots)):
        t0 = time.perf_counter()
        spbfs.bfs(g, r)
        times.append(time.perf_counter() - t0)
    return median(times) * 1e3


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graphs", default=",".join(GRAPHS))
    ap.add_argument("--thresholds", default=str(nbk.TEAM_TOPDOWN),
                    help="comma-separated TEAM_TOPDOWN values to time against no team")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--omp-wait", choices=("passive", "active"), default=None,
                    help="OMP_WAIT_POLICY for numba's pool (default: left as it is)")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args(argv)
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")
    try:
        thresholds = [int(x) for x in args.thresholds.split(",") if x]
    except ValueError:
        ap.error(f"--thresholds must be integers, got {args.thresholds!r}")
    set_omp_wait(args.omp_wait)
    shipped = nbk.TEAM_TOPDOWN
    sides = {"off": OFF, **{f"team {t}": t for t in thresholds}}
    names = [x for x in args.graphs.split(",") if x]
    graphs = {name: _graph(name) for name in names}
    print(f"load before: {load_average()}", flush=True)
    times: dict[tuple[str, str], list[float]] = {(n, s): [] for n in names for s in sides}
    order = list(sides)
    try:
        for r in range(args.rounds):
            turn = order[r % len(order):] + order[:r % len(order)]
            for name, (g, roots) in graphs.items():
                for side in turn:
                    times[(name, side)].append(_time(g, roots, sides[side]))
    finally:
        nbk.TEAM_TOPDOWN = shipped
    print(f"load after: {load_average()}")
    headers = ["graph", "no team ms"]
    for s in sides:
        if s != "off":
            headers += [f"{s} ms", f"{s} / no team", "by round"]
    rows = []
    for name in names:
        base = np.array(times[(name, "off")])
        row: list[object] = [name, f"{median(base):.3f}"]
        for s in sides:
            if s == "off":
                continue
            t = np.array(times[(name, s)])
            ratio = t / base
            row += [f"{median(t):.3f}", f"{median(ratio):.3f}",
                    ", ".join(f"{x:.2f}" for x in ratio)]
        rows.append(row)
    print(format_table(headers, rows, markdown=args.markdown))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
