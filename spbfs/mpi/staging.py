"""How a device engine's data crosses to the host and back: pinned staging, or none.

The grid's messages are host buffers unless the MPI library is CUDA-aware. A
local engine on the GPU (:class:`~spbfs.mpi.local_array.ArrayLocal` with
cupy) moves every received message up and every message it sends down
through one :class:`Staging` object made with the engine (once per graph):

``pinned`` (the default on a device)
    Through page-locked host buffers, one for each direction, grown
    geometrically (at least doubled) and reused from level to level, so that
    a search of a thousand levels allocates a few buffers, not a thousand,
    and every copy is a DMA from or into pinned memory (a pageable copy goes
    through the driver's own staging buffer, a second copy). What comes down
    is a view of the buffer, valid until the next :meth:`Staging.down`: the
    engine's steps copy it into their send buffers at once.
``direct`` (the MPI library is CUDA-aware)
    No host buffers: a message MPI received into device memory goes to the
    engine as it is (no copy), and what comes down is copied straight.
``host`` (the engine runs on the host: numpy)
    Nothing crosses: ``up`` and ``down`` only fix the dtype.

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
    grown : int
        Pinned buffers allocated so far (each direction's first, and each growth).
    """

    __slots__ = ("_empty_pinned", "down", "grown", "mode", "rbuf", "sbuf", "up", "xp")

    def __init__(self, xp: Any, direct: bool) -> None:
        self.xp = xp
        self.grown = 0
        self.rbuf = self.sbuf = np.zeros(0, np.int64)  # pinned: received (up), sent (down)
        self._empty_pinned: Any = None
        if xp is np:
            self.mode = "host"
            self.up, self.down = self._host_up, self._host_down
        elif direct:
            self.mode = "direct"
            self.up, self.down = self._direct_up, self._direct_down
        else:
            import cupyx

            self.mode = "pinned"
            self._empty_pinned = cupyx.empty_pinned
            self.up, self.down = self._pinned_up, self._pinned_down

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
        np.copyto(host, a, casting="unsafe")  # int64 on the wire; the copy is the staging
        return self.xp.asarray(host)

    def _pinned_down(self, flat: Any) -> np.ndarray:
        n = flat.shape[0]
        buf = self.sbuf = self._grow(self.sbuf, n)
        host = buf[:n]
        flat.get(out=host)
        return host

    # -- CUDA-aware ------------------------------------------------------------------
    def _direct_up(self, a: Any) -> Any:
        if isinstance(a, self.xp.ndarray):  # received into device memory: no copy
            return a if a.dtype == np.int64 else a.astype(np.int64)
        return self.xp.asarray(a).astype(np.int64, copy=False)

    def _direct_down(self, flat: Any) -> np.ndarray:
        return flat.get()  # type: ignore[no-any-return]
