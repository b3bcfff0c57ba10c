"""How big a Kronecker graph spbfs can generate, build and search on this machine.

One format per run (``--format csr`` or ``--format dcsc``), so each run's peak
RSS belongs to that format alone. Stages, each timed and followed by the
process's current and peak resident set size (``ru_maxrss``):

1. generate the Graph500 Kronecker edge list (``spbfs.generators.kronecker``);
2. build the graph (``spbfs.Graph.from_edgelist``; the blocks' bytes are
   ``graph.nbytes``);
3. optionally drop the edge list (``--drop-edges``) to make room;
4. search from ``--roots`` roots (``sample_roots``), ``--repeat`` times each,
   and report the median time per root and the harmonic-mean TEPS;
5. optionally validate each search (``--validate``; needs the edge list and
   memory for the Graph500 checks).

Edge counts for TEPS: with the edge list kept, the Graph500 count
(:func:`spbfs.graph500.traversed_edges`: input tuples inside the component,
duplicates and self-loops included). Without it, the count is taken from the
graph's degrees, ``sum(out_degree[reached]) / 2``: the *distinct, non-loop*
edges of the component. That equals the Graph500 count minus the duplicate
tuples and self-loops in the component, so it is lower (by about 4.5% at scale
22: 64.2 M distinct edges for 67.1 M tuples) and the TEPS it gives are
conservative. Both are printed when both are known.

Progress lines are printed (flushed) before every stage, so a run killed for
memory shows where it died. Run ``python benchmarks/scale.py --help``.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import (
    format_table,
    free_memory_bytes,
    load_average,
    machine_line,
    median,
    peak_rss_bytes,
    rss_bytes,
    set_omp_wait,
)

GiB = float(2**30)


def _mem() -> str:
    return (f"rss {rss_bytes() / GiB:.2f} GiB, peak {peak_rss_bytes() / GiB:.2f} GiB, "
            f"available {free_memory_bytes() / GiB:.1f} GiB")


def _say(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def degree_edge_count(graph: Any, levels: np.ndarray) -> int:
    """Edges of the searched component from the graph's degrees.

    Undirected: ``sum(out_degree[reached]) / 2``, the distinct non-loop edges
    with both ends reached (the graph stores each once per direction, without
    duplicates or self-loops). Directed: arcs leaving reached vertices.
    """
    deg = np.asarray(graph.out_degree)
    total = int(deg[levels >= 0].sum())
    return total if graph.directed else total // 2


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        description="Generate, build and search a big Kronecker graph; report time and memory.")
    p.add_argument("--scale", type=int, default=22, help="Kronecker scale (default 22)")
    p.add_argument("--edgefactor", type=int, default=16, help="edges per vertex (default 16)")
    p.add_argument("--format", choices=("csr", "dcsc"), default="csr", help="block format")
    p.add_argument("--seed", type=int, default=1, help="generator seed (default 1)")
    p.add_argument("--roots", type=int, default=4, help="search keys (default 4)")
    p.add_argument("--root-seed", type=int, default=0, help="seed of sample_roots (default 0)")
    p.add_argument("--repeat", type=int, default=3,
                   help="searches per root; a root's time is the median (default 3)")
    p.add_argument("--drop-edges", action="store_true",
                   help="free the edge list after construction (TEPS then use degree counts)")
    p.add_argument("--validate", action="store_true",
                   help="Graph500-validate every search (needs the edge list; memory-hungry)")
    p.add_argument("--omp-wait", choices=("unset", "passive", "active"), default="unset",
                   help="set OMP_WAIT_POLICY for numba's OpenMP layer (default: leave it alone)")
    p.add_argument("--markdown", action="store_true", help="print markdown tables")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the stages and print the summary table; returns the exit status."""
    args = _parser().parse_args(argv)
    if args.validate and args.drop_edges:
        print("--validate needs the edge list: drop --drop-edges", file=sys.stderr)
        return 2
    if args.roots < 1 or args.repeat < 1:
        print("--roots and --repeat must be positive", file=sys.stderr)
        return 2

    set_omp_wait(args.omp_wait)  # before numba's OpenMP layer loads

    import spbfs
    from spbfs.generators import kronecker
    from spbfs.graph500 import sample_roots, teps_statistics, traversed_edges

    print(machine_line(), flush=True)
    n = 1 << args.scale
    m_in = args.edgefactor * n
    _say(f"scale {args.scale}: n={n:,}, input edges={m_in:,} "
         f"(edge list {2 * 8 * m_in / GiB:.2f} GiB as two int64 arrays); format {args.format}")
    cfg = spbfs.Config(format=args.format, backend="numba")

    # Compile the kernels on a toy graph so no stage below pays for JIT compilation.
    toy = spbfs.Graph.from_edgelist(kronecker(8, 4, seed=1), config=cfg)
    spbfs.bfs(toy, 0)
    del toy

    baseline = rss_bytes()
    _say(f"stage generate: start ({_mem()})")
    t0 = time.perf_counter()
    edges = kronecker(args.scale, args.edgefactor, seed=args.seed)
    t_gen = time.perf_counter() - t0
    peak_gen = peak_rss_bytes()
    _say(f"stage generate: {t_gen:.2f} s ({_mem()})")

    _say("stage build: start")
    t0 = time.perf_counter()
    graph = spbfs.Graph.from_edgelist(edges, config=cfg)
    t_build = time.perf_counter() - t0
    peak_build = peak_rss_bytes()
    gbytes = graph.nbytes
    # Not repr(graph): its edge count scans an nnz-long temporary, which would inflate the peak.
    _say(f"stage build: {t_build:.2f} s, {graph.nnz:,} stored arcs, blocks "
         f"{gbytes / GiB:.3f} GiB, index {graph.out_block.index_dtype} ({_mem()})")

    if args.drop_edges:
        graph.edges = None
        del edges
        edges = None
        gc.collect()
        _say(f"edge list dropped ({_mem()})")

    roots = [int(r) for r in sample_roots(np.asarray(graph.out_degree), args.roots,
                                          seed=args.root_seed)]
    _say(f"stage search: roots {roots}")
    rss_before_search = rss_bytes()
    per_root: list[float] = []
    g500: list[int] = []
    degc: list[int] = []
    depths: list[int] = []
    valid: list[str] = []
    loads: list[str] = []
    for root in roots:
        times = []
        res = None
        for _ in range(args.repeat):
            res = None
            gc.collect()
            t0 = time.perf_counter()
            res = spbfs.bfs(graph, root)
            times.append(time.perf_counter() - t0)
        assert res is not None
        per_root.append(median(times))
        depths.append(res.depth)
        degc.append(degree_edge_count(graph, res.levels))
        if edges is not None:
            g500.append(traversed_edges(edges, res.levels))
        if args.validate:
            from spbfs.validate import validate_bfs_tree

            try:
                validate_bfs_tree(edges, root, res.parents, res.levels)
                valid.append("ok")
            except Exception as exc:  # report, keep going
                valid.append(f"FAILED: {exc}")
        loads.append(load_average().split(",")[0])
        _say(f"  root {root}: median {per_root[-1] * 1e3:.1f} ms over {args.repeat} "
             f"({', '.join(f'{t * 1e3:.0f}' for t in times)} ms), depth {res.depth}, "
             f"reached {res.num_reached:,}, load {loads[-1]}"
             + (f", validation {valid[-1]}" if valid else ""))
        del res
    peak_search = peak_rss_bytes()
    _say(f"stage search: done ({_mem()})")

    t = np.array(per_root)
    counts = np.array(g500 if g500 else degc, dtype=np.float64)
    hmean = teps_statistics(counts / t)["harmonic_mean"]
    hmean_deg = teps_statistics(np.array(degc, dtype=np.float64) / t)["harmonic_mean"]
    nnz = graph.nnz
    rows = [
        ["format", args.format],
        ["scale / edge factor", f"{args.scale} / {args.edgefactor}"],
        ["vertices", f"{graph.n:,}"],
        ["input edges (tuples)", f"{m_in:,}"],
        ["stored arcs (dedup, no loops, both directions)", f"{nnz:,}"],
        ["index dtype", str(graph.out_block.index_dtype)],
        ["generation s", f"{t_gen:.2f}"],
        ["construction s", f"{t_build:.2f}"],
        ["graph.nbytes (blocks)", f"{gbytes / GiB:.3f} GiB"],
        ["blocks bytes / input edge", f"{gbytes / m_in:.2f}"],
        ["peak RSS after generation", f"{peak_gen / GiB:.2f} GiB"],
        ["peak RSS after construction", f"{peak_build / GiB:.2f} GiB"],
        ["RSS entering search", f"{rss_before_search / GiB:.2f} GiB"],
        ["peak RSS overall", f"{peak_search / GiB:.2f} GiB"],
        ["peak bytes / input edge", f"{peak_search / m_in:.2f}"],
        ["RSS before generation (interpreter, numba)", f"{baseline / GiB:.2f} GiB"],
        ["(peak - that) / input edge", f"{(peak_search - baseline) / m_in:.2f}"],
        ["roots", str(len(roots))],
        ["BFS median ms (per-root medians)", f"{np.median(t) * 1e3:.1f}"],
        ["BFS min / max ms", f"{t.min() * 1e3:.1f} / {t.max() * 1e3:.1f}"],
        ["depth (max level)", "/".join(str(d) for d in depths)],
    ]
    if g500:
        rows.append(["hmean TEPS, Graph500 count", f"{hmean / 1e9:.3f} G"])
    rows.append(["hmean TEPS, degree count (conservative)", f"{hmean_deg / 1e9:.3f} G"])
    if valid:
        rows.append(["validation", ", ".join(valid)])
    rows.append(["1-min load average after each root", " ".join(loads)])
    print()
    print(format_table(["metric", "value"], rows, markdown=args.markdown, align="lr"))
    print()
    print(f"after: {machine_line()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
