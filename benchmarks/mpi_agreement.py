"""What the argument agreement at the start of a grid search costs, per call.

Run under mpiexec (repository root, venv active)::

    mpiexec -n 2 python benchmarks/mpi_agreement.py
    mpiexec -n 4 python benchmarks/mpi_agreement.py --scale 10 --calls 300

:func:`spbfs.mpi.bfs` (and the ``dist_*`` algorithms, ``ProcessGrid`` and the
``DistGraph`` constructors) start with :func:`spbfs.mpi.comm.agree_call`: one
Allreduce of ``2 k + 1`` int64 (an ok flag and a digest per argument), once
per call, never per level. The table gives, over ``--calls`` calls taking
turns, the median microseconds of that step alone (with the arguments ``bfs``
passes, the config left out as usual, and with a config passed, whose digest
hashes its repr), of a whole search from a vertex of degree 0 (one level:
the least work a search does) and of a whole search from a sampled root.
Rank 0 prints it, with ``uptime``: on shared cores the numbers move with the
load.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np
from _common import format_table, load_average, median

from spbfs.mpi import DistGraph, bfs
from spbfs.mpi import comm as C


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", type=int, default=10)
    ap.add_argument("--calls", type=int, default=200)
    args = ap.parse_args()
    g = DistGraph.kronecker(args.scale, 16, seed=1)
    comm = g.grid.comm
    degree = C.gatherv(comm, g.piece_degrees())
    lonely = C.bcast_obj(comm, None if degree is None else int(np.flatnonzero(degree == 0)[0]))
    root = int(g.sample_roots(1, seed=0)[0])
    cfg = g.config

    def agree(config: object) -> None:
        C.agree_call(comm, None, source=root, target=None, max_depth=None,
                     semiring="min_second", source_value=1, config=config, direction=None,
                     frontier_encoding=None, exchange=None, out=True)

    steps = {"agreement (config left out)": lambda: agree(None),
             "agreement (config passed)": lambda: agree(cfg),
             "bfs from a vertex of degree 0": lambda: bfs(g, lonely),
             "bfs from a sampled root": lambda: bfs(g, root)}
    times: dict[str, list[float]] = {k: [] for k in steps}
    for _ in range(args.calls):
        for name, step in steps.items():
            C.wait_barrier(comm)
            t0 = time.perf_counter()
            step()
            times[name].append(time.perf_counter() - t0)
    worst = {k: float(C.allreduce(comm, np.array([median(v)]), "max")[0]) for k, v in
             times.items()}
    if g.grid.rank == 0:
        print(f"{g.grid.size} ranks, grid {g.grid}, Kronecker scale {args.scale}, "
              f"{args.calls} calls each, load {load_average()}")
        print(format_table(["step", "median us (slowest rank)"],
                           [[k, f"{v * 1e6:.0f}"] for k, v in worst.items()]))


if __name__ == "__main__":
    main()
