"""A strict cupy stand-in: the GPU code paths run on the CPU and fail on any hidden transfer.

:func:`install` puts a fake ``cupy`` and ``cupyx.scipy.sparse`` into
``sys.modules`` (before spbfs imports them). Their arrays (:class:`ndarray`)
hold a numpy array but are a type of their own that refuses to mix with the
host: ``__array__`` raises (so numpy, mpi4py and ``np.asarray`` refuse them),
so do ``int``/``float``/``bool``/``len``-free iteration on anything but a 0-d
array, a numpy array as an operand, index or function argument, and numpy
ufuncs. The ways between host and device are the explicit ones:
``cupy.asarray(host)`` (counted as ``to_device``) and ``cupy.asnumpy(x)`` or
``x.get()`` (counted as ``to_host``); a 0-d array's ``int``/``bool`` is a
synchronizing scalar read, counted as ``scalars``. Only names cupy exports
are provided, each doing what numpy does.

Every counted transfer also records its size in elements (``sizes``), so a
test can tell an O(1) count from an array. A device array exposes
``__cuda_array_interface__`` as cupy's do (mpi4py takes such an object as a
buffer), its pointer the host memory behind it, so a CUDA-aware MPI reads and
writes it in place; but only while ``Transfers.cuda_aware_mpi`` is set (the
test's stand-in for a library that takes device buffers): otherwise reading
it raises, as a device pointer handed to an MPI library that is not
CUDA-aware would fail.
"""

from __future__ import annotations

import operator
import sys
import types
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse

__all__ = ["HostLeak", "Transfers", "install", "make", "ndarray", "run_script"]


@dataclass
class Transfers:
    """How often data crossed between host and (stand-in) device."""

    to_device: int = 0
    to_host: int = 0
    scalars: int = 0
    #: Pinned host memory (``cupyx.empty_pinned``): the buffers handed out, and the
    #: transfers whose host side lay in one of them (counted in the two above too).
    pinned: list[np.ndarray] = field(default_factory=list)
    pinned_to_device: int = 0
    pinned_to_host: int = 0
    #: Elements moved by each counted transfer (both directions), in order.
    sizes: list[int] = field(default_factory=list)
    #: Whether MPI may be handed device buffers (``__cuda_array_interface__`` readable).
    cuda_aware_mpi: bool = False
    #: Device buffers MPI was handed (each read of the interface), and those refused
    #: (read while ``cuda_aware_mpi`` is not set: mpi4py then raises a TypeError).
    device_buffers: int = 0
    refused_buffers: int = 0

    def is_pinned(self, a: np.ndarray) -> bool:
        """Whether ``a`` is (a view of) a pinned buffer of the stand-in."""
        while isinstance(a, np.ndarray):
            if any(a is p for p in self.pinned):
                return True
            a = a.base
        return False

    def total(self) -> int:
        return self.to_device + self.to_host


class HostLeak(TypeError):
    """A device array met host code, or host data met device code, without a transfer."""


class ndarray:  # cupy's name
    """A device array of the stand-in: numpy inside, refusing implicit host conversion."""

    __array_ufunc__ = None  # numpy ufuncs given one raise TypeError
    __slots__ = ("_a", "_t")

    def __init__(self, a: np.ndarray, t: Transfers) -> None:
        self._a = a
        self._t = t

    # -- what a host library would use to read it: all refused --------------------------
    def __array__(self, *args: Any, **kwargs: Any) -> np.ndarray:
        raise HostLeak("implicit conversion of a device array to numpy: use cupy.asnumpy "
                       "or .get()")

    def __array_function__(self, *args: Any, **kwargs: Any) -> Any:
        raise HostLeak("a numpy function was given a device array")

    def __iter__(self) -> Any:
        raise HostLeak("iterating a device array from the host")

    def _scalar(self) -> Any:
        if self._a.ndim != 0:
            raise HostLeak(f"host scalar of a device array of shape {self._a.shape}")
        self._t.scalars += 1
        return self._a[()]

    def __int__(self) -> int:
        return int(self._scalar())

    def __index__(self) -> int:
        return operator.index(self._scalar())

    def __float__(self) -> float:
        return float(self._scalar())

    def __bool__(self) -> bool:
        return bool(self._scalar())

    def __len__(self) -> int:
        return len(self._a)

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        # What mpi4py reads of a buffer it does not know: the device pointer (here the
        # host memory behind the stand-in), shape, type and strides (None: C order).
        if not self._t.cuda_aware_mpi:
            self._t.refused_buffers += 1
            raise HostLeak("a device buffer was handed to an MPI library that is not "
                           "CUDA-aware: stage it through the host")
        self._t.device_buffers += 1
        a = self._a
        return {"shape": a.shape, "typestr": a.dtype.str, "version": 3,
                "data": (a.__array_interface__["data"][0], False),
                "strides": None if a.flags.c_contiguous else a.strides}

    def __repr__(self) -> str:
        return f"standin.ndarray(shape={self._a.shape}, dtype={self._a.dtype})"

    # -- the explicit way out ---------------------------------------------------------
    def get(self, stream: Any = None, order: str = "C", out: np.ndarray | None = None,
            blocking: bool = True) -> np.ndarray:
        self._t.to_host += 1
        self._t.sizes.append(self._a.size)
        if out is None:
            return self._a.copy()
        # cupy copies into ``out`` only where shape and dtype match (pinned: asynchronously).
        if not isinstance(out, np.ndarray) or out.shape != self._a.shape \
                or out.dtype != self._a.dtype:
            raise ValueError(f"out must be a numpy array of shape {self._a.shape} and dtype "
                             f"{self._a.dtype}")
        out[...] = self._a
        self._t.pinned_to_host += self._t.is_pinned(out)
        return out

    # -- metadata (host information in cupy too) ----------------------------------------
    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    size = property(lambda self: self._a.size)
    ndim = property(lambda self: self._a.ndim)
    nbytes = property(lambda self: self._a.nbytes)
    itemsize = property(lambda self: self._a.itemsize)
    T = property(lambda self: _wrap(self._a.T, self._t))
    flags = property(lambda self: types.SimpleNamespace(
        c_contiguous=self._a.flags.c_contiguous, f_contiguous=self._a.flags.f_contiguous,
        owndata=self._a.flags.owndata))

    # -- indexing ---------------------------------------------------------------------
    def __getitem__(self, key: Any) -> ndarray:
        return _wrap(self._a[_unwrap_key(key)], self._t)

    def __setitem__(self, key: Any, value: Any) -> None:
        self._a[_unwrap_key(key)] = _unwrap(value)

    # -- methods cupy has ---------------------------------------------------------------
    def astype(self, dtype: Any, copy: bool = True) -> ndarray:
        return _wrap(self._a.astype(dtype, copy=copy), self._t)

    def view(self, dtype: Any) -> ndarray:
        return _wrap(self._a.view(dtype), self._t)

    def reshape(self, *shape: Any) -> ndarray:
        return _wrap(self._a.reshape(*shape), self._t)

    def ravel(self) -> ndarray:
        return _wrap(self._a.ravel(), self._t)

    def copy(self) -> ndarray:
        return _wrap(self._a.copy(), self._t)

    def fill(self, value: Any) -> None:
        self._a.fill(_unwrap(value))

    def sum(self, *args: Any, **kwargs: Any) -> ndarray:
        return _wrap(self._a.sum(*args, **kwargs), self._t)

    def max(self, *args: Any, **kwargs: Any) -> ndarray:
        return _wrap(self._a.max(*args, **kwargs), self._t)

    def min(self, *args: Any, **kwargs: Any) -> ndarray:
        return _wrap(self._a.min(*args, **kwargs), self._t)

    def any(self) -> ndarray:
        return _wrap(self._a.any(), self._t)

    def all(self) -> ndarray:
        return _wrap(self._a.all(), self._t)


def _binary(name: str) -> Any:
    op = getattr(operator, name)

    def method(self: ndarray, other: Any) -> ndarray:
        return _wrap(op(self._a, _unwrap(other)), self._t)

    def rmethod(self: ndarray, other: Any) -> ndarray:
        return _wrap(op(_unwrap(other), self._a), self._t)

    def imethod(self: ndarray, other: Any) -> ndarray:
        iop = getattr(operator, f"i{name.rstrip('_')}")
        iop(self._a, _unwrap(other))
        return self

    return method, rmethod, imethod


for _name in ("add", "sub", "mul", "truediv", "pow", "floordiv", "mod", "and_", "or_", "xor",
              "lshift", "rshift"):
    _m, _r, _i = _binary(_name)
    base = _name.rstrip("_")
    setattr(ndarray, f"__{base}__", _m)
    setattr(ndarray, f"__r{base}__", _r)
    setattr(ndarray, f"__i{base}__", _i)
for _name in ("lt", "le", "gt", "ge", "eq", "ne"):
    setattr(ndarray, f"__{_name}__", _binary(_name)[0])
ndarray.__hash__ = None  # type: ignore[assignment]
ndarray.__invert__ = lambda self: _wrap(~self._a, self._t)  # type: ignore[attr-defined]
ndarray.__neg__ = lambda self: _wrap(-self._a, self._t)  # type: ignore[attr-defined]
ndarray.__abs__ = lambda self: _wrap(abs(self._a), self._t)  # type: ignore[attr-defined]
ndarray.__pos__ = lambda self: self  # type: ignore[attr-defined]
ndarray.nonzero = lambda self: _wrap(self._a.nonzero(), self._t)  # type: ignore[attr-defined]


def _unwrap(x: Any) -> Any:
    """The numpy array inside a device array; a host array is a leak; scalars pass."""
    if isinstance(x, ndarray):
        return x._a
    if isinstance(x, np.ndarray):
        raise HostLeak(f"a host numpy array (shape {x.shape}) met device code without "
                       f"cupy.asarray")
    if isinstance(x, list | tuple):
        return type(x)(_unwrap(v) for v in x)
    return x


def _unwrap_key(key: Any) -> Any:
    if isinstance(key, tuple):
        return tuple(_unwrap_key(k) for k in key)
    if isinstance(key, slice):
        return slice(*(_unwrap(v) if isinstance(v, ndarray | np.ndarray) else v
                       for v in (key.start, key.stop, key.step)))
    return _unwrap(key)


def _wrap(x: Any, t: Transfers) -> Any:
    if isinstance(x, np.ndarray):
        return ndarray(x, t)
    if isinstance(x, np.generic):  # cupy returns 0-d arrays, never host scalars
        return ndarray(np.asarray(x), t)
    if isinstance(x, tuple):
        return tuple(_wrap(v, t) for v in x)
    return x


def _function(t: Transfers, fn: Any) -> Any:
    def call(*args: Any, **kwargs: Any) -> Any:
        args = tuple(_unwrap(a) for a in args)
        kwargs = {k: _unwrap(v) for k, v in kwargs.items()}
        return _wrap(fn(*args, **kwargs), t)

    call.__name__ = fn.__name__
    return call


#: The numpy functions the stand-in exports under their cupy names (cupy has each).
_FUNCTIONS = ("arange", "argsort", "bincount", "concatenate", "count_nonzero", "cumsum", "diff",
              "ascontiguousarray", "empty", "flatnonzero", "full", "lexsort", "nonzero", "ones",
              "packbits", "repeat", "searchsorted", "sort", "stack", "unique", "unpackbits",
              "where", "zeros", "zeros_like", "empty_like", "full_like", "broadcast_to",
              "isinf", "argmin", "argmax", "clip", "take")
#: The numpy ufuncs the stand-in exports as cupy ufuncs (called, or scattered with ``at``).
_UFUNCS = ("add", "multiply", "subtract", "maximum", "minimum", "logical_or", "logical_and",
           "bitwise_or", "bitwise_and", "bitwise_xor", "equal", "not_equal", "less", "greater",
           "abs",
           "isfinite", "isnan", "floor", "true_divide", "divide", "logical_not")


class _Ufunc:
    """A cupy ufunc: applied to device arrays, or scattered into one with ``at``."""

    def __init__(self, t: Transfers, uf: np.ufunc) -> None:
        self._t = t
        self._uf = uf
        self.__name__ = uf.__name__

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _function(self._t, self._uf)(*args, **kwargs)

    def at(self, a: Any, indices: Any, values: Any = None) -> None:
        if not isinstance(a, ndarray):
            raise HostLeak(f"cupy.{self.__name__}.at scatters into a device array only")
        extra = () if values is None else (_unwrap(values),)
        self._uf.at(a._a, _unwrap_key(indices), *extra)


def _empty_pinned(t: Transfers) -> Any:
    """``cupyx.empty_pinned``: a host numpy array in (stand-in) page-locked memory."""

    def empty_pinned(shape: Any, dtype: Any = float, order: str = "C") -> np.ndarray:
        a = np.empty(shape, dtype=dtype, order=order)  # type: ignore[call-overload]
        t.pinned.append(a)
        return a

    return empty_pinned


def install(version: str = "14.1.0") -> Transfers:
    """Install the stand-in as ``cupy`` and ``cupyx.scipy.sparse``; returns its counters.

    Must run before anything imports cupy (a real cupy already imported is
    refused); where the stand-in is installed already, returns its counters.
    """
    if "cupy" in sys.modules:
        if not getattr(sys.modules["cupy"], "_standin", False):
            raise RuntimeError("a real cupy is imported already; install the stand-in first")
        return sys.modules["cupy"]._transfers  # installed already: its counters
    modules, t = make(version)
    sys.modules.update(modules)
    return t


def run_script(script: str, cwd: str) -> str:
    """Run the test file ``script`` as a program in a fresh interpreter (its ``main``
    installs the stand-in, before anything imports cupy, and must not leak into the
    test process); returns its output, and fails unless it exits 0 having printed
    ``STANDIN OK``."""
    import subprocess

    proc = subprocess.run([sys.executable, script], capture_output=True, text=True,
                          timeout=600, cwd=cwd)
    assert proc.returncode == 0, f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    assert "STANDIN OK" in proc.stdout, proc.stdout
    return proc.stdout


def make(version: str = "14.1.0") -> tuple[dict[str, types.ModuleType], Transfers]:
    """The stand-in's modules by import name, and its counters (nothing installed)."""
    t = Transfers()
    cp = types.ModuleType("cupy")
    cp._standin = True  # type: ignore[attr-defined]
    cp._transfers = t  # type: ignore[attr-defined]
    cp.__version__ = version  # type: ignore[attr-defined]
    cp.ndarray = ndarray  # type: ignore[attr-defined]
    for name in _FUNCTIONS:
        setattr(cp, name, _function(t, getattr(np, name)))
    for name in _UFUNCS:
        setattr(cp, name, _Ufunc(t, getattr(np, name)))
    for name in ("int8", "int32", "int64", "uint8", "uint64", "float64", "bool_", "dtype"):
        setattr(cp, name, getattr(np, name))

    def asarray(a: Any, dtype: Any = None) -> ndarray:
        if isinstance(a, ndarray):
            return a if dtype is None else a.astype(dtype, copy=False)
        if isinstance(a, np.ndarray):
            t.to_device += 1
            t.sizes.append(a.size)
            t.pinned_to_device += t.is_pinned(a)
        return ndarray(np.array(a, dtype=dtype), t)

    def asnumpy(a: Any) -> np.ndarray:
        if isinstance(a, ndarray):
            return a.get()
        return np.asarray(a)

    cp.asarray = asarray  # type: ignore[attr-defined]
    cp.array = asarray  # type: ignore[attr-defined]
    cp.asnumpy = asnumpy  # type: ignore[attr-defined]
    from _cuda_standin import RawModule  # the kernels' emulation (tests/ is on the path)

    cp.RawModule = type("RawModule", (RawModule,),  # type: ignore[attr-defined]
                        {"device_array": ndarray})
    cuda = types.ModuleType("cupy.cuda")
    runtime = types.ModuleType("cupy.cuda.runtime")
    runtime.getDeviceCount = lambda: 1  # type: ignore[attr-defined]
    cuda.runtime = runtime  # type: ignore[attr-defined]

    class Device:
        def __init__(self, i: int = 0) -> None:
            self.id = i

        def use(self) -> None:
            pass

    cuda.Device = Device  # type: ignore[attr-defined]
    cp.cuda = cuda  # type: ignore[attr-defined]

    sparse = types.ModuleType("cupyx.scipy.sparse")
    sparse.csr_matrix = _compressed("csr", t)  # type: ignore[attr-defined]
    sparse.csc_matrix = _compressed("csc", t)  # type: ignore[attr-defined]
    cupyx = types.ModuleType("cupyx")
    cscipy = types.ModuleType("cupyx.scipy")
    cscipy.sparse = sparse  # type: ignore[attr-defined]
    cupyx.scipy = cscipy  # type: ignore[attr-defined]
    cupyx.empty_pinned = _empty_pinned(t)  # type: ignore[attr-defined]
    return ({"cupy": cp, "cupy.cuda": cuda, "cupy.cuda.runtime": runtime, "cupyx": cupyx,
             "cupyx.scipy": cscipy, "cupyx.scipy.sparse": sparse}, t)


def _compressed(fmt: str, t: Transfers) -> type:
    """cupyx's ``csr_matrix`` / ``csc_matrix`` from ``(data, indices, indptr)`` device arrays.

    As strict as cupyx: device arrays only, 1-D, data and indices of one
    length, ``indptr`` one longer than the major dimension, data of a dtype
    cupyx supports (bool, float32/64, complex64/128); indices and indptr take
    one index dtype, int32 where the shape and the contents fit (as cupyx
    and scipy choose), so a caller must not rely on keeping int64. Only the
    attributes cupyx has: ``data``, ``indices``, ``indptr``, ``shape``,
    ``nnz``, ``dtype``, ``ndim``, ``format``, ``get()``.
    """

    class matrix:  # cupyx's names: csr_matrix, csc_matrix
        format = fmt

        def __init__(self, arg1: Any, shape: Any = None, dtype: Any = None,
                     copy: bool = False) -> None:
            if not (isinstance(arg1, tuple) and len(arg1) == 3):
                raise ValueError("the stand-in builds from (data, indices, indptr) only")
            data, indices, indptr = arg1
            if not all(isinstance(a, ndarray) for a in arg1):
                raise HostLeak(f"cupyx.scipy.sparse.{fmt}_matrix takes device arrays")
            if not (data.ndim == indices.ndim == indptr.ndim == 1):
                raise ValueError("data, indices, and indptr should be 1-D")
            if len(data) != len(indices):
                raise ValueError("indices and data should have the same size")
            dt = np.dtype(data.dtype if dtype is None else dtype)
            if dt.char not in "?fdFD":
                raise ValueError("Only bool, float32, float64, complex64 and complex128 "
                                 "are supported")
            if shape is None:
                raise ValueError("the stand-in needs the shape")
            major = shape[0] if fmt == "csr" else shape[1]
            if len(indptr) != major + 1:
                raise ValueError(f"index pointer size ({len(indptr)}) should be ({major + 1})")
            top = max([*shape, 0])
            if indptr._a.size:
                top = max(top, int(indptr._a.max()))
            idx = np.int32 if top <= np.iinfo(np.int32).max else np.int64
            self.data = data.astype(dt, copy=copy)
            self.indices = indices.astype(idx, copy=copy)
            self.indptr = indptr.astype(idx, copy=copy)
            self.shape = (int(shape[0]), int(shape[1]))

        nnz = property(lambda self: int(self.indptr._a[-1]))
        dtype = property(lambda self: self.data.dtype)
        ndim = 2

        def get(self) -> Any:
            """The scipy matrix on the host (a counted transfer)."""
            t.to_host += 1
            cls = scipy.sparse.csr_matrix if fmt == "csr" else scipy.sparse.csc_matrix
            return cls((self.data._a.copy(), self.indices._a.copy(), self.indptr._a.copy()),
                       shape=self.shape)

    matrix.__name__ = matrix.__qualname__ = f"{fmt}_matrix"
    return matrix
