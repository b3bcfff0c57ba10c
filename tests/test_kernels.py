"""Property tests of spmv/spmsv against a plain dense reference.

The reference is written here, independently of :mod:`semirings.ops`: Python
loops over the rows and columns of the matrix, whose cells hold the *list* of
stored values (an absent cell is an empty list), so duplicate entries
(separate terms) and explicit zeros (stored entries) are handled exactly; the
cells are kept in a dict so that hypersparse shapes stay cheap. Values are
small integers or multiples of 1/2, so every sum and product is exact in
float64 and results compare with ``==``.

Each drawn problem is checked in both formats, with no mask, a mask and a
complemented mask, and (numba) with the push and the pull spmv.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import semirings
from semirings import (
    BUILTINS,
    Semiring,
    SparseVector,
    block_from_edges,
    block_from_scipy,
    get_backend,
    gpu_available,
    spmsv,
    spmv,
)

BACKENDS = ["numpy", "numba", pytest.param("cupy", marks=pytest.mark.gpu)]
FORMATS = ("csr", "dcsc")
MASK_MODES = ("none", "mask", "complement")

# (block values, vector values): bool doubles as "pattern" below.
KINDS = [
    ("pattern", "pattern"),
    ("pattern", "int64"),
    ("pattern", "float64"),
    ("int64", "int64"),
    ("float64", "float64"),
    ("bool", "bool"),
]

SETTINGS = settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,
)

# -- the reference --------------------------------------------------------------------
class Cells:
    """A matrix whose cell ``(i, j)`` is the list of its stored values (pattern: True)."""

    def __init__(self, nrows: int, ncols: int) -> None:
        self.nrows, self.ncols = nrows, ncols
        self._cells: dict[tuple[int, int], list[Any]] = {}

    def store(self, i: int, j: int, value: Any) -> None:
        self._cells.setdefault((i, j), []).append(value)

    def __getitem__(self, ij: tuple[int, int]) -> list[Any]:
        return self._cells.get(ij, [])

    def columns_of_row(self, i: int) -> list[int]:
        return sorted(j for (r, j) in self._cells if r == i)


MUL = {
    "times": lambda a, b, i, j: a * b,
    "plus": lambda a, b, i, j: a + b,
    "min": lambda a, b, i, j: min(a, b),
    "max": lambda a, b, i, j: max(a, b),
    "land": lambda a, b, i, j: bool(a) and bool(b),
    "lor": lambda a, b, i, j: bool(a) or bool(b),
    "first": lambda a, b, i, j: a,
    "second": lambda a, b, i, j: b,
    "pair": lambda a, b, i, j: 1,
    "firsti": lambda a, b, i, j: i,
    "firstj": lambda a, b, i, j: j,
    "secondi": lambda a, b, i, j: j,
}
ADD = {
    "plus": sum,
    "times": math.prod,
    "min": min,
    "max": max,
    "lor": lambda t: any(bool(v) for v in t),
    "land": lambda t: all(bool(v) for v in t),
    "any": None,  # any term is a valid result: checked by membership
}


def reference(
    cells: Cells,
    x: list[Any | None],
    add: str,
    mul: str,
    keep_row: list[bool],
    row_offset: int = 0,
    col_offset: int = 0,
    add_fn: Any = None,
    mul_fn: Any = None,
) -> dict[int, list[Any]]:
    """Row -> terms, for rows with at least one term; ``x[j] is None`` = absent."""
    f = mul_fn or MUL[mul]
    out: dict[int, list[Any]] = {}
    for i in range(cells.nrows):
        if not keep_row[i]:
            continue
        terms = [
            f(a, x[j], i + row_offset, j + col_offset)
            for j in cells.columns_of_row(i)
            if x[j] is not None
            for a in cells[i, j]
        ]
        if terms:
            out[i] = terms
    return out


def check(y: SparseVector, expected: dict[int, list[Any]], add: str, out_dtype: np.dtype,
          nrows: int, add_fn: Any = None) -> None:
    xp = y.xp
    idx = np.asarray(y.indices.get() if xp is not np else y.indices)
    vals = np.asarray(y.values.get() if xp is not np else y.values)
    assert y.size == nrows
    assert idx.dtype == np.int64
    assert vals.dtype == out_dtype, (vals.dtype, out_dtype)
    assert idx.tolist() == sorted(expected), (idx.tolist(), sorted(expected))
    for i, v in zip(idx.tolist(), vals.tolist(), strict=True):
        terms = [np.array(t).astype(out_dtype).item() for t in expected[i]]
        if add_fn is not None:
            want = add_fn(expected[i])
        elif ADD[add] is None:
            assert v in terms, (i, v, terms)
            continue
        else:
            want = ADD[add](expected[i])
        assert v == np.array(want).astype(out_dtype).item(), (i, v, want, expected[i])


# -- problem generation --------------------------------------------------------------------
def _values(draw: Any, kind: str, n: int) -> list[Any] | None:
    if kind == "pattern":
        return None
    if kind == "bool":
        return draw(st.lists(st.booleans(), min_size=n, max_size=n))
    if kind == "int64":
        return draw(st.lists(st.integers(-3, 3), min_size=n, max_size=n))
    return draw(st.lists(st.integers(-8, 8).map(lambda k: k / 2), min_size=n, max_size=n))


_DTYPE = {"pattern": np.bool_, "bool": np.bool_, "int64": np.int64, "float64": np.float64}


@st.composite
def problems(draw: Any) -> dict[str, Any]:
    shape_kind = draw(st.sampled_from(["small", "small", "small", "empty", "hypersparse"]))
    if shape_kind == "empty":
        nrows, ncols = draw(st.sampled_from([(0, 0), (1, 1), (0, 3), (3, 0), (1, 0)]))
    elif shape_kind == "hypersparse":
        nrows, ncols = draw(st.integers(1, 600)), draw(st.integers(1100, 3000))
    else:
        nrows, ncols = draw(st.integers(1, 9)), draw(st.integers(1, 9))
    nnz = draw(st.integers(0, 25)) if nrows and ncols else 0
    rows = draw(st.lists(st.integers(0, nrows - 1), min_size=nnz, max_size=nnz)) if nnz else []
    cols = draw(st.lists(st.integers(0, ncols - 1), min_size=nnz, max_size=nnz)) if nnz else []
    if nnz and draw(st.booleans()):  # force duplicate entries
        rows, cols = rows + rows[:3], cols + cols[:3]
    a_kind, x_kind = draw(st.sampled_from(KINDS))
    a_vals = _values(draw, a_kind, len(rows))
    # x: a sparse subset of the columns, biased towards the stored ones.
    col_pool = st.integers(0, ncols - 1) if ncols else st.nothing()
    if cols:
        col_pool = st.one_of(st.sampled_from(cols), col_pool)
    x_idx = sorted(draw(st.sets(col_pool, max_size=min(ncols, 12)))) if ncols else []
    x_vals = _values(draw, x_kind, len(x_idx))
    dense_x = _values(draw, "int64" if x_kind == "pattern" else x_kind, ncols)
    present = draw(st.one_of(st.none(), st.lists(st.booleans(), min_size=ncols, max_size=ncols)))
    mask = draw(st.lists(st.booleans(), min_size=nrows, max_size=nrows))
    offsets = draw(st.sampled_from([(0, 0), (7, 3), (2**33, 2**35)]))
    build = draw(st.sampled_from(["edges", "scipy"]))
    return dict(
        nrows=nrows, ncols=ncols, rows=rows, cols=cols, a_kind=a_kind, a_vals=a_vals,
        x_kind=x_kind, x_idx=x_idx, x_vals=x_vals, dense_x=dense_x, present=present,
        mask=mask, offsets=offsets, build=build,
    )


def cells_of(p: dict[str, Any]) -> Cells:
    cells = Cells(p["nrows"], p["ncols"])
    vals = p["a_vals"] if p["a_vals"] is not None else [True] * len(p["rows"])
    for i, j, v in zip(p["rows"], p["cols"], vals, strict=True):
        cells.store(i, j, v)
    return cells


def make_block(p: dict[str, Any], fmt: str, backend: str) -> Any:
    shape = (p["nrows"], p["ncols"])
    values = None if p["a_vals"] is None else np.array(p["a_vals"], dtype=_DTYPE[p["a_kind"]])
    if p["build"] == "edges":
        return block_from_edges(
            fmt, np.array(p["rows"], np.int64), np.array(p["cols"], np.int64), shape,
            values=values, dedup=False, backend=backend,
        )
    # CSC arrays by hand: scipy's (data, (i, j)) constructor would sum duplicates.
    r, c = np.array(p["rows"], np.int64), np.array(p["cols"], np.int64)
    order = np.lexsort((r, c))
    indptr = np.zeros(p["ncols"] + 1, np.int64)
    np.cumsum(np.bincount(c, minlength=p["ncols"]), out=indptr[1:])
    data = np.ones(r.size) if values is None else values[order]
    m = sp.csc_matrix((data, r[order], indptr), shape=shape)
    return block_from_scipy(fmt, m, pattern=values is None, backend=backend)


def masks(p: dict[str, Any], xp: Any) -> list[tuple[str, Any, bool, list[bool]]]:
    """(label, mask argument, complement, rows kept) for the three mask modes."""
    m = np.array(p["mask"], dtype=bool)
    keep_all = [True] * p["nrows"]
    dense = xp.asarray(m)
    sparse_mask = SparseVector(xp.asarray(np.flatnonzero(m)), None, p["nrows"])
    return [
        ("none", None, False, keep_all),
        ("mask", dense, False, m.tolist()),
        ("complement", sparse_mask, True, (~m).tolist()),
    ]


def _sr_id(name: str) -> str:
    return name


# -- the properties ------------------------------------------------------------------------
# Module-scoped, so that hypothesis draws its examples for each (semiring, backend) pair.
@pytest.fixture(scope="module", params=BUILTINS, ids=_sr_id)
def sr(request: pytest.FixtureRequest) -> Semiring:
    """Each built-in semiring."""
    return semirings.get(request.param)


@pytest.fixture(scope="module", params=BACKENDS)
def on(request: pytest.FixtureRequest) -> tuple[str, Any]:
    """Each backend: its name and its array module."""
    return request.param, get_backend(request.param).xp


@SETTINGS
@given(p=problems())
def test_spmsv_matches_reference(sr: Semiring, on: tuple[str, Any], p: dict[str, Any]) -> None:
    backend, xp = on
    x_dt = _DTYPE[p["x_kind"]]
    xv = None if p["x_vals"] is None else xp.asarray(np.array(p["x_vals"], dtype=x_dt))
    x = SparseVector(xp.asarray(np.array(p["x_idx"], np.int64)), xv, p["ncols"])
    dense_x: list[Any] = [None] * p["ncols"]
    for k, j in enumerate(p["x_idx"]):
        dense_x[j] = True if p["x_vals"] is None else p["x_vals"][k]
    out_dt = sr.output_dtype(_DTYPE[p["a_kind"]], x_dt)
    cells = cells_of(p)
    ro, co = p["offsets"]
    for fmt in FORMATS:
        block = make_block(p, fmt, backend)
        for _label, mask, complement, keep in masks(p, xp):
            want = reference(cells, dense_x, sr.add.name, sr.mul.name, keep, ro, co)
            y = spmsv(block, x, sr, mask=mask, complement=complement, backend=backend,
                      row_offset=ro, col_offset=co)
            check(y, want, sr.add.name, out_dt, p["nrows"])


@SETTINGS
@given(p=problems())
def test_spmv_matches_reference(sr: Semiring, on: tuple[str, Any], p: dict[str, Any]) -> None:
    backend, xp = on
    x_kind = "int64" if p["x_kind"] == "pattern" else p["x_kind"]
    x_np = np.array(p["dense_x"], dtype=_DTYPE[x_kind]).reshape(p["ncols"])
    present = None if p["present"] is None else np.array(p["present"], dtype=bool)
    dense_x = [
        v if present is None or present[j] else None for j, v in enumerate(p["dense_x"])
    ]
    out_dt = sr.output_dtype(_DTYPE[p["a_kind"]], x_np.dtype)
    cells = cells_of(p)
    ro, co = p["offsets"]
    methods = ("push", "pull", "auto") if backend == "numba" else ("auto",)
    for fmt in FORMATS:
        block = make_block(p, fmt, backend)
        for _label, mask, complement, keep in masks(p, xp):
            want = reference(cells, dense_x, sr.add.name, sr.mul.name, keep, ro, co)
            for method in methods:
                y = spmv(block, xp.asarray(x_np), sr, mask=mask, complement=complement,
                         present=None if present is None else xp.asarray(present),
                         backend=backend, row_offset=ro, col_offset=co, method=method)
                check(y, want, sr.add.name, out_dt, p["nrows"])


@pytest.mark.parametrize("backend", ["numpy", "numba"])
@settings(max_examples=10, deadline=None, derandomize=True)
@given(p=problems())
def test_backends_agree_exactly(backend: str, p: dict[str, Any]) -> None:
    """numpy and numba give identical arrays (dtype included) for deterministic monoids."""
    x_dt = _DTYPE[p["x_kind"]]
    xv = None if p["x_vals"] is None else np.array(p["x_vals"], dtype=x_dt)
    x = SparseVector(np.array(p["x_idx"], np.int64), xv, p["ncols"])
    for name in ("min_second", "min_secondi", "plus_times", "lor_land"):
        ys = [
            spmsv(make_block(p, fmt, be), x, name, backend=be)
            for fmt in FORMATS
            for be in ("numpy", backend)
        ]
        for y in ys[1:]:
            np.testing.assert_array_equal(y.indices, ys[0].indices)
            np.testing.assert_array_equal(y.values, ys[0].values)
            assert y.values.dtype == ys[0].values.dtype


# -- user-defined semirings ---------------------------------------------------------------
def _user_problem() -> dict[str, Any]:
    rng = np.random.default_rng(7)
    nrows, ncols, nnz = 6, 5, 14
    rows = rng.integers(0, nrows, nnz).tolist()
    cols = rng.integers(0, ncols, nnz).tolist()
    return dict(
        nrows=nrows, ncols=ncols, rows=rows + rows[:2], cols=cols + cols[:2],
        a_kind="int64", a_vals=rng.integers(-3, 4, nnz + 2).tolist(), build="edges",
        x_idx=[0, 2, 3], x_vals=[2, -1, 3],
    )


def _user_semiring(vectorize: bool) -> Semiring:
    return Semiring.from_callables(
        add=lambda a, b: max(a, b), identity=-(2**62), mul=lambda a, b: a * b + 1,
        name="max_timesplus1", vectorize=vectorize, mpi_op="MAX",
    )


@pytest.mark.parametrize("backend", ["numba", "numpy"])
def test_user_semiring_matches_reference(backend: str) -> None:
    p = _user_problem()
    sr = _user_semiring(vectorize=backend == "numpy")
    assert sr.mpi_op == "MAX" and sr.name == "max_timesplus1"
    x = SparseVector(np.array(p["x_idx"]), np.array(p["x_vals"]), p["ncols"])
    dense_x: list[Any] = [None] * p["ncols"]
    for j, v in zip(p["x_idx"], p["x_vals"], strict=True):
        dense_x[j] = v
    cells = cells_of(p)
    out_dt = sr.output_dtype(np.int64, np.int64)
    assert out_dt == np.int64
    for fmt in FORMATS:
        block = make_block(p, fmt, backend)
        for _label, mask, complement, keep in masks(
            {**p, "mask": [True, False] * 3}, np
        ):
            want = reference(cells, dense_x, "", "", keep, mul_fn=lambda a, b, i, j: a * b + 1)
            y = spmsv(block, x, sr, mask=mask, complement=complement, backend=backend)
            check(y, want, "", out_dt, p["nrows"], add_fn=max)
            yd = spmv(block, np.array([v if v is not None else 0 for v in dense_x]), sr,
                      present=np.array([v is not None for v in dense_x]), mask=mask,
                      complement=complement, backend=backend)
            check(yd, want, "", out_dt, p["nrows"], add_fn=max)


def test_user_semiring_needs_vectorize_for_numpy() -> None:
    p = _user_problem()
    sr = _user_semiring(vectorize=False)
    x = SparseVector(np.array(p["x_idx"]), np.array(p["x_vals"]), p["ncols"])
    with pytest.raises(TypeError, match=r"vectorize=True.*backend='numba'") as err:
        spmsv(make_block(p, "csr", "numpy"), x, sr)
    assert "max_timesplus1" in str(err.value) and "add" in str(err.value)


def test_user_semiring_ufuncs_run_everywhere() -> None:
    """numpy ufuncs need no vectorize flag: plus_times spelled by the user."""
    p = _user_problem()
    sr = Semiring.from_callables(add=np.add, identity=0, mul=np.multiply, name="my_plus_times")
    assert sr.vectorizable
    x = SparseVector(np.array(p["x_idx"]), np.array(p["x_vals"]), p["ncols"])
    for backend in ("numpy", "numba"):
        block = make_block(p, "dcsc", backend)
        y = spmsv(block, x, sr, backend=backend)
        z = spmsv(block, x, "plus_times", backend=backend)
        np.testing.assert_array_equal(y.indices, z.indices)
        np.testing.assert_array_equal(y.values, z.values)


def test_user_semiring_numba_error_names_the_callable() -> None:
    import decimal

    def bad_mul(a: Any, b: Any) -> Any:
        return decimal.Decimal(a) * b

    sr = Semiring.from_callables(add=lambda a, b: a + b, identity=0, mul=bad_mul, name="bad")
    block = block_from_edges("csr", [0], [0], (1, 1), values=[1])
    x = SparseVector([0], [1], 1)
    with pytest.raises(TypeError, match=r"numba cannot compile the mul callable.*bad_mul"):
        spmsv(block, x, sr, backend="numba")


# -- BFS-shaped checks ---------------------------------------------------------------------
@pytest.mark.parametrize("backend", ["numpy", "numba"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_bfs_levels_by_spmsv_match_scipy(backend: str, fmt: str) -> None:
    """A top-down BFS written with spmsv(min_secondi, complemented visited mask)."""
    from scipy.sparse import csgraph

    rng = np.random.default_rng(3)
    n = 300
    r, c = rng.integers(0, n, 900), rng.integers(0, n, 900)
    block = block_from_edges(fmt, np.r_[r, c], np.r_[c, r], (n, n), backend=backend)
    visited = np.zeros(n, dtype=bool)
    levels = np.full(n, -1)
    frontier = SparseVector(np.array([0]), None, n)
    visited[0], levels[0], depth = True, 0, 0
    while frontier.nnz:
        depth += 1
        y = spmsv(block, frontier, "min_secondi", mask=visited, complement=True, check=False)
        visited[y.indices] = True
        levels[y.indices] = depth
        assert np.all(levels[y.values] == depth - 1)  # parents sit one level up
        frontier = SparseVector(y.indices, None, n, check=False)
    want = csgraph.shortest_path(block.to_scipy(), unweighted=True, indices=0)
    np.testing.assert_array_equal(levels, np.where(np.isinf(want), -1, want).astype(int))


def test_pull_spmv_is_bottom_up_step() -> None:
    """spmv pull with a bitmap frontier and the unvisited mask finds min parents."""
    n = 6
    # undirected path 0-1-2-3-4-5 plus chord 0-3
    e = np.array([[0, 1], [1, 2], [2, 3], [3, 4], [4, 5], [0, 3]])
    r, c = np.r_[e[:, 0], e[:, 1]], np.r_[e[:, 1], e[:, 0]]
    block = block_from_edges("csr", r, c, (n, n), backend="numba")
    frontier = np.zeros(n, bool)
    frontier[[0, 2]] = True
    visited = frontier.copy()
    for name in ("min_secondi", "any_secondi"):
        y = spmv(block, frontier, name, present=frontier, mask=visited, complement=True,
                 method="pull")
        assert y.indices.tolist() == [1, 3]
        if name == "min_secondi":
            assert y.values.tolist() == [0, 0]
        else:
            assert set(y.values.tolist()) <= {0, 2}


def test_cupy_backend_unavailable_is_clean() -> None:
    if gpu_available():
        pytest.skip("a GPU is usable here: the cupy cases run instead")
    block = block_from_edges("csr", [0], [0], (1, 1))
    with pytest.raises(RuntimeError, match="no usable GPU"):
        spmsv(block, SparseVector([0], None, 1), "any_pair", backend="cupy")


@pytest.mark.gpu
def test_cupy_matches_numba_on_kronecker() -> None:
    cupy = pytest.importorskip("cupy")
    from spbfs.generators import kronecker

    g = kronecker(12, 8, seed=5)
    r, c = np.r_[g.src, g.dst], np.r_[g.dst, g.src]
    rng = np.random.default_rng(0)
    f = np.sort(rng.choice(g.n, 300, replace=False))
    for fmt in FORMATS:
        host = block_from_edges(fmt, r, c, (g.n, g.n), backend="numba")
        dev = host.to_backend("cupy")
        for name in ("min_second", "plus_pair", "lor_pair", "min_secondi"):
            want = spmsv(host, SparseVector(f, f.copy(), g.n), name)
            got = spmsv(dev, SparseVector(cupy.asarray(f), cupy.asarray(f), g.n), name)
            np.testing.assert_array_equal(got.indices.get(), want.indices)
            np.testing.assert_array_equal(got.values.get(), want.values)
            dense = np.arange(g.n)
            want = spmv(host, dense, name, method="push")
            got = spmv(dev, cupy.asarray(dense), name)
            np.testing.assert_array_equal(got.indices.get(), want.indices)
            np.testing.assert_array_equal(got.values.get(), want.values)


@pytest.mark.gpu
def test_cupy_float_min_and_max_pick_a_term() -> None:
    """min/max products on the GPU equal numba's bit for bit (no rounding in the reduce)."""
    cupy = pytest.importorskip("cupy")
    from spbfs.generators import kronecker

    g = kronecker(11, 8, seed=6)
    rng = np.random.default_rng(1)
    w = rng.uniform(0.0, 100.0, g.src.size)
    f = np.sort(rng.choice(g.n, 300, replace=False))
    xv = rng.uniform(0.0, 100.0, f.size)
    for fmt in FORMATS:
        host = block_from_edges(fmt, g.dst, g.src, (g.n, g.n), values=w, backend="numba",
                                dedup=False)
        dev = host.to_backend("cupy")
        for name in ("min_plus", "max_plus", "max_min", "min_first"):
            want = spmsv(host, SparseVector(f, xv, g.n), name)
            got = spmsv(dev, SparseVector(cupy.asarray(f), cupy.asarray(xv), g.n), name)
            np.testing.assert_array_equal(got.indices.get(), want.indices)
            np.testing.assert_array_equal(got.values.get(), want.values, err_msg=name)


def test_gpu_reduction_helpers_on_numpy() -> None:
    """The cupy-only reduction paths, run with numpy as the array module."""
    from semirings.kernels import vectorized as vz

    rng = np.random.default_rng(4)
    rows = rng.integers(0, 9, 60)
    cases = [(n, None) for n in ("plus", "min", "max", "lor", "land")]
    cases += [("min", np.bool_), ("max", np.int8), ("plus", np.int16)]
    for name, dtype in cases:
        add = semirings.monoid[name]
        terms = rng.integers(-3, 4, 60).astype(dtype or add.out_dtype(np.int64))
        dt = terms.dtype
        acc = vz._cupy_scatter(np, add, rows, terms, 9, dt)
        want = np.full(9, add.identity_for(dt), dtype=dt)
        add.ufunc_for(np).at(want, rows, terms)
        np.testing.assert_array_equal(acc, want)
    order = np.argsort(rows, kind="stable")
    r = rows[order]
    starts = np.flatnonzero(np.r_[True, r[1:] != r[:-1]])
    vals = rng.integers(-3, 4, 60)[order]
    for uf in (np.multiply, np.add, np.minimum):
        np.testing.assert_array_equal(
            vz._segmented_reduce(np, uf, vals, r, starts), uf.reduceat(vals, starts)
        )
