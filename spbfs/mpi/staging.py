"""How a device engine's messages reach MPI and come back: pinned staging, or none.

A grid search's messages (frontier ids and bitmaps, ``(child, parent)``
pairs, a bottom-up segment's ``completed`` bitmap) are made and read by the
rank's local engine where its arrays live; the phases of
:mod:`spbfs.mpi.spmsv` hand them to MPI through the engine's one
:class:`Staging` object (made with the engine, once per graph), which says
what MPI is given and what comes back:

``pinned`` (the default on a device)
    A device array goes down into a page-locked host buffer before it is
    sent, and a received host buffer goes up through one: one copy per
    message each way. The buffers (one for each direction) are grown
    geometrically (at least doubled) and reused from level to level, so that
    a search of a thousand levels allocates a few buffers, not a thousand,
    and every copy is a DMA from or into pinned memory (a pageable copy goes
    through the driver's own staging buffer, a second copy). What comes down
    is a view of the buffer, valid until the next :meth:`Staging.send` (or
    ``down``): a rank's sends of one exchange come down together
    (:meth:`Staging.send_parts`), and an exchange's sends complete before the
    next one is made.
``direct`` (the MPI library is CUDA-aware)
    Nothing is copied: device arrays are sent as they are and received into
    device buffers (:meth:`Staging.empty`), which the engine reads in place.
``host`` (the engine runs on the host: numba, numpy)
    Nothing crosses: every method hands its array back.

An encoding or exchange pattern written for host arrays only (the codec's
compressed messages, the collective and butterfly patterns) reads and writes
host arrays through :meth:`Staging.host` and :meth:`Staging.recv`: on a device
that is a copy each way where ``pinned`` made one anyway, and one more down
and up where the library is CUDA-aware.

:func:`cuda_aware` resolves ``Config.cuda_aware`` (``"auto"`` asks the library).
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

__all__ = ["Staging", "cuda_aware", "library_cuda_aware"]


def library_cuda_aware() -> bool:
    """Whether the loaded MPI library says it takes CUDA device buffers.

    mpi4py has no query of its own; MPICH (4 and later) and Open MPI export
    ``MPIX_Query_cuda_support()`` from ``libmpi``, found here among the
    libraries this process mapped (Linux). Where the library, the symbol or
    the map is missing, the answer is no (host staging, which always works).
    """
    from spbfs.mpi import comm as C

    C.mpi()  # the library is loaded with mpi4py's MPI module
    try:
        with open("/proc/self/maps", encoding="utf-8") as fh:
            paths = {line.split()[-1] for line in fh if "libmpi" in line and "/" in line}
    except OSError:
        return False
    for path in sorted(paths):
        try:
            query = ctypes.CDLL(path).MPIX_Query_cuda_support
        except (OSError, AttributeError):
            continue
        query.restype = ctypes.c_int
        query.argtypes = []
        return bool(query() == 1)
    return False


def cuda_aware(setting: bool | str) -> bool:
    """``Config.cuda_aware`` resolved: True, False, or the library's answer for ``"auto"``."""
    if setting == "auto":
        return library_cuda_aware()
    return bool(setting)


class Staging:
    """A device engine's crossings between host and device (see the module docstring).

    Parameters
    ----------
    xp : module
        The engine's array module (numpy or cupy).
    direct : bool
        The MPI library takes device buffers (:func:`cuda_aware`); ignored on
        the host.

    Attributes
    ----------
    mode : str
        ``"host"``, ``"pinned"`` or ``"direct"``.
    device : bool
        The engine's arrays are device arrays (``pinned`` or ``direct``).
    grown : int
        Pinned buffers allocated so far (each direction's first, and each growth).
    up, down : callable
        A received host message on the device as int64 (``direct``: a device
        one as it is); device int64 words on the host (a pinned view).
    send, recv : callable
        What the phases call on each message: an engine array as MPI is given
        it (a device one down through the pinned buffer, or as it is where
        the library takes device memory; a host one as it is), and what MPI
        received as the engine's array (up through the pinned buffer; as it
        is where it landed in device memory, or on the host).
    host : callable
        An engine array (or a received message) as a host array, for code
        written for the host only (pinned: a view of the staging buffer, valid
        until the next copy down; :meth:`host_parts` for several at once).
    empty : callable
        A receive buffer ``empty(n, dtype)`` where MPI writes (device memory
        for ``direct``, the host otherwise).
    landing : callable
        ``landing(n)``: a host int64 buffer for MPI to write a message into that
        :attr:`recv` then takes up (pinned: the staging buffer itself, so the
        message is copied once, not first into pageable memory; a fresh array
        otherwise).
    """

    __slots__ = ("_empty_pinned", "device", "down", "empty", "grown", "host", "landing", "mode",
                 "rbuf", "recv", "sbuf", "send", "up", "xp")

    def __init__(self, xp: Any, direct: bool) -> None:
        self.xp = xp
        self.grown = 0
        self.rbuf = self.sbuf = np.zeros(0, np.int64)  # pinned: received (up), sent (down)
        self._empty_pinned: Any = None
        self.device = xp is not np
        self.empty = np.empty
        self.landing = _int64_words
        if xp is np:
            self.mode = "host"
            self.up, self.down = self._host_up, self._host_down
            self.send = self.recv = self.host = _same
        elif direct:
            self.mode = "direct"
            self.up, self.down = self._direct_up, self._direct_down
            self.send = _same
            self.recv = self._direct_recv
            self.host = self._direct_host
            self.empty = xp.empty
        else:
            import cupyx

            self.mode = "pinned"
            self._empty_pinned = cupyx.empty_pinned
            self.up, self.down = self._pinned_up, self._pinned_down
            self.send = self.host = self._pinned_send
            self.recv = self._pinned_recv
            self.landing = self._pinned_landing

    def send_parts(self, parts: list[Any]) -> list[Any]:
        """:attr:`send` for one exchange's messages: a pinned engine's device ones come
        down together, in one transfer (one staging buffer serves the whole exchange)."""
        if self.mode != "pinned":
            return parts
        dev = [k for k, p in enumerate(parts) if p is not None and not isinstance(p, np.ndarray)]
        if not dev:
            return parts
        words = [parts[k].reshape(-1).view(np.int64) for k in dev]
        flat = self._pinned_down(words[0] if len(dev) == 1 else self.xp.concatenate(words))
        out = list(parts)
        at = 0
        for k, w in zip(dev, words, strict=True):
            out[k] = flat[at:at + w.shape[0]]
            at += w.shape[0]
        return out

    def host_parts(self, parts: list[Any]) -> list[Any]:
        """:attr:`host` for one exchange's messages, all alive at once (a pinned
        engine's come down together: one staging buffer, one transfer)."""
        if self.mode == "pinned":
            return self.send_parts(parts)
        if self.mode == "host":
            return parts
        return [None if p is None else self.host(p) for p in parts]

    # -- host ------------------------------------------------------------------------
    def _host_up(self, a: np.ndarray) -> np.ndarray:
        return np.asarray(a).astype(np.int64, copy=False)

    def _host_down(self, flat: np.ndarray) -> np.ndarray:
        return flat

    # -- pinned ----------------------------------------------------------------------
    def _grow(self, buf: np.ndarray, n: int) -> np.ndarray:
        """A pinned int64 buffer of at least ``n`` words (``buf``, or one at least twice it)."""
        if buf.shape[0] >= n and buf.shape[0]:  # the empty start is no pinned buffer
            return buf
        self.grown += 1
        return self._empty_pinned(max(n, 2 * buf.shape[0], 1024), np.int64)

    def _pinned_up(self, a: np.ndarray) -> Any:
        n = a.shape[0]
        buf = self.rbuf = self._grow(self.rbuf, n)
        host = buf[:n]
        if a.ctypes.data != host.ctypes.data or a.dtype != np.int64:  # not landed in place
            np.copyto(host, a, casting="unsafe")  # int64 on the wire; the copy is the staging
        return self.xp.asarray(host)

    def _pinned_landing(self, n: int) -> np.ndarray:
        buf = self.rbuf = self._grow(self.rbuf, n)
        return buf[:n]

    def _pinned_down(self, flat: Any) -> np.ndarray:
        n = flat.shape[0]
        buf = self.sbuf = self._grow(self.sbuf, n)
        host = buf[:n]
        flat.get(out=host)
        return host

    def _pinned_send(self, a: Any) -> Any:
        if isinstance(a, np.ndarray):
            return a
        return self._pinned_down(a.reshape(-1).view(np.int64)).view(a.dtype)

    def _pinned_recv(self, a: Any) -> Any:
        if isinstance(a, np.ndarray):
            return self._pinned_up(a.view(np.int64) if a.dtype.itemsize == 8 else a)
        return a

    # -- CUDA-aware ------------------------------------------------------------------
    def _direct_up(self, a: Any) -> Any:
        if isinstance(a, self.xp.ndarray):  # received into device memory: no copy
            return a if a.dtype == np.int64 else a.astype(np.int64)
        return self.xp.asarray(a).astype(np.int64, copy=False)

    def _direct_down(self, flat: Any) -> np.ndarray:
        return flat.get()  # type: ignore[no-any-return]

    def _direct_recv(self, a: Any) -> Any:
        if isinstance(a, np.ndarray):  # decoded on the host (a host-only encoding)
            return self.xp.asarray(a)
        return a

    def _direct_host(self, a: Any) -> Any:
        if isinstance(a, np.ndarray):
            return a
        return a.get()


def _int64_words(n: int) -> np.ndarray:
    """A fresh host receive buffer of ``n`` int64 words."""
    return np.empty(n, np.int64)


def _same(a: Any) -> Any:
    """The array itself: nothing crosses."""
    return a
