"""Array backends: numpy (reference), numba (fast CPU), cupy (GPU).

A :class:`Backend` is an explicit context object handed to kernels; nothing
here is module-global mutable state, so MPI sub-communicators or two graphs on
two backends in one process never interfere.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

__all__ = ["BACKENDS", "CUPY_MIN", "Backend", "check_cupy_version", "get_backend",
           "gpu_available"]

BACKENDS = ("auto", "numpy", "numba", "cupy")
#: The oldest cupy the package runs on: the whole-array BFS steps hand ``repeat`` its
#: counts as a device array (cupy 14.1). pyproject.toml's ``gpu`` (CUDA 12) and
#: ``gpu-cuda13`` (CUDA 13) extras ask for it.
CUPY_MIN = (14, 1)


def check_cupy_version(version: str) -> None:
    """Raise when cupy ``version`` is older than :data:`CUPY_MIN`.

    Raises
    ------
    RuntimeError
        Naming the version found, the one needed and the extras that install it.
    """
    m = re.match(r"(\d+)\.(\d+)", version)
    if m is None or (int(m.group(1)), int(m.group(2))) < CUPY_MIN:
        need = ".".join(map(str, CUPY_MIN))
        raise RuntimeError(
            f"backend 'cupy' needs cupy >= {need}; found cupy {version}: install "
            f"'spbfs[gpu]' (CUDA 12) or 'spbfs[gpu-cuda13]' (CUDA 13), or choose "
            f"backend 'numba' / 'numpy'")


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
        When ``"cupy"`` is requested but no usable GPU/cupy exists, or when cupy
        (asked for, or picked by ``"auto"``) is older than :data:`CUPY_MIN`.
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
                "(install the 'gpu' extra, or 'gpu-cuda13' for CUDA 13, and check the "
                "CUDA driver), "
                "or choose backend 'numba' / 'numpy'"
            )
        import cupy

        check_cupy_version(cupy.__version__)
        import cupyx.scipy.sparse

        return Backend("cupy", cupy, cupyx.scipy.sparse)
    import scipy.sparse

    return Backend(name, np, scipy.sparse)
