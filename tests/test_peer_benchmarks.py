"""The pure helpers of the peer benchmarks built from source (``benchmarks/gapbs.py``,
``benchmarks/combblas.py``): GAPBS's graph writer and both programs' output parsers."""

from __future__ import annotations

import importlib.util
import struct
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from spbfs.edges import EdgeList

# --------------------------------------------------------------------------- benchmarks/gapbs.py


def _bench_module(name: str):
    """``benchmarks/<name>.py`` imported as a module (the folder is not a package)."""
    path = Path(__file__).resolve().parents[1] / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"_bench_{name}", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(f"_bench_{name}", mod)
    spec.loader.exec_module(mod)
    return mod


def _gapbs_module():
    return _bench_module("gapbs")


def test_sg_writer_layout(tmp_path):
    """The bytes follow GAPBS's reader.h: bool directed, int64 edges, int64 nodes,
    int64 offsets[n+1], int32 neighbours[edges] (one CSR for an undirected graph)."""
    gap = _gapbs_module()
    el = EdgeList(np.array([0, 0, 1, 3]), np.array([1, 2, 2, 4]), 6, directed=False)
    a = sp.coo_matrix((np.ones(el.num_edges), (el.src, el.dst)), shape=(el.n, el.n)).tocsr()
    a = (a + a.T).tocsr()
    out = tmp_path / "g.sg"
    gap.write_sg(out, a.indptr, a.indices)
    raw = out.read_bytes()
    n, nnz = 6, 8
    assert len(raw) == 1 + 8 + 8 + 8 * (n + 1) + 4 * nnz
    directed, num_edges, num_nodes = struct.unpack_from("<?qq", raw, 0)
    assert (directed, num_edges, num_nodes) == (False, nnz, n)
    offsets = struct.unpack_from(f"<{n + 1}q", raw, 17)
    neigh = struct.unpack_from(f"<{nnz}i", raw, 17 + 8 * (n + 1))
    assert list(offsets) == [0, 2, 4, 6, 7, 8, 8]
    # vertex 0: 1, 2; 1: 0, 2; 2: 0, 1; 3: 4; 4: 3; 5 isolated
    rows = [sorted(neigh[offsets[v]:offsets[v + 1]]) for v in range(n)]
    assert rows == [[1, 2], [0, 2], [0, 1], [4], [3], []]


def test_sg_writer_rejects_bad_csr(tmp_path):
    gap = _gapbs_module()
    with pytest.raises(ValueError, match="indptr"):
        gap.write_sg(tmp_path / "x.sg", np.array([0, 2, 1]), np.array([1, 0], dtype=np.int32))
    with pytest.raises(ValueError, match="indices"):
        gap.write_sg(tmp_path / "x.sg", np.array([0, 1, 2]), np.array([1, 5]))
    with pytest.raises(ValueError, match="indices"):
        gap.write_sg(tmp_path / "x.sg", np.array([0, 1, 3]), np.array([1, 0]))


def test_paused_gapbs_sleeps_before_each_trial_clock():
    gap = _gapbs_module()
    loop = ("  for (int iter=0; iter < cli.num_trials(); iter++) {\n"
            "    trial_timer.Start();\n    auto result = kernel(g);\n    trial_timer.Stop();\n"
            "    if (cli.do_verify()) {\n      trial_timer.Start();\n")
    out = gap.paused_benchmark(loop, 2.5, Path("src/benchmark.h"))
    assert out.startswith("#include <chrono>\n#include <thread>\n")
    sleep = "    std::this_thread::sleep_for(std::chrono::microseconds(2500));\n"
    assert out.count("sleep_for") == 1
    assert sleep + "    trial_timer.Start();\n    auto result = kernel(g);" in out
    assert out.endswith("      trial_timer.Start();\n")  # the verifier's clock: no pause
    with pytest.raises(SystemExit, match=r"src/benchmark\.h: not one trial start"):
        gap.paused_benchmark(loop.replace("kernel(g)", "run(g)"), 2.0, Path("src/benchmark.h"))


def test_parse_gapbs_output():
    gap = _gapbs_module()
    # With -l each trial prints its source first, then its steps.
    text = ("Read Time:           0.01234\n"
            "Graph has 6 nodes and 4 undirected edges for degree: 0\n"
            "Source:                    5\n"
            "   td          2     0.02587\n"
            "Trial Time:          0.00150\n"
            "Verification:           PASS\n"
            "Verification Time:   0.00010\n"
            "Source:                    0\n"
            "Trial Time:          0.00120\n"
            "Average Time:        0.00135\n")
    run = gap.parse_output(text)
    assert run.trial_s == [0.0015, 0.0012]
    assert run.sources == [5, 0]
    assert run.nodes == 6 and run.undirected_edges == 4
    assert run.verified == ["PASS"]
    assert gap.parse_output("Trial Time:          0.00150\n").sources == []
    with pytest.raises(ValueError, match="Trial Time"):
        gap.parse_output("Graph has 6 nodes and 4 undirected edges for degree: 0\n")


# --------------------------------------------------------------------------- benchmarks/combblas.py


def _combblas_module():
    return _bench_module("combblas")


#: Lines of a real ``mpiexec -n 1 dobfs 12`` run (CombBLAS 2381a1f7a028), two searches.
DOBFS_SAMPLE = """\
As a whole: 4096 rows and 4096 columns and 48369 nonzeros
Converted to Boolean and removed 56 loops
As a whole: 3306 rows and 3306 columns and 48369 nonzeros
Symmetricized
Threading activated with 1 threads
As a whole: 3306 rows and 3306 columns and 96738 nonzeros
0.174927 seconds elapsed for Kernel #1
As a whole, Degrees array has length 3306
A BFS iteration is starting
param 3306 vertices with 96738 edges
 5d              0        0.00001
0th starting vertex was 3246
Number iterations: 6
Number of vertices found: 3306
Number of edges traversed: 65536
BFS time: 0.000294586 seconds
MTEPS: 222.468
A BFS iteration is starting
1th starting vertex was 1093
Number iterations: 5
Number of vertices found: 3306
Number of edges traversed: 65536
BFS time: 0.000158575 seconds
MTEPS: 413.277
Finished
"""


def test_parse_dobfs_output():
    cb = _combblas_module()
    run = cb.parse_dobfs(DOBFS_SAMPLE)
    assert run.times == [0.000294586, 0.000158575]
    assert run.traversed == [65536, 65536] and run.found == [3306, 3306]
    # The symmetric matrix searched: the last size line, not the input's.
    assert (run.vertices, run.nnz, run.threads) == (3306, 96738, 1)


def test_parse_dobfs_rejects_broken_output():
    cb = _combblas_module()
    with pytest.raises(ValueError, match="BFS time"):
        cb.parse_dobfs(DOBFS_SAMPLE.split("A BFS iteration")[0])
    with pytest.raises(ValueError, match="one of each per search"):
        cb.parse_dobfs(DOBFS_SAMPLE.replace("Number of vertices found: 3306\n", "", 1))
