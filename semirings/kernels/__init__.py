"""Sparse matrix-vector products over a semiring: the one dispatch point.

``y = B ⊕.⊗ x`` with ``y_i = ⊕_{j : B[i, j] stored, x_j present} mul(B[i, j], x_j)``;
a pattern block has ``B[i, j] = True`` and a pattern vector ``x_j = True``.
Only rows that receive at least one term (and pass the mask) are present in
the result, whose indices are sorted.

Backends: ``numpy`` and ``cupy`` run :mod:`semirings.kernels.vectorized`
(whole-array operations), ``numba`` runs
:mod:`semirings.kernels.numba_kernels` (compiled loops). The default is the
block's own backend.

Examples
--------
>>> import numpy as np
>>> from semirings import SparseVector, block_from_edges, semiring, spmsv
>>> # B[v, u] = 1 for the edges u -> v: 0 -> 1, 0 -> 2, 1 -> 2
>>> B = block_from_edges("csr", [1, 2, 2], [0, 0, 1], (3, 3))
>>> frontier = SparseVector([0, 1], [0, 1], size=3)   # values: the vertices' own ids
>>> y = spmsv(B, frontier, semiring.min_second)
>>> y.indices.tolist(), y.values.tolist()              # parents of 1 and 2
([1, 2], [0, 0])
>>> visited = np.array([True, True, False])
>>> spmsv(B, frontier, "min_second", mask=visited, complement=True).indices.tolist()
[2]
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from semirings.backend import Backend, get_backend
from semirings.blocks import Block
from semirings.semiring import Semiring, get
from semirings.vector import SparseVector, array_module

__all__ = ["spmsv", "spmv"]

_METHODS = ("auto", "push", "pull")

#: Stored entries up to which a numba block's product over an order-free sum
#: (min, max, or, and) runs the vectorized kernels while the numba kernel is not
#: compiled: the same result in milliseconds instead of a first call that compiles
#: for seconds (:func:`semirings._build.kernel_ready`).
SMALL_ENTRIES = 1 << 16
_ORDER_FREE = frozenset({"minimum", "maximum", "logical_or", "logical_and"})


def _impl_for(be: Backend, block: Block, semiring: Semiring) -> Any:
    """The kernels module for a product: ``be``'s, or numpy's on a small first call."""
    if (be.name == "numba" and block.ind.shape[0] <= SMALL_ENTRIES
            and semiring.add.ufunc in _ORDER_FREE and semiring.vectorizable):
        from semirings._build import kernel_ready
        from semirings.kernels import numba_kernels

        if not kernel_ready(numba_kernels._spmsv_kernel):
            return _impl("numpy")
    return _impl(be.name)


def _impl(name: str) -> Any:
    # Imported on first use: the numba module compiles (or loads) on import.
    if name == "numba":
        from semirings.kernels import numba_kernels

        return numba_kernels
    from semirings.kernels import vectorized

    return vectorized


def _resolve(block: Block, backend: Backend | str | None) -> Backend:
    be = block.backend if backend is None else get_backend(backend)
    # numpy and numba share host memory; cupy needs device arrays.
    if be.is_gpu != block.backend.is_gpu:
        raise TypeError(
            f"block lives on backend {block.backend.name!r} but backend {be.name!r} was "
            f"requested; move it with block.to_backend({be.name!r})"
        )
    return be


def _check_common(block: Any, semiring: Any, backend: Any) -> tuple[Semiring, Backend]:
    if not isinstance(block, Block):
        raise TypeError(f"block must be a CSRBlock or DCSCBlock, got {type(block).__name__}")
    if isinstance(semiring, str):
        semiring = get(semiring)
    elif not isinstance(semiring, Semiring):
        raise TypeError(
            f"semiring must be a Semiring or a semiring name, got {type(semiring).__name__}"
        )
    return semiring, _resolve(block, backend)


def _check_offset(value: Any, name: str) -> int:
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}") from None
    if value < 0:
        raise ValueError(f"{name} must be non-negative, got {value}")
    return value


def _check_array(a: Any, name: str, length: int, xp: Any, dtype: Any = None) -> Any:
    if array_module(a) is not xp:
        raise TypeError(f"{name} must be a {xp.__name__} array on the kernel's backend")
    a = xp.asarray(a)
    if a.ndim != 1 or a.shape[0] != length:
        raise ValueError(f"{name} must be 1-D of length {length}, got shape {a.shape}")
    if dtype is not None and a.dtype != dtype:
        raise TypeError(f"{name} must have dtype {np.dtype(dtype)}, got {a.dtype}")
    return a


def _mask(mask: Any, complement: bool, nrows: int, xp: Any, check: bool) -> tuple[Any, int]:
    """Dense bool mask and mode: 0 none, 1 keep rows in it, 2 keep rows not in it."""
    if mask is None:
        if check and complement:
            raise ValueError("complement=True needs a mask")
        return None, 0
    if isinstance(mask, SparseVector):
        if check:
            if mask.size != nrows:
                raise ValueError(f"mask has size {mask.size}, block has {nrows} rows")
            if mask.xp is not xp:
                raise TypeError("mask must live on the kernel's backend")
        mask = mask.to_mask()
    elif check:
        mask = _check_array(mask, "mask", nrows, xp, np.bool_)
    return mask, (2 if complement else 1)


def spmsv(
    block: Block,
    x: SparseVector,
    semiring: Semiring | str,
    *,
    mask: Any = None,
    complement: bool = False,
    backend: Backend | str | None = None,
    row_offset: int = 0,
    col_offset: int = 0,
    check: bool = True,
) -> SparseVector:
    """Sparse matrix times sparse vector: ``y = B ⊕.⊗ x``.

    Parameters
    ----------
    block : Block
        ``B`` of shape ``(nrows, ncols)`` (csr or dcsc).
    x : SparseVector
        Of size ``ncols``; a pattern vector has ``x_j = True``.
    semiring : Semiring or str
        E.g. ``semirings.semiring.min_second`` or ``"min_second"``.
    mask : array of bool or SparseVector, optional
        Rows that may appear in ``y``: a dense bool array of length ``nrows``
        or the structure of a sparse vector of size ``nrows``.
    complement : bool
        Keep the rows *not* in ``mask`` instead (BFS: the unvisited ones).
    backend : Backend or str, optional
        ``"numpy"``, ``"numba"`` or ``"cupy"``; default the block's backend.
    row_offset, col_offset : int
        Global id of the block's first row / column: positional operators
        (``firsti``, ``firstj``, ``secondi``) return global ids.
    check : bool
        Validate the arguments (default). Internal per-level calls that pass
        already-consistent objects use ``check=False`` to skip it.

    Returns
    -------
    SparseVector
        Size ``nrows``, sorted int64 indices, values of
        ``semiring.output_dtype(block dtype, x dtype)``.

    Raises
    ------
    TypeError
        Wrong type of ``block``, ``x``, ``semiring`` or ``mask``; arrays on
        another backend; a semiring the backend cannot run.
    ValueError
        ``x`` or ``mask`` of the wrong size; an unknown semiring name or
        backend; negative offsets.
    RuntimeError
        ``backend="cupy"`` without a usable GPU.
    """
    if check:
        semiring, be = _check_common(block, semiring, backend)
        if not isinstance(x, SparseVector):
            raise TypeError(f"x must be a SparseVector, got {type(x).__name__}")
        if x.size != block.shape[1]:
            raise ValueError(f"x has size {x.size}, block has {block.shape[1]} columns")
        if x.xp is not be.xp:
            raise TypeError(f"x must live on backend {be.name!r} (see SparseVector.to_backend)")
        row_offset = _check_offset(row_offset, "row_offset")
        col_offset = _check_offset(col_offset, "col_offset")
    else:
        be = block.backend if backend is None else get_backend(backend)
        if isinstance(semiring, str):
            semiring = get(semiring)
    mask, mode = _mask(mask, complement, block.shape[0], be.xp, check)
    return _impl_for(be, block, semiring).spmsv(block, x, semiring, mask, mode, row_offset,
                                                col_offset)


def spmv(
    block: Block,
    x: Any,
    semiring: Semiring | str,
    *,
    mask: Any = None,
    complement: bool = False,
    present: Any = None,
    backend: Backend | str | None = None,
    row_offset: int = 0,
    col_offset: int = 0,
    method: str = "auto",
    check: bool = True,
) -> SparseVector:
    """Sparse matrix times dense vector: ``y = B ⊕.⊗ x``.

    Parameters
    ----------
    block : Block
        ``B`` of shape ``(nrows, ncols)``.
    x : array
        Dense, length ``ncols``, on the kernel's backend.
    semiring : Semiring or str
        The semiring (or its name).
    mask, complement
        As in :func:`spmsv`.
    present : array of bool, optional
        Which entries of ``x`` exist (a bitmap vector, e.g. the BFS frontier);
        default all of them.
    backend, row_offset, col_offset, check
        As in :func:`spmsv`.
    method : {"auto", "push", "pull"}
        numba backend only. ``push`` scatters the columns of ``B`` into an
        accumulator; ``pull`` walks the rows of ``B`` (the columns of the
        cached :meth:`Block.transpose`, built on first use) in parallel and
        stops a row at the monoid's terminal value: with a complemented
        visited mask and a bitmap frontier in ``present`` it is the
        bottom-up BFS step. ``auto`` is ``pull`` when a mask is given or the
        transpose is already cached, else ``push``.

    Returns
    -------
    SparseVector
        As in :func:`spmsv`.

    Raises
    ------
    TypeError, ValueError, RuntimeError
        As in :func:`spmsv`; also for ``x`` or ``present`` of the wrong
        length or dtype, and an unknown ``method``.

    Examples
    --------
    >>> import numpy as np
    >>> from semirings import block_from_edges, spmv
    >>> B = block_from_edges("dcsc", [0, 1, 1], [0, 0, 2], (2, 3), values=[1.0, 2.0, 3.0])
    >>> y = spmv(B, np.array([1.0, 1.0, 10.0]), "plus_times")
    >>> y.values.tolist()
    [1.0, 32.0]
    """
    if check:
        semiring, be = _check_common(block, semiring, backend)
        if isinstance(x, SparseVector):
            raise TypeError("x must be a dense array for spmv (use spmsv for a SparseVector)")
        x = _check_array(x, "x", block.shape[1], be.xp)
        if present is not None:
            present = _check_array(present, "present", block.shape[1], be.xp, np.bool_)
        row_offset = _check_offset(row_offset, "row_offset")
        col_offset = _check_offset(col_offset, "col_offset")
        if method not in _METHODS:
            raise ValueError(f"method must be one of {', '.join(_METHODS)}; got {method!r}")
    else:
        be = block.backend if backend is None else get_backend(backend)
        if isinstance(semiring, str):
            semiring = get(semiring)
    mask, mode = _mask(mask, complement, block.shape[0], be.xp, check)
    if method == "auto":
        # Pull needs the transpose: worth building for the masked (bottom-up) shape,
        # and free once cached (then it is the faster method on many threads).
        method = "pull" if (mode or block.has_transpose) else "push"
    return _impl(be.name).spmv(
        block, x, present, semiring, mask, mode, row_offset, col_offset, method
    )
