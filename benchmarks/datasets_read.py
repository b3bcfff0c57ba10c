"""Reading each bundled data set: its original file against the bundled ``.gz``.

For every graph of :mod:`spbfs.datasets`: the original file's size (the bundled
file decompressed into a temporary folder), the bundled file's size, and the
median milliseconds of 5 reads (after one untimed) of ``spbfs.io.read_graph`` on
each, and of ``gzip.decompress`` alone.

Usage (repository root, venv active)::

    python benchmarks/datasets_read.py
"""

from __future__ import annotations

import gzip
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import format_table, uptime

import spbfs.datasets as d
import spbfs.io


def _ms(f: Callable[[], Any], repeat: int = 5) -> float:
    f()  # warm-up
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return 1e3 * statistics.median(times)


def main() -> None:
    print(uptime())
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for name in d.names():
            gz = d.path(name)
            orig = Path(work) / gz.name.removesuffix(".gz")
            orig.write_bytes(gzip.decompress(gz.read_bytes()))
            a, b = orig.stat().st_size, gz.stat().st_size
            rows.append([name, f"{a:,}", f"{b:,}", f"{b / a:.2f}",
                         f"{_ms(lambda o=orig: spbfs.io.read_graph(o)):.1f}",
                         f"{_ms(lambda g=gz: spbfs.io.read_graph(g)):.1f}",
                         f"{_ms(lambda g=gz: gzip.decompress(g.read_bytes())):.1f}"])
    print(format_table(["data set", "original bytes", "bundled bytes", "ratio",
                        "read original ms", "read .gz ms", "gunzip ms"], rows, markdown=True))
    print(uptime())


if __name__ == "__main__":
    main()
