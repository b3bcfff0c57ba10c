"""The direction policy's guard, and the searches that run without the engine.

The policy is tested on constructed counts (those of p2p-Gnutella31's search
from vertex 0, where Beamer's test alone turns bottom-up); the small-search
path against the engine it stands in for, on generated graphs.
"""

from __future__ import annotations

import numpy as np
import pytest

import spbfs
from spbfs import generators as gen
from spbfs.direction import BOTTOM_UP, MIN_SWEEP, TOP_DOWN, DirectionPolicy


def test_directed_counts_stay_top_down_where_the_sweep_touches_more() -> None:
    """A sparse directed graph's big level: Beamer's test (m_f * alpha > m_u) passes on
    the in-edges of the unvisited vertices, but the frontier's out-edges are fewer
    than the vertices a bottom-up sweep reads, so the level stays top-down; the guard
    at its earlier value (gamma = 32) let it go bottom-up."""
    n = 62_586
    # level 6 of p2p-Gnutella31 from vertex 0: 6,834 frontier vertices, 18,195 out-edges,
    # 101,286 in-edges of the unvisited vertices (the sweep read 84,890 of them).
    n_f, m_f, m_u_in = 6_834, 18_195, 101_286
    assert m_f * DirectionPolicy.alpha > m_u_in  # Beamer's test alone would switch
    assert DirectionPolicy().choose(TOP_DOWN, n_f, m_f, m_u_in, n, True) == TOP_DOWN
    assert DirectionPolicy(gamma=32.0).choose(TOP_DOWN, n_f, m_f, m_u_in, n, True) == BOTTOM_UP
    # Out-edges at the guard (n / gamma), and past m_u / alpha: bottom-up.
    m_f = int(n / DirectionPolicy.gamma)
    assert DirectionPolicy().choose(TOP_DOWN, 30_000, m_f, 8 * m_f, n, True) == BOTTOM_UP
    assert DirectionPolicy().choose(TOP_DOWN, 30_000, m_f - 1, 8 * m_f, n, True) == TOP_DOWN
    # ... but not when the in-edges to scan are more than alpha times the out-edges.
    assert DirectionPolicy().choose(TOP_DOWN, 30_000, m_f, 15 * m_f, n, True) == TOP_DOWN


def test_no_bottom_up_below_min_sweep_edges() -> None:
    """A graph of few vertices: the guard takes at least MIN_SWEEP frontier edges."""
    pol = DirectionPolicy()
    least = int(MIN_SWEEP / pol.gamma)
    assert pol.choose(TOP_DOWN, 16, least - 1, 10, 34, True) == TOP_DOWN
    assert pol.choose(TOP_DOWN, 16, least, 10, 34, True) == BOTTOM_UP
    # No guard (a GPU's gamma): Beamer's test alone.
    assert DirectionPolicy(gamma=float("inf")).choose(TOP_DOWN, 16, 80, 60, 34, True) == BOTTOM_UP


def test_directed_power_law_search_follows_the_guard() -> None:
    """On a generated sparse directed graph no level's out-edges reach n, so the
    default search stays top-down throughout, while the unguarded policy switches;
    both give the forced top-down answer."""
    g = spbfs.Graph.from_edgelist(gen.rmat(14, 2, seed=5), directed=True)
    source = int(np.argmax(np.asarray(g.out_degree)))
    td = spbfs.bfs(g, source, direction="top-down")
    r = spbfs.bfs(g, source)
    assert np.all(td.stats.edges < g.n)  # the frontier's out-edges never reach n
    assert not np.any(r.stats.direction == BOTTOM_UP)
    cfg = g.config.replace(alpha=1e9)  # Beamer's test always passes; the guard decides
    assert not np.any(spbfs.bfs(g, source, config=cfg).stats.direction == BOTTOM_UP)
    np.testing.assert_array_equal(r.parents, td.parents)
    np.testing.assert_array_equal(r.levels, td.levels)


def _engine_result(g: spbfs.Graph, source: int, monkeypatch: pytest.MonkeyPatch,
                   **kw: object) -> spbfs.BFSResult:
    """The numba engine's search (the small path switched off)."""
    import sys

    bfs_module = sys.modules["spbfs.bfs"]
    with monkeypatch.context() as m:
        m.setattr(bfs_module, "takes_small", lambda *a: False)
        return spbfs.bfs(g, source, **kw)


@pytest.mark.parametrize("directed", [False, True])
def test_small_search_is_the_engine_search(directed: bool,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Small graphs and sources without out-edges take the one-call path: the same
    parents, levels, per-level counts and stop as the engine, for every output,
    stop and direction, and twice in a row (the kept state is reset)."""
    el = gen.erdos_renyi(300, m=330, seed=7, directed=directed)
    g = spbfs.Graph.from_edgelist(el, directed=directed)
    assert g.nnz < MIN_SWEEP
    deg = np.asarray(g.out_degree)
    isolated = int(np.flatnonzero(deg == 0)[0])
    hub = int(np.argmax(deg))
    cases = [dict(), dict(output="levels"), dict(output="parents"), dict(max_depth=2),
             dict(max_depth=0), dict(target=int(np.argsort(deg)[-2])), dict(reverse=True),
             dict(direction="top-down")]
    for source in (hub, isolated, 0):
        for kw in cases:
            for _ in range(2):
                want = _engine_result(g, source, monkeypatch, **kw)
                got = spbfs.bfs(g, source, **kw)
                for name in ("parents", "levels"):
                    a, b = getattr(got, name), getattr(want, name)
                    assert (a is None) == (b is None), (source, kw, name)
                    if a is not None:
                        np.testing.assert_array_equal(a, b, err_msg=f"{source} {kw} {name}")
                for name in ("frontier", "discovered", "edges", "direction"):
                    np.testing.assert_array_equal(getattr(got.stats, name),
                                                  getattr(want.stats, name))
                assert got.stopped == want.stopped, (source, kw)
    assert g._search_cache.get("rows_out_scratch") is not None  # the path did run


def test_isolated_source_of_a_large_graph_takes_one_call(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A source without edges in a graph too large for the small path otherwise: one
    level, the engine's answer; a forced bottom-up still runs the engine."""
    g = spbfs.Graph.from_edgelist(gen.erdos_renyi(5000, m=5000, seed=3))
    assert g.nnz * DirectionPolicy.gamma >= g.n
    iso = int(np.flatnonzero(np.asarray(g.out_degree) == 0)[0])
    r = spbfs.bfs(g, iso)
    want = _engine_result(g, iso, monkeypatch)
    np.testing.assert_array_equal(r.parents, want.parents)
    np.testing.assert_array_equal(r.levels, want.levels)
    assert r.num_reached == 1 and len(r.stats) == 1
    assert g._search_cache.get("rows_out_scratch") is not None
    bu = spbfs.bfs(g, iso, direction="bottom-up")
    assert bu.stats.direction.tolist() == [BOTTOM_UP]


#: Vertices of :func:`_two_layer_graph`.
TWO_LAYER_N = 1109


def _two_layer_graph(back: bool) -> tuple[np.ndarray, np.ndarray]:
    """Source 0 -> 8 vertices -> all of 300 others (2,400 out-edges: the frontier after
    level 1, past the guard's n / gamma = 2,218), and 800 vertices C. With ``back`` every
    C vertex has an arc to the source and its 8 successors (7,200 arcs out of unvisited
    vertices, none into them); without, each of the 300 has arcs to 10 of C (3,000
    arcs out of unvisited vertices, 5,400 into them)."""
    a, b, c = np.arange(1, 9), np.arange(9, 309), np.arange(309, TWO_LAYER_N)
    src = [np.zeros(8, np.int64), np.repeat(a, b.size)]
    dst = [a, np.tile(b, a.size)]
    if back:
        src.append(np.repeat(c, 9))
        dst.append(np.tile(np.arange(9), c.size))
    else:
        src.append(np.repeat(b, 10))
        dst.append(c[(np.arange(b.size * 10) * 7) % c.size])
    return np.concatenate(src), np.concatenate(dst)


@pytest.mark.parametrize("backend", ["numba", "numpy"])
@pytest.mark.parametrize(("back", "alpha", "expect"), [(True, 2.0, BOTTOM_UP),
                                                       (False, 2.0, TOP_DOWN)])
def test_directed_switch_weighs_in_edges_of_unvisited(backend: str, back: bool, alpha: float,
                                                      expect: int) -> None:
    """After level 0 the frontier has 2,400 out-edges (past the guard); Beamer's test
    compares them (times alpha) with the edges a bottom-up sweep reads, the in-edges of
    the unvisited vertices, not their out-edges: 2 x 2,400 exceeds 2,400 in-edges but
    not 7,200 out-edges (bottom-up), and 3,000 out-edges but not 5,400 in-edges
    (top-down). Every engine decides alike, and the reversed search on the
    transposed graph as the search on the graph."""
    src, dst = _two_layer_graph(back)
    g = spbfs.Graph.from_edges(src, dst, n=TWO_LAYER_N, directed=True)
    deg_in = np.bincount(dst, minlength=TWO_LAYER_N)
    deg_out = np.bincount(src, minlength=TWO_LAYER_N)
    unvisited = np.ones(TWO_LAYER_N, bool)
    unvisited[:9] = False
    m_f = 2400
    m_in, m_out = int(deg_in[unvisited].sum()), int(deg_out[unvisited].sum())
    # The counts the test should weigh, and the other ones, on opposite sides of m_f * alpha.
    assert (m_f * alpha > m_in) == (expect == BOTTOM_UP) != (m_f * alpha > m_out)
    cfg = g.config.replace(alpha=alpha, backend=backend)
    r = spbfs.bfs(g, 0, config=cfg)
    assert r.stats.frontier[1] == 8 and r.stats.direction[0] == TOP_DOWN
    assert r.stats.direction[1] == expect
    td = spbfs.bfs(g, 0, config=cfg.replace(direction="top-down"))
    np.testing.assert_array_equal(r.parents, td.parents)
    np.testing.assert_array_equal(r.levels, td.levels)
    t = spbfs.Graph.from_edges(dst, src, n=TWO_LAYER_N, directed=True)
    rev = spbfs.bfs(t, 0, config=cfg, reverse=True)
    np.testing.assert_array_equal(rev.stats.direction, r.stats.direction)
    np.testing.assert_array_equal(rev.parents, r.parents)
