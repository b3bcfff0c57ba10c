"""An exception on one rank mid-search, through a command-line entry point.

``python failing_rank.py RANK LEVEL MODULE ARGS...`` makes the grid engine raise
on rank ``RANK`` at level ``LEVEL`` (the test patches the engine: production
code has no failure hook), then runs ``python -m MODULE ARGS...``.
"""

from __future__ import annotations

import runpy
import sys
from collections.abc import Callable
from typing import Any

from spbfs.mpi.bfs import GridEngine


def main() -> None:
    rank, level, module, *args = sys.argv[1:]
    steps = {"topdown": GridEngine.topdown, "bottomup": GridEngine.bottomup}

    def failing(name: str) -> Callable[..., Any]:
        step = steps[name]

        def run(self: GridEngine, frontier: Any, depth: int) -> Any:
            if self.grid.rank == int(rank) and depth == int(level):
                raise RuntimeError(f"injected failure on rank {rank} at level {depth}")
            return step(self, frontier, depth)

        return run

    GridEngine.topdown = failing("topdown")
    GridEngine.bottomup = failing("bottomup")
    sys.argv = [module, *args]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
