"""Before/after: the same benchmarks on two checkouts, interleaved in one run.

A refactor keeps behaviour, speed included. This script runs each named case
on checkout A and checkout B in turn (the order rotates every round, so a
drifting machine favours neither), takes every figure from the benchmark's own
output, and prints per case the median of each side, the ratio B / A of the
medians, and the median of the rounds' own ratios (each round's A and B ran
back to back, so that one follows a machine whose speed drifts during the run),
with the load average before and after the run.

Cases (``--cases``, comma separated):

``bench20``
    ``spbfs bench --scale 20`` in one process (Graph500 output): harmonic-mean
    TEPS and median search time.
``lux``
    Whole searches of ``luxembourg_osm.mtx`` (``--lux``; about 1,050 levels) from
    fixed roots: median milliseconds per search and per level.
``grid``, ``grid-centre``, ``mesh``
    Whole searches of the 1000 x 1000 grid graph from a corner (vertex 0) and from
    its centre (``--roots`` searches from the one root), and of a finite-element
    mesh (``fe_mesh(1_000_000, seed=0)``, about 380 levels) from ``--roots``
    random roots: median milliseconds per search and per level. Two threads (the
    development machine), parents and levels returned.
``dist18x2x1``, ``dist18x2x2``, ``dist20x2x1``, ``dist20x2x2``
    ``mpiexec -n P python -m <grid package> bench --scale S --grid RxC``:
    harmonic-mean TEPS and median search time.

Usage (repository root, venv active; A is an older checkout, e.g. a worktree)::

    git worktree add /tmp/before <commit>
    python benchmarks/ab.py --a /tmp/before --b . --rounds 3
    python benchmarks/ab.py --a /tmp/before --b . --also mid=/tmp/middle --cases dist18x2x1

Each side runs with its checkout first on ``PYTHONPATH``, so both use this
virtual environment's packages (and those of a ``PYTHONPATH`` already set). The
grid package is ``spbfs.mpi`` (``spbfs.dist`` in checkouts before the rename).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Whole searches from ``roots`` of ``g`` (both set by the case's script before it).
_TIMED = r"""
times, levels = [], []
for r in roots:
    t = time.perf_counter()
    res = spbfs.bfs(g, int(r))
    times.append(time.perf_counter() - t)
    levels.append(len(res.stats))
print("median_ms", float(np.median(times)) * 1e3)
print("us_per_level", float(np.median(np.array(times) / np.maximum(levels, 1))) * 1e6)
"""

_LUX = r"""
import sys, time
import numpy as np
import spbfs
from spbfs.io import read_graph
g = spbfs.Graph.from_edgelist(read_graph(sys.argv[1]))
rng = np.random.default_rng(7)
roots = rng.choice(g.n, size=int(sys.argv[2]), replace=False)
spbfs.bfs(g, int(roots[0]))
spbfs.bfs(g, int(roots[0]), direction="bottom-up", max_depth=3)
"""


_HIGH_DIAMETER = r"""
import sys, time
import numpy as np
import spbfs
from spbfs.generators import fe_mesh, grid2d
case, nroots = sys.argv[1], int(sys.argv[2])
el = fe_mesh(1_000_000, seed=0) if case == "mesh" else grid2d(1000, 1000)
g = spbfs.Graph.from_edgelist(el, config=spbfs.Config(format="csr", threads=2))
if case == "mesh":
    roots = np.random.default_rng(7).choice(g.n, size=nroots, replace=False)
else:
    roots = [0 if case == "grid" else 500500] * nroots
spbfs.bfs(g, int(roots[0]))
"""


def _grid_module(root: Path) -> str:
    return "spbfs.mpi" if (root / "spbfs" / "mpi" / "__main__.py").exists() else "spbfs.dist"


def _command(case: str, root: Path, args: argparse.Namespace) -> list[str]:
    py = sys.executable
    if case == "bench20":
        return [py, "-m", "spbfs.cli", "bench", "--scale", "20", "--roots", str(args.roots),
                "--no-validate"]
    if case == "lux":
        return [py, "-c", _LUX + _TIMED, str(args.lux), str(args.roots)]
    if case in ("grid", "grid-centre", "mesh"):
        return [py, "-c", _HIGH_DIAMETER + _TIMED, case, str(args.roots)]
    m = re.fullmatch(r"dist(\d+)x(\d+)x(\d+)", case)
    if m:
        scale, pr, pc = (int(x) for x in m.groups())
        # The mpich wheel puts mpiexec beside the venv's python; a wheel installed with
        # ``pip --prefix`` (a machine without the venv, benchmarks/device.sh) puts it on PATH.
        mpiexec = shutil.which("mpiexec", path=os.pathsep.join(
            [str(Path(py).parent), os.environ.get("PATH", "")]))
        if mpiexec is None:
            sys.exit("benchmarks/ab.py: mpiexec not found (install the mpich wheel)")
        return [mpiexec, "-n", str(pr * pc), py, "-m", _grid_module(root), "bench",
                "--scale", str(scale), "--grid", f"{pr}x{pc}", "--roots", str(args.roots),
                "--no-validate"]
    sys.exit(f"benchmarks/ab.py: unknown case {case!r}")


_FIGURES = {
    "hmean_TEPS": re.compile(r"harmonic_mean_TEPS:\s+(\S+)"),
    "median_ms": re.compile(r"(?:median_time:\s+(\S+))|(?:^median_ms (\S+))", re.M),
    "us_per_level": re.compile(r"^us_per_level (\S+)", re.M),
    # CPU time of all ranks per search: steadier than wall time on a loaded machine.
    "cpu_ms": re.compile(r"cpu_seconds_per_search:\s+(\S+)"),
}


def _figures(out: str) -> dict[str, float]:
    got = {}
    for name, rx in _FIGURES.items():
        m = rx.search(out)
        if m:
            value = float(next(g for g in m.groups() if g is not None))
            # Graph500 output gives seconds; the lux, grid and mesh cases milliseconds.
            seconds = (name == "median_ms" and m.group(1)) or name == "cpu_ms"
            got[name] = value * 1e3 if seconds else value
    return got


def _run(case: str, root: Path, args: argparse.Namespace) -> dict[str, float]:
    # The checkout first; paths already set (packages installed with ``pip --prefix``) after it.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(root), os.environ.get("PYTHONPATH", "")) if p)}
    proc = subprocess.run(_command(case, root, args), cwd=root, env=env, capture_output=True,
                          text=True, timeout=args.timeout)
    if proc.returncode:
        sys.exit(f"{case} on {root} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    figs = _figures(proc.stdout)
    if not figs:
        sys.exit(f"{case} on {root}: no figure in its output:\n{proc.stdout[-2000:]}")
    return figs


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--a", type=Path, required=True, help="checkout A (before)")
    ap.add_argument("--b", type=Path, default=ROOT, help="checkout B (after; default this one)")
    ap.add_argument("--cases", default="bench20,lux,dist18x2x1,dist18x2x2,dist20x2x1,dist20x2x2")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--roots", type=int, default=32, help="roots per run (default 32)")
    ap.add_argument("--lux", type=Path, default=None,
                    help="the luxembourg_osm Matrix Market file (default: the bundled "
                         "spbfs.datasets copy)")
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--also", action="append", default=[], metavar="NAME=PATH",
                    help="a further checkout, rotated with A and B and compared with A "
                         "(repeatable)")
    args = ap.parse_args(argv)
    sides = {"A": args.a.resolve(), "B": args.b.resolve()}
    for item in args.also:
        name, sep, path = item.partition("=")
        if not sep or not name or not path or name in sides:
            ap.error(f"--also takes NAME=PATH with a new NAME (not A or B), got {item!r}")
        sides[name] = Path(path).resolve()
    cases = [c for c in args.cases.split(",") if c]
    if args.lux is None:
        sys.path.insert(0, str(ROOT))
        from spbfs.datasets import path as dataset_path

        args.lux = dataset_path("luxembourg_osm")
    print("\n".join(f"{k} = {v}" for k, v in sides.items()) + f"\nload before: {_load()}",
          flush=True)
    names = list(sides)
    results: dict[tuple[str, str], list[dict[str, float]]] = {}
    for rnd in range(args.rounds):
        for case in cases:
            turn = (rnd + cases.index(case)) % len(names)
            for side in names[turn:] + names[:turn]:
                figs = _run(case, sides[side], args)
                results.setdefault((case, side), []).append(figs)
                print(f"round {rnd + 1} {case} {side}: "
                      + ", ".join(f"{k} {v:.4g}" for k, v in figs.items()), flush=True)
    print(f"load after: {_load()}\n")
    for other in names[1:]:
        print(f"| case | figure | A median | {other} median | {other} / A | "
              f"median of rounds | {other} / A by round |")
        print("|---|---|---|---|---|---|---|")
        for case in cases:
            for fig in results[(case, "A")][0]:
                a = [r[fig] for r in results[(case, "A")]]
                b = [r[fig] for r in results[(case, other)]]
                ma, mb = statistics.median(a), statistics.median(b)
                ratios = [y / x for x, y in zip(a, b, strict=True)]
                paired = ", ".join(f"{r:.3f}" for r in ratios)
                print(f"| {case} | {fig} | {ma:.4g} | {mb:.4g} | {mb / ma:.3f} | "
                      f"{statistics.median(ratios):.3f} | {paired} |")
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
