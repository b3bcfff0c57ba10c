"""A failing rank never hangs a user's own script.

A plain script (no ``install_excepthook`` call, no ``python -m mpi4py``) builds a
:class:`~spbfs.mpi.DistGraph`, then raises on rank 1 while the other ranks wait
for it in a barrier. Importing :mod:`spbfs.mpi` installed the abort hook, so the
job must end with a non-zero status and rank 1's message; without the hook rank
0 waits for ever and :func:`mpi_launch.launch` fails the test at its timeout.
The scripts of ``tests/mpi/user_scripts.py`` do the same before a grid exists,
end one rank with ``sys.exit``, and pass bad or differing arguments to a search.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from mpi_launch import ROOT, SCRIPTS, launch, needs_mpi

TIMEOUT_S = 60

SCRIPT = '''\
from spbfs.mpi import DistGraph
from spbfs.mpi import comm as C

g = DistGraph.kronecker(6, 8, seed=1)
if g.grid.rank == 1:
    raise RuntimeError("user error on rank 1")
C.wait_barrier(g.grid.comm)  # every other rank waits here for rank 1
print(f"rank {g.grid.rank} passed the barrier", flush=True)
'''


@pytest.mark.mpi
@needs_mpi
@pytest.mark.parametrize("nranks", [2, 4])
def test_failing_rank_aborts_a_plain_script(nranks: int, tmp_path: Path) -> None:
    script = tmp_path / "user_script.py"
    script.write_text(SCRIPT, encoding="utf-8")
    # launch() kills the job and fails the test if it is still running at TIMEOUT_S.
    rc, out, err, _ = launch(nranks, [str(script)], timeout=TIMEOUT_S)
    assert rc != 0, f"stdout:\n{out}\nstderr:\n{err}"
    assert "rank 1: Error: user error on rank 1" in err, err
    # A script's user wants to know where it failed: the traceback comes first.
    assert "Traceback" in err and 'raise RuntimeError("user error on rank 1")' in err, err
    assert "passed the barrier" not in out, out


@pytest.mark.mpi
@needs_mpi
def test_lone_rank_exits_without_abort(tmp_path: Path) -> None:
    """One rank has nobody waiting on it: Python's usual exit, status 1, no MPI_Abort."""
    script = tmp_path / "user_script.py"
    script.write_text(SCRIPT.replace("g.grid.rank == 1", "g.grid.rank == 0"), encoding="utf-8")
    rc, out, err, _ = launch(1, [str(script)], timeout=TIMEOUT_S)
    assert rc == 1, f"stdout:\n{out}\nstderr:\n{err}"
    assert "rank 0: Error: user error on rank 1" in err and "Traceback" in err, err
    assert "MPI_Abort" not in err, err


CHECKS = '''\
import sys

import spbfs.mpi
from spbfs.mpi import install_excepthook

# Importing spbfs.mpi installs the hook but does not start MPI.
assert "mpi4py.MPI" not in sys.modules, "import spbfs.mpi initialized MPI"
assert type(sys.excepthook).__name__ == "_AbortHook", sys.excepthook
assert sys.excepthook.previous is sys.__excepthook__

seen = []
sys.excepthook = lambda *exc: seen.append(exc[1])
install_excepthook()
hook = sys.excepthook
assert hook.previous is not sys.__excepthook__, "the user's hook was not chained"
install_excepthook(show_traceback=False)
assert sys.excepthook is hook, "a second call installed a second hook"
assert not hook.show_traceback
install_excepthook()
assert hook.show_traceback is False, "a call without the flag changed it"

# Without MPI the hook hands the exception on (and does not start MPI to find a rank).
err = ValueError("no MPI here")
hook(ValueError, err, None)
assert seen == [err], seen
assert "mpi4py.MPI" not in sys.modules
print("CHECKS OK")
'''


def test_install_excepthook_is_idempotent_and_lazy() -> None:
    p = subprocess.run([sys.executable, "-c", CHECKS], capture_output=True, text=True,
                       cwd=ROOT, timeout=120,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert p.returncode == 0, p.stderr
    assert "CHECKS OK" in p.stdout


ENDED = "ended its script (sys.exit or its last line)"
#: case of user_scripts.py -> (status is zero, text on stderr)
USER_CASES = {
    "raise_before": (False, "rank 1: Error: user error on rank 1 before the grid"),
    "exit0": (False, "but rank 1 " + ENDED),
    "exit3": (False, "but rank 1 " + ENDED),
    "exit0_grid": (False, "but rank 1 " + ENDED),
    "arguments": (True, ""),
    "all_exit": (True, ""),
}


@pytest.mark.mpi
@needs_mpi
@pytest.mark.parametrize(("case", "nranks"), [(c, 4) for c in USER_CASES if c != "exit0"]
                         + [("exit0", 2), ("arguments", 2)])
def test_user_script_ends(case: str, nranks: int) -> None:
    """Every job ends (launch() fails the test at its timeout), with the right status."""
    zero, text = USER_CASES[case]
    rc, out, err, _ = launch(nranks, [str(SCRIPTS / "user_scripts.py"), case],
                             timeout=TIMEOUT_S)
    assert (rc == 0) == zero, f"status {rc}\nstdout:\n{out}\nstderr:\n{err}"
    assert text in err, err
    if case == "all_exit":
        assert all(f"rank {r} done" in out for r in range(nranks)), out
    if case == "arguments":
        # Every rank caught every error, then searched again with the others.
        for problem in ("source=69 is out of range for a graph with 64 vertices",
                        "ranks pass different source (0 to 1) to a collective call",
                        "ranks pass different max_depth (1 to 3) to a collective call",
                        "ranks pass different config to a collective call"):
            for r in range(nranks):
                assert f"rank {r} caught: {problem}" in out, out
        assert "was not stopped" not in out, out
        again = re.findall(r"rank \d+ searched again: reached (\d+)", out)
        assert len(again) == 4 * nranks and len(set(again)) == 1, out


WATCHDOG = """\
import math
import re
import time

from spbfs.mpi.comm import WaitPolicy, WaitTimeout

for policy, bulk in ((WaitPolicy(watchdog=0.3), False), (WaitPolicy(watchdog=0.3), True),
                     (WaitPolicy(busy=True, watchdog=0.3), False)):
    t0 = time.perf_counter()
    try:
        policy.poll(lambda: False, bulk)
    except WaitTimeout as exc:
        assert re.search(r"rank 0 waited \\d+\\.\\d s for a message or collective", str(exc)), exc
        assert "WaitPolicy.watchdog = 0.3 s" in str(exc), exc
    else:
        raise AssertionError("a wait that never completes returned")
    assert 0.3 <= time.perf_counter() - t0 < 60
calls = []
WaitPolicy(watchdog=math.inf).poll(lambda: calls.append(1) or len(calls) > 3)
print("WATCHDOG OK")
"""


def test_every_wait_has_a_watchdog() -> None:
    """A wait that never completes raises WaitTimeout (sleeping, bulk and busy waits)."""
    p = subprocess.run([sys.executable, "-c", WATCHDOG], capture_output=True, text=True,
                       cwd=ROOT, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert p.returncode == 0, p.stderr
    assert "WATCHDOG OK" in p.stdout
