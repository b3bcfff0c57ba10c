"""``python -m spbfs.mpi bench|bfs`` (run under ``mpiexec``): the grid side of :mod:`spbfs.cli`."""

from spbfs.cli import run_grid_main

if __name__ == "__main__":
    run_grid_main()
