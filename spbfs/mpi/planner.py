"""The plan of a grid search's messages: exchange patterns and encodings, fixed or chosen.

A :class:`Planner` is built per search from the :class:`~spbfs.Config`
(``exchange``, ``frontier_encoding``, ``butterfly_fanout``, ``network``,
``link_latency_us``, ``link_gbps``) and the grid. With fixed settings it
only carries them; with ``"auto"`` it asks the cost model
(:mod:`spbfs.mpi.costmodel`) for the cheapest choice, per phase and level for
the pattern (every rank of a row or column asks with the same numbers, the
level-end Allreduce's, so all choose alike) and per message for the
encoding (a rank's own message size). Answers are kept per quarter-octave
size class, per grid, so a level pays a dictionary lookup, not a model
evaluation (a road network runs a thousand levels).

The link model the estimates use is, in this order: ``link_latency_us`` /
``link_gbps`` when given; the emulated ``network`` when it is not native;
else, when the ranks span several machines, the link measured at the first
search that needs it (:func:`spbfs.mpi.network.cached_link`: a short
ping-pong, cached per machine). The codec's speed is calibrated once per grid
on rank 0 (:func:`spbfs.mpi.codec.calibrate`, and the pairs path whole).
Ranks that all share one machine with nothing given talk through shared
memory, where ``auto`` is the size rule, not the model (see
:class:`Planner`).
"""

from __future__ import annotations

import math
import os
from typing import Any

from spbfs.mpi import costmodel
from spbfs.mpi.exchange import Exchange
from spbfs.mpi.network import Emulator, LinkModel, cached_link
from spbfs.mpi.staging import cuda_aware
from spbfs.patterns import AUTO_ENCODINGS, PATTERNS, encoding

__all__ = ["Planner", "link_model", "planner"]

def planner(cfg: Any, grid: Any, B: int) -> Planner:
    """The grid's :class:`Planner` for these settings (built once, kept on the grid)."""
    key = (cfg.exchange, cfg.frontier_encoding, cfg.butterfly_fanout, cfg.network,
           cfg.link_latency_us, cfg.link_gbps, B, cfg.backend, cfg.cuda_aware)
    plans = grid.__dict__.setdefault("_planners", {})
    plan = plans.get(key)
    if plan is None:
        plan = plans[key] = Planner(cfg, grid, B)
    return plan


def link_model(cfg: Any, grid: Any) -> LinkModel:
    """The link the cost model assumes (see the module docstring); collective when measured."""
    if cfg.link_latency_us is not None or cfg.link_gbps is not None:
        base = LinkModel.parse(cfg.network) if cfg.network != "native" else None
        lat = cfg.link_latency_us if cfg.link_latency_us is not None else (
            base.latency_s * 1e6 if base is not None else 0.0)
        gbps = cfg.link_gbps if cfg.link_gbps is not None else (
            base.bandwidth_Bps * 8e-9 if base is not None else math.inf)
        return LinkModel.from_numbers(lat, gbps, "config")
    if cfg.network != "native":
        return LinkModel.parse(cfg.network)
    link = getattr(grid, "_measured_link", None)
    if link is None:
        link = cached_link(grid.comm)
        grid._measured_link = link
    return link


def _codec_speed(grid: Any) -> costmodel.CodecSpeed:
    """The codec's speed on this machine: rank 0's calibration, the same on every rank
    (the ranks of a row or column must choose the same pattern)."""
    speed = getattr(grid, "_codec_speed", None)
    if speed is None:
        from spbfs.mpi import codec
        from spbfs.mpi import comm as C

        cal = None
        if grid.rank == 0:
            got = codec.calibrate()
            # (Its bitmap rate is the compressed bitmap's; the model's scan_Bps is a
            # plain pass over a bitmap, which keeps its default.)
            cal = {"encode_Bps": got["encode_bytes_per_s"],
                   "decode_Bps": got["decode_bytes_per_s"]}
        speed = costmodel.CodecSpeed.coerce(C.bcast_obj(grid.comm, cal, root=0))
        grid._codec_speed = speed
    return speed


def _pair_codec_speed(grid: Any, frontier: costmodel.CodecSpeed) -> costmodel.CodecSpeed:
    """The compressed *pairs* path's speed, timed whole on rank 0 and broadcast.

    A fold message is sorted by child (a counting sort), encoded, and on the
    receiver decoded and interleaved again: several passes the ids codec's
    calibration does not see. Priced with the ids' speed, compressed pairs
    looked cheap on the native link and lost there (docs/benchmarks.md,
    "Exchange patterns and encodings").
    """
    speed = getattr(grid, "_pair_codec_speed", None)
    if speed is None:
        import time

        import numpy as np

        from spbfs.mpi import _kernels as K
        from spbfs.mpi import codec
        from spbfs.mpi import comm as C

        cal = None
        if grid.rank == 0:
            rng = np.random.default_rng(7)
            span, n = 1 << 18, 1 << 15
            pairs = np.empty(2 * n, np.int64)
            pairs[0::2] = rng.permutation(span)[:n]
            pairs[1::2] = rng.integers(0, 1 << 20, n)
            bits, par = np.zeros(span // 64, np.uint64), np.empty(span, np.int64)
            ch, pa = np.empty(n, np.int64), np.empty(n, np.int64)
            best_enc = best_dec = math.inf
            for _ in range(5):  # the first also compiles (cached) kernels
                t0 = time.perf_counter()
                k = K.sort_pairs(pairs, bits, par, ch, pa)
                msg = codec.encode_pairs(ch[:k], pa[:k])
                t1 = time.perf_counter()
                c, q = codec.decode_pairs(msg)
                out = np.empty(2 * c.shape[0], np.int64)
                out[0::2] = c
                out[1::2] = q
                t2 = time.perf_counter()
                best_enc, best_dec = min(best_enc, t1 - t0), min(best_dec, t2 - t1)
            cal = {"encode_Bps": 16 * n / best_enc, "decode_Bps": 16 * n / best_dec,
                   "scan_Bps": frontier.scan_Bps, "message_s": frontier.message_s}
        speed = costmodel.CodecSpeed.coerce(C.bcast_obj(grid.comm, cal, root=0))
        grid._pair_codec_speed = speed
    return speed


def _slower(speed: Any, factor: float) -> costmodel.CodecSpeed:
    return costmodel.CodecSpeed(encode_Bps=speed.encode_Bps / factor,
                                decode_Bps=speed.decode_Bps / factor,
                                scan_Bps=speed.scan_Bps / factor,
                                message_s=speed.message_s * factor)


def _size_class(x: float) -> int:
    """Quarter octaves: choices within one class differ by at most 19 % in size."""
    return -1 if x < 1 else int(4 * math.log2(x))


class Planner:
    """Patterns and encodings of one grid search (see the module docstring).

    Parameters
    ----------
    cfg : Config
        The search's settings.
    grid : ProcessGrid
        Its grid (the link measurement and the codec calibration are kept on it).
    B : int
        Padded piece length: the id span of a frontier message.

    Attributes
    ----------
    fixed_pattern : str or None
        The ``exchange`` setting, None when ``"auto"``.
    encoding : str
        The ``frontier_encoding`` setting.
    fanout : int
        The butterfly's fanout.
    emulator : Emulator or None
        Holds messages for the emulated ``network``; None on a native link.
    recording : bool
        Whether the search keeps its per-step record of choices (when the cost
        model makes them).
    last_estimate : float
        The estimated seconds of the latest choice (NaN where no model priced it:
        a fixed setting, or the shared-memory rule).
    shared_memory : bool
        All ranks on one machine and no link given: the size rule instead of the model.
    """

    def __init__(self, cfg: Any, grid: Any, B: int) -> None:
        self.fixed_pattern = None if cfg.exchange == "auto" else cfg.exchange
        self.encoding = cfg.frontier_encoding
        self.fanout = cfg.butterfly_fanout
        self.B = B
        self.pc = grid.pc
        net = LinkModel.parse(cfg.network)
        self.emulator = None if net.native else Emulator(net)
        auto_pattern = self.fixed_pattern is None
        self.recording = auto_pattern or self.encoding == "auto"
        self.last_estimate = math.nan
        self.bw = -(-B // 64)
        # All ranks on one machine and no link given: shared memory, where the
        # encodings' own passes (a bitmap scattered or read back, pairs sorted and
        # packed) cost more than the bytes they save, and the model priced them
        # too low (docs/benchmarks.md, "Exchange patterns and encodings": no
        # compressed cell was the best native one, and model choices ran 8-22 %
        # behind the size rule). There the plan keeps Bisson et al.'s size rule
        # (list or bitmap, the smaller), lists for pairs and the posted p2p
        # messages, and measures nothing at start-up.
        self.shared_memory = (cfg.network == "native" and cfg.link_latency_us is None
                              and cfg.link_gbps is None and grid.local_size == grid.size)
        self.link = (link_model(cfg, grid) if self.recording and grid.size > 1
                     and not self.shared_memory else None)
        # Only the model's choices are recorded: the size rule's are the search's
        # own counters, and a record per step costs in a thousand-level search.
        self.recording = self.link is not None
        self.codec = _codec_speed(grid) if self.link is not None else None
        self.pair_codec = (_pair_codec_speed(grid, self.codec) if self.codec is not None
                           else None)
        # Calibrated on one rank alone; in a search, ranks outnumbering a machine's
        # cores share them, and every pass a codec makes takes that much longer.
        over = grid.local_size / (os.cpu_count() or 1)
        if over > 1 and self.codec is not None:
            self.codec, self.pair_codec = (_slower(self.codec, over),
                                           _slower(self.pair_codec, over))
        # The choices depend on these only: later searches on the grid reuse them (a
        # model evaluation costs tens of microseconds, a search of a small graph less).
        # A local engine on the GPU stages its messages through host memory unless the
        # MPI library takes device buffers: the model charges those crossings.
        self.device = (costmodel.PCIE if cfg.backend == "cupy" and self.link is not None
                       and not cuda_aware(cfg.cuda_aware) else None)
        #: Whether a pair message may arrive compressed (else receivers skip the check).
        self.pairs_compressible = (self.link is not None if self.encoding == "auto"
                                   else encoding(self.encoding).pairs)
        #: The column's and the row's exchanges (with the butterfly's schedule), built
        #: once with the plan instead of per search.
        self.col_ex = Exchange(grid.col_comm, self.fanout)
        self.row_ex = Exchange(grid.row_comm, self.fanout, tag=17)
        memos = grid.__dict__.setdefault("_plan_memos", {})
        self._memo: dict[tuple, tuple[str, float]] = memos.setdefault(
            (self.link, self.codec, self.pair_codec, self.fanout, B, self.pc, self.device), {})

    def _choose(self, key: tuple, phase: str, patterns: tuple[str, ...],
                encodings: tuple[str, ...], q: int, items: float,
                codec: Any = None) -> tuple[str, float]:
        got = self._memo.get(key)
        if got is None:
            # The first message of a size class prices the class: ``items`` per rank,
            # the group's ranks alike (a message can hold at most what its span allows).
            limit = self.B * max(q - 1, 1) if phase in ("fold", "updates") else self.B
            mx = min(float(items), float(limit))
            ch = costmodel.choose(phase, patterns=patterns, encodings=encodings, q=q,
                                  counts=costmodel.Summary(mx * q, mx), span=self.B,
                                  link=self.link, codec=codec or self.codec,
                                  fanout=self.fanout, device=self.device)
            got = (ch.pattern if len(patterns) > 1 else ch.encoding, ch.estimate.seconds)
            self._memo[key] = got
        self.last_estimate = got[1]
        return got

    def pattern(self, phase: str, q: int, items_per_rank: float) -> str:
        """The pattern of ``phase`` in a communicator of ``q`` ranks (``exchange="auto"``).

        ``items_per_rank``: the expected ids (expand, gather) or pairs (fold,
        updates) per sending rank, from the latest Allreduce: the same number
        on every rank, so every rank of the group chooses alike.
        """
        if self.link is None:  # shared memory (see __init__) or one rank
            self.last_estimate = math.nan
            return "p2p"
        enc = "list" if self.encoding == "auto" else self.encoding
        key = (phase, q, enc, _size_class(items_per_rank))
        return self._choose(key, phase, PATTERNS, (enc,), q, items_per_rank)[0]

    def frontier_encoding(self, n: int, receivers: int) -> str:
        """The encoding of a frontier message of ``n`` ids to ``receivers`` ranks."""
        if receivers == 0:  # nothing travels
            self.last_estimate = 0.0
            return "list"
        if self.link is None:  # shared memory: the size rule
            self.last_estimate = math.nan
            return "bitmap" if n >= self.bw else "list"
        key = ("expand", receivers, _size_class(n))
        return self._choose(key, "expand", ("p2p",), AUTO_ENCODINGS, receivers + 1, n)[0]

    def pair_encoding(self, npairs: int, receivers: int) -> str:
        """The encoding of a fold's ``npairs`` pairs sent to ``receivers`` ranks."""
        if self.link is None or receivers == 0:  # shared memory, or nothing travels
            self.last_estimate = math.nan if receivers else 0.0
            return "list"
        q = self.pc
        key = ("fold", q, _size_class(npairs))
        return self._choose(key, "fold", ("p2p",), ("list", "compressed"), q, npairs,
                            self.pair_codec)[0]
