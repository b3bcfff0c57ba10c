"""Memory of the 2D-distributed graph per rank, against the one-process graph.

Run under ``mpiexec``; every rank builds its share of
``DistGraph.kronecker(scale, edgefactor, seed=...)`` and rank 0 prints, per
rank:

* the bytes of every array the :class:`~spbfs.mpi.DistGraph` holds, found by
  walking its attributes (blocks by part: ``ptr``, ``ind``, ``jc``; tuples
  and lists of arrays; ``_search_buffers`` after ``--searches`` searches), each buffer
  counted once (``_raw``/``_traw`` are views of the blocks' arrays and show
  as aliases);
* the resident set size before the build, its peak (``ru_maxrss``) after the
  build and after a search, and the RSS after the build;
* bytes per input edge, and the ratio of the rank's blocks, transposes,
  index and search buffers to its share (``1 / p``) of the one-process
  graph's blocks;
* all ranks' peak RSS together against the one process's peak RSS (and the
  same for the peak growth in the build).

The one-process reference (``spbfs.Graph.from_edgelist`` of
``spbfs.generators.kronecker`` with the same arguments: its blocks, its
input edge list, its peak RSS) is measured in a child process of rank 0
before the distributed build (so that its memory counts in neither), alone
with ``--one-process``, or read back from such a run's ``--json-out`` file
with ``--reference``. Both sides first build and search a scale-10 graph, so
that loading numba's compiled kernels is not counted as growth.

Usage (repository root)::

    mpiexec -n 2 python benchmarks/dist_memory.py --scale 18
    mpiexec -n 4 python benchmarks/dist_memory.py --scale 20 --format dcsc --markdown
    python benchmarks/dist_memory.py --one-process --scale 20 --json-out one20.json
    mpiexec -n 2 python benchmarks/dist_memory.py --scale 20 --reference one20.json \
        --json-out two20.json
    python benchmarks/dist_memory.py --render two20.json --reference one20.json

Memory, not time, is measured: the machine's load does not change the numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks._common import (  # noqa: E402
    format_table,
    load_average,
    peak_rss_bytes,
    rss_bytes,
)

MiB = 2**20


def _root_array(a: np.ndarray) -> np.ndarray:
    """The array owning ``a``'s memory (a view's base chain, followed down)."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


class _Ledger:
    """Bytes of arrays by label, every buffer counted once (the first label to reach it)."""

    def __init__(self) -> None:
        self.seen: set[int] = set()
        self.rows: dict[str, int] = {}
        self.aliases: set[str] = set()

    def add(self, label: str, obj: Any, depth: int = 0) -> None:
        """Record the arrays inside ``obj`` (array, Block, tuple, list, dict) under ``label``."""
        from semirings.blocks import Block

        if depth > 6 or obj is None:
            return
        if isinstance(obj, np.ndarray):
            root = _root_array(obj)
            if id(root) in self.seen:
                self.rows.setdefault(label, 0)
                self.aliases.add(label)
                return
            self.seen.add(id(root))
            self.rows[label] = self.rows.get(label, 0) + int(root.nbytes)
        elif isinstance(obj, Block):
            for part in ("ptr", "ind", "jc", "data"):
                arr = getattr(obj, part, None)
                if arr is not None:
                    self.add(f"{label}.{part}", arr, depth + 1)
        elif isinstance(obj, tuple | list):
            for x in obj:
                self.add(label, x, depth + 1)
        elif isinstance(obj, dict):
            for k, x in obj.items():
                self.add(f"{label}[{k}]", x, depth + 1)
        elif type(obj).__module__.startswith(("spbfs", "semirings")):
            # The project's own holders (a scratch pool, pair channels, ...): their
            # arrays count too, held in a __dict__ or in __slots__.
            names = list(vars(obj)) if hasattr(obj, "__dict__") else \
                list(getattr(type(obj), "__slots__", ()))
            for name in names:
                self.add(label, getattr(obj, name, None), depth + 1)


# Which held arrays count as "blocks, transposes, index and buffers" (the engine's storage).
_ENGINE = ("block", "tblock", "seg_slots", "nonempty", "_search_buffers", "_pair_channels",
           "_raw", "_traw")


def _is_engine(label: str) -> bool:
    return label.split(".")[0].split("[")[0] in _ENGINE


def _dist_ledger(g: Any) -> _Ledger:
    """Every array a DistGraph holds, blocks first (so that views count as aliases)."""
    led = _Ledger()
    attrs = vars(g)
    # B_ij beside its transpose where held (a directed graph; built on demand otherwise).
    held = getattr(g, "block_held", None)
    if held is None or held():
        led.add("block", g.block)
    order = ["tblock", *sorted(k for k in attrs if k not in ("block", "tblock"))]
    for k in order:
        if k in attrs:
            led.add(k, attrs[k])
    return led


# -- one process ---------------------------------------------------------------------------
def one_process(scale: int, edgefactor: int, seed: int, fmt: str) -> dict[str, Any]:
    """Build the one-process graph; its blocks' bytes, edge list and peak RSS."""
    import spbfs
    import spbfs.graph500
    from spbfs.generators import kronecker

    # Warm up: numba's compiled kernels load (tens of MiB) before the baseline is read.
    small = kronecker(10, edgefactor, seed=seed)
    spbfs.bfs(spbfs.Graph.from_edgelist(small, config=spbfs.Config(format=fmt)), 0)
    del small
    base = rss_bytes()
    edges = kronecker(scale, edgefactor, seed=seed)
    after_gen = peak_rss_bytes()
    g = spbfs.Graph.from_edgelist(edges, config=spbfs.Config(format=fmt))
    after_build = peak_rss_bytes()
    led = _Ledger()
    led.add("out_block", g.out_block)
    led.add("in_block", g.in_block)
    led.add("edges", (edges.src, edges.dst))
    deg = g.out_degree
    roots = spbfs.graph500.sample_roots(np.asarray(deg), 1, seed=seed)
    spbfs.bfs(g, int(roots[0]))
    led.add("_search_cache", g._search_cache)
    scratch = sum(v for k, v in led.rows.items() if k.startswith("_search_cache"))
    return {
        "rows": led.rows, "aliases": sorted(led.aliases), "blocks": int(g.nbytes),
        "engine": int(g.nbytes) + int(scratch),
        "input_edges": int(edges.num_edges), "n": int(edges.n),
        "base_rss": base, "peak_after_generation": after_gen,
        "peak_after_build": after_build, "peak_after_search": peak_rss_bytes(),
        "index_dtype": str(g.out_block.index_dtype),
    }


def _one_process_child(args: argparse.Namespace) -> dict[str, Any]:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--one-process", "--json-out",
           "-", "--scale", str(args.scale), "--edgefactor", str(args.edgefactor),
           "--seed", str(args.seed), "--format", args.format]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PMI", "MPI", "HYDRA"))}
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out.strip().splitlines()[-1])


# -- distributed ---------------------------------------------------------------------------
def distributed(args: argparse.Namespace) -> None:
    """Build the DistGraph on every rank, search once, gather the ledgers on rank 0."""
    from spbfs.config import Config
    from spbfs.mpi import DistGraph, ProcessGrid, bfs, install_excepthook
    from spbfs.mpi import comm as C

    install_excepthook()
    grid = ProcessGrid(args.grid)
    ref = None
    if grid.rank == 0 and args.reference:
        ref = json.loads(Path(args.reference).read_text())
    elif grid.rank == 0 and not args.no_one_process:
        ref = _one_process_child(args)
    cfg = Config(format=args.format)
    # Warm up: numba's compiled kernels load (tens of MiB) before the baseline is read.
    small = DistGraph.kronecker(10, args.edgefactor, seed=args.seed, grid=grid, config=cfg)
    bfs(small, int(small.sample_roots(1, seed=args.seed)[0])).validate(small)
    del small
    C.wait_barrier(grid.comm)
    base = rss_bytes()
    g = DistGraph.kronecker(args.scale, args.edgefactor, seed=args.seed, grid=grid, config=cfg)
    peak_build = peak_rss_bytes()
    rss_build = rss_bytes()
    # Several roots: buffers grown to what a level needed show the largest of them.
    for root in g.sample_roots(args.searches, seed=args.seed).tolist():
        bfs(g, int(root))
    peak_search = peak_rss_bytes()
    led = _dist_ledger(g)
    mine = {"rows": led.rows, "aliases": sorted(led.aliases), "base_rss": base,
            "peak_after_build": peak_build, "rss_after_build": rss_build,
            "peak_after_search": peak_search, "entries": int(g.tblock.nnz),
            "construction_time": g.construction_time,
            "generation_time": g.generation_time,
            "index_dtype": str(g.tblock.index_dtype)}
    every = grid.comm.gather(mine, root=0)
    if grid.rank == 0:
        doc = {"scale": args.scale, "edgefactor": args.edgefactor, "seed": args.seed,
               "n": g.n, "grid": f"{g.grid.pr}x{g.grid.pc}", "format": args.format,
               "input_edges": g.input_edges, "load": load_average(), "ranks": every,
               "one_process": ref}
        report(doc, args.markdown)
        if args.json_out:
            Path(args.json_out).write_text(json.dumps(doc, indent=1))


def _mib(x: float) -> str:
    return f"{x / MiB:.1f}"


def report(doc: dict[str, Any], markdown: bool = False) -> None:
    """Print the per-rank table of a measurement (and the one-process one)."""
    every, ref = doc["ranks"], doc["one_process"]
    p = len(every)
    m = doc["input_edges"]
    labels: list[str] = []
    for r in every:
        labels += [k for k in r["rows"] if k not in labels]
    engine_labels = [k for k in labels if _is_engine(k)]
    other_labels = [k for k in labels if not _is_engine(k)]
    heads = ["array (MiB)"] + [f"rank {r}" for r in range(p)]
    rows: list[list[str]] = []

    def line(name: str, values: list[float], fmt: Any = _mib) -> None:
        rows.append([name] + [fmt(v) for v in values])

    for k in engine_labels + other_labels:
        alias = all(k in r["aliases"] and r["rows"].get(k, 0) == 0 for r in every)
        vals = [r["rows"].get(k, 0) for r in every]
        rows.append([k + (" (alias)" if alias else "")] +
                    ["-" if alias else _mib(v) for v in vals])
    eng = [sum(v for k, v in r["rows"].items() if _is_engine(k)) for r in every]
    held = [sum(r["rows"].values()) for r in every]
    line("= engine (blocks, index, buffers)", eng)
    line("= everything held", held)
    line("construction time (s)", [r["construction_time"] for r in every], lambda v: f"{v:.2f}")
    line("generation time (s)", [r.get("generation_time", float("nan")) for r in every],
         lambda v: f"{v:.2f}")
    line("RSS before build", [r["base_rss"] for r in every])
    line("RSS after build", [r["rss_after_build"] for r in every])
    line("peak RSS after build", [r["peak_after_build"] for r in every])
    line("peak RSS after search", [r["peak_after_search"] for r in every])
    line("peak RSS growth in build", [r["peak_after_build"] - r["base_rss"] for r in every])
    line("engine bytes / input edge", [e / m for e in eng], lambda v: f"{v:.2f}")
    line("held bytes / input edge", [h / m for h in held], lambda v: f"{v:.2f}")
    line("peak bytes / input edge (build)",
         [r["peak_after_build"] / m for r in every], lambda v: f"{v:.1f}")
    if ref is not None:
        share = ref["blocks"] / p
        line("engine / (one-process blocks / p)", [e / share for e in eng], lambda v: f"{v:.2f}")
        if "engine" in ref:
            line("engine / (one-process blocks + scratch) / p",
                 [e / (ref["engine"] / p) for e in eng], lambda v: f"{v:.2f}")
        line("held / (one-process blocks / p)", [h / share for h in held], lambda v: f"{v:.2f}")
        grow = (ref["peak_after_build"] - ref["base_rss"]) / p
        line("build growth / (one-process growth / p)",
             [(r["peak_after_build"] - r["base_rss"]) / grow for r in every],
             lambda v: f"{v:.2f}")
    print(f"# Kronecker scale {doc['scale']}, edge factor {doc['edgefactor']}, seed "
          f"{doc['seed']}: n={doc['n']:,}, input edges {m:,}; grid {doc['grid']}, format "
          f"{doc['format']}, local index {every[0]['index_dtype']}; load {doc['load']}")
    entries = ", ".join(f"{r['entries']:,}" for r in every)
    print(f"# stored entries per rank: {entries}")
    print(format_table(heads, rows, markdown=markdown))
    if ref is not None:
        print()
        print_one_process(ref, markdown)
        print(ratio_line(every, ref))


def ratio_line(every: list[dict[str, Any]], ref: dict[str, Any]) -> str:
    """All ranks' peak RSS (and peak growth in the build) against one process's."""
    peak = sum(r["peak_after_search"] for r in every)
    grow = sum(r["peak_after_build"] - r["base_rss"] for r in every)
    one_peak, one_grow = ref["peak_after_search"], ref["peak_after_build"] - ref["base_rss"]
    return (f"# {len(every)} ranks' peak RSS together: {_mib(peak)} MiB = "
            f"{peak / one_peak:.2f}x one process's ({_mib(one_peak)} MiB); "
            f"their peak growth in the build: {_mib(grow)} MiB = "
            f"{grow / one_grow:.2f}x one process's ({_mib(one_grow)} MiB)")


def print_one_process(ref: dict, markdown: bool) -> None:
    """The one-process reference as a table."""
    m = ref["input_edges"]
    rows = [[k + (" (alias)" if k in ref["aliases"] and v == 0 else ""), _mib(v)]
            for k, v in ref["rows"].items()]
    rows += [["= blocks (Graph.nbytes)", _mib(ref["blocks"])],
             ["= blocks + search scratch", _mib(ref.get("engine", ref["blocks"]))],
             ["blocks bytes / input edge", f"{ref['blocks'] / m:.2f}"],
             ["RSS before generation", _mib(ref["base_rss"])],
             ["peak RSS after generation", _mib(ref["peak_after_generation"])],
             ["peak RSS after build", _mib(ref["peak_after_build"])],
             ["peak RSS after search", _mib(ref["peak_after_search"])],
             ["peak RSS growth (generation + build)",
              _mib(ref["peak_after_build"] - ref["base_rss"])]]
    print(f"# one process (spbfs.Graph, local index {ref['index_dtype']})")
    print(format_table(["array (MiB)", "one process"], rows, markdown=markdown))


def main(argv: list[str] | None = None) -> None:
    """Parse the command line and run the distributed or the one-process measurement."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", type=int, default=18)
    ap.add_argument("--edgefactor", type=int, default=16)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--format", choices=("csr", "dcsc"), default="csr")
    ap.add_argument("--grid", default=None, help="RxC (default: the rank count's shape)")
    ap.add_argument("--searches", type=int, default=4,
                    help="searches (sampled roots) before the buffers are counted")
    ap.add_argument("--one-process", action="store_true",
                    help="measure the one-process graph only (no MPI)")
    ap.add_argument("--no-one-process", action="store_true",
                    help="skip the one-process reference (its child process)")
    ap.add_argument("--reference", default=None,
                    help="the one-process numbers from a JSON file of --one-process --json-out")
    ap.add_argument("--render", nargs="+", default=None, metavar="JSON",
                    help="print the tables of earlier --json-out files (no measurement)")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--json-out", default=None, help="also write the numbers as JSON ('-': stdout)")
    args = ap.parse_args(argv)
    if args.render:
        ref = json.loads(Path(args.reference).read_text()) if args.reference else None
        for k, path in enumerate(args.render):
            doc = json.loads(Path(path).read_text())
            if ref is not None:
                doc["one_process"] = ref
            print(("\n" if k else "") + f"## {path}")
            report(doc, args.markdown)
        return
    if args.one_process:
        ref = one_process(args.scale, args.edgefactor, args.seed, args.format)
        if args.json_out == "-":
            print(json.dumps(ref))
            return
        print_one_process(ref, args.markdown)
        if args.json_out:
            Path(args.json_out).write_text(json.dumps(ref, indent=1))
        return
    distributed(args)


if __name__ == "__main__":
    main()
