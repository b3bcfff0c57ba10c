"""Array backends: numpy (reference), numba (fast CPU), cupy (GPU).

A :class:`Backend` is an explicit context object handed to kernels; nothing
here is module-global mutable state, so MPI sub-communicators or two graphs on
two backends in one process never interfere.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

__all__ = ["BACKENDS", "Backend", "get_backend", "gpu_available"]

BACKENDS = ("auto", "numpy", "numba", "cupy")


@functools.cache
def gpu_available() -> bool:
    """Return True when cupy imports and sees at least one CUDA device."""
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # no cupy, no driver, no device: all mean "no GPU"
        return False


@dataclass(frozen=True)
class Backend:
    """An array backend.

    Attributes
    ----------
    name : str
        ``"numpy"``, ``"numba"`` or ``"cupy"``.
    xp : module
        The array module (numpy or cupy).
    sparse : module
        ``scipy.sparse`` or ``cupyx.scipy.sparse``.
    """

    name: str
    xp: ModuleType
    sparse: ModuleType

    @property
    def is_gpu(self) -> bool:
        """True for the cupy backend."""
        return self.name == "cupy"

    def asarray(self, a: Any, dtype: Any = None) -> Any:
        """Move ``a`` to this backend's memory (no copy when already there)."""
        return self.xp.asarray(a, dtype=dtype)

    def to_host(self, a: Any) -> np.ndarray:
        """Return ``a`` as a numpy array (device-to-host copy on the GPU)."""
        if self.is_gpu and not isinstance(a, np.ndarray):
            return a.get()
        return np.asarray(a)

    def __repr__(self) -> str:
        return f"Backend({self.name!r})"


def get_backend(name: str | Backend = "auto") -> Backend:
    """Resolve a backend name.

    Parameters
    ----------
    name : {"auto", "numpy", "numba", "cupy"} or Backend
        ``"auto"`` picks cupy when a GPU is usable, else numba.

    Raises
    ------
    ValueError
        For an unknown name (the message lists the valid ones).
    RuntimeError
        When ``"cupy"`` is requested but no usable GPU/cupy exists.
    """
    if isinstance(name, Backend):
        return name
    if name not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}; got {name!r}")
    if name == "auto":
        name = "cupy" if gpu_available() else "numba"
    if name == "cupy":
        if not gpu_available():
            raise RuntimeError(
                "backend 'cupy' was requested but no usable GPU was found "
                "(install the 'gpu' extra and check the CUDA driver), "
                "or choose backend 'numba' / 'numpy'"
            )
        import cupy
        import cupyx.scipy.sparse

        return Backend("cupy", cupy, cupyx.scipy.sparse)
    import scipy.sparse

    return Backend(name, np, scipy.sparse)
