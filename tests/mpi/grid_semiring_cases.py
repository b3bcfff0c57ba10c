"""User semirings on the grid's local engines: ``mpiexec -n P python grid_semiring_cases.py
[--standin] GRID...``.

Every grid runs traversals over user semirings (built with
:class:`semirings.Semiring`, not the BFS's ``min_second``) with
``backend="numpy"`` (the array engine on the CPU) and, with ``--standin``,
``backend="cupy"`` on the strict cupy stand-in of ``tests/_cupy_standin.py``
(installed before anything imports cupy), next to ``backend="numba"``: levels,
values and per-level counts must be identical, on undirected and directed
graphs, both formats and every direction. Rank 0 also checks the numba run
against the one-process traversal. Under the stand-in a search's transfers
stay within a few per level (the frontier's and the visited flags' upload,
the result's download), and a semiring without a vectorized form is refused
with a :class:`~spbfs.mpi.CollectiveError` naming it. Without the stand-in
(and without a GPU) ``backend="cupy"`` is refused on every rank. Rank 0 prints
``ALL OK <cases>``.
"""

from __future__ import annotations

import sys
from pathlib import Path

STANDIN = "--standin" in sys.argv
if STANDIN:
    sys.argv.remove("--standin")  # the rest are grid shapes (case_runner.run_cases)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from _cupy_standin import install

    TRANSFERS = install()

import numpy as np  # noqa: E402
from case_runner import both_graphs, run_cases  # noqa: E402

import spbfs  # noqa: E402
from semirings import Semiring  # noqa: E402
from semirings.backend import gpu_available  # noqa: E402
from semirings.ops import Monoid  # noqa: E402
from spbfs.edges import EdgeList  # noqa: E402
from spbfs.generators import erdos_renyi, grid2d, kronecker  # noqa: E402
from spbfs.mpi import CollectiveError, ProcessGrid  # noqa: E402
from spbfs.mpi import bfs as dist_bfs  # noqa: E402

ENGINES = ["numpy", "cupy"] if STANDIN else ["numpy"]


def user_semirings() -> list[tuple[Semiring, int]]:
    """(semiring, source value): path counts, and the largest source value carried along."""
    return [(Semiring("plus", "second", name="paths"), 1),
            (Semiring("max", "second", name="carry_max"), 5),
            (Semiring("min", "plus", name="hops_plus"), 2)]


def graphs() -> list[tuple[str, EdgeList, bool]]:
    return [("kron7", kronecker(7, 4, seed=5), False), ("grid7x6", grid2d(7, 6), False),
            ("er101d", erdos_renyi(101, m=300, seed=2, directed=True), True)]


def check_graph(grid: ProcessGrid, name: str, el: EdgeList, directed: bool, fmt: str,
                cases: list[int]) -> None:
    rank = grid.rank
    g, serial = both_graphs(grid, el, directed, fmt)
    hub = int(np.argmax(np.bincount(el.src, minlength=el.n)))
    for sr, sv in user_semirings():
        for source, direction in ((0, "top-down"), (0, "bottom-up"), (hub, "auto")):
            tag = f"{grid.pr}x{grid.pc} {name} {fmt} {sr.name} s={source} {direction}"
            ref = dist_bfs(g, source, semiring=sr, source_value=sv, direction=direction,
                           config=g.config.replace(backend="numba"))
            ref_full = ref.gather()
            for engine in ENGINES:
                before = TRANSFERS.total() if STANDIN else 0
                r = dist_bfs(g, source, semiring=sr, source_value=sv, direction=direction,
                             config=g.config.replace(backend=engine))
                if STANDIN and engine == "cupy":
                    # Per level: the frontier up, the visited flags up (bottom-up), the
                    # result down; the blocks once per search.
                    moved = TRANSFERS.total() - before
                    assert 0 < moved <= 3 * len(r.stats) + 8, (tag, moved, len(r.stats))
                full = r.gather()
                if rank == 0:
                    t = f"{tag} {engine}"
                    assert full.values.dtype == ref_full.values.dtype, t
                    np.testing.assert_array_equal(full.values, ref_full.values, err_msg=t)
                    np.testing.assert_array_equal(full.levels, ref_full.levels, err_msg=t)
                    for field in ("discovered", "direction", "edges"):
                        assert np.array_equal(getattr(r.stats, field),
                                              getattr(ref.stats, field)), (t, field)
                cases[0] += 1
            if rank == 0:
                one = spbfs.bfs(serial, source, semiring=sr, source_value=sv,
                                direction=direction)
                np.testing.assert_array_equal(ref_full.values, one.values, err_msg=tag)
                np.testing.assert_array_equal(ref_full.levels, one.levels, err_msg=tag)


def check_refusals(grid: ProcessGrid) -> None:
    """A semiring the array kernels cannot run is refused on every rank, naming it."""
    el = grid2d(3, 3)
    g, _ = both_graphs(grid, el, False, "csr")
    scalar_only = Monoid("scalar_max", lambda a, b: max(a, b), 0)  # no ufunc
    sr = Semiring(scalar_only, "second", name="scalar_only")
    for engine in ENGINES:
        try:
            dist_bfs(g, 0, semiring=sr, config=g.config.replace(backend=engine))
        except CollectiveError as exc:
            assert "scalar_max" in str(exc), str(exc)
        else:
            raise AssertionError(f"backend {engine!r} ran a semiring without a vectorized form")
    if not STANDIN and not gpu_available():
        # No usable GPU: backend "cupy" is refused on every rank, never run on the CPU.
        try:
            dist_bfs(g, 0, semiring="plus_second", config=g.config.replace(backend="cupy"))
        except CollectiveError as exc:
            assert "config 'backend' is 'cupy'" in str(exc), str(exc)
        else:
            raise AssertionError("backend 'cupy' ran a semiring traversal without a GPU")


if __name__ == "__main__":
    run_cases(graphs, check_graph, check_refusals)
