"""Settings reach the process grid: the wait policy comes with a grid, the abort hook before.

One launch of 2 ranks runs :data:`SCRIPT`, which checks, on every rank, that a
grid's communicators carry the policy of the config it was built with (and
other communicators the default), that a search runs under it, and that
importing :mod:`spbfs.mpi` installed the abort hook.
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
assert ProcessGrid().wait == WaitPolicy()  # Config() reads no environment

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
