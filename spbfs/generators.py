"""Synthetic graph generators.

All generators return an :class:`~spbfs.edges.EdgeList`. The Kronecker / R-MAT
engine is counter-based: edge ``k`` is a pure function of ``(seed, k)``, so
any rank of a distributed job can generate any slice of the global edge list
(:func:`kronecker_edges`) and the slices of any partition concatenate to the
same graph, whatever the process grid.

Random numbers come from the splitmix64 output function applied to a
counter: word ``w`` of edge ``k`` is ``mix64(key + (k * L + w) * gamma)``,
which is exactly the ``(k * L + w)``-th output of a splitmix64 stream started
at ``key``; splitmix64 passes BigCrush. The vertex relabelling is a keyed
4-round Feistel network (a pseudo-random permutation) restricted to
``[0, 2**scale)`` by cycle walking, so it is evaluated per id without ever
materializing an n-array.
"""

from __future__ import annotations

import numbers
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from numba import njit, prange

from spbfs.edges import EdgeList

__all__ = [
    "KroneckerSource",
    "erdos_renyi",
    "fe_mesh",
    "grid2d",
    "grid3d",
    "kronecker",
    "kronecker_edges",
    "path",
    "permute_vertices",
    "rmat",
    "star",
]

_MASK64 = (1 << 64) - 1
_GAMMA = 0x9E3779B97F4A7C15
_M1 = 0xBF58476D1CE4E5B9
_M2 = 0x94D049BB133111EB
_FEISTEL_ROUNDS = 4

# numba treats module-level numpy scalars as typed constants; plain Python ints
# this large would be typed int64/float64 and break the wrap-around arithmetic.
_U_GAMMA = np.uint64(_GAMMA)
_U_M1 = np.uint64(_M1)
_U_M2 = np.uint64(_M2)
_U_MASK32 = np.uint64(0xFFFFFFFF)

#: Graph500 default initiator probabilities.
GRAPH500_ABC: tuple[float, float, float] = (0.57, 0.19, 0.19)


def _mix64_py(z: int) -> int:
    """splitmix64 output function on Python ints (for key derivation)."""
    z &= _MASK64
    z = ((z ^ (z >> 30)) * _M1) & _MASK64
    z = ((z ^ (z >> 27)) * _M2) & _MASK64
    return z ^ (z >> 31)


@njit(cache=True, inline="always")
def _mix64(z):
    z = (z ^ (z >> np.uint64(30))) * _U_M1
    z = (z ^ (z >> np.uint64(27))) * _U_M2
    return z ^ (z >> np.uint64(31))


def _check_seed(seed) -> int:
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"seed must be an int, got {type(seed).__name__}")
    seed = int(seed)
    if not 0 <= seed < 2**64:
        raise ValueError(f"seed must lie in [0, 2**64), got {seed}")
    return seed


def _derive_keys(seed: int) -> tuple[int, np.ndarray]:
    """Edge-stream key and Feistel round keys, all derived from ``seed``.

    Separate keys keep the permutation independent of the edge stream; the
    first few outputs of splitmix64 seeded with ``seed`` serve as keys.
    """
    keys = [_mix64_py(seed + (i + 1) * _GAMMA) for i in range(1 + _FEISTEL_ROUNDS)]
    return keys[0], np.array(keys[1:], dtype=np.uint64)


@njit(cache=True, inline="always")
def _permute_one(x, scale, half, mask, rkeys):
    """Feistel bijection on ``2*half`` bits, cycle-walked into [0, 2**scale)."""
    limit = np.uint64(1) << np.uint64(scale)
    h = np.uint64(half)
    while True:
        left = x >> h
        right = x & mask
        for k in range(rkeys.shape[0]):
            t = right
            right = left ^ (_mix64(right ^ rkeys[k]) & mask)
            left = t
        x = (left << h) | right
        # x was in the smaller domain, so its cycle returns there: walking ends.
        if x < limit:
            return x


@njit(parallel=True, cache=True)
def _permute_kernel(ids, scale, rkeys, out):
    half = (scale + 1) // 2
    mask = (np.uint64(1) << np.uint64(half)) - np.uint64(1)
    for i in prange(ids.shape[0]):
        out[i] = np.int64(_permute_one(np.uint64(ids[i]), scale, half, mask, rkeys))


@njit(parallel=True, cache=True)
def _kron_kernel(start, scale, key, ta, tab, tabc, permute, rkeys, src, dst):
    count = src.shape[0]
    words = (scale + 1) // 2  # each 64-bit word feeds two levels, 32 bits each
    uwords = np.uint64(words)
    vmask = (np.uint64(1) << np.uint64(scale)) - np.uint64(1)
    half = words  # the Feistel halves have as many bits as there are words
    fmask = (np.uint64(1) << np.uint64(half)) - np.uint64(1)
    for i in prange(count):
        ctr = np.uint64(start + i) * uwords
        u = np.uint64(0)
        v = np.uint64(0)
        for w in range(words):
            h = _mix64(key + (ctr + np.uint64(w)) * _U_GAMMA)
            for j in range(2):
                r = (h >> np.uint64(32 * j)) & _U_MASK32
                # Quadrant (row bit, column bit) by thresholds: (0,0) if r < a,
                # (0,1) if r < a+b, (1,0) if r < a+b+c, else (1,1). Computed
                # branch-free: the outcome is random, so branches mispredict.
                ii = np.uint64(r >= tab)
                jj = np.uint64((r >= ta) & (r < tab)) | np.uint64(r >= tabc)
                bit = np.uint64(2 * w + j)
                u |= ii << bit
                v |= jj << bit
        # An odd scale draws one level too many; dropping it keeps the law.
        u &= vmask
        v &= vmask
        if permute:
            u = _permute_one(u, scale, half, fmask, rkeys)
            v = _permute_one(v, scale, half, fmask, rkeys)
        src[i] = np.int64(u)
        dst[i] = np.int64(v)


def _check_int(value, name: str, lo: int, hi: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    value = int(value)
    if value < lo or (hi is not None and value > hi):
        rng = f"in [{lo}, {hi}]" if hi is not None else f">= {lo}"
        raise ValueError(f"{name} must be {rng}, got {value}")
    return value


def _check_probs(a: float, b: float, c: float) -> tuple[float, float, float]:
    for name, p in (("a", a), ("b", b), ("c", c)):
        if not isinstance(p, numbers.Real) or not 0.0 < float(p) < 1.0:
            raise ValueError(f"{name} must be a probability in (0, 1), got {p!r}")
    if not a + b + c < 1.0:
        raise ValueError(f"a + b + c must be < 1 (d = 1 - a - b - c > 0), got {a + b + c!r}")
    return float(a), float(b), float(c)


def _thresholds(a: float, b: float, c: float) -> tuple[np.uint64, np.uint64, np.uint64]:
    # 32-bit resolution: probabilities are quantized to 2**-32, far below
    # any sampling noise at feasible sizes.
    def q(p: float) -> np.uint64:
        return np.uint64(min(round(p * 2**32), 2**32))

    return q(a), q(a + b), q(a + b + c)


def kronecker_edges(
    scale: int,
    edgefactor: int = 16,
    *,
    seed: int = 0,
    start: int = 0,
    stop: int | None = None,
    a: float = 0.57,
    b: float = 0.19,
    c: float = 0.19,
    permute: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """Edges ``start .. stop-1`` of the Kronecker graph, as int64 ``(src, dst)``.

    Edge ``k`` depends only on ``(seed, k)`` and the parameters, so any
    chunking ``[0, k1), [k1, k2), ...`` concatenates to exactly the full edge
    list: each rank of a distributed job can generate its share alone.

    Parameters
    ----------
    scale : int
        ``log2`` of the number of vertices, in ``[1, 40]``.
    edgefactor : int, default 16
        Edges per vertex: the graph has ``m = edgefactor * 2**scale`` edges.
    seed : int, default 0
        Any int in ``[0, 2**64)``.
    start, stop : int
        Global edge index range, ``0 <= start <= stop <= m``; ``stop=None``
        means ``m``.
    a, b, c : float
        Initiator probabilities of the quadrants (0,0), (0,1), (1,0);
        ``d = 1 - a - b - c``.
    permute : bool, default True
        Relabel vertices with :func:`permute_vertices` (Graph500 requires it:
        without it, low ids are the hubs).

    Returns
    -------
    src, dst : numpy.ndarray
        int64 arrays of length ``stop - start`` with ids in ``[0, 2**scale)``.
    """
    scale = _check_int(scale, "scale", 1, 40)
    edgefactor = _check_int(edgefactor, "edgefactor", 1)
    a, b, c = _check_probs(a, b, c)
    seed = _check_seed(seed)
    m = edgefactor << scale
    stop = m if stop is None else _check_int(stop, "stop", 0, m)
    start = _check_int(start, "start", 0, stop)
    key, rkeys = _derive_keys(seed)
    ta, tab, tabc = _thresholds(a, b, c)
    src = np.empty(stop - start, np.int64)
    dst = np.empty(stop - start, np.int64)
    _kron_kernel(start, scale, np.uint64(key), ta, tab, tabc, bool(permute), rkeys, src, dst)
    return src, dst


def permute_vertices(ids: np.ndarray, scale: int, seed: int = 0) -> np.ndarray:
    """Apply the seed-keyed vertex relabelling used by :func:`kronecker`.

    A bijection of ``[0, 2**scale)`` evaluated elementwise (4-round Feistel
    network on ``2*ceil(scale/2)`` bits, cycle-walked back into range), so a
    rank can relabel its own ids without an n-array.
    ``kronecker(..., permute=True)`` equals ``permute_vertices`` applied to
    both endpoints of ``kronecker(..., permute=False)``.

    Parameters
    ----------
    ids : array_like of int
        Vertex ids in ``[0, 2**scale)``.
    scale : int
        ``log2`` of the number of vertices, in ``[1, 40]``.
    seed : int, default 0
        The generator seed.

    Returns
    -------
    numpy.ndarray
        int64 array of the same shape.
    """
    scale = _check_int(scale, "scale", 1, 40)
    seed = _check_seed(seed)
    arr = np.asarray(ids)
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"ids must be integers, got dtype {arr.dtype}")
    flat = np.ascontiguousarray(arr, dtype=np.int64).ravel()
    if flat.size and (int(flat.min()) < 0 or int(flat.max()) >= 1 << scale):
        raise ValueError(f"ids must lie in [0, 2**{scale})")
    _, rkeys = _derive_keys(seed)
    out = np.empty_like(flat)
    _permute_kernel(flat, scale, rkeys, out)
    return out.reshape(arr.shape)


def kronecker(
    scale: int,
    edgefactor: int = 16,
    *,
    seed: int = 0,
    a: float = 0.57,
    b: float = 0.19,
    c: float = 0.19,
    permute: bool = True,
    progress: Callable[[int, int], Any] | None = None,
) -> EdgeList:
    """Graph500 Kronecker graph: ``2**scale`` vertices, ``edgefactor * 2**scale`` edges.

    Each edge picks, independently for each of the ``scale`` bit levels, one
    quadrant of the adjacency matrix with probabilities ``a, b, c, d``; the
    vertex labels are then permuted (:func:`permute_vertices`). The spec's
    final shuffle of the edge order is skipped: edges are drawn i.i.d. from a
    counter-based stream, so their order already carries no information.
    Duplicates and self-loops are kept, as the spec requires.

    Parameters
    ----------
    scale, edgefactor, seed, a, b, c, permute
        See :func:`kronecker_edges`.
    progress : callable, optional
        Called as ``progress(i, n)`` after chunk ``i`` of ``n`` (for example a
        :func:`spbfs.graph500.progress_bar`); the edges are the same either way.

    Returns
    -------
    EdgeList
        ``directed=False``; parameters in ``meta``.
    """
    if progress is None:
        src, dst = kronecker_edges(scale, edgefactor, seed=seed, a=a, b=b, c=c,
                                   permute=permute)
    else:
        # Edge k depends on (seed, k) alone, so chunks concatenate to the same list.
        m = edgefactor << scale
        nchunks = 16
        src = np.empty(m, dtype=np.int64)
        dst = np.empty(m, dtype=np.int64)
        for i in range(nchunks):
            lo, hi = m * i // nchunks, m * (i + 1) // nchunks
            src[lo:hi], dst[lo:hi] = kronecker_edges(scale, edgefactor, seed=seed, start=lo,
                                                     stop=hi, a=a, b=b, c=c, permute=permute)
            progress(i + 1, nchunks)
    meta = {
        "generator": "kronecker",
        "scale": scale,
        "edgefactor": edgefactor,
        "seed": seed,
        "a": a,
        "b": b,
        "c": c,
        "permute": permute,
    }
    return EdgeList(src, dst, 1 << scale, directed=False, meta=meta)


class KroneckerSource:
    """The Graph500 Kronecker graph as an edge source: any slice, regenerated on demand.

    The same edges as :func:`kronecker` with the same arguments, produced slice
    by slice by :func:`kronecker_edges` instead of held: a streaming build
    (:meth:`spbfs.graph.Graph.from_source`) reads every slice twice and never
    holds the int64 edge list (16 bytes per edge). Satisfies
    :class:`spbfs.edges.EdgeSource`.

    Parameters
    ----------
    scale, edgefactor, seed, a, b, c, permute
        See :func:`kronecker_edges`.

    Attributes
    ----------
    n, num_edges, directed, meta
        As in :class:`~spbfs.edges.EdgeList` (``directed=False``).
    seconds : float
        Time spent generating slices so far (the generator's share of a build).
    """

    def __init__(self, scale: int, edgefactor: int = 16, *, seed: int = 0, a: float = 0.57,
                 b: float = 0.19, c: float = 0.19, permute: bool = True) -> None:
        self.scale = _check_int(scale, "scale", 1, 40)
        self.edgefactor = _check_int(edgefactor, "edgefactor", 1)
        self.seed = _check_seed(seed)
        self.a, self.b, self.c = _check_probs(a, b, c)
        self.permute = bool(permute)
        self.n = 1 << self.scale
        self.directed: bool | None = False
        self.meta = {
            "generator": "kronecker",
            "scale": self.scale,
            "edgefactor": self.edgefactor,
            "seed": self.seed,
            "a": self.a,
            "b": self.b,
            "c": self.c,
            "permute": self.permute,
        }
        self.seconds = 0.0

    @property
    def num_edges(self) -> int:
        """``edgefactor * 2**scale``."""
        return self.edgefactor << self.scale

    def chunk(self, start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
        """Edges ``start .. stop-1``, int64, as :func:`kronecker_edges` makes them."""
        t0 = time.perf_counter()
        out = kronecker_edges(self.scale, self.edgefactor, seed=self.seed, start=start,
                              stop=stop, a=self.a, b=self.b, c=self.c, permute=self.permute)
        self.seconds += time.perf_counter() - t0
        return out

    def edgelist(self) -> EdgeList:
        """All the edges in memory: :func:`kronecker` with the same arguments."""
        return kronecker(self.scale, self.edgefactor, seed=self.seed, a=self.a, b=self.b,
                         c=self.c, permute=self.permute)

    def __repr__(self) -> str:
        return (f"KroneckerSource(scale={self.scale}, edgefactor={self.edgefactor}, "
                f"seed={self.seed}, n={self.n}, edges={self.num_edges})")


def rmat(
    scale: int,
    edgefactor: int = 16,
    *,
    a: float = 0.45,
    b: float = 0.15,
    c: float = 0.15,
    seed: int = 0,
    permute: bool = False,
    directed: bool = True,
) -> EdgeList:
    """R-MAT graph (Chakrabarti et al. 2004): the Kronecker engine, R-MAT defaults.

    Same sampling as :func:`kronecker`, with the R-MAT paper's initiator
    ``(0.45, 0.15, 0.15, 0.25)`` and, by default, neither vertex
    permutation nor undirected semantics.

    Parameters
    ----------
    scale, edgefactor, a, b, c, seed, permute
        See :func:`kronecker_edges`.
    directed : bool, default True
        Recorded in the EdgeList: R-MAT edges are arcs by default.

    Returns
    -------
    EdgeList
    """
    src, dst = kronecker_edges(scale, edgefactor, seed=seed, a=a, b=b, c=c, permute=permute)
    meta = {
        "generator": "rmat",
        "scale": scale,
        "edgefactor": edgefactor,
        "seed": seed,
        "a": a,
        "b": b,
        "c": c,
        "permute": permute,
    }
    return EdgeList(src, dst, 1 << scale, directed=bool(directed), meta=meta)


def _pairs_from_index(k: np.ndarray, n: int, directed: bool) -> tuple[np.ndarray, np.ndarray]:
    """Decode linear indices of the off-diagonal pairs of an n-vertex graph."""
    if directed:
        # Row-major over the n x (n-1) matrix with the diagonal squeezed out.
        i = k // (n - 1)
        j = k % (n - 1)
        j += j >= i
        return i, j
    # Strict lower triangle, row-major: row i holds i pairs starting at i(i-1)/2.
    i = np.floor((1.0 + np.sqrt(1.0 + 8.0 * k.astype(np.float64))) / 2.0).astype(np.int64)
    # float sqrt can be off by one for large k: correct with exact integers.
    i -= (i * (i - 1)) // 2 > k
    i += ((i + 1) * i) // 2 <= k
    j = k - (i * (i - 1)) // 2
    return j, i


def erdos_renyi(
    n: int,
    *,
    p: float | None = None,
    m: int | None = None,
    seed: int | np.random.Generator | None = None,
    directed: bool = False,
) -> EdgeList:
    """Erdős–Rényi random graph G(n, m) or G(n, p), without self-loops or duplicates.

    G(n, m) samples ``m`` distinct vertex pairs uniformly (Floyd's algorithm
    via ``Generator.choice``: memory O(m), never O(n^2)). G(n, p) draws
    ``m ~ Binomial(n(n-1)/2, p)`` (``n(n-1)`` if directed) and then samples
    G(n, m), which has the same law. Undirected edges are listed once, with
    ``src < dst``.

    Parameters
    ----------
    n : int
        Number of vertices.
    p : float, optional
        Edge probability in [0, 1]; give exactly one of ``p`` and ``m``.
    m : int, optional
        Exact number of edges, at most the number of vertex pairs.
    seed : int, numpy.random.Generator or None
        Seed for ``numpy.random.default_rng``.
    directed : bool, default False
        Sample ordered pairs (arcs) instead of unordered ones.

    Returns
    -------
    EdgeList
    """
    n = _check_int(n, "n", 0)
    if (p is None) == (m is None):
        raise ValueError("give exactly one of p and m")
    pairs = n * (n - 1) if directed else n * (n - 1) // 2
    if pairs >= 2**63:
        raise ValueError(f"n={n} is too large: the number of vertex pairs overflows int64")
    rng = np.random.default_rng(seed)
    if p is not None:
        if not isinstance(p, numbers.Real) or not 0.0 <= float(p) <= 1.0:
            raise ValueError(f"p must be a probability in [0, 1], got {p!r}")
        m = int(rng.binomial(pairs, float(p))) if pairs else 0
    m = _check_int(m, "m", 0, pairs)
    k = rng.choice(pairs, size=m, replace=False, shuffle=False) if m else np.empty(0, np.int64)
    src, dst = _pairs_from_index(np.asarray(k, dtype=np.int64), n, directed)
    meta = {"generator": "erdos_renyi", "n": n, "p": p, "m": m, "directed": directed}
    return EdgeList(src, dst, n, directed=directed, meta=meta)


def grid2d(nx: int, ny: int) -> EdgeList:
    """2-D lattice ``nx x ny`` with 4-neighbour edges; vertex id ``x + nx*y``.

    Has ``(nx-1)*ny + nx*(ny-1)`` edges and diameter ``nx + ny - 2``: a
    high-diameter worst case for level-synchronous BFS.

    Returns
    -------
    EdgeList
        ``directed=False``.
    """
    el = grid3d(nx, ny, 1)
    el.meta = {"generator": "grid2d", "nx": nx, "ny": ny}
    return el


def grid3d(nx: int, ny: int, nz: int) -> EdgeList:
    """3-D lattice ``nx x ny x nz`` with 6-neighbour edges; id ``x + nx*(y + ny*z)``.

    Has ``(nx-1)*ny*nz + nx*(ny-1)*nz + nx*ny*(nz-1)`` edges.

    Returns
    -------
    EdgeList
        ``directed=False``.
    """
    nx = _check_int(nx, "nx", 1)
    ny = _check_int(ny, "ny", 1)
    nz = _check_int(nz, "nz", 1)
    ids = np.arange(nx * ny * nz, dtype=np.int64).reshape(nz, ny, nx)
    srcs, dsts = [], []
    # Pair each vertex with its +1 neighbour along each axis.
    for axis in range(3):
        lo = [slice(None)] * 3
        hi = [slice(None)] * 3
        lo[axis] = slice(None, -1)
        hi[axis] = slice(1, None)
        srcs.append(ids[tuple(lo)].ravel())
        dsts.append(ids[tuple(hi)].ravel())
    meta = {"generator": "grid3d", "nx": nx, "ny": ny, "nz": nz}
    return EdgeList(
        np.concatenate(srcs), np.concatenate(dsts), nx * ny * nz, directed=False, meta=meta
    )


def star(n: int) -> EdgeList:
    """Star on ``n`` vertices: centre 0 joined to ``1 .. n-1`` (``directed=False``)."""
    n = _check_int(n, "n", 0)
    leaves = np.arange(1, max(n, 1), dtype=np.int64)
    return EdgeList(
        np.zeros_like(leaves), leaves, n, directed=False, meta={"generator": "star", "n": n}
    )


def path(n: int) -> EdgeList:
    """Path ``0 - 1 - ... - n-1`` (``n-1`` edges, ``directed=False``)."""
    n = _check_int(n, "n", 0)
    ids = np.arange(max(n - 1, 0), dtype=np.int64)
    return EdgeList(ids, ids + 1, n, directed=False, meta={"generator": "path", "n": n})


_MESH_ORDERS = ("morton", "random")


def _morton_keys(points: np.ndarray) -> np.ndarray:
    """Z-order (Morton) key of each point of the unit square or cube.

    Each coordinate is quantized to ``62 // dim`` bits and the bits are
    interleaved, so the key fits an int64 and sorts points along a Z curve.
    """
    npts, dim = points.shape
    bits = 62 // dim
    q = np.minimum((points * (1 << bits)).astype(np.int64), (1 << bits) - 1)
    key = np.zeros(npts, dtype=np.int64)
    for b in range(bits):
        for d in range(dim):
            key |= ((q[:, d] >> b) & 1) << (b * dim + d)
    return key


def fe_mesh(n_points: int, seed: int = 0, *, dim: int = 2, order: str = "morton") -> EdgeList:
    """Unstructured finite-element mesh: the edges of a Delaunay triangulation.

    ``n_points`` points are drawn uniformly from the unit square (``dim=2``,
    triangles) or cube (``dim=3``, tetrahedra) and triangulated with
    :class:`scipy.spatial.Delaunay` (Qhull); every vertex becomes a graph vertex
    and every edge of a triangle or tetrahedron a graph edge. In 2-D the mesh
    is planar with ``3 n - 3 - h`` edges (``h`` points on the convex hull, about
    ``3 n``), mean degree just under 6 and a diameter growing like
    ``sqrt(n)``: a high-diameter graph like the meshes of finite-element and
    finite-volume codes; in 3-D the mean degree is about 15.

    Parameters
    ----------
    n_points : int
        Number of vertices, at least ``dim + 1`` (a single simplex).
    seed : int, default 0
        Seed of the point coordinates (:func:`numpy.random.default_rng`); the
        same seed gives the same edge list.
    dim : int, default 2
        2 for a triangle mesh, 3 for a tetrahedral mesh.
    order : {"morton", "random"}, default "morton"
        Vertex numbering. ``"morton"`` numbers the points along a Z-order
        curve, so neighbours get nearby ids, as a mesh generator's or a
        renumbering pass's output has; ``"random"`` keeps the points in the
        random order they were drawn (no locality at all).

    Returns
    -------
    EdgeList
        ``directed=False``, each edge once with ``src < dst``, sorted; no
        self-loops or duplicates. ``meta`` holds the parameters.

    Raises
    ------
    TypeError, ValueError
        For a non-integer or too small ``n_points``, a ``dim`` other than 2 or
        3, an unknown ``order`` or a bad ``seed``.
    RuntimeError
        If Qhull leaves a point out of the triangulation (a duplicate or
        degenerate point; never seen with random coordinates): the mesh would
        not be connected, so it is refused rather than returned short.
    """
    dim = _check_int(dim, "dim", 2, 3)
    n_points = _check_int(n_points, "n_points", dim + 1)
    seed = _check_seed(seed)
    if not isinstance(order, str) or order not in _MESH_ORDERS:
        raise ValueError(f"order must be one of {', '.join(_MESH_ORDERS)}; got {order!r}")
    from scipy.spatial import Delaunay

    points = np.random.default_rng(seed).random((n_points, dim))
    if order == "morton":
        # Numbering the points before triangulating makes the point index the vertex id.
        points = points[np.argsort(_morton_keys(points), kind="stable")]
    tri = Delaunay(points)
    indptr, indices = tri.vertex_neighbor_vertices
    degree = np.diff(indptr)
    if np.any(degree == 0):
        missing = np.flatnonzero(degree == 0)
        raise RuntimeError(
            f"Qhull left {missing.size} of {n_points} points out of the triangulation "
            f"(first: {int(missing[0])}); seed {seed} gives a degenerate point set")
    src = np.repeat(np.arange(n_points, dtype=np.int64), degree)
    dst = np.asarray(indices, dtype=np.int64)
    # vertex_neighbor_vertices lists each edge from both ends; keep the src < dst copy.
    keep = src < dst
    src, dst = src[keep], dst[keep]
    perm = np.lexsort((dst, src))
    meta = {"generator": "fe_mesh", "n_points": n_points, "seed": seed, "dim": dim,
            "order": order}
    return EdgeList(src[perm], dst[perm], n_points, directed=False, meta=meta)
