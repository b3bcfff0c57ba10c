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
microseconds, so only then). Where ``/proc`` is absent (macOS, Windows) the
search runs on every thread it may use, as it did before.

Reading the machine costs 5 µs on a quiet machine and 40–230 µs on a busy one
(docs/benchmarks.md), a tenth of a road network's whole search, which never
runs a parallel region. So the one-process numba search asks for its count
only when its first parallel region is due (:class:`SearchThreads`,
``lazy=True``): a search of small levels never reads ``/proc`` at all.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

__all__ = ["SearchThreads", "ThreadPolicy", "count_threads", "read_own_running",
           "read_running", "search_threads"]


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
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        text = os.read(fd, 256)
    except OSError:
        return None
    finally:
        os.close(fd)
    try:
        value = int(text.split()[3].split(b"/")[0])
    except (IndexError, ValueError):
        return None
    return value if value >= 1 else None


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
        if tid == me:
            continue
        try:
            fd = os.open(os.path.join(task_dir, tid, "stat"), os.O_RDONLY)
        except OSError:
            continue  # the thread ended since the listing
        try:
            text = os.read(fd, 512)
        except OSError:
            continue
        finally:
            os.close(fd)
        # The name may hold spaces and parentheses: the state follows the last ')'.
        end = text.rfind(b")")
        if end >= 0 and text[end + 2:end + 3] == b"R":
            count += 1
    return max(count, 1)


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

    Nothing is cached: every :meth:`choose` reads the machine again.

    Parameters
    ----------
    spare : int
        Threads tolerated beyond the idle cores (see the module's notes).
    loadavg : str
        Where the runnable-task count is read (tests point it at a file).
    task_dir : str
        Where this process's threads are listed.
    """

    spare: int = 1
    loadavg: str = "/proc/loadavg"
    task_dir: str = "/proc/self/task"

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
        allowed = _allowed_cpus()
        running = read_running(self.loadavg)
        if running is None:
            return min(ceiling, allowed)
        most = min(ceiling, allowed)
        # First as if no CPU lay outside the mask (CPUs there only add threads): on a
        # quiet machine that answer is already the most, and os.cpu_count, which reads
        # a file (5 us), is spared.
        if count_threads(ceiling, running, 1, allowed, allowed, self.spare) == most:
            return most
        cpus = max(os.cpu_count() or allowed, allowed)
        # The reading thread alone is ours, or every pool worker is spinning too.
        busy = count_threads(ceiling, running, 1, cpus, allowed, self.spare)
        quiet = count_threads(ceiling, running, 1 + workers, cpus, allowed, self.spare)
        if busy == quiet:
            return busy
        own = read_own_running(self.task_dir)
        if own is None:
            return busy  # fewer threads is the safe side: a collapse costs 20x, one thread 2x
        return count_threads(ceiling, running, own, cpus, allowed, self.spare)


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
        import numba

        self._numba = numba
        self._policy = policy
        self._before: int | None = None
        self._count: int | None = None
        if threads is not None:
            numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
            self._count = numba.get_num_threads()

    @property
    def chosen(self) -> bool:
        """Whether the count is set (a number given, or :meth:`count` called)."""
        return self._count is not None

    def count(self) -> int:
        """The thread count, chosen now (and set for the calling thread) if not yet."""
        if self._count is None:
            numba = self._numba
            before = numba.get_num_threads()
            chosen = (self._policy or ThreadPolicy()).choose(
                before, numba.config.NUMBA_NUM_THREADS - 1)
            if chosen != before:
                numba.set_num_threads(chosen)
                self._before = before
            self._count = chosen
        return self._count

    def restore(self) -> None:
        """Set back a count the policy lowered: a busy moment must not lower the next
        search's ceiling. A number given stays set, as it always did."""
        if self._before is not None:
            self._numba.set_num_threads(self._before)
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
