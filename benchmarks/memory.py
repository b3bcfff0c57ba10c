"""Peak memory of the one-process Graph500 benchmark, per input edge, before and after.

Runs ``python -m spbfs bench --scale S`` in a child process for every scale and
every source tree given, and reads the child's peak resident set size from the
kernel (``wait4``'s ``ru_maxrss``), so that the number covers the whole run:
generation, construction, the searches and their validation. From the
command's own output it takes ``construction_time`` (and ``graph_generation``),
``bytes_per_edge`` (the graph's blocks over input edges) and the harmonic-mean
TEPS. Each tree first runs a scale-10 bench, so that numba's compiled kernels
are cached and compiling them is counted in no build time.

Usage (repository root)::

    python benchmarks/memory.py --scales 20 22 --roots 16
    python benchmarks/memory.py --scales 20 22 24 --tree before=/tmp/base --tree after=.
    python benchmarks/memory.py --scales 26 --roots 8 --markdown
    python benchmarks/memory.py --scales 20 --rounds 3 --tree before=/tmp/base --tree after=.

A scale whose run fails (out of memory: the kernel kills the child) is shown
as such, with the peak it reached. Memory, not time, is the measurement here;
build seconds are noisy on a shared machine (the load average is printed).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks._common import format_table, load_average, machine_line  # noqa: E402

_FIELDS = {
    "construction_time": "build_s",
    "graph_generation": "gen_s",
    "bytes_per_edge": "graph_bpe",
    "peak_bytes_per_edge": "reported_peak_bpe",
    "bfs  harmonic_mean_TEPS": "teps",
}


def run_bench(tree: Path, scale: int, roots: int, extra: list[str]) -> dict[str, Any]:
    """One ``spbfs bench`` in a child process; its fields and its peak RSS.

    Parameters
    ----------
    tree : Path
        Source tree whose ``spbfs`` runs (put first on ``PYTHONPATH``).
    scale, roots : int
        ``--scale`` and ``--roots``.
    extra : list of str
        More ``spbfs bench`` options.

    Returns
    -------
    dict
        ``peak_bytes`` (the child's ``ru_maxrss``), ``wall_s``, ``rc`` and the
        parsed output fields (``build_s``, ``gen_s``, ``graph_bpe``, ``teps``).
    """
    env = dict(os.environ, PYTHONPATH=str(tree))
    cmd = [sys.executable, "-m", "spbfs", "bench", "--scale", str(scale), "--roots",
           str(roots), *extra]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=str(tree), env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    out, err = proc.communicate()
    wall = time.perf_counter() - t0
    rec: dict[str, Any] = {"rc": proc.returncode, "wall_s": wall, "stderr": err[-400:]}
    for line in out.splitlines():
        key, _, value = line.partition(":")
        name = _FIELDS.get(key.strip())
        if name:
            try:
                rec[name] = float(value.strip())
            except ValueError:
                rec[name] = value.strip()
    return rec


def _run_measured(tree: Path, scale: int, roots: int, extra: list[str]) -> dict[str, Any]:
    """:func:`run_bench` in a forked child of its own, so ``ru_maxrss`` is this run's."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: run the bench, send the record back, leave at once
        os.close(r)
        try:
            import json

            rec = run_bench(tree, scale, roots, extra)
            import resource

            rec["peak_bytes"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
            os.write(w, json.dumps(rec).encode())
        finally:
            os._exit(0)
    os.close(w)
    chunks = []
    while True:
        b = os.read(r, 1 << 16)
        if not b:
            break
        chunks.append(b)
    os.close(r)
    os.waitpid(pid, 0)
    import json

    return json.loads(b"".join(chunks).decode())


def main(argv: list[str] | None = None) -> int:
    """Run the table."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scales", type=int, nargs="+", default=[18, 20])
    ap.add_argument("--roots", type=int, default=16)
    ap.add_argument("--edgefactor", type=int, default=16)
    ap.add_argument("--tree", action="append", default=[],
                    help="NAME=PATH of a source tree to measure (default: this one)")
    ap.add_argument("--rounds", type=int, default=1,
                    help="runs per scale and tree, interleaved (tree A, tree B, A, B, ...); "
                         "the table shows medians")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("extra", nargs="*", help="more spbfs bench options (after --)")
    args = ap.parse_args(argv)
    trees = [t.split("=", 1) for t in args.tree] or [["this", str(ROOT)]]
    extra = ["--edgefactor", str(args.edgefactor), *args.extra]
    print(machine_line())
    for _name, path in trees:  # numba's cache, so no build time holds a compile
        _run_measured(Path(path), 10, 2, extra)
    rows = []
    for scale in args.scales:
        m = args.edgefactor << scale
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in trees}
        for _ in range(args.rounds):
            for name, path in trees:
                rec = _run_measured(Path(path), scale, args.roots, extra)
                runs[name].append(rec)
                print(f"scale {scale} {name}: rc {rec['rc']}, build {rec.get('build_s')} s, "
                      f"peak {rec['peak_bytes'] / 2**30:.2f} GiB, load {load_average()}",
                      flush=True)
                if rec["rc"] != 0:
                    print(rec["stderr"], file=sys.stderr)
        for name, _ in trees:
            recs = runs[name]
            ok = all(r["rc"] == 0 for r in recs)

            def med(key: str, recs: list[dict[str, Any]] = recs) -> float:
                return float(np.median([r.get(key, float("nan")) for r in recs]))

            peak = max(r["peak_bytes"] for r in recs)
            rows.append([
                scale, name,
                f"{med('build_s'):.2f}" if ok else "failed",
                f"{med('gen_s'):.2f}" if ok else "",
                f"{med('graph_bpe'):.2f}" if ok else "",
                f"{peak / m:.2f}", f"{peak / 2**30:.2f}",
                f"{med('teps'):.3g}" if ok else f"rc {recs[0]['rc']}",
                f"{med('wall_s'):.0f}",
            ])
    headers = ["scale", "tree", "build s", "generate s", "graph B/edge", "peak B/edge",
               "peak GiB", "TEPS (hmean)", "wall s"]
    print(format_table(headers, rows, markdown=args.markdown))
    print(f"load average after: {load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
