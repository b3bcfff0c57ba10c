"""Ranks that do not see the same file: ``python same_file_cases.py DATA_DIR``.

Every rank reads a graph file with :meth:`~spbfs.mpi.DistGraph.from_file`,
rank 1 a copy that differs (as a node-local copy could): of the same size
with other ids, shorter, or gzip-compressed with other content. Each must
raise a :class:`~spbfs.mpi.CollectiveError` on every rank, reported as
``rank r caught <case>: <message>``; the same file on every rank must read.
Prints ``rank r SAME FILE OK``.
"""

from __future__ import annotations

import gzip
import os
import sys

import numpy as np
from mpi4py import MPI

from spbfs.mpi import CollectiveError, DistGraph
from spbfs.mpi import comm as C


def write(folder: str) -> dict[str, tuple[str, str]]:
    """case -> (path of ranks other than 1, path of rank 1)."""
    rng = np.random.default_rng(5)
    src, dst = rng.integers(10, 99, 2000), rng.integers(10, 99, 2000)
    base = "".join(f"{a} {b}\n" for a, b in zip(src, dst, strict=True))
    # Same length, other ids: the last edge's endpoints swapped for others.
    other = base[:-6] + f"{(src[-1] + 1) % 89 + 10} {dst[-1]}\n"
    assert len(other) == len(base) and other != base
    files = {"base.txt": base, "other.txt": other, "short.txt": base[:-6]}
    paths = {name: os.path.join(folder, name) for name in (*files, "base.txt.gz",
                                                            "other.txt.gz")}
    if MPI.COMM_WORLD.Get_rank() == 0:
        for name, text in files.items():
            with open(paths[name], "w", encoding="ascii") as f:
                f.write(text)
        for name in ("base.txt", "other.txt"):
            with gzip.open(paths[name + ".gz"], "wt", encoding="ascii") as f:
                f.write(files[name])
    C.wait_barrier(MPI.COMM_WORLD)
    return {"same": (paths["base.txt"], paths["base.txt"]),
            "content": (paths["base.txt"], paths["other.txt"]),
            "size": (paths["base.txt"], paths["short.txt"]),
            "gzip": (paths["base.txt.gz"], paths["other.txt.gz"])}


def main() -> None:
    rank = MPI.COMM_WORLD.Get_rank()
    for case, (mine, ones) in write(sys.argv[1]).items():
        try:
            g = DistGraph.from_file(ones if rank == 1 else mine)
        except CollectiveError as exc:
            print(f"rank {rank} caught {case}: {exc}", flush=True)
        else:
            print(f"rank {rank} read {case}: n={g.n}", flush=True)
    print(f"rank {rank} SAME FILE OK", flush=True)


if __name__ == "__main__":
    main()
