"""One table of a GPU machine's run: the one-GPU search and the grid on the GPU.

``benchmarks/device.sh gpu`` writes ``gpu.json`` (``benchmarks/gpu.py``: the
one-GPU CUDA search per graph, parents compared with the CPU's root by root)
and ``grid_<scale>.json`` files (``spbfs bench --grid … --backend cupy --json``:
the grid on the GPU, every tree validated by the Graph500 rules) into one
folder; this prints them as one markdown table::

    python benchmarks/device_table.py OUT_DIR

Rows: engine, graph, harmonic-mean TEPS over roots, median search time, and
whether the trees were checked (``same`` as the CPU's parents, or the number of
validated roots).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np


def _hmean(xs: list[float]) -> float:
    a = np.asarray(xs, dtype=float)
    return float(a.size / np.sum(1.0 / a)) if a.size and (a > 0).all() else float("nan")


def one_gpu_rows(doc: dict[str, Any]) -> list[list[str]]:
    """Rows of ``benchmarks/gpu.py --json``'s document."""
    device = doc.get("device", "GPU")
    rows = []
    for rec in doc.get("graphs", []):
        rows.append([f"1 {device}", rec["graph"], f"{_hmean(rec['gpu_teps']) / 1e9:.3f}",
                     f"{np.median(rec['gpu_seconds']) * 1e3:.2f}",
                     "same as CPU" if all(rec["parents_match"]) else "PARENTS DIFFER"])
    return rows


def grid_row(doc: dict[str, Any]) -> list[str]:
    """A row of ``spbfs bench --grid … --json``'s document."""
    h = doc["header"]
    nval = int(np.isfinite(np.asarray(doc["validate_times"], dtype=float)).sum())
    return [f"grid {h['grid']}, {h['num_mpi_processes']} ranks, {h['backend']}",
            f"kron{h['SCALE']}-ef{h['edgefactor']}",
            f"{doc['teps']['harmonic_mean'] / 1e9:.3f}", f"{doc['time']['median'] * 1e3:.2f}",
            f"{nval} of {len(doc['roots'])} validated"]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("folder", type=Path)
    args = p.parse_args(argv)
    rows: list[list[str]] = []
    one = args.folder / "gpu.json"
    if one.exists():
        rows += one_gpu_rows(json.loads(one.read_text()))
    for path in sorted(args.folder.glob("grid_*.json")):
        rows.append(grid_row(json.loads(path.read_text())))
    if not rows:
        raise SystemExit(f"device_table.py: no gpu.json or grid_*.json in {args.folder}")
    print("| engine | graph | GTEPS (hmean) | median ms | trees |")
    print("|---|---|--:|--:|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
