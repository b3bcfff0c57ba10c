"""The 2D-distributed BFS: TEPS per grid, time split, words sent against the model.

Launches ``mpiexec -n P python -m spbfs.mpi bench ... --json`` once per
configuration and prints:

1. **TEPS** — Kronecker scale 18 and 20 (edge factor 16) on grids 1×1, 1×2,
   2×1, 2×2 and 4×1 (4 ranks on this 2-core machine are oversubscribed):
   harmonic-mean TEPS, median search time, the per-phase time split, and
   the Graph500 reference MPI code's numbers measured on this machine for
   comparison.
2. **Communication volume** — 64-bit words sent by a top-down-only and a
   bottom-up-only search, against Section 6 of Buluç et al. (2017):
   ``w_t ≈ 4m + n·pr`` (top-down) and ``w_b ≈ n(s_b(pr+pc+1)/64 + 2)``
   (bottom-up, ``s_b`` bottom-up levels).
3. **Memory** — aggregate block bytes per format and grid (csr grows like
   ``O(n·(pr+pc) + m)``, dcsc stays ``O(m)``).

Usage (repository root, venv active)::

    python benchmarks/dist.py                 # the full set (~5-10 minutes)
    python benchmarks/dist.py --quick         # scales 14 and 16, a smoke run
    python benchmarks/dist.py --scales 20 --grids 2x1,2x2 --roots 16

The machine is shared: the load average is printed with the numbers; compare
medians of repeated runs (``--repeat``), never single ones. Repeats run in
rounds (every grid once, then again), and the 4-rank against 2-rank ratios are
also given paired by round, since the machine's speed drifts over minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import mpiexec

ROOT = Path(__file__).resolve().parents[1]

#: Graph500 reference MPI code (top-down, C) measured once on the development machine at scale 20.
REFERENCE_TEPS = {1: 53e6, 2: 57e6}
REFERENCE_NOTE = "reference (Graph500 MPI, top-down): 53 M (1 rank), 57 M (2 ranks), " \
                 "collapses 40-50x on 4 oversubscribed ranks"

TD_PHASES = ("transpose", "expand", "fold")
BU_PHASES = ("transpose", "frontier_gather", "rotate", "parent_updates")


def _load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"


def run(grid: str, scale: int, *, roots: int, fmt: str = "csr", direction: str = "auto",
        validate_roots: int = 2, edgefactor: int = 16, seed: int = 1, timeout: float = 900,
        extra: list[str] | None = None) -> dict:
    """One ``spbfs.mpi bench`` launch; returns its JSON document."""
    pr, pc = (int(x) for x in grid.split("x"))
    with tempfile.TemporaryDirectory() as tmp:
        js = Path(tmp) / "out.json"
        cmd = [mpiexec(), "-n", str(pr * pc), sys.executable, "-m", "spbfs.mpi", "bench",
               "--scale", str(scale), "--edgefactor", str(edgefactor), "--roots", str(roots),
               "--seed", str(seed), "--grid", grid, "--format", fmt, "--direction", direction,
               "--validate-roots", str(validate_roots), "--json", str(js), *(extra or [])]
        path = str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")
        env = {**os.environ, "PYTHONPATH": path}
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                              env=env)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stdout}\n{proc.stderr}")
        doc = json.loads(js.read_text())
    doc["load"] = _load()
    return doc


def _table(rows: list[list[str]], header: list[str], markdown: bool) -> str:
    widths = [max(len(str(r[k])) for r in [header, *rows]) for k in range(len(header))]
    if markdown:
        out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
        out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
        return "\n".join(out)
    fmt = "  ".join(f"{{:>{w}}}" for w in widths)
    return "\n".join([fmt.format(*header), *(fmt.format(*map(str, r)) for r in rows)])


def teps_section(scales: list[int], grids: list[str], roots: int, repeat: int,
                 markdown: bool, extra: list[str] | None = None) -> str:
    phases = ("transpose", "expand", "fold", "frontier_gather", "rotate", "parent_updates",
              "allreduce", "local_topdown", "local_bottomup", "update")
    rows, split_rows = [], []
    best: dict[tuple[int, str], float] = {}
    # Rounds of every grid in turn, not each grid's runs back to back: this
    # machine's speed drifts over minutes, and a ratio of two grids is fair only
    # between runs close in time (the paired ratios below).
    runs: dict[tuple[int, str], list[dict]] = {}
    for _ in range(repeat):
        for scale in scales:
            for grid in grids:
                runs.setdefault((scale, grid), []).append(
                    run(grid, scale, roots=roots, extra=extra))
    for scale in scales:
        for grid in grids:
            docs = runs[(scale, grid)]
            # The run with the median harmonic mean gives every column of its row.
            doc = sorted(docs, key=lambda d: d["teps"]["harmonic_mean"])[len(docs) // 2]
            hmean = doc["teps"]["harmonic_mean"]
            best[(scale, grid)] = hmean
            pr, pc = (int(x) for x in grid.split("x"))
            ranks = pr * pc
            ref = REFERENCE_TEPS.get(ranks) if scale == 20 else None
            rows.append([
                scale, grid, ranks, f"{hmean / 1e6:.0f}",
                f"{doc['time']['median'] * 1e3:.2f}",
                f"{doc['header']['cpu_seconds_per_search'] * 1e3:.1f}",
                f"{doc['header']['cores_busy_during_search']:.2f}",
                f"{doc['header']['construction_time']:.2f}",
                doc["header"].get("pinned_cores", "?"),
                "-" if ref is None else f"{hmean / ref:.1f}x",
                doc["load"],
            ])
            ps = doc["phase_seconds"]
            split_rows.append([scale, grid] + [f"{ps.get(p, 0) * 1e3:.2f}" for p in phases])
    out = [f"## TEPS (harmonic mean over roots; median of {repeat} run(s)); {REFERENCE_NOTE}", "",
           _table(rows, ["scale", "grid", "ranks", "MTEPS", "median ms", "CPU ms",
                         "cores busy", "build s", "pinned", "vs ref", "load"], markdown), "",
           "CPU ms: CPU time of all ranks per bfs call; cores busy = that CPU / the call's "
           "wall time (at most 2 here; waiting ranks yield and sleep instead of spinning).", ""]
    for scale in scales:
        for four_grid in ("2x2", "4x1"):
            four = best.get((scale, four_grid))
            if four is None:
                continue
            for two_grid in ("2x1", "1x2"):
                two = best.get((scale, two_grid))
                if two is None:
                    continue
                # Paired: the two grids' runs of the same round.
                paired = sorted(
                    a["teps"]["harmonic_mean"] / b["teps"]["harmonic_mean"]
                    for a, b in zip(runs[(scale, two_grid)], runs[(scale, four_grid)],
                                    strict=True))
                out.append(f"scale {scale}: 4 oversubscribed ranks ({four_grid}) vs 2 ranks "
                           f"({two_grid}): {two / four:.2f}x slower (medians); paired by "
                           f"round: median {paired[len(paired) // 2]:.2f}x, "
                           f"{paired[0]:.2f}-{paired[-1]:.2f}x")
    out += ["", "## Time split per search (ms, mean over ranks)", "",
            _table(split_rows, ["scale", "grid", *phases], markdown), ""]
    return "\n".join(out)


def volume_section(scale: int, grids: list[str], markdown: bool) -> str:
    """Words per phase against the terms of the model of Buluç et al. (2017), Section 6."""
    rows = []
    for grid in grids:
        pr, pc = (int(x) for x in grid.split("x"))
        for direction in ("top-down", "bottom-up"):
            doc = run(grid, scale, roots=4, direction=direction, validate_roots=0)
            n, m = doc["n"], doc["input_edges"]
            words = doc["phase_words"]
            if direction == "top-down":
                # w_t = 4m + n·pr: the frontier replicated along columns (n·pr,
                # transpose + expand) and both endpoints of every edge seen
                # from both sides (4m, fold).
                terms = [("transpose+expand", words["transpose"] + words["expand"], n * pr),
                         ("fold", words["fold"], 4 * m)]
            else:
                sb = sum(doc["bottomup_levels"]) / len(doc["bottomup_levels"])
                terms = [("transpose", words["transpose"], sb * n / 64),
                         ("frontier_gather", words["frontier_gather"], sb * n * pr / 64),
                         ("rotate", words["rotate"], sb * n * pc / 64),
                         ("parent_updates", words["parent_updates"], 2 * n)]
            total_m = sum(t[1] for t in terms)
            total_w = sum(t[2] for t in terms)
            for name, got, model in terms:
                rows.append([grid, direction, name, f"{got / 1e3:.1f}", f"{model / 1e3:.1f}",
                             f"{got / model:.2f}" if model else "-"])
            rows.append([grid, direction, "total", f"{total_m / 1e3:.1f}",
                         f"{total_w / 1e3:.1f}", f"{total_m / total_w:.2f}"])
    return "\n".join([
        f"## Words sent per search (thousands of 64-bit words, all ranks), Kronecker scale "
        f"{scale}, against Buluç et al. Section 6 (w_t = 4m + n·pr, "
        f"w_b = n(s_b(pr+pc+1)/64 + 2))",
        "",
        _table(rows, ["grid", "direction", "phase", "measured", "model", "ratio"], markdown),
        "",
        "Top-down: each rank sends a child at most once per search (an 'already sent' bitmap "
        "over its row chunk) with its smallest parent, so the fold is bounded by 2n(pc-1) words "
        "instead of 4m; pieces that stay on their rank are not communication. Bottom-up: "
        "bitmaps as in the model; rotations skip the last sub-step (pc-1 per level); parent "
        "updates only for children found by another rank and only for reached vertices "
        "(the model counts 2 words for every vertex).",
        "",
    ])


def memory_section(scale: int, grids: list[str], markdown: bool, edgefactor: int = 16) -> str:
    rows = []
    for grid in grids:
        for fmt in ("csr", "dcsc"):
            doc = run(grid, scale, roots=1, fmt=fmt, validate_roots=0, edgefactor=edgefactor)
            mem = doc["memory"]
            rows.append([grid, fmt, f"{mem['block'] / 2**20:.1f}", f"{mem['tblock'] / 2**20:.1f}",
                         f"{mem['index'] / 2**20:.1f}",
                         f"{(mem['block'] + mem['tblock']) / doc['stored_entries']:.2f}"])
    return "\n".join([
        f"## Aggregate block memory (MiB over all ranks), Kronecker scale {scale}, "
        f"edge factor {edgefactor}", "",
        _table(rows, ["grid", "format", "B", "B^T", "bottom-up index", "bytes/entry"],
               markdown), ""])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scales", default="18,20", help="Kronecker scales (default 18,20)")
    ap.add_argument("--grids", default="1x1,1x2,2x1,2x2,4x1",
                    help="grids (default 1x1,1x2,2x1,2x2,4x1)")
    ap.add_argument("--roots", type=int, default=16, help="roots per run (default 16)")
    ap.add_argument("--repeat", type=int, default=1,
                    help="rounds of every configuration in turn (median)")
    ap.add_argument("--volume-scale", type=int, default=18, help="scale of the volume table")
    ap.add_argument("--quick", action="store_true", help="scales 14,16 and volume at 14")
    ap.add_argument("--skip", default="", help="comma list of sections to skip: "
                                               "teps,volume,memory")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--bench-args", default="",
                    help="more options for every 'spbfs.mpi bench' of the TEPS table, "
                         "e.g. '--bind none'")
    args = ap.parse_args(argv)
    scales = [int(s) for s in args.scales.split(",")]
    vol_scale = args.volume_scale
    if args.quick:
        scales, vol_scale = [14, 16], 14
    grids = args.grids.split(",")
    skip = set(filter(None, args.skip.split(",")))
    print(f"# spbfs.mpi benchmark — {os.cpu_count()} cores, load {_load()}\n")
    if "teps" not in skip:
        print(teps_section(scales, grids, args.roots, args.repeat, args.markdown,
                           shlex.split(args.bench_args)), flush=True)
    if "volume" not in skip:
        print(volume_section(vol_scale, ["1x2", "2x1", "2x2"], args.markdown), flush=True)
    if "memory" not in skip:
        print(memory_section(vol_scale, ["1x1", "1x2", "2x2", "1x4", "4x4"], args.markdown),
              flush=True)
        # Sparser graphs reach the hypersparse regime (fewer entries than
        # columns per block) at fewer ranks, where csr's pointers dominate.
        print(memory_section(vol_scale, ["1x1", "2x2", "4x4", "1x16"], args.markdown,
                             edgefactor=1), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
