"""How many numba threads a one-process search runs on.

A numba parallel region ends at a barrier: it finishes when its slowest thread
does. When other processes keep every core busy, one of the region's threads
is often descheduled and the region waits a scheduler slice (milliseconds) for
it; a search runs dozens of regions. On a 2-core machine with two busy
processes, a 2-thread search at Kronecker scale 16 took 24 ms where one thread
took 1.08 ms (GAPBS and GraphBLAS collapse the same way). One busy process did
no harm: the search's threads, which sleep between searches, are favoured by
the scheduler over a process that never sleeps, so one thread more than the
idle cores is tolerated.

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

import numba as nb
import numpy as np

from semirings._intrinsics import native_thread_id

__all__ = ["SearchThreads", "ThreadPolicy", "ThreadProbe", "count_threads", "read_own_running",
           "read_running", "search_threads"]


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
    the machine's CPU count and, for a moment, a choice of fewer threads than the most.

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

    def __init__(self) -> None:
        self._workers: tuple[str, ...] | None = None
        self._cpus: int | None = None
        self._kept: tuple[int, int, float] | None = None

    def recall(self, ceiling: int) -> int | None:
        """The choice kept for ``ceiling`` if made less than :attr:`hold` seconds ago."""
        kept = self._kept
        if kept is not None and kept[0] == ceiling and time.monotonic() - kept[2] < self.hold:
            return kept[1]
        return None

    def keep(self, ceiling: int, chosen: int, most: int) -> None:
        """Remember ``chosen`` for ``ceiling`` if it is below ``most`` (forget otherwise)."""
        self._kept = (ceiling, chosen, time.monotonic()) if chosen < most else None

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


@dataclass(frozen=True)
class ThreadPolicy:
    """Picks a search's thread count from the machine's load at that instant.

    Every :meth:`choose` reads the machine again, except that with a
    ``probe`` a choice of fewer threads than the most is reused for
    :attr:`ThreadProbe.hold` seconds.

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
        if isinstance(ceiling, bool) or not isinstance(ceiling, int) or ceiling < 1:
            raise ValueError(f"'ceiling' must be a positive integer; got {ceiling!r}")
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 0:
            raise ValueError(f"'workers' must be an integer >= 0; got {workers!r}")
        if self.probe is None:
            return self._read(ceiling, workers)[0]
        kept = self.probe.recall(ceiling)
        if kept is not None:
            return kept
        chosen, most = self._read(ceiling, workers)
        self.probe.keep(ceiling, chosen, most)
        return chosen

    def _read(self, ceiling: int, workers: int) -> tuple[int, int]:
        """:meth:`choose` from a fresh reading of the machine, and the most it could be."""
        allowed = _allowed_cpus()
        most = min(ceiling, allowed)
        running = read_running(self.loadavg)
        if running is None:
            return most, most
        # First as if no CPU lay outside the mask (CPUs there only add threads): on a
        # quiet machine that answer is already the most, and os.cpu_count, which reads
        # a file (5 us), is spared.
        if count_threads(ceiling, running, 1, allowed, allowed, self.spare) == most:
            return most, most
        cpus = max((self.probe.cpus() if self.probe is not None else os.cpu_count()) or allowed,
                   allowed)
        # The reading thread alone is ours, or every pool worker is spinning too.
        busy = count_threads(ceiling, running, 1, cpus, allowed, self.spare)
        quiet = count_threads(ceiling, running, 1 + workers, cpus, allowed, self.spare)
        if busy == quiet:
            return busy, most
        own = self.probe.own_running(self.task_dir) if self.probe is not None else None
        if own is None:
            own = read_own_running(self.task_dir)
        if own is None:
            return busy, most  # fewer threads is the safe side: a collapse costs 20x, one 2x
        return count_threads(ceiling, running, own, cpus, allowed, self.spare), most


class SearchThreads:
    """One search's numba thread count: fixed, or chosen by a policy when first asked.

    Made by :func:`search_threads`; :meth:`count` sets numba's thread count
    for the calling thread the first time it is called (with ``threads``
    None, from ``policy``), and :func:`search_threads` restores a count the
    policy lowered when the search ends.

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
        if threads is not None:
            nb.set_num_threads(min(threads, nb.config.NUMBA_NUM_THREADS))
            self._count = nb.get_num_threads()

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
            chosen = (self._policy or policy or ThreadPolicy()).choose(
                before, nb.config.NUMBA_NUM_THREADS - 1)
            if chosen != before:
                nb.set_num_threads(chosen)
                self._before = before
            self._count = chosen
        return self._count

    def restore(self) -> None:
        """Set back a count the policy lowered: a busy moment must not lower the next
        search's ceiling. A number given stays set, as it always did."""
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
        pool, ``NUMBA_NUM_THREADS``) and stays set after the search, for the
        calling thread, as it always did (the command line reports it).
        None asks ``policy`` for at most the caller's current
        ``numba.get_num_threads()`` threads, and restores that count
        afterwards.
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
