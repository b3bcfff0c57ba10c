"""Graph algorithms as sparse linear algebra over semirings.

The package computes ``y = B ⊕.⊗ x`` on local sparse blocks, with the
semiring chosen by name or defined by the user:

Operators
    :class:`Monoid` and :class:`BinaryOp` (built-ins in :data:`monoid` and
    :data:`binary`), combined into a :class:`Semiring`. Built-in semirings
    are attributes of :mod:`semirings.semiring` (``semiring.min_second``) and
    are returned by :func:`get`; :meth:`Semiring.from_callables` makes new
    ones from two scalar functions.
Data
    :class:`SparseVector` (sorted int64 indices, optional values) and the
    blocks of :mod:`semirings.blocks` (:class:`CSRBlock`, :class:`DCSCBlock`,
    built by :func:`block_from_edges` / :func:`block_from_scipy`).
Kernels
    :func:`spmsv` (sparse ``x``) and :func:`spmv` (dense ``x``), with an
    optional (complemented) mask, on the ``numpy``, ``numba`` or ``cupy``
    backend (:func:`get_backend`).

Examples
--------
>>> import numpy as np
>>> import semirings
>>> B = semirings.block_from_edges("csr", [1, 2, 2], [0, 0, 1], (3, 3))
>>> x = semirings.SparseVector([0], [0], size=3)
>>> y = semirings.spmsv(B, x, semirings.semiring.min_second, backend="numpy")
>>> y.indices.tolist(), y.values.tolist()
([1, 2], [0, 0])
>>> semirings.get("any_pair").mpi_op
'MIN'
"""

from semirings import semiring
from semirings.backend import BACKENDS, Backend, get_backend, gpu_available
from semirings.blocks import (
    FORMATS,
    Block,
    CSRBlock,
    DCSCBlock,
    block_from_edges,
    block_from_scipy,
    choose_index_dtype,
)
from semirings.kernels import spmsv, spmv
from semirings.ops import ANY, BinaryOp, Monoid, binary, monoid
from semirings.semiring import BUILTINS, Semiring, get
from semirings.vector import SparseVector

__all__ = [
    "ANY",
    "BACKENDS",
    "BUILTINS",
    "FORMATS",
    "Backend",
    "BinaryOp",
    "Block",
    "CSRBlock",
    "DCSCBlock",
    "Monoid",
    "Semiring",
    "SparseVector",
    "binary",
    "block_from_edges",
    "block_from_scipy",
    "choose_index_dtype",
    "get",
    "get_backend",
    "gpu_available",
    "monoid",
    "semiring",
    "spmsv",
    "spmv",
]
