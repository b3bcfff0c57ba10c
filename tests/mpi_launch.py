"""Launching MPI jobs from the tests: ``mpiexec -n P python ...`` with a hard timeout.

Shared by the test modules that run scripts under ``mpiexec`` (pytest puts this
folder on ``sys.path``).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: The scripts the MPI tests launch.
SCRIPTS = ROOT / "tests" / "mpi"


def _mpiexec() -> str | None:
    # The mpich wheel installs mpiexec next to the venv's python.
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


@contextmanager
def one_job_at_a_time() -> Iterator[None]:
    """Hold the tests' mpiexec lock: no other job of the tests starts meanwhile.

    The two pytest-xdist workers both launch jobs (the mpiexec files on one, the
    CLI, docs and notebook jobs on the other). Two jobs at once on a 2-core
    machine each wait in every collective for ranks of the other job to be
    scheduled: a three-rank job that takes 8.4 s alone took 24 s beside a
    four-rank one (load 3-6). One after the other they end sooner than
    together; the waiting worker's cores serve the running job meanwhile. The
    lock is an flock on this file, so it is this checkout's (other checkouts
    on the machine are not held) and leaves nothing behind.
    """
    with open(__file__, "rb") as f:
        fcntl.flock(f, fcntl.LOCK_EX)  # released when the file closes, also on an error
        yield


def launch(nranks: int, args: list[str], *, timeout: float = 120.0,
           env: dict[str, str] | None = None) -> tuple[int, str, str, float]:
    """Run ``mpiexec -n nranks python args...``; kill the whole job on timeout.

    Returns (exit status, stdout, stderr, seconds).
    """
    full_env = {**os.environ, **(env or {})}
    full_env["PYTHONPATH"] = str(ROOT) + os.pathsep + full_env.get("PYTHONPATH", "")
    cmd = [MPIEXEC, "-n", str(nranks), sys.executable, *args]
    with one_job_at_a_time():
        # The timeout counts from the start, not from the wait for the lock.
        t0 = time.perf_counter()
        # A new session makes mpiexec and its ranks one process group we can end.
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=full_env, start_new_session=True)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            pytest.fail(f"mpiexec -n {nranks} {' '.join(args)} hung for {timeout:.0f} s\n"
                        f"stdout:\n{out}\nstderr:\n{err}")
        return proc.returncode, out, err, time.perf_counter() - t0


def on_grids(table: dict[int, list[str]]) -> pytest.MarkDecorator:
    """Parametrize a test by ``(nranks, grids)`` from ``{ranks: [grid, ...]}``, ids by ranks."""
    return pytest.mark.parametrize(("nranks", "grids"), list(table.items()),
                                   ids=[str(k) for k in table])
