"""Compilation of the numba kernels: the first-use notice, whether a kernel is ready, warm-up.

numba compiles a kernel the first time it is called with new argument types and
keeps the machine code in its on-disk cache (``cache=True`` on every kernel;
``__pycache__`` beside the sources, or ``$NUMBA_CACHE_DIR``). A later process
loads it in milliseconds; the first one waits, tens of seconds for the search
kernel. This module makes that wait visible and avoidable:

* :class:`CompileNotice` is a numba event listener (``numba:compile``, which
  numba fires only on a cache miss, never on a call that finds its code): the
  first time an spbfs or semirings kernel that takes more than about a second
  starts compiling, it writes one line on stderr, once per process and module
  of kernels. Nothing is added to a call that does not compile.
* :func:`ready` says, without compiling, whether a kernel has machine code in
  this process or in the on-disk cache, so that a small input can take a path
  that needs no compilation while the kernels are not built.
* :mod:`spbfs.warmup` compiles every kernel a user may hit, for images and
  clusters (``spbfs warmup``); it calls the library from above, this module is
  called from below.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from numba.core import event

from semirings._build import kernel_ready as ready

__all__ = ["BENCH_SECONDS", "NUMPY_FIRST_SECONDS", "SMALL_VERTICES", "CompileNotice",
           "install_notice", "numpy_first", "quiet_notice", "ready"]

#: Graphs of at most this many vertices search on numpy (backend ``"auto"``) while
#: the numba search kernel is not compiled: their answer takes milliseconds there,
#: where compiling takes a minute. A larger graph, ``backend="numba"`` or a kernel
#: already compiled (in this process or in the on-disk cache) uses numba.
SMALL_VERTICES = 1 << 14

#: Seconds of a graph's searches on numpy (while the kernel is not compiled) after
#: which its next search compiles the kernel: numpy runs such a graph up to about ten
#: times slower (Kronecker 14: 2.7 against 0.24 ms a search), so a script that searches
#: one graph many times pays a bounded loss, then the compile once, not the loss for ever.
NUMPY_FIRST_SECONDS = 10.0

# Seconds of one CPU that a module's kernels compile for on their first use (numba
# 0.68, an empty cache; the process time between numba's compile events during
# spbfs warmup's steps): the estimate the notice gives, keyed by
# "module.function" of the kernel whose compilation starts first, else by its
# module. A first search compiles the whole search kernel (search_levels)
# whichever of its module's kernels comes first. Anything not listed is taken to
# cost ``_DEFAULT_SECONDS``; under ``_QUIET_SECONDS`` nothing is said.
_SECONDS = {
    "spbfs.kernels.bfs_numba": 37.0,
    "spbfs.kernels.bfs_numba.fill_minus1": 0.5,
    # The result pass of a search of 2**18 vertices or more (smaller ones write their
    # results in the loop): compiled at such a graph's first search, after the loop.
    "spbfs.kernels.bfs_numba.finish": 2.0,
    "semirings._build": 5.0,
    "semirings.kernels.numba_kernels": 5.0,
    "spbfs.algorithms._ops": 9.0,
    "spbfs.kernels.ranking_numba": 2.5,
    "spbfs.validate": 3.2,
    "spbfs.matrix_structure": 2.3,
    "spbfs.csgraph": 2.2,
    "spbfs.kernels.sssp_numba": 2.6,
    "spbfs.generators": 1.1,
    # Components: the weak union-find first (with the numbering), or a strong search.
    "spbfs.kernels.components_numba": 1.8,
    "spbfs.kernels.components_numba.strong_labels": 1.0,
    "spbfs.kernels.components_numba.strong_partition": 1.0,
    "spbfs.kernels.components_numba.dfs_strong_labels": 1.0,
    # The small-search kernels (spbfs.search.small): a second at most, said nothing of.
    "spbfs.kernels.rows_bfs": 1.0,
    "spbfs.kernels.degrees": 0.5,
}
_DEFAULT_SECONDS = 2.0
# What ``spbfs bench``'s warm-up compiles on a fresh install: generator, build,
# search and validation kernels, 49 s of one CPU; on two cores the search kernel
# compiles in a second process meanwhile (spbfs.warmup._search_aside): about 40 s.
BENCH_SECONDS = 45.0
_QUIET_SECONDS = 1.5
_PACKAGES = ("spbfs", "semirings")

MESSAGE = "compiling spbfs kernels for first use (about {seconds} s; cached afterwards)"


class CompileNotice(event.Listener):
    """Writes :data:`MESSAGE` when a slow spbfs kernel starts compiling: once per module.

    A first search on a large graph compiles the build's kernels (seconds),
    then the search's (most of a minute): each says so once, with its own
    estimate, rather than one line whose estimate covers a part.

    Parameters
    ----------
    file : text stream, optional
        Where to write; ``sys.stderr`` at the time of writing by default (so a
        notebook or a test that replaces stderr sees it).
    """

    def __init__(self, file: TextIO | None = None) -> None:
        self.file = file
        self.quiet = False
        self.said: set[str] = set()

    def on_start(self, ev: event.Event) -> None:
        if self.quiet:
            return
        func = getattr(ev.data.get("dispatcher"), "py_func", None)
        module = getattr(func, "__module__", "") or ""
        if module.partition(".")[0] not in _PACKAGES or module in self.said:
            return
        seconds = estimate(f"{module}.{func.__name__}")
        if seconds >= _QUIET_SECONDS:
            self.announce(module, seconds)

    def announce(self, key: str, seconds: float) -> None:
        """Write the notice for about ``seconds`` of compiling ``key``, once per key."""
        if self.quiet or key in self.said:
            return
        self.said.add(key)
        out = self.file if self.file is not None else sys.stderr
        try:
            out.write(MESSAGE.format(seconds=round(seconds)) + "\n")
            out.flush()
        except (OSError, ValueError):  # a closed stream must not break the compilation
            pass

    def on_end(self, ev: event.Event) -> None:
        pass


def estimate(name: str) -> float:
    """Seconds (one CPU) that a first use takes whose compiling starts at ``module.function``."""
    seconds = _SECONDS.get(name)
    if seconds is None:
        seconds = _SECONDS.get(name.rpartition(".")[0], _DEFAULT_SECONDS)
    return seconds


def install_notice() -> CompileNotice:
    """Register the process's :class:`CompileNotice` with numba (once; returns it)."""
    for listener in event._registered.get("numba:compile", ()):
        if isinstance(listener, CompileNotice):
            return listener
    notice = CompileNotice()
    event.register("numba:compile", notice)
    return notice


@contextmanager
def quiet_notice() -> Iterator[None]:
    """No first-use notice inside (a command that reports compilation itself)."""
    notice = install_notice()
    quiet, notice.quiet = notice.quiet, True
    try:
        yield
    finally:
        notice.quiet = quiet


def numpy_first(kernel: Any, n: int, backend: str, spent: float = 0.0) -> bool:
    """Whether a search of ``n`` vertices on ``backend`` is better run without ``kernel``.

    True for a small graph on backend ``"auto"`` while numba's ``kernel`` is
    not compiled (:func:`ready`) and the graph's searches without it have
    taken less than :data:`NUMPY_FIRST_SECONDS` (``spent``). A few comparisons
    once the kernel runs.
    """
    return (n <= SMALL_VERTICES and backend == "auto" and spent < NUMPY_FIRST_SECONDS
            and not ready(kernel))
