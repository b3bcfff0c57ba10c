"""The numba engine's whole-search loop: compact state, both directions in compiled code.

Every result is checked against an independent reference: levels against
``scipy.sparse.csgraph``, parents by the Graph500 rules (``spbfs.validate``) and
against the smallest-parent tree computed here from scipy's levels.
"""

from __future__ import annotations

import itertools

import numba as nb
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.csgraph as csg

import spbfs
from semirings._intrinsics import (
    atomic_add,
    atomic_cas,
    cycle_ticks,
    dcsc_column_range,
    load_acquire,
    monotonic,
    store_release,
)
from semirings.blocks import block_from_edges
from spbfs import generators as gen
from spbfs.config import Config
from spbfs.direction import BOTTOM_UP, TOP_DOWN, DirectionPolicy
from spbfs.edges import EdgeList
from spbfs.kernels import bfs_numba as nbk
from spbfs.kernels.bitmaps import first_member, first_member_blocked
from spbfs.search.driver import run_levels
from spbfs.search.numba_engine import NumbaEngine, ScratchPool, nonempty_columns, state_dtype
from spbfs.validate import validate_bfs_tree

FORMATS = ("csr", "dcsc")
DIRECTIONS = ("auto", "top-down", "bottom-up")


def _matrix(src: np.ndarray, dst: np.ndarray, n: int, directed: bool) -> sp.csr_matrix:
    a = sp.coo_matrix((np.ones(src.size), (src, dst)), shape=(n, n)).tocsr()
    if not directed:
        a = (a + a.T).tocsr()
    a.data[:] = 1
    return a


def _graph(a: sp.csr_matrix, directed: bool, fmt: str) -> spbfs.Graph:
    return spbfs.Graph.from_matrix(a, directed=directed, config=Config(format=fmt))


def _ref_levels(a: sp.csr_matrix, source: int, directed: bool) -> np.ndarray:
    d = csg.shortest_path(a, directed=directed, unweighted=True, indices=source)
    return np.where(np.isinf(d), -1, d).astype(np.int64)


def _min_parents(a: sp.csr_matrix, levels: np.ndarray, source: int) -> np.ndarray:
    """For every reached v: the smallest u one level up with an edge u -> v."""
    coo = a.tocoo()
    u, v = coo.row.astype(np.int64), coo.col.astype(np.int64)
    keep = (levels[u] >= 0) & (levels[v] == levels[u] + 1)
    ref = np.full(levels.size, np.iinfo(np.int64).max)
    np.minimum.at(ref, v[keep], u[keep])
    ref[levels < 0] = -1
    ref[source] = source
    return ref


def _check(a: sp.csr_matrix, g: spbfs.Graph, source: int, directed: bool,
           r: spbfs.BFSResult, reverse: bool = False) -> None:
    m = a.T.tocsr() if reverse else a
    levels = _ref_levels(m, source, directed)
    np.testing.assert_array_equal(r.levels, levels)
    np.testing.assert_array_equal(r.parents, _min_parents(m, levels, source))
    coo = m.tocoo()
    edges = EdgeList(coo.row.astype(np.int64), coo.col.astype(np.int64), m.shape[0], directed)
    validate_bfs_tree(edges, source, r.parents, r.levels, directed=directed)
    assert r.levels.dtype == np.int64 and r.parents.dtype == np.int64
    assert int(r.stats.discovered.sum()) + 1 == int((levels >= 0).sum())


def _lux_like(n: int = 3000, seed: int = 0) -> tuple[np.ndarray, np.ndarray, int]:
    """A long, thin, shuffled mesh: hundreds of levels of a few vertices, ids scattered."""
    rng = np.random.default_rng(seed)
    w = 3
    ids = np.arange(n)
    src = np.concatenate([ids[:-w], ids[:-1][(ids[:-1] % w) != w - 1]])
    dst = np.concatenate([ids[w:], ids[1:][(ids[:-1] % w) != w - 1]])
    perm = rng.permutation(n)
    return perm[src], perm[dst], n


GRAPHS = {
    "lux_like": lambda: (*_lux_like(), False),
    "grid": lambda: (*_edges(gen.grid2d(40, 30)), False),
    "kronecker": lambda: (*_edges(gen.kronecker(11, 16, seed=2)), False),
    "directed": lambda: (*_edges(gen.erdos_renyi(1500, m=4000, directed=True, seed=4)), True),
    # Most vertices isolated: a dcsc column index with several columns per chunk.
    "hypersparse": lambda: _spread(*_edges(gen.kronecker(9, 8, seed=7)), 7),
    # A road-like graph with a few isolated ids: dcsc keeps its one-column-per-chunk index.
    "lux_like_holes": lambda: (*_lux_like(800, seed=3)[:2], 805, False),
}


def _spread(src: np.ndarray, dst: np.ndarray, n: int, factor: int):
    return src * factor, dst * factor, n * factor, False


def _edges(el: EdgeList) -> tuple[np.ndarray, np.ndarray, int]:
    return np.asarray(el.src, np.int64), np.asarray(el.dst, np.int64), int(el.n)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", sorted(GRAPHS))
@pytest.mark.parametrize("direction", DIRECTIONS)
def test_levels_and_smallest_parents_match_references(fmt: str, name: str,
                                                      direction: str) -> None:
    src, dst, n, directed = GRAPHS[name]()
    a = _matrix(src, dst, n, directed)
    g = _graph(a, directed, fmt)
    deg = np.diff(a.indptr)
    for source in (int(np.argmax(deg)), int(np.flatnonzero(deg)[0]), n - 1):
        r = spbfs.bfs(g, source, direction=direction)
        _check(a, g, source, directed, r)
        if direction != "auto":
            assert set(r.stats.direction.tolist()) <= {DIRECTIONS.index(direction) - 1}
        if directed:
            _check(a, g, source, directed, spbfs.bfs(g, source, direction=direction,
                                                     reverse=True), reverse=True)


def test_hypersparse_dcsc_uses_the_scanning_lookup() -> None:
    src, dst, n, _ = GRAPHS["hypersparse"]()
    g = _graph(_matrix(src, dst, n, False), False, "dcsc")
    assert g.out_block.column_index()[1] > 0


@pytest.mark.parametrize(("name", "full"), [("lux_like", True), ("grid", True),
                                            ("lux_like_holes", False), ("hypersparse", False)])
def test_dcsc_with_every_column_runs_the_csr_kernels(name: str, full: bool) -> None:
    """A dcsc block storing every column is a csr block (its jc is 0 .. n - 1): the engine
    hands it to the csr loops; with one empty column it keeps the dcsc lookup. Same search."""
    src, dst, n, directed = GRAPHS[name]()
    a = _matrix(src, dst, n, directed)
    g = _graph(a, directed, "dcsc")
    e = _engine(g)
    assert e.out[5] is (not full) and e.inn[3] is (not full)
    assert e.out[4] == 0 or not full
    source = int(np.argmax(np.diff(a.indptr)))
    parents, levels, _ = _run(e, source, DirectionPolicy())
    ref = _ref_levels(a, source, directed)
    np.testing.assert_array_equal(levels, ref)
    np.testing.assert_array_equal(parents, _min_parents(a, ref, source))
    for direction in ("bottom-up", "auto"):
        _check(a, g, source, directed, spbfs.bfs(g, source, direction=direction))


def test_result_blocks_are_recycled_only_when_nothing_refers_to_them(monkeypatch) -> None:
    """The parents/levels memory of a dropped result serves a later search; a result, or
    any view of it, still alive is never written over."""
    from spbfs.search.numba_engine import ScratchPool

    # Small blocks are fresh by default: without this, the address checks below would
    # pass or fail by whether malloc happened to hand back the chunk just freed.
    monkeypatch.setattr(ScratchPool, "min_rows", 0)
    src, dst, n = _edges(gen.grid2d(30, 20))
    a = _matrix(src, dst, n, False)
    g = _graph(a, False, "csr")
    ref = {s: _ref_levels(a, s, False) for s in (0, 7, n - 1, 250)}
    first = spbfs.bfs(g, 0)
    kept_view = first.levels[::3]  # only a strided view of the first result survives
    addr = first.levels.__array_interface__["data"][0]
    del first
    second = spbfs.bfs(g, 7)  # the first block is still referenced: a new one
    third = spbfs.bfs(g, n - 1)  # second alive: neither block is free
    np.testing.assert_array_equal(kept_view, ref[0][::3])
    for s, r in ((7, second), (n - 1, third)):
        np.testing.assert_array_equal(r.levels, ref[s])
        np.testing.assert_array_equal(r.parents, _min_parents(a, ref[s], s))
    del r
    assert addr not in {r.levels.__array_interface__["data"][0] for r in (second, third)}
    addr_third = third.parents.__array_interface__["data"][0]
    del third
    fourth = spbfs.bfs(g, 250)  # third's block is free again: recycled, wholly rewritten
    assert fourth.parents.__array_interface__["data"][0] == addr_third
    np.testing.assert_array_equal(fourth.levels, ref[250])
    np.testing.assert_array_equal(fourth.parents, _min_parents(a, ref[250], 250))
    np.testing.assert_array_equal(second.levels, ref[7])
    np.testing.assert_array_equal(kept_view, ref[0][::3])
    levels_only = spbfs.bfs(g, 7, output="levels")
    assert levels_only.parents is None
    np.testing.assert_array_equal(levels_only.levels, ref[7])
    assert not np.shares_memory(fourth.parents, fourth.levels)


def test_no_result_recycling_without_exact_reference_counts(monkeypatch) -> None:
    """A free-threaded interpreter without its GIL: every search gets fresh result memory."""
    import sys

    from spbfs.search.numba_engine import ScratchPool

    pool = ScratchPool()
    pool.min_rows = 0  # small blocks too are kept
    a, _ = pool.results(100)
    addr = a.__array_interface__["data"][0]
    del a, _
    b, _ = pool.results(100)
    assert b.__array_interface__["data"][0] == addr  # with the GIL: the dropped block again
    del b, _
    monkeypatch.setattr(sys, "_is_gil_enabled", lambda: False, raising=False)
    c, d = pool.results(100)
    assert c.__array_interface__["data"][0] != addr
    assert c.shape == d.shape == (100,) and c.dtype == np.int64


def test_kronecker_switches_both_ways_in_one_compiled_run() -> None:
    """A direction-optimizing search goes bottom-up and back; the schedule is the
    Python policy's, replayed here level by level from the recorded counts."""
    src, dst, n = _edges(gen.kronecker(13, 16, seed=3))
    a = _matrix(src, dst, n, False)
    g = _graph(a, False, "csr")
    source = int(np.argmax(np.diff(a.indptr)))
    r = spbfs.bfs(g, source)
    _check(a, g, source, False, r)
    st = r.stats
    assert BOTTOM_UP in st.direction.tolist() and st.direction[-1] == TOP_DOWN
    pol = DirectionPolicy()
    deg = np.diff(a.indptr)
    m_u = int(deg.sum()) - int(deg[source])
    m_f = int(deg[source])
    cur = pol.choose(TOP_DOWN, 1, m_f, m_u, n, True)
    for i in range(len(st)):
        assert st.direction[i] == cur
        new = r.levels == i + 1
        m_f = int(deg[new].sum())
        m_u -= m_f
        cur = pol.choose(cur, int(st.discovered[i]), m_f, m_u, n,
                         bool(st.discovered[i] > st.frontier[i]))


def test_luxembourg_osm_runs_in_few_calls() -> None:
    """The bundled road network: over a thousand levels, exact levels and parents."""
    g = spbfs.datasets.load("luxembourg_osm")
    a = g.out_block.to_scipy().tocsr()
    a.data[:] = 1
    for fmt in FORMATS:
        gf = _graph(a, False, fmt)
        r = spbfs.bfs(gf, 0)
        _check(a, gf, 0, False, r)
        assert len(r.stats) > 1000 and not r.stats.direction.any()
        # One clock reading per level: the levels' seconds tile the compiled run.
        assert r.stats.seconds.min() >= 0 and 0 < r.stats.seconds.sum() <= r.seconds


@nb.njit
def _two_clocks(spins):  # type: ignore[no-untyped-def]
    t0, c0 = monotonic(), cycle_ticks()
    x = 0.0
    for i in range(spins):
        x += i * 1e-9
    return monotonic() - t0, cycle_ticks() - c0, x


def test_the_cycle_counter_runs_with_the_clock() -> None:
    """The per-level ticks grow with time: a longer loop takes more of them."""
    _two_clocks(1)
    short = min(_two_clocks(10_000)[:2] for _ in range(5))
    long = min(_two_clocks(10_000_000)[:2] for _ in range(3))
    assert 0 < short[1] < long[1] and 0 < short[0] < long[0]


@pytest.mark.parametrize("fmt", FORMATS)
def test_max_depth_and_target_stop_inside_a_run(fmt: str) -> None:
    src, dst, n = _lux_like(2000, seed=5)
    a = _matrix(src, dst, n, False)
    g = _graph(a, False, fmt)
    ref = _ref_levels(a, 7, False)
    for depth in (0, 1, 5, 100, int(ref.max()), int(ref.max()) + 3):
        r = spbfs.bfs(g, 7, max_depth=depth)
        np.testing.assert_array_equal(r.levels, np.where(ref <= depth, ref, -1))
        # A search that runs out spends one more level finding nothing.
        assert len(r.stats) == min(depth, int(ref.max()) + 1)
        assert r.stopped == ("max_depth" if depth <= ref.max() else "exhausted")
        reached = r.parents >= 0
        np.testing.assert_array_equal(reached, r.levels >= 0)
    for target in (int(np.flatnonzero(ref == 37)[0]), int(np.argmax(ref)), 7):
        r = spbfs.bfs(g, 7, target=target)
        stop = int(ref[target])
        np.testing.assert_array_equal(r.levels, np.where(ref <= stop, ref, -1))
        assert r.stopped == "target" and len(r.stats) == stop


@pytest.mark.parametrize("output", ["levels", "parents", "both"])
def test_output_selects_the_arrays(output: str) -> None:
    src, dst, n = _lux_like(500)
    a = _matrix(src, dst, n, False)
    r = spbfs.bfs(_graph(a, False, "csr"), 3, output=output)
    ref = _ref_levels(a, 3, False)
    if output == "parents":
        assert r.levels is None
    else:
        np.testing.assert_array_equal(r.levels, ref)
    if output == "levels":
        assert r.parents is None
    else:
        np.testing.assert_array_equal(r.parents, _min_parents(a, ref, 3))


def _engine(g: spbfs.Graph, dtype=None, threads=None) -> NumbaEngine:
    """The engine of ``g``; a forced int64 state runs the loop's generic form.

    The int64 state is a second compiled loop (what n >= 2**31 uses). Its generic form
    holds the csr paths too, so one int64 loop serves every test instead of two (the
    csr form is the same code with the dcsc branches cut): 30-40 s less cold compile.
    """
    slots = nonempty_columns(g.in_block) if g.in_block.format == "csr" else None
    e = NumbaEngine(g.out_block, g.in_block, np.asarray(g.out_degree), ScratchPool(),
                    slots, dtype=dtype, threads=threads)
    return _generic(e) if dtype is not None and np.dtype(dtype) == np.int64 else e


def _generic(engine: NumbaEngine) -> NumbaEngine:
    """``engine`` running the loop's generic form (format flags named, tested at run time)."""
    engine.formats = {"odcsc": engine.out[5], "idcsc": engine.inn[3]}
    return engine


def _run(engine: NumbaEngine, source: int, policy: DirectionPolicy, **kw):
    run = run_levels(engine, policy, source, **kw)
    stats = run.log.stats()
    parents, levels = engine.finish(stats.discovered, True, True)
    engine.release()
    return parents, levels, stats


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("direction", DIRECTIONS)
def test_int64_state_path_gives_the_same_search(fmt: str, direction: str) -> None:
    """The int64 state (what n >= 2**31 uses), forced on a small graph, small record too."""
    assert state_dtype(2**30, 5) == np.int32
    assert state_dtype(2**30 + 1, 5) == np.int64 and state_dtype(10, 2**31) == np.int64
    src, dst, n = _edges(gen.kronecker(10, 16, seed=9))
    a = _matrix(src, dst, n, False)
    g = _graph(a, False, fmt)
    source = int(np.argmax(np.diff(a.indptr)))
    pol = DirectionPolicy(direction)
    results = []
    for dtype, record, threads in ((None, 4096, None), (np.int64, 4096, 2), (np.int64, 2, 1)):
        e = _engine(g, dtype, threads)
        e.record = record
        e.st, e.st_t = e.st[:record], e.st_t[:record]
        assert e.state.dtype == (np.int32 if dtype is None else np.int64)
        results.append(_run(e, source, pol))
    levels = _ref_levels(a, source, False)
    for parents, lv, stats in results:
        np.testing.assert_array_equal(lv, levels)
        np.testing.assert_array_equal(parents, _min_parents(a, levels, source))
        np.testing.assert_array_equal(stats.direction, results[0][2].direction)


def test_one_level_steps_equal_the_compiled_loop() -> None:
    """Without ``levels_run`` the driver calls topdown/bottomup per level: same search."""
    src, dst, n = _edges(gen.kronecker(12, 16, seed=1))
    a = _matrix(src, dst, n, False)
    g = _graph(a, False, "dcsc")
    source = int(np.argmax(np.diff(a.indptr)))
    fused = _run(_engine(g), source, DirectionPolicy())
    stepped_engine = _engine(g)
    stepped_engine.levels_run = None
    stepped = _run(stepped_engine, source, DirectionPolicy())
    for x, y in zip(fused, stepped[:2], strict=False):
        np.testing.assert_array_equal(x, y)
    for field in ("frontier", "discovered", "edges", "direction"):
        np.testing.assert_array_equal(getattr(fused[2], field), getattr(stepped[2], field))


def test_parallel_topdown_keeps_the_smallest_parent() -> None:
    """Large top-down levels split over threads (threshold forced to 0)."""
    src, dst, n = _edges(gen.kronecker(11, 16, seed=6))
    a = _matrix(src, dst, n, False)
    g = _graph(a, False, "csr")
    levels = _ref_levels(a, 0, False)
    for nparts in (2, 3, 5):
        e = _engine(g, threads=nparts)
        e.par_topdown = 0
        parents, lv, _ = _run(e, 0, DirectionPolicy("top-down"))
        np.testing.assert_array_equal(lv, levels)
        np.testing.assert_array_equal(parents, _min_parents(a, levels, 0))


def _same_search(got, want) -> None:
    for x, y in zip(got[:2], want[:2], strict=True):
        np.testing.assert_array_equal(x, y)
    for field in ("frontier", "discovered", "edges", "direction"):
        np.testing.assert_array_equal(getattr(got[2], field), getattr(want[2], field))


def _graph_case(name: str, fmt: str):
    """GRAPHS[name] as (matrix, graph in ``fmt``, n, directed)."""
    src, dst, n, directed = GRAPHS[name]()
    a = _matrix(src, dst, n, directed)
    return a, _graph(a, directed, fmt), n, directed


def _first_and_hub(a: sp.csr_matrix, directed: bool):
    """(source, reference levels) from the first vertex with an edge and from the hub."""
    deg = np.diff(a.indptr)
    for source in (int(np.flatnonzero(deg)[0]), int(np.argmax(deg))):
        yield source, _ref_levels(a, source, directed)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_claims_with_and_without_branches_give_one_search(fmt: str, name: str) -> None:
    """The serial top-down claim's two forms (chosen by the graph's average degree) give the
    same parents, levels and counts, also where the last level fills the queue."""
    a, g, n, directed = _graph_case(name, fmt)
    for source, levels in _first_and_hub(a, directed):
        runs = []
        for unbranched in (False, True):
            e = _engine(g, threads=1)
            e.unbranched = unbranched
            runs.append(_run(e, source, DirectionPolicy("top-down")))
        np.testing.assert_array_equal(runs[0][1], levels)
        np.testing.assert_array_equal(runs[0][0], _min_parents(a, levels, source))
        _same_search(runs[1], runs[0])
    e = _engine(g)
    assert e.unbranched == (e.total_degree < nbk.UNBRANCHED_DEGREE * n or not e.regular)


def test_branches_kept_only_where_degrees_are_regular() -> None:
    """The serial claim keeps its branches on a graph of low-varying degree (a grid, whose
    claims repeat one pattern) and drops them where degrees vary (a mesh, a Kronecker graph)
    or are low (a path); the graph keeps the answer for its next searches."""
    from spbfs.search.numba_engine import regular_degrees

    assert regular_degrees(np.array([0, 4, 4, 4, 4, 4, 4, 4, 4, 4, 3]))  # 9 of 10 with edges
    assert not regular_degrees(np.array([4, 4, 4, 4, 4, 4, 4, 4, 3, 3]))
    assert regular_degrees(np.zeros(5, np.int64)) and regular_degrees(np.zeros(0, np.int64))
    star = np.ones(1000, np.int64)
    star[0] = 1 << 40  # a hub's degree far above n: no count per degree value is made
    assert regular_degrees(star) and not regular_degrees(star[:5])
    cases = {"grid": (gen.grid2d(60, 60), False), "mesh": (gen.fe_mesh(3000, seed=1), True),
             "kronecker": (gen.kronecker(10, 16, seed=1), True)}
    for name, (el, unbranched) in cases.items():
        g = spbfs.Graph.from_edgelist(el)
        assert _engine(g).unbranched == unbranched, name
        spbfs.bfs(g, 0)
        assert g._search_cache["regular_out"] == (not unbranched), name
    path = spbfs.Graph.from_edges(np.arange(99), np.arange(1, 100), 100, directed=False)
    assert _engine(path).regular and _engine(path).unbranched  # regular, but degree 2


def test_strided_tells_a_wavefront_from_scattered_frontiers() -> None:
    """A frontier read at one stride (a grid's wavefront from a corner) skips the prefetch;
    one odd step among the sampled pairs is tolerated, two are not; a diamond (a grid's
    wavefront from its centre), scattered ids and tiny frontiers are not strided."""
    wave = np.arange(5, 5 + 999 * 700, 999).astype(np.int32)
    assert nbk._strided(wave, 0, wave.shape[0])
    assert nbk._strided(wave, 100, 400)
    gap = (wave.shape[0] - 1) // nbk._STRIDE_SAMPLES  # pairs (j * gap, j * gap + 1) are read
    bent = wave.copy()
    bent[16 * gap + 1:] += 7
    assert nbk._strided(bent, 0, bent.shape[0])
    bent[8 * gap + 1:] += 7
    assert not nbk._strided(bent, 0, bent.shape[0])
    rng = np.random.default_rng(5)
    assert not nbk._strided(rng.permutation(wave), 0, wave.shape[0])
    rows = np.arange(300, 701)
    half = 200 - np.abs(rows - 500)
    diamond = np.stack([rows * 1000 + 500 - half, rows * 1000 + 500 + half], 1).ravel()
    assert not nbk._strided(diamond.astype(np.int32), 0, diamond.shape[0])
    assert not nbk._strided(wave, 0, 3)


def test_serial_kernels_with_and_without_prefetch_claim_alike() -> None:
    """_topdown_strided (no prefetch), _topdown_free (no degree sum) and _topdown_all claim
    the same vertices with the same parents and counts, level after level of a grid from
    its corner and its centre; _topdown_all's degree sum is the new vertices' one."""
    src, dst, n = _edges(gen.grid2d(60, 50))
    g = _graph(_matrix(src, dst, n, False), False, "csr")
    ptr, ind, jc, _ = g.out_block.kernel_view
    deg = np.asarray(g.out_degree)
    bits = (n - 1).bit_length()
    strided_levels = 0
    for source in (0, 25 * 60 + 30):
        runs = []
        for kernel in (nbk._topdown_all, nbk._topdown_strided, nbk._topdown_free):
            state = (-1 - deg).astype(np.int32)
            queue = np.empty(n + 1, np.int32)
            state[source], queue[0] = source, source
            head, tail, depth, counts = 0, 1, 0, []
            while tail > head:
                depth += 1
                strided_levels += kernel is nbk._topdown_all and nbk._strided(queue, head, tail)
                k, scanned, degsum = kernel(ptr, ind, jc, jc, 0, False, queue, head, tail,
                                            state, depth << bits, queue, tail)
                new = queue[tail:tail + k]
                assert degsum == (int(deg[new].sum()) if kernel is nbk._topdown_all else 0)
                assert nbk._degree_sum(ptr, jc, jc, 0, False, queue, tail, tail + k) == \
                    int(deg[new].sum())
                counts.append((k, scanned))
                head, tail = tail, tail + k
            runs.append((state, queue[:tail], counts))
        for run in runs[1:]:
            np.testing.assert_array_equal(run[0], runs[0][0])
            np.testing.assert_array_equal(run[1], runs[0][1])
            assert run[2] == runs[0][2]
    assert strided_levels > 20  # the corner's wavefront took the strided kernel's path


@pytest.mark.parametrize("name", ["grid", "kronecker", "lux_like"])
def test_csr_kernels_of_their_own_give_the_generic_search(name: str) -> None:
    """search_levels with its format flags left out (compile-time False: csr kernels of
    their own) and named as False (the kernels that test them at run time) give one search."""
    a, g, _, directed = _graph_case(name, "csr")
    for source, levels in _first_and_hub(a, directed):
        want = _run(_engine(g, threads=2), source, DirectionPolicy())
        np.testing.assert_array_equal(want[1], levels)
        e = _generic(_engine(g, threads=2))
        assert e.formats == {"odcsc": False, "idcsc": False}
        _same_search(_run(e, source, DirectionPolicy()), want)


def test_free_new_bounds_the_levels_that_cannot_switch() -> None:
    """kfree * max degree * gamma stays below n; a forced direction, a guard that never
    holds (gamma not positive, NaN, or so small that it overflows) free every level; an
    infinite gamma (the guard always holds) none."""
    src, dst, n = _edges(gen.grid2d(40, 30))
    e = _engine(_graph(_matrix(src, dst, n, False), False, "csr"))
    assert e.max_degree == 4
    for gamma in (DirectionPolicy.gamma, 32.0):
        k = e.free_new(DirectionPolicy(gamma=gamma))
        assert k > 0 and k * 4 * gamma < n <= (k + 2) * 4 * gamma
    assert e.free_new(DirectionPolicy("top-down")) == n + 1
    assert e.free_new(DirectionPolicy("bottom-up")) == n + 1
    for gamma in (0.0, -1.0, float("nan"), 1e-300, 5e-324):
        assert e.free_new(DirectionPolicy(gamma=gamma)) == n + 1, gamma
    assert e.free_new(DirectionPolicy(gamma=float("inf"))) == 0
    e.max_degree = 0
    assert e.free_new(DirectionPolicy()) == n + 1


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_degree_sums_left_out_give_one_search(fmt: str, name: str) -> None:
    """Serial top-down levels that leave their degree sum out (fewer new vertices than
    ``free_new``) give the search that sums every level: the same parents, levels,
    counts and directions, and the same m_u and m_f in the loop's scalars after it, in
    serial and team levels, across calls of the compiled loop, with the estimated m_f
    choosing serial, team or parallel levels."""
    a, g, _, directed = _graph_case(name, fmt)
    # gamma = 1 (the default): the guard then needs m_f >= n, and most levels of these
    # small graphs leave the sum out (with 32, only the few-vertex levels of the larger ones).
    policies = [DirectionPolicy(), DirectionPolicy(gamma=32.0), DirectionPolicy("top-down")]
    left_out = 0
    for source, levels in _first_and_hub(a, directed):
        for policy in policies:
            for threads, record in ((1, 4096), (2, 3)):
                runs = []
                for free in (True, False):
                    e = _engine(g, threads=threads)
                    e.team_topdown = 64
                    e.par_topdown = 1 << 9
                    e.record = record
                    e.st, e.st_t = e.st[:record], e.st_t[:record]
                    kfree = e.free_new(policy)
                    if not free:
                        e.free_new = lambda policy: 0
                    out = _run(e, source, policy)
                    runs.append((out, e.sv[[nbk.SV_MU, nbk.SV_MF]].copy()))
                    if free:
                        left_out += int((out[2].discovered[out[2].direction == 0]
                                         < kfree).sum())
                np.testing.assert_array_equal(runs[0][0][1], levels)
                _same_search(runs[0][0], runs[1][0])
                np.testing.assert_array_equal(runs[0][1], runs[1][1])
    assert left_out > 0


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_levels_past_the_stamps_give_one_search(fmt: str, name: str) -> None:
    """A search deeper than the stamps a state word holds strips them and counts again:
    with 1, 2 or 3 stamps (a strip every level or every few) the parents, levels and
    per-level counts are the default's, in serial, parallel and team levels, both
    directions, either dtype, and across calls of the compiled loop (a record of 3)."""
    a, g, _, directed = _graph_case(name, fmt)
    for source, levels in _first_and_hub(a, directed):
        for direction in ("auto", "top-down", "bottom-up"):
            want = _run(_engine(g, threads=1), source, DirectionPolicy(direction))
            np.testing.assert_array_equal(want[1], levels)
            np.testing.assert_array_equal(want[0], _min_parents(a, levels, source))
            for stamps, dtype, threads, record in ((1, None, 1, 4096), (2, np.int64, 2, 3),
                                                   (3, None, 2, 4096)):
                e = _engine(g, dtype, threads=threads)
                e.stamps = stamps
                e.team_topdown = 1
                e.par_topdown = 1 << 9
                e.record = record
                e.st, e.st_t = e.st[:record], e.st_t[:record]
                _same_search(_run(e, source, DirectionPolicy(direction)), want)
                if int(levels.max()) > stamps + 1:
                    assert e.sv[nbk.SV_REBASE] > 0


def test_state_words_hold_the_ids_and_a_stamp() -> None:
    from spbfs.search.numba_engine import id_bits
    assert [id_bits(n) for n in (1, 2, 3, 4, 5, 2**20, 2**20 + 1)] == [1, 1, 2, 2, 3, 20, 21]
    src, dst, n = _edges(gen.grid2d(1000, 3))
    g = _graph(_matrix(src, dst, n, False), False, "csr")
    e = _engine(g)
    assert e.bits == 12 and e.stamps == 2**19 - 1  # int32: 31 bits, 12 for the ids
    assert (e.stamps << e.bits) + n - 1 <= np.iinfo(np.int32).max
    e64 = _engine(g, np.int64)
    assert (e64.stamps << e64.bits) + n - 1 <= np.iinfo(np.int64).max
    e.release()
    e64.release()


def _shuffled_grid() -> tuple[np.ndarray, np.ndarray, int, bool]:
    """A grid with its vertices numbered at random: no locality for bands."""
    src, dst, n = _edges(gen.grid2d(300, 260))
    perm = np.random.default_rng(8).permutation(n)
    return perm[src], perm[dst], n, False


TEAM_GRAPHS = {
    # Wavefronts of a few hundred vertices, from the centre and from a corner: split in
    # bands (ids along space); numbered at random: in chunks.
    "grid": lambda: (*_edges(gen.grid2d(300, 260)), False),
    "grid_shuffled": _shuffled_grid,
    "kronecker": GRAPHS["kronecker"],
    "directed": lambda: (*_edges(gen.erdos_renyi(6000, m=20000, directed=True, seed=4)),
                         True),
    "lux_like": GRAPHS["lux_like"],  # frontiers too small for a team: the serial levels
}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", sorted(TEAM_GRAPHS))
def test_team_levels_give_the_serial_search(fmt: str, name: str) -> None:
    """Top-down levels on a team of two threads (edge threshold forced to 1): the parents,
    levels and per-level counts of the one-thread search, with either state dtype."""
    src, dst, n, directed = TEAM_GRAPHS[name]()
    a = _matrix(src, dst, n, directed)
    g = _graph(a, directed, fmt)
    deg = np.diff(a.indptr)
    teamed = banded = 0
    for source in (int(np.flatnonzero(deg)[0]), int(np.argmax(deg)), n // 2 + 130):
        levels = _ref_levels(a, source, directed)
        for direction in ("auto", "top-down"):
            want = _run(_engine(g, threads=1), source, DirectionPolicy(direction))
            np.testing.assert_array_equal(want[1], levels)
            for dtype in (None, np.int64):
                e = _engine(g, dtype, threads=2)
                e.team_topdown = 1
                _same_search(_run(e, source, DirectionPolicy(direction)), want)
                teamed += int(e.sv[nbk.SV_TEAM])
                banded += int(e.sv[nbk.SV_BANDS])
    assert (teamed > 0) == (name != "lux_like")
    if name == "grid":
        assert banded > teamed // 2, (banded, teamed)  # bands, the pairs across the cut
    elif name in ("grid_shuffled", "directed"):
        # Ids without locality: a team run's first level, in bands, sends too many pairs,
        # and chunks take the rest of the run.
        assert banded < teamed, (banded, teamed)
        if name == "grid_shuffled":  # long runs of team levels
            assert banded < teamed // 4, (banded, teamed)


@pytest.mark.parametrize("direction", ["auto", "top-down"])
def test_no_team_on_a_small_directed_graph_whatever_the_direction(direction: str) -> None:
    """A directed graph of fewer vertices than a team run's reach of edges runs its
    top-down levels without a team, forced top-down as under the policy; a larger one
    gets teams. The search is the serial one either way."""
    for n, m, teamed in ((6000, 20000, False), (70000, 233000, True)):
        src, dst, n = _edges(gen.erdos_renyi(n, m=m, directed=True, seed=4))
        g = _graph(_matrix(src, dst, n, True), True, "csr")
        source = int(np.argmax(np.asarray(g.out_degree)))
        want = _run(_engine(g, threads=1), source, DirectionPolicy(direction))
        # With its in-degrees, as spbfs.bfs makes it for a directed graph.
        e = NumbaEngine(g.out_block, g.in_block, np.asarray(g.out_degree), ScratchPool(),
                        nonempty_columns(g.in_block), threads=2,
                        in_deg=np.asarray(g.in_degree))
        e.team_topdown = 1
        _same_search(_run(e, source, DirectionPolicy(direction)), want)
        assert (int(e.sv[nbk.SV_TEAM]) > 0) is teamed, (n, direction)


@pytest.mark.parametrize("name", ["grid", "grid_shuffled"])
def test_band_runs_stay_on_the_team_past_the_parallel_threshold(name: str) -> None:
    """A run of team levels in bands keeps levels of up to _BAND_REACH times par_topdown
    edges on the team; a run in chunks (ids at random) leaves at par_topdown. The search
    is the serial one either way."""
    src, dst, n, directed = TEAM_GRAPHS[name]()
    a = _matrix(src, dst, n, directed)
    g = _graph(a, directed, "csr")
    source = n // 2 + 130
    want = _run(_engine(g, threads=1), source, DirectionPolicy("top-down"))
    e = _engine(g, threads=2)
    e.team_topdown = 1
    # The wavefront's levels pass through [256 vertices, par_topdown edges), where a run
    # starts, and grow to two or three times that.
    e.par_topdown = 1280
    _same_search(_run(e, source, DirectionPolicy("top-down")), want)
    frontier, edges = want[2].frontier, want[2].edges
    fits = frontier >= nbk._TEAM_VERTICES
    below = int((fits & (edges < e.par_topdown)).sum())
    beyond = int((fits & (edges >= e.par_topdown)
                  & (edges < nbk._BAND_REACH * e.par_topdown)).sum())
    assert below > 0 and beyond > 0, (below, beyond)
    teamed = int(e.sv[nbk.SV_TEAM])
    if name == "grid":
        assert teamed == below + beyond == int(e.sv[nbk.SV_BANDS]), (teamed, below, beyond)
    else:
        assert 0 < teamed <= below, (teamed, below)


_BOUNDS_SCRIPT = """
import sys
sys.path.insert(0, sys.argv[1])
from numba.core.caching import NullCache
from numba.core.dispatcher import Dispatcher
import test_numba_engine as t
from spbfs.direction import DirectionPolicy
from spbfs.kernels import bfs_numba as nbk
from spbfs.kernels.bitmaps import first_member, first_member_blocked

# Bounds checks on the team levels and every kernel they call, and on the loop that
# calls them (compiled here, so that it links the checked team code); the loop's other
# kernels load from numba's cache as they are. Nothing checked is written to the cache.
checked, todo = {}, [nbk._team_levels]
while todo:
    kernel = todo.pop()
    if kernel.py_func not in checked:
        checked[kernel.py_func] = kernel
        todo += [k for k in map(vars(sys.modules[kernel.py_func.__module__]).get,
                                kernel.py_func.__code__.co_names) if isinstance(k, Dispatcher)]
for kernel in [nbk.search_levels, *checked.values()]:
    assert not kernel.overloads, kernel  # not compiled yet in this process
    kernel.targetoptions["boundscheck"] = True
    kernel._cache = NullCache()
assert {"_team_lead", "_team_help", "_lead_bands", "_topdown_band"} <= {
    f.__name__ for f in checked}, sorted(f.__name__ for f in checked)
banded = 0
for name in ("directed", "grid"):
    src, dst, n, directed = t.TEAM_GRAPHS[name]()
    a = t._matrix(src, dst, n, directed)
    for fmt in ("csr", "dcsc"):
        g = t._graph(a, directed, fmt)
        want = t._run(t._generic(t._engine(g, threads=1)), 0, DirectionPolicy("top-down"))
        e = t._generic(t._engine(g, threads=2))
        e.team_topdown = 1
        t._same_search(t._run(e, 0, DirectionPolicy("top-down")), want)
        banded += int(e.sv[nbk.SV_BANDS])
assert banded > 0
assert nbk._team_levels.overloads and nbk.search_levels.overloads
print("OK")
"""


def test_team_levels_stay_inside_their_arrays() -> None:
    """Team levels (bands and chunks, csr and dcsc with empty columns) compiled with
    bounds checks: a read past an array raises instead of passing unseen (a band's
    prefetch once read a dcsc block's pointers by vertex id).

    Every block runs the loop's generic form, whose format flags are run-time values: it
    holds the csr paths as well. Only the team kernels (and what they call) and the loop
    compile here, with bounds checks; the loop's other kernels (serial and parallel
    levels, bottom-up) come from numba's cache, unchecked: a third of the compile of
    checking everything (``NUMBA_BOUNDSCHECK=1``), which a loaded machine once stretched
    past the time limit.
    """
    import subprocess
    import sys
    from pathlib import Path

    try:
        # An index error inside a team's region leaves the other thread waiting for it:
        # a hang, ended here.
        done = subprocess.run([sys.executable, "-c", _BOUNDS_SCRIPT, str(Path(__file__).parent)],
                              capture_output=True, text=True, timeout=240)
    except subprocess.TimeoutExpired:
        raise AssertionError("bounds-checked team levels hung: an index error in a team "
                             "region (rerun the script by hand to see it)") from None
    assert done.returncode == 0 and "OK" in done.stdout, done.stderr[-3000:]


def test_team_levels_stop_and_resume_like_the_serial_loop() -> None:
    """max_depth, target and a full record end a team run where they end the serial one."""
    src, dst, n = _edges(gen.grid2d(400, 300))
    a = _matrix(src, dst, n, False)
    g = _graph(a, False, "csr")
    ref = _ref_levels(a, 0, False)
    for kw in ({"max_depth": 290}, {"target": int(np.flatnonzero(ref == 300)[0])}, {}):
        want = _run(_engine(g, threads=1), 0, DirectionPolicy("top-down"), **kw)
        for record in (4096, 3):
            e = _engine(g, threads=2)
            e.team_topdown = 1
            e.record = record
            e.st, e.st_t = e.st[:record], e.st_t[:record]
            _same_search(_run(e, 0, DirectionPolicy("top-down"), **kw), want)
            assert e.sv[nbk.SV_TEAM] > 0


def test_team_levels_on_one_thread_do_not_wait_for_a_helper() -> None:
    """A region whose two halves run on one thread, one after the other, still ends."""
    src, dst, n = _edges(gen.grid2d(400, 300))
    a = _matrix(src, dst, n, False)
    g = _graph(a, False, "dcsc")
    want = _run(_engine(g, threads=1), 5, DirectionPolicy("top-down"))
    before = nb.get_num_threads()
    nb.set_num_threads(1)
    try:
        e = _engine(g, threads=2)
        e.team_topdown = 1
        got = _run(e, 5, DirectionPolicy("top-down"))
    finally:
        nb.set_num_threads(before)
    _same_search(got, want)
    assert e.sv[nbk.SV_TEAM] > 0


@nb.njit(parallel=True)
def _contend(counter, low, values):
    for t in nb.prange(2):
        for i in range(t, values.shape[0], 2):
            atomic_add(counter, 0, 1)
            s = low[0]
            while values[i] < s:  # an atomic min by compare-and-swap
                old = atomic_cas(low, 0, s, values[i])
                if old == s:
                    break
                s = old
    store_release(counter, 1, load_acquire(counter, 0))


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_atomics_hold_under_two_threads(dtype) -> None:
    values = np.random.default_rng(3).integers(-10**9, 10**9, 200_000).astype(dtype)
    counter = np.zeros(2, dtype)
    low = np.array([np.iinfo(dtype).max], dtype)
    _contend(counter, low, values)
    assert counter.tolist() == [values.size, values.size]
    assert low[0] == values.min()


def test_scratch_reuse_leaves_no_state_behind() -> None:
    """Repeated searches on one graph (pooled scratch), stops included, stay exact."""
    src, dst, n = _edges(gen.kronecker(10, 8, seed=2))
    a = _matrix(src, dst, n, False)
    g = _graph(a, False, "csr")
    deg = np.diff(a.indptr)
    for source in [*np.flatnonzero(deg)[:6].tolist(), int(np.argmax(deg))]:
        spbfs.bfs(g, int(source), max_depth=1)
        r = spbfs.bfs(g, int(source))
        np.testing.assert_array_equal(r.levels, _ref_levels(a, int(source), False))


def test_a_kept_engine_serves_the_next_search_of_its_direction() -> None:
    """The engine of a finished search is kept with the graph and serves its next search
    the same way (reverse or not); one the other way hands its arrays on. Every search
    stays exact, stops and earlier results included, and so do concurrent ones."""
    import threading

    src, dst, n = _edges(gen.kronecker(10, 8, seed=2))
    a = _matrix(src, dst, n, True)
    g = _graph(a, True, "csr")
    deg = np.diff(a.indptr)
    sources = [int(v) for v in np.flatnonzero(deg)[:5]]
    first = spbfs.bfs(g, sources[0])
    pool = g._search_cache["numba_scratch"]
    kept = pool._engine
    assert kept is not None
    for s in sources[1:]:
        spbfs.bfs(g, s, target=int(np.argmin(deg)))
        r = spbfs.bfs(g, s)
        assert pool._engine is kept  # the same engine, searching forward again
        _check(a, g, s, True, r)
    back = spbfs.bfs(g, sources[1], reverse=True)
    assert pool._engine is not kept  # another direction: another engine
    _check(a, g, sources[1], True, back, reverse=True)
    again = spbfs.bfs(g, sources[2], max_depth=2)
    np.testing.assert_array_equal(again.levels, np.where(
        _ref_levels(a, sources[2], True) <= 2, _ref_levels(a, sources[2], True), -1))
    _check(a, g, sources[0], True, first)  # never written over by the searches after it
    _check(a, g, sources[1], True, back, reverse=True)
    results: dict[int, spbfs.BFSResult] = {}

    def search(s: int) -> None:
        for _ in range(20):
            results[s] = spbfs.bfs(g, s)

    workers = [threading.Thread(target=search, args=(s,)) for s in sources[:3]]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    for s in sources[:3]:
        _check(a, g, s, True, results[s])


# -- the dcsc column index -----------------------------------------------------


def _lookup_all(block) -> None:
    aux, shift = block.column_index()
    ptr, _, jc, _ = block.kernel_view
    ncols = block.shape[1]
    assert aux.shape[0] <= 2 * max(block.nzc, 1) + 2
    start, stop = block.col_ranges(np.arange(ncols, dtype=np.int64))
    for u in range(ncols):
        lo, hi = _lookup(ptr, jc, aux, shift, u)
        assert (hi - lo) == (stop[u] - start[u])
        if hi > lo:
            assert lo == start[u]


_lookup = __import__("numba").njit(
    lambda ptr, jc, aux, shift, u: dcsc_column_range(ptr, jc, aux, shift, u))


@pytest.mark.parametrize("cols", [
    [], [0], [6], [99], list(range(100)), [*range(40), 99],  # clustered: bisection
    [3, 50, 51, 52, 97], list(range(0, 100, 7)),
])
def test_dcsc_column_index_finds_every_column(cols: list[int]) -> None:
    cols_a = np.repeat(np.asarray(cols, np.int64), 2)
    rows = np.arange(cols_a.size, dtype=np.int64) % 5
    block = block_from_edges("dcsc", rows, cols_a, (5, 100))
    _lookup_all(block)
    assert block.column_index() is block.column_index()  # built once


def test_dcsc_column_index_on_hypersparse_and_empty_blocks() -> None:
    rng = np.random.default_rng(3)
    cols = rng.choice(1 << 20, 30, replace=False)
    block = block_from_edges("dcsc", np.zeros(30, np.int64), cols, (1, 1 << 20))
    aux, shift = block.column_index()
    assert aux.shape[0] <= 62 and (1 << 20) >> shift <= 60
    ptr, _, jc, _ = block.kernel_view
    for u in list(cols) + list(rng.integers(0, 1 << 20, 200)):
        lo, hi = _lookup(ptr, jc, aux, shift, int(u))
        assert (hi - lo) == int(u in set(cols.tolist()))
    empty = block_from_edges("dcsc", [], [], (4, 0))
    assert empty.column_index()[0].tolist() == [0, 0]
    _lookup_all(block_from_edges("dcsc", [], [], (4, 9)))
    _lookup_all(block_from_edges("dcsc", [2], [0], (4, 1)))


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_later_smaller_frontier_vertex_takes_the_claim(fmt: str) -> None:
    """The frontier [5, 3] (found from [1, 2]) is taken in that order: 5 claims 7
    first, and 3, the smaller parent, must take the claim over."""
    src = np.array([0, 0, 1, 2, 5, 3, 7], np.int64)
    dst = np.array([1, 2, 5, 3, 7, 7, 8], np.int64)
    n = 9
    a = _matrix(src, dst, n, False)
    r = spbfs.bfs(_graph(a, False, fmt), 0, direction="top-down")
    assert r.parents.tolist() == [0, 0, 0, 2, -1, 1, -1, 3, 7]
    assert r.levels.tolist() == [0, 1, 1, 2, -1, 2, -1, 3, 4]


def test_first_sweep_lists_its_candidates_only_where_columns_are_empty() -> None:
    """sweep_slots keeps the non-empty columns where at least an eighth are empty; a
    search gives the same answer reading the list or every slot."""
    from spbfs.search.numba_engine import EMPTY_SHARE, sweep_slots

    src, dst, n = _edges(gen.rmat(10, 8, seed=4))
    full = _graph(_matrix(src, dst, n, True), True, "csr")
    with_edges = nonempty_columns(full.in_block).shape[0]
    assert with_edges > (1 - EMPTY_SHARE) * n  # few columns without in-edges
    assert sweep_slots(full.in_block) is None
    # The same arcs among the first quarter of the ids of a graph four times as large.
    sparse = _graph(_matrix(src, dst, 4 * n, True), True, "csr")
    np.testing.assert_array_equal(sweep_slots(sparse.in_block), nonempty_columns(sparse.in_block))
    for g, a in ((full, _matrix(src, dst, n, True)), (sparse, _matrix(src, dst, 4 * n, True))):
        source = int(np.argmax(np.diff(a.indptr)))
        runs = []
        for slots in (nonempty_columns(g.in_block), None):
            e = NumbaEngine(g.out_block, g.in_block, np.asarray(g.out_degree), ScratchPool(),
                            slots, threads=1, in_deg=g.in_degree)
            parents, levels, stats = _run(e, source, DirectionPolicy("bottom-up"))
            assert stats.direction[0] == BOTTOM_UP  # the first sweep read the slots
            runs.append((parents, levels))
        ref = _ref_levels(a, source, True)
        for parents, levels in runs:
            np.testing.assert_array_equal(levels, ref)
            np.testing.assert_array_equal(parents, _min_parents(a, ref, source))


def test_the_loop_writes_the_results_where_it_ends_the_search() -> None:
    """An exhausted search's results come from the compiled loop (sv[SV_DONE]); with a
    target to test after it, or only levels asked for, they are the same as finish()'s."""
    src, dst, n = _edges(gen.kronecker(10, 16, seed=5))
    a = _matrix(src, dst, n + 1, False)  # vertex n has no edges
    g = _graph(a, False, "csr")
    source = int(np.argmax(np.diff(a.indptr)))
    ref = _ref_levels(a, source, False)
    want = _min_parents(a, ref, source)
    pool = ScratchPool()
    e = NumbaEngine(g.out_block, g.in_block, np.asarray(g.out_degree), pool,
                    nonempty_columns(g.in_block), threads=1)
    parents, levels, _ = _run(e, source, DirectionPolicy("auto"))
    assert e.sv[nbk.SV_DONE] == 1
    np.testing.assert_array_equal(levels, ref)
    np.testing.assert_array_equal(parents, want)
    parents, levels, _ = _run(e, source, DirectionPolicy("auto"), target=n)
    assert e.sv[nbk.SV_DONE] == 0  # finish() wrote them
    np.testing.assert_array_equal(levels, ref)
    np.testing.assert_array_equal(parents, want)
    e.output = (False, True)
    run = run_levels(e, DirectionPolicy("auto"), source)
    assert e.sv[nbk.SV_DONE] == 1
    none, levels = e.finish(run.log.stats().discovered, False, True)
    assert none is None
    np.testing.assert_array_equal(levels, ref)
    # The state was reset by the loop's pass: the next search starts clean.
    assert e.clean
    np.testing.assert_array_equal(e.state, -1 - np.asarray(g.out_degree))


@nb.njit
def _first_members(bits, ind, ptr, blocked):  # type: ignore[no-untyped-def]
    out = np.empty(ptr.shape[0] - 1, np.int64)
    for v in range(out.shape[0]):
        if blocked:
            out[v] = first_member_blocked(bits, ind, ptr[v], ptr[v + 1])
        else:
            out[v] = first_member(bits, ind, ptr[v], ptr[v + 1])
    return out


@pytest.mark.parametrize("density", [0.0, 0.05, 0.3, 0.5, 0.9, 1.0])
def test_the_member_test_by_four_finds_the_first_member(density: float) -> None:
    """first_member_blocked returns the first listed id whose bit is set (or the list's
    end), as the one-id scan does, for lists of 0 to 17 ids: shorter than a block, whole
    blocks, and blocks with a tail."""
    rng = np.random.default_rng(int(density * 100))
    n = 300
    lengths = np.tile(np.arange(18), 40)
    ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    ind = rng.integers(0, n, ptr[-1]).astype(np.int32)
    member = rng.random(n) < density
    bits = np.zeros((n + 63) // 64, np.uint64)
    for v in np.flatnonzero(member):
        bits[v // 64] |= np.uint64(1) << np.uint64(v % 64)
    want = np.array([next((e for e in range(lo, hi) if member[ind[e]]), hi)
                     for lo, hi in itertools.pairwise(ptr)])
    np.testing.assert_array_equal(_first_members(bits, ind, ptr, True), want)
    np.testing.assert_array_equal(_first_members(bits, ind, ptr, False), want)


def test_sweeps_in_the_band_test_by_four_and_give_the_reference_search() -> None:
    """A bottom-up level whose frontier's edges are a fifth to twice the unvisited ones
    tests four in-neighbours at a time (nbk.blocked_sweep); searches with such levels,
    directed and undirected, give scipy's levels and the smallest parents."""
    assert nbk.blocked_sweep(20, 100) and nbk.blocked_sweep(200, 100)
    assert not nbk.blocked_sweep(19, 100) and not nbk.blocked_sweep(201, 100)
    for directed, (src, dst, n) in ((True, _edges(gen.rmat(11, 13, seed=1))),
                                    (False, _edges(gen.kronecker(11, 16, seed=3)))):
        a = _matrix(src, dst, n, directed)
        g = _graph(a, directed, "csr")
        deg = np.asarray(g.out_degree)
        banded = 0
        for source in np.flatnonzero(deg > 0)[::97][:12]:
            r = spbfs.bfs(g, int(source))
            _check(a, g, int(source), directed, r)
            for level in np.flatnonzero(r.stats.direction == BOTTOM_UP):
                m_f = int(deg[r.levels == level].sum())
                m_u = int(deg[(r.levels > level) | (r.levels < 0)].sum())
                banded += bool(nbk.blocked_sweep(m_f, m_u))
        assert banded, directed  # the band was met: the searches ran the blocked test
