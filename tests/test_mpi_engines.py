"""The grid search's local engines (:mod:`spbfs.mpi.local`) and the strict cupy stand-in.

Under ``mpiexec`` (``tests/mpi/engine_cases.py``): the array engine, on numpy and
on cupy through the stand-in, gives scipy's levels and Graph500-valid parents,
the same as the numba engine's, on 1x1, 2x1, 1x2 and 2x2 grids, csr and dcsc,
every direction mode, with one transfer per message (3x2: in the six-rank
launch of ``tests/test_algorithms_mpi.py``). Here: the stand-in's strictness,
the backend choice, the routes by grid shape and the device blocks.
"""

from __future__ import annotations

import numpy as np
import pytest
from _cupy_standin import HostLeak, make
from mpi_launch import SCRIPTS, launch, needs_mpi, on_grids

from semirings.backend import Backend, gpu_available
from semirings.blocks import block_from_edges
from spbfs import Config
from spbfs.mpi.comm import CollectiveError
from spbfs.mpi.local import bfs_backend, topdown_route
from spbfs.mpi.local_array import device_block


@pytest.mark.mpi
@needs_mpi
@on_grids({1: ["1x1"], 2: ["2x1", "1x2"], 4: ["2x2"]})
def test_array_engine_matches_numba_and_scipy(nranks: int, grids: list[str]) -> None:
    rc, out, err, _ = launch(nranks, [str(SCRIPTS / "engine_cases.py"), "--standin", *grids],
                             timeout=400)
    assert rc == 0, f"stdout:\n{out}\nstderr:\n{err}"
    assert "ENGINES OK" in out, out


@pytest.mark.gpu
@pytest.mark.mpi
@needs_mpi
@on_grids({1: ["1x1"], 2: ["2x1", "1x2"]})
def test_gpu_grid_matches_numba_and_scipy(nranks: int, grids: list[str]) -> None:
    if not gpu_available():
        pytest.skip("no usable GPU")
    rc, out, err, _ = launch(nranks, [str(SCRIPTS / "engine_cases.py"), "--gpu", *grids],
                             timeout=400)
    assert rc == 0, f"stdout:\n{out}\nstderr:\n{err}"
    assert "ENGINES OK" in out, out


def test_standin_refuses_implicit_transfers() -> None:
    modules, t = make()
    cp = modules["cupy"]
    host = np.arange(10, dtype=np.int64)
    dev = cp.asarray(host)
    assert t.to_device == 1
    for leak in (lambda: np.asarray(dev), lambda: host + dev, lambda: dev + host,
                 lambda: int(dev), lambda: bool(dev), lambda: dev[host],
                 lambda: cp.cumsum(host), lambda: list(dev), lambda: np.add(host, dev),
                 lambda: memoryview(dev)):  # mpi4py reads buffers like memoryview does
        with pytest.raises(TypeError):
            leak()
    assert int(dev.sum()) == 45 and t.scalars == 1  # a 0-d read is a counted scalar
    assert np.array_equal(cp.asnumpy(dev * 2), host * 2) and t.to_host == 1
    assert np.array_equal(dev[dev > 4].get(), host[host > 4]) and t.to_host == 2
    with pytest.raises(HostLeak, match="device arrays"):
        modules["cupyx.scipy.sparse"].csr_matrix((host, host, host), shape=(10, 10))


def test_bfs_backend_choice() -> None:
    # auto: the GPU where one is usable (every rank's, on a grid), else numba, silently.
    assert bfs_backend(Config()) == ("cupy" if gpu_available() else "numba")
    assert bfs_backend(Config(backend="numba")) == "numba"
    assert bfs_backend(Config(backend="numpy")) == "numpy"
    if gpu_available():
        pytest.skip("a GPU is usable here: backend 'cupy' runs")
    with pytest.raises(CollectiveError, match=r"config 'backend' is 'cupy' but the grid cannot "
                                              r"run it: .*numba or numpy"):
        bfs_backend(Config(backend="cupy"))


@pytest.mark.parametrize(("transposed", "pr", "pc", "duo", "route"), [
    (False, 1, 1, False, "own"), (False, 2, 1, False, "own"), (False, 1, 2, False, "fold"),
    (False, 2, 2, False, "fold"), (True, 1, 1, False, "own"), (True, 1, 3, False, "own"),
    (True, 2, 1, True, "duo"), (True, 2, 1, False, "pairs"), (True, 2, 2, False, "pairs"),
])
def test_topdown_route_by_grid_shape(transposed: bool, pr: int, pc: int, duo: bool,
                                     route: str) -> None:
    assert topdown_route(transposed, pr, pc, duo) == route


@pytest.mark.parametrize("fmt", ["csr", "dcsc"])
def test_device_blocks_are_cupyx_matrices(fmt: str) -> None:
    """A rank's block on the (stand-in) GPU is a csr_matrix; dcsc's over its non-empty columns.

    A hypersparse block (60 entries in a 2**16-wide block, as a rank of a
    large grid holds) takes O(nnz + nzc) device memory as dcsc, no pointer
    array of the block's width; csr has one.
    """
    modules, _ = make()
    dev = Backend("cupy", modules["cupy"], modules["cupyx.scipy.sparse"])
    n = 1 << 16
    rng = np.random.default_rng(3)
    rows, cols = rng.integers(0, n, 60), rng.integers(0, n, 60)
    host = block_from_edges(fmt, rows, cols, (n, n), values=rng.uniform(1, 2, 60))
    b = device_block(dev, host)
    m = b.matrix_on_device
    assert type(m).__name__ == "csr_matrix"
    assert m.shape == ((n if fmt == "csr" else host.nzc), n)
    # The kernels' arrays are the matrix's own, and hold the host block's entries.
    assert b.ptr is m.indptr and b.ind is m.indices and b.data is m.data
    assert (m.get() != host.matrix.tocsr() if fmt == "csr" else m.get().T != host.matrix).nnz == 0
    assert np.array_equal(b.column_ids().get(), host.column_ids())
    assert np.array_equal(b.ind.get(), host.ind) and np.array_equal(b.data.get(), host.data)
    held = sum(a.nbytes for a in (m.indptr, m.indices, m.data)) + \
        (0 if b.jc is None else b.jc.nbytes)
    if fmt == "dcsc":
        assert host.nzc <= 60 and held <= 8 * (2 * host.nnz + 2 * host.nzc + 1), held
    else:
        assert held >= 4 * n, held  # csr's pointer array spans the block's width
    # A pattern block's matrix stores bool ones (cupyx holds no integer values).
    pattern = device_block(dev, block_from_edges(fmt, rows, cols, (n, n)))
    assert pattern.data is None and pattern.matrix_on_device.dtype == np.bool_
