"""Settings reach the process grid: the wait policy comes with a grid, the abort hook before.

One launch of 2 ranks runs :data:`SCRIPT`, which checks, on every rank, that a
grid's communicators carry the policy of the config it was built with (and
other communicators the default), that a search runs under it, and that
importing :mod:`spbfs.mpi` installed the abort hook. One launch of 1 rank runs
:data:`BACKEND_SCRIPT`: ``backend="cupy"`` on a grid is an error naming the
setting wherever it is given, never a search on the CPU.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mpi_launch import launch, needs_mpi

SCRIPT = '''\
import sys

from mpi4py import MPI

from spbfs import Config, load_config
from spbfs.mpi import DistGraph, ProcessGrid, bfs
from spbfs.mpi import comm as C
from spbfs.mpi.comm import WaitPolicy

# Importing spbfs.mpi installed the hook, before any grid exists.
assert type(sys.excepthook).__name__ == "_AbortHook", sys.excepthook
g = ProcessGrid(config=Config(wait="busy"))
assert g.wait.busy
for comm in (g.comm, g.row_comm, g.col_comm):
    assert C.policy(comm) is g.wait, comm
assert C.policy(MPI.COMM_WORLD) == WaitPolicy() == C.policy()
assert ProcessGrid().wait.busy  # no config: the SPBFS_* environment's (SPBFS_WAIT=busy here)
assert ProcessGrid(config=Config()).wait == WaitPolicy()  # Config() reads no environment

custom = Config(wait="1e-5:1e-3:2e-5:1e-3")
dg = DistGraph.kronecker(6, 8, seed=1, config=custom)
assert C.policy(dg.grid.comm) == WaitPolicy(1e-5, 1e-3, 2e-5, 1e-3), C.policy(dg.grid.comm)
r = bfs(dg, int(dg.sample_roots(1, seed=0)[0]))
r.validate(dg)

# The environment applies through load_config (the launch sets SPBFS_WAIT=busy).
assert C.policy(DistGraph.kronecker(6, 8, seed=1, config=load_config()).grid.comm).busy
print(f"rank {g.rank} SETTINGS OK", flush=True)
'''


@pytest.mark.mpi
@needs_mpi
def test_grid_carries_its_wait_policy_and_the_hook(tmp_path: Path) -> None:
    script = tmp_path / "settings.py"
    script.write_text(SCRIPT, encoding="utf-8")
    rc, out, err, _ = launch(2, [str(script)], timeout=120, env={"SPBFS_WAIT": "busy"})
    assert rc == 0, f"stdout:\n{out}\nstderr:\n{err}"
    assert "rank 0 SETTINGS OK" in out and "rank 1 SETTINGS OK" in out, out


BACKEND_SCRIPT = '''\
import numpy as np

from spbfs import Config
from spbfs.mpi import CollectiveError, DistGraph, bfs


def refused(what, run):
    try:
        run()
    except CollectiveError as exc:
        assert "config 'backend' is 'cupy'" in str(exc) and "numba or numpy" in str(exc), exc
        print(what, "REFUSED", flush=True)
    else:
        raise AssertionError(f"{what}: backend='cupy' ran on a grid")


gpu = Config(backend="cupy")
refused("build", lambda: DistGraph.kronecker(6, 8, seed=1, config=gpu))
g = DistGraph.kronecker(6, 8, seed=1)  # backend "auto": the CPU engine
root = int(g.sample_roots(1, seed=0)[0])
refused("search", lambda: bfs(g, root, config=gpu))
refused("semiring", lambda: bfs(g, root, config=gpu, semiring="plus_times"))
auto = bfs(g, root)
same = bfs(g, root, config=Config(backend="numba"))
assert np.array_equal(auto.levels, same.levels) and np.array_equal(auto.parents, same.parents)
auto.validate(g)
print("BACKEND OK", flush=True)
'''


@pytest.mark.mpi
@needs_mpi
def test_cupy_on_a_grid_is_refused_wherever_it_is_given(tmp_path: Path) -> None:
    script = tmp_path / "backend.py"
    script.write_text(BACKEND_SCRIPT, encoding="utf-8")
    rc, out, err, _ = launch(1, [str(script)], timeout=300)
    assert rc == 0, f"stdout:\n{out}\nstderr:\n{err}"
    for what in ("build", "search", "semiring"):
        assert f"{what} REFUSED" in out, out
    assert "BACKEND OK" in out, out


DECLARED_SCRIPT = '''\
import sys

from spbfs.mpi import CollectiveError, DistGraph

try:
    DistGraph.from_file(sys.argv[1], grid=(2, 1))
except CollectiveError as exc:
    assert "declares 67108864 vertices for 2 edges" in str(exc), exc
    print("REFUSED", flush=True)
'''


@pytest.mark.mpi
@needs_mpi
def test_parallel_reader_refuses_a_declared_size_as_the_serial_one(tmp_path: Path) -> None:
    graph = tmp_path / "big.mtx"
    graph.write_text("%%MatrixMarket matrix coordinate pattern general\n"
                     f"{2**26} {2**26} 2\n1 2\n2 3\n")
    script = tmp_path / "declared.py"
    script.write_text(DECLARED_SCRIPT, encoding="utf-8")
    rc, out, err, _ = launch(2, [str(script), str(graph)], timeout=120)
    assert rc == 0, f"stdout:\n{out}\nstderr:\n{err}"
    assert out.count("REFUSED") == 2, out
