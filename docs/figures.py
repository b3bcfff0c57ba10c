"""Draw the documentation's figures (PNG) with matplotlib; run before ``mkdocs build``.

    python docs/figures.py                 # writes docs/figures/*.png
    python docs/figures.py --out DIR       # somewhere else (the docs test uses a temp copy)

Every figure is computed from the library itself on small generated graphs, so the
script needs no data files and takes a few seconds.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(ROOT) not in sys.path:  # run from a checkout without installing
    sys.path.insert(0, str(ROOT))

import spbfs  # noqa: E402
from semirings import SparseVector, block_from_edges, spmsv  # noqa: E402
from spbfs.generators import kronecker  # noqa: E402
from spbfs.graph500 import run_benchmark, sample_roots  # noqa: E402
from spbfs.plot import DIRECTION_COLORS, benchmark_figure, plot_levels  # noqa: E402

DPI = 110
BLUE, ORANGE = DIRECTION_COLORS
GREEN, GREY = "#009E73", "0.85"

# The toy graph of the SpMSV figure: 8 vertices, undirected.
TOY_EDGES = [(0, 1), (0, 2), (1, 3), (2, 3), (2, 4), (3, 5), (4, 6), (5, 7), (6, 7), (1, 4)]


def _save(fig: Figure, out: Path, name: str) -> Path:
    path = out / name
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def fig_bench(out: Path) -> Path:
    """Front page: the ``spbfs bench --plot`` figure of a small benchmark."""
    edges = kronecker(13, 16, seed=1)
    g = spbfs.Graph.from_edgelist(edges)
    roots = sample_roots(g.out_degree, 16, seed=1)

    def one(root: int) -> tuple[np.ndarray, np.ndarray]:
        r = spbfs.bfs(g, root)
        return r.parents, r.levels

    result = run_benchmark(one, edges, roots,
                           header={"SCALE": 13, "edgefactor": 16, "format": "csr"})
    fig = benchmark_figure(result, spbfs.bfs(g, int(roots[0])), figsize=(10.0, 6.8))
    return _save(fig, out, "bench.png")


def fig_spmsv(out: Path) -> Path:
    """One top-down level as a masked SpMSV over min_second on an 8-vertex graph."""
    n = 8
    u, v = np.array(TOY_EDGES).T
    B = block_from_edges("csr", v, u, (n, n), symmetric=True)
    dense = B.to_scipy().toarray() != 0
    frontier = np.array([1, 2])
    visited = np.zeros(n, dtype=bool)
    visited[[0, 1, 2]] = True
    y = spmsv(B, SparseVector(frontier, frontier, size=n), "min_second", mask=visited,
              complement=True)
    fig, ax = plt.subplots(figsize=(8.6, 4.4), layout="constrained")
    ax.set_xlim(-1.6, n + 6.4)
    ax.set_ylim(n + 1.3, -2.9)
    ax.set_aspect("equal")
    ax.axis("off")
    for r in range(n):
        for c in range(n):
            face = "white"
            if c in frontier:
                face = "#D6EAF8"
            if visited[r]:
                face = "#EEEEEE" if c not in frontier else "#C9D6DF"
            ax.add_patch(Rectangle((c - 0.5, r - 0.5), 1, 1, fc=face, ec="0.75", lw=0.6))
            if dense[r, c]:
                hit = c in frontier and not visited[r]
                ax.plot(c, r, "o", ms=9 if hit else 6, color=BLUE if hit else "0.35")
    for k in range(n):
        ax.text(k, -0.9, str(k), ha="center", va="center", fontsize=9)
        ax.text(-1.0, k, str(k), ha="center", va="center", fontsize=9)
    ax.text((n - 1) / 2, -1.8, "B  (column u lists where u leads)", ha="center", fontsize=10)
    # frontier vector x (values = own ids), drawn as a column
    fx = n + 0.7
    ax.text(fx, -1.8, "x\n(frontier)", ha="center", fontsize=10)
    for k in range(n):
        present = k in frontier
        ax.add_patch(Rectangle((fx - 0.5, k - 0.5), 1, 1, fc="#D6EAF8" if present else "white",
                               ec="0.6", lw=0.8))
        if present:
            ax.text(fx, k, str(k), ha="center", va="center", fontsize=9, color=BLUE)
    # mask and result
    mx = n + 2.9
    ax.text(mx, -1.8, "mask:\n¬visited", ha="center", fontsize=10)
    for k in range(n):
        ax.add_patch(Rectangle((mx - 0.5, k - 0.5), 1, 1, fc="#EEEEEE" if visited[k] else "white",
                               ec="0.6", lw=0.8))
        ax.text(mx, k, "✗" if visited[k] else "✓", ha="center", va="center", fontsize=9,
                color="0.5" if visited[k] else GREEN)
    yx = n + 5.1
    ax.text(yx, -1.8, "y =\nB ⊕.⊗ x", ha="center", fontsize=10)
    result = dict(zip(y.indices.tolist(), y.values.tolist(), strict=True))
    for k in range(n):
        present = k in result
        ax.add_patch(Rectangle((yx - 0.5, k - 0.5), 1, 1, fc="#FDEBD0" if present else "white",
                               ec="0.6", lw=0.8))
        if present:
            ax.text(yx, k, str(result[k]), ha="center", va="center", fontsize=9, color=ORANGE)
    ax.text((n + 5.5) / 2, n + 0.5,
            "min_second: each term B[v,u] ⊗ x[u] = u (a candidate parent), ⊕ = min keeps the "
            "smallest;\nthe complemented mask drops visited rows before any work is done. "
            f"Next frontier: {sorted(result)}",
            ha="center", va="top", fontsize=8.5)
    return _save(fig, out, "spmsv.png")


def fig_grid(out: Path) -> Path:
    """The 2D distribution of a 24-vertex matrix and its vectors on a 2 × 3 grid."""
    from spbfs.mpi import Distribution

    n, pr, pc = 24, 2, 3
    d = Distribution(n=n, pr=pr, pc=pc)
    colors = plt.get_cmap("Pastel1").colors
    fig, ax = plt.subplots(figsize=(8.2, 5.6), layout="constrained")
    ax.set_xlim(-4.2, n + 0.5)
    ax.set_ylim(n + 0.8, -4.6)
    ax.set_aspect("equal")
    ax.axis("off")
    for i in range(pr):
        r0, r1 = d.piece_range(i * pc)[0], d.piece_range((i + 1) * pc - 1)[1]
        for j in range(pc):
            c0, c1 = d.piece_range(j * pr)[0], d.piece_range((j + 1) * pr - 1)[1]
            rank = i * pc + j
            ax.add_patch(Rectangle((c0, r0), c1 - c0, r1 - r0, fc=colors[rank], ec="0.2",
                                   lw=1.4))
            ax.text((c0 + c1) / 2, (r0 + r1) / 2,
                    f"P({i},{j})\nB[row chunk {i},\ncol chunk {j}]",
                    ha="center", va="center", fontsize=9)
    # vector pieces: piece k belongs to rank k; row chunks on the left, column chunks on top
    for k in range(d.p):
        lo, hi = d.piece_range(k)
        ax.add_patch(Rectangle((-2.6, lo), 1.6, hi - lo, fc=colors[k], ec="0.3", lw=0.8))
        ax.text(-1.8, (lo + hi) / 2, f"{k}", ha="center", va="center", fontsize=9)
        ax.add_patch(Rectangle((lo, -3.0), hi - lo, 1.6, fc=colors[k], ec="0.3", lw=0.8))
        ax.text((lo + hi) / 2, -2.2, f"{k}", ha="center", va="center", fontsize=9)
    ax.text(-1.8, -0.4, "pieces", ha="center", va="bottom", fontsize=8, rotation=90)
    ax.text(n / 2, -3.4, f"columns u (vertex pieces of {d.b} ids; piece k lives on rank k)",
            ha="center", va="bottom", fontsize=9)
    ax.text(-3.3, n / 2, "rows v", ha="center", va="center", fontsize=9, rotation=90)
    ax.text(n / 2, n + 0.5,
            f"n = {n}, {pr} × {pc} grid: row chunk i = pieces [i·pc, (i+1)·pc), "
            "column chunk j = pieces [j·pr, (j+1)·pr)",
            ha="center", va="top", fontsize=9)
    return _save(fig, out, "grid.png")


def _block_memory(rows: np.ndarray, cols: np.ndarray, n: int, pr: int,
                  pc: int) -> dict[str, int]:
    """Summed nbytes over the ranks of a pr × pc grid, per format (B only)."""
    p = pr * pc
    b = -(-n // p)
    owner = (rows // b // pc) * pc + cols // b // pr
    order = np.argsort(owner, kind="stable")
    bounds = np.searchsorted(owner[order], np.arange(p + 1))
    rs, cs = rows[order], cols[order]
    total = {"csr": 0, "dcsc": 0}
    for i in range(pr):
        r0, r1 = min(i * pc * b, n), min((i + 1) * pc * b, n)
        for j in range(pc):
            c0, c1 = min(j * pr * b, n), min((j + 1) * pr * b, n)
            lo, hi = bounds[i * pc + j], bounds[i * pc + j + 1]
            for fmt in total:
                total[fmt] += block_from_edges(fmt, rs[lo:hi] - r0, cs[lo:hi] - c0,
                                               (r1 - r0, c1 - c0)).nbytes
    return total


def fig_formats(out: Path) -> Path:
    """Aggregate block memory of CSR and DCSC for growing square grids (scale 14)."""
    import numba

    edges = kronecker(14, 16, seed=1)
    keep = edges.src != edges.dst
    u, v = edges.src[keep], edges.dst[keep]
    rows, cols = np.concatenate([v, u]), np.concatenate([u, v])
    n = edges.n
    threads = numba.get_num_threads()
    numba.set_num_threads(1)  # thousands of tiny blocks: no parallel region per block
    try:
        sides = [1, 2, 4, 8, 16, 32]
        mem = [_block_memory(rows, cols, n, s, s) for s in sides]
    finally:
        numba.set_num_threads(threads)
    p = np.array(sides) ** 2
    fig, ax = plt.subplots(figsize=(6.8, 4.0), layout="constrained")
    ax.plot(p, [2 * m["csr"] / 2**20 for m in mem], "o-", color=BLUE, label="CSR")
    ax.plot(p, [2 * m["dcsc"] / 2**20 for m in mem], "s-", color=ORANGE, label="DCSC")
    ax.set_xscale("log", base=2)
    ax.set_xticks(p, [f"{s}×{s}" for s in sides])
    ax.set_ylim(bottom=0)
    ax.set_xlabel("process grid pr × pc")
    ax.set_ylabel("block memory, all ranks (MiB)")
    ax.set_title(f"Kronecker scale 14 (n = {n:,}): B and its transpose", fontsize="medium")
    ax.grid(alpha=0.3)
    ax.legend()
    return _save(fig, out, "formats.png")


def fig_direction(out: Path) -> Path:
    """Direction optimization on a Kronecker graph: levels, and edges examined per level."""
    g = spbfs.Graph.from_edgelist(kronecker(14, 16, seed=1))
    root = int(sample_roots(g.out_degree, 1, seed=4)[0])
    auto = spbfs.bfs(g, root)
    td = spbfs.bfs(g, root, direction="top-down")
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11.5, 4.0), layout="constrained")
    plot_levels(auto, ax1)
    k = np.arange(1, max(len(td.stats), len(auto.stats)) + 1)
    pad = lambda a: np.pad(a, (0, k.size - a.size)).astype(float)  # noqa: E731
    ax2.bar(k - 0.2, pad(td.stats.edges), width=0.4, color="0.65", label="top-down only")
    colors = [DIRECTION_COLORS[d] for d in auto.stats.direction]
    ax2.bar(k[: len(auto.stats)] + 0.2, auto.stats.edges, width=0.4, color=colors)
    for d, name in ((0, "optimized: top-down level"), (1, "optimized: bottom-up level")):
        ax2.bar([np.nan], [np.nan], color=DIRECTION_COLORS[d], label=name)  # legend entry
    ax2.set_yscale("log")
    ax2.set_xticks(k)
    ax2.set_xlabel("BFS level")
    ax2.set_ylabel("edges examined (log scale)")
    ax2.set_title(f"total: {td.edges_examined:,} top-down only vs {auto.edges_examined:,} "
                  "optimized", fontsize="medium")
    ax2.legend(fontsize="small")
    return _save(fig, out, "direction.png")


FIGURES: dict[str, Callable[[Path], Path]] = {
    "bench": fig_bench,
    "spmsv": fig_spmsv,
    "grid": fig_grid,
    "formats": fig_formats,
    "direction": fig_direction,
}


def main(argv: list[str] | None = None) -> int:
    """Write every figure (or the ones named) and print where."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=HERE / "figures", help="output folder")
    ap.add_argument("names", nargs="*", help=f"figures to draw: {', '.join(FIGURES)} (all)")
    args = ap.parse_args(argv)
    unknown = sorted(set(args.names) - set(FIGURES))
    if unknown:
        ap.error(f"unknown figure(s) {', '.join(unknown)}; choose from {', '.join(FIGURES)}")
    args.out.mkdir(parents=True, exist_ok=True)
    for name in args.names or FIGURES:
        t0 = time.perf_counter()
        path = FIGURES[name](args.out)
        print(f"{path} ({time.perf_counter() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
