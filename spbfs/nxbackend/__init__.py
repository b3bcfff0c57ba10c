"""A networkx backend named ``spbfs``: networkx's API, spbfs's semiring kernels.

networkx (3.2 and later) dispatches a function to a backend given
``backend="spbfs"``, or listed in ``nx.config.backend_priority``, or when its
graph argument is a backend graph. The backend is found through two entry
points (``pyproject.toml``): ``networkx.backends`` names
:data:`backend_interface`, and ``networkx.backend_info`` names
:func:`spbfs.nxbackend._info.get_info`, read when networkx is imported.

The interface object carries what networkx's dispatcher asks of a backend:

* ``convert_from_nx`` / ``convert_to_nx``: a networkx graph to an
  :class:`~spbfs.nxbackend._convert.SpbfsGraph` and back (the original graph);
* ``can_run(name, args, kwargs)``: True, or a string saying why these
  arguments are left to networkx (a weight function, ``personalization``,
  ``sort_neighbors``, ...); ``should_run`` is always True;
* the implemented functions as attributes, with networkx's signatures
  (listed in :data:`spbfs.nxbackend._info.FUNCTIONS`).

A function spbfs does not implement is no attribute, so networkx runs its
own (with ``backend="spbfs"`` it says so in a ``NotImplementedError``; from
``backend_priority`` or ``nx.config.fallback_to_nx`` it just falls back).
When an implementation meets data it does not take as it is (negative or
non-numeric weights, a source that is no node), it runs networkx's own
function on the original graph, so results and exceptions are networkx's.

Every call is counted in the interface's :class:`DispatchStats`: with the
environment variable ``NX_SPBFS_STATS`` set (``1``, or a file name for a
JSON copy) the counts are printed to stderr when the process exits.
"""

from __future__ import annotations

import atexit
import inspect
import json
import os
import sys
from collections import Counter
from typing import Any

from spbfs.nxbackend._algorithms import IMPLEMENTED, Fallback, can_run
from spbfs.nxbackend._convert import SpbfsGraph, from_nx, to_nx
from spbfs.nxbackend._info import get_info

__all__ = ["STATS_ENV", "BackendInterface", "DispatchStats", "SpbfsGraph", "backend_interface",
           "get_info"]

#: Environment variable that prints the dispatch counts at exit (a name outside ``SPBFS_*``,
#: whose variables spbfs's config checks against its settings).
STATS_ENV = "NX_SPBFS_STATS"


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
    missing : Counter
        Lookups of networkx functions spbfs does not implement.
    reasons : Counter
        ``"function: reason"`` of every refusal and fallback.
    """

    def __init__(self) -> None:
        self.ran: Counter[str] = Counter()
        self.refused: Counter[str] = Counter()
        self.fell_back: Counter[str] = Counter()
        self.missing: Counter[str] = Counter()
        self.reasons: Counter[str] = Counter()

    def as_dict(self) -> dict[str, dict[str, int]]:
        """The counters as plain dicts."""
        return {"ran": dict(self.ran), "refused": dict(self.refused),
                "fell_back": dict(self.fell_back), "missing": dict(self.missing),
                "reasons": dict(self.reasons)}

    def table(self) -> str:
        """A text table: one row per implemented function, then the totals."""
        names = sorted(set(self.ran) | set(self.refused) | set(self.fell_back))
        rows = [f"{'function':<36} {'spbfs':>7} {'refused':>8} {'fell back':>10}"]
        for name in names:
            rows.append(f"{name:<36} {self.ran[name]:>7} {self.refused[name]:>8} "
                        f"{self.fell_back[name]:>10}")
        ran, refused, back = (sum(c.values()) for c in (self.ran, self.refused, self.fell_back))
        rows.append(f"{'total':<36} {ran:>7} {refused:>8} {back:>10}")
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
    def convert_from_nx(self, graph: Any, *, edge_attrs: Any = None, node_attrs: Any = None,
                        preserve_edge_attrs: Any = False, preserve_node_attrs: Any = False,
                        preserve_graph_attrs: Any = False, name: str | None = None,
                        graph_name: str | None = None) -> SpbfsGraph:
        """A networkx graph as an :class:`SpbfsGraph` (weights are read when a call needs them)."""
        return from_nx(graph, self.config)

    @staticmethod
    def convert_to_nx(obj: Any, *, name: str | None = None) -> Any:
        """The networkx graph of an :class:`SpbfsGraph`; results pass unchanged."""
        return to_nx(obj)

    def can_run(self, name: str, args: tuple, kwargs: dict) -> bool | str:
        """True when spbfs takes these arguments, else why networkx should run instead."""
        if name not in IMPLEMENTED:
            return False
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

    @staticmethod
    def should_run(name: str, args: tuple, kwargs: dict) -> bool:
        """Always True: whoever asks for the backend gets it."""
        return True

    # -- the functions ------------------------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        functions = self.__dict__.get("_functions", {})
        if name in functions:
            return functions[name]
        if not name.startswith("_") and _is_networkx_function(name):
            self.__dict__["stats"].missing[name] += 1
        raise AttributeError(name)

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(IMPLEMENTED))

    def _wrap(self, name: str, impl: Any) -> Any:
        stats = self.stats

        def call(*args: Any, **kwargs: Any) -> Any:
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
