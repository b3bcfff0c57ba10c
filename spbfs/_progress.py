"""Progress of a command's slow steps, drawn on one line of a text stream.

The command line decides once whether to draw (``--progress``, or stderr is a
terminal) and hands the steps a :class:`Progress`; the steps report through a
callback argument ``progress(i, n)`` (:meth:`Progress.bar`) or run inside
:meth:`Progress.step`. When drawing is off, :meth:`Progress.bar` returns None,
so a step runs exactly as it does without a callback, and nothing is written.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

__all__ = ["Bar", "Progress"]


def _isatty(file: TextIO) -> bool:
    isatty = getattr(file, "isatty", None)
    try:
        return bool(isatty()) if callable(isatty) else False
    except (OSError, ValueError):  # closed or detached streams
        return False


class Bar:
    """One step's bar, a callback ``bar(i, n)``: ``i`` of ``n`` parts done.

    Parameters
    ----------
    label : str
        Text before the bar.
    file : text stream
        Where to draw.
    width : int
        Bar width in characters.
    """

    def __init__(self, label: str, file: TextIO, width: int = 30, *,
                 redraw: bool = True) -> None:
        self.label = label
        self.file = file
        self.width = int(width)
        self.redraw = redraw
        self.start = time.perf_counter()
        self.done = False

    def __call__(self, i: int, n: int) -> None:
        """Draw ``i`` of ``n`` done; the line ends once ``i >= n``.

        Without redrawing (a log file, a pipe), a whole line is written at
        every eighth of the way and at the end: a long step still shows that
        it advances, in a few lines.
        """
        if self.done:
            return
        if not self.redraw and i < n and (n < 8 or (i * 8) // n == ((i - 1) * 8) // n):
            return
        frac = min(max(i / n, 0.0), 1.0) if n > 0 else 1.0
        filled = round(frac * self.width)
        bar = "#" * filled + "-" * (self.width - filled)
        elapsed = time.perf_counter() - self.start
        back = "\r" if self.redraw else ""
        self.file.write(f"{back}{self.label:<10} [{bar}] {i}/{n} {elapsed:7.1f} s")
        if i >= n or not self.redraw:  # a log gets whole lines
            self.file.write("\n")
        self.done = i >= n
        self.file.flush()


class Progress:
    """Where and whether a command draws the progress of its steps.

    On a terminal a bar is redrawn in place as its step advances; elsewhere
    (a log file, a pipe) every step writes whole lines: a step when it starts
    and ends, a bar at every eighth of the way and when it is full.

    Parameters
    ----------
    enabled : bool
        Draw at all.
    file : text stream, optional
        Where to draw; ``sys.stderr`` (as it is when this is made) by default.

    Examples
    --------
    >>> import io
    >>> buf = io.StringIO()
    >>> p = Progress(True, buf)
    >>> bar = p.bar("build")
    >>> bar(1, 2); bar(2, 2)
    >>> buf.getvalue()[:43]
    'build      [##############################]'
    >>> Progress(False).bar("build") is None
    True
    """

    def __init__(self, enabled: bool, file: TextIO | None = None) -> None:
        self.enabled = bool(enabled)
        self.file = sys.stderr if file is None else file
        self.tty = _isatty(self.file)

    @classmethod
    def for_terminal(cls, force: bool = False, file: TextIO | None = None) -> Progress:
        """Draw when ``force`` or when ``file`` (default stderr) is a terminal."""
        file = sys.stderr if file is None else file
        return cls(bool(force) or _isatty(file), file)

    def bar(self, label: str) -> Callable[[int, int], None] | None:
        """A callback ``progress(i, n)`` that draws a bar for ``label``; None when disabled."""
        return Bar(label, self.file, redraw=self.tty) if self.enabled else None

    @contextmanager
    def step(self, label: str) -> Iterator[None]:
        """Run a step without parts: its label while it runs, then its seconds."""
        if not self.enabled:
            yield
            return
        t0 = time.perf_counter()
        self.file.write(f"{label:<10} ..." + ("" if self.tty else "\n"))
        self.file.flush()
        try:
            yield
        finally:
            back = "\r" if self.tty else ""
            self.file.write(f"{back}{label:<10} {time.perf_counter() - t0:.1f} s\n")
            self.file.flush()
