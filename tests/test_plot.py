"""spbfs.plot: the benchmark PNG, the notebook helpers, and the missing-matplotlib message."""

from __future__ import annotations

import sys

import numpy as np
import pytest

pytest.importorskip("matplotlib")

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt

import spbfs
from spbfs import plot
from spbfs.generators import kronecker, path
from spbfs.graph500 import run_benchmark, sample_roots

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def bench() -> tuple[object, spbfs.BFSResult]:
    edges = kronecker(10, 16, seed=3)
    g = spbfs.Graph.from_edgelist(edges)
    roots = sample_roots(g.out_degree, 6, seed=3)

    def one(root: int) -> tuple[np.ndarray, np.ndarray]:
        r = spbfs.bfs(g, root)
        return r.parents, r.levels

    result = run_benchmark(one, edges, roots, header={"SCALE": 10, "edgefactor": 16})
    return result, spbfs.bfs(g, int(roots[0]))


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_plot_benchmark_writes_png(bench, tmp_path):
    result, sample = bench
    out = plot.plot_benchmark(result, sample, tmp_path / "bench.png")
    assert out == tmp_path / "bench.png"
    data = out.read_bytes()
    assert data.startswith(PNG_MAGIC) and len(data) > 20_000


def test_plot_benchmark_missing_directory(bench, tmp_path):
    result, sample = bench
    with pytest.raises(FileNotFoundError, match="does not exist"):
        plot.plot_benchmark(result, sample, tmp_path / "nope" / "bench.png")


def test_benchmark_figure_panels(bench):
    result, sample = bench
    fig = plot.benchmark_figure(result, sample)
    assert len(fig.axes) == 3
    assert "SCALE 10" in fig._suptitle.get_text()


def test_plot_levels_marks_directions(bench):
    _, sample = bench
    ax = plot.plot_levels(sample)
    assert ax.get_yscale() == "log"
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "frontier (vertices)" in labels and "edges examined" in labels
    present = {plot._DIRECTION_NAMES[d] for d in np.unique(sample.stats.direction)}
    assert present <= set(labels)
    # one marker series per direction present and per count (frontier, edges)
    colored = [ln for ln in ax.get_lines() if ln.get_linestyle() == "None"]
    assert len(colored) == 2 * len(present)


def test_plot_levels_many_levels_uses_shading():
    r = spbfs.bfs(spbfs.Graph.from_edgelist(path(300)), 0, direction="bottom-up")
    ax = plot.plot_levels(r)
    assert not [ln for ln in ax.get_lines() if ln.get_linestyle() == "None"]
    assert "bottom-up levels" in [t.get_text() for t in ax.get_legend().get_texts()]
    assert f"{len(r.stats)} levels, 0 top-down, {len(r.stats)} bottom-up" in ax.get_title()


def test_level_histogram_counts(bench):
    _, sample = bench
    ax = plot.plot_level_histogram(sample)
    heights = [p.get_height() for p in ax.patches]
    expected = np.bincount(sample.levels[sample.levels >= 0])
    assert heights == expected.tolist()
    # the same from a parents-only result, via the per-level discovered counts
    g = spbfs.Graph.from_edgelist(kronecker(10, 16, seed=3))
    r = spbfs.bfs(g, sample.source, output="parents")
    ax2 = plot.plot_level_histogram(r)
    assert [p.get_height() for p in ax2.patches] == expected.tolist()
    # and from a level array
    ax3 = plot.plot_level_histogram(sample.levels)
    assert [p.get_height() for p in ax3.patches] == expected.tolist()


def test_plot_teps_harmonic_mean_and_bad_values():
    teps = np.array([1e6, 2e6, 4e6, 0.0, np.inf])
    ax = plot.plot_teps(teps)
    assert "2 not finite or zero" in ax.get_title()
    hm = 3 / (1 / 1e6 + 1 / 2e6 + 1 / 4e6)
    xs = [ln.get_xdata()[0] for ln in ax.get_lines() if ln.get_color() == "#D55E00"]
    assert xs and xs[0] == pytest.approx(hm / 1e6)  # plotted in MTEPS
    assert "MTEPS" in ax.get_xlabel()


def test_plot_teps_wide_spread_is_log():
    ax = plot.plot_teps(np.array([1e5, 3e5, 1e7, 2e7]))
    assert ax.get_xscale() == "log"
    empty = plot.plot_teps(np.array([0.0]))
    assert "1 not finite" in empty.get_title()


def test_axes_argument_is_used(bench):
    result, sample = bench
    _fig, axs = plt.subplots(1, 3)
    assert plot.plot_levels(sample, axs[0]) is axs[0]
    assert plot.plot_level_histogram(sample, axs[1]) is axs[1]
    assert plot.plot_teps(result, axs[2]) is axs[2]


def test_missing_matplotlib_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ImportError, match=r"spbfs\[plot\]"):
        plot._matplotlib()


def test_cli_bench_plot(tmp_path, capsys):
    from spbfs.cli import main

    out = tmp_path / "b.png"
    assert main(["bench", "--scale", "8", "--roots", "3", "--plot", str(out)]) == 0
    assert out.read_bytes().startswith(PNG_MAGIC)
    assert f"plot: {out}" in capsys.readouterr().out
