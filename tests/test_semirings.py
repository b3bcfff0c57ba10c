"""Operators, semirings, sparse vectors and the kernels' argument checks."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import semirings
from semirings import (
    ANY,
    BUILTINS,
    BinaryOp,
    Monoid,
    Semiring,
    SparseVector,
    binary,
    block_from_edges,
    gpu_available,
    monoid,
    semiring,
    spmsv,
    spmv,
)

I64 = np.iinfo(np.int64)


# -- monoids and binary operators ---------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "dtype", "identity", "terminal"),
    [
        ("plus", np.int64, 0, None),
        ("plus", np.float64, 0.0, None),
        ("times", np.int64, 1, 0),
        ("times", np.float64, 1.0, None),
        ("min", np.int64, I64.max, I64.min),
        ("min", np.int32, np.iinfo(np.int32).max, np.iinfo(np.int32).min),
        ("min", np.float64, np.inf, -np.inf),
        ("min", np.bool_, True, False),
        ("max", np.int64, I64.min, I64.max),
        ("max", np.float32, -np.inf, np.inf),
        ("lor", np.bool_, False, True),
        ("land", np.bool_, True, False),
    ],
)
def test_monoid_identity_and_terminal(name: str, dtype: type, identity: object,
                                      terminal: object) -> None:
    m = monoid[name]
    ident = m.identity_for(dtype)
    assert ident == identity and ident.dtype == np.dtype(dtype)
    term = m.terminal_for(dtype)
    assert term == terminal if terminal is not None else term is None


def test_any_monoid_every_value_is_terminal() -> None:
    assert monoid.any.terminal_for(np.int64) is ANY
    assert monoid.any.terminal_is_any
    assert not monoid.min.terminal_is_any
    assert pickle.loads(pickle.dumps(ANY)) is ANY


@pytest.mark.parametrize("name", [n for n in monoid if n != "any"])
def test_monoid_identity_is_neutral(name: str) -> None:
    m = monoid[name]
    for dtype, samples in ((np.int64, [-5, 0, 7]), (np.float64, [-2.5, 0.0, 3.0])):
        out = m.out_dtype(dtype)
        e = m.identity_for(out)
        for v in samples:
            v = out.type(v)
            assert out.type(m.op(e, v)) == v
            assert out.type(m.op(v, e)) == v


def test_monoid_mpi_ops() -> None:
    assert {n: monoid[n].mpi_op for n in monoid} == {
        "plus": "SUM", "times": "PROD", "min": "MIN", "max": "MAX", "lor": "LOR",
        "land": "LAND", "any": "MIN",
    }


def test_monoid_out_dtypes() -> None:
    assert monoid.plus.out_dtype(np.bool_) == np.int64  # booleans are counted
    assert monoid.plus.out_dtype(np.float32) == np.float32
    assert monoid.lor.out_dtype(np.int64) == np.bool_
    assert monoid.min.out_dtype(np.bool_) == np.bool_


@pytest.mark.parametrize(
    ("name", "a", "b", "want"),
    [
        ("times", np.int32, np.float64, np.float64),
        ("times", np.bool_, np.bool_, np.int64),
        ("plus", np.bool_, np.int8, np.int8),
        ("min", np.bool_, np.bool_, np.int64),
        ("land", np.float64, np.int64, np.bool_),
        ("first", np.float32, np.int64, np.float32),
        ("second", np.float32, np.int64, np.int64),
        ("pair", np.bool_, np.bool_, np.bool_),
        ("pair", np.int64, np.float64, np.float64),
        ("firsti", np.float64, np.float64, np.int64),
        ("secondi", np.bool_, np.bool_, np.int64),
    ],
)
def test_binaryop_dtypes(name: str, a: type, b: type, want: type) -> None:
    assert binary[name].out_dtype(a, b) == np.dtype(want)


def test_binaryop_scalar_functions() -> None:
    assert binary.times.func(3, 4) == 12
    assert binary.min.func(3, -4) == -4
    assert binary.lor.func(0, 0.0) is False
    assert binary.first.func("a", "b") == "a"
    assert binary.second.func("a", "b") == "b"
    assert binary.pair.func(None, None) == 1
    assert binary.firsti.position == "i" and binary.firstj.position == "j"
    assert binary.secondi.position == "j" and binary.secondi.uses == (False, False)
    assert binary.second.uses == (False, True)


def test_binaryop_apply_vectorized() -> None:
    a, b = np.array([True, False]), np.array([True, True])
    assert binary.plus.apply(np, a, b).tolist() == [2, 1]  # arithmetic counts booleans
    assert binary.lor.apply(np, a, b).dtype == np.bool_
    assert binary.pair.apply(np, a, b).tolist() == [True, True]
    with pytest.raises(TypeError, match="no vectorized form"):
        BinaryOp("f", lambda x, y: x).apply(np, a, b)


def test_operator_namespaces_explain_typos() -> None:
    with pytest.raises(AttributeError, match=r"unknown monoid 'mni'.*'min'"):
        _ = monoid.mni
    with pytest.raises(ValueError, match=r"unknown binary op 'secnd'.*'second'"):
        semirings.ops.get_binaryop("secnd")
    assert "second" in binary and sorted(binary) == dir(binary)
    with pytest.raises(ValueError, match="position"):
        BinaryOp("x", None, position="k")
    with pytest.raises(TypeError, match="callable"):
        Monoid("x", 3, 0)


# -- semirings -----------------------------------------------------------------------------
REQUIRED = {
    "plus_times", "min_plus", "max_plus", "lor_land", "min_second", "min_secondi",
    "min_firstj", "any_pair", "plus_pair", "max_min", "plus_first", "plus_second",
    "min_first", "any_second",
}


def test_builtins_are_module_attributes() -> None:
    assert set(BUILTINS) >= REQUIRED
    for name in BUILTINS:
        sr = getattr(semiring, name)
        assert isinstance(sr, Semiring) and sr.name == name
        assert semirings.get(name) is sr
        assert sr.name == f"{sr.add.name}_{sr.mul.name}"
    assert semiring.min_second.add is monoid.min and semiring.min_second.mul is binary.second


def test_every_combination_by_name() -> None:
    sr = semirings.get("max_times")
    assert sr is semiring.max_times and sr.mpi_op == "MAX"
    assert "land_lor" in dir(semiring)


def test_unknown_semiring_lists_close_matches() -> None:
    with pytest.raises(ValueError, match=r"unknown semiring 'min_secnd'; did you mean 'min_sec"):
        semirings.get("min_secnd")
    with pytest.raises(AttributeError, match=r"'plus_tims'.*'plus_times'"):
        _ = semiring.plus_tims
    with pytest.raises(ValueError, match=r"monoid in plus, times"):
        semirings.get("zzz")
    with pytest.raises(TypeError, match="semiring must be"):
        semirings.get(3)  # type: ignore[arg-type]


def test_semiring_properties() -> None:
    sr = Semiring("min", "plus")
    assert sr.name == "min_plus" and sr.mpi_op == "MIN"
    assert sr.output_dtype(np.int16, np.float32) == np.float32
    assert sr.identity_for(np.float64) == np.inf
    assert semiring.plus_pair.output_dtype(np.bool_, np.bool_) == np.int64
    assert semiring.min_secondi.output_dtype(np.float64, np.bool_) == np.int64
    assert repr(sr) == "Semiring('min_plus')"
    assert Semiring("min", "plus", name="tropical").name == "tropical"


def test_from_callables() -> None:
    sr = Semiring.from_callables(
        add=lambda a, b: a + b, identity=0, mul=lambda a, b: a * b, name="pt", mpi_op="SUM"
    )
    assert sr.name == "pt" and sr.mpi_op == "SUM" and not sr.vectorizable
    assert sr.output_dtype(np.int64, np.int64) == np.int64  # numba's typing of mul
    assert sr.output_dtype(np.int64, np.float64) == np.float64
    vec = Semiring.from_callables(
        add=lambda a, b: a + b, identity=0, mul=lambda a, b: a * b, name="ptv", vectorize=True
    )
    assert vec.vectorizable
    typed = Semiring.from_callables(
        add=max, identity=0, mul=lambda a, b: a, name="t", dtype=np.float32
    )
    assert typed.output_dtype(np.int64, np.int64) == np.float32
    with pytest.raises(TypeError, match="mul must be callable"):
        Semiring.from_callables(add=max, identity=0, mul=3, name="bad")  # type: ignore[arg-type]


def test_check_vectorizable_names_the_operator() -> None:
    sr = Semiring.from_callables(add=np.maximum, identity=0, mul=lambda a, b: a, name="m")
    with pytest.raises(TypeError, match=r"mul operator 'm'.*vectorize=True"):
        sr.check_vectorizable()


def test_numpy_ufuncs_of_a_user_semiring_run_on_another_array_module() -> None:
    """cupy mirrors numpy's ufuncs by name; a module without the name is refused, not "any"."""
    import types

    fake = types.SimpleNamespace(__name__="fakexp", maximum=np.fmax, add=np.subtract)
    sr = Semiring.from_callables(add=np.maximum, identity=-np.inf, mul=np.add, name="mp")
    assert sr.add.ufunc_for(fake) is np.fmax
    a, b = np.array([5.0, 1.0]), np.array([2.0, 3.0])
    assert sr.mul.apply(fake, a, b).tolist() == [3.0, -2.0]  # fake's add: its own ufunc ran
    assert sr.mul.apply(np, a, b).tolist() == [7.0, 4.0]
    vec = Semiring.from_callables(add=lambda x, y: max(x, y), identity=0,
                                  mul=lambda x, y: x + y, name="pv", vectorize=True)
    with pytest.raises(TypeError, match=r"monoid 'pv'.*numpy backend only.*fakexp"):
        vec.add.ufunc_for(fake)
    with pytest.raises(TypeError, match=r"mul of semiring 'pv'.*numpy backend only"):
        vec.mul.apply(fake, a, b)


# -- sparse vectors ------------------------------------------------------------------------
def test_sparse_vector_basics() -> None:
    v = SparseVector(np.array([1, 4], np.int32), [2.5, -1.0], 6)
    assert v.indices.dtype == np.int64 and v.nnz == 2 and v.size == 6
    assert v.dtype == np.float64 and not v.is_pattern
    assert v.to_dense().tolist() == [0, 2.5, 0, 0, -1.0, 0]
    assert v.to_dense(fill=np.nan)[0] != v.to_dense(fill=np.nan)[0]
    assert v.to_mask().tolist() == [False, True, False, False, True, False]
    p = SparseVector([0, 5], None, 6)
    assert p.is_pattern and p.dtype == np.bool_
    assert p.to_dense().tolist() == [True, False, False, False, False, True]
    assert repr(p) == "SparseVector(size=6, nnz=2, pattern)"
    e = SparseVector([], None, 0)
    assert e.nnz == 0 and e.to_dense().shape == (0,)


def test_sparse_vector_round_trips() -> None:
    d = np.array([0, 3, 0, -2, 0])
    v = SparseVector.from_dense(d)
    assert v.indices.tolist() == [1, 3] and v.values.tolist() == [3, -2]
    np.testing.assert_array_equal(v.to_dense(), d)
    assert SparseVector.from_dense(d, fill=None).nnz == 5
    m = SparseVector.from_mask(d != 0)
    assert m.is_pattern and m.indices.tolist() == [1, 3]
    assert v.to_backend("numpy").indices.tolist() == [1, 3]
    with pytest.raises(TypeError, match="mask"):
        SparseVector.from_mask(d)


@pytest.mark.parametrize(
    ("indices", "values", "size", "exc", "match"),
    [
        ([3, 1], None, 5, ValueError, r"indices must be strictly increasing.*indices\[1\] = 1"),
        ([1, 1], None, 5, ValueError, "indices must be strictly increasing"),
        ([-1, 2], None, 5, ValueError, "indices holds a negative index"),
        ([1, 5], None, 5, ValueError, "indices holds index 5, out of range for size 5"),
        ([0.0, 1.0], None, 5, TypeError, "indices must be an integer array"),
        ([True, False], None, 5, TypeError, "indices must be an integer array"),
        ([[0, 1]], None, 5, ValueError, "indices must be 1-D"),
        ([0, 1], [1.0], 5, ValueError, "values must be 1-D with one entry per index"),
        ([0], None, -1, ValueError, "size must be non-negative"),
        ([0], None, 2.0, TypeError, "size must be an integer"),
        ([2**63 + 1], None, 5, ValueError, "indices holds an id beyond int64"),
    ],
)
def test_sparse_vector_validation(indices, values, size, exc, match) -> None:
    if isinstance(indices, list) and indices and indices[0] == 2**63 + 1:
        indices = np.array(indices, dtype=np.uint64)
    with pytest.raises(exc, match=match):
        SparseVector(indices, values, size)


def test_sparse_vector_unchecked_fast_path_keeps_arrays() -> None:
    idx = np.array([0, 2], np.int64)
    v = SparseVector(idx, None, 3, check=False)
    assert v.indices is idx


# -- argument checks of the kernels ---------------------------------------------------------
@pytest.fixture
def block():
    return block_from_edges("csr", [0, 1, 2], [0, 2, 1], (3, 4), values=[1, 2, 3])


@pytest.mark.parametrize("kernel", ["spmsv", "spmv"])
def test_kernel_argument_errors_name_the_argument(block, kernel: str) -> None:
    x = SparseVector([0, 2], [1, 1], 4) if kernel == "spmsv" else np.ones(4)
    f = spmsv if kernel == "spmsv" else spmv
    with pytest.raises(TypeError, match="block must be"):
        f(block.to_scipy(), x, "plus_times")
    with pytest.raises(TypeError, match="semiring must be"):
        f(block, x, 42)
    with pytest.raises(ValueError, match="unknown semiring"):
        f(block, x, "plus_tmes")
    with pytest.raises(TypeError, match="mask must have dtype bool"):
        f(block, x, "plus_times", mask=np.ones(3, dtype=np.int8))
    with pytest.raises(ValueError, match="mask must be 1-D of length 3"):
        f(block, x, "plus_times", mask=np.ones(4, dtype=bool))
    with pytest.raises(ValueError, match="mask has size 4"):
        f(block, x, "plus_times", mask=SparseVector([0], None, 4))
    with pytest.raises(ValueError, match="complement=True needs a mask"):
        f(block, x, "plus_times", complement=True)
    with pytest.raises(ValueError, match="backend must be one of"):
        f(block, x, "plus_times", backend="fortran")
    with pytest.raises(ValueError, match="row_offset must be non-negative"):
        f(block, x, "plus_times", row_offset=-1)
    with pytest.raises(TypeError, match="col_offset must be an integer"):
        f(block, x, "plus_times", col_offset=1.5)
    if not gpu_available():
        with pytest.raises(RuntimeError, match="no usable GPU"):
            f(block, x, "plus_times", backend="cupy")


def test_spmsv_x_errors(block) -> None:
    with pytest.raises(ValueError, match="x has size 3, block has 4 columns"):
        spmsv(block, SparseVector([0], None, 3), "any_pair")
    with pytest.raises(TypeError, match="x must be a SparseVector"):
        spmsv(block, np.ones(4), "any_pair")


def test_spmv_x_errors(block) -> None:
    with pytest.raises(ValueError, match="x must be 1-D of length 4"):
        spmv(block, np.ones(3), "plus_times")
    with pytest.raises(TypeError, match="x must be a dense array"):
        spmv(block, SparseVector([0], None, 4), "plus_times")
    with pytest.raises(TypeError, match="present must have dtype bool"):
        spmv(block, np.ones(4), "plus_times", present=np.ones(4))
    with pytest.raises(ValueError, match="present must be 1-D of length 4"):
        spmv(block, np.ones(4), "plus_times", present=np.ones(2, dtype=bool))
    with pytest.raises(ValueError, match="method must be one of"):
        spmv(block, np.ones(4), "plus_times", method="sideways")


def test_kernel_result_types(block) -> None:
    y = spmsv(block, SparseVector([0, 2], [1.5, 2.0], 4), "plus_times", backend="numba")
    assert y.indices.tolist() == [0, 1] and y.values.tolist() == [1.5, 4.0]
    assert y.values.dtype == np.float64 and y.size == 3
    y = spmsv(block, SparseVector([3], None, 4), "plus_times")
    assert y.nnz == 0 and y.values.dtype == np.int64


def test_global_ids_beyond_int32() -> None:
    """Hypersparse dcsc block whose column ids do not fit int32: ids stay exact."""
    n = 2**31 + 10
    cols = np.array([5, 2**31 + 1, 2**31 + 7])
    b = block_from_edges("dcsc", [0, 1, 1], cols, (3, n), index_dtype="int64")
    assert b.jc.dtype == np.int64
    x = SparseVector(cols[1:], None, n)
    for be in ("numpy", "numba"):
        y = spmsv(b, x, "min_secondi", backend=be, row_offset=2**40, col_offset=2**33)
        assert y.indices.tolist() == [1]
        assert y.values.tolist() == [2**33 + 2**31 + 1]
        y = spmsv(b, x, "max_firstj", backend=be)
        assert y.values.tolist() == [2**31 + 7]


def test_int32_block_refuses_ids_beyond_int32() -> None:
    big = 2**31 + 3
    with pytest.raises(OverflowError, match="index_dtype int32 cannot hold"):
        block_from_edges("dcsc", [0], [big - 1], (1, big), index_dtype="int32")
    with pytest.raises(ValueError, match="cols holds index"):
        block_from_edges("dcsc", [0], [big], (1, big), index_dtype="int64")
