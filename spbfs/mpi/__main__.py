"""``python -m spbfs.mpi bench|bfs`` (run under ``mpiexec``)."""

from spbfs.mpi.cli import run_main

if __name__ == "__main__":
    run_main()
