"""What ``Graph.from_graphblas`` and ``to_graphblas`` cost, against their floors.

For a Kronecker graph held as a ``graphblas.Matrix`` (BOOL, symmetric; and FP64
weights on the same structure taken as directed), times the median of
``--repeat`` runs of:

* ``M.dup()``, the copy GraphBLAS makes to export (the floor of a safe export),
* ``M.ss.export("csr")`` and ``graphblas.io.to_scipy_sparse(M)``,
* ``Graph.from_graphblas(M)`` under three configs, and the scipy route
  (``to_scipy_sparse`` then ``Graph.from_matrix``) for comparison,
* ``BFSResult.to_graphblas()`` of one search.

It also says whether the graph's out-block shares the exported arrays (no copy
after the export) or holds its own. Run from the repository root::

    python benchmarks/graphblas_interop.py --scale 18 --repeat 5
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp
from _common import format_table, load_average, machine_line, median

import spbfs
from spbfs.generators import kronecker


def timed(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """Median milliseconds of ``repeat`` calls, and the last call's value."""
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return median(times) * 1e3, out


def root_base(a: np.ndarray) -> np.ndarray:
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", type=int, default=18)
    ap.add_argument("--edgefactor", type=int, default=16)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()

    import graphblas as gb

    e = kronecker(args.scale, args.edgefactor, seed=1)
    a = sp.coo_matrix((np.ones(e.src.size, dtype=bool), (e.src, e.dst)), shape=(e.n, e.n))
    a = (a + a.T).tocsr()
    M = gb.io.from_scipy_sparse(a)
    W = gb.io.from_scipy_sparse(a.astype(np.float64))
    print(f"Kronecker scale {args.scale}, edgefactor {args.edgefactor}: n={e.n:,}, "
          f"{M.nvals:,} stored entries (symmetric), M stored as {M.ss.format}")
    print(machine_line())
    load0 = load_average()
    configs = {
        "csr, int64": spbfs.Config(format="csr", index_dtype="int64"),
        "csr, auto (int32)": spbfs.Config(format="csr"),
        "dcsc, auto (int32)": spbfs.Config(format="dcsc"),
    }
    rows: list[list[Any]] = []
    r = args.repeat
    rows.append(["M.dup() (the export's copy)", f"{timed(M.dup, r)[0]:.1f}", ""])
    rows.append(['M.ss.export("csr")', f"{timed(lambda: M.ss.export('csr'), r)[0]:.1f}", ""])
    ms, _ = timed(lambda: gb.io.to_scipy_sparse(M, "csr"), r)
    rows.append(["gb.io.to_scipy_sparse(M)", f"{ms:.1f}", ""])
    for name, cfg in configs.items():
        ms, g = timed(lambda cfg=cfg: spbfs.Graph.from_graphblas(M, config=cfg), r)
        shared = root_base(g.out_block.ind).dtype == np.uint64  # the export's own buffer
        rows.append([f"from_graphblas(M), {name}", f"{ms:.1f}",
                     "shares the export" if shared else "own arrays"])
        ms, _ = timed(lambda cfg=cfg: spbfs.Graph.from_matrix(
            gb.io.to_scipy_sparse(M, "csr"), directed=False, config=cfg), r)
        rows.append([f"to_scipy_sparse + from_matrix, {name}", f"{ms:.1f}", ""])
    ms, g = timed(lambda: spbfs.Graph.from_graphblas(W, directed=True), r)
    rows.append(["from_graphblas(W FP64, directed=True), csr auto", f"{ms:.1f}",
                 f"+ {g.edges.num_edges:,} weighted edges"])
    ms, _ = timed(lambda: spbfs.Graph.from_graphblas(W), r)
    rows.append(["from_graphblas(W FP64) undirected, csr auto", f"{ms:.1f}",
                 "edges once, min of both weights"])
    g = spbfs.Graph.from_graphblas(M)
    res = spbfs.bfs(g, int(np.argmax(g.out_degree)))
    ms, (_, lv) = timed(res.to_graphblas, r)
    rows.append(["BFSResult.to_graphblas()", f"{ms:.1f}", f"{lv.nvals:,} reached of {g.n:,}"])
    print(format_table(["step", "ms (median)", "note"], rows, markdown=args.markdown))
    print(f"load average before {load0}, after {load_average()}")


if __name__ == "__main__":
    main()
