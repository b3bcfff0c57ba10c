"""Communication for the 2D BFS: polite waits, chunked collectives, errors.

Every collective here is started nonblocking and completed by polling under a
:class:`WaitPolicy`: spin briefly, then ``sched_yield``, then sleep with
exponential backoff. MPICH's blocking calls busy-poll, and when several ranks
share fewer cores (4 ranks on 2 cores) a spinning rank steals the core of the
rank it is waiting for; yielding keeps the job's throughput. The ``wait``
setting of :class:`spbfs.Config` (``SPBFS_WAIT=busy``) restores plain
polling. Transfers of :data:`BULK_BYTES` or more never sleep (MPI moves them
one piece per poll). The default yields for 100 ms before it sleeps, longer
than any level's wait: a rank put to sleep mid-search makes every step that
needs it (a collective's next round, a send of 8 KiB or more, which MPICH
completes only once the receiver polls) wait for it to wake, so every later
wait grows too and the search never gets back to yielding. The measurements
behind these choices are on the benchmarks page ("Waits on oversubscribed
cores").

Counts of variable-size collectives travel as C ints, so :func:`alltoallv` and
:func:`allgatherv` split large exchanges into rounds of at most ``max_count``
elements per rank pair.

The policy is the grid's: :class:`~spbfs.mpi.grid.ProcessGrid` builds it
from its config and attaches it to its communicators (an MPI attribute), and
every collective here reads it from the communicator it is given
(:func:`policy`), so no setting lives in this module.

Every wait that could last forever has a watchdog (:class:`WaitPolicy`'s
``watchdog``, an hour unless set): a rank that waits that long raises
:class:`WaitTimeout`. A rank that ends its script (``sys.exit``, or the
script's last line) while others still wait for it tells them so on the way
out (:func:`install_excepthook`); a rank waiting on a grid that holds it
raises :class:`PeerEnded`. Either error, uncaught, ends the job through the
abort hook.

mpi4py is imported lazily (:func:`mpi`), so the arithmetic of
:mod:`spbfs.mpi.grid` works in a process that never initializes MPI.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import pickle
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from spbfs.config import Config

__all__ = [
    "CollectiveError",
    "PeerEnded",
    "Posted",
    "StreamSender",
    "WaitPolicy",
    "WaitTimeout",
    "agree",
    "agree_call",
    "allgatherv",
    "allreduce",
    "alltoallv",
    "bcast_obj",
    "exchange",
    "exchange_p2p",
    "gatherv",
    "install_excepthook",
    "mpi",
    "peers_ended",
    "policy",
    "recv_bytes",
    "sendrecv",
    "sendrecv_any",
    "set_policy",
    "wait_barrier",
]

_INT_MAX = 2**31 - 1
#: Transfers of at least this many bytes (sent plus received by a rank) wait without sleeping.
BULK_BYTES = 1 << 16
#: Default seconds a single wait may last before its watchdog raises :class:`WaitTimeout`
#: (generous: a rank may wait minutes while another decompresses a large file).
WATCHDOG_S = 3600.0
#: Default seconds a wait goes on after a rank of its grid ended, before :class:`PeerEnded`
#: (:attr:`WaitPolicy.ended_grace`): the ended rank may have done its part of the
#: collective this rank still waits in, whose other messages come from ranks still busy.
ENDED_GRACE_S = 4.0
# How often a long wait looks at its watchdog and for ended ranks (one Iprobe each).
_CHECK_S = 0.1


# The module once imported: the import statement's machinery cost microseconds on
# every message of a level (a road network search sends thousands).
_MPI: list[Any] = []


def mpi() -> Any:
    """The ``mpi4py.MPI`` module (importing it initializes MPI)."""
    if not _MPI:
        from mpi4py import MPI

        _MPI.append(MPI)
    return _MPI[0]


class CollectiveError(RuntimeError):
    """An error detected collectively: raised with the same message on every rank.

    Typical causes: a grid that does not match the rank count, vertex ids out of
    range on some rank, an unreadable input file, ranks passing different
    arguments to the same collective call. The command line reports it once
    (rank 0) and exits with status 2.
    """


class WaitTimeout(RuntimeError):
    """A wait outlasted its watchdog (:attr:`WaitPolicy.watchdog`); raised on the waiting rank."""


class PeerEnded(RuntimeError):
    """A rank of the grid ended its script while this rank waited for it; raised on the waiter."""


# --------------------------------------------------------------------------- waiting


@dataclass(frozen=True)
class WaitPolicy:
    """How a rank waits for a pending request.

    Parameters
    ----------
    spin : float
        Seconds of plain polling first.
    yield_ : float
        Further seconds of polling with ``os.sched_yield`` between polls:
        longer than any wait inside a search, so that only long waits (a rank
        reading a file) sleep.
    min_sleep, max_sleep : float
        Then sleep between polls, starting at ``min_sleep`` and doubling up to
        ``max_sleep``.
    busy : bool
        Poll without ever yielding or sleeping (``wait = "busy"``).
    watchdog : float
        Seconds one wait may last before it raises :class:`WaitTimeout`
        (default :data:`WATCHDOG_S`, an hour; ``math.inf`` waits for ever).
    ended_grace : float
        A wait that goes on this many seconds after a member rank ended its
        script raises :class:`PeerEnded` (default :data:`ENDED_GRACE_S`;
        ``math.inf``: only the watchdog). A guess, as MPI cannot tell whether
        the ended rank did its part of the collective being waited for: a rank
        that reaches a collective this much later than another rank that
        completed it and ended (a gather to a root after uneven local work) is
        taken for a hang.
    members : tuple of int, optional
        The world ranks of the communicator the policy belongs to (a grid's),
        whose ends a wait looks for. None: any world rank.

    Notes
    -----
    The watchdog and the ended-rank check cost nothing on a short wait: a wait
    looks at them every 0.1 s once it has lasted that long.
    """

    spin: float = 2e-6
    yield_: float = 0.1
    min_sleep: float = 5e-5
    max_sleep: float = 1e-3
    busy: bool = False
    watchdog: float = WATCHDOG_S
    ended_grace: float = ENDED_GRACE_S
    members: tuple[int, ...] | None = field(default=None, compare=False, repr=False)

    @classmethod
    def from_config(cls, config: Config) -> WaitPolicy:
        """The policy of a config's ``wait`` setting.

        Parameters
        ----------
        config : Config
            Its ``wait``: ``auto`` (the defaults above), ``busy``, or
            ``spin:yield:min_sleep:max_sleep`` in seconds.

        Returns
        -------
        WaitPolicy
        """
        from spbfs.config import wait_seconds

        if config.wait == "busy":
            return cls(busy=True)
        seconds = wait_seconds(config.wait)
        return cls() if seconds is None else cls(*seconds)

    @classmethod
    def from_env(cls, environ: Any = None) -> WaitPolicy:
        """The policy of the environment's configuration (``SPBFS_WAIT``).

        Shorthand for ``WaitPolicy.from_config(load_config(environ=environ))``;
        ``SPBFS_DIST_WAIT``, the variable's old name, is still read.

        Parameters
        ----------
        environ : mapping, optional
            Defaults to ``os.environ``.

        Returns
        -------
        WaitPolicy

        Raises
        ------
        ValueError
            For a malformed value (the message names the variable), or any
            other bad ``SPBFS_*`` setting (see :func:`spbfs.load_config`).
        """
        from spbfs.config import load_config

        return cls.from_config(load_config(environ=environ))

    def wait(self, req: Any, bulk: bool = False, statuses: list[Any] | None = None) -> None:
        """Complete one request, or a list of requests (with ``statuses`` filled in).

        ``bulk`` (a transfer of at least :data:`BULK_BYTES`): never sleep. MPI
        moves a large message in pieces, one per poll of both sides, so a
        sleeping rank stretches the transfer (measured: the edge routing of a
        scale-20 construction on 2 ranks took 19 s sleeping, a few yielding).
        """
        if isinstance(req, list | tuple):
            # None entries are dropped, unless statuses must line up with the requests.
            reqs = [r for r in req if r is not None] if statuses is None else list(req)
            if not reqs:
                return
            testall = mpi().Request.Testall
            if statuses is None:
                statuses = []
            # Testall fills the statuses only once every request is complete.
            if testall(reqs, statuses):
                return

            def test() -> bool:
                return bool(testall(reqs, statuses))
        else:
            test = req.Test
            if test():
                return
        self.poll(test, bulk)

    def poll(self, test: Callable[[], bool], bulk: bool = False) -> None:
        """Poll ``test`` until it is true: spin, then yield, then sleep (see the class).

        Raises
        ------
        WaitTimeout
            After :attr:`watchdog` seconds.
        PeerEnded
            When a member rank ended its script and the wait has not completed
            :attr:`ended_grace` seconds later.
        """
        clock = time.perf_counter
        t0 = clock()
        if not self.busy:
            while clock() - t0 < self.spin:
                if test():
                    return
        watch = _Watch(self, t0)
        if self.busy:
            while not test():
                if clock() >= watch.next:
                    watch.check(clock())
            return
        yld = os.sched_yield
        if bulk:
            while not test():
                yld()
                now = clock()
                if now >= watch.next:
                    watch.check(now)
            return
        t1 = clock()
        while clock() - t1 < self.yield_:
            if test():
                return
            yld()
        delay = self.min_sleep
        sleep = time.sleep
        while not test():
            sleep(delay)
            delay = min(2 * delay, self.max_sleep)
            now = clock()
            if now >= watch.next:
                watch.check(now)


class _Watch:
    """The watchdog of one wait: raises when it lasts too long or waits for an ended rank."""

    __slots__ = ("ended", "next", "policy", "t0")

    def __init__(self, policy: WaitPolicy, t0: float) -> None:
        self.policy, self.t0 = policy, t0
        self.next = t0 + _CHECK_S
        self.ended: tuple[int, float] | None = None  # (world rank, when this wait saw it)

    def check(self, now: float) -> None:
        self.next = now + _CHECK_S
        waited = now - self.t0
        world = mpi().COMM_WORLD
        if waited > self.policy.watchdog:
            raise WaitTimeout(
                f"rank {world.Get_rank()} waited {waited:.1f} s for a message or collective "
                f"(the wait watchdog, WaitPolicy.watchdog = {self.policy.watchdog:g} s): "
                "another rank stopped or skipped a collective call")
        if self.ended is None:
            gone = peers_ended(self.policy.members, first=True)
            if gone:
                self.ended = (gone[0], now)
        elif now - self.ended[1] > self.policy.ended_grace:
            raise PeerEnded(
                f"rank {world.Get_rank()} waits for a message or collective, but rank "
                f"{self.ended[0]} ended its script (sys.exit or its last line) "
                f"{now - self.ended[1]:.1f} s ago: every rank must make the same collective "
                "calls")


_DEFAULT_POLICY = WaitPolicy()
# The MPI attribute key under which a grid's communicators carry its policy.
_KEYVAL: list[int] = []


def _keyval() -> int:
    if not _KEYVAL:
        _KEYVAL.append(mpi().Comm.Create_keyval())
    return _KEYVAL[0]


def set_policy(comm: Any, wait: WaitPolicy) -> None:
    """Make ``wait`` the policy of every wait on ``comm`` (what a grid does for its own).

    Parameters
    ----------
    comm : mpi4py.MPI.Comm
        The communicator; the policy is stored with it as an MPI attribute, so
        it goes when the communicator is freed.
    wait : WaitPolicy
        The policy.
    """
    comm.Set_attr(_keyval(), wait)


def policy(comm: Any = None) -> WaitPolicy:
    """The wait policy of ``comm``: its grid's (see :func:`set_policy`), else the default.

    Parameters
    ----------
    comm : mpi4py.MPI.Comm, optional
        The communicator the request being waited for belongs to; without one
        (or for a communicator no grid made) the default :class:`WaitPolicy`.

    Returns
    -------
    WaitPolicy
    """
    if comm is None:
        return _DEFAULT_POLICY
    wait = comm.Get_attr(_keyval())
    return _DEFAULT_POLICY if wait is None else wait



def wait_barrier(comm: Any) -> None:
    """A barrier that waits under the policy."""
    if comm.Get_size() > 1:
        policy(comm).wait(comm.Ibarrier())


# --------------------------------------------------------------------------- collectives


def _as_array(data: Any) -> np.ndarray:
    return np.ascontiguousarray(data)


def allreduce(comm: Any, data: Any, op: str = "sum", *, also: Posted | None = None,
              inplace: bool = False) -> np.ndarray:
    """Elementwise reduction of an array over ``comm``; every rank gets the result.

    Parameters
    ----------
    comm : mpi4py.MPI.Comm
        The communicator.
    data : array_like
        Numeric array, same shape and dtype on every rank.
    op : {"sum", "max", "min", "bor"}
        The reduction.
    also : Posted, optional
        Posted messages to complete in the same wait.
    inplace : bool
        Reduce into ``data`` itself (a contiguous array the caller keeps, as a
        BFS level does) instead of a new array.

    Returns
    -------
    numpy.ndarray
        The reduction: ``data`` itself with ``inplace``, else a new array.
    """
    arr = data if inplace else np.array(data, copy=True)
    if comm.Get_size() == 1:
        if also is not None:
            also.wait()
        return arr
    MPI = mpi()
    mop = {"sum": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN, "bor": MPI.BOR}[op]
    req = comm.Iallreduce(MPI.IN_PLACE, arr, op=mop)
    if also is not None:
        also.wait([req])
    else:
        policy(comm).wait(req)
    return arr


def gatherv(comm: Any, data: Any, root: int = 0) -> np.ndarray | None:
    """Concatenate every rank's 1-D array on ``root`` (rank order); None elsewhere."""
    arr = _as_array(data).reshape(-1)
    size = comm.Get_size()
    if size == 1:
        return arr.copy()
    counts = allgather_int(comm, arr.shape[0])
    rank = comm.Get_rank()
    mpi()
    out = np.empty(int(counts.sum()), dtype=arr.dtype) if rank == root else None
    # Chunk so that counts and displacements stay C ints.
    step = max(1, _INT_MAX // max(size, 1))
    rounds = int(-(-int(counts.max(initial=0)) // step)) if counts.size else 0
    offsets = np.concatenate([[0], np.cumsum(counts)])
    for r in range(rounds):
        lo = np.minimum(counts, r * step)
        hi = np.minimum(counts, (r + 1) * step)
        c = (hi - lo).astype(np.int64)
        send = arr[lo[rank]:hi[rank]]
        if rank == root:
            buf = np.empty(int(c.sum()), dtype=arr.dtype)
            displ = np.concatenate([[0], np.cumsum(c)[:-1]])
            req = comm.Igatherv(send, [buf, (c.tolist(), displ.tolist())], root=root)
        else:
            req = comm.Igatherv(send, None, root=root)
        policy(comm).wait(req, int(c.sum()) * arr.itemsize >= BULK_BYTES)
        if rank == root:
            pos = 0
            for k in range(size):
                out[offsets[k] + lo[k]:offsets[k] + hi[k]] = buf[pos:pos + c[k]]
                pos += c[k]
    return out


def allgather_int(comm: Any, value: int) -> np.ndarray:
    """Every rank's integer, on every rank (int64 array)."""
    size = comm.Get_size()
    if size == 1:
        return np.array([value], dtype=np.int64)
    send = np.array([value], dtype=np.int64)
    recv = np.empty(size, dtype=np.int64)
    req = comm.Iallgather(send, recv)
    policy(comm).wait(req)
    return recv


def alltoallv(comm: Any, data: Any, counts: Any, *,
              max_count: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Personalized all-to-all of a 1-D array.

    Parameters
    ----------
    comm : mpi4py.MPI.Comm
    data : numpy.ndarray
        Elements ordered by destination rank: the first ``counts[0]`` go to rank
        0, the next ``counts[1]`` to rank 1, ...
    counts : array_like of int
        Elements for every destination.
    max_count : int, optional
        Most elements one rank pair exchanges per round (default keeps every
        count and displacement a C int); larger exchanges take several rounds.

    Returns
    -------
    recv : numpy.ndarray
        Received elements ordered by source rank.
    recvcounts : numpy.ndarray
        int64 elements received from every rank.
    """
    data = _as_array(data).reshape(-1)
    counts = np.asarray(counts, dtype=np.int64)
    size = comm.Get_size()
    if counts.shape != (size,) or int(counts.sum()) != data.shape[0]:
        raise ValueError(f"counts must have {size} entries summing to len(data)")
    if size == 1:
        return data.copy(), counts.copy()
    pol = policy(comm)
    step = int(max_count) if max_count is not None else max(1, _INT_MAX // size)
    if step < 1:
        raise ValueError(f"max_count must be positive, got {max_count}")
    # Every rank's largest count rides along with the counts, so all ranks agree on
    # the number of rounds without another collective.
    pairs = np.empty((size, 2), dtype=np.int64)
    pairs[:, 0] = counts
    pairs[:, 1] = counts.max(initial=0)
    got = np.empty((size, 2), dtype=np.int64)
    pol.wait(comm.Ialltoall(pairs, got))
    rcounts = got[:, 0].copy()
    rounds = -(-int(got[:, 1].max(initial=0)) // step)
    sdispl = np.concatenate([[0], np.cumsum(counts)[:-1]])
    rdispl = np.concatenate([[0], np.cumsum(rcounts)[:-1]])
    recv = np.empty(int(rcounts.sum()), dtype=data.dtype)
    bulk = data.nbytes + recv.nbytes >= BULK_BYTES
    if rounds <= 1:
        req = comm.Ialltoallv([data, (counts.tolist(), sdispl.tolist())],
                              [recv, (rcounts.tolist(), rdispl.tolist())])
        pol.wait(req, bulk)
        return recv, rcounts
    for r in range(int(rounds)):
        slo, shi = np.minimum(counts, r * step), np.minimum(counts, (r + 1) * step)
        rlo, rhi = np.minimum(rcounts, r * step), np.minimum(rcounts, (r + 1) * step)
        sc, rc = shi - slo, rhi - rlo
        send = np.concatenate([data[sdispl[k] + slo[k]:sdispl[k] + shi[k]] for k in range(size)])
        rbuf = np.empty(int(rc.sum()), dtype=data.dtype)
        sd = np.concatenate([[0], np.cumsum(sc)[:-1]])
        rd = np.concatenate([[0], np.cumsum(rc)[:-1]])
        req = comm.Ialltoallv([send, (sc.tolist(), sd.tolist())],
                              [rbuf, (rc.tolist(), rd.tolist())])
        pol.wait(req, bulk)
        for k in range(size):
            recv[rdispl[k] + rlo[k]:rdispl[k] + rhi[k]] = rbuf[rd[k]:rd[k] + rc[k]]
    return recv, rcounts


def allgatherv(comm: Any, data: Any, sizes: Any, *, max_count: int | None = None) -> np.ndarray:
    """Concatenation of every rank's 1-D array on every rank, sizes known in advance.

    Parameters
    ----------
    comm : mpi4py.MPI.Comm
    data : numpy.ndarray
        This rank's part, of length ``sizes[rank]``.
    sizes : array_like of int
        Every rank's length (the same on every rank).
    max_count : int, optional
        Most elements per rank per round (see :func:`alltoallv`).
    """
    data = _as_array(data).reshape(-1)
    sizes = np.asarray(sizes, dtype=np.int64)
    size = comm.Get_size()
    rank = comm.Get_rank()
    if sizes.shape != (size,) or sizes[rank] != data.shape[0]:
        raise ValueError(f"sizes must have {size} entries and sizes[rank] == len(data)")
    if size == 1:
        return data.copy()
    out = np.empty(int(sizes.sum()), dtype=data.dtype)
    displ = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    step = int(max_count) if max_count is not None else max(1, _INT_MAX // size)
    rounds = -(-int(sizes.max(initial=0)) // step)
    pol = policy(comm)
    bulk = out.nbytes >= BULK_BYTES
    if rounds <= 1 and int(sizes.sum()) <= _INT_MAX:
        pol.wait(comm.Iallgatherv(data, [out, (sizes.tolist(), displ.tolist())]), bulk)
        return out
    for r in range(rounds):
        lo, hi = np.minimum(sizes, r * step), np.minimum(sizes, (r + 1) * step)
        c = hi - lo
        d = np.concatenate([[0], np.cumsum(c)[:-1]])
        buf = np.empty(int(c.sum()), dtype=data.dtype)
        pol.wait(comm.Iallgatherv(data[lo[rank]:hi[rank]], [buf, (c.tolist(), d.tolist())]),
                 bulk)
        for k in range(size):
            out[displ[k] + lo[k]:displ[k] + hi[k]] = buf[d[k]:d[k] + c[k]]
    return out


def sendrecv(comm: Any, send: np.ndarray, dest: int, recv: np.ndarray, source: int,
             tag: int = 0) -> None:
    """Send ``send`` to ``dest`` while receiving into ``recv`` from ``source``."""
    if dest == comm.Get_rank() and source == dest:
        recv[...] = send
        return
    r1 = comm.Irecv(recv, source=source, tag=tag)
    r2 = comm.Isend(send, dest=dest, tag=tag)
    policy(comm).wait([r1, r2], send.nbytes + recv.nbytes >= BULK_BYTES)


class StreamSender:
    """Hands byte streams of unknown length to ranks ``first, first + 1, ...`` in turn.

    The sending side of :func:`recv_bytes`: each rank's bytes go in messages of
    exactly ``chunk`` bytes, then one shorter (maybe empty) that closes its
    stream, so a receiver needs no count. At most one message is buffered.
    :meth:`put` for a later rank closes the streams before it; :meth:`close_all`
    closes every stream left, also after an error, so no receiver waits forever.
    """

    def __init__(self, comm: Any, chunk: int, tag: int, first: int = 1) -> None:
        self.comm, self.chunk, self.tag = comm, chunk, tag
        self.rank = first  # the rank whose stream is open
        self.buf = bytearray()

    def _send(self, data: bytes) -> None:
        arr = np.frombuffer(data, np.uint8)
        policy(self.comm).wait(self.comm.Isend(arr, dest=self.rank, tag=self.tag),
                                arr.nbytes >= BULK_BYTES)

    def put(self, rank: int, piece: bytes) -> None:
        """Append ``piece`` to ``rank``'s stream."""
        while self.rank < rank:
            self.close()
        self.buf.extend(piece)
        while len(self.buf) >= self.chunk:
            self._send(bytes(self.buf[:self.chunk]))
            del self.buf[:self.chunk]

    def close(self) -> None:
        """End the open stream (its short last message) and move to the next rank."""
        self._send(bytes(self.buf))
        self.buf.clear()
        self.rank += 1

    def close_all(self, size: int) -> None:
        """End every stream up to rank ``size - 1``."""
        while self.rank < size:
            self.close()


def recv_bytes(comm: Any, source: int, chunk: int, tag: int = 0) -> bytes:
    """Receive messages of ``chunk`` bytes from ``source`` up to a shorter one; joined.

    The receiving side of :class:`StreamSender`. The waits may sleep: the
    sender is decompressing.
    """
    parts = []
    buf = np.empty(chunk, np.uint8)
    byte = mpi().BYTE
    while True:
        statuses = [mpi().Status()]
        policy(comm).wait([comm.Irecv(buf, source=source, tag=tag)], False, statuses)
        k = statuses[0].Get_count(byte)
        parts.append(buf[:k].tobytes())
        if k < chunk:
            return b"".join(parts)


def sendrecv_any(comm: Any, send: np.ndarray, dest: int, source: int, maxlen: int,
                 tag: int = 0) -> np.ndarray:
    """Send ``send`` to ``dest`` and receive an array of unknown length (<= ``maxlen``)."""
    if dest == comm.Get_rank() and source == dest:
        return send.copy()
    buf = np.empty(max(int(maxlen), 1), dtype=send.dtype)
    reqs = [comm.Irecv(buf, source=source, tag=tag), comm.Isend(send, dest=dest, tag=tag)]
    statuses = [mpi().Status(), mpi().Status()]
    policy(comm).wait(reqs, send.nbytes >= BULK_BYTES, statuses)
    return buf[:statuses[0].Get_count(mpi().BYTE) // send.dtype.itemsize]


class Posted:
    """Point-to-point messages of unknown length, posted now and completed later.

    ``sends[dest]`` goes to each ``dest``; from each ``src`` a message is
    received into ``recvs[src]`` (a buffer of the largest possible length;
    the length is read from the status). Both sides must agree on who sends to
    whom (one message per pair and tag). :meth:`result` completes the step;
    :func:`allreduce` can complete it together with its reduction (``also=``),
    so a rank waits once for both.

    Kept lean on purpose: a BFS level posts two or three of these, and on a
    road network (a thousand levels of a few vertices) their Python overhead
    was most of a level's time.
    """

    __slots__ = ("bufs", "bulk", "done", "order", "policy", "requests", "statuses")

    def __init__(self, comm: Any, sends: dict[int, np.ndarray], recvs: dict[int, np.ndarray],
                 tag: int = 0) -> None:
        rank = comm.Get_rank()
        size = comm.Get_size()
        # Receives first, then sends, each from the next rank on (spreads the traffic).
        self.order = sorted(recvs, key=lambda r: (r - rank) % size) if len(recvs) > 1 \
            else list(recvs)
        self.bufs = recvs
        self.policy = policy(comm)
        irecv = comm.Irecv
        self.requests = [irecv(recvs[src], source=src, tag=tag) for src in self.order]
        nbytes = 0
        isend = comm.Isend
        for dst in (sorted(sends, key=lambda r: (r - rank) % size) if len(sends) > 1
                    else sends):
            buf = sends[dst]
            nbytes += buf.nbytes
            self.requests.append(isend(buf, dest=dst, tag=tag))
        self.bulk = nbytes >= BULK_BYTES
        self.statuses: list[Any] = []
        self.done = not self.requests

    def wait(self, extra: list[Any] | None = None, bulk: bool = False) -> None:
        """Complete the messages (and the requests ``extra``) under the wait policy."""
        if self.done:
            if extra:
                self.policy.wait(extra, bulk)
            return
        reqs = self.requests if not extra else extra + self.requests
        statuses = [mpi().Status() for _ in reqs]
        self.policy.wait(reqs, bulk or self.bulk, statuses)
        self.statuses = statuses[len(extra):] if extra else statuses
        self.done = True

    def result(self) -> dict[int, np.ndarray]:
        """The received arrays (views of the buffers) by source rank."""
        self.wait()
        out = {}
        nbytes = mpi().BYTE
        for k, src in enumerate(self.order):
            buf = self.bufs[src]
            out[src] = buf[:self.statuses[k].Get_count(nbytes) // buf.itemsize]
        return out


def exchange_p2p(comm: Any, sends: dict[int, np.ndarray], recvs: dict[int, np.ndarray],
                 tag: int = 0) -> dict[int, np.ndarray]:
    """Send ``sends[dest]`` to each ``dest`` and receive from each ``src`` into ``recvs[src]``.

    One step of point-to-point messages whose lengths the receiver does not
    know (see :class:`Posted`). Returns the received arrays by source rank.
    """
    return Posted(comm, sends, recvs, tag).result()


def exchange(comm: Any, sends: list[np.ndarray | None], bufs: list[np.ndarray],
             tag: int = 0) -> list[np.ndarray]:
    """Every rank sends ``sends[r]`` to rank ``r`` and receives into ``bufs[r]``, in one step.

    A personalized all-to-all of arrays whose lengths the receiver does not
    know, without the extra collective that exchanges the counts first (see
    :func:`exchange_p2p`; ``bufs[r]`` must hold what rank ``r`` sends here).
    ``sends[rank]`` is returned as is (no message); a ``None`` elsewhere sends
    an empty message. Returns the received arrays by source rank.
    """
    size = comm.Get_size()
    rank = comm.Get_rank()
    if size == 1:
        return [sends[0]]
    empty = np.zeros(0, dtype=bufs[(rank + 1) % size].dtype)
    got = exchange_p2p(comm, {r: empty if sends[r] is None else sends[r]
                              for r in range(size) if r != rank},
                       {r: bufs[r] for r in range(size) if r != rank}, tag)
    return [sends[rank] if r == rank else got[r] for r in range(size)]


def bcast_obj(comm: Any, obj: Any, root: int = 0) -> Any:
    """Broadcast a picklable object from ``root``; every rank returns it."""
    if comm.Get_size() == 1:
        return obj
    rank = comm.Get_rank()
    payload = pickle.dumps(obj) if rank == root else b""
    n = np.array([len(payload)], dtype=np.int64)
    pol = policy(comm)
    pol.wait(comm.Ibcast(n, root=root))
    buf = np.frombuffer(payload, dtype=np.uint8).copy() if rank == root \
        else np.empty(int(n[0]), dtype=np.uint8)
    if n[0]:
        pol.wait(comm.Ibcast(buf, root=root), buf.nbytes >= BULK_BYTES)
    return pickle.loads(buf.tobytes()) if rank != root else obj


def agree(comm: Any, message: str | None,
          error: Callable[[str], Exception] = CollectiveError) -> None:
    """Raise ``error`` (:class:`CollectiveError`) on every rank if any rank passes a message.

    The lowest rank's message wins, so the error reads the same everywhere.
    """
    flag = np.array([comm.Get_size() if message is None else comm.Get_rank()], dtype=np.int64)
    first = int(allreduce(comm, flag, "min")[0])
    if first == comm.Get_size():
        return
    text = bcast_obj(comm, message, root=first)
    raise error(text)


# Digests lie in [-2**62, 2**62) (their negatives fit an int64 too); None's is below.
_NONE_DIGEST = -(2**62) - 1


def _digest(value: Any) -> int:
    """A 64-bit digest of an argument, the same in every process (no ``hash``: salted)."""
    if value is None:
        return _NONE_DIGEST
    if isinstance(value, int | np.integer) and not isinstance(value, bool) \
            and -(2**62) <= int(value) < 2**62:
        return int(value)  # an id or a depth is its own digest, and a message can show it
    h = hashlib.blake2b(type(value).__name__.encode(), digest_size=8)
    if isinstance(value, np.ndarray):  # repr would elide the middle of a large array
        h.update(f"{value.dtype}{value.shape}".encode())
        h.update(np.ascontiguousarray(value).tobytes())
    else:
        text = value if isinstance(value, str) else getattr(value, "name", None)
        h.update((text if isinstance(text, str) and text else repr(value)).encode())
    return int.from_bytes(h.digest(), "little") % 2**62


_DIFFERENT = ("ranks pass different {name}{shown} to a collective call: "
              "every rank must pass the same")


def agree_call(comm: Any, problem: str | None, *, mismatch: str = _DIFFERENT,
               **arguments: Any) -> None:
    """Check, in one small collective, that a collective call may go on on every rank.

    Every rank sends a flag (does its argument check pass?) and a digest of
    each argument in one ``Allreduce`` of ``2 k + 1`` int64 (``k`` arguments),
    so a rank whose arguments are bad, or differ from another rank's, makes
    every rank raise the same error instead of leaving the others waiting in
    the call's first collective (or searching from another source).

    Parameters
    ----------
    comm : mpi4py.MPI.Comm
        The communicator of the call (a grid's).
    problem : str or None
        This rank's argument check's message, None when it passed.
    mismatch : str
        The error for differing values, a format with ``{name}`` and
        ``{shown}`` (`` (lowest to highest)`` for ints, else empty).
    **arguments
        The arguments every rank must pass alike (ints by value, anything else
        by its ``name`` or ``repr``).

    Raises
    ------
    CollectiveError
        On every rank: the lowest failing rank's ``problem``, else the first
        argument whose digest differs between ranks (``ranks pass different
        source (0 to 1)``).
    """
    size = comm.Get_size()
    if size == 1:
        if problem is not None:
            raise CollectiveError(problem)
        return
    k = len(arguments)
    vec = np.empty(2 * k + 1, dtype=np.int64)
    for i, value in enumerate(arguments.values()):
        d = _digest(value)
        # Max of d and of -d in one MAX reduction: min == max means every rank agrees.
        vec[i], vec[k + i] = d, -d
    vec[2 * k] = -(size if problem is None else comm.Get_rank())
    got = allreduce(comm, vec, "max", inplace=True)
    first = -int(got[2 * k])
    if first < size:
        raise CollectiveError(bcast_obj(comm, problem, root=first))
    for i, name in enumerate(arguments):
        hi, lo = int(got[i]), -int(got[k + i])
        if hi != lo:
            value = arguments[name]
            shown = f" ({lo} to {hi})" if isinstance(value, int | np.integer | None) \
                and not isinstance(value, bool) and _NONE_DIGEST not in (lo, hi) else ""
            raise CollectiveError(mismatch.format(name=name, shown=shown))


# --------------------------------------------------------------------------- failure


# The world's largest tag, once looked up: tags of exit notices (see _exit_guard).
_EXIT_TAG: list[int] = []


def _exit_tag() -> int:
    if not _EXIT_TAG:
        MPI = mpi()
        _EXIT_TAG.append(int(MPI.COMM_WORLD.Get_attr(MPI.TAG_UB)))
    return _EXIT_TAG[0]


def peers_ended(members: tuple[int, ...] | None = None, *, first: bool = False) -> list[int]:
    """World ranks among ``members`` that ended their script (their exit notice is here).

    Parameters
    ----------
    members : tuple of int, optional
        World ranks to look at; None: all (one probe for any source).
    first : bool
        Stop at the first found.

    Returns
    -------
    list of int
        The ranks, none received: the notices stay for the exit rendezvous.
    """
    MPI = mpi()
    world, tag = MPI.COMM_WORLD, _exit_tag()
    if members is None:
        status = MPI.Status()
        return [status.Get_source()] if world.Iprobe(MPI.ANY_SOURCE, tag, status) else []
    found = []
    for m in members:
        if world.Iprobe(m, tag):
            found.append(m)
            if first:
                break
    return found


def _job_mpi() -> Any:
    """``mpi4py.MPI`` if this process is a rank of a job of several, else None.

    MPI is initialized here only for a rank that a launcher started among
    others (``PMI_SIZE``, ``OMPI_COMM_WORLD_SIZE``) and that ends before it
    initialized MPI: the other ranks would wait for it in ``MPI_Init``.
    """
    MPI = sys.modules.get("mpi4py.MPI")
    if MPI is None:
        size = os.environ.get("PMI_SIZE") or os.environ.get("OMPI_COMM_WORLD_SIZE") or "1"
        if not size.isdigit() or int(size) < 2:
            return None
        MPI = mpi()
    elif not MPI.Is_initialized():
        return None  # mpi4py imported without initializing: the script's own choice
    if MPI.Is_finalized() or MPI.COMM_WORLD.Get_size() == 1:
        return None
    return MPI


def _exit_guard(hook: Any) -> None:
    """At exit: tell every rank this one ended, and wait until every rank has ended.

    A normal end of every rank passes through here (each rank waits for the
    last one, then MPI finalizes). A rank that ends while others wait for it in
    a collective would leave them waiting for ever (the launcher does not stop
    a job for one rank's exit): they see its notice in their next wait and raise
    :class:`PeerEnded`, which ends the job. If they are not in a wait of spbfs
    (a script's own mpi4py call), this rank ends the job after
    ``hook.exit_timeout`` seconds.
    """
    MPI = _job_mpi()
    if MPI is None:
        return
    world = MPI.COMM_WORLD
    size, rank = world.Get_size(), world.Get_rank()
    tag = _exit_tag()
    note = np.array([rank], dtype=np.int64)
    got = np.empty(size, dtype=np.int64)
    others = [r for r in range(size) if r != rank]
    reqs = [world.Irecv(got[r:r + 1], source=r, tag=tag) for r in others]
    reqs += [world.Isend(note, dest=r, tag=tag) for r in others]
    timeout = getattr(hook, "exit_timeout", WATCHDOG_S)
    t0 = time.perf_counter()
    delay = 1e-4
    testall = MPI.Request.Testall
    while not testall(reqs):
        if time.perf_counter() - t0 > timeout:
            left = [r for r, q in zip(others, reqs, strict=False) if not q.Test()]
            _abort(world, f"rank {rank}: ended, but rank(s) {', '.join(map(str, left))} did not "
                   f"end within {timeout:g} s (install_excepthook(exit_timeout=...)); "
                   "they may wait for it in a collective: ending the job\n")
        time.sleep(delay)
        delay = min(2 * delay, 0.01)


def _abort(world: Any, text: str) -> None:
    """Write ``text`` to stderr in one piece, then ``MPI_Abort`` the world."""
    sys.stdout.flush()
    sys.stderr.flush()
    # One write, not a line at a time: MPI_Abort tears down the launcher's output
    # forwarding, which then kept only the traceback's first line now and then.
    data = text.encode(errors="replace")
    while data:
        data = data[os.write(2, data):]
    time.sleep(0.2)  # time for the launcher to forward it before the abort
    world.Abort(1)


class _AbortHook:
    """``sys.excepthook`` that ends the whole MPI job (see :func:`install_excepthook`)."""

    def __init__(self, previous: Callable[..., Any]) -> None:
        self.previous = previous
        self.show_traceback = True
        self.exit_timeout = WATCHDOG_S

    def __call__(self, exc_type: type[BaseException], exc: BaseException, tb: Any) -> None:
        if issubclass(exc_type, KeyboardInterrupt):
            self.previous(exc_type, exc, tb)
            return
        # A job of several ranks (MPI started for it only if the launcher says so).
        MPI = _job_mpi()
        if MPI is None:
            MPI = sys.modules.get("mpi4py.MPI")
            if MPI is None or not MPI.Is_initialized() or MPI.Is_finalized():
                self.previous(exc_type, exc, tb)
                return
        world = MPI.COMM_WORLD
        text = "".join(traceback.format_exception(exc_type, exc, tb)) if self.show_traceback \
            else ""
        text += f"rank {world.Get_rank()}: Error: {exc}\n"
        if world.Get_size() > 1:
            _abort(world, text)
        # A lone rank has nobody waiting on it: Python's own exit (status 1) is enough.
        sys.stdout.flush()
        sys.stderr.flush()
        data = text.encode(errors="replace")
        while data:
            data = data[os.write(2, data):]


def install_excepthook(*, show_traceback: bool | None = None,
                       exit_timeout: float | None = None) -> None:
    """Make an uncaught exception, or the end of the script, on any rank end the job.

    Importing :mod:`spbfs.mpi` calls this (it starts nothing: the hook looks
    for MPI only when it runs), so a script never needs to; calling it again
    replaces nothing (no second hook is chained). Two parts:

    * ``sys.excepthook``: prints the traceback (unless switched off) and
      ``rank R: Error: <message>`` to stderr, then calls ``MPI_Abort`` on
      ``COMM_WORLD``, so the other ranks, possibly waiting in a collective,
      are killed instead of hanging and the job exits with a non-zero status.
    * an ``atexit`` rendezvous: a rank that ends (``sys.exit(code)``, or its
      script's last line) tells every other rank, then waits until all have
      ended. Ranks waiting for it on a grid raise :class:`PeerEnded`
      :attr:`WaitPolicy.ended_grace` seconds later (which the hook turns into an abort); ranks
      busy with their own work finish it and end normally. After
      ``exit_timeout`` seconds without every rank ended (others stuck in a
      script's own mpi4py call, which spbfs cannot watch), it aborts the job.

    In a process whose MPI is not initialized, or on a job of one rank, both
    leave the exit to Python. Launching with ``python -m mpi4py script.py``
    gives the first guarantee without spbfs.

    Parameters
    ----------
    show_traceback : bool, optional
        Print the traceback before the one-line message. None keeps the
        installed hook's choice (True for a new one); the command line passes
        False unless its ``debug`` setting is on.
    exit_timeout : float, optional
        Seconds an ended rank waits for the others to end (default
        :data:`WATCHDOG_S`); None keeps the installed hook's.
    """
    hook = sys.excepthook
    if not isinstance(hook, _AbortHook):
        hook = _AbortHook(sys.excepthook)
        sys.excepthook = hook
        # Python's atexit runs before mpi4py finalizes MPI (a C-level exit function).
        atexit.unregister(_exit_guard)
        atexit.register(_exit_guard, hook)
    if show_traceback is not None:
        hook.show_traceback = bool(show_traceback)
    if exit_timeout is not None:
        hook.exit_timeout = float(exit_timeout)
