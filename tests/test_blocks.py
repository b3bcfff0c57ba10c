"""The CSR and DCSC blocks of :mod:`semirings.blocks`: builders, access, memory."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from semirings import (
    CSRBlock,
    DCSCBlock,
    SparseVector,
    block_from_edges,
    block_from_scipy,
    choose_index_dtype,
    spmsv,
)

FORMATS = ("csr", "dcsc")


@st.composite
def coo(draw: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[int, int]]:
    nrows = draw(st.integers(0, 12))
    ncols = draw(st.sampled_from([0, 1, 5, 12, 3000]))  # 3000: dcsc's hypersparse path
    nnz = draw(st.integers(0, 40)) if nrows and ncols else 0
    r = draw(st.lists(st.integers(0, max(nrows - 1, 0)), min_size=nnz, max_size=nnz))
    c = draw(st.lists(st.integers(0, max(ncols - 1, 0)), min_size=nnz, max_size=nnz))
    v = draw(st.lists(st.integers(-5, 5), min_size=nnz, max_size=nnz))
    return np.array(r, np.int64), np.array(c, np.int64), np.array(v, np.int64), (nrows, ncols)


def dense(block: Any) -> np.ndarray:
    return block.to_scipy().toarray()


def assert_sorted_columns(block: Any) -> None:
    ptr, ind = np.asarray(block.ptr), np.asarray(block.ind)
    for k in range(ptr.size - 1):
        seg = ind[ptr[k]:ptr[k + 1]]
        assert np.all(seg[1:] >= seg[:-1])


@pytest.mark.parametrize("fmt", FORMATS)
@settings(max_examples=40, deadline=None, derandomize=True)
@given(data=coo())
def test_from_edges_matches_scipy(fmt: str, data: Any) -> None:
    r, c, v, shape = data
    want = sp.coo_matrix((v, (r, c)), shape=shape).toarray()  # duplicates summed
    b = block_from_edges(fmt, r, c, shape, values=v)
    assert b.shape == shape and b.format == fmt
    np.testing.assert_array_equal(dense(b), want)
    assert_sorted_columns(b)
    # dedup=False keeps every entry as a term of its own
    k = block_from_edges(fmt, r, c, shape, values=v, dedup=False)
    assert k.nnz == r.size
    np.testing.assert_array_equal(dense(k), want)
    # pattern: repeated coordinates are one edge
    p = block_from_edges(fmt, r, c, shape)
    assert p.data is None
    assert p.nnz == len(set(zip(r.tolist(), c.tolist(), strict=True)))
    np.testing.assert_array_equal(dense(p), (sp.coo_matrix(
        (np.ones(r.size), (r, c)), shape=shape).toarray() > 0).astype(float))


@pytest.mark.parametrize("fmt", FORMATS)
@settings(max_examples=30, deadline=None, derandomize=True)
@given(data=coo())
def test_from_scipy_keeps_duplicates(fmt: str, data: Any) -> None:
    r, c, v, shape = data
    order = np.lexsort((r, c))
    indptr = np.zeros(shape[1] + 1, np.int64)
    np.cumsum(np.bincount(c, minlength=shape[1]), out=indptr[1:])
    m = sp.csc_matrix((v[order], r[order], indptr), shape=shape)  # duplicates stay
    b = block_from_scipy(fmt, m)
    assert b.nnz == r.size
    np.testing.assert_array_equal(dense(b), m.toarray())
    assert_sorted_columns(b)
    for other in (m.tocsr(), m.tocoo()):
        np.testing.assert_array_equal(dense(block_from_scipy(fmt, other)), m.toarray())
    pat = block_from_scipy(fmt, m, pattern=True)
    assert pat.data is None and pat.nnz == r.size


@pytest.mark.parametrize("fmt", FORMATS)
@settings(max_examples=30, deadline=None, derandomize=True)
@given(data=coo(), picks=st.lists(st.integers(0, 2999), max_size=8))
def test_gather_and_col_ranges(fmt: str, data: Any, picks: list[int]) -> None:
    r, c, v, shape = data
    b = block_from_edges(fmt, r, c, shape, values=v)
    if shape[1] == 0:
        return
    cols = np.array([p % shape[1] for p in picks], np.int64)
    csc = sp.csc_matrix(b.to_scipy())
    csc.sort_indices()
    offsets, rows = b.gather(cols)
    want = [csc.indices[csc.indptr[j]:csc.indptr[j + 1]] for j in cols]
    assert offsets.tolist() == np.r_[0, np.cumsum([w.size for w in want])].tolist()
    assert rows.tolist() == (np.concatenate(want).tolist() if want else [])
    start, stop = b.col_ranges(cols)
    assert (np.asarray(stop) - np.asarray(start)).tolist() == [w.size for w in want]


@pytest.mark.parametrize("fmt", FORMATS)
def test_transpose_is_cached_and_exact(fmt: str) -> None:
    rng = np.random.default_rng(0)
    r, c = rng.integers(0, 7, 30), rng.integers(0, 11, 30)
    b = block_from_edges(fmt, r, c, (7, 11), values=rng.integers(1, 9, 30))
    t = b.transpose()
    assert t.shape == (11, 7) and t.format == fmt
    np.testing.assert_array_equal(dense(t), dense(b).T)
    assert b.transpose() is t and t.transpose() is b
    assert_sorted_columns(t)


@pytest.mark.parametrize("shape", [(0, 0), (1, 1), (0, 4), (4, 0)])
@pytest.mark.parametrize("fmt", FORMATS)
def test_empty_and_tiny_shapes(fmt: str, shape: tuple[int, int]) -> None:
    b = block_from_edges(fmt, [], [], shape)
    assert b.nnz == 0 and b.nzc == 0 and b.shape == shape
    assert dense(b).shape == shape
    assert b.transpose().shape == shape[::-1]
    if shape == (1, 1):
        one = block_from_edges(fmt, [0], [0], shape, values=[5])
        assert dense(one).tolist() == [[5]] and one.nzc == 1


def test_sizes_and_matrix_views() -> None:
    r, c = np.array([0, 2, 2, 1]), np.array([1, 1, 4, 4])
    csr = block_from_edges("csr", r, c, (3, 6))
    dcsc = block_from_edges("dcsc", r, c, (3, 6))
    assert isinstance(csr, CSRBlock) and isinstance(dcsc, DCSCBlock)
    assert csr.ptr.size == 7 and dcsc.ptr.size == 3 and dcsc.jc.tolist() == [1, 4]
    assert csr.nzc == dcsc.nzc == 2 and csr.nnz == dcsc.nnz == 4
    assert csr.index_dtype == np.int32  # auto: everything fits
    assert csr.nbytes == csr.ptr.nbytes + csr.ind.nbytes
    assert dcsc.nbytes == dcsc.ptr.nbytes + dcsc.ind.nbytes + dcsc.jc.nbytes
    assert csr.matrix.shape == (6, 3)  # B.T: one row per column of B
    assert dcsc.matrix.shape == (3, 2)  # the non-empty columns only
    assert "nnz=4" in repr(csr)
    moved = csr.to_backend("numba")
    assert moved.backend.name == "numba"
    np.testing.assert_array_equal(dense(moved), dense(csr))


def test_choose_index_dtype() -> None:
    assert choose_index_dtype(10, 10, 10) == np.int32
    assert choose_index_dtype(2**31, 10, 10) == np.int64
    assert choose_index_dtype(10, 10, 10, "int64") == np.int64
    with pytest.raises(OverflowError, match="index_dtype int32"):
        choose_index_dtype(10, 10, 2**31, "int32")
    with pytest.raises(ValueError, match="index_dtype must be"):
        choose_index_dtype(10, 10, 10, "int16")


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        (dict(fmt="coo"), ValueError, "format must be one of"),
        (dict(rows=[-1]), ValueError, "rows holds a negative index"),
        (dict(cols=[9]), ValueError, "cols holds index 9, out of range"),
        (dict(rows=[0.5]), TypeError, "rows must be an integer array"),
        (dict(rows=[0, 1]), ValueError, "rows and cols differ in length"),
        (dict(values=[1, 2]), ValueError, "values must have one entry per coordinate"),
        (dict(shape=(-1, 2)), ValueError, "shape must be non-negative"),
        (dict(rows=[[0]], cols=[[0]]), ValueError, "rows must be 1-D"),
    ],
)
def test_from_edges_errors(kwargs: dict[str, Any], exc: type, match: str) -> None:
    args = dict(fmt="csr", rows=[0], cols=[1], shape=(2, 3))
    args.update(kwargs)
    with pytest.raises(exc, match=match):
        block_from_edges(
            args.pop("fmt"), args.pop("rows"), args.pop("cols"), args.pop("shape"), **args
        )


def test_from_scipy_errors() -> None:
    with pytest.raises(TypeError, match="matrix must be a scipy/cupyx sparse matrix"):
        block_from_scipy("csr", np.eye(2))
    with pytest.raises(ValueError, match="format must be one of"):
        block_from_scipy("csc", sp.eye(2))


def test_dcsc_memory_is_o_nnz() -> None:
    """2**22 x 2**22 with 10**4 entries: dcsc is O(nnz), csr O(n); same products."""
    n, nnz = 2**22, 10**4
    rng = np.random.default_rng(11)
    r, c = rng.integers(0, n, nnz), rng.integers(0, n, nnz)
    dcsc = block_from_edges("dcsc", r, c, (n, n))
    csr = block_from_edges("csr", r, c, (n, n))
    assert dcsc.nbytes < 16 * nnz * 4
    assert csr.nbytes >= 4 * n
    f = np.unique(np.r_[c[:500], rng.integers(0, n, 500)])
    x = SparseVector(f, f.copy(), n)
    for backend in ("numpy", "numba"):
        a = spmsv(dcsc, x, "min_second", backend=backend)
        b = spmsv(csr, x, "min_second", backend=backend)
        assert a.nnz > 0
        np.testing.assert_array_equal(a.indices, b.indices)
        np.testing.assert_array_equal(a.values, b.values)
