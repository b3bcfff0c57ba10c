"""The one-process cupy backend's algorithm loops on the strict cupy stand-in.

The loops of :mod:`spbfs.algorithms.operations` (PageRank, FastSV,
delta-stepping, Brandes, the multi-source search, triangle counting) run on
``backend="cupy"`` under ``tests/_cupy_standin.py`` in a fresh interpreter
(the stand-in must be installed before anything imports cupy, and must not
leak into this test process), and must give the numba backend's results. The stand-in refuses
any device array that meets host code without an explicit transfer.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

def main() -> None:
    sys.path.insert(0, str(HERE))
    import _cupy_standin as standin

    transfers = standin.install()

    import numpy as np
    import scipy.sparse as sp

    import spbfs
    from spbfs import Config, Graph
    from spbfs.generators import erdos_renyi, grid2d, kronecker

    cases = 0
    for name, el, directed in (("kron7", kronecker(7, 4, seed=3), False),
                               ("grid9x7", grid2d(9, 7), False),
                               ("er120d", erdos_renyi(120, m=300, seed=4, directed=True), True)):
        for fmt in ("csr", "dcsc"):
            dev = Graph.from_edgelist(el, directed=directed,
                                      config=Config(backend="cupy", format=fmt))
            ref = Graph.from_edgelist(el, directed=directed, config=Config(backend="numba"))
            tag = f"{name} {fmt}"
            assert isinstance(dev.out_block.ind, standin.ndarray), f"{tag}: not on the device"
            a, b = spbfs.pagerank(dev, tol=1e-10), spbfs.pagerank(ref, tol=1e-10)
            assert np.allclose(a.scores, b.scores, rtol=1e-9, atol=1e-15), f"{tag}: pagerank"
            assert a.iterations == b.iterations, f"{tag}: pagerank iterations"
            a, b = spbfs.connected_components(dev), spbfs.connected_components(ref)
            assert np.array_equal(a.labels, b.labels), f"{tag}: components"
            assert a.rounds >= 1, f"{tag}: FastSV ran no round"
            n = el.n
            key = np.unique(el.src.astype(np.int64) * n + el.dst)
            w = np.random.default_rng(5).uniform(0.1, 4.0, key.shape[0])
            W = sp.csr_matrix((w, (key // n, key % n)), shape=(n, n))
            for s in (0, n - 1):
                a, b = spbfs.sssp(dev, s, weights=W), spbfs.sssp(ref, s, weights=W)
                assert np.array_equal(a.distances, b.distances), f"{tag}: sssp from {s}"
            srcs = [0, n - 1, 3, 0]
            a, b = spbfs.multi_source_bfs(dev, srcs), spbfs.multi_source_bfs(ref, srcs)
            assert np.array_equal(a.levels, b.levels), f"{tag}: msbfs levels"
            assert np.array_equal(a.parents, b.parents), f"{tag}: msbfs parents"
            a = spbfs.betweenness_centrality(dev, batch_size=16)
            b = spbfs.betweenness_centrality(ref)
            assert np.allclose(a, b, rtol=1e-9, atol=1e-12), f"{tag}: betweenness"
            a, b = spbfs.triangle_count(dev), spbfs.triangle_count(ref)
            assert np.array_equal(a.per_vertex, b.per_vertex), f"{tag}: triangles"
            assert a.total == b.total, f"{tag}: triangle total"
            cases += 7
    # Every result above came back through explicit transfers only, and a host array
    # handed to the device loops is refused (the stand-in is not lenient).
    assert transfers.to_host > 0, transfers
    from semirings.semiring import min_second
    from spbfs.algorithms.operations import LocalOps

    ops = LocalOps(dev)
    try:
        ops.mxsv(np.array([0]), np.array([0]), min_second, "min")
    except standin.HostLeak:
        pass
    else:
        raise AssertionError("a host frontier reached the device product")
    print(f"STANDIN OK {cases}", flush=True)


def test_cupy_backend_loops_on_the_standin() -> None:
    """PageRank, FastSV, delta-stepping, msbfs, betweenness, triangles on cupy equal numba's."""
    from _cupy_standin import run_script

    run_script(__file__, str(HERE.parent))


if __name__ == "__main__":
    main()
