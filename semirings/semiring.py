"""Semirings: an additive monoid paired with a multiplicative binary operator.

A kernel computes ``y_i = ⊕_j mul(B[i, j], x[j])`` over the stored entries of
``B`` and the present entries of ``x``. The semiring is a small stateless
policy object: the monoid (with identity, terminal value and matching MPI
reduction), the binary operator and their dtype rules. The numba backend
caches the kernels it compiles for a user-defined semiring on that object.

Built-in semirings are attributes of this module and of :func:`get`; any
``{monoid}_{binaryop}`` combination of the built-in operators
(:data:`semirings.ops.monoid`, :data:`semirings.ops.binary`) is also
available by name.

Examples
--------
>>> import numpy as np
>>> from semirings import semiring
>>> semiring.min_second.mpi_op
'MIN'
>>> semiring.get("max_times").name
'max_times'
>>> semiring.min_plus.output_dtype(np.int32, np.int64)
dtype('int64')
>>> semiring.get("min_secnd")
Traceback (most recent call last):
...
ValueError: unknown semiring 'min_secnd'; did you mean 'min_second', 'min_secondi', ...
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from semirings.ops import (
    BinaryOp,
    Monoid,
    _njit_callable,
    binary,
    get_binaryop,
    get_monoid,
    monoid,
    ufunc_twin,
)

__all__ = [
    "BUILTINS",
    "Semiring",
    "any_pair",
    "any_second",
    "any_secondi",
    "get",
    "lor_land",
    "lor_pair",
    "max_min",
    "max_plus",
    "min_first",
    "min_firstj",
    "min_plus",
    "min_second",
    "min_secondi",
    "plus_first",
    "plus_pair",
    "plus_second",
    "plus_times",
]


class Semiring:
    """A semiring ``(⊕, ⊗)``: monoid ``add`` and binary operator ``mul``.

    Parameters
    ----------
    add : Monoid or str
        The additive monoid (a built-in's name is accepted).
    mul : BinaryOp or str
        The multiplicative operator (a built-in's name is accepted).
    name : str, optional
        Defaults to ``"{add.name}_{mul.name}"``.

    Attributes
    ----------
    name : str
    add : Monoid
    mul : BinaryOp

    Examples
    --------
    >>> from semirings import Semiring
    >>> s = Semiring("max", "times")
    >>> s.name, s.mpi_op
    ('max_times', 'MAX')
    """

    def __init__(self, add: Monoid | str, mul: BinaryOp | str, name: str | None = None) -> None:
        self.add = get_monoid(add)
        self.mul = get_binaryop(mul)
        self.name = name if name is not None else f"{self.add.name}_{self.mul.name}"
        # Compiled numba kernels of a user-defined semiring, keyed by kernel kind:
        # a cache, it never changes a result.
        self._kernels: dict[Any, Any] = {}

    @property
    def mpi_op(self) -> str | None:
        """Name of the ``mpi4py.MPI`` reduction matching ``add`` (``"MIN"``), or None."""
        return self.add.mpi_op

    def term_dtype(self, a_dtype: Any, x_dtype: Any) -> np.dtype:
        """dtype of ``mul(B[i, j], x[j])`` (a pattern operand has dtype bool)."""
        return self.mul.out_dtype(a_dtype, x_dtype)

    def output_dtype(self, a_dtype: Any, x_dtype: Any) -> np.dtype:
        """dtype of the result for a block of ``a_dtype`` and a vector of ``x_dtype``.

        A pattern block or vector has dtype bool (every entry is True).
        """
        return self.add.out_dtype(self.mul.out_dtype(a_dtype, x_dtype))

    def identity_for(self, dtype: Any) -> Any:
        """The additive identity as a scalar of ``dtype``."""
        return self.add.identity_for(dtype)

    @property
    def vectorizable(self) -> bool:
        """True when the numpy/cupy backends can run this semiring."""
        return (self.add.ufunc is not None or self.add.terminal_is_any) and self.mul.vectorizable

    def check_vectorizable(self) -> None:
        """Raise a TypeError naming the operator that has no vectorized form.

        Raises
        ------
        TypeError
            When ``add`` or ``mul`` cannot run on the numpy/cupy backends.
        """
        for role, op, ok in (
            ("add", self.add, self.add.ufunc is not None or self.add.terminal_is_any),
            ("mul", self.mul, self.mul.vectorizable),
        ):
            if not ok:
                func = op.op if isinstance(op, Monoid) else op.func
                raise TypeError(
                    f"semiring {self.name!r}: its {role} operator {op.name!r} ({func!r}) has no "
                    "vectorized form for the numpy/cupy backends; pass a numpy ufunc, or "
                    "vectorize=True to Semiring.from_callables (wraps a Python callable with "
                    "numpy.frompyfunc, slow), or use backend='numba'"
                )

    @classmethod
    def from_callables(
        cls,
        *,
        add: Callable[[Any, Any], Any],
        identity: Any,
        mul: Callable[[Any, Any], Any],
        name: str,
        terminal: Any = None,
        dtype: Any = None,
        vectorize: bool = False,
        mpi_op: str | None = None,
    ) -> Semiring:
        """Define a semiring from two scalar functions.

        Parameters
        ----------
        add : callable or numpy.ufunc
            Associative ``add(a, b)`` with identity ``identity``.
        identity : scalar
            Identity of ``add``.
        mul : callable or numpy.ufunc
            ``mul(a, b)``, applied as ``mul(B[i, j], x[j])``.
        name : str
            Name of the semiring (also of its two operators).
        terminal : scalar, optional
            A value that absorbs ``add`` (lets kernels stop early).
        dtype : dtype, optional
            dtype of ``mul``'s result; by default it is inferred from numba's
            typing of ``mul`` for the operand dtypes (numpy's ``result_type``
            where numba cannot compile it).
        vectorize : bool
            Wrap plain Python callables with :func:`numpy.frompyfunc` so that
            the numpy backend can run them (one Python call per term: slow).
            Without it the numpy/cupy backends refuse such a semiring with a
            TypeError; the numba backend compiles the callables with
            ``numba.njit`` (no wrapping needed).
        mpi_op : str, optional
            Name of the matching ``mpi4py.MPI`` reduction, if any.

        Returns
        -------
        Semiring

        Examples
        --------
        >>> from semirings import Semiring
        >>> s = Semiring.from_callables(
        ...     add=lambda a, b: max(a, b), identity=0, mul=lambda a, b: a * b + 1, name="mtp1"
        ... )
        >>> s.name, s.vectorizable
        ('mtp1', False)
        """
        for role, f in (("add", add), ("mul", mul)):
            if not callable(f):
                raise TypeError(f"{role} must be callable, got {type(f).__name__}")
        add_ufunc = _as_ufunc(add, identity, vectorize)
        mul_ufunc = _as_ufunc(mul, None, vectorize)
        madd = Monoid(name, _scalar(add), identity, terminal, ufunc=add_ufunc, mpi_op=mpi_op)
        mul_vec = None if mul_ufunc is None else _ufunc_apply(mul_ufunc, name)
        rule = _InferredDtype(_scalar(mul), dtype)
        mmul = BinaryOp(name, _scalar(mul), mul_vec, out_dtype=rule)
        return cls(madd, mmul, name=name)

    def __repr__(self) -> str:
        return f"Semiring({self.name!r})"


def _scalar(f: Any) -> Any:
    """A scalar function numba can compile: a ufunc is called from a Python function."""
    if isinstance(f, np.ufunc):
        uf = f

        def scalar(a: Any, b: Any) -> Any:
            return uf(a, b)

        return scalar
    return f


def _as_ufunc(f: Any, identity: Any, vectorize: bool) -> Any:
    if isinstance(f, np.ufunc):
        return f
    if vectorize:
        if identity is None:
            return np.frompyfunc(f, 2, 1)
        return np.frompyfunc(f, 2, 1, identity=identity)
    return None


def _ufunc_apply(uf: np.ufunc, name: str) -> Callable[[Any, Any, Any], Any]:
    def apply(xp: Any, a: Any, b: Any) -> Any:
        return ufunc_twin(uf, xp, f"mul of semiring {name!r}")(a, b)

    return apply


class _InferredDtype:
    """Result-dtype rule of a user ``mul``: explicit, else numba's typing, else numpy's."""

    def __init__(self, func: Any, dtype: Any) -> None:
        self.func = func
        self.dtype = None if dtype is None else np.dtype(dtype)
        self._memo: dict[tuple[np.dtype, np.dtype], np.dtype] = {}

    def __call__(self, a: np.dtype, b: np.dtype) -> np.dtype:
        if self.dtype is not None:
            return self.dtype
        key = (a, b)
        if key not in self._memo:
            self._memo[key] = self._infer(a, b)
        return self._memo[key]

    def _infer(self, a: np.dtype, b: np.dtype) -> np.dtype:
        try:
            import numba
            from numba.np.numpy_support import as_dtype

            disp = _njit_callable(self.func, "multiply")
            sig = (numba.from_dtype(a), numba.from_dtype(b))
            disp.compile(sig)
            return np.dtype(as_dtype(disp.overloads[sig].signature.return_type))
        except Exception:  # not compilable: the numba backend reports that itself
            return np.result_type(a, b)


# -- built-ins and namespace -------------------------------------------------------
BUILTINS: tuple[str, ...] = (
    "plus_times",
    "min_plus",
    "max_plus",
    "lor_land",
    "lor_pair",
    "min_second",
    "min_secondi",
    "min_firstj",
    "any_pair",
    "any_second",
    "any_secondi",
    "plus_pair",
    "max_min",
    "plus_first",
    "plus_second",
    "min_first",
)

_ALL_NAMES = tuple(f"{m}_{b}" for m in monoid for b in binary)


@functools.cache
def _compose(name: str) -> Semiring:
    # Monoid names hold no underscore, so the first one splits the name.
    add, _, mul = name.partition("_")
    return Semiring(monoid[add], binary[mul])


def get(name: str | Semiring) -> Semiring:
    """Return the semiring called ``name`` (a :class:`Semiring` passes through).

    Parameters
    ----------
    name : str or Semiring
        ``"{monoid}_{binaryop}"`` of built-in operators, e.g. ``"min_second"``.

    Returns
    -------
    Semiring
        The same object for the same name.

    Raises
    ------
    ValueError
        For an unknown name; the message lists close matches.
    TypeError
        For an argument that is neither a string nor a Semiring.

    Examples
    --------
    >>> from semirings import semiring
    >>> semiring.get("min_second") is semiring.min_second
    True
    """
    if isinstance(name, Semiring):
        return name
    if not isinstance(name, str):
        raise TypeError(f"semiring must be a Semiring or a name, got {type(name).__name__}")
    if name not in _ALL_NAMES:
        raise ValueError(_unknown(name))
    return _compose(name)


def _unknown(name: str) -> str:
    close = difflib.get_close_matches(name, _ALL_NAMES, n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
    return (
        f"unknown semiring {name!r}{hint} A name is '{{monoid}}_{{binaryop}}' with monoid in "
        f"{', '.join(monoid)} and binaryop in {', '.join(binary)}"
    )


def __getattr__(name: str) -> Semiring:
    # PEP 562: every built-in combination is reachable as an attribute.
    if name in _ALL_NAMES:
        return _compose(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}: {_unknown(name)}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_ALL_NAMES})


plus_times = _compose("plus_times")
min_plus = _compose("min_plus")
max_plus = _compose("max_plus")
lor_land = _compose("lor_land")
lor_pair = _compose("lor_pair")
min_second = _compose("min_second")
min_secondi = _compose("min_secondi")
min_firstj = _compose("min_firstj")
any_pair = _compose("any_pair")
any_second = _compose("any_second")
any_secondi = _compose("any_secondi")
plus_pair = _compose("plus_pair")
max_min = _compose("max_min")
plus_first = _compose("plus_first")
plus_second = _compose("plus_second")
min_first = _compose("min_first")
