"""Launching MPI jobs from the tests: ``mpiexec -n P python ...`` with a hard timeout.

Shared by the test modules that run scripts under ``mpiexec`` (pytest puts this
folder on ``sys.path``).
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
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


def have_mpi4py() -> bool:
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return False
    return True


MPIEXEC = _mpiexec()
needs_mpi = pytest.mark.skipif(MPIEXEC is None or not have_mpi4py(),
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


#: The jobs that the tests of several files share (:class:`SharedJobs`): ranks -> the
#: parts, in order, each (case script, its arguments, seconds it may take). A part runs
#: on the first ranks of the job as in a launch of its own (case_runner.sub_grid,
#: each_first_ranks).
SHARED: dict[int, tuple[tuple[str, tuple[str, ...], float], ...]] = {
    # test_mpi (first: it checks where the ranks' first graph pins them), test_mpi_semiring:
    # one row or column, and the 1x1 of the search on one process; test_mpi's 2 x 1
    # top-down counts.
    2: (("dist_cases.py", ("1x1", "1x2", "2x1"), 300),
        ("semiring_cases.py", ("1x1", "1x2", "2x1"), 300),
        ("duo_cases.py", (), 170)),
    # The square 2x2 and three ranks along a row or a column of a grid that has both
    # (2x3, 3x2: 1x3 and 3x1 run no path these do not); test_mpi_validate's 2x2 and 3x2.
    6: (("dist_cases.py", ("2x2", "2x3", "3x2"), 300),
        ("semiring_cases.py", ("2x2", "2x3", "3x2"), 300),
        ("validate_cases.py", ("2x2", "3x2"), 300)),
    # test_mpi_exchange: rows and columns of 1, 2, 3 and 4 ranks (1x3 and 3x1 add no
    # pattern that 2x3, 3x2 and 3x3, three ranks a row or column, and 1x4, 4x1, one row
    # or column, do not run); its grown receives on the first 2, 3 and 4 ranks;
    # test_butterfly: worlds of 1 to 9 ranks.
    4: (("exchange_cases.py", ("1x1", "1x2", "2x1", "2x2", "1x4", "4x1"), 600),
        ("grown_cases.py", ("2", "3", "4"), 180),
        ("butterfly_cases.py", ("1", "2", "3", "4"), 300)),
    9: (("exchange_cases.py", ("2x3", "3x2", "3x3"), 600),
        ("butterfly_cases.py", ("5", "6", "7", "8", "9"), 300)),
}


def shared_args(script: str) -> dict[int, list[str]]:
    """``{ranks: arguments}`` of the parts of :data:`SHARED` that run ``script``."""
    return {nranks: list(args) for nranks, parts in SHARED.items()
            for name, args, _ in parts if name == script}


class SharedJobs:
    """One launch of ``tests/mpi/jobs.py`` per job of :data:`SHARED`, when a test first
    asks for one of its parts; the tests of the other parts read the same job.

    Parameters
    ----------
    folder : callable
        Makes a new empty folder (``tmp_path_factory.mktemp``): each job's
        ``XDG_CACHE_HOME``, where the exchange cases cache the link they measure.
    """

    def __init__(self, folder: Callable[[str], Path]) -> None:
        self._folder = folder
        self._jobs: dict[int, tuple[int, str, str]] = {}

    def part(self, nranks: int, script: str, args: list[str],
             timeout: float = 300.0) -> tuple[bool, str, str]:
        """(whether the part ran to its end, its stdout, the job's stderr).

        A part that no job of :data:`SHARED` holds runs in a launch of its own
        (``timeout``: its seconds).
        """
        parts = SHARED.get(nranks, ())
        try:
            k = [(name, list(a)) for name, a, _ in parts].index((script, args))
        except ValueError:
            rc, out, err, _ = launch(nranks, [str(SCRIPTS / script), *args], timeout=timeout)
            return rc == 0, out, err
        if nranks not in self._jobs:
            words = [w for j, (name, a, _) in enumerate(parts)
                     for w in ([":::"] if j else []) + [name, *a]]
            rc, out, err, _ = launch(nranks, [str(SCRIPTS / "jobs.py"), *words],
                                     timeout=sum(t for _, _, t in parts),
                                     env={"XDG_CACHE_HOME": str(self._folder("cache"))})
            self._jobs[nranks] = (rc, out, err)
        rc, out, err = self._jobs[nranks]
        outs = re.split(r"^=== part \d+ \S+\n", out, flags=re.M)[1:]
        # The part ended when the next one began; the last one, when the job did.
        ended = len(outs) > k + 1 or (len(outs) == k + 1 and rc == 0)
        return ended, outs[k] if len(outs) > k else "", err
