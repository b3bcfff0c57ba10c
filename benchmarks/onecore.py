"""One process, high-diameter and Kronecker graphs: checkouts and scipy, interleaved.

Each checkout (``--tree``, repeatable; e.g. a worktree of an older commit and
``.``) gets a worker process with ``PYTHONPATH`` set to it; one more worker
times ``scipy.sparse.csgraph.breadth_first_order`` (predecessors returned, as
spbfs returns parents). Every round asks every worker for every case in turn,
the order rotating, so a drifting load favours no side. A case's figure is the
median over rounds of the per-round median over its roots of a whole
``spbfs.bfs`` call (parents and levels) or a whole scipy call.

Cases: ``lux-csr``, ``lux-dcsc`` (the bundled luxembourg_osm, about 1,050
levels; also reported per level), ``grid-corner-csr/dcsc`` and
``grid-centre-csr/dcsc`` (a 1000 x 1000 grid graph from vertex 0 and from the
middle), ``kron20-csr`` (Kronecker scale 20, edge factor 16, 8 fixed roots,
``--threads`` threads; also reported in harmonic-mean TEPS over nnz / 2 edges).

Usage (repository root)::

    git worktree add /tmp/before <commit>
    python benchmarks/onecore.py --tree /tmp/before --tree . --rounds 5
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

CASES = ("lux-csr", "lux-dcsc", "grid-corner-csr", "grid-corner-dcsc", "grid-centre-csr",
         "grid-centre-dcsc", "kron20-csr")


def _graph(case: str, threads: int):  # type: ignore[no-untyped-def]
    """(graph or scipy matrix, roots, levels of the first root or None) for ``case``."""
    import numpy as np

    import spbfs
    from spbfs.generators import grid2d, kronecker

    kind, fmt = case.rsplit("-", 1)
    cfg = spbfs.Config(format=fmt, threads=threads)
    if kind == "lux":
        g = spbfs.datasets.load("luxembourg_osm", config=cfg)
        rng = np.random.default_rng(1)
        roots = [0, *rng.integers(0, g.n, 3).tolist()]
    elif kind.startswith("grid"):
        g = spbfs.Graph.from_edgelist(grid2d(1000, 1000), config=cfg)
        roots = [0] if kind == "grid-corner" else [500 * 1000 + 500]
    else:
        g = spbfs.Graph.from_edgelist(kronecker(20, 16, seed=1), config=cfg)
        deg = np.asarray(g.out_degree)
        rng = np.random.default_rng(2)
        roots = rng.choice(np.flatnonzero(deg), 8, replace=False).tolist()
    return g, roots


def _worker(scipy_side: bool, threads: int) -> None:
    """Answer ``case`` lines on stdin with a JSON line of per-root seconds (and levels)."""
    import numpy as np

    graphs: dict[str, tuple] = {}
    for line in sys.stdin:
        case = line.strip()
        if case not in graphs:
            g, roots = _graph(case, threads)
            if scipy_side:
                a = g.out_block.to_scipy().T.tocsr()  # A[u, v]: edge u -> v
                a.data[:] = 1
                g = a
            graphs[case] = (g, roots)
        g, roots = graphs[case]
        secs, depth, edges = [], [], []
        for r in roots:
            if scipy_side:
                import scipy.sparse.csgraph as csg

                t = time.perf_counter()
                csg.breadth_first_order(g, r, directed=True, return_predecessors=True)
                secs.append(time.perf_counter() - t)
            else:
                import spbfs

                if len(secs) == 0:
                    spbfs.bfs(g, r)  # compile / warm on the first root
                t = time.perf_counter()
                res = spbfs.bfs(g, r)
                secs.append(time.perf_counter() - t)
                depth.append(len(res.stats))
                reached = res.levels >= 0
                edges.append(int(np.asarray(g.out_degree)[reached].sum()) // 2)
        print(json.dumps({"secs": secs, "levels": depth, "edges": edges}), flush=True)


def main() -> None:
    """Run the workers and print the table."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tree", action="append", required=True, help="checkout (repeatable)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--worker", choices=("spbfs", "scipy"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        _worker(args.worker == "scipy", args.threads)
        return
    cases = args.cases.split(",")
    sides = [(Path(t).resolve().name or t, t, "spbfs") for t in args.tree]
    sides.append(("scipy", args.tree[-1], "scipy"))
    procs = []
    for _, tree, kind in sides:
        env = {**os.environ, "PYTHONPATH": str(Path(tree).resolve())}
        procs.append(subprocess.Popen(
            [sys.executable, __file__, "--worker", kind, "--threads", str(args.threads),
             "--tree", tree], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env))
    load0 = os.getloadavg()
    res: dict[tuple[int, str], list[dict]] = {}
    for rnd in range(args.rounds):
        for case in cases:
            order = list(range(len(sides)))
            order = order[rnd % len(order):] + order[:rnd % len(order)]
            for i in order:
                p = procs[i]
                p.stdin.write(case + "\n")
                p.stdin.flush()
                res.setdefault((i, case), []).append(json.loads(p.stdout.readline()))
    load1 = os.getloadavg()
    for p in procs:
        p.stdin.close()
        p.wait()
    print(f"load average {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f} before, "
          f"{load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f} after; {args.rounds} rounds, "
          f"{args.threads} threads")
    head = ["case"] + [s[0] for s in sides]
    print("| " + " | ".join(head) + " | levels |")
    print("|" + " --- |" * (len(head) + 1))
    for case in cases:
        cells, levels = [], ""
        for i, side in enumerate(sides):
            rounds = res[(i, case)]
            ms = statistics.median(statistics.median(r["secs"]) for r in rounds) * 1e3
            cell = f"{ms:.2f} ms"
            if side[2] == "spbfs" and rounds[0]["levels"]:
                nlev = statistics.median(rounds[0]["levels"])
                levels = f"{nlev:.0f}"
                if case.startswith("lux"):
                    cell += f" ({ms * 1e3 / nlev:.2f} µs/level)"
                if case.startswith("kron"):
                    teps = [statistics.harmonic_mean(
                        [e / s for e, s in zip(r["edges"], r["secs"], strict=True)])
                        for r in rounds]
                    cell += f", {statistics.median(teps) / 1e6:.0f} MTEPS"
            cells.append(cell)
        print(f"| {case} | " + " | ".join(cells) + f" | {levels} |")


if __name__ == "__main__":
    main()
