"""Small public graphs shipped with spbfs, and larger ones downloaded on request.

Five graphs travel inside the package, as their original files compressed with gzip
(nothing else changed), and are read by the same readers as any file
(:func:`spbfs.io.read_graph`):

* :func:`karate`: ``karate.mtx``, 34 vertices, 78 edges, undirected (CC-BY-4.0);
* :func:`west0067`: ``west0067.mtx``, 67 vertices, 294 arcs with real values, directed
  (CC-BY-4.0);
* :func:`luxembourg_osm`: ``luxembourg_osm.mtx``, 114,599 vertices, 119,666 edges,
  undirected, a road network with over 1,000 BFS levels (CC-BY-4.0, OpenStreetMap data);
* :func:`p2p_gnutella31`: ``p2p-Gnutella31.txt``, 62,586 vertices, 147,892 arcs,
  directed (SNAP; no licence stated);
* :func:`musae_git`: ``musae_git_edges.csv``, 37,700 vertices, 289,003 edges,
  undirected, skewed (max degree 9,458) (MIT).

``README.md`` beside this module gives each file's source, licence terms, the
citation each source asks for and the sha256 of the original; :func:`info` returns the
same per data set. The edge counts are the file's records (an undirected edge stored
once counts once).

Larger graphs are not shipped: :func:`fetch` downloads one (``europe_osm``,
``road_usa``, ``com_orkut``, from the SuiteSparse Matrix Collection) into the user's
cache folder (:func:`default_cache_dir`) when asked, and says what to download from where when
there is no network. Nothing here downloads anything unless :func:`fetch` is called.

Examples
--------
>>> import spbfs, spbfs.datasets
>>> g = spbfs.datasets.karate()
>>> g.n, g.directed
(34, False)
>>> spbfs.datasets.info("p2p_gnutella31").directed
True
"""

from __future__ import annotations

import os
from pathlib import Path

from spbfs._namespace import public_dir
from spbfs.config import Config
from spbfs.datasets._catalog import BUNDLED, REMOTE, DatasetInfo, lookup
from spbfs.datasets._fetch import DownloadError, cached_path, default_cache_dir, fetch_remote
from spbfs.edges import EdgeList
from spbfs.graph import Graph
from spbfs.io import read_graph

__all__ = [
    "DatasetInfo",
    "DownloadError",
    "default_cache_dir",
    "edges",
    "fetch",
    "info",
    "karate",
    "load",
    "luxembourg_osm",
    "musae_git",
    "names",
    "p2p_gnutella31",
    "path",
    "west0067",
]

__dir__ = public_dir(__name__, __all__)

_DATA = Path(__file__).resolve().parent / "data"


def names(*, remote: bool = False) -> tuple[str, ...]:
    """The data sets' names.

    Parameters
    ----------
    remote : bool, default False
        Also list the data sets that :func:`fetch` downloads on request.

    Returns
    -------
    tuple of str
        The bundled names (``karate``, ``west0067``, ``luxembourg_osm``,
        ``p2p_gnutella31``, ``musae_git``), then the remote ones if asked.
    """
    return tuple(d.name for d in (*BUNDLED, *(REMOTE if remote else ())))


def info(name: str) -> DatasetInfo:
    """Source, licence, size and direction of a data set (bundled or remote).

    Parameters
    ----------
    name : str
        One of :func:`names` (``remote=True`` for all).

    Returns
    -------
    DatasetInfo

    Raises
    ------
    ValueError
        If there is no such data set; the message lists the names.
    """
    return lookup(name)


def path(name: str, *, cache_dir: str | os.PathLike | None = None) -> Path:
    """The file of a data set, for code that wants a path (the CLI, the MPI reader).

    A bundled set's file is the gzip'ed original inside the package
    (``karate.mtx.gz``); every reader, :meth:`spbfs.Graph.load`, the ``spbfs``
    command and :meth:`spbfs.mpi.DistGraph.from_file` take it as it is. A remote set's file is its
    download, which must have been fetched.

    Parameters
    ----------
    name : str
        One of :func:`names` (``remote=True`` for all).
    cache_dir : str or os.PathLike, optional
        Where remote sets were fetched to (default :func:`default_cache_dir`).

    Returns
    -------
    pathlib.Path

    Raises
    ------
    FileNotFoundError
        If a remote set has not been fetched, or a bundled file is missing from
        the installation (a broken install); the message says what to do.
    """
    d = lookup(name)
    if d.bundled:
        p = _DATA / f"{d.filename}.gz"
        if not p.is_file():
            raise FileNotFoundError(
                f"the bundled data file {p} is missing: this spbfs installation is incomplete "
                f"(reinstall it; a source checkout has it under spbfs/datasets/data/)")
        return p
    p = cached_path(d, cache_dir)
    if not p.is_file():
        raise FileNotFoundError(
            f"data set {name!r} is not downloaded (looked for {p}): "
            f"spbfs.datasets.fetch({name!r}) downloads it from {d.url}")
    return p


def edges(name: str, *, cache_dir: str | os.PathLike | None = None) -> EdgeList:
    """A data set's edge list as the file reader gives it (weights, duplicates, meta kept).

    ``directed`` is what the file says (Matrix Market banner) or, for the edge
    list and CSV files, which say nothing, what the source documents
    (:attr:`DatasetInfo.directed`).

    Parameters
    ----------
    name : str
        One of :func:`names` (a remote one must have been fetched).
    cache_dir : str or os.PathLike, optional
        Where remote sets were fetched to (default :func:`default_cache_dir`).

    Returns
    -------
    EdgeList
    """
    d = lookup(name)
    file = path(name, cache_dir=cache_dir)
    return read_graph(file, directed=None if d.filename.endswith(".mtx") else d.directed)


def load(name: str, *, config: Config | None = None,
         cache_dir: str | os.PathLike | None = None) -> Graph:
    """A data set as a :class:`~spbfs.Graph`, directed as the data set is.

    Parameters
    ----------
    name : str
        One of :func:`names` (a remote one must have been fetched).
    config : Config, optional
        Passed to :meth:`spbfs.Graph.from_edgelist` (format, backend, index dtype).
    cache_dir : str or os.PathLike, optional
        Where remote sets were fetched to (default :func:`default_cache_dir`).

    Returns
    -------
    Graph
        The same graph as ``spbfs.Graph.load`` of the original file gives (with
        ``directed=True`` for the Gnutella edge list); ``graph.edges`` keeps the
        file's edge list, weights included.
    """
    el = edges(name, cache_dir=cache_dir)
    return Graph.from_edgelist(el, directed=lookup(name).directed, config=config)


def fetch(name: str, *, cache_dir: str | os.PathLike | None = None, timeout: float = 60.0,
          force: bool = False) -> Path:
    """Download a larger data set into the cache folder, once; return its file.

    The SuiteSparse archive is downloaded, the Matrix Market file is extracted
    from it and its size line checked; later calls return the file at once. A
    bundled name returns its bundled file (nothing is downloaded).

    Parameters
    ----------
    name : str
        One of ``names(remote=True)``.
    cache_dir : str or os.PathLike, optional
        Where to keep it (default :func:`default_cache_dir`).
    timeout : float, default 60
        Seconds to wait for the server to answer (each read, not the whole download).
    force : bool, default False
        Download again even when the file is there.

    Returns
    -------
    pathlib.Path
        The file; ``spbfs.datasets.load(name)`` then reads it.

    Raises
    ------
    DownloadError
        If there is no network or the download fails or is not the expected file;
        the message names the address to download from by hand and where to put
        the file.
    """
    if not isinstance(timeout, int | float) or isinstance(timeout, bool) or timeout <= 0:
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    d = lookup(name)
    if d.bundled:
        return path(name)
    return fetch_remote(d, cache_dir, float(timeout), force)


def karate(*, config: Config | None = None) -> Graph:
    """Zachary's karate club: 34 members, 78 friendships, undirected (SuiteSparse Newman/karate).

    The graph ``load("karate", config=config)`` gives (see :func:`load`).
    """
    return load("karate", config=config)


def west0067(*, config: Config | None = None) -> Graph:
    """HB/west0067: 67 vertices, 294 arcs, directed, the matrix values kept as edge weights.

    The graph ``load("west0067", config=config)`` gives (see :func:`load`);
    ``graph.edges.weights`` holds the file's real values.
    """
    return load("west0067", config=config)


def luxembourg_osm(*, config: Config | None = None) -> Graph:
    """Luxembourg's road network: 114,599 vertices, 119,666 edges, undirected, depth > 1,000.

    The graph ``load("luxembourg_osm", config=config)`` gives (see :func:`load`).
    """
    return load("luxembourg_osm", config=config)


def p2p_gnutella31(*, config: Config | None = None) -> Graph:
    """The Gnutella peer-to-peer network of 31 August 2002: 62,586 hosts, 147,892 arcs, directed.

    The graph ``load("p2p_gnutella31", config=config)`` gives (see :func:`load`).
    """
    return load("p2p_gnutella31", config=config)


def musae_git(*, config: Config | None = None) -> Graph:
    """GitHub developers who follow each other: 37,700 vertices, 289,003 edges, undirected.

    The graph ``load("musae_git", config=config)`` gives (see :func:`load`).
    """
    return load("musae_git", config=config)
