"""Plain user scripts that go wrong on one rank: ``python user_scripts.py CASE``.

Each case is what a user might write under ``mpiexec -n N python script.py``:
no ``install_excepthook`` call, no ``python -m mpi4py``, only ``import
spbfs.mpi``. Rank 1 misbehaves while the other ranks wait for it;
``tests/test_mpi_failure.py`` checks that every job ends, with the expected
status and message, well before its timeout.

==============  ===============================================================
``raise_before``  rank 1 raises before any grid exists; the others build one
``raise_after``   rank 1 raises after the grid exists; the others search
``exit0``         rank 1 calls ``sys.exit(0)``; the others search
``exit3``         rank 1 calls ``sys.exit(3)``; the others search
``exit0_grid``    rank 1 calls ``sys.exit(0)`` before MPI or any grid exists (it
                  knows its rank from the launcher: ``PMI_RANK``, Open MPI's
                  ``OMPI_COMM_WORLD_RANK``)
``bad_source``    rank 1 passes a source out of range; every rank catches the
                  error and searches again (exits 0)
``diff_source``   rank 1 passes another source; every rank catches the error
``diff_depth``    rank 1 passes another ``max_depth``; every rank catches it
``diff_config``   rank 1 passes another config; every rank catches it
``arguments``     the four above in turn, in one job
``all_exit``      nobody misbehaves; rank 0 works on alone after the last
                  collective while the others have ended (exits 0)
==============  ===============================================================
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable

from spbfs.mpi import CollectiveError, DistGraph, bfs


def world_rank() -> int:
    from mpi4py import MPI

    return MPI.COMM_WORLD.Get_rank()


def raise_before() -> None:
    if world_rank() == 1:
        raise RuntimeError("user error on rank 1 before the grid")
    DistGraph.kronecker(6, 8, seed=1)
    print(f"rank {world_rank()} built the grid", flush=True)


def raise_after() -> None:
    g = DistGraph.kronecker(6, 8, seed=1)
    if g.grid.rank == 1:
        raise RuntimeError("user error on rank 1 after the grid")
    bfs(g, 0)
    print(f"rank {g.grid.rank} searched", flush=True)


def exit_after(code: int) -> None:
    g = DistGraph.kronecker(6, 8, seed=1)
    if g.grid.rank == 1:
        sys.exit(code)
    bfs(g, 0)
    print(f"rank {g.grid.rank} searched", flush=True)


def exit0_grid() -> None:
    if (os.environ.get("PMI_RANK") or os.environ.get("OMPI_COMM_WORLD_RANK")) == "1":
        sys.exit(0)
    DistGraph.kronecker(6, 8, seed=1)
    print(f"rank {world_rank()} built the grid", flush=True)


def caught(g: DistGraph, **kwargs: object) -> None:
    try:
        bfs(g, **kwargs)  # type: ignore[arg-type]
    except CollectiveError as exc:
        print(f"rank {g.grid.rank} caught: {exc}", flush=True)
    else:
        print(f"rank {g.grid.rank} was not stopped", flush=True)
    r = bfs(g, 0)  # the script goes on: the next search works on every rank
    print(f"rank {g.grid.rank} searched again: reached {r.reached}", flush=True)


def bad_source(g: DistGraph) -> None:
    caught(g, source=g.n + 5 if g.grid.rank == 1 else 0)


def diff_source(g: DistGraph) -> None:
    caught(g, source=1 if g.grid.rank == 1 else 0)


def diff_depth(g: DistGraph) -> None:
    caught(g, source=0, max_depth=1 if g.grid.rank == 1 else 3)


def diff_config(g: DistGraph) -> None:
    cfg = g.config.replace(alpha=3.0) if g.grid.rank == 1 else g.config
    caught(g, source=0, config=cfg)


def arguments() -> None:
    g = DistGraph.kronecker(6, 8, seed=1)
    for case in (bad_source, diff_source, diff_depth, diff_config):
        case(g)


def one(case: Callable[[DistGraph], None]) -> Callable[[], None]:
    return lambda: case(DistGraph.kronecker(6, 8, seed=1))


def all_exit() -> None:
    g = DistGraph.kronecker(6, 8, seed=1)
    r = bfs(g, 0)
    if g.grid.rank == 0:
        time.sleep(1.0)  # alone, after every collective: the others must not end the job
    print(f"rank {g.grid.rank} done: reached {r.reached}", flush=True)


CASES = {
    "raise_before": raise_before,
    "raise_after": raise_after,
    "exit0": lambda: exit_after(0),
    "exit3": lambda: exit_after(3),
    "exit0_grid": exit0_grid,
    "bad_source": one(bad_source),
    "diff_source": one(diff_source),
    "diff_depth": one(diff_depth),
    "diff_config": one(diff_config),
    "arguments": arguments,
    "all_exit": all_exit,
}

if __name__ == "__main__":
    CASES[sys.argv[1]]()
