"""The vectorized engine (numpy, and cupy on the strict stand-in) on directed graphs.

Its direction test weighs the in-edges of the unvisited vertices, as the numba
engine's does, through the driver's one call of
:meth:`spbfs.direction.DirectionPolicy.choose`: the levels equal scipy's and the
schedule (the direction of every level) equals numba's, forwards and reversed,
on R-MAT and Erdős–Rényi digraphs and on a graph built so that weighing the
out-edges instead would turn the other way. On cupy the search runs without the
first-sweep guard (``gamma`` infinite, as on a GPU), so numba is given the same
policy there. The cupy case runs in a fresh interpreter: the stand-in must be
installed before anything imports cupy.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.sparse import csgraph
from test_direction import TWO_LAYER_N, _two_layer_graph

import spbfs
from spbfs import generators as gen
from spbfs.direction import BOTTOM_UP, TOP_DOWN, DirectionPolicy

HERE = Path(__file__).resolve().parent
SOURCES = (0, 1, 5, 77)


def _digraphs() -> dict[str, spbfs.EdgeList]:
    return {"rmat10": gen.rmat(10, 8, seed=2), "rmat12": gen.rmat(12, 13, seed=3),
            "er3000": gen.erdos_renyi(3000, m=9000, seed=5, directed=True)}


def _scipy_levels(g: spbfs.Graph, source: int, reverse: bool) -> np.ndarray:
    a = g.to_scipy()
    d = csgraph.shortest_path(a.T if reverse else a, method="D", directed=True, unweighted=True,
                              indices=source)
    return np.where(np.isinf(d), -1, d).astype(np.int64)


def check_engine(backend: str, gamma: float, **config: object) -> int:
    """Every digraph and source, forwards and reversed, on ``backend`` against numba and
    scipy, under a policy of ``gamma``; returns the searches that had a bottom-up level."""
    saved = DirectionPolicy.gamma
    DirectionPolicy.gamma = gamma  # the driver's policy and the reference's alike
    try:
        swept = 0
        for name, el in _digraphs().items():
            dev = spbfs.Graph.from_edgelist(el, directed=True,
                                            config=spbfs.Config(backend=backend, **config))
            ref = spbfs.Graph.from_edgelist(el, directed=True,
                                            config=spbfs.Config(backend="numba"))
            for s in SOURCES:
                for reverse in (False, True):
                    tag = f"{name} from {s}{' reversed' if reverse else ''}"
                    r, want = spbfs.bfs(dev, s, reverse=reverse), spbfs.bfs(ref, s,
                                                                          reverse=reverse)
                    assert np.array_equal(r.levels, _scipy_levels(ref, s, reverse)), tag
                    assert np.array_equal(r.parents, want.parents), tag
                    assert r.stats.direction.tolist() == want.stats.direction.tolist(), tag
                    swept += int(r.stats.direction.max()) == BOTTOM_UP
        # Weighing the out-edges of the unvisited vertices would decide the other way.
        for back, alpha, expect in ((True, 2.0, BOTTOM_UP), (False, 2.0, TOP_DOWN)):
            src, dst = _two_layer_graph(back)
            g = spbfs.Graph.from_edges(src, dst, n=TWO_LAYER_N, directed=True,
                                       config=spbfs.Config(backend=backend, alpha=alpha,
                                                           **config))
            r = spbfs.bfs(g, 0)
            assert r.stats.direction.tolist()[:2] == [TOP_DOWN, expect], (back, alpha)
    finally:
        DirectionPolicy.gamma = saved
    return swept


@pytest.mark.parametrize("gamma", [DirectionPolicy.gamma, float("inf")])
def test_numpy_engine_on_digraphs_matches_scipy_and_numbas_schedule(gamma: float) -> None:
    assert check_engine("numpy", gamma) > 0  # some schedules go bottom-up


def main() -> None:
    sys.path.insert(0, str(HERE))
    import _cupy_standin as standin

    transfers = standin.install()
    swept = check_engine("cupy", float("inf"), cuda_kernels=False)
    assert swept > 0 and transfers.to_host > 0, (swept, transfers)
    print(f"STANDIN OK {swept}", flush=True)


def test_cupy_vectorized_engine_on_digraphs_on_the_standin() -> None:
    from _cupy_standin import run_script

    run_script(__file__, str(HERE.parent))


if __name__ == "__main__":
    main()
