"""Arrays a graph keeps are its own, or checked before every use.

An ``EdgeList`` holds the caller's arrays, writable; a scipy matrix is the
caller's too. A graph built from either must not change, or crash, when the
caller edits them afterwards, and an edit made before the build must be a
clear error, not a corrupted graph. The crashing cases run in a subprocess so
that a segfault fails the test instead of ending the run.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.sparse as sp

import spbfs
from spbfs.matrix_cache import MatrixCache


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=600)


def _path_edges(n: int = 100) -> spbfs.EdgeList:
    return spbfs.EdgeList(np.arange(n), np.arange(1, n + 1), 2 * n)


@pytest.mark.parametrize("bad, match", [(10**9, "edges.src holds vertex id 1000000000, out "
                                                "of range for n=200"),
                                        (-1, r"edges.src holds a negative vertex id \(-1\)")])
def test_edgelist_edited_after_it_was_made_is_checked_at_build(bad, match):
    # Run apart: before the build checked the ids, 10**9 crashed the interpreter.
    proc = _run(f"""
        import numpy as np, spbfs
        e = spbfs.EdgeList(np.arange(100), np.arange(1, 101), 200)
        e.src[5] = {bad}
        try:
            spbfs.Graph.from_edgelist(e)
        except ValueError as exc:
            print("ValueError:", exc)
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("ValueError:"), proc.stdout
    assert re.search(match, proc.stdout)


@pytest.mark.parametrize("fmt", ["csr", "dcsc"])
def test_edgelist_checked_at_build_in_every_format(fmt):
    e = _path_edges()
    e.dst[3] = 200
    with pytest.raises(ValueError, match=r"edges\.dst holds vertex id 200, out of range"):
        spbfs.Graph.from_edgelist(e, config=spbfs.Config(format=fmt))


def test_dcsc_hypersparse_build_checks_the_edgelist():
    # Far more vertices than edges: the in-memory dcsc builder, checked as well.
    e = spbfs.EdgeList(np.array([0, 1]), np.array([1, 2]), 10**6)
    e.src[0] = -7
    with pytest.raises(ValueError, match="negative vertex id"):
        spbfs.Graph.from_edgelist(e, config=spbfs.Config(format="dcsc"))


def test_graph_keeps_its_own_edges():
    e = _path_edges()
    g = spbfs.Graph.from_edgelist(e)
    before = spbfs.bfs(g, 0).levels.copy()
    assert not np.shares_memory(g.edges.src, e.src)
    assert not np.shares_memory(g.edges.dst, e.dst)
    e.src[:] = 0  # the caller's list, not the graph's
    e.dst[0] = 10**9
    np.testing.assert_array_equal(spbfs.bfs(g, 0).levels, before)
    # Re-stored from its own edges: the same graph, no crash.
    g2 = g.with_config(spbfs.Config(format="dcsc"))
    np.testing.assert_array_equal(spbfs.bfs(g2, 0).levels, before)


def test_from_edges_copies_caller_arrays():
    src, dst = np.arange(10), np.arange(1, 11)
    g = spbfs.Graph.from_edges(src, dst)
    assert not np.shares_memory(g.edges.src, src)
    src[:] = 0
    assert spbfs.bfs(g, 0).levels.max() == 10


def test_from_matrix_does_not_share_the_callers_arrays():
    a = sp.csr_matrix(sp.eye(1000, k=1) + sp.eye(1000, k=-1))
    g = spbfs.Graph.from_matrix(a)
    for block in (g.out_block, g.in_block):
        for arr in (block.ptr, block.ind):
            assert not np.shares_memory(arr, a.indices)
            assert not np.shares_memory(arr, a.indptr)
    a.indices[:] = 0  # in range: before, a mixed graph
    r = spbfs.bfs(g, 0)
    assert r.num_reached == 1000
    assert r.levels.max() == 999


def test_from_matrix_edit_out_of_range_does_not_crash():
    proc = _run("""
        import scipy.sparse as sp, spbfs
        a = sp.csr_matrix(sp.eye(1000, k=1) + sp.eye(1000, k=-1))
        g = spbfs.Graph.from_matrix(a)
        a.indices[:] = 10**9
        print(spbfs.bfs(g, 0).num_reached)
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["1000"]


def test_cached_graph_of_a_matrix_is_still_checked_every_call():
    # The matrix cache shares the matrix's arrays (no copy) because it checks a digest
    # before every use: an edit made after the Graph was built is seen.
    a = sp.csr_matrix(sp.eye(50, k=1) + sp.eye(50, k=-1))
    cache = MatrixCache()
    for _ in range(3):
        assert spbfs.bfs(a, 0, cache=cache).num_reached == 50
    assert cache.num_graphs == 1
    a.indices[a.indptr[10]:a.indptr[11]] = 10  # vertex 10 keeps only a self-loop
    assert spbfs.bfs(a, 0, cache=cache).num_reached == 11
    a.indices[:] = 10**6
    with pytest.raises(ValueError, match="index out of range"):
        spbfs.bfs(a, 0, cache=cache)


def test_handed_over_edgelist_is_kept_without_a_copy_and_still_checked():
    e = _path_edges()
    g = spbfs.Graph.from_edgelist(e, copy=False)
    assert g.edges is e
    e.src[0] = 10**9
    with pytest.raises(ValueError, match="out of range for n=200"):
        spbfs.Graph.from_edgelist(e, copy=False)
