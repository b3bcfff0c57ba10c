"""Tests for spbfs.graph500: search keys, edge counts, statistics, the benchmark loop."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest
from _reference import reference_bfs

from spbfs.edges import EdgeList
from spbfs.graph500 import (
    STAT_KEYS,
    BenchmarkResult,
    ProgressBar,
    nedge_statistics,
    progress_bar,
    run_benchmark,
    sample_roots,
    teps_statistics,
    time_statistics,
    traversed_edges,
)
from spbfs.validate import ValidationError, validate_bfs_tree

# --------------------------------------------------------------------------- helpers


def python_bfs(el: EdgeList, source: int,
               directed: bool = False) -> tuple[np.ndarray, np.ndarray]:
    return reference_bfs(el.n, el.src, el.dst, source, directed)


def edgelist(pairs, n, directed=None):
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    return EdgeList(pairs[:, 0], pairs[:, 1], n, directed=directed)


def degrees_without_loops(el: EdgeList) -> np.ndarray:
    keep = el.src != el.dst
    return (np.bincount(el.src[keep], minlength=el.n)
            + np.bincount(el.dst[keep], minlength=el.n))


# Component {0, 1, 2, 3}: 4 plain tuples, a duplicate (1, 0) and a self-loop (2, 2);
# component {4, 5}: one edge and a self-loop; 6 has only a self-loop; 7 is isolated.
MESSY = edgelist([(0, 1), (1, 2), (2, 3), (3, 0), (1, 0), (2, 2), (4, 5), (5, 5), (6, 6)], 8)


# --------------------------------------------------------------------------- sample_roots


def test_sample_roots_distinct_nonisolated_deterministic():
    rng = np.random.default_rng(0)
    deg = rng.integers(0, 3, 1000)
    roots = sample_roots(deg, 64, seed=5)
    assert roots.dtype == np.int64
    assert roots.shape == (64,)
    assert len(set(roots.tolist())) == 64
    assert (deg[roots] >= 1).all()
    np.testing.assert_array_equal(roots, sample_roots(deg, 64, seed=5))
    assert not np.array_equal(roots, sample_roots(deg, 64, seed=6))
    np.testing.assert_array_equal(sample_roots(deg), sample_roots(deg))  # fixed default seed
    gen = np.random.default_rng(1)
    assert len(sample_roots(deg, 10, seed=gen)) == 10


def test_sample_roots_self_loop_only_vertex_excluded():
    deg = degrees_without_loops(MESSY)
    np.testing.assert_array_equal(deg, [3, 3, 2, 2, 1, 1, 0, 0])
    roots = sample_roots(deg, 64, seed=0)
    # Fewer candidates than asked: all of them, each once.
    assert sorted(roots.tolist()) == [0, 1, 2, 3, 4, 5]


def test_sample_roots_edge_cases():
    assert sample_roots(np.zeros(100, dtype=np.int64), 64).size == 0
    assert sample_roots(np.array([], dtype=np.int64), 64).size == 0
    assert sample_roots(np.ones(10, dtype=np.int64), 0).size == 0
    assert sorted(sample_roots(np.ones(64, dtype=np.int64), 64).tolist()) == list(range(64))
    with pytest.raises(ValueError, match="nroots"):
        sample_roots(np.ones(3), -1)
    with pytest.raises(ValueError, match="1-D"):
        sample_roots(np.ones((3, 3)), 2)
    with pytest.raises(TypeError, match="numeric"):
        sample_roots(np.array(["a", "b"]), 1)


def test_sample_roots_large_population_is_fast_and_uniformish():
    deg = np.ones(2_000_000, dtype=np.int64)
    deg[::2] = 0
    roots = sample_roots(deg, 64, seed=3)
    assert (roots % 2 == 1).all()
    assert len(set(roots.tolist())) == 64


# --------------------------------------------------------------------------- traversed_edges


def test_traversed_edges_counts_input_tuples():
    parents, levels = python_bfs(MESSY, 0)
    # (0,1) (1,2) (2,3) (3,0) (1,0) (2,2): duplicates and the self-loop count.
    assert traversed_edges(MESSY, parents) == 6
    assert traversed_edges(MESSY, levels) == 6
    assert traversed_edges(MESSY, levels, self_loops=False) == 5
    parents, _ = python_bfs(MESSY, 4)
    assert traversed_edges(MESSY, parents) == 2
    parents, _ = python_bfs(MESSY, 6)
    assert traversed_edges(MESSY, parents) == 1
    assert traversed_edges(MESSY, parents, self_loops=False) == 0
    parents, _ = python_bfs(MESSY, 7)
    assert traversed_edges(MESSY, parents) == 0


def test_traversed_edges_matches_octave_reference_formula():
    """Octave driver: sum(indeg(parent >= 0)) / 2, indeg counting both tuple ends."""
    rng = np.random.default_rng(2)
    n, m = 300, 500
    src = np.concatenate([rng.integers(0, n, m), np.arange(0, n, 7)])
    dst = np.concatenate([rng.integers(0, n, m), np.arange(0, n, 7)])
    el = EdgeList(src, dst, n)
    indeg = np.bincount(np.concatenate([src, dst]), minlength=n)
    for source in rng.integers(0, n, 10).tolist():
        parents, _ = python_bfs(el, source)
        octave = indeg[parents >= 0].sum() / 2
        assert traversed_edges(el, parents) == octave
        assert validate_bfs_tree(el, source, parents)["component_edges"] == octave


def test_traversed_edges_directed():
    el = edgelist([(0, 1), (1, 2), (2, 0), (3, 0), (1, 1)], 4, directed=True)
    parents, _ = python_bfs(el, 0, directed=True)
    assert traversed_edges(el, parents) == 4  # 3 -> 0 starts outside the search
    assert traversed_edges(el, parents, directed=False) == 4
    parents, _ = python_bfs(el, 3, directed=True)
    assert traversed_edges(el, parents) == 5


def test_traversed_edges_arguments():
    with pytest.raises(ValueError, match="shape"):
        traversed_edges(MESSY, np.zeros(3, dtype=np.int64))
    with pytest.raises(TypeError, match="integer"):
        traversed_edges(MESSY, np.zeros(8))
    with pytest.raises(TypeError, match="EdgeList"):
        traversed_edges((MESSY.src, MESSY.dst), np.zeros(8, dtype=np.int64))


def test_traversed_edges_large_ids():
    n = 3_000_000
    el = edgelist([(n - 1, n - 2), (n - 2, 2_000_000), (2_000_000, 2_000_000), (5, 6)], n)
    parents, _ = python_bfs(el, n - 1)
    assert traversed_edges(el, parents) == 3


# --------------------------------------------------------------------------- statistics


def test_time_statistics_reference_quartiles():
    s = time_statistics([4.0, 1.0, 3.0, 2.0])
    assert s == pytest.approx({"min": 1.0, "firstquartile": 1.5, "median": 2.5,
                               "thirdquartile": 3.5, "max": 4.0, "mean": 2.5,
                               "stddev": math.sqrt(5 / 3)})
    s = time_statistics([5.0, 1.0, 3.0])
    assert (s["firstquartile"], s["median"], s["thirdquartile"]) == (1.0, 3.0, 5.0)
    # n = 64: q1 averages sorted[15] and sorted[16], as src/main.c does.
    x = np.arange(64, dtype=float)
    s = time_statistics(x[::-1])
    assert (s["firstquartile"], s["median"], s["thirdquartile"]) == (15.5, 31.5, 47.5)
    assert list(s) == list(STAT_KEYS)


def test_statistics_single_value_and_errors():
    s = time_statistics([2.0])
    assert s["min"] == s["median"] == s["max"] == s["mean"] == 2.0
    assert math.isnan(s["stddev"])
    t = teps_statistics([5.0])
    assert t["harmonic_mean"] == 5.0
    assert math.isnan(t["harmonic_stddev"])
    with pytest.raises(ValueError):
        time_statistics([])
    with pytest.raises(ValueError):
        teps_statistics([])
    with pytest.raises(ValueError, match="non-negative"):
        teps_statistics([1.0, -1.0])
    with pytest.raises(ValueError):
        teps_statistics([1.0, float("nan")])
    assert nedge_statistics([10, 20])["mean"] == 15.0


def test_teps_statistics_hand_computed():
    t = teps_statistics([8.0, 1.0, 4.0, 2.0])
    # Seconds per edge s = 1, 1/2, 1/4, 1/8; the reference inverts statistics of s.
    hmean = 4 / (1 + 1 / 2 + 1 / 4 + 1 / 8)  # 32/15
    dev2 = sum((1 / x - 1 / hmean) ** 2 for x in (8.0, 1.0, 4.0, 2.0))
    expected = {
        "min": 1.0,
        "firstquartile": 1 / ((1 + 1 / 2) / 2),  # 4/3
        "median": 1 / ((1 / 2 + 1 / 4) / 2),  # 8/3
        "thirdquartile": 1 / ((1 / 4 + 1 / 8) / 2),  # 16/3
        "max": 8.0,
        "mean": 3.75,
        "stddev": float(np.std([1, 2, 4, 8], ddof=1)),
        "harmonic_mean": hmean,
        # Octave output.m: (sqrt(sum(k2tmp.^2)) / (N-1)) * S(6)^2
        "harmonic_stddev": math.sqrt(dev2) / 3 * hmean**2,
    }
    assert t == pytest.approx(expected, rel=1e-12)
    assert expected["harmonic_mean"] == pytest.approx(32 / 15)
    # sum of squared deviations = 115/256, so 1024/225 * sqrt(115)/16 / 3.
    assert expected["harmonic_stddev"] == pytest.approx(64 * math.sqrt(115) / 675, rel=1e-12)


def test_teps_statistics_c_formula():
    """src/main.c: stats of seconds-per-edge, std / (mean^2 * sqrt(N - 1))."""
    rng = np.random.default_rng(4)
    teps = rng.uniform(1e8, 5e9, 64)
    s = 1 / teps
    t = teps_statistics(teps)
    assert t["harmonic_mean"] == pytest.approx(1 / s.mean(), rel=1e-12)
    assert t["harmonic_stddev"] == pytest.approx(
        s.std(ddof=1) / (s.mean() ** 2 * math.sqrt(63)), rel=1e-10)
    assert t["min"] == teps.min()
    assert t["max"] == teps.max()
    assert t["min"] <= t["firstquartile"] <= t["median"] <= t["thirdquartile"] <= t["max"]


def test_teps_statistics_zero_rate():
    t = teps_statistics([0.0, 2.0])
    assert t["harmonic_mean"] == 0.0
    assert t["min"] == 0.0
    assert math.isnan(t["harmonic_stddev"])


# --------------------------------------------------------------------------- run_benchmark


def counting_bfs(el, directed=False):
    calls = []

    def bfs(root):
        calls.append(root)
        return python_bfs(el, root, directed)

    return bfs, calls


def test_run_benchmark_end_to_end():
    rng = np.random.default_rng(9)
    n = 400
    el = EdgeList(np.concatenate([rng.integers(0, n, 900), [3, 3]]),
                  np.concatenate([rng.integers(0, n, 900), [3, 3]]), n, directed=False)
    roots = sample_roots(degrees_without_loops(el), 8, seed=1)
    bfs, calls = counting_bfs(el)
    seen = []
    res = run_benchmark(bfs, el, roots, progress=lambda i, k: seen.append((i, k)),
                        header={"SCALE": 9, "edgefactor": 2, "backend": "python",
                                "grid": (1, 1), "construction_time": 0.5})
    assert isinstance(res, BenchmarkResult)
    assert calls == [int(roots[0]), *roots.tolist()]  # warm-up, then one call per root
    assert seen == [(i, 8) for i in range(1, 9)]
    np.testing.assert_array_equal(res.roots, roots)
    assert (res.times > 0).all()
    assert not np.isnan(res.validate_times).any()
    for root, ne in zip(res.roots.tolist(), res.nedges.tolist(), strict=True):
        assert ne == traversed_edges(el, python_bfs(el, root)[0])
    np.testing.assert_allclose(res.teps, res.nedges / res.times)
    st = res.statistics()
    assert set(st) == {"time", "nedge", "teps", "validate"}
    assert st["teps"]["harmonic_mean"] == pytest.approx(teps_statistics(res.teps)["harmonic_mean"])

    text = res.format({"graph_generation": 0.25})
    lines = text.splitlines()
    assert lines[0].startswith("SCALE:") and lines[0].split()[-1] == "9"
    parsed = dict((k.strip(), v.strip()) for k, v in (ln.rsplit(":", 1) for ln in lines))
    assert parsed["NBFS"] == "8"
    assert parsed["edgefactor"] == "2"
    assert parsed["grid"] == "1x1"
    assert parsed["backend"] == "python"
    assert [k for k in parsed][:5] == ["SCALE", "edgefactor", "NBFS", "graph_generation",
                                       "construction_time"]
    for key in ("bfs  min_time", "bfs  stddev_time", "min_nedge", "stddev_nedge",
                "bfs  min_TEPS", "bfs  max_TEPS", "bfs  harmonic_mean_TEPS",
                "bfs  harmonic_stddev_TEPS", "bfs  median_validate"):
        assert key in parsed, key
        float(parsed[key])
    assert float(parsed["bfs  harmonic_mean_TEPS"]) == pytest.approx(
        st["teps"]["harmonic_mean"], rel=1e-5)
    assert float(parsed["max_nedge"]) == res.nedges.max()
    # Values start in column 33, as in the reference output.
    assert all(len(ln) > 32 and ln[31] == " " for ln in lines)


def test_run_benchmark_without_validation_and_directed():
    el = edgelist([(0, 1), (1, 2), (2, 0), (3, 0), (1, 1)], 4, directed=True)
    bfs, calls = counting_bfs(el, directed=True)
    res = run_benchmark(bfs, el, [0, 3], validate=False, warmup=False)
    assert calls == [0, 3]
    np.testing.assert_array_equal(res.nedges, [4, 5])
    assert np.isnan(res.validate_times).all()
    assert "validate" not in res.statistics()
    assert "bfs  min_validate" not in res.format()


def test_run_benchmark_levels_only_with_parents():
    el = MESSY

    def bfs(root):
        parents, _ = python_bfs(el, root)
        return parents, None

    res = run_benchmark(bfs, el, np.array([0, 4]))
    np.testing.assert_array_equal(res.nedges, [6, 2])


def test_run_benchmark_raises_on_invalid_result():
    el = MESSY

    def broken(root):
        parents, levels = python_bfs(el, root)
        if root == 4:
            parents[5] = -1
            levels[5] = -1
        return parents, levels

    with pytest.raises(ValidationError, match="BFS 1 from root 4") as info:
        run_benchmark(broken, el, [0, 4])
    assert info.value.rule == 4


def test_run_benchmark_argument_errors():
    bfs, _ = counting_bfs(MESSY)
    with pytest.raises(ValueError, match="roots"):
        run_benchmark(bfs, MESSY, [0, 8])
    with pytest.raises(TypeError, match="roots"):
        run_benchmark(bfs, MESSY, [0.5])
    with pytest.raises(TypeError, match="tuple"):
        run_benchmark(lambda r: python_bfs(MESSY, r)[0], MESSY, [0])
    res = run_benchmark(bfs, MESSY, [])
    assert res.nbfs == 0
    with pytest.raises(ValueError, match="no searches"):
        res.statistics()


# --------------------------------------------------------------------------- progress


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_silent_when_not_a_tty(capsys):
    bar = progress_bar(5)
    for i in range(1, 6):
        bar(i, 5)
    buf = io.StringIO()
    bar = progress_bar(3, file=buf)
    bar(1, 3)
    assert buf.getvalue() == ""
    assert capsys.readouterr().err == ""


def test_progress_bar_draws_on_a_tty():
    buf = FakeTTY()
    bar = progress_bar(4, file=buf)
    assert isinstance(bar, ProgressBar)
    bar(1, 4)
    assert buf.getvalue().startswith("\r")
    assert "1/4" in buf.getvalue() and "25.0%" in buf.getvalue()
    assert not buf.getvalue().endswith("\n")
    bar(4)
    assert buf.getvalue().endswith("\n")
    assert "4/4" in buf.getvalue()
    assert "#" * 30 in buf.getvalue()


def test_progress_bar_closed_stream():
    buf = io.StringIO()
    buf.close()
    bar = ProgressBar(2, file=buf)
    bar(1, 2)  # must not raise
