"""Monoids and binary operators: the two halves of a semiring.

Each operator carries everything a backend needs, so that kernels never
special-case an operator by name:

* a scalar Python function that numba can compile (the compiled backend),
* the name of a numpy/cupy ufunc, or a vectorized callable (the array backends),
* dtype rules: the result dtype of a binary operator for given operand dtypes,
  and the identity and terminal value of a monoid for a given dtype.

Built-in monoids live in the :data:`monoid` namespace and built-in binary
operators in :data:`binary` (``monoid.min``, ``binary.second``). The positional
operators ``firsti``, ``firstj`` and ``secondi`` return an index instead of a
value; kernels add their ``row_offset`` / ``col_offset`` so that a block of a
distributed matrix yields global ids (int64).

Examples
--------
>>> import numpy as np
>>> from semirings.ops import binary, monoid
>>> int(monoid.min.identity_for(np.int64)) == np.iinfo(np.int64).max
True
>>> monoid.lor.terminal_for(np.bool_)
np.True_
>>> binary.second.out_dtype(np.float64, np.int32)
dtype('int32')
>>> binary.firsti.position
'i'
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import numpy as np

__all__ = [
    "ANY",
    "BinaryOp",
    "Monoid",
    "binary",
    "get_binaryop",
    "get_monoid",
    "monoid",
]

DTypeLike = Any
_Op = TypeVar("_Op", "Monoid", "BinaryOp")


class _AnyValue:
    """Sentinel terminal meaning "every value is terminal" (the ``any`` monoid)."""

    _instance: _AnyValue | None = None

    def __new__(cls) -> _AnyValue:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "ANY"

    def __reduce__(self) -> str:
        return "ANY"


#: Terminal value of a monoid for which any value ends a reduction (``any``).
ANY = _AnyValue()


def _bool_to_int64(dtype: np.dtype) -> np.dtype:
    # numpy's sum/prod convention: adding booleans counts them.
    return np.dtype(np.int64) if dtype == np.bool_ else dtype


def _lowest(dtype: np.dtype) -> Any:
    if dtype == np.bool_:
        return False
    if dtype.kind in "iu":
        return np.iinfo(dtype).min
    if dtype.kind == "f":
        return -np.inf
    return None


def _highest(dtype: np.dtype) -> Any:
    if dtype == np.bool_:
        return True
    if dtype.kind in "iu":
        return np.iinfo(dtype).max
    if dtype.kind == "f":
        return np.inf
    return None


class Monoid:
    """An associative binary operator with an identity.

    Parameters
    ----------
    name : str
        Short name, used in semiring names (``min`` in ``min_plus``).
    op : callable
        Scalar function ``op(a, b)``; must be compilable by ``numba.njit`` for
        the numba backend.
    identity : scalar or callable
        Identity value, or a function ``dtype -> value`` when it depends on
        the dtype (``min`` over int64 has identity ``iinfo(int64).max``).
    terminal : scalar, callable, ANY or None
        A value ``t`` with ``op(t, b) == t`` for every ``b``: once an
        accumulator holds it, further terms cannot change it, so a kernel may
        stop early. A function ``dtype -> value or None``, :data:`ANY` (every
        value is terminal) or None (no such value).
    ufunc : str, numpy.ufunc or None
        The vectorized form: the name of a numpy/cupy ufunc with ``at`` and
        ``reduceat`` (``"minimum"``), a ufunc object (numpy only), or None
        when the operator has no vectorized form.
    mpi_op : str or None
        Name of the matching ``mpi4py.MPI`` reduction (``"MIN"``), used to
        combine partial results across ranks; None if there is none.
    out_dtype : callable, optional
        ``dtype -> dtype`` of the accumulator for terms of a dtype; by default
        the terms' dtype.

    Examples
    --------
    >>> import numpy as np
    >>> from semirings.ops import Monoid
    >>> gcd = Monoid("gcd", lambda a, b: np.gcd(a, b), 0, terminal=1)
    >>> gcd.identity_for(np.int64), gcd.terminal_for(np.int64)
    (np.int64(0), np.int64(1))
    """

    def __init__(
        self,
        name: str,
        op: Callable[[Any, Any], Any],
        identity: Any,
        terminal: Any = None,
        *,
        ufunc: str | np.ufunc | None = None,
        mpi_op: str | None = None,
        out_dtype: Callable[[np.dtype], np.dtype] | None = None,
    ) -> None:
        if not callable(op):
            raise TypeError(f"monoid {name!r}: op must be callable, got {type(op).__name__}")
        self.name = str(name)
        self.op = op
        self.ufunc = ufunc
        self.mpi_op = mpi_op
        self._identity = identity
        self._terminal = terminal
        self._out_dtype = out_dtype
        self._njit: Any = None

    # -- dtype rules -----------------------------------------------------------
    def out_dtype(self, term_dtype: DTypeLike) -> np.dtype:
        """dtype of the reduction of terms of ``term_dtype``."""
        dt = np.dtype(term_dtype)
        return np.dtype(self._out_dtype(dt)) if self._out_dtype is not None else dt

    def identity_for(self, dtype: DTypeLike) -> Any:
        """The identity as a scalar of ``dtype``."""
        dt = np.dtype(dtype)
        value = self._identity(dt) if callable(self._identity) else self._identity
        return value if dt.kind == "O" else dt.type(value)

    @property
    def terminal_is_any(self) -> bool:
        """True when every value is terminal (the first term decides)."""
        return self._terminal is ANY

    def terminal_for(self, dtype: DTypeLike) -> Any:
        """The terminal value as a scalar of ``dtype``; :data:`ANY` or None if none."""
        if self._terminal is None or self._terminal is ANY:
            return self._terminal
        dt = np.dtype(dtype)
        value = self._terminal(dt) if callable(self._terminal) else self._terminal
        if value is None:
            return None
        return value if dt.kind == "O" else dt.type(value)

    # -- backend forms ---------------------------------------------------------
    @property
    def njit(self) -> Any:
        """``op`` compiled with ``numba.njit`` (cached on first use)."""
        if self._njit is None:
            self._njit = _njit_callable(self.op, f"add of monoid {self.name!r}")
        return self._njit

    def ufunc_for(self, xp: Any) -> Any:
        """The ufunc of array module ``xp``, or None when there is none."""
        if self.ufunc is None:
            return None
        if isinstance(self.ufunc, str):
            return getattr(xp, self.ufunc, None)
        return ufunc_twin(self.ufunc, xp, f"monoid {self.name!r}")

    def __repr__(self) -> str:
        return f"Monoid({self.name!r})"


class BinaryOp:
    """A binary operator ``mul(a, b)`` of a semiring.

    In ``y = B ⊕.⊗ x`` the operator is applied as ``mul(B[i, j], x[j])``.

    Parameters
    ----------
    name : str
        Short name, used in semiring names (``second`` in ``min_second``).
    func : callable or None
        Scalar function ``func(a, b)``, compilable by ``numba.njit`` for the
        numba backend; None for positional operators.
    ufunc : str, callable or None
        The vectorized form: a numpy/cupy ufunc name (``"multiply"``), or a
        callable ``f(xp, a, b) -> array`` written against the array module
        ``xp``, or None when there is none.
    out_dtype : callable, optional
        ``(a_dtype, b_dtype) -> dtype`` of the result; default
        ``numpy.result_type``.
    position : {None, "i", "j"}
        For positional operators: the result is the row index ``i`` or the
        column index ``j`` of ``B[i, j]`` (global: kernels add their offsets),
        as int64; operand values are ignored.
    uses : tuple of bool
        Whether the result depends on ``a`` and on ``b``; kernels skip loading
        an operand that is not used.
    arithmetic : bool
        Booleans count as integers (``True + True == 2``, as numba computes
        and as ``numpy.sum`` counts): the result dtype of two booleans is
        int64, and a ufunc is applied with ``dtype=`` that result dtype.

    Examples
    --------
    >>> import numpy as np
    >>> from semirings.ops import binary
    >>> binary.times.out_dtype(np.int32, np.float64)
    dtype('float64')
    >>> binary.pair.func(3.0, 4.0)
    1
    """

    def __init__(
        self,
        name: str,
        func: Callable[[Any, Any], Any] | None,
        ufunc: str | Callable[..., Any] | None = None,
        *,
        out_dtype: Callable[[np.dtype, np.dtype], np.dtype] | None = None,
        position: str | None = None,
        uses: tuple[bool, bool] = (True, True),
        arithmetic: bool = False,
    ) -> None:
        if position not in (None, "i", "j"):
            raise ValueError(f"binary op {name!r}: position must be None, 'i' or 'j'")
        if position is None and not callable(func):
            raise TypeError(f"binary op {name!r}: func must be callable, got {type(func).__name__}")
        self.name = str(name)
        self.func = func
        self.ufunc = ufunc
        self.position = position
        self.uses = (False, False) if position is not None else tuple(bool(u) for u in uses)
        self.arithmetic = bool(arithmetic)
        self._out_dtype = out_dtype
        self._njit: Any = None

    def out_dtype(self, a_dtype: DTypeLike, b_dtype: DTypeLike) -> np.dtype:
        """dtype of ``mul(a, b)`` for operands of the given dtypes."""
        if self.position is not None:
            return np.dtype(np.int64)
        a, b = np.dtype(a_dtype), np.dtype(b_dtype)
        if self._out_dtype is not None:
            return np.dtype(self._out_dtype(a, b))
        dt = np.result_type(a, b)
        return _bool_to_int64(dt) if self.arithmetic else dt

    @property
    def njit(self) -> Any:
        """``func`` compiled with ``numba.njit`` (cached on first use)."""
        if self._njit is None:
            self._njit = _njit_callable(self.func, f"multiply of binary op {self.name!r}")
        return self._njit

    @property
    def vectorizable(self) -> bool:
        """True when the array backends can apply this operator."""
        return self.position is not None or self.ufunc is not None

    def apply(self, xp: Any, a: Any, b: Any) -> Any:
        """Apply elementwise to equal-length arrays ``a`` and ``b`` of module ``xp``.

        An operand that :attr:`uses` marks unused may be a read-only broadcast
        placeholder. Positional operators are applied by the kernels (they
        need indices).
        """
        f = self.ufunc
        if isinstance(f, str):
            if self.arithmetic:
                return getattr(xp, f)(a, b, dtype=self.out_dtype(a.dtype, b.dtype))
            return getattr(xp, f)(a, b)
        if f is None:
            raise TypeError(f"binary op {self.name!r} has no vectorized form")
        return f(xp, a, b)

    def __repr__(self) -> str:
        return f"BinaryOp({self.name!r})"


def ufunc_twin(uf: np.ufunc, xp: Any, what: str) -> Any:
    """``uf`` itself for numpy, else ``xp``'s ufunc of the same name (cupy mirrors numpy's).

    Raises
    ------
    TypeError
        When ``xp`` has no such ufunc (a wrapped Python callable, say): None
        would read as the "any" monoid and pick an arbitrary term.
    """
    if xp is np:
        return uf
    twin = getattr(xp, uf.__name__, None)
    if not callable(twin):
        raise TypeError(f"{what}: {uf!r} runs on the numpy backend only "
                        f"({xp.__name__} has no ufunc of that name)")
    return twin


def _njit_callable(func: Any, what: str) -> Any:
    """``numba.njit(func)``, or ``func`` itself when it already is a dispatcher."""
    import numba

    if isinstance(func, numba.core.registry.CPUDispatcher):
        return func
    try:
        return numba.njit(func)
    except Exception as exc:  # numba raises many types; the message must name the callable
        raise TypeError(f"numba cannot compile the {what} ({func!r}): {exc}") from None


# -- scalar functions (numba-compilable, also valid plain Python) ----------------
def _plus(a: Any, b: Any) -> Any:
    return a + b


def _times(a: Any, b: Any) -> Any:
    return a * b


def _min(a: Any, b: Any) -> Any:
    return a if a <= b else b


def _max(a: Any, b: Any) -> Any:
    return a if a >= b else b


def _lor(a: Any, b: Any) -> bool:
    return bool(a) or bool(b)


def _land(a: Any, b: Any) -> bool:
    return bool(a) and bool(b)


def _first(a: Any, b: Any) -> Any:
    return a


def _second(a: Any, b: Any) -> Any:
    return b


def _pair(a: Any, b: Any) -> int:
    return 1


def _always_bool(a: np.dtype, b: np.dtype | None = None) -> np.dtype:
    return np.dtype(np.bool_)


def _pair_apply(xp: Any, a: Any, b: Any) -> Any:
    return xp.ones(a.shape[0], dtype=np.result_type(a.dtype, b.dtype))


class _Namespace:
    """Attribute access to named operators with a helpful error for a typo."""

    def __init__(self, kind: str, items: dict[str, Any]) -> None:
        self._kind = kind
        self._items = dict(items)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self._items[name]
        except KeyError:
            raise AttributeError(_unknown(self._kind, name, self._items)) from None

    def __getitem__(self, name: str) -> Any:
        try:
            return self._items[name]
        except KeyError:
            raise KeyError(_unknown(self._kind, name, self._items)) from None

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __dir__(self) -> list[str]:
        return sorted(self._items)

    def __repr__(self) -> str:
        return f"<{self._kind} namespace: {', '.join(self._items)}>"


def _unknown(kind: str, name: str, known: Any) -> str:
    close = difflib.get_close_matches(name, list(known), n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
    return f"unknown {kind} {name!r}{hint} Known: {', '.join(sorted(known))}"


#: Built-in monoids.
monoid = _Namespace(
    "monoid",
    {
        "plus": Monoid(
            "plus", _plus, 0, ufunc="add", mpi_op="SUM", out_dtype=_bool_to_int64
        ),
        "times": Monoid(
            "times",
            _times,
            1,
            # 0 absorbs integers; for floats 0 * inf is nan, so no terminal there.
            terminal=lambda dt: 0 if dt.kind in "iub" else None,
            ufunc="multiply",
            mpi_op="PROD",
            out_dtype=_bool_to_int64,
        ),
        "min": Monoid("min", _min, _highest, terminal=_lowest, ufunc="minimum", mpi_op="MIN"),
        "max": Monoid("max", _max, _lowest, terminal=_highest, ufunc="maximum", mpi_op="MAX"),
        "lor": Monoid(
            "lor", _lor, False, terminal=True, ufunc="logical_or", mpi_op="LOR",
            out_dtype=_always_bool,
        ),
        "land": Monoid(
            "land", _land, True, terminal=False, ufunc="logical_and", mpi_op="LAND",
            out_dtype=_always_bool,
        ),
        # Any term is a valid result; kernels keep the first one they see. Across
        # ranks MIN is a deterministic choice among valid results.
        "any": Monoid("any", _first, 0, terminal=ANY, ufunc=None, mpi_op="MIN"),
    },
)

#: Built-in binary operators.
binary = _Namespace(
    "binary op",
    {
        "times": BinaryOp("times", _times, "multiply", arithmetic=True),
        "plus": BinaryOp("plus", _plus, "add", arithmetic=True),
        "min": BinaryOp("min", _min, "minimum", arithmetic=True),
        "max": BinaryOp("max", _max, "maximum", arithmetic=True),
        "land": BinaryOp("land", _land, "logical_and", out_dtype=_always_bool),
        "lor": BinaryOp("lor", _lor, "logical_or", out_dtype=_always_bool),
        "first": BinaryOp(
            "first", _first, lambda xp, a, b: a, out_dtype=lambda a, b: a, uses=(True, False)
        ),
        "second": BinaryOp(
            "second", _second, lambda xp, a, b: b, out_dtype=lambda a, b: b, uses=(False, True)
        ),
        "pair": BinaryOp("pair", _pair, _pair_apply, uses=(False, False)),
        "firsti": BinaryOp("firsti", None, position="i"),
        "firstj": BinaryOp("firstj", None, position="j"),
        "secondi": BinaryOp("secondi", None, position="j"),
    },
)


def _lookup(name: str | _Op, cls: type[_Op], table: _Namespace) -> _Op:
    # The namespace's own kind names the operator in the message, so that the
    # ValueError here and the AttributeError of ``monoid.nme`` read alike.
    if isinstance(name, cls):
        return name
    if name not in table:
        raise ValueError(_unknown(table._kind, name, table))
    return table[name]


def get_monoid(name: str | Monoid) -> Monoid:
    """Look up a built-in monoid by name (a :class:`Monoid` passes through).

    Raises
    ------
    ValueError
        For an unknown name; the message lists close matches.
    """
    return _lookup(name, Monoid, monoid)


def get_binaryop(name: str | BinaryOp) -> BinaryOp:
    """Look up a built-in binary operator by name (a :class:`BinaryOp` passes through).

    Raises
    ------
    ValueError
        For an unknown name; the message lists close matches.
    """
    return _lookup(name, BinaryOp, binary)
