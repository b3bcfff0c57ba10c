"""The 2 x 1 grid's top-down levels without an Allreduce: ``mpiexec -n 2 python duo_cases.py``.

On a 2 x 1 grid each rank counts its partner's new frontier from the pairs it
sent and the partner's own children (``GridEngine._topdown_duo``). A count
that is off by one vertex changes the direction schedule on one rank only,
so the cases compare every level's counts with the one-process search, on
graphs with self-loops, repeated edges, pieces of unequal size and isolated
vertices, pairs of one word and of two, from many sources: the frontier and
discovered counts per level
(the duo-computed sums), the levels and parents, the edges examined against
the same search with ``exchange="collective"`` (which sums them with the
Allreduce), the target stop, and that the path ran (fewer Allreduces).
Prints ``DUO OK <searches>`` on rank 0.
"""

from __future__ import annotations

import numpy as np

from spbfs import Config, Graph
from spbfs import bfs as serial_bfs
from spbfs.edges import EdgeList
from spbfs.generators import erdos_renyi, grid2d, kronecker
from spbfs.mpi import DistGraph, ProcessGrid, _kernels, bfs, install_excepthook


def graphs() -> list[tuple[str, EdgeList]]:
    """Undirected test graphs: the duo path runs for the transposed top-down only."""
    rng = np.random.default_rng(3)
    er = erdos_renyi(257, m=700, seed=9)  # odd n: the pieces differ in size
    # Repeated edges and self-loops on top (the generator makes neither).
    extra = rng.integers(0, 257, size=(120, 2))
    loops = np.arange(0, 257, 7)
    src = np.concatenate([er.src, extra[:, 0], er.src[:50], loops])
    dst = np.concatenate([er.dst, extra[:, 1], er.dst[:50], loops])
    messy = EdgeList(src.astype(np.int64), dst.astype(np.int64), 257)
    return [("kron10", kronecker(10, 8, seed=5)), ("messy257", messy),
            ("grid31x9", grid2d(31, 9))]


def sources(el: EdgeList, count: int) -> list[int]:
    deg = np.bincount(el.src, minlength=el.n) + np.bincount(el.dst, minlength=el.n)
    rng = np.random.default_rng(el.n)
    picked = rng.choice(el.n, size=min(count, el.n), replace=False)
    return sorted({int(v) for v in picked} | {0, el.n - 1, int(np.argmax(deg))})


def main() -> None:
    install_excepthook()
    grid = ProcessGrid((2, 1))
    rank = grid.rank
    done = 0
    fits = _kernels.pack_fits
    for name, el in graphs():
        serial = Graph.from_edgelist(el)
        lo, hi = rank * el.num_edges // 2, (rank + 1) * el.num_edges // 2
        for fmt in ("csr", "dcsc"):
            # Pairs of two words (ids past 2**32) on the dcsc graphs: a graph's first
            # search decides, so the switch is made before building it.
            _kernels.pack_fits = fits if fmt == "csr" else (lambda n, b: False)
            g = DistGraph.from_edges(el.src[lo:hi], el.dst[lo:hi], el.n, grid=grid,
                                     config=Config(format=fmt))
            for s in sources(el, 24):
                for direction in ("auto", "top-down"):
                    r = bfs(g, s, direction=direction)
                    ref_run = bfs(g, s, direction=direction, exchange="collective")
                    full = r.gather()
                    msgs = r.messages_by_phase()["allreduce"]
                    if rank == 0:
                        tag = f"{name} {fmt} {direction} source {s}"
                        ref = serial_bfs(serial, s, direction=direction)
                        assert np.array_equal(r.stats.frontier, ref.stats.frontier), tag
                        assert np.array_equal(r.stats.discovered, ref.stats.discovered), tag
                        assert np.array_equal(r.stats.direction, ref.stats.direction), tag
                        assert np.array_equal(full.levels, ref.levels), tag
                        # One processor column: every parent is the smallest frontier
                        # neighbour, as in one process.
                        assert np.array_equal(full.parents, ref.parents), tag
                        assert np.array_equal(r.stats.edges, ref_run.stats.edges), tag
                        # Both ranks send one Allreduce message per Allreduce: one per
                        # bottom-up level (none for the source); the collective
                        # exchange runs the source and every level with one.
                        assert msgs == 2 * r.bottomup_levels, (tag, msgs)
                        assert ref_run.messages_by_phase()["allreduce"] == \
                            2 * (1 + len(ref_run.stats)), tag
                    done += 1
            # A target in either piece stops after the level that reaches it.
            for t in (1, el.n // 2 + 3, el.n - 2):
                r = bfs(g, 0, target=t)
                full = r.gather()
                if rank == 0:
                    ref = serial_bfs(serial, 0, target=t)
                    assert np.array_equal(full.levels, ref.levels), (name, fmt, t)
                    assert r.stopped == ref.stopped, (name, fmt, t, r.stopped, ref.stopped)
                done += 1
            for depth in (1, 2, 3):
                full = bfs(g, 0, max_depth=depth).gather()
                if rank == 0:
                    ref = serial_bfs(serial, 0, max_depth=depth)
                    assert np.array_equal(full.levels, ref.levels), (name, fmt, depth)
                done += 1
    if rank == 0:
        print(f"DUO OK {done} searches", flush=True)
    grid.free()


if __name__ == "__main__":
    main()
