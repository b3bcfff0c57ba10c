"""Several command lines in one job: ``mpiexec -n P python cli_runs.py [--grid] ARGS [::: ARGS]``.

Each command line (the words between ``:::``) runs through :func:`spbfs.cli.main`
(``spbfs ...``), or with ``--grid`` through :func:`spbfs.cli.grid_main` (``python -m
spbfs.mpi ...``), in this process, one after another, on every rank: the job starts once (python,
imports, numba's cache) for all of them. Before each run rank 0 writes
``=== run K`` to stderr and stdout, so a test splits either stream by run; after
it, rank 0 prints ``run K status S`` (the status every rank returned, or
``differs`` when the ranks disagree). The entry points themselves (``python -m
spbfs``, ``python -m spbfs.mpi``) are launched by the tests directly.
"""

from __future__ import annotations

import sys

from case_runner import command_lines
from mpi4py import MPI

from spbfs.cli import grid_main
from spbfs.cli import main as cli_main


def main() -> None:
    words = sys.argv[1:]
    run = cli_main
    if words[:1] == ["--grid"]:
        run, words = grid_main, words[1:]
    world = MPI.COMM_WORLD
    root = world.Get_rank() == 0
    for k, argv in enumerate(command_lines(words)):
        if root:
            for stream in (sys.stdout, sys.stderr):
                stream.write(f"=== run {k}\n")
                stream.flush()
        world.Barrier()  # the marker before any rank's output of this run
        statuses = world.gather(run(argv))
        if root:
            status = statuses[0] if len(set(statuses)) == 1 else "differs"
            print(f"run {k} status {status}", flush=True)


if __name__ == "__main__":
    main()
