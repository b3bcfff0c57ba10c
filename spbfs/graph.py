"""The in-process graph: two local blocks (out-edges and in-edges) and a config.

``Graph`` is the object BFS and the other algorithms run on. It holds the
pre-transposed adjacency ``B`` (``B[v, u]`` for an edge ``u -> v``) as a CSR or
DCSC block (by config alone), plus the block of ``B.T`` for row access. For an
undirected graph ``B`` is symmetric and both are the same object.

*Undirected* and *symmetric* are different statements: ``directed=False`` says
every edge goes both ways, so a non-symmetric input is symmetrized
(``A + A.T``); ``directed=True`` follows arcs as given, even when the matrix
happens to be symmetric; ``directed=None`` (matrices only) means "look": a
structurally symmetric matrix is taken as undirected, any other as directed.
Values are ignored by BFS: every stored entry, explicit zeros included, is an
edge.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np

from semirings.backend import Backend, get_backend
from semirings.blocks import Block, block_from_scipy
from spbfs.config import Config, as_config
from spbfs.construct import DEFAULT_CHUNK_EDGES, build_blocks
from spbfs.edges import (
    EdgeList,
    EdgeSource,
    check_count,
    check_vertex_ids,
    sparse_ids_problem,
)
from spbfs.io._common import MAX_RATIO
from spbfs.matrix_structure import (
    CANONICAL,
    check_compressed,
    row_order,
    structurally_symmetric,
)
from spbfs.search.checks import check_vertex

__all__ = ["Graph", "as_graph", "is_dist_graph"]


class Graph:
    """A graph stored as sparse blocks.

    Build one with :meth:`from_edgelist`, :meth:`from_edges`,
    :meth:`from_matrix`, :meth:`from_networkx` or :meth:`load`, or let
    :func:`as_graph` / :func:`spbfs.bfs` convert any of those inputs.

    Attributes
    ----------
    n : int
        Number of vertices.
    directed : bool
        Whether edges are followed one way only.
    out_block : Block
        ``B``: column ``u`` lists the out-neighbours of ``u`` (top-down).
    in_block : Block
        ``B.T``: column ``v`` lists the in-neighbours of ``v`` (bottom-up).
    edges : EdgeList or None
        The input edges when the graph was built from an edge list (kept for
        Graph500 validation and TEPS counting): the graph's own copy, so an
        edit of the caller's list after the build never reaches it.
    ids : numpy.ndarray or None
        Original vertex labels when the input was renumbered.
    config : Config
        The configuration the blocks were built with.
    input_degree : numpy.ndarray or None
        Input edge tuples at each vertex, repeats and self-loops included (a
        self-loop twice when undirected; a directed arc at its tail), when the
        graph was built from edges (:meth:`from_edgelist`, :meth:`from_source`);
        with a valid search's reached vertices it gives the Graph500 edge count
        without the edge list. None for other inputs.
    num_input_edges : int or None
        Input edge tuples the graph was built from, when built from edges.
    """

    def __init__(
        self,
        out_block: Block,
        in_block: Block,
        *,
        directed: bool,
        config: Config,
        edges: EdgeList | None = None,
        ids: np.ndarray | None = None,
    ) -> None:
        if out_block.shape[0] != out_block.shape[1]:
            raise ValueError(
                f"adjacency must be square, got shape {out_block.shape[0]}x{out_block.shape[1]}"
            )
        self.out_block = out_block
        self.in_block = in_block
        self.directed = bool(directed)
        self.config = config
        self.edges = edges
        self.ids = ids
        self.input_degree: np.ndarray | None = None
        self.num_input_edges: int | None = None if edges is None else edges.num_edges
        # "out" and "in" once computed: one dict, shared with this graph re-stored under
        # another config (with_config), so that either's search computes them for both.
        self._degrees: dict[str, Any] = {}
        # Per-graph state the search engines keep between searches (scratch buffers).
        self._search_cache: dict[str, Any] = {}

    # -- construction ------------------------------------------------------------
    @classmethod
    def from_edgelist(
        cls, edges: EdgeList, *, directed: bool | None = None, config: Config | None = None,
        progress: Callable[[int, int], Any] | None = None, copy: bool = True,
    ) -> Graph:
        """Build from an :class:`~spbfs.edges.EdgeList`.

        Self-loops and duplicate edges are dropped (they never change a BFS).
        ``directed=None`` takes ``edges.directed``, and undirected when that is
        None too. ``progress``, when given, is called as ``progress(i, n)``
        after block ``i`` of ``n`` (one block undirected, two directed).

        The blocks are built by :func:`spbfs.construct.build_blocks` over
        slices of the edge list, as :meth:`from_source` builds them from a
        generator: 4 bytes per stored entry where the ids and the merged
        entries fit in int32 (``index_dtype="auto"``).

        Ownership: ``edges`` stays the caller's, writable, and may have been
        edited since it was made, so its ids are checked (one compiled pass)
        before the build, and the graph keeps a copy of it as :attr:`edges`
        (16 bytes per edge, plus its weights and labels), never the caller's
        arrays. ``copy=False`` hands the list over instead (no copy, the list
        itself becomes :attr:`edges`): for a caller that made it and will not
        edit it again, such as a reader's output; the ids are checked all the
        same.

        Raises
        ------
        ValueError
            When an id of ``edges`` is outside ``[0, edges.n)``.
        """
        if not isinstance(edges, EdgeList):
            raise TypeError(f"edges must be an EdgeList, got {type(edges).__name__}")
        return cls._from_source(_own_copy(edges) if copy else edges, directed=directed,
                                config=config, on_block=progress)

    @classmethod
    def from_source(
        cls, source: EdgeSource, *, directed: bool | None = None, config: Config | None = None,
        chunk_edges: int = DEFAULT_CHUNK_EDGES,
        progress: Callable[[int, int], Any] | None = None,
    ) -> Graph:
        """Build from an edge source read in slices, never holding its whole edge list.

        The streaming build (:mod:`spbfs.construct`): each slice of
        ``chunk_edges`` edges is read twice (count, then place), so the build
        holds the blocks, a few n-sized arrays and one slice, and the graph is
        the same, bit for bit, as :meth:`from_edgelist` of all the edges. With
        :class:`spbfs.generators.KroneckerSource` the edge list never exists.

        Parameters
        ----------
        source : EdgeSource
            An :class:`~spbfs.edges.EdgeList` or any object with ``n``,
            ``num_edges``, ``directed``, ``meta`` and ``chunk(start, stop)``
            that returns the same edges every time.
        directed : bool, optional
            As in :meth:`from_edgelist`.
        config : Config, optional
            Format, index dtype and backend.
        chunk_edges : int
            Edges per slice.
        progress : callable, optional
            ``progress(i, n)`` after each of the ``n`` slice reads (two per slice).

        Returns
        -------
        Graph
            ``edges`` is a copy of the source when it is an EdgeList (as
            :meth:`from_edgelist` keeps it), else None: validate
            searches with :func:`spbfs.validate.validate_bfs_tree_graph` and
            count their Graph500 edges from :attr:`input_degree`.
        """
        if not isinstance(source, EdgeSource):
            raise TypeError(f"source must be an EdgeList or an EdgeSource (n, num_edges, "
                            f"directed, meta, chunk(start, stop)), got {type(source).__name__}")
        if isinstance(source, EdgeList):
            source = _own_copy(source)
        return cls._from_source(source, directed=directed, config=config,
                                chunk_edges=chunk_edges, on_chunk=progress)

    @classmethod
    def _from_source(
        cls, source: EdgeSource, *, directed: bool | None, config: Config | None,
        chunk_edges: int = DEFAULT_CHUNK_EDGES,
        on_chunk: Callable[[int, int], Any] | None = None,
        on_block: Callable[[int, int], Any] | None = None,
    ) -> Graph:
        """Build from ``source``; an EdgeList here is the graph's own (copied or fresh)."""
        config = as_config(config)
        if directed is None:
            directed = bool(source.directed)
        built = build_blocks(source, directed=bool(directed), fmt=config.format,
                             index_dtype=config.index_dtype, backend=_block_backend(config),
                             chunk_edges=chunk_edges, on_chunk=on_chunk, on_block=on_block)
        edges = source if isinstance(source, EdgeList) else None
        g = cls(built.out_block, built.in_block, directed=bool(directed), config=config,
                edges=edges, ids=getattr(source, "ids", None))
        g.input_degree = built.input_degree
        g.num_input_edges = built.num_edges
        return g

    @classmethod
    def from_edges(
        cls,
        src: Any,
        dst: Any,
        n: int | None = None,
        *,
        directed: bool = False,
        config: Config | None = None,
    ) -> Graph:
        """Build from two arrays of endpoints; ``n`` defaults to ``max id + 1``.

        Raises
        ------
        ValueError
            When ``n`` is left out and the largest id would make a graph far
            larger than its edges warrant (ids that are labels; see
            :func:`spbfs.edges.sparse_ids_problem`).
        """
        given = (src, dst)
        src = np.asarray(src)
        dst = np.asarray(dst)
        if n is None:
            # Unsigned arrays have no -1: the maximum of an empty side is left out.
            largest = max((int(a.max()) for a in (src, dst) if a.size), default=-1)
            problem = sparse_ids_problem(largest, int(src.size), ", or give n explicitly")
            if problem is not None:
                raise ValueError(problem)
            n = largest + 1
        else:
            n = check_count(n, "n")
        edges = EdgeList(src, dst, n, directed)
        # Arrays converted on the way (lists, other dtypes) are already the graph's own.
        if any(np.may_share_memory(a, b) for a in (edges.src, edges.dst) for b in given
               if isinstance(b, np.ndarray)):
            edges = _own_copy(edges)
        return cls._from_source(edges, directed=directed, config=config)

    @classmethod
    def from_matrix(
        cls, matrix: Any, *, directed: bool | None = None, config: Config | None = None
    ) -> Graph:
        """Build from a scipy/cupyx sparse adjacency matrix (``A[u, v]``: edge ``u -> v``).

        The CSR structure of ``A`` is the CSC structure of ``B = A.T``, so a
        csr input becomes a csr-format block of the same arrays; the Graph
        copies them first (``indptr`` and ``indices``, not the values), so that
        an edit of ``A`` after the build never reaches the graph (a kept graph
        sharing them would search ids nobody checked). Searches on ``A``
        itself (``spbfs.bfs(A, s)``) share them instead, safely: their
        :class:`~spbfs.matrix_cache.MatrixCache` checks a digest of the
        structure before every use. Every stored entry is an edge, explicit
        zeros included; duplicate entries are one edge. The structure is read
        in full before it is used: pointers and ids out of range raise, and
        rows are sorted and merged (on a copy) when the arrays say they need it,
        whatever scipy's ``has_canonical_format`` flag says (an in-place edit
        does not reset it).

        Raises
        ------
        TypeError
            When ``matrix`` is not a scipy/cupyx sparse matrix.
        ValueError
            When it is not square, or its ``indptr`` / ``indices`` are invalid.
        """
        return cls._from_matrix(matrix, directed=directed, config=config, share=False)

    @classmethod
    def _from_matrix(
        cls, matrix: Any, *, directed: bool | None, config: Config | None, share: bool
    ) -> Graph:
        """:meth:`from_matrix`; ``share=True`` lets the blocks use ``matrix``'s own arrays.

        Only for a caller that checks the matrix is unchanged before every use
        of the graph (the matrix cache's digest) or that owns the matrix.
        """
        import scipy.sparse as sp

        config = as_config(config)
        if hasattr(matrix, "get") and not sp.issparse(matrix):
            matrix = matrix.get()
        if not sp.issparse(matrix):
            raise TypeError(f"matrix must be a scipy sparse matrix, got {type(matrix).__name__}")
        if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
            raise ValueError(
                f"matrix must be square to be an adjacency matrix, got shape "
                f"{'x'.join(str(d) for d in matrix.shape)}"
            )
        a = matrix.tocsr()
        if not share and (a is matrix or _shares_structure(a, matrix)):
            # Copied before it is checked, so the arrays checked are the arrays kept.
            a = copy.copy(a)
            a.indptr = a.indptr.copy()
            a.indices = a.indices.copy()
        a = _canonical_csr(a)
        pattern_t = a.T  # csc of B = A.T, no copy
        if directed is None:
            directed = not _structurally_symmetric(a, canonical=True)
        elif not directed and not _structurally_symmetric(a, canonical=True):
            # "Undirected" means each edge goes both ways. Ones, not A's values: a sum
            # would drop an explicit zero, or a value cancelled by its mirror.
            ones = sp.csr_matrix((np.ones(a.nnz, dtype=np.int8), a.indices, a.indptr),
                                 shape=a.shape)
            a = (ones + ones.T).tocsr()
            pattern_t = a.T
        backend = _block_backend(config)
        kw = {"pattern": True, "index_dtype": config.index_dtype, "backend": backend}
        out_block = block_from_scipy(config.format, pattern_t, **kw)
        # The in-block is B.T = A itself, stored column-major (a csc conversion).
        in_block = out_block if not directed else block_from_scipy(config.format, a, **kw)
        return cls(out_block, in_block, directed=bool(directed), config=config)

    @classmethod
    def from_networkx(
        cls, g: Any, *, weight: str | None = "weight", config: Config | None = None
    ) -> Graph:
        """Build from a networkx graph; nodes are renumbered in ``g.nodes`` order.

        ``graph.ids`` maps the new ids back to the networkx node labels, and
        the algorithms of :mod:`spbfs.algorithms` take and report vertices by
        those labels for a graph built here (``sssp(G, source=10)`` means the
        node labelled 10).

        Parameters
        ----------
        g : networkx.Graph, DiGraph, MultiGraph or MultiDiGraph
            The graph. Every edge of a multigraph is kept (parallel edges
            included) in ``graph.edges``.
        weight : str or None
            The edge attribute holding weights, networkx's ``"weight"`` by
            default. When at least one edge has it, ``graph.edges.weights``
            holds a weight for every edge, 1 where the attribute is missing
            (networkx's convention), and the weighted algorithms (``sssp``,
            ``pagerank``) use them. When no edge has it, or ``weight`` is
            None, the graph is unweighted.
        config : Config, optional
            Format and backend.

        Raises
        ------
        TypeError
            When a weight is not a real number (the message names the edge).
        """
        nodes = list(g.nodes)
        index = {v: k for k, v in enumerate(nodes)}
        missing = object()
        if weight is None:
            triples = [(u, v, 1) for u, v in g.edges()]
        else:
            triples = list(g.edges(data=weight, default=missing))
        m = len(triples)
        src = np.fromiter((index[t[0]] for t in triples), np.int64, m)
        dst = np.fromiter((index[t[1]] for t in triples), np.int64, m)
        weights = None
        if weight is not None and any(t[2] is not missing for t in triples):
            weights = _networkx_weights(triples, weight, missing)
        ids = np.empty(len(nodes), dtype=object)
        ids[:] = nodes
        edges = EdgeList(src, dst, len(nodes), directed=g.is_directed(), weights=weights,
                         ids=ids, meta={"labels": "networkx"})
        return cls._from_source(edges, directed=None, config=config)  # arrays made here

    @classmethod
    def load(
        cls,
        path: str,
        *,
        fmt: str | None = None,
        directed: bool | None = None,
        renumber: bool = False,
        config: Config | None = None,
        n: int | None = None,
        max_ratio: float | None = MAX_RATIO,
        one_based: bool | None = None,
    ) -> Graph:
        """Read a graph file (Matrix Market, SNAP edge list, CSV, npz) and build it.

        ``fmt``, ``directed``, ``renumber``, ``n`` (to insist on a vertex count the
        size rule would refuse), ``max_ratio`` (the decompression limit; None for
        none) and ``one_based`` are :func:`spbfs.io.read_graph`'s.
        """
        from spbfs.io import read_graph

        edges = read_graph(path, fmt, directed=directed, renumber=renumber, n=n,
                           one_based=one_based, max_ratio=max_ratio)
        return cls._from_source(edges, directed=directed, config=config)  # read here

    def with_config(self, config: Config) -> Graph:
        """This graph re-stored under another config (format, index dtype, backend)."""
        same = (
            config.format == self.config.format
            and config.index_dtype == self.config.index_dtype
            and _block_backend(config) == self.out_block.backend
        )
        if same:
            if config == self.config:
                return self
            g = Graph(self.out_block, self.in_block, directed=self.directed, config=config,
                      edges=self.edges, ids=self.ids)
            # Same blocks: what searches keep per graph (degrees, scratch arrays) is shared,
            # so bfs(g, s, config=...) in a loop does not rebuild it on every call.
            g._degrees = self._degrees
            g._search_cache = self._search_cache
        elif self.edges is not None:
            # The graph's own copy of its edges: nothing to copy again.
            return Graph._from_source(self.edges, directed=self.directed, config=config)
        else:
            a = self.out_block.to_scipy().T.tocsr()
            g = Graph._from_matrix(a, directed=self.directed, config=config, share=True)
            g.ids = self.ids
        # The same graph: its input counts carry over (a streamed graph has no edge list).
        g.input_degree = self.input_degree
        g.num_input_edges = self.num_input_edges
        return g

    # -- properties ----------------------------------------------------------------
    @property
    def n(self) -> int:
        """Number of vertices."""
        return self.out_block.shape[0]

    @property
    def nnz(self) -> int:
        """Stored arcs (an undirected edge counts twice)."""
        return self.out_block.nnz

    @property
    def num_edges(self) -> int:
        """Edges: arcs for a directed graph, unordered pairs for an undirected one."""
        if self.directed:
            return self.nnz
        # Self-loops are stored once, every other edge twice.
        return (self.nnz + self.num_self_loops) // 2

    @property
    def num_self_loops(self) -> int:
        """Number of stored self-loops (0 for graphs built from edge lists)."""
        # One O(nnz) pass, then cached: repr() and num_edges ask for it often.
        cached = self.__dict__.get("_num_self_loops")
        if cached is None:
            b = self.out_block
            xp = b.backend.xp
            cached = int(xp.count_nonzero(b.column_ids() == b.ind))
            self.__dict__["_num_self_loops"] = cached
        return cached

    @property
    def backend(self) -> Backend:
        """Where the blocks live."""
        return self.out_block.backend

    @property
    def out_degree(self) -> Any:
        """Out-degree of every vertex (int64)."""
        deg = self._degrees.get("out")
        if deg is None:
            deg = self._degrees["out"] = _column_counts(self.out_block)
        return deg

    @property
    def in_degree(self) -> Any:
        """In-degree of every vertex (int64)."""
        deg = self._degrees.get("in")
        if deg is None:
            deg = self._degrees["in"] = (
                self.out_degree if self.in_block is self.out_block
                else _column_counts(self.in_block)
            )
        return deg

    @property
    def nbytes(self) -> int:
        """Bytes held by the blocks (each block once)."""
        if self.in_block is self.out_block:
            return self.out_block.nbytes
        return self.out_block.nbytes + self.in_block.nbytes

    def check_vertex(self, v: Any, name: str = "source") -> int:
        """Return ``v`` as an int after checking it is a vertex id of this graph."""
        return check_vertex(v, self.n, name)

    @property
    def labelled(self) -> bool:
        """Whether vertices are named by their labels ``ids`` (a graph from networkx)."""
        return (self.ids is not None and self.edges is not None
                and self.edges.meta.get("labels") == "networkx")

    def resolve_vertex(self, v: Any, name: str = "source") -> Any:
        """The vertex id of ``v``: a node label when :attr:`labelled`, else ``v`` as given.

        A graph from :meth:`from_networkx` names its vertices by their networkx
        labels, so ``source=10`` means the node labelled 10, not the eleventh
        vertex. Other graphs take ids (checked by the caller).

        Raises
        ------
        ValueError
            When ``v`` is not a node label of a labelled graph (naming ``name``).
        """
        if not self.labelled:
            return v
        try:
            return self.vertex_id(v)
        except ValueError:
            raise ValueError(f"{name}={v!r} is not a node of the networkx graph") from None

    def vertex_id(self, label: Any) -> int:
        """Vertex id of an original label (renumbered inputs), or the id itself."""
        if self.ids is None:
            return self.check_vertex(label, "label")
        if self.ids.dtype == object:
            # Labels of any hashable type (tuples, strings, mixed): looked up as networkx
            # does, by hash and equality, not by numpy's elementwise ==.
            index = self.__dict__.get("_label_index")
            if index is None:
                index = {}
                for k, lab in enumerate(self.ids.tolist()):
                    index.setdefault(lab, k)
                self.__dict__["_label_index"] = index
            try:
                hit = index.get(label)
            except TypeError:  # an unhashable label is no vertex
                hit = None
            if hit is None:
                raise ValueError(f"label {label!r} is not a vertex of this graph")
            return hit
        hits = np.flatnonzero(self.ids == label)
        if hits.size == 0:
            raise ValueError(f"label {label!r} is not a vertex of this graph")
        return int(hits[0])

    def to_scipy(self) -> Any:
        """Adjacency matrix ``A`` (``A[u, v]`` for an edge ``u -> v``) as scipy csr."""
        return self.out_block.to_scipy().T.tocsr()

    def __repr__(self) -> str:
        kind = "directed" if self.directed else "undirected"
        return (
            f"Graph(n={self.n}, edges={self.num_edges}, {kind}, format={self.config.format}, "
            f"index={self.out_block.index_dtype}, {self.nbytes / 2**20:.1f} MiB, "
            f"backend={self.backend.name})"
        )

    @classmethod
    def from_graphblas(
        cls, M: Any, *, directed: bool | None = None, config: Config | None = None
    ) -> Graph:
        """Build from a python-graphblas matrix (``M[u, v]``: edge ``u -> v``).

        The structure of ``M`` is the graph (every stored entry is an edge,
        explicit zeros and ``False`` included); its values, unless ``M`` is
        ``BOOL``, are kept as edge weights in ``graph.edges.weights``, which
        the weighted algorithms (:func:`~spbfs.algorithms.sssp`,
        :func:`~spbfs.algorithms.pagerank`) use, as they use the values of a
        scipy matrix passed to them. For an undirected graph each edge is
        listed once, with the smaller of ``M[u, v]`` and ``M[v, u]`` where
        both are stored (``scipy.sparse.csgraph``'s rule for undirected
        weights).

        Copies: ``M`` is exported with ``M.ss.export("csr")``, which duplicates it
        inside GraphBLAS once (``M`` owns its memory and may change later, so the
        graph never shares it) and hands the duplicate to numpy without a further
        copy. Where the layouts agree (``M`` stored by row as CSR, a structurally
        symmetric or ``directed=True`` pattern, ``format="csr"`` and
        ``index_dtype="int64"``) the out-block is those arrays as they are, so the
        duplicate is the only copy of the structure. Otherwise: GraphBLAS
        converts a bitmap, hypersparse or by-column ``M`` while duplicating it;
        the block narrows the ids to int32 (``index_dtype="auto"`` where they
        fit) or compresses them (``dcsc``); a directed graph adds its in-block
        (``Aᵀ``), as every input does; an undirected graph from a non-symmetric
        or weighted ``M`` is ``M ∪ Mᵀ`` computed in GraphBLAS and handed over
        without a copy. ``directed=None`` or ``False`` checks the symmetry on
        the exported arrays (a transposed copy of the pattern, then freed).
        Weights add their own arrays (``graph.edges``).

        Parameters
        ----------
        M : graphblas.Matrix
            A square matrix, or its transpose ``M.T``.
        directed : bool, optional
            ``None`` looks at the structure: symmetric means undirected.
            ``False`` makes every edge go both ways; ``True`` follows the
            entries as arcs.
        config : Config, optional
            Format, index dtype and backend of the blocks.

        Returns
        -------
        Graph
            With ``edges`` holding the weighted edges, or None for a ``BOOL``
            matrix.

        Raises
        ------
        TypeError
            When ``M`` is not a graphblas matrix (an expression such as
            ``A @ B`` must be computed with ``.new()`` first) or holds values
            that are not real numbers (complex or user-defined types).
        ValueError
            When ``M`` is not square.
        """
        import scipy.sparse as sp

        kind = type(M)
        if not kind.__module__.startswith("graphblas") or kind.__name__ not in (
            "Matrix", "TransposedMatrix"
        ):
            hint = (" (an expression: compute it with .new() first)"
                    if kind.__module__.startswith("graphblas") else "")
            raise TypeError(f"M must be a graphblas.Matrix, got {kind.__name__}{hint}")
        import graphblas as gb

        if M.nrows != M.ncols:
            raise ValueError(
                f"M must be square to be an adjacency matrix, got shape {M.nrows}x{M.ncols}"
            )
        n = int(M.nrows)
        dtype = M.dtype
        weighted = dtype != gb.dtypes.BOOL
        if weighted and np.dtype(dtype.np_type).kind not in "iuf":
            raise TypeError(
                f"M has dtype {dtype.name}: edge weights must be real numbers "
                "(or BOOL for an unweighted graph)"
            )

        def pattern(info: dict[str, Any]) -> Any:
            # GraphBLAS indices are uint64 below 2**63: their int64 view is the same bits,
            # and a scipy *array* keeps int64 indices as given (no copy). Bool ones as
            # values, so that no value (or sum of two) can drop an entry.
            indptr = info["indptr"].view(np.int64)
            cols = info["col_indices"].view(np.int64)
            return sp.csr_array((np.ones(cols.shape[0], dtype=bool), cols, indptr),
                                shape=(n, n))

        # A transpose is materialized once; that temporary is ours, so unpacking it hands
        # its memory to numpy without a copy. M itself is exported (duplicated) instead.
        own = kind.__name__ != "Matrix"
        a = M.new() if own else M
        info = a.ss.unpack("csr", sort=True) if own else a.ss.export("csr", sort=True)
        a_csr = pattern(info)
        if not directed:
            symmetric = _structurally_symmetric(a_csr)  # on the export: cheaper than in GrB
            if directed is None:
                directed = not symmetric
            if not directed and (weighted or not symmetric):
                # Undirected: every edge both ways, the smaller weight where both are given
                # (the same for M and Mᵀ; a may have been unpacked, M.T.T is M).
                base = M if not own else M.T
                u = base.ewise_add(base.T, gb.binary.min if weighted else gb.binary.any).new()
                info = u.ss.unpack("csr", sort=True)
                a_csr = pattern(info)
        indptr, cols = a_csr.indptr, a_csr.indices
        nnz = cols.shape[0]
        # B = Aᵀ is A's csr arrays read as csc: no copy. As in from_matrix, but the
        # symmetry is already known (checked, or made, above).
        config = as_config(config)
        kw = {"pattern": True, "index_dtype": config.index_dtype,
              "backend": _block_backend(config)}
        out_block = block_from_scipy(config.format, a_csr.T, **kw)
        in_block = block_from_scipy(config.format, a_csr, **kw) if directed else out_block
        g = cls(out_block, in_block, directed=bool(directed), config=config)
        if weighted:
            values = info["values"]
            if info["is_iso"]:
                values = np.full(nnz, values[0], dtype=values.dtype)
            rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
            if not directed:
                # Each undirected edge once: the lower triangle (a is symmetric by now).
                keep = rows >= cols
                rows, cols, values = rows[keep], cols[keep], values[keep]
            g.edges = EdgeList(rows, cols, n, directed=bool(directed), weights=values,
                               meta={"source": "graphblas"})
        return g


def _networkx_weights(triples: list[tuple[Any, Any, Any]], attr: str, missing: Any) -> np.ndarray:
    """The weights of networkx edges ``(u, v, value)``: float64, 1 where ``missing``."""
    out = np.ones(len(triples), dtype=np.float64)
    for k, (u, v, w) in enumerate(triples):
        if w is missing:
            continue
        if isinstance(w, bool) or not isinstance(w, int | float | np.integer | np.floating):
            raise TypeError(
                f"weight: edge ({u!r}, {v!r}) has {attr}={w!r}, not a real number"
            )
        out[k] = w
    return out


def _block_backend(config: Config) -> Backend:
    """Blocks live on the GPU for cupy, on the host for numpy and numba."""
    return get_backend(config.backend)


def _column_counts(block: Block) -> Any:
    xp = block.backend.xp
    if block.format == "csr":
        return xp.diff(block.ptr).astype(np.int64)
    deg = xp.zeros(block.shape[1], dtype=np.int64)
    deg[block.jc] = xp.diff(block.ptr)
    return deg


def _shares_structure(a: Any, matrix: Any) -> bool:
    """Whether csr ``a``'s structure may be ``matrix``'s own arrays (bounds only: cheap)."""
    theirs = [getattr(matrix, k, None) for k in ("indptr", "indices", "row", "col")]
    return any(np.may_share_memory(mine, t) for mine in (a.indptr, a.indices)
               for t in theirs if isinstance(t, np.ndarray))


def _own_copy(edges: EdgeList) -> EdgeList:
    """A copy of ``edges`` whose arrays no one else holds (meta shallow-copied).

    A graph keeps this, not the caller's list: its ids were checked when the
    graph was built, and a later edit of the caller's arrays must not reach
    the graph's validation, its re-storing (:meth:`Graph.with_config`) or its
    weights. ``EdgeList`` itself rechecks the copy's ids only in the build.
    """
    own = copy.copy(edges)
    own.src = edges.src.copy()
    own.dst = edges.dst.copy()
    own.weights = None if edges.weights is None else edges.weights.copy()
    own.ids = None if edges.ids is None else edges.ids.copy()
    own.meta = dict(edges.meta)
    return own


def _canonical_csr(matrix: Any) -> Any:
    """``matrix`` as csr with sorted rows and no duplicate, checked (a copy only if needed)."""
    a = matrix.tocsr()
    check_compressed(a.indptr, a.indices, a.shape[1])
    if row_order(a.indptr, a.indices) != CANONICAL:
        a = a.copy()
        # scipy skips the work when its flags say it is done; the arrays said otherwise.
        a.has_sorted_indices = False
        a.has_canonical_format = False
        a.sum_duplicates()
    return a


def _structurally_symmetric(a: Any, canonical: bool = False) -> bool:
    """Whether the pattern of a square csr matrix equals its transpose (no transpose built).

    ``canonical=True`` says ``a`` is already checked and canonical
    (:func:`_canonical_csr`); otherwise it is made so first.
    """
    if a.nnz == 0:
        return True
    if not canonical:
        a = _canonical_csr(a)
    return structurally_symmetric(a.indptr, a.indices)


def is_dist_graph(obj: Any) -> bool:
    """Whether ``obj`` is a :class:`~spbfs.mpi.DistGraph` (a rank's piece of a grid's graph).

    Asked without importing :mod:`spbfs.mpi`: a DistGraph exists only once its
    module is loaded, so a process that never made one never loads MPI here.
    The top-level searches and algorithms run their grid twins on one.
    """
    import sys

    module = sys.modules.get("spbfs.mpi.graph")
    return module is not None and isinstance(obj, module.DistGraph)


def as_graph(obj: Any, *, config: Config | None = None, directed: bool | None = None,
             weight: str | None = "weight") -> Graph:
    """Convert ``obj`` to a :class:`Graph` (a Graph under another config is re-stored).

    Accepts a Graph, an EdgeList, a scipy/cupyx sparse matrix, a networkx graph,
    a ``graphblas.Matrix``, a path to a graph file, or a ``(src, dst)`` pair of arrays.
    ``config`` may be a :class:`Config`, a mapping of settings or None
    (:func:`spbfs.config.as_config`). ``weight`` names a networkx graph's weight
    attribute (:meth:`Graph.from_networkx`); a search that ignores weights passes
    None, so that it neither reads nor checks them.
    """
    import os

    import scipy.sparse as sp

    if isinstance(obj, Graph):
        return obj if config is None else obj.with_config(as_config(config))
    config = as_config(config)
    if isinstance(obj, EdgeList):
        return Graph.from_edgelist(obj, directed=directed, config=config)
    if sp.issparse(obj) or type(obj).__module__.startswith("cupyx"):
        return Graph.from_matrix(obj, directed=directed, config=config)
    if isinstance(obj, str | os.PathLike):
        return Graph.load(os.fspath(obj), directed=directed, config=config)
    if type(obj).__module__.startswith("networkx"):
        return Graph.from_networkx(obj, weight=weight, config=config)
    if type(obj).__module__.startswith("graphblas"):
        return Graph.from_graphblas(obj, directed=directed, config=config)
    if is_dist_graph(obj):
        raise TypeError("a DistGraph is a rank's piece of a process grid's graph and stays "
                        "distributed: pass it to spbfs.bfs or an algorithm, which run their "
                        "grid versions, or gather what you need")
    if isinstance(obj, tuple) and len(obj) == 2:
        src = check_vertex_ids(obj[0], np.iinfo(np.int64).max, "src")
        dst = check_vertex_ids(obj[1], np.iinfo(np.int64).max, "dst")
        return Graph.from_edges(src, dst, directed=bool(directed), config=config)
    raise TypeError(
        f"cannot make a graph from {type(obj).__name__}: pass a Graph, EdgeList, scipy sparse "
        f"matrix, networkx graph, graphblas Matrix, file path or (src, dst) arrays"
    )
