"""GPU BFS: the CUDA kernels and the vectorized cupy steps against numba and scipy.

Every GPU engine must give the numba backend's answer bit for bit: the same
parents (min-parent semantics make them unique), the same levels (checked
against ``scipy.sparse.csgraph`` too) and the same per-level statistics
(frontier sizes, vertices found, edges examined, directions), in every
direction mode and both storage formats. The GPU cases are marked ``gpu`` and
skipped where no GPU is usable; :func:`test_gpu_cases_on_the_standin` runs them
all on the CPU in a fresh interpreter under the strict cupy stand-in
(``tests/_cupy_standin.py``), whose ``RawModule`` checks every launch against
the kernel's C signature and emulates the kernels in numpy.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import DIRECTIONS, FORMATS
from scipy.sparse import csgraph

import spbfs
from spbfs import datasets, load_config
from spbfs import generators as gen
from spbfs.direction import DirectionPolicy
from spbfs.edges import EdgeList
from spbfs.kernels import bfs_cuda as sc
from spbfs.validate import validate_bfs_tree

HERE = Path(__file__).resolve().parent

ENGINES = ["cuda", "vectorized"]
gpu = pytest.mark.gpu


# --------------------------------------------------------------------------- helpers


@pytest.fixture(autouse=True)
def _gpu_direction_policy(monkeypatch):
    """The CPU references take the GPU's direction policy: Beamer's test alone.

    A GPU search has no first-sweep guard (``gamma`` is infinite there), so in
    'auto' mode its schedule, and with it the edges examined, differs from a
    CPU search with the guard; with the same policy every statistic must match.
    """
    monkeypatch.setattr(DirectionPolicy, "gamma", float("inf"))


@pytest.fixture(params=ENGINES)
def engine(request, monkeypatch):
    """Select the GPU engine the driver uses for backend 'cupy'; check it really ran."""
    driver = importlib.import_module("spbfs.bfs")  # the module: spbfs.bfs is the function

    if request.param == "cuda":
        # Whether or not the driver already dispatches to the kernels, this makes it
        # (for cupy only: the numpy backend runs the same class on numpy arrays).
        vectorized = driver.VectorizedEngine

        def factory(xp, out_block, in_block, deg, in_deg=None):
            if xp.__name__ == "cupy":
                return sc._CudaEngine(xp, out_block, in_block, deg)
            return vectorized(xp, out_block, in_block, deg, in_deg)

        monkeypatch.setattr(driver, "VectorizedEngine", factory)
    else:
        # The driver hands make_engine the graph's config; the tests' graphs are
        # shared by both engines, so the switch goes into that config here.
        make = sc.make_engine

        def disabled(xp, out_block, in_block, deg, config=None):
            cfg = (config or spbfs.Config()).replace(cuda_kernels=False)
            return make(xp, out_block, in_block, deg, cfg)

        monkeypatch.setattr(sc, "make_engine", disabled)
    before = sc._CudaEngine.searches
    yield request.param
    ran = sc._CudaEngine.searches - before
    if request.param == "cuda":
        assert ran > 0, "the CUDA engine never ran"
    else:
        assert ran == 0, "the CUDA engine ran although disabled"


def _graphs() -> dict[str, EdgeList]:
    k1 = gen.kronecker(9, 8, seed=11)
    k2 = gen.kronecker(8, 4, seed=12)
    shift = k1.n + 7  # seven isolated vertices between the pieces
    disconnected = EdgeList(
        np.concatenate([k1.src, k2.src + shift]),
        np.concatenate([k1.dst, k2.dst + shift]),
        shift + k2.n + 100,  # and a hundred after them
        directed=False,
    )
    rng = np.random.default_rng(7)
    hs = rng.choice(40_000, size=(2, 600))
    hypersparse = EdgeList(hs[0], hs[1], 40_000, directed=False)
    return {
        "kron10": gen.kronecker(10, 16, seed=3),
        "kron13": gen.kronecker(13, 16, seed=5),
        "grid2d": gen.grid2d(60, 40),
        "grid3d": gen.grid3d(12, 10, 9),
        "path": gen.path(700),
        "star": gen.star(5000),
        "disconnected": disconnected,
        "hypersparse": hypersparse,
        "er_directed": gen.erdos_renyi(3000, m=9000, seed=5, directed=True),
    }


GRAPHS = _graphs()
_CACHE: dict[tuple, spbfs.Graph] = {}


def _graph(name: str, backend: str, fmt: str = "csr", index_dtype: str = "auto") -> spbfs.Graph:
    key = (name, backend, fmt, index_dtype)
    if key not in _CACHE:
        cfg = spbfs.Config(format=fmt, backend=backend, index_dtype=index_dtype)
        _CACHE[key] = spbfs.Graph.from_edgelist(GRAPHS[name], config=cfg)
    return _CACHE[key]


def _sources(name: str, g: spbfs.Graph) -> list[int]:
    deg = np.asarray(g.out_degree if g.backend.name != "cupy" else g.out_degree.get())
    rng = np.random.default_rng(len(name))
    return sorted({0, g.n - 1, int(np.argmax(deg)), *rng.integers(0, g.n, 2).tolist()})


def _scipy_levels(edges: EdgeList, n: int, source: int, directed: bool, reverse: bool):
    src, dst = (edges.dst, edges.src) if reverse else (edges.src, edges.dst)
    a = sp.csr_matrix((np.ones(src.size), (src, dst)), shape=(n, n))
    d = csgraph.shortest_path(a, method="D", directed=directed, unweighted=True, indices=source)
    return np.where(np.isinf(d), -1, d).astype(np.int64)


def _min_parents(edges: EdgeList, levels: np.ndarray, source: int, directed: bool,
                 reverse: bool) -> np.ndarray:
    """The min_second answer computed independently: smallest in-neighbour one level up."""
    src, dst = (edges.dst, edges.src) if reverse else (edges.src, edges.dst)
    if not directed:
        src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])
    keep = (src != dst) & (levels[src] >= 0) & (levels[dst] == levels[src] + 1)
    big = np.iinfo(np.int64).max
    out = np.full(levels.size, big, dtype=np.int64)
    np.minimum.at(out, dst[keep], src[keep])
    out[out == big] = -1
    out[source] = source
    return out


def _same(r: spbfs.BFSResult, ref: spbfs.BFSResult) -> None:
    for name in ("parents", "levels"):
        a, b = getattr(r, name), getattr(ref, name)
        assert (a is None) == (b is None), name
        if a is not None:
            np.testing.assert_array_equal(a, b, err_msg=name)
    for name in ("frontier", "discovered", "edges", "direction"):
        np.testing.assert_array_equal(getattr(r.stats, name), getattr(ref.stats, name),
                                      err_msg=f"stats.{name}")
    assert r.stopped == ref.stopped


# --------------------------------------------------------------------------- no GPU needed


def test_kernel_source_is_fully_specialised():
    for dts in ((np.int32, np.int32, np.int32), (np.int64, np.int64, np.int64)):
        src = sc.kernel_source(*dts)
        for placeholder in ("IND_T", "PTR_T", "VID_T", "_V\n", "SMALL_V"):
            assert placeholder not in src
        for kernel in ("td_small", "td_large", "bu_step", "map_to_list", "list_to_map"):
            assert f"{kernel}(" in src


def test_gpu_cases_on_the_standin():
    """Every ``gpu`` case of this file, both engines, on the strict cupy stand-in."""
    from _cupy_standin import run_script

    run_script(__file__, str(HERE.parent))


def test_standin_checks_launches_against_the_c_signatures():
    """The stand-in's RawModule (not installed: its modules only) runs a kernel launched
    as its C signature says and refuses each way a GPU would take a launch wrongly."""
    from _cupy_standin import make

    cp = make()[0]["cupy"]
    code = sc.kernel_source(np.int32, np.int32, np.int32)
    fn = cp.RawModule(code=code, options=sc.OPTIONS).get_function("list_to_map")
    ids = np.array([1, 40, 3], dtype=np.int32)
    lst, bm = cp.asarray(ids), cp.zeros(3, dtype=np.uint32)
    fn((1,), (sc._CONV_THREADS,), (lst, np.int64(3), bm))
    want = np.zeros(3, dtype=np.uint32)
    np.bitwise_or.at(want, ids >> 5, np.uint32(1) << (ids & 31).astype(np.uint32))
    np.testing.assert_array_equal(cp.asnumpy(bm), want)
    bad = {
        "arguments": ((lst, np.int64(3)), TypeError),
        "not a device array": ((ids, np.int64(3), bm), TypeError),
        "kernel reads": ((lst.astype(np.int64), np.int64(3), bm), TypeError),
        "takes int64": ((lst, 3, bm), TypeError),
        "outside": ((lst, np.int64(4), bm), IndexError),
        "not contiguous": ((cp.asarray(np.repeat(ids, 2))[::2], np.int64(3), bm), ValueError),
    }
    for says, (args, error) in bad.items():
        with pytest.raises(error, match=says):
            fn((1,), (sc._CONV_THREADS,), args)
    with pytest.raises(ValueError, match="launch bound"):
        fn((1,), (sc._CONV_THREADS // 2,), (lst, np.int64(3), bm))


def test_make_engine_can_be_disabled():
    """The search's config decides (SPBFS_CUDA_KERNELS reaches it through load_config)."""
    cfg = load_config(environ={"SPBFS_CUDA_KERNELS": "0"})
    assert sc.make_engine(None, None, None, None, cfg) is None


# --------------------------------------------------------------------------- GPU


@gpu
def test_kernels_compile():
    assert sc.kernels_available()


@gpu
@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_matches_numba_and_scipy(engine, name, fmt, direction):
    edges = GRAPHS[name]
    g = _graph(name, "cupy", fmt)
    ref_g = _graph(name, "numba")
    for s in _sources(name, g):
        r = spbfs.bfs(g, s, direction=direction)
        ref = spbfs.bfs(ref_g, s, direction=direction)
        _same(r, ref)
        lv = _scipy_levels(edges, g.n, s, g.directed, False)
        np.testing.assert_array_equal(r.levels, lv)
        np.testing.assert_array_equal(r.parents, _min_parents(edges, lv, s, g.directed, False))
        validate_bfs_tree(edges, s, r.parents, r.levels, directed=g.directed)


@gpu
@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("fmt", FORMATS)
def test_directed_reverse(engine, fmt, direction):
    edges = GRAPHS["er_directed"]
    g = _graph("er_directed", "cupy", fmt)
    ref_g = _graph("er_directed", "numba")
    for s in _sources("er_directed", g):
        r = spbfs.bfs(g, s, direction=direction, reverse=True)
        _same(r, spbfs.bfs(ref_g, s, direction=direction, reverse=True))
        lv = _scipy_levels(edges, g.n, s, True, True)
        np.testing.assert_array_equal(r.levels, lv)
        np.testing.assert_array_equal(r.parents, _min_parents(edges, lv, s, True, True))


@gpu
def test_numpy_numba_cupy_identical_parents(engine):
    for name in ("kron10", "grid2d", "disconnected"):
        results = []
        for backend in ("numba", "numpy", "cupy"):
            g = _graph(name, backend)
            results.append(spbfs.bfs(g, 1).parents)
        np.testing.assert_array_equal(results[0], results[1])
        np.testing.assert_array_equal(results[0], results[2])


@gpu
def test_int64_indices(engine):
    g = _graph("kron10", "cupy", "csr", "int64")
    assert g.out_block.index_dtype == np.int64
    ref_g = _graph("kron10", "numba")
    for s in _sources("kron10", g):
        _same(spbfs.bfs(g, s), spbfs.bfs(ref_g, s))


@gpu
def test_large_topdown_frontiers(engine):
    # Forced top-down on kron13 has frontiers above SMALL: the cumsum/binary-search path.
    g = _graph("kron13", "cupy")
    ref_g = _graph("kron13", "numba")
    s = int(np.argmax(g.out_degree.get()))
    r = spbfs.bfs(g, s, direction="top-down")
    assert r.stats.frontier.max() > sc.SMALL
    _same(r, spbfs.bfs(ref_g, s, direction="top-down"))


@gpu
@pytest.mark.parametrize("output", ["both", "parents", "levels"])
def test_outputs_and_limits(engine, output):
    g = _graph("kron10", "cupy")
    ref_g = _graph("kron10", "numba")
    for kw in ({}, {"max_depth": 2}, {"max_depth": 0}, {"target": 5}):
        r = spbfs.bfs(g, 3, output=output, **kw)
        _same(r, spbfs.bfs(ref_g, 3, output=output, **kw))
    r = spbfs.bfs(_graph("path", "cupy"), 0, target=10, output=output)
    assert r.stopped == "target" and len(r.stats) == 10


@gpu
def test_graph_reused_across_searches_and_engines(engine):
    # Counters and buffers are per search: interleave sources and graphs.
    a, b = _graph("kron10", "cupy"), _graph("grid2d", "cupy", "dcsc")
    ra, rb = _graph("kron10", "numba"), _graph("grid2d", "numba")
    for s in (1, 2, 1):
        _same(spbfs.bfs(a, s), spbfs.bfs(ra, s))
        _same(spbfs.bfs(b, s), spbfs.bfs(rb, s))


@gpu
@pytest.mark.parametrize("fmt", FORMATS)
def test_road_network(engine, fmt):
    edges = datasets.edges("luxembourg_osm")  # bundled: never skipped for data
    g = spbfs.Graph.from_edgelist(edges, config=spbfs.Config(format=fmt, backend="cupy"))
    ref_g = spbfs.Graph.from_edgelist(edges, config=spbfs.Config(backend="numba"))
    for s in (0, edges.n // 2):
        r = spbfs.bfs(g, s)
        _same(r, spbfs.bfs(ref_g, s))
        assert len(r.stats) > 900


@gpu
def test_directed_schedule_weighs_in_edges(engine):
    """On digraphs the direction test weighs the in-edges of the unvisited vertices, in
    the fused kernel's own test too: levels as scipy's, parents and the direction of
    every level as numba's (whose schedule the numpy engine's equals, see
    ``test_vectorized_directed``), and the two-layer graphs on which weighing their
    out-edges would turn the other way."""
    from test_vectorized_directed import check_engine

    assert check_engine("cupy", float("inf")) > 0  # some schedules go bottom-up


def main() -> None:
    """The ``gpu`` cases under the stand-in (installed before anything imports cupy)."""
    sys.path.insert(0, str(HERE))
    import _cupy_standin as standin

    standin.install()
    # The outer run's options (workers, timings) are not this run's.
    rc = pytest.main([__file__, "-q", "-m", "gpu", "-o", "addopts=", "-p", "no:cacheprovider"])
    if rc == 0:
        print("STANDIN OK", flush=True)
    sys.exit(int(rc))


if __name__ == "__main__":
    main()
