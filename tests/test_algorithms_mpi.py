"""Tests of the distributed algorithms (:mod:`spbfs.algorithms.distributed`) under mpiexec.

Each launch runs ``tests/mpi/algorithms_cases.py`` on one or two grid shapes:
PageRank, connected components, SSSP, multi-source BFS and betweenness on
several small graphs and both formats, every result compared on rank 0 with
the one-process function and with scipy / networkx, plus bad input that must
raise the same error on every rank. The job is killed (whole process group)
if it hangs.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "tests" / "mpi" / "algorithms_cases.py"


def _mpiexec() -> str | None:
    here = str(Path(sys.executable).parent)
    return shutil.which("mpiexec", path=here + os.pathsep + os.environ.get("PATH", ""))


def _have_mpi4py() -> bool:
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return False
    return True


MPIEXEC = _mpiexec()
needs_mpi = pytest.mark.skipif(MPIEXEC is None or not _have_mpi4py(),
                               reason="needs mpiexec and mpi4py")


def launch(nranks: int, args: list[str], *, timeout: float) -> tuple[int, str, str, float]:
    """Run ``mpiexec -n nranks python args...``; kill the whole job on timeout."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [MPIEXEC, "-n", str(nranks), sys.executable, *args]
    t0 = time.perf_counter()
    # A new session makes mpiexec and its ranks one process group we can end.
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"mpiexec -n {nranks} {' '.join(args)} hung for {timeout:.0f} s\n"
                    f"stdout:\n{out}\nstderr:\n{err}")
    return proc.returncode, out, err, time.perf_counter() - t0


@pytest.mark.mpi
@needs_mpi
@pytest.mark.parametrize(
    ("nranks", "grids"),
    [(1, ["1x1"]), (2, ["1x2", "2x1"]), (4, ["2x2"])],
    ids=["1", "2", "4"],
)
def test_distributed_algorithms_match_serial(nranks: int, grids: list[str]) -> None:
    """Gathered results equal the one-process functions and scipy / networkx on every grid."""
    rc, out, err, _ = launch(nranks, [str(SCRIPT), *grids], timeout=120)
    assert rc == 0, f"stdout:\n{out}\nstderr:\n{err}"
    assert "ALL OK" in out, out
