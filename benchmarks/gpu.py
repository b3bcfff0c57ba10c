"""GPU BFS benchmark: Kronecker scales and a road network, against spbfs on the CPU.

One command on a GPU machine prints the whole table::

    python benchmarks/gpu.py                       # scales 20-24, edge factor 16
    python benchmarks/gpu.py --scales 20-22 --road .devdata/luxembourg_osm.mtx

For each Kronecker scale (Graph500 generator, ``spbfs.generators.kronecker``)
it builds the graph once on the host (numba builders), copies the blocks to
the GPU, and runs a BFS from each of ``--roots`` sampled search keys with the
CUDA engine (``spbfs.kernels.bfs_cuda``), then from the first ``--cpu-roots`` of
them with the numba backend on this machine's CPU (all cores). Parents are
compared root by root: min-parent semantics make them identical.

TEPS follow Graph500: input edge tuples inside the traversed component
(``spbfs.graph500.traversed_edges``) over the search time
(``BFSResult.seconds``: the whole search, host loop included, from the first
kernel to the last level's counter read). The table gives the harmonic mean
over roots, as the specification asks. ``--levels`` prints per-level times of
one root (the largest scale), GPU beside CPU.

``--vectorized-roots N`` also times N roots with the vectorized cupy path
(the generic whole-array code), to show what the kernels buy.

``--json PATH`` writes every measurement. ``--dry-run`` swaps the GPU for the
numpy backend (to test this script on a machine without a GPU).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import spbfs  # noqa: E402
from spbfs.graph500 import sample_roots, traversed_edges  # noqa: E402


def _parse_scales(text: str) -> list[int]:
    out: list[int] = []
    for part in text.split(","):
        if "-" in part:
            lo, hi = (int(x) for x in part.split("-"))
            out.extend(range(lo, hi + 1))
        elif part:
            out.append(int(part))
    return out


def engine_config(g: spbfs.Graph, name: str, fused: bool = True) -> spbfs.Config:
    """The search config that runs ``name`` ('cuda' or 'vectorized') on ``g``'s GPU blocks."""
    return g.config.replace(cuda_kernels=name == "cuda", cuda_fused=fused)


class _Ran:
    """Checks that the searches of a block ran on the engine they were meant to."""

    def __init__(self, gpu_backend: str, name: str) -> None:
        from spbfs.kernels import bfs_cuda

        self.cls = bfs_cuda._CudaEngine
        self.want = gpu_backend == "cupy" and name == "cuda"
        self.name = name

    def __enter__(self) -> None:
        self.before = self.cls.searches

    def __exit__(self, *exc: object) -> None:
        ran = self.cls.searches > self.before
        if exc[0] is None and ran != self.want:
            raise RuntimeError(f"the {self.name} searches ran on the wrong engine")


def hmean(x: list[float]) -> float:
    x = [v for v in x if v > 0]
    return len(x) / sum(1.0 / v for v in x) if x else float("nan")


class _Edges:
    """Graph500 edge counts per root, computed once per connected component."""

    def __init__(self, edges: spbfs.EdgeList) -> None:
        self.edges = edges
        self.known: list[tuple[int, int]] = []  # (a root of the component, count)

    def count(self, root: int, parents: np.ndarray) -> int:
        reached = parents >= 0
        for r0, m in self.known:
            if reached[r0]:  # undirected: same component, same count
                return m
        m = traversed_edges(self.edges, parents)
        self.known.append((root, m))
        return m


def _host_graph(edges: spbfs.EdgeList, fmt: str) -> spbfs.Graph:
    return spbfs.Graph.from_edgelist(edges, config=spbfs.Config(backend="numba", format=fmt))


def _device_graph(g: spbfs.Graph, backend: str) -> spbfs.Graph:
    """The same blocks copied to the device (no second build)."""
    cfg = g.config.replace(backend=backend)
    out = g.out_block.to_backend(backend)
    inn = out if g.in_block is g.out_block else g.in_block.to_backend(backend)
    return spbfs.Graph(out, inn, directed=g.directed, config=cfg, edges=g.edges, ids=g.ids)


def _sync(backend: str) -> None:
    if backend == "cupy":
        import cupy

        cupy.cuda.Device().synchronize()


def run_graph(label: str, edges: spbfs.EdgeList, args: argparse.Namespace,
              gpu_backend: str, log: dict[str, Any]) -> dict[str, Any]:
    t0 = time.perf_counter()
    g = _host_graph(edges, args.format)
    t_build = time.perf_counter() - t0
    t0 = time.perf_counter()
    dg = _device_graph(g, gpu_backend)
    _sync(gpu_backend)
    t_copy = time.perf_counter() - t0
    deg = np.asarray(g.out_degree)
    roots = sample_roots(deg, args.roots, seed=args.seed)
    counter = _Edges(edges)
    rec: dict[str, Any] = {
        "graph": label, "n": g.n, "input_edges": edges.num_edges, "stored_arcs": g.nnz,
        "build_s": t_build, "copy_s": t_copy, "roots": roots.tolist(),
    }
    out = "parents"
    cuda = engine_config(dg, "cuda")
    with _Ran(gpu_backend, "cuda"):
        for _ in range(2):  # compile, fill the memory pool
            spbfs.bfs(dg, int(roots[0]), output=out, config=cuda)
        gpu_t, gpu_m, gpu_lv, gpu_parents = [], [], [], []
        for r in roots:
            res = spbfs.bfs(dg, int(r), output=out, config=cuda)
            gpu_t.append(res.seconds)
            gpu_m.append(counter.count(int(r), res.parents))
            gpu_lv.append(len(res.stats))
            gpu_parents.append(res.parents)
            if len(gpu_t) == 1:
                rec["gpu_levels_root0"] = _levels(res)
    rec["gpu_seconds"] = gpu_t
    rec["traversed_edges"] = gpu_m
    rec["gpu_teps"] = [m / t for m, t in zip(gpu_m, gpu_t, strict=True)]
    rec["levels"] = gpu_lv
    rec["gpu_level_mean_us"] = [t / max(n, 1) * 1e6 for t, n in zip(gpu_t, gpu_lv, strict=True)]
    cpu_t, match = [], []
    spbfs.bfs(g, int(roots[0]), output=out)  # numba compile / warm caches
    for i, r in enumerate(roots[: args.cpu_roots]):
        res = spbfs.bfs(g, int(r), output=out)
        cpu_t.append(res.seconds)
        match.append(bool(np.array_equal(res.parents, gpu_parents[i])))
        if i == 0:
            rec["cpu_levels_root0"] = _levels(res)
    rec["cpu_seconds"] = cpu_t
    rec["cpu_teps"] = [gpu_m[i] / t for i, t in enumerate(cpu_t)]
    rec["parents_match"] = match
    if args.nofused_roots and gpu_backend == "cupy" and not label.startswith("kron"):
        # The same engine with one launch per level (no fused multi-level kernel).
        nofused = engine_config(dg, "cuda", fused=False)
        with _Ran(gpu_backend, "cuda"):
            spbfs.bfs(dg, int(roots[0]), output=out, config=nofused)
            nf_t = [spbfs.bfs(dg, int(r), output=out, config=nofused).seconds
                    for r in roots[: args.nofused_roots]]
        rec["nofused_seconds"] = nf_t
        rec["nofused_level_mean_us"] = [t / max(n, 1) * 1e6
                                        for t, n in zip(nf_t, gpu_lv, strict=False)]
    if args.vectorized_roots and gpu_backend == "cupy":
        vec_t = []
        vec = engine_config(dg, "vectorized")
        with _Ran(gpu_backend, "vectorized"):
            spbfs.bfs(dg, int(roots[0]), output=out, config=vec)
            for r in roots[: args.vectorized_roots]:
                vec_t.append(spbfs.bfs(dg, int(r), output=out, config=vec).seconds)
        rec["vectorized_seconds"] = vec_t
        rec["vectorized_teps"] = [gpu_m[i] / t for i, t in enumerate(vec_t)]
    log["graphs"].append(rec)
    _print_row(rec)
    del dg
    if gpu_backend == "cupy":
        import cupy

        cupy.get_default_memory_pool().free_all_blocks()
    return rec


def _levels(res: spbfs.BFSResult) -> dict[str, list]:
    st = res.stats
    return {
        "direction": st.direction.tolist(), "frontier": st.frontier.tolist(),
        "discovered": st.discovered.tolist(), "edges": st.edges.tolist(),
        "seconds": st.seconds.tolist(),
    }


_HEADER = (
    f"{'graph':<16}{'n':>10}{'edges':>12}{'lvls':>6}{'GPU hmean TEPS':>16}{'GPU med ms':>11}"
    f"{'us/level':>10}{'CPU hmean TEPS':>16}{'CPU med ms':>11}{'speedup':>9}{'vec TEPS':>11}"
    f"{'parents':>9}"
)


def _fmt_teps(x: float) -> str:
    return f"{x / 1e9:.2f} G" if x >= 1e8 else f"{x / 1e6:.1f} M"


def _print_row(rec: dict[str, Any]) -> None:
    gt = hmean(rec["gpu_teps"])
    ct = hmean(rec["cpu_teps"])
    vec = hmean(rec["vectorized_teps"]) if rec.get("vectorized_teps") else float("nan")
    ok = "same" if all(rec["parents_match"]) else "DIFFER"
    print(
        f"{rec['graph']:<16}{rec['n']:>10}{rec['input_edges']:>12}{int(np.median(rec['levels'])):>6}"
        f"{_fmt_teps(gt):>16}{np.median(rec['gpu_seconds']) * 1e3:>11.3f}"
        f"{np.median(rec['gpu_level_mean_us']):>10.1f}"
        f"{_fmt_teps(ct):>16}{np.median(rec['cpu_seconds']) * 1e3:>11.3f}"
        f"{gt / ct:>8.1f}x{(_fmt_teps(vec) if vec == vec else '-'):>11}{ok:>9}",
        flush=True,
    )


def _print_levels(rec: dict[str, Any]) -> None:
    g, c = rec["gpu_levels_root0"], rec.get("cpu_levels_root0")
    print(f"\nper-level times, {rec['graph']}, root {rec['roots'][0]}")
    print(f"{'level':>5} {'dir':>4} {'frontier':>10} {'new':>10} {'edges':>12} "
          f"{'GPU us':>10} {'CPU us':>10}")
    for i in range(len(g["seconds"])):
        cpu = f"{c['seconds'][i] * 1e6:>10.1f}" if c and i < len(c["seconds"]) else f"{'-':>10}"
        print(f"{i + 1:>5} {'TB'[g['direction'][i]]:>4} {g['frontier'][i]:>10} "
              f"{g['discovered'][i]:>10} {g['edges'][i]:>12} {g['seconds'][i] * 1e6:>10.1f} {cpu}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--scales", default="20-24")
    p.add_argument("--edgefactor", type=int, default=16)
    p.add_argument("--roots", type=int, default=16)
    p.add_argument("--cpu-roots", type=int, default=4)
    p.add_argument("--vectorized-roots", type=int, default=0)
    p.add_argument("--nofused-roots", type=int, default=4,
                   help="road network: also time this many roots one launch per level")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--format", default="csr", choices=("csr", "dcsc"))
    p.add_argument("--road", default=None, help="Matrix Market road network (luxembourg_osm)")
    p.add_argument("--levels", action="store_true", help="per-level table of the largest scale")
    p.add_argument("--json", default=None)
    p.add_argument("--dry-run", action="store_true", help="numpy instead of the GPU")
    args = p.parse_args(argv)

    gpu_backend = "numpy" if args.dry_run else "cupy"
    log: dict[str, Any] = {"args": vars(args), "graphs": [], "host": platform.node()}
    if not args.dry_run:
        import cupy

        props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
        name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
        log["device"] = name
        log["cupy"] = cupy.__version__
        log["cuda_runtime"] = cupy.cuda.runtime.runtimeGetVersion()
        print(f"device {name}, cupy {cupy.__version__}, "
              f"CUDA runtime {log['cuda_runtime']}, {os.cpu_count()} CPU cores")
    import numba

    print(f"numba {numba.__version__} with {numba.get_num_threads()} threads; format "
          f"{args.format}; {args.roots} GPU roots, {args.cpu_roots} CPU roots", flush=True)
    print(_HEADER, flush=True)
    from spbfs.generators import kronecker

    recs = []
    for scale in _parse_scales(args.scales):
        t0 = time.perf_counter()
        edges = kronecker(scale, args.edgefactor, seed=args.seed)
        gen_s = time.perf_counter() - t0
        rec = run_graph(f"kron{scale}-ef{args.edgefactor}", edges, args, gpu_backend, log)
        rec["generate_s"] = gen_s
        recs.append(rec)
        del edges
    if args.road:
        from spbfs.io import read_graph

        edges = read_graph(args.road)
        recs.append(run_graph(Path(args.road).stem, edges, args, gpu_backend, log))
    if args.levels:
        kron = [r for r in recs if r["graph"].startswith("kron")]
        if kron:
            _print_levels(kron[-1])
        road = [r for r in recs if not r["graph"].startswith("kron")]
        if road:
            g = road[0]["gpu_levels_root0"]
            s = np.array(g["seconds"]) * 1e6
            r = road[0]
            med = np.median(r["gpu_seconds"]) * 1e3
            print(f"\n{r['graph']}: {s.size} levels; GPU search {med:.2f}"
                  f" ms median = {np.median(r['gpu_level_mean_us']):.1f} us per level (host"
                  f" time); device time per fused level median {np.median(s):.1f} us,"
                  f" p90 {np.percentile(s, 90):.1f} us, max {s.max():.1f} us")
            if r.get("nofused_seconds"):
                print(f"  one launch per level: {np.median(r['nofused_seconds'])*1e3:.2f} ms"
                      f" median = {np.median(r['nofused_level_mean_us']):.1f} us per level")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(log, f, indent=1)
    bad = [r["graph"] for r in recs if not all(r["parents_match"])]
    if bad:
        print(f"PARENTS DIFFER from the CPU on: {', '.join(bad)}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
