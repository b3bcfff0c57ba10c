"""A networkx backend named ``spbfs``: networkx's API, spbfs's semiring kernels.

networkx (3.2 and later) dispatches a function to a backend given
``backend="spbfs"``, or listed in ``nx.config.backend_priority``, or when its
graph argument is a backend graph. The backend is found through two entry
points (``pyproject.toml``): ``networkx.backends`` names
:data:`backend_interface`, and ``networkx.backend_info`` names
:func:`_nx_spbfs.get_info` (outside the package: ``import networkx`` loads
nothing of spbfs), read when networkx is imported.

The interface object carries what networkx's dispatcher asks of a backend:

* ``convert_from_nx`` / ``convert_to_nx``: a networkx graph to an
  :class:`~spbfs.nxbackend._convert.SpbfsGraph` and back (the original graph);
* ``can_run(name, args, kwargs)``: True, or a string saying why these
  arguments are left to networkx (a weight function, ``personalization``,
  ``sort_neighbors``, ...);
* ``should_run(name, args, kwargs)``: True, or, for a graph of fewer than
  :attr:`BackendInterface.min_edges` edges, why networkx's own function is
  the faster choice (the conversion and the kernel calls cost more than its
  Python loops; graphblas-algorithms and nx-cugraph decline small inputs
  alike). networkx asks it where the backend comes from
  ``nx.config.backend_priority``; with ``backend="spbfs"`` it does not, and the
  backend runs networkx's own function on such a graph itself: at the first
  call, and at every call of a function networkx runs faster there (the
  others, :data:`~spbfs.nxbackend._algorithms.FAST_ON_SMALL_GRAPHS`, convert
  the graph at their second call and run spbfs's);
* the implemented functions as attributes, with networkx's signatures
  (listed in :data:`_nx_spbfs.FUNCTIONS`).

A function spbfs does not implement is no attribute, so networkx runs its
own (with ``backend="spbfs"`` it says so in a ``NotImplementedError``; from
``backend_priority`` or ``nx.config.fallback_to_nx`` it just falls back).
When an implementation meets data it does not take as it is (negative or
non-numeric weights, a source that is no node), it runs networkx's own
function on the original graph, so results and exceptions are networkx's.

Converted graphs are kept on the networkx graph, in its ``__networkx_cache__``
(which networkx clears when the graph is changed through its methods), by the
backend itself: :meth:`BackendInterface.convert_from_nx` finds a kept one
there. networkx's own cache slot for the backend stays empty (a dict that
stores nothing), so networkx never serves a cached graph and never prints
its note that it does (a ``UserWarning`` users otherwise silence with
``nx.config.warnings_to_ignore.add("cache")``). The kept graph is as
consistent as networkx's would be: a graph changed behind networkx's back
(``G[u][v]["weight"] = 2``) needs ``G.__networkx_cache__.clear()``.

Every call is counted in the interface's :class:`DispatchStats`: with the
environment variable ``NX_SPBFS_STATS`` set (``1``, or a file name for a
JSON copy) the counts are printed to stderr when the process exits.
"""

from __future__ import annotations

import atexit
import inspect
import json
import operator
import os
import sys
from collections import Counter
from typing import Any

from _nx_spbfs import get_info
from spbfs.nxbackend._algorithms import FAST_ON_SMALL_GRAPHS, IMPLEMENTED, Fallback, can_run
from spbfs.nxbackend._convert import SpbfsGraph, from_nx, to_nx

__all__ = ["MIN_EDGES_ENV", "STATS_ENV", "BackendInterface", "DispatchStats", "SpbfsGraph",
           "backend_interface", "get_info"]

#: Environment variable that prints the dispatch counts at exit (a name outside ``SPBFS_*``,
#: whose variables spbfs's config checks against its settings).
STATS_ENV = "NX_SPBFS_STATS"
#: Environment variable that sets :attr:`BackendInterface.min_edges` (``0``: spbfs runs
#: every graph, as networkx's own test suite run against the backend needs).
MIN_EDGES_ENV = "NX_SPBFS_MIN_EDGES"


class DispatchStats:
    """How many calls spbfs ran and how many it left to networkx, per function.

    Attributes
    ----------
    ran : Counter
        Calls spbfs computed.
    refused : Counter
        Calls ``can_run`` left to networkx (unsupported arguments).
    fell_back : Counter
        Calls an implementation handed to networkx (data it does not take).
    declined : Counter
        Calls on a graph too small to pay for spbfs (``should_run``), that
        networkx ran (counted when the backend runs networkx's function itself,
        with ``backend="spbfs"``).
    missing : Counter
        Lookups of networkx functions spbfs does not implement.
    reasons : Counter
        ``"function: reason"`` of every refusal and fallback.
    """

    def __init__(self) -> None:
        self.ran: Counter[str] = Counter()
        self.refused: Counter[str] = Counter()
        self.fell_back: Counter[str] = Counter()
        self.declined: Counter[str] = Counter()
        self.missing: Counter[str] = Counter()
        self.reasons: Counter[str] = Counter()

    def as_dict(self) -> dict[str, dict[str, int]]:
        """The counters as plain dicts."""
        return {"ran": dict(self.ran), "refused": dict(self.refused),
                "fell_back": dict(self.fell_back), "declined": dict(self.declined),
                "missing": dict(self.missing),
                "reasons": dict(self.reasons)}

    def table(self) -> str:
        """A text table: one row per implemented function, then the totals."""
        names = sorted(set(self.ran) | set(self.refused) | set(self.fell_back)
                       | set(self.declined))
        rows = [f"{'function':<36} {'spbfs':>7} {'refused':>8} {'fell back':>10} "
                f"{'declined':>9}"]
        for name in names:
            rows.append(f"{name:<36} {self.ran[name]:>7} {self.refused[name]:>8} "
                        f"{self.fell_back[name]:>10} {self.declined[name]:>9}")
        ran, refused, back, small = (sum(c.values()) for c in (
            self.ran, self.refused, self.fell_back, self.declined))
        rows.append(f"{'total':<36} {ran:>7} {refused:>8} {back:>10} {small:>9}")
        rows.append(f"calls of functions spbfs does not implement (networkx ran them): "
                    f"{sum(self.missing.values())} over {len(self.missing)} functions")
        return "\n".join(rows)

    def report(self, where: str) -> None:
        """Print :meth:`table` to stderr; ``where`` other than ``1`` is a file for a JSON copy."""
        print("\nspbfs networkx backend: calls\n" + self.table(), file=sys.stderr)
        if where not in ("", "1"):
            with open(where, "w") as f:
                json.dump(self.as_dict(), f, indent=1, sort_keys=True)


class BackendInterface:
    """What networkx's dispatcher loads from the ``networkx.backends`` entry point.

    Parameters
    ----------
    config : Config, optional
        Format and kernel backend of the converted graphs; by default
        :func:`spbfs.config.load_config` (``SPBFS_*`` variables, ``$SPBFS_CONFIG``)
        when the first graph is converted.
    """

    def __init__(self, config: Any = None) -> None:
        self._config = config
        self.stats = DispatchStats()
        self._functions = {name: self._wrap(name, f) for name, f in IMPLEMENTED.items()}
        # Found by plain attribute lookup: networkx's dispatcher looks a function up twice
        # per call, and a lookup that reaches __getattr__ first fails through the class.
        self.__dict__.update(self._functions)
        limit = os.environ.get(MIN_EDGES_ENV)
        if limit is not None:
            try:
                self.min_edges = int(limit)
            except ValueError:
                raise ValueError(f"{MIN_EDGES_ENV} must be an integer number of edges, "
                                 f"got {limit!r}") from None
        where = os.environ.get(STATS_ENV)
        if where:
            atexit.register(self.stats.report, where)

    @property
    def config(self) -> Any:
        """The :class:`spbfs.Config` graphs are converted with."""
        if self._config is None:
            from spbfs.config import load_config

            self._config = load_config()
        return self._config

    # -- the protocol -------------------------------------------------------------------
    #: Graphs of fewer edges are left to networkx (:meth:`should_run`): below this,
    #: networkx's own BFS on a random graph was faster than conversion, dispatch and
    #: kernel calls (benchmarks/defaults.py). :data:`MIN_EDGES_ENV` sets it.
    min_edges = 10_000

    def convert_from_nx(self, graph: Any, *, edge_attrs: Any = None, node_attrs: Any = None,
                        preserve_edge_attrs: Any = False, preserve_node_attrs: Any = False,
                        preserve_graph_attrs: Any = False, name: str | None = None,
                        graph_name: str | None = None) -> SpbfsGraph:
        """A networkx graph as an :class:`SpbfsGraph` (weights are read when a call needs them).

        The graph is kept in ``graph.__networkx_cache__`` (see the module
        docstring) and found there by the next call; networkx's own slot for
        the backend is made a dict that stores nothing.
        """
        cache = getattr(graph, "__networkx_cache__", None)
        if cache is None:
            return from_nx(graph, self.config)
        backends = cache.setdefault("backends", {})
        if type(backends.get("spbfs")) is not _NoStore:
            backends["spbfs"] = _NoStore()
        kept = cache.get(_KEPT)
        if kept is None or kept.config is not self.config:
            kept = cache[_KEPT] = from_nx(graph, self.config)
        return kept

    @staticmethod
    def convert_to_nx(obj: Any, *, name: str | None = None) -> Any:
        """The networkx graph of an :class:`SpbfsGraph`; results pass unchanged."""
        return to_nx(obj)

    def can_run(self, name: str, args: tuple, kwargs: dict) -> bool | str:
        """True when spbfs takes these arguments, else why networkx should run instead."""
        if name not in IMPLEMENTED:
            return False
        if args and self._declines(args[0]) is not True:
            # networkx's own function runs a small graph (should_run, and call() when the
            # backend is forced): its arguments are networkx's to check, and the binding
            # below would cost as much as the search.
            return True
        try:
            bound = inspect.signature(_networkx_function(name)).bind(*args, **kwargs)
        except TypeError as exc:
            verdict: bool | str = f"arguments do not fit: {exc}"  # networkx raises it
        else:
            bound.apply_defaults()
            graph = next(iter(bound.arguments.values()))
            if not _is_graph(graph):
                verdict = "the graph argument is not a networkx graph"
            else:
                verdict = can_run(name, bound.arguments)
        if verdict is not True:
            self.stats.refused[name] += 1
            self.stats.reasons[f"{name}: {verdict}"] += 1
        return verdict

    def should_run(self, name: str, args: tuple, kwargs: dict) -> bool | str:
        """True, or why networkx's own function is faster: a graph of fewer than
        :attr:`min_edges` edges (counted once per graph and kept beside it)."""
        return self._declines(args[0] if args else next(iter(kwargs.values()), None))

    def _declines(self, graph: Any) -> bool | str:
        """:meth:`should_run`'s answer for ``graph``, kept beside it with the edge count.

        networkx asks on every call of a small graph, and a call of networkx's own
        BFS on karate takes 20 µs: the answer (a formatted string) is made once.
        """
        if isinstance(graph, SpbfsGraph):
            kept = graph.verdict  # the same answer as the cache's, found in one read
            if kept is not None and kept[0] == self.min_edges:
                return kept[1]
            verdict = self._declines(graph.nx)
            graph.verdict = (self.min_edges, verdict)
            return verdict
        cache = getattr(graph, "__networkx_cache__", None)
        kept = cache.get(_VERDICT) if cache is not None else None
        if kept is not None and kept[0] == self.min_edges:
            return kept[1]
        edges = _edge_count(graph)
        verdict: bool | str = True
        if edges is not None and edges < self.min_edges:
            verdict = (f"the graph has {edges} edges, fewer than {self.min_edges}: networkx's "
                       "own function is faster than converting it")
        if cache is not None:
            cache[_VERDICT] = (self.min_edges, verdict)
        return verdict

    # -- the functions ------------------------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        # Reached only for names that are no implemented function (those are attributes).
        stats = self.__dict__.get("stats")
        if stats is not None and not name.startswith("_") and _is_networkx_function(name):
            stats.missing[name] += 1
        raise AttributeError(name)

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(IMPLEMENTED))

    def _wrap(self, name: str, impl: Any) -> Any:
        stats = self.stats
        declined = stats.declined
        own: list[Any] = []  # networkx's function, looked up at the first declined call

        small_too = name in FAST_ON_SMALL_GRAPHS
        signature: list[Any] = []  # networkx's parameter names and defaults, when needed

        def takes(args: tuple, kwargs: dict) -> bool:
            # can_run passed these arguments without a look (a small graph is networkx's).
            if not signature:
                params = list(inspect.signature(_networkx_function(name)).parameters.values())
                first = len(params)  # the trailing parameters with defaults start here
                while first and params[first - 1].default is not inspect.Parameter.empty:
                    first -= 1
                signature.extend((tuple(p.name for p in params), first,
                                  tuple(p.default for p in params[first:])))
            names, first, tail = signature
            if len(args) == len(names) and not kwargs:  # as networkx's dispatcher binds
                if all(map(operator.is_, args[first:], tail)):
                    return True  # networkx's defaults, as networkx's dispatcher fills them
                return can_run(name, dict(zip(names, args, strict=True))) is True
            defaults = dict(zip(names[first:], tail, strict=True))
            given = dict(zip(names, args, strict=False))
            return can_run(name, {**defaults, **given, **kwargs}) is True

        def call(*args: Any, **kwargs: Any) -> Any:
            graph = args[0] if args else None
            if (isinstance(graph, SpbfsGraph) and self._declines(graph) is not True
                    and not (small_too and graph.forced and takes(args, kwargs))):
                # backend="spbfs" on a small graph (networkx does not ask should_run then).
                # Its first such call is networkx's: converting it costs more than one
                # search (karate: 43 against 19 µs). A second call pays for the conversion.
                graph.forced = True
                declined[name] += 1
                if not own:
                    own.append(_networkx_function(name))
                return own[0](graph.nx, *args[1:], **kwargs)
            try:
                out = impl(*args, **kwargs)
            except Fallback as exc:
                stats.fell_back[name] += 1
                stats.reasons[f"{name}: {exc}"] += 1
                graph = args[0].nx if args and isinstance(args[0], SpbfsGraph) else args[0]
                return _networkx_function(name)(graph, *args[1:], **kwargs)
            stats.ran[name] += 1
            return out

        call.__name__ = name
        call.__qualname__ = f"BackendInterface.{name}"
        call.__doc__ = impl.__doc__
        return call


#: The key of the kept converted graph in a networkx graph's ``__networkx_cache__``.
_KEPT = "spbfs"
#: The key of the kept edge count there.
_EDGES = "spbfs_edges"
#: The key of the kept answer of :meth:`BackendInterface.should_run` there (with the
#: ``min_edges`` it was given for).
_VERDICT = "spbfs_should_run"


class _NoStore(dict):  # type: ignore[type-arg]
    """networkx's cache slot for spbfs graphs: stores nothing, so networkx never finds
    a cached graph (nor warns that it uses one); the backend keeps its own."""

    def __setitem__(self, key: Any, value: Any) -> None:
        pass


def _edge_count(graph: Any) -> int | None:
    """Edges of a networkx graph (or of an SpbfsGraph's), counted once and kept in its
    ``__networkx_cache__`` (cleared with it when the graph changes); None for anything
    else."""
    if isinstance(graph, SpbfsGraph):
        graph = graph.nx
    count = getattr(graph, "number_of_edges", None)
    if count is None:
        return None
    cache = getattr(graph, "__networkx_cache__", None)
    if cache is None:
        return int(count())
    edges = cache.get(_EDGES)
    if edges is None:
        edges = cache[_EDGES] = int(count())
    return edges


def _networkx_function(name: str) -> Any:
    """networkx's own implementation of ``name`` (not the dispatcher)."""
    import networkx as nx

    return nx.utils.backends._registered_algorithms[name].orig_func


def _is_networkx_function(name: str) -> bool:
    import networkx as nx

    return name in nx.utils.backends._registered_algorithms


def _is_graph(obj: Any) -> bool:
    import networkx as nx

    return isinstance(obj, nx.Graph | SpbfsGraph)


#: The object the ``networkx.backends`` entry point names.
backend_interface = BackendInterface()
