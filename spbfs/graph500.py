"""Graph500 harness pieces: search keys, TEPS edge counts, statistics, the BFS loop.

What follows the Graph500 specification (v3, "Sampling 64 Search Keys",
"Computing and Outputting Performance Information") and where the reference
code (``src/main.c``, ``src/validate.c`` of github.com/graph500/graph500) was
needed to pin details down:

* search keys are distinct vertices of degree >= 1, self-loops not counted;
* a search's edge count ``m`` is the number of *input edge tuples* inside the
  searched component, "counting any multiple edges and self-loops" (see
  :func:`traversed_edges` for how the reference implementations differ);
* TEPS statistics follow the reference ``get_statistics`` and its harmonic
  mean and harmonic standard deviation (see :func:`teps_statistics`).
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

import numpy as np

from spbfs.edges import EdgeList
from spbfs.validate import ValidationError, _to_host, validate_bfs_tree, validate_bfs_tree_graph

__all__ = [
    "STAT_KEYS",
    "BenchmarkResult",
    "ProgressBar",
    "nedge_statistics",
    "progress_bar",
    "run_benchmark",
    "sample_roots",
    "teps_statistics",
    "time_statistics",
    "traversed_edges",
]

_CHUNK = 1 << 21

#: Keys of the order statistics, in the reference output's order.
STAT_KEYS = ("min", "firstquartile", "median", "thirdquartile", "max", "mean", "stddev")


# --------------------------------------------------------------------------- search keys


def sample_roots(degrees: np.ndarray, nroots: int = 64, *,
                 seed: int | np.random.Generator | None = 0) -> np.ndarray:
    """Pick distinct random search keys among the vertices of degree at least one.

    Parameters
    ----------
    degrees : numpy.ndarray
        Degree of every vertex, *not counting self-loops* (the specification
        excludes vertices whose only edges are self-loops; the caller strips
        them, e.g. ``bincount(src[src != dst]) + bincount(dst[src != dst])``).
    nroots : int, default 64
        How many search keys the specification asks for.
    seed : int, numpy.random.Generator or None, default 0
        Seed for :func:`numpy.random.default_rng`, or a generator. The fixed
        default makes repeated runs search from the same roots, as the
        reference code does with its fixed seeds.

    Returns
    -------
    numpy.ndarray
        int64 vertex ids, distinct, in random order. When fewer than
        ``nroots`` vertices qualify, all of them are returned (in random
        order) and the benchmark runs fewer searches, as the specification
        says; the result is then shorter than ``nroots``, possibly empty.
    """
    degrees = np.asarray(degrees)
    if degrees.ndim != 1:
        raise ValueError(f"degrees must be a 1-D array, got shape {degrees.shape}")
    if degrees.size and not (np.issubdtype(degrees.dtype, np.integer)
                             or np.issubdtype(degrees.dtype, np.floating)):
        raise TypeError(f"degrees must be numeric, got dtype {degrees.dtype}")
    nroots = int(nroots)
    if nroots < 0:
        raise ValueError(f"nroots must be non-negative, got {nroots}")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    candidates = np.flatnonzero(degrees >= 1).astype(np.int64)
    if candidates.size <= nroots:
        return rng.permutation(candidates)
    # Sampling without replacement draws each candidate at most once, so this
    # ends after nroots draws however few candidates there are (the reference
    # code's rejection loop needs a guard against looping forever).
    return rng.choice(candidates, size=nroots, replace=False)


# --------------------------------------------------------------------------- edge counts


def traversed_edges(edges: Any, levels_or_parents: np.ndarray, *,
                    directed: bool | None = None, self_loops: bool = True) -> int:
    """Graph500 edge count of one search: input edge tuples inside the searched component.

    Parameters
    ----------
    edges : EdgeList or Graph
        The input edge list *as generated* (before graph construction removed
        anything), or a :class:`~spbfs.graph.Graph` built from edges, whose
        ``input_degree`` counts them per vertex (the streamed build keeps no
        edge list). From degrees the count is ``sum(input_degree[reached])``,
        halved when undirected: exact for a search that passes validation
        (rule 4: no edge leaves the component); only ``self_loops=True``.
    levels_or_parents : numpy.ndarray
        A level or a parent array of shape ``(n,)``; only ``>= 0`` (reached)
        versus ``-1`` (unreached) matters.
    directed : bool, optional
        Count arcs ``u -> v`` whose tail ``u`` was reached. ``None`` takes
        ``edges.directed`` (unspecified means undirected).
    self_loops : bool, default True
        Whether a self-loop on a reached vertex counts.

    Returns
    -------
    int
        Undirected: the number of tuples ``(u, v)`` with both endpoints
        reached, every duplicate counted, each tuple once (not once per
        direction). Directed: the number of arcs leaving reached vertices
        (once the result validates they also end at reached vertices).

    Notes
    -----
    The specification defines ``m`` as "the number of input edge tuples within
    the component traversed by the search, counting any multiple edges and
    self-loops", which is the default here. It is also what the Octave
    reference (``sum(indeg(parent >= 0)) / 2``, where a self-loop adds 2 to its
    vertex's ``indeg``) and the v2 C reference (``mpi/validate.c``: every tuple
    with both endpoints in the tree) compute. The v3 C reference
    (``src/validate.c``) skips self-loops when it builds its validation graph
    and counts each remaining tuple once, so it reports fewer edges by the
    number of self-loops in the component; pass ``self_loops=False`` to match
    it.
    """
    if not isinstance(edges, EdgeList):
        return _traversed_from_degree(edges, levels_or_parents, directed, self_loops)
    marks = _to_host(levels_or_parents)
    if marks.shape != (edges.n,):
        raise ValueError(f"levels_or_parents must have shape ({edges.n},), got {marks.shape}")
    if marks.dtype == np.bool_ or not np.issubdtype(marks.dtype, np.integer):
        raise TypeError(f"levels_or_parents must be an integer array, got dtype {marks.dtype}")
    if directed is None:
        directed = edges.directed
    reached = marks >= 0
    count = 0
    for lo in range(0, edges.num_edges, _CHUNK):
        s = edges.src[lo:lo + _CHUNK]
        d = edges.dst[lo:lo + _CHUNK]
        inside = reached[s] if directed else reached[s] & reached[d]
        if not self_loops:
            inside &= s != d
        count += int(np.count_nonzero(inside))
    return count


def _traversed_from_degree(graph: Any, marks: Any, directed: bool | None,
                           self_loops: bool) -> int:
    """:func:`traversed_edges` of a graph's ``input_degree``."""
    degree = getattr(graph, "input_degree", None)
    if degree is None:
        raise TypeError(f"edges must be an EdgeList or a Graph built from edges (with "
                        f"input_degree), got {type(graph).__name__}")
    if not self_loops:
        raise ValueError("self_loops=False needs the edge list: input_degree counts loops")
    marks = _to_host(marks)
    if marks.shape != degree.shape:
        raise ValueError(f"levels_or_parents must have shape {degree.shape}, got {marks.shape}")
    if marks.dtype == np.bool_ or not np.issubdtype(marks.dtype, np.integer):
        raise TypeError(f"levels_or_parents must be an integer array, got dtype {marks.dtype}")
    if directed is None:
        directed = graph.directed
    total = int(np.sum(degree[marks >= 0], dtype=np.int64))
    return total if directed else total // 2


# --------------------------------------------------------------------------- statistics


def _order_statistics(x: Sequence[float] | np.ndarray, name: str) -> dict[str, float]:
    """The reference ``get_statistics``: quartiles, mean and sample standard deviation.

    Quartiles average the two middle candidates the way ``src/main.c`` does:
    ``q1 = (x[(n-1)//4] + x[n//4]) / 2`` on the sorted data, likewise for the
    median and (from the top) the third quartile. The standard deviation uses
    ``n - 1`` and so is NaN for a single value, as in the reference (0/0).
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array, got shape {x.shape}")
    if np.isnan(x).any():
        raise ValueError(f"{name} contains NaN")
    n = x.size
    xx = np.sort(x)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = float(np.mean(x))
        var = float(np.sum((x - mean) ** 2)) / (n - 1) if n > 1 else math.nan
    return {
        "min": float(xx[0]),
        "firstquartile": float((xx[(n - 1) // 4] + xx[n // 4]) * 0.5),
        "median": float((xx[(n - 1) // 2] + xx[n // 2]) * 0.5),
        "thirdquartile": float((xx[n - 1 - (n - 1) // 4] + xx[n - 1 - n // 4]) * 0.5),
        "max": float(xx[n - 1]),
        "mean": mean,
        "stddev": math.sqrt(var) if not math.isnan(var) else math.nan,
    }


def time_statistics(times: Sequence[float] | np.ndarray) -> dict[str, float]:
    """Order statistics of per-search times, as printed in ``*_time`` lines.

    Parameters
    ----------
    times : array_like
        Seconds per search.

    Returns
    -------
    dict
        ``min``, ``firstquartile``, ``median``, ``thirdquartile``, ``max``,
        ``mean`` and ``stddev`` (sample standard deviation, ``n - 1``; NaN for
        a single search). Quartiles as in the reference ``get_statistics``.
    """
    return _order_statistics(times, "times")


def nedge_statistics(nedges: Sequence[float] | np.ndarray) -> dict[str, float]:
    """Order statistics of per-search edge counts (the ``*_nedge`` lines).

    See :func:`time_statistics` for the keys.
    """
    return _order_statistics(nedges, "nedges")


def teps_statistics(teps: Sequence[float] | np.ndarray) -> dict[str, float]:
    """Graph500 TEPS statistics, computed as the reference ``src/main.c`` does.

    Parameters
    ----------
    teps : array_like
        Traversed edges per second of each search (``nedge / time``), all
        ``>= 0``.

    Returns
    -------
    dict
        ``min``, ``firstquartile``, ``median``, ``thirdquartile``, ``max``,
        ``harmonic_mean``, ``harmonic_stddev`` (the reported fields) plus the
        arithmetic ``mean`` and ``stddev`` for reference.

    Notes
    -----
    TEPS is a rate, so the reference works on seconds per edge ``s = 1/TEPS``:
    it takes the order statistics of ``s`` and inverts them, so
    ``min_TEPS = 1 / max(s)`` and ``firstquartile_TEPS = 1 / thirdquartile(s)``.
    Where a quartile averages two samples this is their harmonic, not
    arithmetic, mean; the numbers here match the reference output.

    ``harmonic_mean = 1 / mean(s) = N / sum(1 / TEPS)``, and, after Norris
    (1940, "The Standard Errors of the Geometric and Harmonic Means"), as
    both the C and the Octave reference write it::

        harmonic_stddev = harmonic_mean**2 * sqrt(sum((1/TEPS - 1/harmonic_mean)**2)) / (N - 1)

    i.e. ``std(s, ddof=1) / (mean(s)**2 * sqrt(N - 1))``: the standard error
    of the harmonic mean with ``N - 1`` in place of Norris's ``N``. With a
    single search it is NaN (0/0, as in the reference). A zero TEPS (a search
    that counted no edges) gives a harmonic mean of 0 and a NaN harmonic
    standard deviation.
    """
    teps = np.asarray(teps, dtype=np.float64)
    if teps.ndim != 1 or teps.size == 0:
        raise ValueError(f"teps must be a non-empty 1-D array, got shape {teps.shape}")
    if np.isnan(teps).any() or (teps < 0).any():
        raise ValueError("teps must be non-negative numbers")
    n = teps.size
    with np.errstate(divide="ignore", invalid="ignore"):
        s = _order_statistics(1.0 / teps, "seconds per edge")
        inv = np.float64(1.0) / np.array([s["max"], s["thirdquartile"], s["median"],
                                          s["firstquartile"], s["min"], s["mean"]])
        hstd = (s["stddev"] / (s["mean"] ** 2 * math.sqrt(n - 1))) if n > 1 else math.nan
    plain = _order_statistics(teps, "teps")
    return {
        "min": float(inv[0]),
        "firstquartile": float(inv[1]),
        "median": float(inv[2]),
        "thirdquartile": float(inv[3]),
        "max": float(inv[4]),
        "mean": plain["mean"],
        "stddev": plain["stddev"],
        "harmonic_mean": float(inv[5]),
        "harmonic_stddev": float(hstd),
    }


# --------------------------------------------------------------------------- results


# Header fields the reference prints first, in its order; others follow as given.
_HEADER_ORDER = ("SCALE", "edgefactor", "NBFS", "graph_generation", "num_mpi_processes",
                 "construction_time")


def _fmt_value(v: Any, spec: str = "g") -> str:
    if isinstance(v, bool | np.bool_) or isinstance(v, str):
        return str(v)
    if isinstance(v, int | np.integer):
        return str(int(v))
    if isinstance(v, float | np.floating):
        return format(float(v), spec)
    if isinstance(v, tuple | list):
        return "x".join(_fmt_value(x, spec) for x in v)
    return str(v)


def _line(key: str, value: Any, spec: str = "g") -> str:
    # The reference pads "key:" to 32 columns; keep it so existing parsers and
    # side-by-side diffs with reference output keep working.
    return f"{key + ':':<32}{_fmt_value(value, spec)}"


@dataclass
class BenchmarkResult:
    """Per-search measurements of a Graph500 BFS run.

    Attributes
    ----------
    roots : numpy.ndarray
        int64 search keys, in the order searched.
    times : numpy.ndarray
        Seconds per search (the ``bfs`` call only).
    nedges : numpy.ndarray
        int64 Graph500 edge counts (:func:`traversed_edges`).
    teps : numpy.ndarray
        ``nedges / times``.
    validate_times : numpy.ndarray
        Seconds spent validating each search, NaN where validation was skipped.
    header : dict
        Extra header fields for :meth:`format` (``SCALE``, ``edgefactor``,
        ``graph_generation``, ``construction_time``, ``format``, ``backend``,
        ``grid``, ...).
    """

    roots: np.ndarray
    times: np.ndarray
    nedges: np.ndarray
    teps: np.ndarray
    validate_times: np.ndarray
    header: dict[str, Any] = field(default_factory=dict)

    @property
    def nbfs(self) -> int:
        """Number of searches run."""
        return int(self.roots.shape[0])

    def statistics(self) -> dict[str, dict[str, float]]:
        """Statistics of times, edge counts, TEPS and (when run) validation times.

        Returns
        -------
        dict
            ``{"time": ..., "nedge": ..., "teps": ..., "validate": ...}`` with the
            dictionaries of :func:`time_statistics`, :func:`nedge_statistics`
            and :func:`teps_statistics`; ``"validate"`` only when every search
            was validated.
        """
        if self.nbfs == 0:
            raise ValueError("no searches were run")
        out = {
            "time": time_statistics(self.times),
            "nedge": nedge_statistics(self.nedges),
            "teps": teps_statistics(self.teps),
        }
        if not np.isnan(self.validate_times).any():
            out["validate"] = time_statistics(self.validate_times)
        return out

    def format(self, header: Mapping[str, Any] | None = None) -> str:
        """Graph500-style result block.

        Parameters
        ----------
        header : mapping, optional
            Fields merged over :attr:`header` for this call.

        Returns
        -------
        str
            Lines ``key: value`` padded as in the reference ``src/main.c``:
            header fields, then ``bfs  min_time`` ... ``bfs  stddev_time``,
            ``min_nedge`` ... ``stddev_nedge``, ``bfs  min_TEPS`` ...
            ``bfs  harmonic_stddev_TEPS`` and, when validation ran,
            ``bfs  min_validate`` ... ``bfs  stddev_validate``. ``NBFS`` is
            always the number of searches actually run. Unlike the reference,
            the ``harmonic_mean_TEPS`` line carries no ``!`` marker, so every
            value parses as a number.
        """
        fields = {**self.header, **(header or {})}
        fields["NBFS"] = self.nbfs
        lines = [_line(k, fields[k]) for k in _HEADER_ORDER if k in fields]
        lines += [_line(k, v) for k, v in fields.items() if k not in _HEADER_ORDER]
        st = self.statistics()
        lines += [_line(f"bfs  {k}_time", st["time"][k]) for k in STAT_KEYS]
        lines += [_line(f"{k}_nedge", st["nedge"][k], ".11g") for k in STAT_KEYS]
        lines += [_line(f"bfs  {k}_TEPS", st["teps"][k]) for k in STAT_KEYS[:5]]
        lines += [_line("bfs  harmonic_mean_TEPS", st["teps"]["harmonic_mean"]),
                  _line("bfs  harmonic_stddev_TEPS", st["teps"]["harmonic_stddev"])]
        if "validate" in st:
            lines += [_line(f"bfs  {k}_validate", st["validate"][k]) for k in STAT_KEYS]
        return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- the loop


def run_benchmark(bfs: Callable[[int], tuple[np.ndarray, np.ndarray | None]],
                  edges: Any, roots: Iterable[int] | np.ndarray, *,
                  validate: bool = True,
                  progress: Callable[[int, int], Any] | None = None,
                  header: Mapping[str, Any] | None = None,
                  directed: bool | None = None,
                  warmup: bool = True) -> BenchmarkResult:
    """Run, time, validate and count one BFS per root (Graph500 kernel 2 loop).

    Parameters
    ----------
    bfs : callable
        ``bfs(root) -> (parents, levels)``: int64 arrays of shape ``(n,)``,
        ``-1`` for unreached vertices; ``levels`` may be ``None``. Whatever
        the search needs per root (e.g. degree-informed structures) must happen
        inside the call: only the call is timed.
    edges : EdgeList or Graph
        The input edge list as generated, for validation and edge counts; or
        the searched :class:`~spbfs.graph.Graph` when it keeps no edge list
        (:meth:`~spbfs.graph.Graph.from_source`): validation then checks the
        rules on its blocks (:func:`~spbfs.validate.validate_bfs_tree_graph`)
        and edges are counted from its ``input_degree``.
    roots : sequence of int
        Search keys, e.g. from :func:`sample_roots`.
    validate : bool, default True
        Check every result with :func:`~spbfs.validate.validate_bfs_tree`
        (untimed). The edge count then comes from the validation pass.
    progress : callable, optional
        Called as ``progress(i, n)`` after search ``i`` of ``n`` (1-based),
        e.g. a :class:`ProgressBar`.
    header : mapping, optional
        Stored in :attr:`BenchmarkResult.header` for :meth:`~BenchmarkResult.format`.
    directed : bool, optional
        Passed to validation and edge counting; ``None`` takes ``edges.directed``.
    warmup : bool, default True
        Run one untimed, unrecorded search from the first root first, as the
        reference ``src/main.c`` does (JIT compilation, first-touch allocation
        and caches stay out of the first timing).

    Returns
    -------
    BenchmarkResult

    Raises
    ------
    ValidationError
        When a search fails validation; the message names the search and its
        root. The reference stops at the first failure too ("No results
        printed for invalid run").
    """
    roots = np.asarray(list(roots) if not isinstance(roots, np.ndarray) else roots)
    if roots.size and (roots.dtype == np.bool_ or not np.issubdtype(roots.dtype, np.integer)):
        raise TypeError(f"roots must be integer vertex ids, got dtype {roots.dtype}")
    roots = roots.astype(np.int64).reshape(-1)
    n = int(edges.n)
    if roots.size and (roots.min() < 0 or roots.max() >= n):
        raise ValueError(f"roots must lie in [0, {n})")
    on_graph = not isinstance(edges, EdgeList)
    if on_graph and getattr(edges, "out_block", None) is None:
        raise TypeError(f"edges must be an EdgeList or a Graph, got {type(edges).__name__}")
    if on_graph and directed is not None and bool(directed) != bool(edges.directed):
        raise ValueError(f"directed={directed} disagrees with the graph "
                         f"(directed={edges.directed}): a graph's edges are as built")
    nb = roots.shape[0]
    times = np.zeros(nb)
    nedges = np.zeros(nb, dtype=np.int64)
    validate_times = np.full(nb, np.nan)

    if warmup and nb:
        bfs(int(roots[0]))
    for i, root in enumerate(roots.tolist()):
        t0 = time.perf_counter()
        out = bfs(root)
        times[i] = time.perf_counter() - t0
        parents, levels = _unpack(out)
        if validate:
            t0 = time.perf_counter()
            try:
                if on_graph:
                    facts = validate_bfs_tree_graph(edges, root, parents, levels)
                else:
                    facts = validate_bfs_tree(edges, root, parents, levels, directed=directed)
            except ValidationError as err:
                raise ValidationError(f"BFS {i} from root {root} failed to validate: {err}",
                                      rule=err.rule, example=err.example) from err
            validate_times[i] = time.perf_counter() - t0
            nedges[i] = facts["component_edges"]
        else:
            nedges[i] = traversed_edges(edges, parents if parents is not None else levels,
                                        directed=directed)
        if progress is not None:
            progress(i + 1, nb)
    with np.errstate(divide="ignore"):
        teps = nedges / times
    return BenchmarkResult(roots=roots, times=times, nedges=nedges, teps=teps,
                           validate_times=validate_times, header=dict(header or {}))


def _unpack(out: Any) -> tuple[np.ndarray | None, np.ndarray | None]:
    if not isinstance(out, tuple) or len(out) != 2:
        raise TypeError("bfs(root) must return a tuple (parents, levels)")
    parents, levels = out
    if parents is None and levels is None:
        raise TypeError("bfs(root) returned neither parents nor levels")
    if parents is None:
        raise TypeError("bfs(root) must return parents; Graph500 validation checks the tree")
    return parents, levels


# --------------------------------------------------------------------------- progress


class ProgressBar:
    """A one-line text progress bar, usable as ``progress(i, n)``.

    It draws only when ``file`` is a terminal, so logs and captured output stay
    clean.

    Parameters
    ----------
    total : int
        Number of steps (used when a call does not give ``n``).
    file : text stream, optional
        Where to draw; ``sys.stderr`` at construction time by default.
    width : int, default 30
        Bar width in characters.
    label : str, default "BFS"
        Text before the bar.
    """

    def __init__(self, total: int, *, file: TextIO | None = None, width: int = 30,
                 label: str = "BFS") -> None:
        self.total = int(total)
        self.file = sys.stderr if file is None else file
        self.width = int(width)
        self.label = label
        self.start = time.perf_counter()
        isatty = getattr(self.file, "isatty", None)
        try:
            self.enabled = bool(isatty()) if callable(isatty) else False
        except (OSError, ValueError):  # closed or detached streams
            self.enabled = False

    def __call__(self, i: int, n: int | None = None) -> None:
        """Show ``i`` of ``n`` steps done (``n`` defaults to ``total``)."""
        if not self.enabled:
            return
        n = self.total if n is None else int(n)
        frac = min(max(i / n, 0.0), 1.0) if n > 0 else 1.0
        filled = round(frac * self.width)
        bar = "#" * filled + "-" * (self.width - filled)
        elapsed = time.perf_counter() - self.start
        self.file.write(f"\r{self.label} [{bar}] {i}/{n} {100 * frac:5.1f}% {elapsed:7.1f}s")
        if i >= n:
            self.file.write("\n")
        self.file.flush()


def progress_bar(total: int, *, file: TextIO | None = None) -> ProgressBar:
    """Make a :class:`ProgressBar` for ``total`` steps (silent unless ``file`` is a tty).

    Parameters
    ----------
    total : int
        Number of steps.
    file : text stream, optional
        Defaults to ``sys.stderr`` (looked up at call time, so redirection and
        capture work).

    Returns
    -------
    ProgressBar
    """
    return ProgressBar(total, file=file)
