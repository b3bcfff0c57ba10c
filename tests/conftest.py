"""Shared fixtures: the bundled data files, backends, formats."""

from __future__ import annotations

import ast
import functools
import gzip
import os
import shutil
import signal
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from mpi_launch import MPIEXEC, SharedJobs, have_mpi4py

import semirings._build
import semirings.backend
import semirings.kernels
from semirings.backend import gpu_available
from spbfs import _compile, datasets

ROOT = Path(__file__).resolve().parents[1]


def originals_dir() -> Path | None:
    """The folder of the published originals of the bundled files, when this machine has one.

    ``$SPBFS_DATA`` when set, else ``../shared/data`` beside the checkout. Only
    tests/test_datasets.py uses it, to compare the bundled copies with the originals;
    every other test reads the bundled data.
    """
    env = os.environ.get("SPBFS_DATA")
    d = Path(env) if env else ROOT.parent / "shared" / "data"
    return d if d.is_dir() else None

CPU_BACKENDS = ["numba", "numpy"]
BACKENDS = [*CPU_BACKENDS, pytest.param("cupy", marks=pytest.mark.gpu)]
FORMATS = ["csr", "dcsc"]
DIRECTIONS = ["auto", "top-down", "bottom-up"]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if hasattr(config, "workerinput"):
        # The controller hands the workers whole files in this order (_Schedule).
        items.sort(key=lambda item: _unit_rank(item.nodeid))
    if gpu_available():
        return
    skip = pytest.mark.skip(reason="no usable GPU (cupy backend)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def mpiexec_file(nodeid: str) -> bool:
    """Whether a test belongs to a file of jobs under mpiexec (by the file's name)."""
    name = nodeid.split("::", 1)[0].rsplit("/", 1)[-1]
    return "mpi" in name or "butterfly" in name


@functools.cache
def _marked_mpi(path: str) -> frozenset[str]:
    """The test functions of the file ``path`` (relative to the checkout) marked ``mpi``.

    Read from the file's syntax tree: the controller of pytest-xdist schedules by
    test ids alone, before any worker has imported the file.
    """
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    return frozenset(
        node.name for node in tree.body
        if isinstance(node, ast.FunctionDef)
        and any(isinstance(d, ast.Attribute) and d.attr == "mpi" for d in node.decorator_list))


def launches_jobs(nodeid: str) -> bool:
    """Whether a test is a job test of an mpiexec file: marked ``mpi`` (it starts jobs)."""
    if not mpiexec_file(nodeid):
        return False
    path, _, rest = nodeid.partition("::")
    return rest.split("[", 1)[0] in _marked_mpi(path)


#: The longest work units of _Schedule, longest first (seconds summed per unit in a whole
#: run on a warm cache, two workers on 2 cores, load 4-5: the mpiexec jobs 585, test_docs
#: 126, test_kernels 96, test_notebooks 86, test_algorithms 36, test_numba_engine 35,
#: test_bfs 21, test_cli 18, test_nxbackend 17, test_warmup 16, test_gpu 15, test_mpi's
#: tests in this process 14). The workers take these first, so the many short files come
#: last and even out the two workers' ends; the rest keep their order.
_LONGEST_FIRST = ("mpiexec", "tests/test_docs.py", "tests/test_kernels.py",
                  "tests/test_notebooks.py", "tests/test_algorithms.py",
                  "tests/test_numba_engine.py", "tests/test_bfs.py", "tests/test_cli.py",
                  "tests/test_nxbackend.py", "tests/test_warmup.py", "tests/test_gpu.py",
                  "tests/test_mpi.py")


def _unit(nodeid: str) -> str:
    """The work unit of a test: "mpiexec" for the job tests (:func:`launches_jobs`), else
    its file (the tests of an mpiexec file that start no job are a unit of their own)."""
    return "mpiexec" if launches_jobs(nodeid) else nodeid.split("::", 1)[0]


def _unit_rank(nodeid: str) -> int:
    unit = _unit(nodeid)
    return _LONGEST_FIRST.index(unit) if unit in _LONGEST_FIRST else len(_LONGEST_FIRST)


def pytest_configure(config: pytest.Config) -> None:
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_Schedule(), "spbfs-schedule")


#: :func:`spbfs.warmup`'s steps and the grid step in two processes, one a core, about even
#: on a cold cache (the search kernel's dcsc and csr forms are the two largest
#: compilations; the grid step follows the algorithms, whose kernels it loads).
_WARM_STEPS = (("bfs, dcsc", "algorithms", "grid"),
               ("bfs, csr", "generate, build, validate", "csgraph", "networkx backend"))
#: The grid step (not in :func:`spbfs.warmup`, which warms one process) runs the grid
#: code on a grid of this one process (MPI's singleton start, no mpiexec): the build,
#: the searches, their checks and the distributed algorithms. Without it every rank of
#: the first jobs of test_docs and test_cli, which run beside the mpiexec files, would
#: compile these kernels at once, each for itself (what only runs between ranks:
#: :data:`_PAIR_STEP`). Measured on a cold cache
#: at load 2-3: the step takes 26 s of one core; the first four-rank job after the
#: warm-up (``spbfs.mpi bench --scale 10 --grid 2x2``) then takes 22 s (33 s of CPU)
#: instead of 43 s (76 s of CPU).
_WARM_CODE = """
import sys

import numpy as np

from spbfs import Config
from spbfs._compile import quiet_notice
from spbfs.warmup import _steps


def grid(shape=None):
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return  # no grid tests run either (mpi_launch.needs_mpi)
    from spbfs.algorithms import distributed as D
    from spbfs.generators import kronecker
    from spbfs.mpi import DistGraph, bfs

    edges = kronecker(7, 8, seed=1)
    for fmt in ("dcsc", "csr"):
        for directed in (False, True):
            g = DistGraph.from_edges(edges.src, edges.dst, edges.n, directed=directed,
                                     grid=shape, config=Config(format=fmt))
            root = int(np.argmax(np.bincount(edges.src, minlength=edges.n)))
            for direction in ("auto", "top-down", "bottom-up"):
                r = bfs(g, root, direction=direction)
                r.validate(g)
                r.gather()
            D.dist_connected_components(g).gather()
            D.dist_multi_source_bfs(g, [0, root]).gather()
            if not directed:
                D.dist_sssp(g, root).gather()
                D.dist_pagerank(g).gather()
                D.dist_betweenness_centrality(g, k=4, seed=1).gather()
                D.dist_triangle_count(g).gather()


def pair():
    import shutil
    import tempfile
    from pathlib import Path

    from mpi4py import MPI

    from spbfs.mpi.read import read_edges

    comm = MPI.COMM_WORLD
    tmp = Path(comm.bcast(tempfile.mkdtemp() if comm.rank == 0 else None))
    if comm.rank == 0:
        (tmp / "edges.txt").write_text("0 1\\n1 2\\n2 3\\n")
    comm.Barrier()
    try:
        read_edges(comm, str(tmp / "edges.txt"))
    finally:
        comm.Barrier()
        if comm.rank == 0:
            shutil.rmtree(tmp)
    for shape in ((1, 2), (2, 1)):
        grid(shape)


steps = {**dict(_steps()), "grid": grid, "pair": pair}
with quiet_notice():
    for label in sys.argv[1:]:
        steps[label]()
"""
#: After those, on two ranks of one job (where mpiexec and mpi4py are there): what only
#: runs between ranks (the fold's pair kernels, a row's bottom-up sub-steps, the 2 x 1
#: grid's own top-down, the parallel reader's scanner), which every rank of the first
#: job to need it otherwise compiled for itself at once. Measured on a cold cache after
#: the steps above (load 1-2): the step takes 37 s (69 s of CPU); the six-rank job of
#: test_algorithms_mpi then takes 49 s instead of 73 s (26 s on a warm cache).
_PAIR_STEP = ("pair",)
#: A warm-up that takes longer is ended; the tests then compile what it left.
_WARM_TIMEOUT_S = 900


def pytest_sessionstart(session: pytest.Session) -> None:
    """On a cold numba cache, compile the kernels most tests share once, before the workers.

    Without it, both workers and the first process of the mpiexec jobs compile
    the same large kernels (the search loop, minutes on a loaded machine) at
    the same time, each for itself: numba's cache serves only what is written
    already. Two processes compile :data:`_WARM_STEPS` into the cache, one a
    core, then a job of two ranks :data:`_PAIR_STEP`; every test process then
    loads them. Nothing here decides a result:
    a failed or ended warm-up leaves the compiling to the tests, as before.
    """
    config = session.config
    if hasattr(config, "workerinput") or getattr(config.option, "dist", "no") == "no":
        return
    from spbfs.kernels import bfs_numba

    if _compile.ready(bfs_numba.search_levels):
        return  # a warm cache: the workers load the kernels themselves
    import subprocess
    import sys
    import tempfile
    import time

    env = {**os.environ,
           "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))}
    t0 = time.perf_counter()

    def start(cmd: list[str], labels: tuple[str, ...], log: Any) -> subprocess.Popen[bytes]:
        # A session of its own: a step that overruns ends with every process it started.
        return subprocess.Popen([*cmd, "-c", _WARM_CODE, *labels], env=env, cwd=ROOT,
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=log, start_new_session=True)

    def finish(labels: tuple[str, ...], proc: subprocess.Popen[bytes], log: Any) -> None:
        try:
            proc.wait(timeout=max(1.0, _WARM_TIMEOUT_S - (time.perf_counter() - t0)))
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        if proc.returncode != 0:
            log.seek(0)
            last = (log.read().decode(errors="replace").strip().splitlines() or ["killed"])[-1]
            failed.append(f"{', '.join(labels)}: exit {proc.returncode}: {last}")
        log.close()

    failed: list[str] = []
    logs = [tempfile.TemporaryFile() for _ in _WARM_STEPS]
    procs = [start([sys.executable], labels, log)
             for labels, log in zip(_WARM_STEPS, logs, strict=True)]
    for labels, proc, log in zip(_WARM_STEPS, procs, logs, strict=True):
        finish(labels, proc, log)
    if MPIEXEC is not None and have_mpi4py():
        log = tempfile.TemporaryFile()
        finish(_PAIR_STEP, start([MPIEXEC, "-n", "2", sys.executable], _PAIR_STEP, log), log)
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(f"numba's cache warmed for the workers in "
                            f"{time.perf_counter() - t0:.0f} s")
        for line in failed:  # the tests compile what it left; this says why it is slow
            reporter.write_line(f"warm-up step failed ({line})")


class _Schedule:
    """The two pytest-xdist workers (``-n 2``, pyproject.toml) take whole files.

    The job tests of the files of jobs under mpiexec (:func:`launches_jobs`) are
    one unit, run one after another on one worker: their jobs use the cores
    themselves, and each file's first job (on one rank) compiles the kernels into
    numba's cache for the larger jobs after it. Every other file, and the tests of
    an mpiexec file that start no job (28 s of the mpiexec worker's 613 in a whole
    run, while the other worker ended at 557 s), runs whole on either worker, so
    its module fixtures are made once. (``--dist loadgroup`` would do this by markers,
    but pytest-xdist 3.8 cannot rename the tests of pytest 9, which it needs for that.)
    The units go out in the order of the collection, which the workers sort longest
    first (:data:`_LONGEST_FIRST`).
    """

    @staticmethod
    def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
        from xdist.scheduler import LoadScopeScheduling

        class FilesAndMpiexec(LoadScopeScheduling):
            def _split_scope(self, nodeid: str) -> str:
                return _unit(nodeid)

        return FilesAndMpiexec(config, log)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Seconds per test file, summed over its tests (setup and teardown included).

    The workers interleave the files, so the progress lines cannot carry each
    file's time; this table does, for a file that got slow.
    """
    seconds: dict[str, float] = {}
    for reports in terminalreporter.stats.values():
        for rep in reports:
            if isinstance(rep, pytest.TestReport):
                name = rep.nodeid.split("::", 1)[0]
                seconds[name] = seconds.get(name, 0.0) + rep.duration
    if seconds:
        terminalreporter.section("seconds per test file")
        for name, secs in sorted(seconds.items(), key=lambda kv: -kv[1]):
            terminalreporter.write_line(f"{secs:8.1f}  {name}")


@pytest.fixture(autouse=True)
def _auto_is_the_cpu_unless_marked_gpu(request: pytest.FixtureRequest,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Backend 'auto' means numba in every test not marked ``gpu``.

    Those tests check the CPU engines through the default config; on a machine with
    a GPU, 'auto' would hand them cupy.
    """
    if "gpu" not in request.keywords:
        monkeypatch.setattr(semirings.backend, "gpu_available", lambda: False)


@pytest.fixture(autouse=True)
def _auto_searches_on_numba_whatever_the_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """Small inputs run the numba kernels even while they are not compiled.

    Outside the tests, a small search on 'auto' and a small product over an
    order-free sum take numpy there until the kernels are compiled
    (:func:`spbfs._compile.numpy_first`, :data:`semirings.kernels.SMALL_ENTRIES`,
    :data:`semirings._build.SMALL_PAIRS`; tested in tests/test_warmup.py): the
    tests of the numba kernels must not depend on what numba's cache holds.
    """
    monkeypatch.setattr(_compile, "SMALL_VERTICES", -1)
    monkeypatch.setattr(semirings.kernels, "SMALL_ENTRIES", -1)
    monkeypatch.setattr(semirings._build, "SMALL_PAIRS", -1)


@pytest.fixture()
def label_file(tmp_path: Path) -> tuple[Path, nx.Graph]:
    """Edges between sparse (huge, negative) labels, and the networkx graph of them."""
    edges = [(10**12, -5), (-5, 7), (7, 3 * 10**11), (42, 42), (42, 10**12)]
    p = tmp_path / "labels.txt"
    p.write_text("".join(f"{u} {v}\n" for u, v in edges))
    return p, nx.Graph(edges)


@pytest.fixture()
def weighted_file(tmp_path: Path) -> tuple[Path, sp.csr_matrix, list[tuple[int, int, float]]]:
    """A directed weighted edge list (third column) and its scipy matrix."""
    rows = [(0, 1, 2.5), (1, 2, 1.0), (0, 2, 4.0), (2, 3, 1.0), (3, 0, 0.5), (4, 5, 1.0),
            (5, 6, 2.0), (1, 3, 9.0)]
    p = tmp_path / "w.txt"
    p.write_text("".join(f"{u} {v} {w}\n" for u, v, w in rows))
    u, v, w = (np.array(c) for c in zip(*rows, strict=True))
    return p, sp.csr_matrix((w, (u, v)), shape=(7, 7)), rows


@pytest.fixture(scope="session")
def shared_jobs(tmp_path_factory: pytest.TempPathFactory) -> SharedJobs:
    """The jobs that the tests of several files share (:data:`mpi_launch.SHARED`)."""
    return SharedJobs(tmp_path_factory.mktemp)


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the bundled graphs uncompressed, under their original file names.

    For the tests that want plain files (``karate.mtx``, ``p2p-Gnutella31.txt``, ...):
    the CLI, the parallel reader cut by byte offsets, scipy's own Matrix Market reader.
    """
    folder = tmp_path_factory.mktemp("data")
    for name in datasets.names():
        with gzip.open(datasets.path(name), "rb") as src, \
                open(folder / datasets.info(name).filename, "wb") as out:
            shutil.copyfileobj(src, out)
    return folder

