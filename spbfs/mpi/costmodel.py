"""What a BFS exchange costs: bytes, messages and seconds per phase, pattern and encoding.

Pure arithmetic (no MPI): the same code prices a level while a search runs
(:func:`choose`, for ``exchange="auto"`` and ``frontier_encoding="auto"``)
and predicts whole searches on grids too big for one machine
(:func:`model_search`).

Phases (see :class:`spbfs.mpi.spmsv.FrontierPhases`), each within a group of
``q`` ranks:

``expand``, ``gather``
    An allgather: every rank's frontier piece (ids of a span of ``B`` local
    ids) goes to the ``q - 1`` others of its processor column (``q = pr``).
``fold``, ``updates``
    A personalized all-to-all of ``(child, parent)`` pairs along the row
    (``q = pc``); a rank's pairs are spread evenly over the ``q - 1`` others.
``rotate``
    ``q - 1`` sequential sub-steps, each passing one bitmap of ``B`` bits
    (``counts``: its set bits) to the left neighbour. It is the same for every
    pattern; only the encoding matters.

Patterns, those of :mod:`spbfs.patterns` (a rank's link serializes its
messages, see :mod:`spbfs.mpi.network`; a pattern's rounds run one after another):

``p2p``
    One round: a message to each of the ``q - 1`` partners.
``collective``
    MPICH's algorithms. Allgatherv: the counts first (an allgather of one
    number: ``ceil(log2 q)`` rounds; not needed for fixed-size bitmaps), then
    recursive doubling or Bruck (``ceil(log2 q)`` rounds) while the whole
    gathered message is under 512 KiB (MPICH's ``ALLGATHER_LONG_MSG_SIZE``),
    else a ring (``q - 1`` rounds, each as slow as the largest piece).
    Alltoallv: the counts by Bruck, then pairwise exchange (``q - 1`` rounds).
``butterfly``
    Green's butterfly with fanout ``f``: ``ceil(log_f q)`` rounds of at most
    ``f - 1`` messages. An allgather's messages grow (round ``r`` forwards the
    ``f^r`` pieces gathered so far, as they came: no re-encoding); an
    all-to-all forwards each pair once per base-``f`` digit in which its source
    and destination differ, ``(f - 1) / f`` of what a rank holds per round,
    decoded and re-encoded at each hop.

Encodings (:mod:`spbfs.patterns`), bytes of one message of ``n`` ids over a span of ``B``:

``list``
    8 bytes per id; pairs 16.
``bitmap``
    ``B / 8`` bytes; pairs: the children's bitmap plus the parents, 8 bytes
    each, in child order.
``compressed``
    Delta + frame-of-reference bit packing in blocks of 128 ids: each block
    stores a 16-byte header and its gaps in ``w`` bits, where ``w`` holds the
    block's *largest* gap. For ``n`` random ids the largest of 128 geometric
    gaps is about ``(B/n) ln 128``, so ``w = ceil(log2(B/n · ln 128))`` (the
    numba prototype behind the default codec speeds measured 7.4 bits per id at
    ``B/n = 16``; the formula says 7). A bitmap with more set bits than clear
    ones sends its clear bits, and a raw bitmap when that is smaller (an 8-byte
    message header in all cases). Pairs: children as above, parents
    bit-packed at ``ceil(log2 parent_span)`` bits.

The encoding's CPU time (:class:`CodecSpeed`) is charged on top of the wire
time: the sender encodes its message once, the receiver decodes everything it
gets. Each message also costs ``CodecSpeed.message_s`` of host time (Python
and MPI calls).

An :class:`Estimate` is for the *busiest* rank of the group (the one sending
the most); :func:`model_search` multiplies out to all ranks.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from spbfs import patterns as registry
from spbfs.mpi.network import LinkModel
from spbfs.mpi.pricing import (
    CodecSpeed,
    Estimate,
    MessageSizes,
    codec_seconds,
    encoded_bytes,
    priced,
)
from spbfs.patterns import PATTERNS, implementation

__all__ = ["PATTERNS", "PCIE", "PHASES", "Choice", "CodecSpeed", "Estimate",
           "LevelProfile", "ModelRow", "Summary", "choose", "encoded_bytes", "estimate",
           "format_table", "level_loads", "measure_profile", "model_search"]


def __getattr__(name: str) -> Any:
    # ENCODINGS is the registry's, read when asked: an encoding registered after
    # this module was imported is priced too.
    if name == "ENCODINGS":
        return registry.ENCODINGS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

#: A GPU's link to its host, PCIe 4.0 x16: pinned copies run at about 24 GB/s of the
#: 31.5 GB/s line rate, and a cudaMemcpy costs about 10 µs of launch and synchronization
#: from Python. The ``device`` of :func:`estimate` for a staged device engine.
PCIE = LinkModel(latency_s=10e-6, bandwidth_Bps=24e9, name="pcie4x16")
#: Phases the model prices.
PHASES = ("expand", "gather", "fold", "rotate", "updates")
_PAIRS = frozenset(("fold", "updates"))
_GATHERS = frozenset(("expand", "gather"))


class Summary(NamedTuple):
    """A group's load without the per-rank list: ids (or pairs) in all, and the most of one rank.

    A plain ``(total, max)`` tuple reads the same; a list or array is per rank.
    The ranks other than the busiest are taken to share the rest evenly.
    """

    total: float
    max: float


@dataclass(frozen=True)
class Choice:
    """What :func:`choose` picked, and every candidate's price (for the level's record)."""

    pattern: str
    encoding: str
    estimate: Estimate
    candidates: tuple[tuple[str, str, Estimate], ...]

    def why(self) -> str:
        """One line: the choice, the runner-up and the worst, with their estimated seconds."""
        ranked = sorted(self.candidates, key=lambda c: c[2].seconds)
        parts = [f"{p}/{e} {est.seconds * 1e6:.1f} µs" for p, e, est in ranked[:2]]
        if len(ranked) > 2:
            p, e, est = ranked[-1]
            parts.append(f"worst {p}/{e} {est.seconds * 1e6:.1f} µs")
        return ", ".join(parts)


# --------------------------------------------------------------------------- one phase


def _load(counts: Any, q: int) -> tuple[float, float, float]:
    """(total, max, min) of a group's counts (per rank, or a ``(total, max)`` summary)."""
    if isinstance(counts, tuple) and len(counts) == 2 and not isinstance(counts, np.ndarray):
        total, mx = float(counts[0]), float(counts[1])
        if not (total >= 0 and mx >= 0 and math.isfinite(total) and math.isfinite(mx)):
            raise ValueError(f"counts summary (total, max) must be finite and >= 0, "
                             f"got {counts!r}")
        if mx > total or mx * q < total * (1 - 1e-9):
            raise ValueError(f"counts summary (total={total}, max={mx}) is impossible for "
                             f"q={q} ranks: need total/q <= max <= total")
        # The ranks other than the busiest share the rest evenly.
        return total, mx, (total - mx) / (q - 1) if q > 1 else total
    a = np.asarray(counts, dtype=np.float64).reshape(-1)
    if a.shape[0] != q:
        raise ValueError(f"counts must have one entry per rank of the group (q={q}), "
                         f"got {a.shape[0]}; or pass a Summary(total, max)")
    if not np.all(np.isfinite(a)) or (a.size and a.min() < 0):
        raise ValueError("counts must be finite and >= 0")
    return float(a.sum()), float(a.max()), float(a.min())


def _check(phase: str, pattern: str, encoding: str, q: int, span: int, fanout: int) -> None:
    if phase not in PHASES:
        raise ValueError(f"phase must be one of {PHASES}, got {phase!r}")
    if pattern not in PATTERNS:
        raise ValueError(f"pattern must be one of {PATTERNS}, got {pattern!r}")
    if encoding not in registry.ENCODING_CODE:
        raise ValueError(f"encoding must be one of {registry.ENCODINGS}, got {encoding!r}")
    if not isinstance(q, int | np.integer) or q < 1:
        raise ValueError(f"q (ranks in the group) must be an integer >= 1, got {q!r}")
    if not isinstance(span, int | np.integer) or span < 1:
        raise ValueError(f"span (ids per piece) must be an integer >= 1, got {span!r}")
    if not isinstance(fanout, int | np.integer) or fanout < 2:
        raise ValueError(f"fanout must be an integer >= 2, got {fanout!r}")


def _check_span(phase: str, q: int, mx: float, span: int) -> None:
    # A piece holds at most span ids; a rank sends each partner at most span children.
    limit = span * max(q - 1, 1) if phase in _PAIRS else span
    if mx > limit:
        raise ValueError(f"counts: a rank's {mx:g} exceeds what a {phase} message can hold "
                         f"({limit} with span={span}, q={q})")


def _sizes(phase: str, enc: str, q: int, total: float, mx: float, mn: float, span: int,
           codec: CodecSpeed, psp: int) -> MessageSizes:
    if phase in _GATHERS:
        # The busiest receiver gets all pieces but the smallest (its own at worst).
        recv_each = (total - mn) / (q - 1)
        codec_s = (codec_seconds(enc, mx, span, False, codec, True)
                   + (q - 1) * codec_seconds(enc, recv_each, span, False, codec, False))
        return MessageSizes(encoded_bytes(enc, mx, span), encoded_bytes(enc, total / q, span),
                            encoded_bytes(enc, recv_each, span), codec_s)
    if phase == "rotate":
        s = encoded_bytes(enc, mx, span)
        codec_s = (q - 1) * (codec_seconds(enc, mx, span, False, codec, True)
                             + codec_seconds(enc, mx, span, False, codec, False))
        return MessageSizes(s, s, s, codec_s)
    per = mx / (q - 1)  # pairs to each partner from the busiest sender
    recv_per = (total - mn) / (q - 1) / (q - 1)  # ... to a rank from each other partner
    codec_s = (q - 1) * (codec_seconds(enc, per, span, True, codec, True)
                         + codec_seconds(enc, recv_per, span, True, codec, False))
    return MessageSizes(encoded_bytes(enc, per, span, pairs=True, parent_span=psp), 0.0,
                        encoded_bytes(enc, recv_per, span, pairs=True, parent_span=psp), codec_s)


def _estimate(phase: str, pattern: str, enc: str, q: int, mx: float, span: int,
              link: LinkModel, codec: CodecSpeed, f: int, psp: int, z: MessageSizes,
              device: LinkModel | None = None) -> Estimate:
    lat, bw = link.latency_s, link.bandwidth_Bps
    if q == 1:
        return Estimate(0.0, 0, 0.0, 0, 0.0, 0.0)
    if phase in _GATHERS:
        est = implementation(pattern).gather_cost(q, enc, mx, span, lat, bw, f, psp, codec, z)
    elif phase == "rotate":  # q - 1 sub-steps of one bitmap each, whatever the pattern
        steps = q - 1
        wire = steps * (lat + z.s_max / bw)
        est = priced(wire, z.codec_s, steps, steps * z.s_max, steps, codec)
    else:
        est = implementation(pattern).alltoall_cost(q, enc, mx, span, lat, bw, f, psp, codec, z)
    if device is None:
        return est
    # A device engine's crossings (spbfs.mpi.staging): what it sends comes down in
    # one copy, each message it receives goes up in one; not overlapped with the wire.
    staged = device.seconds(q, est.bytes + (q - 1) * z.s_recv)
    return est._replace(seconds=est.seconds + staged, staging_s=staged)


def estimate(phase: str, pattern: str, encoding: str, *, q: int, counts: Any, span: int,
             link: LinkModel, codec: CodecSpeed | dict[str, float] | None = None,
             fanout: int = 2, parent_span: int | None = None,
             device: LinkModel | None = None) -> Estimate:
    """The model's price of one phase in one pattern and encoding.

    Parameters
    ----------
    phase : {"expand", "gather", "fold", "rotate", "updates"}
    pattern : {"p2p", "collective", "butterfly"}
    encoding : str
        A registered encoding (:data:`spbfs.patterns.ENCODINGS`).
    q : int
        Ranks in the group (``pr`` for expand and gather, ``pc`` otherwise).
    counts : sequence of numbers, or (total, max)
        Per rank of the group: ids in its frontier piece (expand, gather),
        pairs it sends in all (fold, updates), set bits of the bitmap it
        rotates (rotate). Or a :class:`Summary` / ``(total, max)`` tuple.
    span : int
        Ids per piece (the padded piece length ``B``).
    link : LinkModel
        The link (a native link of infinite bandwidth prices latency and CPU only).
    codec : CodecSpeed or dict, optional
        Codec speeds (default :class:`CodecSpeed`).
    fanout : int
        The butterfly's fanout ``f`` (>= 2).
    parent_span : int, optional
        Range of the parents in pairs (default ``q * span``, a column chunk of a
        square grid).
    device : LinkModel, optional
        The host-device link of a local engine on a device whose messages
        cross through host memory (:data:`PCIE`; :mod:`spbfs.mpi.staging`): each
        sent message's bytes come down and each received one goes up over it,
        priced as ``Estimate.staging_s``. None (the default): a host engine, or
        a CUDA-aware MPI library taking device buffers.

    Returns
    -------
    Estimate
        For the busiest rank.

    Raises
    ------
    ValueError
        For an unknown phase, pattern or encoding, a bad ``q``, ``span``,
        ``fanout`` or ``counts``.
    """
    _check(phase, pattern, encoding, q, span, fanout)
    total, mx, mn = _load(counts, q)
    _check_span(phase, q, mx, span)
    q, span = int(q), int(span)
    cod = CodecSpeed.coerce(codec)
    psp = parent_span if parent_span is not None else q * span
    if q == 1:
        return Estimate(0.0, 0, 0.0, 0, 0.0, 0.0)
    z = _sizes(phase, encoding, q, total, mx, mn, span, cod, psp)
    return _estimate(phase, pattern, encoding, q, mx, span, link, cod, int(fanout), psp, z,
                     device)


def choose(phase: str, *, patterns: Iterable[str] = PATTERNS,
           encodings: Iterable[str] | None = None, q: int, counts: Any, span: int,
           link: LinkModel, codec: CodecSpeed | dict[str, float] | None = None,
           fanout: int = 2, parent_span: int | None = None,
           device: LinkModel | None = None) -> Choice:
    """The cheapest pattern and encoding for one phase, by :func:`estimate`.

    Takes :func:`estimate`'s arguments; ``patterns`` and ``encodings`` narrow
    the candidates (a fixed setting passes one). Ties go to the earlier
    candidate (patterns, then encodings, in the order given). Every rank that
    calls it with the same numbers picks the same: pass numbers every rank of
    the group knows (a :class:`Summary` from the level-end Allreduce, see
    :func:`level_loads`), not a rank's own counts, where the ranks must agree
    on the pattern.

    Returns
    -------
    Choice

    Raises
    ------
    ValueError
        As :func:`estimate`, and for empty candidate lists.
    """
    pats = tuple(patterns)
    encs = registry.ENCODINGS if encodings is None else tuple(encodings)
    if not pats or not encs:
        raise ValueError("choose needs at least one pattern and one encoding")
    _check(phase, pats[0], encs[0], q, span, fanout)
    for p in pats[1:]:
        if p not in PATTERNS:
            raise ValueError(f"pattern must be one of {PATTERNS}, got {p!r}")
    for e in encs[1:]:
        if e not in registry.ENCODING_CODE:
            raise ValueError(f"encoding must be one of {registry.ENCODINGS}, got {e!r}")
    total, mx, mn = _load(counts, q)
    _check_span(phase, q, mx, span)
    cod = CodecSpeed.coerce(codec)
    psp = parent_span if parent_span is not None else int(q) * int(span)
    q, span, f = int(q), int(span), int(fanout)
    if q == 1:
        zero = Estimate(0.0, 0, 0.0, 0, 0.0, 0.0)
        return Choice(pats[0], encs[0], zero, tuple((p, e, zero) for p in pats for e in encs))
    sizes = [_sizes(phase, e, q, total, mx, mn, span, cod, psp) for e in encs]
    best: tuple[str, str, Estimate] | None = None
    cands = []
    for p in pats:
        for e, z in zip(encs, sizes, strict=True):
            est = _estimate(phase, p, e, q, mx, span, link, cod, f, psp, z, device)
            cands.append((p, e, est))
            if best is None or est.seconds < best[2].seconds:
                best = (p, e, est)
    assert best is not None
    return Choice(best[0], best[1], best[2], tuple(cands))


# --------------------------------------------------------------------------- a level's loads


def level_loads(n: int, pr: int, pc: int, *, frontier: float, degsum: float,
                visited: float) -> dict[str, tuple[int, Summary, int]]:
    """Every phase's ``(q, Summary, span)`` of a level, from what every rank knows.

    After the level-end Allreduce (``FrontierPhases.allreduce4``) every rank
    knows the new frontier's size and degree sum, and the driver knows how
    many vertices are visited; the frontier's ids are spread evenly over the
    pieces (Graph500 permutes the vertex ids). The pairs of a level are not
    known before it runs; they are estimated as a random graph would give them:

    * top-down *fold*: a rank scans ``degsum / p`` edges into a row chunk of
      ``n / pr`` vertices and sends each distinct child not visited yet
      (about ``(n/pr)(1 - exp(-degsum pr / (p n)))(1 - visited/n)`` children),
      all but the ``1 / pc`` that are its own;
    * bottom-up *updates*: the new vertices (each unvisited vertex has a parent
      in the frontier with probability ``1 - exp(-degsum / n)``) found in the
      ``pc - 1`` sub-steps for other pieces;
    * *rotate*: the completed bitmap holds the visited vertices.

    Parameters
    ----------
    n, pr, pc : int
        Vertices and grid.
    frontier, degsum, visited : float
        Global: vertices of the frontier the level expands, their degree sum,
        vertices visited so far (the frontier included).

    Returns
    -------
    dict
        Phase name to ``(q, Summary(total, max) over the group, span B)``.
    """
    p = pr * pc
    b = max(1, -(-int(n) // p))
    span = -(-b // 64) * 64
    piece = frontier / p
    unvisited = max(0.0, 1.0 - visited / n) if n else 0.0
    rows = n / pr
    per_rank_edges = degsum / p
    distinct = rows * (1.0 - math.exp(-per_rank_edges / rows)) if rows else 0.0
    fold = distinct * unvisited * (pc - 1) / pc
    new = (n - visited) * (1.0 - math.exp(-degsum / n)) if n else 0.0
    updates = new / p * (pc - 1) / pc
    done = min(float(span), visited / p + new / p / 2)  # half the level's finds, on average
    return {
        "expand": (pr, Summary(piece * pr, piece), span),
        "gather": (pr, Summary(piece * pr, piece), span),
        "fold": (pc, Summary(fold * pc, fold), span),
        "updates": (pc, Summary(updates * pc, updates), span),
        "rotate": (pc, Summary(done * pc, done), span),
    }


# --------------------------------------------------------------------------- whole searches


#: Bins of the frontier-neighbour counts ``k`` of a level's new vertices: ``[lo, hi)``.
K_BINS = np.array([1, 2, 3, 5, 9, 17, 33, 65, 129, 257, 513, 1025, 2049, 1 << 62], dtype=np.int64)
#: The ``k`` each bin stands for (geometric middle; the last bin is 4096).
K_MID = np.array([1.0, 2.0, 3.5, 6.5, 12.5, 24.5, 48.5, 96.5, 192.5, 384.5, 768.5, 1536.5,
                  4096.0])


@dataclass
class LevelProfile:
    """A search's shape as fractions of the graph, level by level (scale-free assumption).

    Each level's numbers are means over the searches that ran the level;
    ``share`` says how many did.

    Attributes
    ----------
    frontier : numpy.ndarray
        Vertices of the frontier each level expands, as a fraction of ``n``.
    degsum : numpy.ndarray
        Their degree sum, as a fraction of the graph's total degree.
    discovered : numpy.ndarray
        Vertices the level reaches, as a fraction of ``n``.
    bottomup : numpy.ndarray
        bool: the level ran bottom-up.
    share : numpy.ndarray
        Fraction of the searches that ran the level.
    kdist : numpy.ndarray
        ``(levels, len(K_MID))``: how the level's new vertices spread over the
        bins :data:`K_BINS` of their number of frontier neighbours (each row
        sums to 1, or 0 where nothing was found). The pairs of a level follow
        from it: a vertex with ``k`` frontier neighbours, spread evenly over
        ``pc`` column chunks, is sent by ``(pc - 1)(1 - (1 - 1/pc)^k)`` ranks
        other than its owner top-down, and needs a parent update bottom-up
        with probability ``(1 - 1/pc)^k`` (no parent in its owner's chunk).
    degree : float
        Total degree per vertex of the measured graph.
    source : str
        Where the profile came from.
    roots : tuple of int
        The searches' roots.
    """

    frontier: np.ndarray
    degsum: np.ndarray
    discovered: np.ndarray
    bottomup: np.ndarray
    share: np.ndarray
    kdist: np.ndarray
    degree: float
    source: str = ""
    roots: tuple[int, ...] = ()

    @property
    def visited_before(self) -> np.ndarray:
        """Fraction of ``n`` visited before each level (its frontier included)."""
        return np.cumsum(np.concatenate([[self.frontier[0]], self.discovered]))[:-1]

    def senders(self, level: int, pc: int) -> float:
        """Mean ranks other than the owner that send a new vertex top-down (grid of ``pc``)."""
        miss = (1.0 - 1.0 / pc) ** K_MID
        return float(self.kdist[level] @ ((pc - 1) * (1.0 - miss)))

    def remote(self, level: int, pc: int) -> float:
        """Fraction of a bottom-up level's new vertices found off their owner's chunk."""
        return float(self.kdist[level] @ ((1.0 - 1.0 / pc) ** K_MID))


def measure_profile(scale: int = 18, edgefactor: int = 16, *, roots: int = 4,
                    seed: int = 1) -> LevelProfile:
    """The level profile of one-process searches on a Kronecker graph, averaged over roots.

    Levels are averaged by depth over the roots that reached that depth; a
    level is bottom-up when most of them ran it so. The degree sums and the
    frontier-neighbour counts come from the levels of the result and the
    graph's adjacency, exact in both directions.

    Parameters
    ----------
    scale, edgefactor, seed : int
        The Graph500 Kronecker graph (``spbfs.generators.kronecker``).
    roots : int
        Searches from this many of the graph's sampled roots (non-isolated).

    Returns
    -------
    LevelProfile
    """
    import scipy.sparse as sp

    import spbfs
    from spbfs.generators import kronecker
    from spbfs.graph500 import sample_roots

    edges = kronecker(scale, edgefactor, seed=seed)
    g = spbfs.Graph.from_edgelist(edges)
    n = g.n
    deg = np.asarray(g.backend.to_host(g.out_degree), dtype=np.float64)
    total = float(deg.sum())
    loops = edges.src == edges.dst
    src, dst = edges.src[~loops], edges.dst[~loops]
    plain = np.bincount(src, minlength=n) + np.bincount(dst, minlength=n)
    ones = np.ones(src.shape[0], dtype=np.float64)
    adj = sp.csr_matrix((np.concatenate([ones, ones]),
                         (np.concatenate([src, dst]), np.concatenate([dst, src]))), shape=(n, n))
    picked = [int(r) for r in sample_roots(plain, roots, seed=seed)]
    runs = []
    for r in picked:
        res = spbfs.bfs(g, r)
        lv = res.levels
        nlev = len(res.stats)
        counts = np.bincount(lv[lv >= 0], minlength=nlev + 1).astype(np.float64)
        dsum = np.bincount(lv[lv >= 0], weights=deg[lv >= 0], minlength=nlev + 1)
        kd = np.zeros((nlev, K_MID.shape[0]))
        for i in range(nlev):
            found = lv == i + 1
            if found.any():
                k = (adj @ (lv == i).astype(np.float64))[found]
                kd[i] = np.bincount(np.searchsorted(K_BINS, k, side="right") - 1,
                                    minlength=K_MID.shape[0])[:K_MID.shape[0]] / k.shape[0]
        runs.append((counts[:nlev] / n, dsum[:nlev] / total, counts[1:nlev + 1] / n,
                     np.asarray(res.stats.direction[:nlev], dtype=float), kd))
    L = max(len(r[0]) for r in runs)
    having = np.zeros(L)
    for r in runs:
        having[:len(r[0])] += 1

    def avg(j: int) -> np.ndarray:
        out = np.zeros((L, *runs[0][j].shape[1:]))
        for r in runs:
            out[:len(r[j])] += r[j]
        return out / having.reshape(-1, *([1] * (out.ndim - 1)))

    kdist = avg(4)
    sums = kdist.sum(axis=1, keepdims=True)
    kdist = np.divide(kdist, sums, out=np.zeros_like(kdist), where=sums > 0)
    return LevelProfile(avg(0), avg(1), avg(2), avg(3) > 0.5, having / len(runs), kdist,
                        total / n, f"Kronecker scale {scale}, edge factor {edgefactor}, "
                        f"seed {seed}, {len(runs)} roots", tuple(picked))


@dataclass
class ModelRow:
    """Predicted totals of one phase in one pattern and encoding over a whole search.

    ``bytes`` and ``messages`` are summed over all ranks and levels (as the
    search's counters sum them); ``seconds`` sums the busiest rank's time per
    level. ``pattern == "auto"`` is :func:`choose` per level, from
    :func:`level_loads`; ``picks`` then counts its choices.
    """

    phase: str
    pattern: str
    encoding: str
    bytes: float
    messages: float
    seconds: float
    picks: dict[str, int] = field(default_factory=dict)


def model_search(scale: int, grid: tuple[int, int], level_profile: LevelProfile, *,
                 link: LinkModel | str = "10gbe",
                 codec: CodecSpeed | dict[str, float] | None = None, fanout: int = 2,
                 patterns: Sequence[str] = PATTERNS,
                 encodings: Sequence[str] | None = None) -> list[ModelRow]:
    """Predicted bytes, messages and seconds per phase of one Graph500 search.

    The profile's fractions are taken as they are at ``scale`` (the
    assumption: a Kronecker search's level shape does not depend on the
    scale; in fact the depth grows by about one level over ten scales and the
    isolated share grows, so the far levels are off). Top-down levels
    price *expand* and *fold*, bottom-up levels *gather*, *rotate* and
    *updates*. The fixed pattern/encoding rows use the level's measured new
    vertices and the spread of their frontier neighbours
    (:meth:`LevelProfile.senders`, :meth:`LevelProfile.remote`) for the
    pairs; ``auto`` chooses from :func:`level_loads` (what the ranks know
    before the level) and is priced like the fixed rows. Each level counts
    with the share of searches that ran it. Not included: the *transpose*
    message of the real code (one more per rank off the grid's diagonal),
    fold pairs re-sent for children another rank already reached, the
    allreduce, and the counters' habit of not counting empty messages (the
    model counts every message a pattern posts).

    Parameters
    ----------
    scale : int
        ``n = 2**scale``.
    grid : (int, int)
        ``(pr, pc)``.
    level_profile : LevelProfile
        From :func:`measure_profile`.
    link : LinkModel or str
        A link or a ``network`` spec (:meth:`LinkModel.parse`).
    codec, fanout, patterns, encodings
        As :func:`choose`.

    Returns
    -------
    list of ModelRow
        Per phase: one row per pattern and encoding, then ``auto``.
    """
    encodings = registry.ENCODINGS if encodings is None else tuple(encodings)
    pr, pc = (int(x) for x in grid)
    if pr < 1 or pc < 1:
        raise ValueError(f"grid must be two positive integers, got {grid!r}")
    if not isinstance(scale, int) or not 1 <= scale <= 62:
        raise ValueError(f"scale must be an integer in 1..62, got {scale!r}")
    lk = LinkModel.parse(link) if isinstance(link, str) else link
    cod = CodecSpeed.coerce(codec)
    n = 2 ** scale
    p = pr * pc
    prof = level_profile
    total_deg = prof.degree * n
    vis = prof.visited_before
    rows: dict[tuple[str, str, str], ModelRow] = {}
    auto: dict[str, ModelRow] = {ph: ModelRow(ph, "auto", "auto", 0.0, 0.0, 0.0)
                                 for ph in PHASES}
    for ph in PHASES:
        for pat in patterns:
            for enc in encodings:
                rows[ph, pat, enc] = ModelRow(ph, pat, enc, 0.0, 0.0, 0.0)
    for lvl in range(len(prof.frontier)):
        w = float(prof.share[lvl])  # the share of searches that run the level
        front = prof.frontier[lvl] * n
        if front <= 0:
            continue
        dsum = prof.degsum[lvl] * total_deg
        visited = vis[lvl] * n
        known = level_loads(n, pr, pc, frontier=front, degsum=dsum, visited=visited)
        # The fixed rows are priced with the level's measured new vertices and their
        # frontier neighbours (see LevelProfile.kdist); auto chooses from `known` alone.
        found = prof.discovered[lvl] * n
        actual = dict(known)
        if prof.bottomup[lvl]:
            upd = found * prof.remote(lvl, pc) / p
            actual["updates"] = (pc, Summary(upd * pc, upd), known["updates"][2])
            phases = ("gather", "rotate", "updates")
        else:
            fold = found * prof.senders(lvl, pc) / p
            actual["fold"] = (pc, Summary(fold * pc, fold), known["fold"][2])
            phases = ("expand", "fold")
        for ph in phases:
            q, load, span = actual[ph]
            if q == 1:
                continue
            ch = choose(ph, patterns=patterns, encodings=encodings, q=q, counts=load, span=span,
                        link=lk, codec=cod, fanout=fanout)
            for pat, enc, est in ch.candidates:
                row = rows[ph, pat, enc]
                row.bytes += w * est.bytes * p
                row.messages += w * est.messages * p
                row.seconds += w * est.seconds
            # auto: chosen from what is known before the level, priced with what happens
            q2, load2, _ = known[ph]
            pick = choose(ph, patterns=patterns, encodings=encodings, q=q2, counts=load2,
                          span=span, link=lk, codec=cod, fanout=fanout)
            est = next(c[2] for c in ch.candidates if c[:2] == (pick.pattern, pick.encoding))
            a = auto[ph]
            a.bytes += w * est.bytes * p
            a.messages += w * est.messages * p
            a.seconds += w * est.seconds
            key = f"{pick.pattern}/{pick.encoding}"
            a.picks[key] = a.picks.get(key, 0) + 1
    out: list[ModelRow] = []
    for ph in PHASES:
        out += [rows[ph, pat, enc] for pat in patterns for enc in encodings]
        out.append(auto[ph])
    return out


def _si(x: float, unit: str) -> str:
    for lim, pre in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= lim:
            return f"{x / lim:.3g} {pre}{unit}"
    return f"{x:.3g} {unit}"


def format_table(rows: Sequence[ModelRow], *, markdown: bool = False) -> str:
    """A search's model as a table: per pattern/encoding, bytes and messages per phase.

    The last column sums the phases' seconds (the busiest rank, all levels).
    """
    combos = []
    for r in rows:
        key = (r.pattern, r.encoding)
        if key not in combos:
            combos.append(key)
    by = {(r.phase, r.pattern, r.encoding): r for r in rows}
    head = ["pattern/encoding"] + [f"{ph} bytes / msgs" for ph in PHASES] + ["seconds"]
    body = []
    for pat, enc in combos:
        cells = [f"{pat}/{enc}" if pat != "auto" else "auto"]
        secs = 0.0
        for ph in PHASES:
            r = by.get((ph, pat, enc))
            if r is None or (r.bytes == 0 and r.messages == 0):
                cells.append("-")
                continue
            cells.append(f"{_si(r.bytes, 'B')} / {_si(r.messages, '')}".rstrip())
            secs += r.seconds
        cells.append(f"{secs * 1e3:.3g} ms")
        body.append(cells)
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(c) + " |" for c in body]
        return "\n".join(lines)
    widths = [max(len(h), *(len(c[k]) for c in body)) for k, h in enumerate(head)]
    fmt = "  ".join(f"{{:>{w}}}" for w in widths)
    return "\n".join([fmt.format(*head)] + [fmt.format(*c) for c in body])
