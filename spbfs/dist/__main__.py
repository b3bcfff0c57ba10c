"""``python -m spbfs.dist bench|bfs`` (run under ``mpiexec``)."""

from spbfs.dist.cli import run_main

if __name__ == "__main__":
    run_main()
