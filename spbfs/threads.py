"""How many numba threads a one-process search runs on.

A numba parallel region ends at a barrier: it finishes when its slowest thread
does. When other processes keep every core busy, one of the region's threads
is often descheduled and the region waits a scheduler slice (milliseconds) for
it; a search runs dozens of regions. On a 2-core machine with two busy
processes, a 2-thread search at Kronecker scale 16 took 24 ms where one thread
took 1.08 ms (GAPBS and GraphBLAS collapse the same way). One busy process did
no harm: the search's threads, which sleep between searches, are favoured by
the scheduler over a process that never sleeps, so one thread more than the
idle cores is tolerated, for a few milliseconds: a graph whose searches take
longer gets no spare thread from a reading (:attr:`ThreadProbe.spare_seconds`).

So unless the caller fixes the thread count (``Config.threads``), every search
looks at the machine first (:class:`ThreadPolicy`): how many tasks are runnable
right now (the 4th field of ``/proc/loadavg``, a few microseconds to read) and
which cores this process may use (its affinity mask), and runs on at most
``idle cores + 1`` threads, never more than the caller's
``numba.get_num_threads()``. The load averages themselves are minute-long means:
too slow to follow a machine whose load changes between two searches.

libgomp (numba's ``omp`` layer) keeps idle workers spinning for milliseconds
after a region, so right after a search this process's own workers are
runnable too and look like load. Where that ambiguity changes the answer, the
policy counts this process's runnable threads (``/proc/self/task``; tens of
microseconds, so only then). A graph's searches share a :class:`ThreadProbe`,
which names numba's pool workers once (one parallel region) and then reads
only their states: the other threads of the process (OpenBLAS's, the
interpreter's own) never run a search's work. Where ``/proc`` is absent
(macOS, Windows) the search runs on every thread it may use, as it did before.

Reading the machine costs 5 µs on a quiet machine and 40–230 µs on a busy one
(docs/benchmarks.md), a tenth of a road network's whole search, which never
runs a parallel region. So the one-process numba search asks for its count
only when its first parallel region is due (:class:`SearchThreads`,
``lazy=True``): a search of small levels never reads ``/proc`` at all. Asked
in the middle of a search, after its levels have swept the caches, the reading
costs several times more than on entry, so a graph whose last search asked
asks on entry (:class:`spbfs.search.numba_engine.ScratchPool`).

A reading says how many tasks are runnable, not how the scheduler will
treat the search's threads: with every core taken, two threads sometimes get
their slices together and beat one, and sometimes wait slices and lose many
times over; with one busy process, the spare thread beside it does the same;
and on a machine that others share, a quiet instant says little about the
next milliseconds (nor does the 1-minute load average about the machine
since its load went). So a graph's searches measure: the reading names two
counts (its own and the most, or the most and half as many) and which runs
first, and from then on the cost per reached vertex of each decides, the
fewer threads unless the more are clearly cheaper, the other tried now and
then (:meth:`ThreadProbe.pick`). Runs of small levels go to a team of two
threads on a trial's count of two (:class:`SearchThreads`): a team whose
helper waits slices makes that count's searches cost more, and the trial
leads back to one thread.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import NamedTuple

import numba as nb
import numpy as np

from semirings._intrinsics import native_thread_id

__all__ = ["ONE_THREAD_ARCS", "Decision", "SearchThreads", "ThreadPolicy", "ThreadProbe",
           "count_threads", "read_own_running", "read_running", "search_threads", "warm"]

#: Arcs below which a search whose count is left to the machine runs on one thread
#: without reading it, and without setting numba's count (its kernels are handed one
#: thread), on a graph of fewer than 2**18 vertices, below which no pass over all
#: vertices runs in parallel. Such a search does at most this many edge visits, about
#: 1 ms on one thread, and a second thread, where it gains at all, saves less than the choice
#: costs: reading the load, a trial between the counts, a worker woken (30-100 µs
#: a search). Measured with a 2 ms pause before each search, quiet and beside one
#: busy process, the default that asked ran 1.1-1.7x its one-thread time on graphs
#: of 150 k-900 k arcs (Kronecker 13-15, 200 x 200 and 300 x 300 grids, meshes of
#: 30 k-120 k points, p2p-Gnutella31, luxembourg_osm); one thread without asking ran
#: 0.6-1.0x the default that asked. The limit stays below the largest of those: on a
#: 500 x 500 grid (1 M arcs) two threads still gained 10 % on a quiet machine, and a
#: machine of more cores gains more from its threads there.
ONE_THREAD_ARCS = 1 << 19


def _read_head(path: str, size: int) -> bytes | None:
    """The first ``size`` bytes of a file, None if it cannot be read (a few system
    calls: ``open`` of Python's io layer costs several times more)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        return os.read(fd, size)
    except OSError:
        return None
    finally:
        os.close(fd)


def read_running(path: str = "/proc/loadavg") -> int | None:
    """Tasks runnable on the machine right now, the reading thread included.

    Parameters
    ----------
    path : str
        A file in ``/proc/loadavg``'s format (``"0.5 0.4 0.3 3/120 4567"``):
        the 4th field's numerator is the kernel's instantaneous count of
        runnable tasks.

    Returns
    -------
    int or None
        The count; None where the file is absent or not in that format.
    """
    text = _read_head(path, 256)
    if text is None:
        return None
    try:
        value = int(text.split()[3].split(b"/")[0])
    except (IndexError, ValueError):
        return None
    return value if value >= 1 else None


def _task_state(task_dir: str, tid: str) -> bytes | None:
    """One thread's scheduler state (``b"R"``, ``b"S"``, ...), None if it cannot be read
    (the thread ended since it was named)."""
    text = _read_head(os.path.join(task_dir, tid, "stat"), 512)
    if text is None:
        return None
    # The name may hold spaces and parentheses: the state follows the last ')'.
    end = text.rfind(b")")
    return text[end + 2:end + 3] if end >= 0 else None


def read_own_running(task_dir: str = "/proc/self/task") -> int | None:
    """This process's threads in the runnable state (``R``) right now.

    Parameters
    ----------
    task_dir : str
        A directory in ``/proc/self/task``'s layout: one folder per thread
        holding its ``stat`` (``"tid (name) R ..."``).

    Returns
    -------
    int or None
        The count (at least 1: the thread reading it runs); None where the
        directory cannot be read.
    """
    try:
        tids = os.listdir(task_dir)
    except OSError:
        return None
    # The reading thread runs: its own file need not be read (a third of the cost
    # with numba's one worker).
    me = str(threading.get_native_id())
    count = 1 if me in tids else 0
    for tid in tids:
        if tid != me and _task_state(task_dir, tid) == b"R":
            count += 1
    return max(count, 1)


@nb.njit(cache=True, nogil=True, parallel=True)
def _record_thread_ids(ids):  # type: ignore[no-untyped-def]
    # Many iterations per thread, so that every thread of the team takes some.
    for _ in nb.prange(ids.shape[0] * 64):
        ids[nb.get_thread_id()] = native_thread_id()


def warm() -> None:
    """Compile (or load from numba's cache) the kernel that names numba's pool workers.

    The thread policy runs it at its first reading of the machine, which comes in the
    first search of a graph large enough to ask (not in a warm-up on a small graph):
    :func:`spbfs.warmup.warm_bench` and ``spbfs warmup`` call this, so that no timed
    search compiles it (0.2 s on a cold cache).
    """
    _pool_worker_ids()


def _pool_worker_ids() -> tuple[str, ...]:
    """numba's pool workers' thread ids (the caller's excluded), named by one parallel
    region on the whole pool; ``()`` where they cannot all be named."""
    if not sys.platform.startswith("linux") or not hasattr(ctypes.CDLL(None), "gettid"):
        return ()  # the kernel's gettid would not link
    total = nb.config.NUMBA_NUM_THREADS
    if total < 2:
        return ()
    before = nb.get_num_threads()
    nb.set_num_threads(total)
    try:
        ids = np.zeros(total, np.int64)
        _record_thread_ids(ids)
    finally:
        nb.set_num_threads(before)
    me = threading.get_native_id()
    workers = tuple(str(t) for t in ids.tolist() if t not in (0, me))
    return workers if len(set(workers)) == total - 1 else ()


class ThreadProbe:
    """What a :class:`ThreadPolicy` keeps between its decisions: numba's pool workers' ids,
    the machine's CPU count, for a moment a choice of fewer threads than the most,
    and what the graph's searches cost on each of the two counts it picks between
    (:meth:`pick`).

    Telling this process's spinning workers from other load otherwise lists
    ``/proc/self/task`` and reads every thread's state (OpenBLAS's and the
    interpreter's too: four files here, docs/benchmarks.md). Only numba's pool
    workers can be left spinning by a search, so the probe names them once,
    with one parallel region on the whole pool, and then reads their states
    alone. A worker that is gone (a pool started again) makes the next
    reading name them again. One probe serves one graph's searches
    (:class:`spbfs.search.numba_engine.ScratchPool` holds it): nothing is kept
    in the module.
    """

    #: Seconds a choice below the most is reused. On a busy machine the reads wait
    #: among the busy processes, a tenth of a small search (docs/benchmarks.md), and
    #: a machine found busy stays so for longer than a search. Only fewer threads are
    #: reused: a stale "busy" costs a few searches at most 2x, a stale "idle" could
    #: cost a collapse (20x).
    hold = 0.01

    #: Seconds after the trials start before the other count is tried, the longest
    #: wait between two tries (each try that loses doubles the wait), and how long
    #: the trials' costs describe the machine: a probe that made no choice for that
    #: long forgets its costs (the reading's count runs until both are measured
    #: again), or for :attr:`stale_searches` times its last search's seconds where
    #: that is longer (searches of a second each come a second apart or more, and
    #: would start over every time). When each count is next tried is kept: a count
    #: whose tries lost still waits out its share of :attr:`overhead`. Started over
    #: with the costs, the searches of a program that does other work between them,
    #: a second apart, tried the losing count every third search (Kronecker 20 beside
    #: the other settings and scipy: a sixth of the default's searches on one thread,
    #: 1.5-2x the two threads' time).
    retry = 0.02
    retry_max = 2.0
    stale = 1.0
    stale_searches = 20.0
    #: The leading count's searches whose median is its cost (:meth:`record`).
    window = 5
    #: The most a losing try may add to the graph's searches, as a share of their
    #: seconds until the next try: a try of two threads that waits slices costs one
    #: search 10x at Kronecker scale 16, and tries every few searches would double
    #: the mean.
    overhead = 0.05
    #: Seconds of a search beyond which a reading grants no spare thread
    #: (:attr:`ThreadPolicy.spare`) to the graph's searches: a thread that wakes is
    #: favoured over a busy process for a few milliseconds of the scheduler's latency; a
    #: longer search shares the cores with it and its regions wait slices. Kronecker 22
    #: beside one busy process, its searches a second apart (each a reading's count:
    #: the costs are stale): 92 ms on the spare thread's two, 59 ms on one
    #: (benchmarks/defaults.py). The trial still tries the other count.
    spare_seconds = 0.005

    #: How many times cheaper per reached vertex the larger count must be to lead: on
    #: a machine that other processes share, two threads are a lottery of scheduler
    #: slices whose costs scatter, and a search on fewer threads never waits for a
    #: descheduled helper. The larger count then leads only where it clearly pays.
    gain = 1.1

    def __init__(self) -> None:
        self._workers: tuple[str, ...] | None = None
        self._cpus: int | None = None
        self._kept: tuple[int, int, int, float] | None = None
        # The trials (pick/record): seconds per reached vertex of each count, the median
        # of its recent searches' (kept beside it); each count's next try (a time, its
        # wait, and the searches' seconds to be spent first); those seconds so far and
        # the last search's; the last pick's time; whether a search was recorded yet.
        self._cost: dict[int, float] = {}
        self._recent: dict[int, list[float]] = {}
        self._due: dict[int, tuple[float, float, float]] = {}
        self._spent = 0.0
        self._seconds = 0.0
        self._last = -float("inf")
        self._warm = False
        # Whether the graph's last counted search took over spare_seconds (kept when the
        # costs go stale: it says what the graph's searches are, not the machine).
        self.long_searches = False

    def recall(self, ceiling: int) -> tuple[int, int] | None:
        """The two counts a reading named for ``ceiling`` (:meth:`keep`), where the next
        choice needs no new reading: one made less than :attr:`hold` seconds ago that
        gave fewer threads than the most, or less than :attr:`stale` seconds ago where
        both counts' costs are measured (a reading then names the same two counts,
        and which runs is the costs' to say: the reading is made once a second)."""
        kept = self._kept
        if kept is None or kept[0] != ceiling:
            return None
        age = time.monotonic() - kept[3]
        first, other = kept[1], kept[2]
        if age < self.hold and first < other:
            return first, other
        if age < self.stale and first in self._cost and other in self._cost:
            return first, other
        return None

    def keep(self, ceiling: int, first: int, other: int) -> None:
        """Remember the two counts a reading named for ``ceiling``: its own, ``first``, and
        the one weighed against it."""
        self._kept = (ceiling, first, other, time.monotonic())

    def _leader(self, first: int, other: int) -> int:
        # The reading's count until both are measured; then the fewer threads, unless the
        # more cost a gain's factor less per reached vertex.
        cost = self._cost
        if first not in cost or other not in cost:
            return first
        fewer, more = (first, other) if first < other else (other, first)
        return more if cost[more] * self.gain < cost[fewer] else fewer

    def pick(self, first: int, other: int) -> int:
        """The count for a search where the reading leaves a choice: ``first`` or ``other``.

        A reading tells how many tasks are runnable, not how the scheduler
        will treat this search's threads. With every core taken, the fewer
        threads the reading suggests (one, on two cores) are the safe side,
        since a region of two waits a scheduler slice whenever one of its
        threads is descheduled; but some runs of the same machine give two
        threads most slices, and they are then 1.5–3x faster (docs/benchmarks.md).
        With one busy process, the spare thread the reading grants beside it
        is the same lottery the other way, and a quiet instant of a machine
        that others share says little about the next milliseconds. So the
        searches measure: the count of the lower cost per reached vertex
        (:meth:`record`) runs, the fewer threads unless the more are
        :attr:`gain` times cheaper, the reading's until both are measured. The
        other is first tried :attr:`retry` seconds and one search after the
        reading's count is first measured, and again after :attr:`retry`
        seconds, the wait doubling after each try that loses, up to
        :attr:`retry_max`, and long enough for a losing try's extra seconds to
        stay within :attr:`overhead` of the graph's search time (a try of two
        threads that wait slices costs one search 10–20x).

        Parameters
        ----------
        first : int
            The reading's count.
        other : int
            The count weighed against it (``!= first``): the most the search
            may use where the reading gives fewer, else half as many.

        Returns
        -------
        int
            ``first`` or ``other``.
        """
        now = time.monotonic()
        if now - self._last > max(self.stale, self.stale_searches * self._seconds):
            # the costs describe another moment; the tries' budgets still hold
            self._cost.clear()
        self._last = now
        lead = self._leader(first, other)
        behind = first if lead == other else other
        if lead not in self._cost:  # nothing measured yet (or never reported): the reading's
            return lead
        due = self._due.get(behind)
        if due is None:
            # The first try comes :attr:`retry` seconds and at least one search later,
            # whichever count it is: tried only once the searches had spent twenty times
            # a search's seconds (as :attr:`overhead` alone would have it), a reading's
            # count that loses ran a graph's first twenty searches uncorrected (Kronecker
            # 18 beside one busy process: 1.0-2.5x the best setting in five passes,
            # docs/benchmarks.md). The one search a try may cost is paid once per trial.
            self._due[behind] = (now + self.retry, self.retry, self._spent)
            return lead
        if now < due[0] or self._spent < due[2]:
            return lead
        # The next try is set as if this one loses: a try never reported cannot
        # make every search a try.
        wait = min(2 * due[1], self.retry_max)
        self._due[behind] = (now + wait, wait, due[2])
        return behind

    def record(self, count: int, first: int, other: int, seconds: float, reached: int) -> None:
        """What a search on ``count`` threads cost, after :meth:`pick`.

        The cost compared is seconds per reached vertex. The leading count's
        cost is the median of its last five searches (:attr:`window`): beside
        another process two threads are a lottery whose losing searches wait
        slices, and with a running mean (the latest search weighing half) one
        such search among many fast ones handed the lead to one thread for the
        rest of a benchmark's pass (a replay of this class on drawn costs, nine
        searches in ten on two threads fast: the default's median 1.31x the
        better fixed count's, 1.03x with the median of five). A try of the
        other count replaces that count's costs, which describe an earlier
        moment. A
        leading count that loses the lead to a search of its own is tried
        again after twice its last wait, one that loses it to a try as at
        first; either way a count that does not lead waits until the graph's
        searches have spent enough seconds for the extra seconds of its last
        search to be at most :attr:`overhead` of them.

        The probe's first search is not counted: it also built what the graph's
        searches keep (the engine, the scratch arrays' first touch, the names
        of numba's workers), and as its count's first cost it made that count
        look several times dearer than it is.
        """
        if not self._warm:
            self._warm = True
            return
        reached = max(int(reached), 1)
        self._spent += seconds
        self._seconds = seconds
        self.long_searches = seconds > self.spare_seconds
        lead = self._leader(first, other)
        recent = self._recent.get(count)
        if recent is None or count != lead or count not in self._cost:
            recent = self._recent[count] = []
        recent.append(seconds / reached)
        if len(recent) > self.window:
            del recent[0]
        cost = self._cost[count] = sorted(recent)[(len(recent) - 1) // 2]
        now_lead = self._leader(first, other)
        now = time.monotonic()
        if now_lead == count:
            if lead != count:  # a try won: the count it beat is tried as a first time
                self._due[lead] = (now + self.retry, self.retry,
                                   self._spent + seconds / self.overhead)
            return
        due, wait, _ = self._due.get(count, (now, self.retry / 2, 0.0))
        if count == lead:  # lost the lead
            wait = min(2 * wait, self.retry_max)
            due = now + wait
        # A try's due was pushed back when it was picked.
        lead_cost = self._cost.get(now_lead)  # None: a cost cleared since the pick
        extra = 0.0 if lead_cost is None else max((cost - lead_cost) * reached, 0.0)
        self._due[count] = (due, wait, self._spent + extra / self.overhead)

    def cpus(self) -> int | None:
        """``os.cpu_count()``, read once (it reads a file)."""
        if self._cpus is None:
            self._cpus = os.cpu_count()
        return self._cpus

    def own_running(self, task_dir: str = "/proc/self/task") -> int | None:
        """The caller plus numba's pool workers now runnable; None where the workers
        cannot be named or read (the caller then lists every thread)."""
        workers = self._workers
        if workers is None:
            workers = self._workers = _pool_worker_ids()
        if not workers:
            return None
        count = 1
        for tid in workers:
            state = _task_state(task_dir, tid)
            if state is None:
                self._workers = None
                return None
            count += state == b"R"
        return count


def _allowed_cpus() -> int:
    """CPUs this process may run on: its affinity mask, else the machine's count."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # no sched_getaffinity on macOS and Windows
        return os.cpu_count() or 1


def _machine_cpus(probe: ThreadProbe | None, allowed: int) -> int:
    """The machine's CPUs (the probe's reading where there is one), at least ``allowed``."""
    return max((probe.cpus() if probe is not None else os.cpu_count()) or allowed, allowed)


def count_threads(ceiling: int, running: int, own_running: int, cpus: int, allowed: int,
                  spare: int = 1) -> int:
    """Threads for a search given one reading of the machine (a pure function).

    Parameters
    ----------
    ceiling : int
        The most threads the search may use (>= 1).
    running : int
        Runnable tasks on the machine (``/proc/loadavg``), this process's included.
    own_running : int
        How many of them are this process's (at least the reading thread).
    cpus : int
        Online CPUs of the machine.
    allowed : int
        CPUs this process may run on (<= ``cpus``).
    spare : int
        Threads tolerated beyond the idle cores (>= 0).

    Returns
    -------
    int
        ``min(ceiling, allowed, idle + spare)``, at least 1, where ``idle`` is
        ``allowed`` less the other processes' runnable tasks, counting only
        those that the CPUs outside this process's mask cannot hold.

    Raises
    ------
    ValueError
        For a count out of its range (``allowed > cpus`` included).
    """
    if ceiling < 1 or own_running < 1 or running < 0 or allowed < 1 or cpus < allowed \
            or spare < 0:
        raise ValueError(
            f"count_threads needs ceiling >= 1, own_running >= 1, running >= 0, "
            f"1 <= allowed <= cpus and spare >= 0; got ceiling={ceiling}, running={running}, "
            f"own_running={own_running}, cpus={cpus}, allowed={allowed}, spare={spare}")
    others = max(0, running - own_running)
    # Other work fills the cores this process may not use first (a cpuset elsewhere).
    on_ours = max(0, others - max(0, cpus - allowed))
    idle = max(0, allowed - on_ours)
    return max(1, min(ceiling, allowed, idle + spare))


class Decision(NamedTuple):
    """A search's thread count as :meth:`ThreadPolicy.decide` gives it."""

    #: The thread count.
    count: int
    #: ``(reading's count, other count)`` of the trial that picked it, else None.
    trial: tuple[int, int] | None
    #: Whether runs of small levels may go to a team of threads.
    team: bool


@dataclass(frozen=True)
class ThreadPolicy:
    """Picks a search's thread count from the machine's load at that instant.

    Without a ``probe`` every :meth:`choose` reads the machine again. With
    one, every choice of a search that may run on more than one thread is
    between two counts that the graph's searches settle by measuring
    (:meth:`ThreadProbe.pick`): the reading's and the most where it gives
    fewer, the most and half as many where it gives the most. The reading
    names the two counts and which runs until both are measured: once they
    are, the machine is read once a second, and until then a reading of fewer
    threads than the most is reused for :attr:`ThreadProbe.hold` seconds
    (:meth:`ThreadProbe.recall`).

    Parameters
    ----------
    spare : int
        Threads tolerated beyond the idle cores (see the module's notes).
    loadavg : str
        Where the runnable-task count is read (tests point it at a file).
    task_dir : str
        Where this process's threads are listed.
    probe : ThreadProbe, optional
        Names numba's pool workers once and reads only their states where the
        own runnable threads must be counted; without one, every thread of the
        process is read each time.
    """

    spare: int = 1
    loadavg: str = "/proc/loadavg"
    task_dir: str = "/proc/self/task"
    probe: ThreadProbe | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if isinstance(self.spare, bool) or not isinstance(self.spare, int) or self.spare < 0:
            raise ValueError(f"ThreadPolicy 'spare' must be an integer >= 0; got {self.spare!r}")

    def choose(self, ceiling: int, workers: int) -> int:
        """The thread count for a search that may use up to ``ceiling`` threads.

        Parameters
        ----------
        ceiling : int
            The caller's numba thread count (>= 1).
        workers : int
            This process's pool threads besides the caller's (numba's
            ``NUMBA_NUM_THREADS - 1``): each may still be spinning after the
            previous parallel region, and so counted as runnable.

        Returns
        -------
        int
            Between 1 and ``ceiling``.

        Raises
        ------
        ValueError
            For a ``ceiling`` below 1 or a negative ``workers``.
        """
        return self.decide(ceiling, workers)[0]

    def decide(self, ceiling: int, workers: int) -> Decision:
        """:meth:`choose`, what the search's cost is to be recorded against, and whether
        its small levels may go to a team of threads.

        Returns
        -------
        Decision
            ``count`` as :meth:`choose`. ``trial``: ``(reading's count, other
            count)`` where the probe picked between the two
            (:meth:`ThreadProbe.pick`): the search should report its seconds
            and reached vertices to :meth:`ThreadProbe.record`
            (:meth:`SearchThreads.report` does); None otherwise. ``team``:
            False only where a count of two or more was read without a probe
            off a machine where it needs the spare thread (nothing measures
            what a team whose helper waits slices costs there); a trial's
            count runs its team levels, whose cost the trial measures.
        """
        if isinstance(ceiling, bool) or not isinstance(ceiling, int) or ceiling < 1:
            raise ValueError(f"'ceiling' must be a positive integer; got {ceiling!r}")
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 0:
            raise ValueError(f"'workers' must be an integer >= 0; got {workers!r}")
        probe = self.probe
        pair = probe.recall(ceiling) if probe is not None else None
        if pair is None:
            allowed = _allowed_cpus()
            most = min(ceiling, allowed)
            if most == 1:
                return Decision(1, None, True)
            count, unspared = self._read(ceiling, workers, allowed, probe)
            if probe is None:
                return Decision(count, None, unspared == count or count == 1)
            if unspared < count and probe.long_searches:
                # The spare thread is a woken thread's favour with the scheduler, which
                # lasts milliseconds: a longer search shares the cores with the busy
                # process (ThreadProbe.spare_seconds).
                count = max(1, unspared)
            pair = (count, most if count < most else max(1, most // 2))
            probe.keep(ceiling, *pair)
        return Decision(probe.pick(*pair), pair, True)

    def _read(self, ceiling: int, workers: int, allowed: int,
              probe: ThreadProbe | None) -> tuple[int, int]:
        """The count of a fresh reading of the machine, and the count without the spare
        thread (0 where that is not known)."""
        most = min(ceiling, allowed)
        running = read_running(self.loadavg)
        if running is None:
            return most, most
        # The count without the spare thread decides only for long searches
        # (ThreadProbe.spare_seconds), whose reading costs nothing next to them.
        unspared_counts = probe is not None and probe.long_searches
        # First as if no CPU lay outside the mask (CPUs there only add threads): on a
        # quiet machine that answer is already the most, and os.cpu_count, which reads
        # a file (5 us), is spared.
        if count_threads(ceiling, running, 1, allowed, allowed, self.spare) == most:
            unspared = count_threads(ceiling, running, 1, allowed, allowed, 0)
            if unspared == most or not unspared_counts:
                return most, unspared
        cpus = _machine_cpus(probe, allowed)
        # The reading thread alone is ours, or every pool worker is spinning too. Without
        # the spare thread, too, where it decides: a pool worker still spinning after the
        # last search's region looked like another process, and a quiet machine's long
        # searches ran on one thread (Kronecker 22 after a two-thread search: 75 ms
        # against 40).
        busy = count_threads(ceiling, running, 1, cpus, allowed, self.spare)
        quiet = count_threads(ceiling, running, 1 + workers, cpus, allowed, self.spare)
        ambiguous = busy != quiet or (
            unspared_counts and count_threads(ceiling, running, 1, cpus, allowed, 0)
            != count_threads(ceiling, running, 1 + workers, cpus, allowed, 0))
        own: int | None = 1
        if ambiguous:
            own = probe.own_running(self.task_dir) if probe is not None else None
            if own is None:
                own = read_own_running(self.task_dir)
            if own is None:
                # fewer threads is the safe side: a collapse costs 20x, one 2x
                return busy, 0
        return (count_threads(ceiling, running, own, cpus, allowed, self.spare),
                count_threads(ceiling, running, own, cpus, allowed, 0))


class SearchThreads:
    """One search's numba thread count: fixed, or chosen by a policy when first asked.

    Made by :func:`search_threads`; :meth:`count` sets numba's thread count
    for the calling thread the first time it is called (with ``threads``
    None, from ``policy``), and :meth:`restore` (:func:`search_threads` calls it)
    sets the caller's count back when the search ends.

    Parameters
    ----------
    threads : int or None
        :attr:`spbfs.Config.threads`: a number is set at once (capped at
        numba's pool, ``NUMBA_NUM_THREADS``); None leaves the choice to
        ``policy`` at the first :meth:`count`.
    policy : ThreadPolicy, optional
        The policy for ``threads=None`` (default: ``ThreadPolicy()``).
    """

    def __init__(self, threads: int | None, policy: ThreadPolicy | None = None) -> None:
        self._policy = policy
        self._before: int | None = None
        self._count: int | None = None
        self._trial: tuple[ThreadProbe, int, int, float] | None = None
        #: Whether runs of small levels may go to a team of threads
        #: (:class:`spbfs.search.numba_engine.NumbaEngine`): a count given, a trial's
        #: count (the trial measures what the team gains or loses, and where its
        #: helper waits slices the costs lead to one thread), a count read without
        #: a trial off a machine with a core idle for each thread (:attr:`Decision.team`).
        #: A team level costs tens of microseconds; one whose helper is descheduled
        #: waits a scheduler slice, milliseconds (p2p-Gnutella31 under load: 38 ms
        #: against 0.9 ms on one thread, benchmarks/defaults.py). One thread forms
        #: no team, but its search still marks the levels a team would run
        #: (``SV_WANTED``), so that a trial's one-thread searches report their cost
        #: on graphs whose only levels for threads are a team's (a road network's).
        self.quiet = True
        if threads is not None:
            before = nb.get_num_threads()
            count = min(threads, nb.config.NUMBA_NUM_THREADS)
            if count != before:
                nb.set_num_threads(count)
                self._before = before
            self._count = count

    @property
    def chosen(self) -> bool:
        """Whether the count is set (a number given, or :meth:`count` called)."""
        return self._count is not None

    def count(self, policy: ThreadPolicy | None = None) -> int:
        """The thread count, chosen now (and set for the calling thread) if not yet.

        Parameters
        ----------
        policy : ThreadPolicy, optional
            The policy of this choice where the search was given none: a
            graph's, whose :class:`ThreadProbe` serves all its searches.
        """
        if self._count is None:
            before = nb.get_num_threads()
            pol = self._policy or policy or ThreadPolicy()
            chosen, trial, self.quiet = pol.decide(before, nb.config.NUMBA_NUM_THREADS - 1)
            if chosen != before:
                nb.set_num_threads(chosen)
                self._before = before
            self._count = chosen
            if trial is not None and pol.probe is not None:
                self._trial = (pol.probe, *trial, time.perf_counter())
        return self._count

    @property
    def measured(self) -> bool:
        """Whether this search's count is to be reported (:meth:`report`)."""
        return self._trial is not None

    def report(self, reached: int) -> None:
        """Tell the probe that picked this search's count what the search cost.

        Called once the search is done, where it ran a parallel region; the
        seconds since the count was chosen per reached vertex go to
        :meth:`ThreadProbe.record`. Nothing happens where the count was
        given, or read without a probe.
        """
        trial, self._trial = self._trial, None
        if trial is not None and self._count is not None:
            probe, first, other, t0 = trial
            probe.record(self._count, first, other, time.perf_counter() - t0, reached)

    def restore(self) -> None:
        """Set back the caller's count where this search changed it: a busy moment must not
        lower the next search's ceiling, nor a count one search was given (a search with
        ``threads=1`` left numba's count at one, and the default searches after it ran on
        one thread: Kronecker 22 interleaved with other settings, 1.3-1.5x its best)."""
        if self._before is not None:
            nb.set_num_threads(self._before)
            self._before = None


@contextmanager
def search_threads(threads: int | None, policy: ThreadPolicy | None = None,
                   lazy: bool = False) -> Iterator[SearchThreads]:
    """Run the body (one search) on ``threads`` numba threads, or as many as the machine has idle.

    Parameters
    ----------
    threads : int or None
        :attr:`spbfs.Config.threads`. A number is obeyed (capped at numba's
        pool, ``NUMBA_NUM_THREADS``). None asks ``policy`` for at most the
        caller's current ``numba.get_num_threads()`` threads. Either way the
        caller's count is restored afterwards: a search's config changes no
        later search (the command line sets ``--threads`` for its whole run).
    policy : ThreadPolicy, optional
        The policy for ``threads=None`` (default: ``ThreadPolicy()``).
    lazy : bool
        With ``threads=None``, ask the policy only when the body first calls
        :meth:`SearchThreads.count` (never, for a search without parallel
        regions). Otherwise it is asked on entry.

    Yields
    ------
    SearchThreads
        The body's thread count.

    Notes
    -----
    numba's thread count is per calling thread, so searches started from
    several Python threads (or a Jupyter kernel's) each set and restore
    their own.
    """
    choice = SearchThreads(threads, policy)
    if not lazy:
        choice.count()
    try:
        yield choice
    finally:
        choice.restore()
