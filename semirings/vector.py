"""Sparse vectors: sorted int64 indices, optional values, a logical size.

A :class:`SparseVector` is the frontier of a top-down BFS step and the result
of every kernel. Its arrays live on one backend (numpy or cupy arrays); the
class only validates and converts, it holds no backend state.

Examples
--------
>>> import numpy as np
>>> from semirings import SparseVector
>>> v = SparseVector([1, 4], [10.0, 40.0], size=6)
>>> v.nnz, v.to_dense().tolist()
(2, [0.0, 10.0, 0.0, 0.0, 40.0, 0.0])
>>> SparseVector.from_dense(np.array([0, 3, 0, 5])).indices.tolist()
[1, 3]
>>> SparseVector([3, 1], None, size=6)
Traceback (most recent call last):
...
ValueError: indices must be strictly increasing (sorted, no duplicates); indices[1] = 1 follows 3
"""

from __future__ import annotations

from typing import Any

import numpy as np

from semirings.backend import Backend, get_backend

__all__ = ["SparseVector", "array_module"]


def array_module(a: Any) -> Any:
    """numpy, or cupy for a cupy array (without importing cupy otherwise)."""
    if isinstance(a, np.ndarray):
        return np
    mod = type(a).__module__
    if mod.startswith("cupy"):
        import cupy

        return cupy
    return np


class SparseVector:
    """A sparse vector of logical length ``size``.

    Parameters
    ----------
    indices : array_like of int
        Positions of the present entries, strictly increasing, in
        ``[0, size)``; stored as int64.
    values : array_like or None
        One value per index (any dtype), or None for a pattern vector
        (structure only: every present entry is True).
    size : int
        Logical length.
    check : bool
        Validate and convert the inputs (default). ``check=False`` stores the
        arrays as given: for kernels that already produce int64, sorted,
        in-range indices on the right backend.

    Attributes
    ----------
    indices : array
        int64, strictly increasing.
    values : array or None
    size : int

    Raises
    ------
    TypeError
        For non-integer ``indices`` or a non-integer ``size``.
    ValueError
        For unsorted or duplicate ``indices``, ids out of ``[0, size)``,
        a negative ``size``, arrays that are not 1-D, or ``values`` whose
        length differs from ``indices``.
    """

    __slots__ = ("indices", "size", "values")

    def __init__(self, indices: Any, values: Any, size: int, *, check: bool = True) -> None:
        if not check:
            self.indices = indices
            self.values = values
            self.size = size
            return
        if isinstance(size, bool) or not isinstance(size, int | np.integer):
            raise TypeError(f"size must be an integer, got {type(size).__name__}")
        size = int(size)
        if size < 0:
            raise ValueError(f"size must be non-negative, got {size}")
        xp = array_module(indices)
        idx = xp.asarray(indices)
        if idx.ndim != 1:
            raise ValueError(f"indices must be 1-D, got shape {idx.shape}")
        if idx.size and idx.dtype.kind not in "iu":
            raise TypeError(f"indices must be an integer array, got dtype {idx.dtype}")
        if idx.size and idx.dtype.kind == "u" and int(idx.max()) > np.iinfo(np.int64).max:
            raise ValueError("indices holds an id beyond int64")
        idx = idx.astype(np.int64, copy=False)
        if idx.size:
            lo, hi = int(idx[0]), int(idx[-1])
            if idx.size > 1:
                bad = xp.flatnonzero(idx[1:] <= idx[:-1])
                if bad.size:
                    k = int(bad[0]) + 1
                    raise ValueError(
                        "indices must be strictly increasing (sorted, no duplicates); "
                        f"indices[{k}] = {int(idx[k])} follows {int(idx[k - 1])}"
                    )
            if lo < 0:
                raise ValueError(f"indices holds a negative index ({lo})")
            if hi >= size:
                raise ValueError(f"indices holds index {hi}, out of range for size {size}")
        if values is not None:
            values = xp.asarray(values)
            if values.ndim != 1 or values.shape[0] != idx.shape[0]:
                raise ValueError(
                    f"values must be 1-D with one entry per index ({idx.shape[0]}), "
                    f"got shape {values.shape}"
                )
        self.indices = idx
        self.values = values
        self.size = size

    # -- constructors ------------------------------------------------------------
    @classmethod
    def from_dense(cls, dense: Any, fill: Any = 0) -> SparseVector:
        """Keep the entries of a dense array that differ from ``fill``.

        Parameters
        ----------
        dense : array_like
            1-D numpy or cupy array.
        fill : scalar or None
            The value meaning "absent"; None keeps every entry.

        Returns
        -------
        SparseVector
            On the backend of ``dense``.
        """
        xp = array_module(dense)
        dense = xp.asarray(dense)
        if dense.ndim != 1:
            raise ValueError(f"dense must be 1-D, got shape {dense.shape}")
        if fill is None:
            idx = xp.arange(dense.shape[0], dtype=np.int64)
        else:
            idx = xp.flatnonzero(dense != fill).astype(np.int64, copy=False)
        return cls(idx, dense[idx], int(dense.shape[0]), check=False)

    @classmethod
    def from_mask(cls, mask: Any) -> SparseVector:
        """A pattern vector of the True entries of a dense boolean array."""
        xp = array_module(mask)
        mask = xp.asarray(mask)
        if mask.ndim != 1 or mask.dtype != np.bool_:
            raise TypeError(f"mask must be a 1-D bool array, got {mask.dtype} {mask.shape}")
        idx = xp.flatnonzero(mask).astype(np.int64, copy=False)
        return cls(idx, None, int(mask.shape[0]), check=False)

    # -- properties --------------------------------------------------------------
    @property
    def nnz(self) -> int:
        """Number of present entries."""
        return int(self.indices.shape[0])

    @property
    def is_pattern(self) -> bool:
        """True when the vector holds no values (structure only)."""
        return self.values is None

    @property
    def dtype(self) -> np.dtype:
        """dtype of the values; bool for a pattern vector."""
        return np.dtype(np.bool_) if self.values is None else np.dtype(self.values.dtype)

    @property
    def xp(self) -> Any:
        """The array module (numpy or cupy) of this vector's arrays."""
        return array_module(self.indices)

    # -- conversions -------------------------------------------------------------
    def to_dense(self, fill: Any = 0, dtype: Any = None) -> Any:
        """Dense array of length ``size`` with ``fill`` where no entry is present.

        A pattern vector becomes a bool array (True where present) unless
        ``dtype`` says otherwise.
        """
        xp = self.xp
        dt = np.dtype(dtype) if dtype is not None else self.dtype
        if self.values is None and dtype is None:
            fill = False
        out = xp.full(self.size, fill, dtype=dt)
        out[self.indices] = True if self.values is None else self.values
        return out

    def to_mask(self) -> Any:
        """Dense bool array: True where an entry is present."""
        mask = self.xp.zeros(self.size, dtype=np.bool_)
        mask[self.indices] = True
        return mask

    def to_backend(self, backend: Backend | str) -> SparseVector:
        """Copy of this vector with its arrays on another backend."""
        xp = get_backend(backend).xp
        vals = None if self.values is None else xp.asarray(_to_host(self.values))
        return SparseVector(xp.asarray(_to_host(self.indices)), vals, self.size, check=False)

    def __repr__(self) -> str:
        kind = "pattern" if self.values is None else str(self.dtype)
        return f"SparseVector(size={self.size}, nnz={self.nnz}, {kind})"


def _to_host(a: Any) -> np.ndarray:
    return a if isinstance(a, np.ndarray) else a.get()
