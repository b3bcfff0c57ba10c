"""The plain call ``bfs(g, s)``: what it keeps per graph, and its statistics read late.

The plain call keeps what it works out once per graph and config
(``spbfs.bfs._PlainCall``); these tests change what that depends on between
searches (the graph's config, the direction guard) and check that the
searches follow. Its statistics (:class:`~spbfs.result.RecordStats`) are cut
from the record's copy when first read: read after later searches, copied,
pickled or replaced, they are the search's own.
"""

from __future__ import annotations

import copy
import dataclasses
import pickle
import threading

import numpy as np
import pytest
from _reference import reference_bfs

import spbfs
from spbfs.direction import DirectionPolicy
from spbfs.generators import rmat
from spbfs.result import LevelStats, RecordStats

SOURCES = (4160, 3841, 6150)


@pytest.fixture(scope="module")
def wiki():
    """A directed graph whose searches from SOURCES run bottom-up levels, and its
    reference levels from each source."""
    el = rmat(13, 13, seed=1)
    g = spbfs.Graph.from_edgelist(el, directed=True)
    src, dst = np.asarray(el.src), np.asarray(el.dst)
    levels = {s: reference_bfs(g.n, src, dst, s, directed=True)[1] for s in SOURCES}
    return g, levels


def _fresh(g: spbfs.Graph) -> spbfs.Graph:
    """The graph under a config object of its own (nothing kept from other tests)."""
    return g.with_config(g.config.replace(alpha=g.config.alpha + 1e-9))


def _columns(stats: LevelStats) -> tuple[np.ndarray, ...]:
    return stats.frontier, stats.discovered, stats.edges, stats.direction


def test_plain_call_follows_the_graph_config(wiki) -> None:
    """A new config object on the graph (direction, output) is the next plain call's."""
    g, levels = wiki
    g = _fresh(g)
    s = SOURCES[0]
    r = spbfs.bfs(g, s)
    assert (r.stats.direction == 1).any()  # the default runs bottom-up levels here
    g.config = g.config.replace(direction="top-down")
    r = spbfs.bfs(g, s)
    assert not r.stats.direction.any()
    np.testing.assert_array_equal(r.levels, levels[s])
    g.config = g.config.replace(direction="auto", output="levels")
    r = spbfs.bfs(g, s)
    assert r.parents is None and (r.stats.direction == 1).any()
    np.testing.assert_array_equal(r.levels, levels[s])


def test_graphs_sharing_their_searches_keep_their_configs(wiki) -> None:
    """Two graphs over the same blocks (with_config) share what searches keep; their
    plain calls, alternated, each follow their own config."""
    g, levels = wiki
    g = _fresh(g)
    down = g.with_config(g.config.replace(direction="top-down"))
    up = g.with_config(g.config.replace(direction="bottom-up"))
    assert down._search_cache is g._search_cache is up._search_cache
    for _ in range(2):
        for s in SOURCES:
            rd, ru, ra = spbfs.bfs(down, s), spbfs.bfs(up, s), spbfs.bfs(g, s)
            assert not rd.stats.direction.any()
            assert ru.stats.direction[1:].all()
            assert (ra.stats.direction == 1).any() and not ra.stats.direction.all()
            for r in (rd, ru, ra):
                np.testing.assert_array_equal(r.levels, levels[s])


def test_graphs_sharing_their_searches_keep_each_plan(wiki) -> None:
    """Plain calls of two graphs over the same blocks, alternated, reuse each config's
    plan (as one graph's calls in a row do) instead of rebuilding the other's."""
    g, _ = wiki
    g = _fresh(g)
    down = g.with_config(g.config.replace(direction="top-down"))
    spbfs.bfs(g, SOURCES[0])
    plan = g._search_cache["plain_call"]
    spbfs.bfs(down, SOURCES[0])
    plan_down = g._search_cache["plain_call"]
    assert plan_down is not plan and plan_down.config is down.config
    for s in SOURCES:
        spbfs.bfs(g, s)
        assert g._search_cache["plain_call"] is plan
        spbfs.bfs(down, s)
        assert g._search_cache["plain_call"] is plan_down


def test_plain_call_follows_the_direction_guard(wiki, monkeypatch) -> None:
    """The guard (DirectionPolicy.gamma) changed between plain calls is the next one's:
    one too small for any sweep keeps every level top-down."""
    g, levels = wiki
    g = _fresh(g)
    s = SOURCES[1]
    assert (spbfs.bfs(g, s).stats.direction == 1).any()
    monkeypatch.setattr(DirectionPolicy, "gamma", 1e-9)
    r = spbfs.bfs(g, s)
    assert not r.stats.direction.any()
    np.testing.assert_array_equal(r.levels, levels[s])
    monkeypatch.undo()
    assert (spbfs.bfs(g, s).stats.direction == 1).any()


def test_statistics_read_after_later_searches_are_their_own(wiki) -> None:
    """The record is overwritten by the next search: statistics read after it are still
    those of their search (as read at once), and a result's arrays are its own."""
    g, levels = wiki
    at_once = {}
    for s in SOURCES:
        r = spbfs.bfs(g, s)
        at_once[s] = (*(a.copy() for a in _columns(r.stats)), r.parents.copy())
    late = [spbfs.bfs(g, s) for s in SOURCES]
    for s, r in zip(SOURCES, late, strict=True):
        assert isinstance(r.stats, RecordStats)
        for want, got in zip(at_once[s], (*_columns(r.stats), r.parents), strict=True):
            np.testing.assert_array_equal(got, want)
        assert r.stats.direction.dtype == np.int8 and r.stats.seconds.dtype == np.float64
        assert len(r.stats) == int(levels[s].max()) + 1  # the last level finds none
        assert int(r.stats.discovered.sum()) + 1 == r.num_reached
        np.testing.assert_array_equal(r.levels, levels[s])


def test_unread_statistics_copy_pickle_and_replace(wiki) -> None:
    """Statistics not read yet: a copy, a pickled copy and dataclasses.replace give the
    search's arrays; an unknown attribute is an AttributeError naming it."""
    g, _ = wiki
    s = SOURCES[2]
    want = _columns(spbfs.bfs(g, s).stats)
    for make in (copy.copy, copy.deepcopy, lambda st: pickle.loads(pickle.dumps(st)),
                 lambda st: dataclasses.replace(st, extra={"k": 1})):
        got = make(spbfs.bfs(g, s).stats)
        assert isinstance(got, LevelStats)
        for a, b in zip(_columns(got), want, strict=True):
            np.testing.assert_array_equal(a, b)
    with pytest.raises(AttributeError, match="no_such_column"):
        _ = spbfs.bfs(g, s).stats.no_such_column


def test_small_search_statistics() -> None:
    """A search small_search serves: every level top-down (int8 zeros), seconds float64."""
    g = spbfs.datasets.karate()
    r = spbfs.bfs(g, 0)
    assert isinstance(r.stats, RecordStats)
    assert r.stats.direction.dtype == np.int8 and not r.stats.direction.any()
    assert r.stats.seconds.dtype == np.float64 and (r.stats.seconds >= 0).all()
    assert len(r.stats) == r.depth + 1 and int(r.stats.discovered.sum()) + 1 == r.num_reached
    assert r.stats.frontier[0] == 1


def test_plain_calls_from_two_threads(wiki) -> None:
    """Plain calls on one graph from two Python threads: each gets its own answers."""
    g, levels = wiki
    errors: list[str] = []

    def work(order: tuple[int, ...]) -> None:
        for _ in range(30):
            for s in order:
                r = spbfs.bfs(g, s)
                if not np.array_equal(r.levels, levels[s]):
                    errors.append(f"levels from {s}")
                if int(r.stats.discovered.sum()) + 1 != r.num_reached:
                    errors.append(f"statistics from {s}")

    threads = [threading.Thread(target=work, args=(order,))
               for order in (SOURCES, SOURCES[::-1])]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def _small_graphs() -> dict[str, tuple[np.ndarray, np.ndarray, int, bool]]:
    """``(src, dst, n, directed)``: degrees that vary (a sparse R-MAT graph, repeated
    arcs and loops kept) and one degree nearly everywhere (a path, a complete graph:
    every vertex is reached before the last level's scan, which writes the queue's slot
    past ``n`` on the unbranched scan)."""
    el = rmat(11, 2, seed=3)
    path = np.arange(199)
    k = np.array([(u, v) for u in range(7) for v in range(7) if u != v])
    return {"rmat": (np.asarray(el.src), np.asarray(el.dst), el.n, True),
            "path": (path, path + 1, 200, False),
            "complete": (k[:, 0], k[:, 1], 7, True)}


@pytest.mark.parametrize("name", ["rmat", "path", "complete"])
def test_rows_scans_with_and_without_branches_agree(name) -> None:
    """Both scans of the rows' search give the same levels, smallest parents, order of
    discovery and per-level counts, and the levels are the reference's."""
    import scipy.sparse as sp

    from spbfs.kernels.rows_bfs import _UNVISITED, rows_bfs, unpack_state

    src, dst, n, directed = _small_graphs()[name]
    a = sp.csr_matrix((np.ones(len(src)), (src, dst)), shape=(n, n))
    if not directed:
        a = (a + a.T).tocsr()
    ptr, ind = a.indptr.astype(np.uint32), a.indices.view(np.uint32)
    deg = np.diff(a.indptr)
    for s in (0, int(np.argmax(deg))):
        out = []
        for unbranched in (False, True):
            state = np.full(n, _UNVISITED, np.uint64)
            queue = np.zeros(n + 1, np.uint32)
            st = [np.zeros(n, np.int64) for _ in range(3)] + [np.zeros(n)]
            nlev, reason = rows_bfs(ptr, ind, s, state, queue, -1, -1, *st, unbranched)
            parents, levels = np.empty(n, np.int64), np.empty(n, np.int64)
            unpack_state(state, parents, levels, True, True)
            total = int((levels >= 0).sum())
            out.append((parents, levels, queue[:total].copy(), [c[:nlev].copy() for c in st[:3]],
                        reason))
        (p0, l0, q0, c0, r0), (p1, l1, q1, c1, r1) = out
        np.testing.assert_array_equal(l0, reference_bfs(n, src, dst, s, directed=directed)[1])
        np.testing.assert_array_equal(l1, l0)
        np.testing.assert_array_equal(p1, p0)
        np.testing.assert_array_equal(q1, q0)
        for x, y in zip(c0, c1, strict=True):
            np.testing.assert_array_equal(x, y)
        assert r0 == r1 == 0
        # Parents are the smallest vertex of the level before with an arc to the vertex.
        rows, cols = a.nonzero()
        for v in np.flatnonzero(l0 > 0):
            into = rows[(cols == v) & (l0[rows] == l0[v] - 1)]
            assert p0[v] == into.min()


def test_small_searches_pick_their_scan_by_the_degrees() -> None:
    """The unbranched rows' scan where degrees vary, the branched one where nearly
    every vertex has one degree; the test over a structure's pointers is the test over
    its degrees."""
    from spbfs.kernels.degrees import regular_degrees

    picked = {}
    for name, (src, dst, n, directed) in _small_graphs().items():
        g = spbfs.Graph.from_edges(src, dst, n=n, directed=directed)
        r = spbfs.bfs(g, 0)
        np.testing.assert_array_equal(r.levels,
                                      reference_bfs(n, src, dst, 0, directed=directed)[1])
        picked[name] = g._search_cache["rows_out_scratch"].unbranched
        ptr = g.out_block.ptr
        assert regular_degrees(ptr, rows=True) == regular_degrees(np.diff(ptr))
    assert picked == {"rmat": True, "path": False, "complete": False}
    assert regular_degrees(np.zeros(0, np.int64), rows=True)
    assert regular_degrees(np.zeros(4, np.int64), rows=True)  # no edges


def test_small_search_results_from_a_small_and_a_large_reach() -> None:
    """The rows' search writes its results from the reached vertices alone where they
    are few, in one pass over n where they are a quarter of it or more; both leave the
    kept state unvisited, so searches that alternate the two are each right."""
    from spbfs.kernels.rows_bfs import _UNVISITED

    big, small = np.arange(149), np.arange(150, 179)  # paths of 150 and 30 vertices
    src, dst = np.r_[big, small], np.r_[big + 1, small + 1]
    n = 180
    g = spbfs.Graph.from_edges(src, dst, n=n)
    for _ in range(2):
        for s in (0, 160, 75, 179):  # reaches of 150 (over n / 4) and 30 (under)
            r = spbfs.bfs(g, s)
            parents, levels = reference_bfs(n, src, dst, s)
            np.testing.assert_array_equal(r.levels, levels)
            np.testing.assert_array_equal(r.parents, parents)  # a path's parents are unique
    scratch = g._search_cache["rows_out_scratch"]
    (state, *_), = scratch._items
    assert (state == _UNVISITED).all()


def test_forced_top_down_runs_the_engine_on_a_large_graph() -> None:
    """A forced top-down search takes the rows' search on a graph of fewer entries
    than TOP_DOWN_ROWS, the numba engine above: the same levels either way."""
    from spbfs.search.small import TOP_DOWN_ROWS

    for side, rows in ((40, True), (200, False)):
        g = spbfs.Graph.from_edgelist(spbfs.generators.grid2d(side, side))
        assert (g.nnz < TOP_DOWN_ROWS) == rows
        down = g.with_config(g.config.replace(direction="top-down"))
        r = spbfs.bfs(down, 0)
        assert not r.stats.direction.any()
        assert (g._search_cache.get("rows_out_scratch") is not None) == rows
        np.testing.assert_array_equal(r.levels, spbfs.bfs(g, 0).levels)
        ij = np.add.outer(np.arange(side), np.arange(side)).ravel()
        np.testing.assert_array_equal(r.levels, ij)  # corner to (i, j): i + j steps


def test_levels_of_little_work_share_clock_readings() -> None:
    """A path's levels (a few edges each) share readings of the clock: each gets a
    positive share in proportion to its edges and frontier, the shares sum to at most
    the search's time, and a level of much work reads the clock for itself."""
    from spbfs.kernels.rows_bfs import TICK_WORK

    n = 3 * TICK_WORK
    g = spbfs.Graph.from_edges(np.arange(n - 1), np.arange(1, n), n=n)
    r = spbfs.bfs(g, 0)
    s = r.stats
    assert len(s) == n and (s.seconds > 0).all() and s.seconds.sum() <= r.seconds
    work = s.edges + s.frontier
    # The middle levels all do the same work (1 frontier vertex, 2 edges) and share
    # readings in groups: within a group, equal shares.
    group = TICK_WORK // 3 + 1
    mid = s.seconds[1:group]
    np.testing.assert_allclose(mid, mid[0] * work[1:group] / work[1])
    # A star's one level scans n edges: one reading of its own, the search's time.
    star = spbfs.Graph.from_edges(np.zeros(n - 1, np.int64), np.arange(1, n), n=n)
    rs = spbfs.bfs(star, 0)
    assert len(rs.stats) == 2 and rs.stats.seconds[0] > 0


def test_plain_plan_of_small_searches_is_kept_before_the_engine_compiles(wiki,
                                                                          monkeypatch) -> None:
    """While the engine's kernel is not compiled (numpy_first holds), the plain call
    keeps its plan where every search is small (they need no policy) and works it
    out per call elsewhere; the answers are the same."""
    import sys

    mod = sys.modules["spbfs.bfs"]
    monkeypatch.setattr(mod, "_numpy_first", lambda g, cfg: True)
    small = _fresh(spbfs.datasets.karate())
    r = spbfs.bfs(small, 0)
    plan = small._search_cache.get("plain_call")
    assert plan is not None and plan.small and plan.policy is None
    assert spbfs.bfs(small, 0).levels.tolist() == r.levels.tolist()
    g, levels = wiki
    g = _fresh(g)
    np.testing.assert_array_equal(spbfs.bfs(g, SOURCES[0]).levels, levels[SOURCES[0]])
    kept = g._search_cache.get("plain_call")  # the graphs of with_config share the cache
    assert kept is None or kept.config is not g.config
