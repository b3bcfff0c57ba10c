"""Error paths under mpiexec: ``python dist_errors.py SHAPE``.

Every rank builds a :class:`~spbfs.mpi.ProcessGrid` of the given shape; a
shape that does not match the rank count must raise the same
:class:`~spbfs.mpi.CollectiveError` on every rank, which each rank reports as
``rank r caught: <message>``. Exits 0 when every rank caught it.
"""

from __future__ import annotations

import sys

from spbfs.mpi import CollectiveError, ProcessGrid, install_excepthook


def main() -> None:
    install_excepthook()
    from mpi4py import MPI

    rank = MPI.COMM_WORLD.Get_rank()
    try:
        ProcessGrid(sys.argv[1])
    except CollectiveError as exc:
        print(f"rank {rank} caught: {exc}", flush=True)
    else:
        raise AssertionError(f"grid {sys.argv[1]} was accepted")


if __name__ == "__main__":
    main()
