"""SpMSV benchmark: the top-down BFS kernel on a Graph500 Kronecker graph.

Builds the symmetric, deduplicated pattern matrix ``B`` of a Kronecker graph
(Graph500 parameters, self-loops dropped), then times ``y = B min.second x``
for random frontiers of 10**2 .. 10**5 distinct sorted vertices whose values
are their own ids (the BFS parent candidates), on:

* the ``numpy`` and ``numba`` backends, each with a ``csr`` and a ``dcsc`` block;
* the baseline ``scipy.sparse``: ``csr_matrix(B.T)[frontier]`` (a row gather of
  the transpose, the fastest scipy route to the union of the columns) reduced
  with ``minimum.reduceat`` after a sort; timed as the structural product
  ``csr @ sparse vector`` as well (``plus_times``: counts, not parents).

Each cell is the median of ``--repeat`` runs in milliseconds; the ``nnz``
column is the number of output entries (identical for all rows: checked).

Run ``python benchmarks/spmsv.py [--scale 20] [--markdown]``.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from semirings import SparseVector, block_from_edges, semiring, spmsv


def kronecker_pattern(scale: int, edgefactor: int, seed: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Symmetric edge list (both directions, no self-loops) of a Graph500 graph."""
    from spbfs.generators import kronecker

    g = kronecker(scale, edgefactor, seed=seed)
    src, dst = np.asarray(g.src, np.int64), np.asarray(g.dst, np.int64)
    keep = src != dst
    src, dst = src[keep], dst[keep]
    return np.concatenate((src, dst)), np.concatenate((dst, src)), int(g.n)


def median_ms(f: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    out = f()  # warm-up: numba compiles or loads from its cache here
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t0)
    return 1e3 * statistics.median(times), out


def scipy_min_second(bt: sp.csr_matrix, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """min.second SpMSV with scipy: gather the frontier's adjacency lists, reduce per row."""
    sub = bt[cols]  # rows of B.T = columns of B, in frontier order
    rows = sub.indices
    owner = np.repeat(cols, np.diff(sub.indptr))
    order = np.lexsort((owner, rows))
    r = rows[order]
    first = np.flatnonzero(np.r_[True, r[1:] != r[:-1]])
    return r[first], owner[order][first]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=20)
    ap.add_argument("--edgefactor", type=int, default=16)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument(
        "--sizes", type=int, nargs="+", default=[10**2, 10**3, 10**4, 10**5],
        help="frontier sizes (capped at the number of vertices)",
    )
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    rows, cols, n = kronecker_pattern(args.scale, args.edgefactor, args.seed)
    blocks = {
        fmt: block_from_edges(fmt, rows, cols, (n, n), dedup=True, backend="numpy")
        for fmt in ("csr", "dcsc")
    }
    nnz = blocks["csr"].nnz
    bt = blocks["csr"].matrix  # B.T as scipy csr (shares the block's arrays)
    b_csr = bt.T.tocsr()  # B itself, for the plain scipy product
    build_s = time.perf_counter() - t0

    rng = np.random.default_rng(args.seed)
    sizes = [min(s, n) for s in args.sizes]
    frontiers = [np.sort(rng.choice(n, size=s, replace=False)).astype(np.int64) for s in sizes]

    results: dict[str, list[float]] = {}
    out_nnz: list[int] = []
    for f in frontiers:
        x = SparseVector(f, f.copy(), n)
        ref = None
        for backend in ("numpy", "numba"):
            for fmt, block in blocks.items():
                run = partial(spmsv, block, x, semiring.min_second, backend=backend, check=False)
                ms, y = median_ms(run, args.repeat)
                results.setdefault(f"{backend} {fmt}", []).append(ms)
                if ref is None:
                    ref = y
                    out_nnz.append(y.nnz)
                elif not (np.array_equal(y.indices, ref.indices)
                          and np.array_equal(y.values, ref.values)):
                    raise AssertionError(f"{backend} {fmt} disagrees at |f| = {f.size}")
        ms, (idx, vals) = median_ms(partial(scipy_min_second, bt, f), args.repeat)
        if not (np.array_equal(idx, ref.indices) and np.array_equal(vals, ref.values)):
            raise AssertionError("scipy baseline disagrees")
        results.setdefault("scipy gather+reduce", []).append(ms)
        xs = sp.csr_matrix((np.ones(f.size), (f, np.zeros(f.size, np.int64))), shape=(n, 1))
        ms, _ = median_ms(partial(b_csr.__matmul__, xs), args.repeat)
        results.setdefault("scipy csr @ sparse x", []).append(ms)

    print(
        f"# min_second SpMSV, Kronecker scale {args.scale} edgefactor {args.edgefactor}: "
        f"n = {n:,}, nnz(B) = {nnz:,} (symmetric, deduplicated), built in {build_s:.1f} s"
    )
    print(
        f"# median of {args.repeat} runs, ms; {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cpus, numpy {np.__version__}"
    )
    header = ["kernel", *[f"|f|={s:,}" for s in sizes]]
    table = [[name, *[f"{v:.3f}" for v in vals]] for name, vals in results.items()]
    table.append(["output nnz", *[f"{v:,}" for v in out_nnz]])
    widths = [max(len(r[i]) for r in [header, *table]) for i in range(len(header))]
    if args.markdown:
        print("| " + " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + " |")
        print("|" + "|".join("-" * (w + 1) + ":" for w in widths) + "|")
        for r in table:
            print("| " + " | ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) + " |")
    else:
        print("  ".join(h.rjust(w) for h, w in zip(header, widths, strict=True)))
        print("  ".join("-" * w for w in widths))
        for r in table:
            print("  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
