"""Case scripts of several tests in one job: ``mpiexec -n P python jobs.py SCRIPT ARGS [::: ...]``.

Each part (the words between ``:::``) runs as ``python SCRIPT ARGS`` would, in
this process (``runpy``), one after another on every rank: the job starts once
(every rank's python, imports and numba's cache loads: 6.7 s of a trivial
nine-rank job) for the cases of several test files. Before each part rank 0
writes ``=== part K SCRIPT`` to stdout and stderr, so a test takes its part's
output (:func:`mpi_launch.SharedJobs`). A part that fails ends the job, as it
ends its own launch, through the abort hook, with its message.
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

from case_runner import command_lines
from mpi4py import MPI

HERE = Path(__file__).resolve().parent


def main() -> None:
    world = MPI.COMM_WORLD
    for k, (script, *args) in enumerate(command_lines(sys.argv[1:])):
        if world.Get_rank() == 0:
            for stream in (sys.stdout, sys.stderr):
                stream.write(f"=== part {k} {script}\n")
                stream.flush()
        world.Barrier()  # the marker before any rank's output of this part
        sys.argv = [str(HERE / script), *args]
        runpy.run_path(sys.argv[0], run_name="__main__")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
