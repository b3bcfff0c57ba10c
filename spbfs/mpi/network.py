"""The link between ranks as a model: presets, slow-network emulation, measurement.

A :class:`LinkModel` is two numbers, the cost of one message (``latency_s``)
and the payload bandwidth (``bandwidth_Bps``), with a name. It serves two
users:

* the exchange cost model (:mod:`spbfs.mpi.costmodel`) prices a phase's
  messages and bytes with it;
* the slow-network mode (config ``network``): an :class:`Emulator` holds a
  rank at the end of each communication step until the modelled link would
  have delivered it, so that the trade-offs of a cloud cluster can be measured
  with all ranks on one machine.

The link model of a rank (the *NIC model*)
    A rank has one link. The messages it sends in a step leave one after
    another, each paying ``latency_s`` (the per-message software and wire cost
    of MPI over that network, LogP's ``o + L``, which on TCP is mostly
    software and does not overlap) and its bytes at ``bandwidth_Bps``; the
    link is full duplex, so what it receives streams in over the same time
    on the other direction. A step that started at ``t0`` with ``m`` messages
    and ``b`` bytes sent (``m'``, ``b'`` received) therefore cannot finish
    before ``t0 + max(m·latency + b/bandwidth, m'·latency + b'/bandwidth)``.
    Messages to oneself are not sent. Contention in the switch is not
    modelled (a full-bisection fabric is assumed).

The presets (payload rates, not line rates):

========  ==========  ==============  ==============================================
name      latency     bandwidth       why
========  ==========  ==============  ==============================================
``1gbe``  50 µs       0.1177 GB/s     1 Gbit/s less Ethernet, IP and TCP framing
                                      (1448 payload bytes per 1538 on the wire);
                                      MPI over kernel TCP on 1 GbE measures
                                      25-60 µs one-way for small messages
``10gbe`` 10 µs       1.177 GB/s      the same framing at 10 Gbit/s; kernel TCP
                                      small-message latency on 10 GbE is 8-15 µs
``ib``    1.5 µs      12 GB/s         InfiniBand EDR 4x (100 Gbit/s): OSU
                                      ``osu_latency`` reports 1-1.5 µs and
                                      ``osu_bw`` 12.0-12.3 GB/s
========  ==========  ==============  ==============================================

An explicit link is ``"LAT_US:GBPS"``: latency in microseconds and payload
bandwidth in gigabits per second (``"20:1"``: 20 µs, 1 Gbit/s = 0.125 GB/s),
the same units as the config keys ``link_latency_us`` and ``link_gbps``.
``None`` or ``"native"`` is no emulation (the machine's own transport).

:func:`measure_link` times a short ping-pong between ranks (the native link,
for the cost model when no numbers are configured) and :func:`cached_link`
keeps that measurement per machine in the user's cache directory.
"""

from __future__ import annotations

import json
import math
import os
import socket
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["PRESETS", "Emulator", "LinkModel", "cache_dir", "cached_link", "measure_link"]

_ACCEPTED = ('None or "native" (no emulation), a preset ("1gbe", "10gbe", "ib"), or '
             '"LAT_US:GBPS" (latency in microseconds, bandwidth in gigabits per second, '
             'e.g. "20:1")')


@dataclass(frozen=True)
class LinkModel:
    """A link between two ranks: cost per message and payload bandwidth.

    Parameters
    ----------
    latency_s : float
        Seconds one message costs on top of its bytes (>= 0, finite).
    bandwidth_Bps : float
        Payload bytes per second (> 0; ``inf`` for the native link of
        :meth:`parse`, which is never emulated).
    name : str
        ``"native"``, a preset's name, ``"custom"`` or ``"measured"``.
    """

    latency_s: float
    bandwidth_Bps: float
    name: str = "custom"

    def __post_init__(self) -> None:
        if not (math.isfinite(self.latency_s) and self.latency_s >= 0):
            raise ValueError(f"latency_s must be finite and >= 0, got {self.latency_s!r}")
        if not (self.bandwidth_Bps > 0):  # also refuses NaN
            raise ValueError(f"bandwidth_Bps must be > 0, got {self.bandwidth_Bps!r}")

    @property
    def native(self) -> bool:
        """Whether this is the machine's own transport (nothing to emulate)."""
        return self.name == "native"

    def seconds(self, messages: int, nbytes: float) -> float:
        """Time on the link of ``messages`` messages carrying ``nbytes`` bytes in all."""
        return messages * self.latency_s + nbytes / self.bandwidth_Bps

    @classmethod
    def from_numbers(cls, latency_us: float, gbps: float, name: str = "custom") -> LinkModel:
        """A link of ``latency_us`` microseconds and ``gbps`` gigabits per second.

        The units of the config keys ``link_latency_us`` and ``link_gbps``.

        Raises
        ------
        ValueError
            For a negative or non-finite latency or a bandwidth that is not positive.
        """
        try:
            lat = float(latency_us)
            bw = float(gbps)
        except (TypeError, ValueError):
            raise ValueError(f"link latency (µs) and bandwidth (Gbit/s) must be numbers, "
                             f"got {latency_us!r} and {gbps!r}") from None
        if not (math.isfinite(lat) and lat >= 0):
            raise ValueError(f"link latency must be a finite number of microseconds >= 0, "
                             f"got {latency_us!r}")
        if not (math.isfinite(bw) and bw > 0):
            raise ValueError(f"link bandwidth must be a finite number of Gbit/s > 0, "
                             f"got {gbps!r}")
        return cls(lat * 1e-6, bw * 1e9 / 8, name)

    @classmethod
    def parse(cls, spec: str | None) -> LinkModel:
        """The link a ``network`` setting names.

        Parameters
        ----------
        spec : str or None
            ``None``/``"native"``, ``"1gbe"``, ``"10gbe"``, ``"ib"`` (case does
            not matter) or ``"LAT_US:GBPS"``.

        Returns
        -------
        LinkModel
            ``native`` (latency 0, infinite bandwidth) for no emulation.

        Raises
        ------
        ValueError
            Naming ``network`` and the accepted forms, for anything else.
        """
        if spec is None:
            return NATIVE
        if not isinstance(spec, str):
            raise ValueError(f"network must be a string: {_ACCEPTED}; got {spec!r}")
        key = spec.strip().lower()
        if key == "native":
            return NATIVE
        if key in PRESETS:
            return PRESETS[key]
        parts = key.split(":")
        if len(parts) == 2:
            try:
                lat, bw = float(parts[0]), float(parts[1])
            except ValueError:
                pass
            else:
                if math.isfinite(lat) and lat >= 0 and math.isfinite(bw) and bw > 0:
                    return cls.from_numbers(lat, bw, name=key)
        raise ValueError(f"network must be {_ACCEPTED}; got {spec!r}")

    def describe(self) -> str:
        """One line: name, latency and bandwidth."""
        if self.native:
            return "native (no emulation)"
        return (f"{self.name}: {self.latency_s * 1e6:.3g} µs, "
                f"{self.bandwidth_Bps / 1e9:.4g} GB/s")


#: No emulation: the machine's own transport.
NATIVE = LinkModel(0.0, math.inf, "native")

#: Typical networks (payload rates; see the module docstring for the sources).
PRESETS: dict[str, LinkModel] = {
    "1gbe": LinkModel(50e-6, 1e9 / 8 * 1448 / 1538, "1gbe"),
    "10gbe": LinkModel(10e-6, 10e9 / 8 * 1448 / 1538, "10gbe"),
    "ib": LinkModel(1.5e-6, 12e9, "ib"),
}


class Emulator:
    """Holds a rank until the modelled link would have finished a communication step.

    Parameters
    ----------
    link : LinkModel
        The link to emulate; a native link makes :attr:`active` False and
        :meth:`hold` return at once.
    spin_s : float
        The last part of a wait is polled instead of slept (``time.sleep``
        overshoots by tens of microseconds); the bulk is slept, so a held rank
        leaves a shared core to the others.

    Attributes
    ----------
    active : bool
        False for the native link: callers may skip :meth:`hold` entirely.
    held_s : float
        Seconds this emulator made its rank wait beyond the real step (the
        real transport is faster than the modelled one, so usually most of it).
    steps : int
        Steps that had to wait.
    """

    __slots__ = ("active", "bw", "held_s", "lat", "link", "spin_s", "steps")

    def __init__(self, link: LinkModel, spin_s: float = 50e-6) -> None:
        self.link = link
        self.active = not link.native
        self.lat = link.latency_s
        self.bw = link.bandwidth_Bps
        self.spin_s = spin_s
        self.held_s = 0.0
        self.steps = 0

    def deadline(self, t_start: float, messages: int, nbytes: int, recv_messages: int = 0,
                 recv_nbytes: int = 0) -> float:
        """When a step started at ``t_start`` may finish (``time.perf_counter`` seconds)."""
        lat, bw = self.lat, self.bw
        return t_start + max(messages * lat + nbytes / bw,
                             recv_messages * lat + recv_nbytes / bw)

    def hold(self, t_start: float, messages: int, nbytes: int, recv_messages: int = 0,
             recv_nbytes: int = 0) -> None:
        """Wait until the modelled link has sent (and received) a completed step.

        Call it when the step's real communication is complete.

        Parameters
        ----------
        t_start : float
            ``time.perf_counter()`` when the step started.
        messages, nbytes : int
            What this rank sent in the step (messages to other ranks, bytes
            as sent: compressed sizes, not ids).
        recv_messages, recv_nbytes : int
            What it received (the link is full duplex: the step takes the
            longer of the two directions).
        """
        if not self.active:
            return
        end = t_start + max(messages * self.lat + nbytes / self.bw,
                            recv_messages * self.lat + recv_nbytes / self.bw)
        clock = time.perf_counter
        now = clock()
        if now >= end:
            return
        self.held_s += end - now
        self.steps += 1
        if end - now > self.spin_s:
            time.sleep(end - now - self.spin_s)
        while clock() < end:
            pass


# --------------------------------------------------------------------------- measurement


def _pingpong(comm: Any, me: int, other: int, buf: np.ndarray, rounds: int,
              first: bool) -> float:
    """Median one-way seconds of ``rounds`` round trips of ``buf`` with ``other``."""
    from spbfs.mpi import comm as C

    wait = C.policy(comm).wait
    bulk = buf.nbytes >= C.BULK_BYTES
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        if first:
            wait(comm.Isend(buf, dest=other, tag=77), bulk)
            wait(comm.Irecv(buf, source=other, tag=78), bulk)
        else:
            wait(comm.Irecv(buf, source=other, tag=77), bulk)
            wait(comm.Isend(buf, dest=other, tag=78), bulk)
        times.append(time.perf_counter() - t0)
    return float(np.median(times)) / 2


def measure_link(comm: Any, *, small_rounds: int = 40, big_bytes: int = 2 << 20,
                 big_rounds: int = 4) -> LinkModel:
    """The link between this job's ranks, measured by ping-pong (collective).

    Rank 0 plays ping-pong with a few partners in turn (rank 1, the middle
    rank and the last: neighbours and, under block placement, ranks on other
    nodes) while the others wait: 8-byte messages give the latency, messages
    of ``big_bytes`` the bandwidth (their one-way time less the latency). The
    worst pair counts (largest latency, smallest bandwidth), and every rank
    returns the same model. A few milliseconds on shared memory.

    Parameters
    ----------
    comm : mpi4py.MPI.Comm
        The job's communicator.
    small_rounds, big_rounds : int
        Round trips per partner (after one unmeasured warm-up each).
    big_bytes : int
        Size of the bandwidth messages.

    Returns
    -------
    LinkModel
        Named ``"measured"``; on one rank the native link (nothing to measure).
    """
    from spbfs.mpi import comm as C

    size, rank = comm.Get_size(), comm.Get_rank()
    if size == 1:
        return NATIVE
    partners = sorted({1, size // 2, size - 1} - {0})
    lat = 0.0
    bw = math.inf
    small = np.zeros(1, np.int64)
    big = np.zeros(max(int(big_bytes), 8) // 8, np.int64)
    for k in partners:
        if rank in (0, k):
            other = k if rank == 0 else 0
            first = rank == 0
            _pingpong(comm, rank, other, small, 3, first)
            t_small = _pingpong(comm, rank, other, small, small_rounds, first)
            _pingpong(comm, rank, other, big, 1, first)
            t_big = _pingpong(comm, rank, other, big, big_rounds, first)
            lat = max(lat, t_small)
            # Never faster than the data can be copied: a floor of 1 ns keeps it finite.
            bw = min(bw, big.nbytes / max(t_big - t_small, 1e-9))
        C.wait_barrier(comm)
    lat, bw = C.bcast_obj(comm, (lat, bw), root=0)
    return LinkModel(lat, bw, "measured")


def cache_dir(environ: Any = None) -> Path:
    """``$XDG_CACHE_HOME/spbfs`` or ``~/.cache/spbfs``."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "spbfs"


def _machine_key(comm: Any) -> str | None:
    """The job's hosts and rank count, the cache's key, on rank 0 (None elsewhere; collective)."""
    hosts = comm.gather(socket.gethostname(), root=0)
    if hosts is None:
        return None
    return f"{','.join(sorted(set(hosts)))}/{comm.Get_size()}"


#: A cached measurement older than this is taken again: one taken while the machine
#: was busy (slower than the link) must not decide every later job's choices.
CACHE_SECONDS = 24 * 3600


def _read_cache(file: Path, key: str, now: float | None = None) -> LinkModel | None:
    try:
        entry = json.loads(file.read_text())[key]
        link = LinkModel(float(entry["latency_s"]), float(entry["bandwidth_Bps"]), "measured")
        taken = time.mktime(time.strptime(entry["measured"], "%Y-%m-%dT%H:%M:%S"))
    except (OSError, ValueError, KeyError, TypeError, OverflowError):
        return None
    if (time.time() if now is None else now) - taken > CACHE_SECONDS:
        return None
    return link if math.isfinite(link.bandwidth_Bps) else None


def _write_cache(file: Path, key: str, link: LinkModel) -> bool:
    """Add ``link`` under ``key``; False when the file cannot be written (no error)."""
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        try:
            data = json.loads(file.read_text())
            if not isinstance(data, dict):
                data = {}
        except (OSError, ValueError):
            data = {}
        data[key] = {"latency_s": link.latency_s, "bandwidth_Bps": link.bandwidth_Bps,
                     "measured": time.strftime("%Y-%m-%dT%H:%M:%S")}
        # Write and rename: a job reading the file meanwhile sees the old or the new one.
        fd, tmp = tempfile.mkstemp(dir=file.parent, prefix=".link-", suffix=".json")
        try:
            with os.fdopen(fd, "w") as f:
                json.dump(data, f, indent=1, sort_keys=True)
            os.replace(tmp, file)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        return False
    return True


def cached_link(comm: Any, path: str | os.PathLike[str] | None = None) -> LinkModel:
    """The measured link of this machine and rank count, from the cache or measured now.

    Collective. Rank 0 looks the job up (its hosts and rank count) in
    ``link.json`` of the cache directory; when it is missing, unreadable or
    older than :data:`CACHE_SECONDS`, every rank takes part in
    :func:`measure_link` and rank 0 stores the result (a measurement taken
    while the machine is busy reads slower than the link: delete the file to
    measure again sooner). A cache that cannot be written is skipped (the job
    goes on with the measurement).

    Parameters
    ----------
    comm : mpi4py.MPI.Comm
        The job's communicator.
    path : path-like, optional
        The cache directory (default :func:`cache_dir`).

    Returns
    -------
    LinkModel
        The same on every rank; native on one rank.
    """
    from spbfs.mpi import comm as C

    if comm.Get_size() == 1:
        return NATIVE
    file = (cache_dir() if path is None else Path(path)) / "link.json"
    key = _machine_key(comm)
    found = None if key is None else _read_cache(file, key)
    found = C.bcast_obj(comm, found, root=0)
    if found is not None:
        return found
    link = measure_link(comm)
    if key is not None:
        _write_cache(file, key, link)
    return link
