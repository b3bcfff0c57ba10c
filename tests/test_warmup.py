"""First use: the compile notice, small inputs without compiling, ``spbfs warmup``."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from numba.core import event

import semirings._build as build
from spbfs import _compile
from spbfs.kernels import bfs_numba as nbk

ROOT = Path(__file__).resolve().parents[1]


def _compile_event(dispatcher: object) -> event.Event:
    return event.Event("numba:compile", event.EventStatus.START, data={"dispatcher": dispatcher})


def test_notice_once_for_a_slow_spbfs_kernel_only() -> None:
    out = io.StringIO()
    notice = _compile.CompileNotice(out)
    with event.install_listener("numba:compile", notice):
        event.broadcast(_compile_event(np.add))              # not numba's: nothing
        event.broadcast(_compile_event(nbk.fill_minus1))     # quick: nothing
        assert out.getvalue() == ""
        event.broadcast(_compile_event(nbk.init_state))      # a first search starts here
        event.broadcast(_compile_event(nbk.search_levels))   # the same module: said
        event.broadcast(_compile_event(build._counts))       # the build's: its own line
        event.broadcast(_compile_event(build._sort_segments))
    lines = out.getvalue().splitlines()
    search = round(_compile.estimate("spbfs.kernels.bfs_numba.init_state"))
    built = round(_compile.estimate("semirings._build._counts"))
    assert search > 10 and built >= 2
    assert lines == [_compile.MESSAGE.format(seconds=s) for s in (search, built)]
    assert "compiling spbfs kernels for first use" in lines[0]


def test_quiet_notice_is_restored() -> None:
    notice = _compile.install_notice()
    assert _compile.install_notice() is notice               # registered once
    before = notice.quiet
    with _compile.quiet_notice():
        assert notice.quiet
    assert notice.quiet == before


def _run(code: str, cache: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=600)


def test_first_compile_says_so_once_and_a_second_process_loads_the_cache(tmp_path) -> None:
    code = (
        "import numpy as np, spbfs\n"
        "from semirings._build import _counts\n"
        "a = np.array([0, 1, 2], np.int64)\n"
        "for _ in range(2):\n"
        "    _counts(a, a[::-1].copy(), 3, True, False)\n"
        "s = _counts.stats\n"
        "print(sum(s.cache_hits.values()), sum(s.cache_misses.values()))\n"
    )
    first = _run(code, tmp_path)
    assert first.returncode == 0, first.stderr
    assert first.stdout.split() == ["0", "1"]
    assert first.stderr.count("compiling spbfs kernels for first use") == 1, first.stderr
    second = _run(code, tmp_path)
    assert second.returncode == 0, second.stderr
    assert second.stdout.split() == ["1", "0"]                # loaded, not compiled
    assert "compiling" not in second.stderr


def test_a_small_first_search_compiles_only_the_small_search(tmp_path) -> None:
    code = (
        "import numpy as np, spbfs\n"
        "from spbfs.kernels import bfs_numba as nbk\n"
        "import semirings._build as b\n"
        "g = spbfs.Graph.from_edges([0, 1, 2, 0], [1, 2, 3, 2], n=6)\n"
        "r = spbfs.bfs(g, 0)\n"
        "print(r.levels.tolist())\n"
        "print(r.parents.tolist())\n"
        "print(len(nbk.search_levels.overloads), len(b._sort_segments.overloads))\n"
    )
    p = _run(code, tmp_path)
    assert p.returncode == 0, p.stderr
    levels, parents, compiled = p.stdout.splitlines()
    assert levels == "[0, 1, 1, 2, -1, -1]" and parents == "[0, 0, 0, 2, -1, -1]"
    assert compiled == "0 0"
    assert "compiling" not in p.stderr
    # Only the small-search kernels were compiled (about a second: the rows' search and
    # the degree test that picks its scan), nothing of the search's.
    assert {f.name.split(".")[0] for f in tmp_path.rglob("*.nbi")} <= {"rows_bfs", "degrees"}


def _pairs(rng: np.random.Generator, n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    return rng.integers(0, n, k).astype(np.int64), rng.integers(0, n, k).astype(np.int64)


@pytest.mark.parametrize("symmetric", [False, True])
@pytest.mark.parametrize("drop_loops", [False, True])
@pytest.mark.parametrize("dedup", [False, True])
def test_small_builds_on_numpy_equal_the_kernels(monkeypatch, symmetric, drop_loops,
                                                 dedup) -> None:
    monkeypatch.setattr(build, "SMALL_PAIRS", 1 << 16)
    rng = np.random.default_rng(7)
    n = 12
    major, minor = _pairs(rng, n, 80)                         # repeats and loops
    values = rng.random(80)
    out = {}
    for compiled in (True, False):
        monkeypatch.setattr(build, "kernel_ready", lambda kernel, c=compiled: c)
        out[compiled] = [build.build_compressed(major, minor, n, values=v, dedup=dedup,
                                                symmetric=symmetric, drop_loops=drop_loops)
                         for v in (None, values)]
        counts, loops = np.zeros(n + 1, np.int64), np.zeros(n, np.int64)
        build.count_into(counts, loops, major, minor, symmetric, drop_loops, True)
        out[compiled].append((counts, loops))
    for (a, b) in zip(out[True], out[False], strict=True):
        for x, y in zip(a, b, strict=True):
            if x is None:
                assert y is None
            else:
                np.testing.assert_array_equal(x, y)


@pytest.mark.slow
def test_warmup_compiles_and_a_second_process_hits_the_cache() -> None:
    # The suite's own cache (an empty one would compile every kernel a second time,
    # minutes of the suite): warmup compiles what is missing there, and a new process
    # then finds the search kernels, large and small, without compiling.
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_DEBUG_CACHE"}

    def run(code: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              cwd=ROOT, env=env, timeout=900)

    first = run("from spbfs.cli import main; raise SystemExit(main(['warmup']))")
    assert first.returncode == 0, first.stderr
    assert "warmup  total" in first.stdout
    assert "compiling" not in first.stderr                    # warmup reports itself
    check = (
        "import spbfs\n"
        "from spbfs import _compile\n"
        "from spbfs.generators import kronecker\n"
        "from spbfs.kernels import bfs_numba as nbk, rows_bfs\n"
        "print(_compile.ready(nbk.search_levels), _compile.ready(rows_bfs.rows_bfs_into))\n"
        "cfg = spbfs.Config(backend='numba')\n"
        "big = spbfs.Graph.from_edgelist(kronecker(9, 16, seed=2), config=cfg)\n"
        "spbfs.bfs(big, int(big.out_degree.argmax()))\n"
        "small = spbfs.Graph.from_edges([0, 1, 2, 0], [1, 2, 3, 2], n=6, config=cfg)\n"
        "spbfs.bfs(small, 0)\n"
        # The thread policy's first reading of the machine names the pool's workers.
        "from spbfs import threads\n"
        "threads.warm()\n"
        "for k in (nbk.search_levels, rows_bfs.rows_bfs_into, threads._record_thread_ids):\n"
        "    s = k.stats\n"
        "    print(sum(s.cache_hits.values()), sum(s.cache_misses.values()))\n"
    )
    second = run(check)
    assert second.returncode == 0, second.stderr
    ready, *counts = second.stdout.splitlines()
    assert ready == "True True"
    for line in counts:
        hits, misses = map(int, line.split())
        assert hits >= 1 and misses == 0, second.stdout
    assert "compiling" not in second.stderr


def test_numpy_first_ends_once_a_graph_has_spent_its_budget(monkeypatch) -> None:
    import spbfs
    from spbfs.generators import kronecker

    monkeypatch.setattr(_compile, "SMALL_VERTICES", 1 << 14)
    monkeypatch.setattr(_compile, "ready", lambda kernel: False)  # as on a fresh install
    g = spbfs.Graph.from_edgelist(kronecker(10, 16, seed=1))
    want = spbfs.bfs(g, 0, config={"backend": "numba"}).levels
    assert (spbfs.bfs(g, 0).levels == want).all()
    spent = g._search_cache["numpy_first_s"]
    assert spent > 0                                           # ran on numpy, and counted
    monkeypatch.setattr(_compile, "NUMPY_FIRST_SECONDS", spent)
    assert (spbfs.bfs(g, 0).levels == want).all()
    assert g._search_cache["numpy_first_s"] == spent           # the budget spent: numba
    assert not _compile.numpy_first(nbk.search_levels, 10, "numba")
    assert not _compile.numpy_first(nbk.search_levels, 1 << 15, "auto")


@pytest.mark.parametrize("fmt", ["csr", "dcsc"])
def test_the_bench_warmups_second_process_compiles_the_search_kernel_it_needs(
        monkeypatch, fmt: str) -> None:
    """``spbfs bench``'s warm-up compiles the search kernel in a second process, on a
    small graph built on numpy (:func:`spbfs.warmup._search_graph`): the kernel's
    argument types must be those of the warm-up's Kronecker graph, built on numba,
    or the bench compiles the kernel once more."""
    import numba

    from spbfs import warmup
    from spbfs.config import Config
    from spbfs.search.numba_engine import NumbaEngine, ScratchPool, nonempty_columns

    monkeypatch.setattr(build, "SMALL_PAIRS", 1 << 16)          # as outside the tests
    monkeypatch.setattr(build, "kernel_ready", lambda kernel: False)  # a fresh install

    def kernel_types(g: object) -> tuple[list[object], dict[str, object]]:
        slots = nonempty_columns(g.in_block) if g.in_block.format == "csr" else None
        e = NumbaEngine(g.out_block, g.in_block, g.out_degree, ScratchPool(), slots)
        arrays = (*e.out, *e.inn, e.slots, e.state, e.queue, e.buf, e.front, e.cands)
        return ([numba.typeof(a) for a in arrays],
                {k: numba.typeof(v) for k, v in e.formats.items()})

    cfg = Config(format=fmt, backend="numba")
    assert kernel_types(warmup._search_graph(cfg)) == kernel_types(warmup._kronecker(cfg))


def test_the_bench_warmup_names_the_pool_workers_before_anything_is_timed(monkeypatch) -> None:
    """The thread policy's first reading of the machine runs a kernel of its own
    (``spbfs.threads._record_thread_ids``), in the first search of a graph large enough
    to ask: the bench's warm-up graph is not, so the warm-up calls it itself, or a fresh
    install's ``spbfs bench`` compiled it inside a timed search (0.2 s: min TEPS
    1.9e7 against a median of 1.9e9 at scale 18)."""
    from spbfs import threads, warmup
    from spbfs.config import Config

    called = []
    monkeypatch.setattr(threads, "warm", lambda: called.append(True))
    warmup.warm_bench(Config(backend="numba"), validate=False)
    assert called == [True]
