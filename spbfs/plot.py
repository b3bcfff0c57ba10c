"""Plots of BFS searches and benchmark runs (needs matplotlib: ``pip install 'spbfs[plot]'``).

Three building blocks return a :class:`matplotlib.axes.Axes`, for notebooks:

* :func:`plot_levels` -- frontier size and edges examined per level (log
  scale), each level marked by the direction it ran in;
* :func:`plot_level_histogram` -- vertices per BFS level;
* :func:`plot_teps` -- the TEPS distribution over the roots of a benchmark,
  with its harmonic mean (the Graph500 figure of merit).

:func:`plot_benchmark` puts the three on one figure and writes a PNG; it is
what ``spbfs bench --plot out.png`` calls. It draws on a private figure with
the Agg canvas, so it works without a display and leaves pyplot's state alone.

Examples
--------
>>> import spbfs
>>> from spbfs.plot import plot_levels
>>> r = spbfs.bfs(spbfs.Graph.from_edges([0, 0, 1, 2], [1, 2, 3, 4]), 0)
>>> ax = plot_levels(r)
>>> ax.get_ylabel()
'count (log scale)'
"""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from spbfs.graph500 import BenchmarkResult
    from spbfs.result import BFSResult

__all__ = [
    "DIRECTION_COLORS",
    "benchmark_figure",
    "plot_benchmark",
    "plot_level_histogram",
    "plot_levels",
    "plot_teps",
]

#: Colour of each direction (index 0 = top-down, 1 = bottom-up), colour-blind safe.
DIRECTION_COLORS: tuple[str, str] = ("#0072B2", "#E69F00")
_DIRECTION_NAMES = ("top-down", "bottom-up")
_DIRECTION_MARKERS = ("o", "s")
_SHADE_ALPHA = 0.13
_MAX_MARKED_LEVELS = 80  # beyond this many levels markers would hide the lines


def _matplotlib() -> Any:
    """Import matplotlib, choosing the Agg backend when there is no display.

    Raises
    ------
    ImportError
        When matplotlib is missing; the message names the ``plot`` extra.
    """
    try:
        import matplotlib
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "spbfs.plot needs matplotlib, which is not installed; install the 'plot' extra: "
            "pip install 'spbfs[plot]'  (or: pip install matplotlib)"
        ) from exc
    headless = sys.platform.startswith("linux") and not (
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    )
    # Respect an explicit choice (MPLBACKEND, Jupyter's inline backend, an earlier
    # matplotlib.use or an imported pyplot); otherwise never try a GUI without a display.
    if headless and "MPLBACKEND" not in os.environ and "matplotlib.pyplot" not in sys.modules:
        matplotlib.use("Agg")
    return matplotlib


def _new_axes(ax: Axes | None, figsize: tuple[float, float]) -> Axes:
    """Return ``ax``, or the axes of a new pyplot figure."""
    if ax is not None:
        return ax
    _matplotlib()
    import matplotlib.pyplot as plt

    _, new = plt.subplots(figsize=figsize, layout="constrained")
    return new


def _runs(direction: np.ndarray) -> list[tuple[int, int, int]]:
    """Maximal runs of equal direction as ``(start, stop, direction)``, stop exclusive."""
    out: list[tuple[int, int, int]] = []
    start = 0
    for i in range(1, direction.size + 1):
        if i == direction.size or direction[i] != direction[start]:
            out.append((start, i, int(direction[start])))
            start = i
    return out


def _positive(a: np.ndarray) -> np.ndarray:
    """float copy of ``a`` with non-positive entries as NaN (gaps on a log axis)."""
    out = np.asarray(a, dtype=np.float64).copy()
    out[~(out > 0)] = np.nan
    return out


def plot_levels(bfs_result: BFSResult, ax: Axes | None = None, *,
                shade: bool = True, title: str | None = None) -> Axes:
    """Frontier size and edges examined per BFS level, with the direction of each level.

    Parameters
    ----------
    bfs_result : BFSResult
        A search, e.g. from :func:`spbfs.bfs`; its :attr:`~spbfs.BFSResult.stats`
        give the per-level counts.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure when omitted.
    shade : bool, default True
        Shade the background of bottom-up levels (always done when there
        are too many levels for markers, e.g. on a road network).
    title : str, optional
        Axes title; by default the source, levels and direction string.

    Returns
    -------
    matplotlib.axes.Axes

    Notes
    -----
    Both counts share one logarithmic y axis: the frontier (vertices, solid
    line) and the edges examined (dashed). Marker colour and shape give the
    direction: circles for top-down, squares for bottom-up. A bottom-up level
    counts the edges it looked at before it found a parent, so its edge count
    falls below the sum of the unvisited vertices' degrees; zero counts are
    left out (gaps) since a log axis cannot show them.
    """
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    ax = _new_axes(ax, (7.0, 4.0))
    st = bfs_result.stats
    nlev = len(st)
    levels = np.arange(1, nlev + 1)
    direction = np.asarray(st.direction, dtype=np.int64)
    frontier = _positive(st.frontier)
    edges = _positive(st.edges)
    marked = nlev <= _MAX_MARKED_LEVELS
    ax.plot(levels, frontier, "-", color="0.25", lw=1.4, zorder=2)
    ax.plot(levels, edges, "--", color="0.25", lw=1.4, zorder=2)
    for d in (0, 1):
        sel = direction == d
        if not sel.any() or not marked:
            continue
        style = {"color": DIRECTION_COLORS[d], "marker": _DIRECTION_MARKERS[d], "ls": "none",
                 "ms": 7, "mec": "white", "mew": 0.8, "zorder": 3}
        ax.plot(levels[sel], frontier[sel], **style)
        ax.plot(levels[sel], edges[sel], **style)
    if shade or not marked:
        for start, stop, d in _runs(direction):
            if d == 1:
                ax.axvspan(start + 0.5, stop + 0.5, color=DIRECTION_COLORS[1],
                           alpha=_SHADE_ALPHA, lw=0, zorder=1)
    ax.set_yscale("log")
    ax.set_xlabel("BFS level (level k discovers the vertices k hops from the source)")
    ax.set_ylabel("count (log scale)")
    if nlev:
        ax.set_xlim(0.5, nlev + 0.5)
    if nlev <= 30:
        ax.set_xticks(levels)
    ax.grid(True, which="major", axis="y", alpha=0.3)
    handles: list[Any] = [
        Line2D([], [], color="0.25", ls="-", label="frontier (vertices)"),
        Line2D([], [], color="0.25", ls="--", label="edges examined"),
    ]
    for d in (0, 1):
        if not (direction == d).any():
            continue
        if marked:
            handles.append(Line2D([], [], color=DIRECTION_COLORS[d], ls="none",
                                  marker=_DIRECTION_MARKERS[d], ms=7, label=_DIRECTION_NAMES[d]))
        elif d == 1:
            handles.append(Patch(color=DIRECTION_COLORS[1], alpha=_SHADE_ALPHA * 2.5,
                                 label="bottom-up levels"))
    ax.legend(handles=handles, loc="best", fontsize="small", framealpha=0.9)
    if title is None:
        if nlev <= 40:
            dirs = "directions " + ("".join("TB"[d] for d in direction) or "-")
        else:
            nbu = int(np.count_nonzero(direction == 1))
            dirs = f"{nlev - nbu} top-down, {nbu} bottom-up"
        title = f"BFS from {bfs_result.source}: {nlev} levels, {dirs}"
    ax.set_title(title, fontsize="medium")
    return ax


def plot_level_histogram(bfs_result: BFSResult | np.ndarray, ax: Axes | None = None, *,
                         title: str | None = None) -> Axes:
    """Bar chart of the number of vertices at each BFS level.

    Parameters
    ----------
    bfs_result : BFSResult or numpy.ndarray
        A search, or a level array (``-1`` for unreached vertices). A result
        computed with ``output="parents"`` has no levels; its per-level
        ``discovered`` counts are used instead.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure when omitted.
    title : str, optional
        Axes title; by default how many vertices were reached.

    Returns
    -------
    matplotlib.axes.Axes
    """
    ax = _new_axes(ax, (6.0, 3.5))
    if isinstance(bfs_result, np.ndarray):
        lv = np.asarray(bfs_result).reshape(-1)
        counts = np.bincount(lv[lv >= 0].astype(np.int64), minlength=1)
        n, unreached = lv.size, int(np.count_nonzero(lv < 0))
    elif bfs_result.levels is not None:
        lv = np.asarray(bfs_result.levels)
        counts = np.bincount(lv[lv >= 0].astype(np.int64), minlength=1)
        n, unreached = lv.size, int(np.count_nonzero(lv < 0))
    else:
        disc = np.asarray(bfs_result.stats.discovered, dtype=np.int64)
        counts = np.concatenate([[1], disc])
        counts = counts[: int(np.flatnonzero(counts).max()) + 1]
        n = bfs_result.n
        unreached = n - int(counts.sum())
    x = np.arange(counts.size)
    few = counts.size <= 40
    if few:
        ax.bar(x, counts, width=0.8, color="#009E73", edgecolor="white", lw=0.5)
    else:  # hundreds of levels (a road network): a filled step outline reads better than bars
        ax.fill_between(x, counts, step="mid", color="#009E73", alpha=0.85, lw=0)
        ax.set_xlim(-0.5, counts.size - 0.5)
        ax.set_ylim(bottom=0)
    ax.set_xlabel("BFS level (hops from the source)")
    ax.set_ylabel("vertices")
    if counts.size <= 30:
        ax.set_xticks(x)
    positive = counts[counts > 0]
    if few and positive.size and positive.max() >= 100 * positive.min():
        # Small-world graphs put most vertices in two or three levels: a linear
        # axis would hide the first and last levels entirely.
        ax.set_yscale("log")
        ax.set_ylabel("vertices (log scale)")
    if counts.size <= 25:
        for xi, c in zip(x, counts, strict=True):
            if c > 0:
                ax.annotate(f"{c:,}", (xi, c), xytext=(0, 2), textcoords="offset points",
                            ha="center", va="bottom", fontsize="x-small")
        ax.margins(y=0.12)
    ax.grid(True, axis="y", alpha=0.3)
    if title is None:
        reached = n - unreached
        title = f"{reached:,} of {n:,} vertices reached ({100 * reached / max(n, 1):.1f}%)"
    ax.set_title(title, fontsize="medium")
    return ax


def _teps_unit(value: float) -> tuple[float, str]:
    """Scale and prefixed unit (``1e6, "MTEPS"``) suited to ``value``."""
    if not math.isfinite(value) or value <= 0:
        return 1.0, "TEPS"
    exp = max(0, min(math.floor(math.log10(value) / 3), 4))
    return 10.0 ** (3 * exp), ("", "k", "M", "G", "T")[exp] + "TEPS"


def _teps_label(value: float) -> str:
    """``1.23 GTEPS`` style label."""
    scale, unit = _teps_unit(value)
    return f"{value / scale:.3g} {unit}"


def plot_teps(result: BenchmarkResult | np.ndarray, ax: Axes | None = None, *,
              bins: int | None = None, title: str | None = None) -> Axes:
    """Distribution of traversed edges per second over the benchmark's roots.

    Parameters
    ----------
    result : BenchmarkResult or numpy.ndarray
        A benchmark (its ``teps`` array is used) or TEPS values directly.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure when omitted.
    bins : int, optional
        Histogram bins; by default about two roots per bin, 5 to 30 bins.
    title : str, optional
        Axes title; by default the number of roots.

    Returns
    -------
    matplotlib.axes.Axes

    Notes
    -----
    A histogram of the per-root TEPS with a tick per root along the bottom,
    the harmonic mean (Graph500's reported figure: total edges over total
    time, for equal edge counts) as a solid line and the median dashed. The
    x axis is logarithmic when the values span more than a factor of 10
    (roots in small components, or searches dominated by fixed overheads).
    Zero or infinite values (a search that counted no edges, or took no
    measurable time) are left out of the histogram and counted in the title.
    """
    from matplotlib.ticker import LogFormatter

    from spbfs.graph500 import teps_statistics

    ax = _new_axes(ax, (6.0, 3.5))
    teps = np.asarray(getattr(result, "teps", result), dtype=np.float64).reshape(-1)
    good = teps[np.isfinite(teps) & (teps > 0)]
    dropped = teps.size - good.size
    unit = "TEPS"
    if good.size:
        stats = teps_statistics(good)
        hm, med = stats["harmonic_mean"], stats["median"]
        scale, unit = _teps_unit(hm)
        vals = good / scale
        nb = bins or int(min(30, max(5, good.size // 2)))
        lo, hi = float(vals.min()), float(vals.max())
        logx = hi > 10 * lo
        if hi <= lo:
            lo, hi = lo * 0.95, hi * 1.05
        edges = np.geomspace(lo, hi, nb + 1) if logx else np.linspace(lo, hi, nb + 1)
        counts, _, _ = ax.hist(vals, bins=edges, color="#56B4E9", edgecolor="white", lw=0.5,
                               label="roots")
        ax.set_ylim(0, max(float(np.max(counts)), 1.0) * 1.45)  # headroom for the legend
        ax.plot(vals, np.zeros_like(vals), "|", color="0.2", ms=10, mew=1, clip_on=False,
                zorder=3)
        ax.axvline(hm / scale, color="#D55E00", lw=2, label=f"harmonic mean {_teps_label(hm)}")
        ax.axvline(med / scale, color="0.3", lw=1.2, ls="--", label=f"median {_teps_label(med)}")
        if logx:
            ax.set_xscale("log")
            ax.xaxis.set_major_formatter(LogFormatter(labelOnlyBase=False))
            ax.xaxis.set_minor_formatter(LogFormatter(labelOnlyBase=False,
                                                      minor_thresholds=(2, 0.5)))
        ax.legend(loc="upper center", fontsize="small", framealpha=0.9, ncols=3,
                  handlelength=1.5, columnspacing=1.0)
    else:
        ax.text(0.5, 0.5, "no positive, finite TEPS values", ha="center", va="center",
                transform=ax.transAxes)
    ax.set_xlabel(f"traversed edges per second ({unit})")
    ax.set_ylabel("roots")
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.grid(True, axis="y", alpha=0.3)
    if title is None:
        title = f"TEPS over {teps.size} roots"
        if dropped:
            title += f" ({dropped} not finite or zero, left out)"
    ax.set_title(title, fontsize="medium")
    return ax


def benchmark_figure(result: BenchmarkResult, sample: BFSResult, title: str | None = None,
                     figsize: tuple[float, float] = (12.0, 8.0)) -> Figure:
    """The :func:`plot_benchmark` figure, not yet saved (no pyplot involved).

    Parameters
    ----------
    result : BenchmarkResult
        The benchmark run.
    sample : BFSResult
        One search of it (e.g. from the first root), for the per-level panels.
    title : str, optional
        Figure title; by default built from ``result.header``.
    figsize : tuple of float, default (12, 8)
        Width and height in inches.

    Returns
    -------
    matplotlib.figure.Figure
    """
    _matplotlib()
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, dpi=110, layout="constrained")
    grid = fig.add_gridspec(2, 2, height_ratios=(1.15, 1.0))
    plot_levels(sample, fig.add_subplot(grid[0, :]))
    plot_level_histogram(sample, fig.add_subplot(grid[1, 0]))
    plot_teps(result, fig.add_subplot(grid[1, 1]))
    if title is None:
        h = result.header
        parts = []
        if "SCALE" in h:
            parts.append(f"Kronecker SCALE {h['SCALE']}, edgefactor {h.get('edgefactor', '?')}")
        for key in ("format", "backend", "direction", "grid"):
            if key in h:
                parts.append(f"{key} {h[key]}")
        parts.append(f"{result.nbfs} roots")
        title = "spbfs bench: " + ", ".join(parts)
    fig.suptitle(title, fontsize="large")
    return fig


def plot_benchmark(result: BenchmarkResult, sample: BFSResult, path: str | os.PathLike[str],
                   *, title: str | None = None, dpi: int | None = None) -> Path:
    """Write the benchmark figure to a PNG: per-level counts, level histogram, TEPS.

    Parameters
    ----------
    result : BenchmarkResult
        From :func:`spbfs.graph500.run_benchmark` (``roots``, ``times``,
        ``nedges``, ``teps`` arrays and a ``header``).
    sample : BFSResult
        One search of the benchmark, shown level by level.
    path : str or os.PathLike
        Output file; the format follows the suffix (PNG for ``.png``).
    title : str, optional
        Figure title; by default built from ``result.header``.
    dpi : int, optional
        Resolution; 110 by default.

    Returns
    -------
    pathlib.Path
        The file written.

    Raises
    ------
    ImportError
        When matplotlib is not installed (install the ``plot`` extra).
    """
    fig = benchmark_figure(result, sample, title=title)
    out = Path(path)
    if out.parent and not out.parent.exists():
        raise FileNotFoundError(f"directory {out.parent} does not exist")
    fig.savefig(out, dpi=dpi)
    return out
