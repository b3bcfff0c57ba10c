#!/usr/bin/env python3
"""One-command set-up and tasks for a fresh machine with only Python 3.11+.

    python3 tasks.py bench [spbfs bench options]   # install, then the Graph500-style benchmark
    python3 tasks.py test  [pytest options]        # install, then lint and the whole test suite
                                                   # (about 14 minutes on 2 shared cores)
    python3 tasks.py docs                          # install, then build the site into site/

Each task creates ``.venv`` beside this file when missing, installs the project
with what the task needs (numpy, scipy, numba, mpi4py and the ``mpich`` wheel:
no system MPI), and runs. Nothing else is assumed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
EXTRAS = {"bench": "plot", "test": "test,plot", "docs": "docs"}
# Measured on a fresh clone on 2 cores (`bash .ci/run`: 13 min 37 s, of it pytest 11:22 and
# the warm-up's compiles 96 s, at load 2-7 from other work; two pytest workers). A warm
# numba cache takes less; a more loaded machine takes longer.
FRESH_TEST_MINUTES = 14


def _run(*cmd: str | os.PathLike[str], **kw: object) -> None:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    subprocess.run([str(c) for c in cmd], check=True, cwd=ROOT, **kw)  # type: ignore[call-overload]


def _install(extras: str) -> None:
    if sys.version_info < (3, 11):  # noqa: UP036 - this file runs before any install
        sys.exit(f"spbfs needs Python 3.11 or newer, this is {sys.version.split()[0]}")
    if not (BIN / "python").exists():
        venv.EnvBuilder(with_pip=True).create(VENV)
    py = BIN / "python"
    stamp = VENV / f".installed-{extras.replace(',', '-')}"
    reqs = ROOT / "pyproject.toml"
    if stamp.exists() and stamp.stat().st_mtime >= reqs.stat().st_mtime:
        return
    _run(py, "-m", "pip", "install", "--quiet", "--upgrade", "pip")
    _run(py, "-m", "pip", "install", "--quiet", "-e", f".[{extras}]")
    stamp.touch()


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in EXTRAS:
        print(__doc__)
        return 2
    task, rest = argv[0], argv[1:]
    _install(EXTRAS[task])
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    try:
        if task == "bench":
            _run(BIN / "spbfs", "bench", *rest, env=env)
        elif task == "test":
            _run(BIN / "python", "-m", "ruff", "check", ".", env=env)
            if not rest:
                print(f"the whole suite takes about {FRESH_TEST_MINUTES} minutes on its first run "
                      "on 2 cores (it compiles the kernels; less afterwards, longer under "
                      "load), on two workers: the seconds of each test file at the end",
                      flush=True)
            # Two workers (pyproject.toml); the seconds of each file come at the end.
            _run(BIN / "python", "-m", "pytest", *rest, env=env)
        elif task == "docs":
            _run(BIN / "python", ROOT / "docs" / "figures.py", "--out", ROOT / "docs" / "figures",
                 env=env)
            _run(BIN / "python", "-m", "mkdocs", "build", "--strict", *rest, env=env)
    except subprocess.CalledProcessError as exc:
        return exc.returncode or 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
