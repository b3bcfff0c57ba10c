"""Graph file readers and writers.

Every reader returns an :class:`~spbfs.edges.EdgeList` that reports faithfully
what the file says: duplicates, self-loops and explicit zeros are kept, and a
symmetric Matrix Market file yields each stored entry once with
``directed=False`` (graph construction, not the reader, adds the mirror
edges).

Supported formats (``fmt`` argument of :func:`read_graph`):

``"mtx"``
    Matrix Market coordinate files (``.mtx``), 1-based.
``"edgelist"``
    SNAP-style whitespace separated ``src dst [weight]`` lines (``.txt``,
    ``.el``, ``.tsv``, ``.edges``, ``.snap``), 0-based by default.
``"csv"``
    Comma separated ``src,dst[,weight]`` with a header line (``.csv``), 0-based.
``"npz"``
    NumPy archives written by :func:`save_npz`, or ``scipy.sparse.save_npz``
    matrices (``.npz``).

Any of these may be gzip-compressed (``.gz`` suffix).

Text parsing is done in one compiled pass over the raw bytes (numba), so a
malformed file is reported with the exact line number at no cost to the
well-formed case. Every malformed file raises :class:`GraphFormatError`.

Notes
-----
What this package imports from its modules is its public API. The modules:

:mod:`spbfs.io.scanner`
    The compiled text scanner (:func:`~spbfs.io.scanner.scan`) and the functions
    that turn its result into arrays and error messages; the parallel reader
    :mod:`spbfs.mpi.read` parses each rank's slice with it.
:mod:`spbfs.io.parallel_npz`
    The MPI ranks' parallel writer of a ``.npz`` archive (MPI-IO, ZIP64). Not
    imported here, so reading files never needs MPI.
``spbfs.io._mtx``
    Matrix Market: the banner and size line, and :func:`read_mtx`.
``spbfs.io._table``
    Edge lists and CSV: the head (count line, CSV header), :func:`read_edgelist`
    and :func:`read_csv`.
``spbfs.io._npz``
    spbfs and ``scipy.sparse`` archives: :func:`read_npz` and the csr/csc
    pointer check.
``spbfs.io._write``
    :func:`write_edgelist`, :func:`write_mtx` and :func:`save_npz`.
``spbfs.io._ids``
    What every reader ends with: id range checks, the ``2**MAX_VERTEX_BITS``
    limit and :func:`renumber`.
``spbfs.io._common``
    :class:`GraphFormatError`, format names and suffixes, reading bytes
    (gzip, byte order mark) and line numbers for messages.

A leading underscore on a module keeps it out of the public API; its names
without one are shared within spbfs (with :mod:`spbfs.mpi.read` among others),
and a leading underscore on a name keeps it within its module.
"""

from __future__ import annotations

from spbfs._namespace import public_dir
from spbfs.edges import EdgeList
from spbfs.io._common import FORMATS, MAX_RATIO, GraphFormatError, PathLike, resolve_format
from spbfs.io._ids import MAX_VERTEX_BITS, renumber
from spbfs.io._mtx import read_mtx
from spbfs.io._npz import read_npz
from spbfs.io._table import read_csv, read_edgelist
from spbfs.io._write import save_npz, write_edgelist, write_mtx

__all__ = [
    "FORMATS",
    "MAX_RATIO",
    "MAX_VERTEX_BITS",
    "GraphFormatError",
    "read_csv",
    "read_edgelist",
    "read_graph",
    "read_mtx",
    "read_npz",
    "renumber",
    "save_npz",
    "write_edgelist",
    "write_mtx",
]

__dir__ = public_dir(__name__, __all__)


def read_graph(
    path: PathLike,
    fmt: str | None = None,
    *,
    directed: bool | None = None,
    one_based: bool | None = None,
    renumber: bool = False,
    n: int | None = None,
    max_ratio: float | None = MAX_RATIO,
) -> EdgeList:
    """Read a graph file into an :class:`~spbfs.edges.EdgeList`.

    Parameters
    ----------
    path : str or os.PathLike
        The file; a ``.gz`` suffix means gzip-compressed.
    fmt : {"mtx", "edgelist", "csv", "npz"}, optional
        File format. Inferred from the suffix when omitted: ``.mtx``;
        ``.txt``/``.el``/``.tsv``/``.edges``/``.snap`` (edge list); ``.csv``;
        ``.npz`` (before any ``.gz``).
    directed : bool, optional
        Overrides what the format says (Matrix Market ``symmetric`` means
        undirected, ``general`` directed; the other formats say nothing).
    one_based : bool, optional
        Whether ids in an edge list or CSV file start at 1 (default: 0-based).
        Matrix Market is always 1-based and npz always 0-based; contradicting
        that raises ValueError.
    renumber : bool, default False
        Map the labels found in the file to ``0 .. k-1`` with :func:`renumber`
        and store the labels, as written in the file, in ``EdgeList.ids``.
        Needed for negative or very sparse labels (``n > 2**40``). Vertices
        that appear in no edge are dropped, whatever the declared size.
    n : int, optional
        The vertex count, to insist on one: without it, a count the file
        declares (Matrix Market size line, edge-list count line, npz ``n`` or
        ``shape``) or ``max id + 1`` is refused, before anything n-sized is
        allocated, when it is over 2**24 and over 16 vertices per edge
        (:func:`spbfs.edges.sparse_ids_problem`). Given, it must equal the
        count the file declares, exceed every id, and not exceed
        ``2**MAX_VERTEX_BITS``; it excludes ``renumber``.
    max_ratio : float or None, default MAX_RATIO (100)
        How many times its compressed size a gzip file or an ``.npz`` member
        may expand to (output under 256 MiB is always accepted): beyond it the
        file is refused as a likely decompression bomb instead of filling
        memory. None reads it whatever its size.

    Returns
    -------
    EdgeList

    Raises
    ------
    GraphFormatError
        If the file is malformed, declares far more vertices than its edges
        warrant, or expands beyond ``max_ratio``; the message names the file
        and line.
    ValueError
        If ``fmt`` is not a known format or cannot be inferred, or ``n``
        contradicts the file or ``renumber``.
    MemoryError
        If the file does not fit in memory; the message names the file and
        what was being built.
    """
    reader = {"mtx": read_mtx, "edgelist": read_edgelist, "csv": read_csv, "npz": read_npz}
    return reader[resolve_format(path, fmt)](
        path, directed=directed, one_based=one_based, renumber=renumber, n=n,
        max_ratio=max_ratio,
    )
