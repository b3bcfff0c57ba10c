"""Correctness cases of the 2D BFS, many per launch: ``mpiexec -n P python dist_cases.py GRID...``.

Every grid named on the command line (``RxC`` with ``R·C = P``) runs the whole
suite: small graphs whose sizes do not divide by the rank count (a Kronecker
graph, a 2-D lattice, a directed random graph, a path shorter than the rank
count), both formats, every direction mode and frontier encoding, several
sources. Levels are compared with the one-process :func:`spbfs.bfs` and with
scipy (:func:`spbfs.validate.reference_levels`), parents are validated by the
distributed Graph500 check and the serial one, and the Kronecker blocks are
gathered and compared with the serially built graph (same seed -> same graph on
every grid). Any failure raises, and the installed excepthook aborts the job
with a non-zero status. Prints ``ALL OK <cases>`` on rank 0 at the end.
"""

from __future__ import annotations

import os
import sys
import tempfile
import zipfile

import numpy as np
from case_runner import sub_grid

from spbfs import Config, Graph
from spbfs import bfs as serial_bfs
from spbfs.edges import EdgeList
from spbfs.generators import erdos_renyi, grid2d, kronecker, path
from spbfs.io import parallel_npz
from spbfs.mpi import CollectiveError, DistGraph, ProcessGrid, bfs, install_excepthook
from spbfs.mpi import comm as C
from spbfs.validate import ValidationError, reference_levels, validate_bfs_tree

# The cores this rank may use before any graph pins it (Config.bind).
CORES = sorted(os.sched_getaffinity(0))


def graphs() -> list[tuple[str, EdgeList, bool]]:
    kron = kronecker(9, 8, seed=5)
    lattice = grid2d(23, 17)  # n = 391, 38 levels: many direction switches
    er = erdos_renyi(301, m=900, seed=2, directed=True)
    return [("kron9", kron, False), ("grid23x17", lattice, False), ("er301d", er, True),
            ("path5", path(5), False)]


def sources_for(name: str, el: EdgeList) -> list[int]:
    deg = np.bincount(el.src, minlength=el.n) + np.bincount(el.dst, minlength=el.n)
    isolated = np.flatnonzero(deg == 0)
    srcs = [0, el.n - 1, int(np.argmax(deg))]
    if isolated.size:
        srcs.append(int(isolated[0]))
    return sorted(set(srcs))


def share(el: EdgeList, rank: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    m = el.num_edges
    lo, hi = rank * m // size, (rank + 1) * m // size
    return el.src[lo:hi], el.dst[lo:hi]


def expected_entries(el: EdgeList, directed: bool) -> tuple[np.ndarray, np.ndarray]:
    g = Graph.from_edgelist(el, directed=directed)
    b = g.out_block.to_scipy().tocoo()
    rows, cols = b.row.astype(np.int64), b.col.astype(np.int64)
    order = np.lexsort((rows, cols))
    return rows[order], cols[order]


def check_grid(grid: ProcessGrid, shape: str, cases: list[int]) -> None:
    rank = grid.rank
    encodings = ("auto", "list", "bitmap")
    for name, el, directed in graphs():
        serial = Graph.from_edgelist(el, directed=directed)
        want_rows, want_cols = expected_entries(el, directed) if rank == 0 else (None, None)
        for fmt in ("csr", "dcsc"):
            cfg = Config(format=fmt)
            src, dst = share(el, rank, grid.size)
            g = DistGraph.from_edges(src, dst, el.n, directed=directed, grid=grid, config=cfg)
            check_binding(grid)
            got = g.global_entries()
            if rank == 0:
                rows, cols = got
                assert np.array_equal(rows, want_rows) and np.array_equal(cols, want_cols), (
                    f"{shape} {name} {fmt}: distributed blocks differ from the serial graph")
            check_storage(g, el, directed, f"{shape} {name} {fmt}")
            degs = C.gatherv(grid.comm, g.piece_degrees())
            if rank == 0:
                want = np.asarray(serial.out_degree)
                assert np.array_equal(degs, want), f"{shape} {name} {fmt}: degrees differ"
            k = 0
            for direction in ("auto", "top-down", "bottom-up"):
                for s in sources_for(name, el):
                    enc = encodings[k % 3]
                    k += 1
                    r = bfs(g, s, direction=direction, frontier_encoding=enc)
                    if k == 1:  # the graph's first search again, into given (dirty) arrays
                        out = (np.full(r.parents.shape, 7), np.full(r.levels.shape, 7))
                        r2 = bfs(g, s, direction=direction, frontier_encoding=enc, out=out)
                        assert r2.parents is out[0] and r2.levels is out[1]
                        assert np.array_equal(r2.parents, r.parents), f"{shape} {name}: out"
                        assert np.array_equal(r2.levels, r.levels), f"{shape} {name}: out"
                    info = r.validate(g)
                    full = r.gather()
                    if rank == 0:
                        ref = serial_bfs(serial, s, direction=direction)
                        scipy_lv = reference_levels(el.src, el.dst, el.n, s, directed=directed)
                        tag = f"{shape} {name} {fmt} {direction} {enc} source {s}"
                        assert np.array_equal(full.levels, ref.levels), f"{tag}: levels differ"
                        assert np.array_equal(full.levels, scipy_lv), f"{tag}: scipy differs"
                        # One driver, one policy: the grid runs the levels of the one-process
                        # numba engine, in the same directions, with the same frontiers.
                        assert np.array_equal(r.stats.direction, ref.stats.direction), \
                            f"{tag}: direction schedule differs from one process's"
                        assert np.array_equal(r.stats.frontier, ref.stats.frontier), tag
                        # Every parent found top-down (and every parent on one processor
                        # column) is the smallest frontier neighbour, as in one process;
                        # bottom-up on pc > 1 keeps the first found in rotation order.
                        unique = full.levels > 0
                        if grid.pc > 1:
                            unique &= r.stats.direction[np.maximum(full.levels, 1) - 1] == 0
                        assert np.array_equal(full.parents[unique], ref.parents[unique]), \
                            f"{tag}: parents differ from one process's"
                        if direction == "top-down" or grid.pc == 1:
                            assert np.array_equal(full.parents, ref.parents), tag
                        v = validate_bfs_tree(el, s, full.parents, full.levels,
                                              directed=directed)
                        assert v["reached"] == info["reached"] == r.reached, tag
                        assert v["component_edges"] == info["component_edges"], tag
                        assert len(r.stats) == ref.stats.frontier.shape[0], tag
                        assert np.array_equal(r.stats.discovered, ref.stats.discovered), tag
                    cases[0] += 1
        # Graph-level extras on the last (dcsc) graph.
        check_limits(g, el, serial, directed, shape, name)
        check_both_blocks(grid, el, serial, directed, shape, name)
    check_kronecker_grid_independence(grid, shape)
    check_validation_errors(grid, shape)
    check_counters(grid, shape)
    check_save(grid, shape)
    check_chunked_alltoallv(grid)
    check_bad_input(grid)


def check_both_blocks(grid: ProcessGrid, el: EdgeList, serial: Graph, directed: bool,
                      shape: str, name: str) -> None:
    """``grid_blocks="both"``: B_ij held beside its transpose, the same levels and parents."""
    src, dst = share(el, grid.rank, grid.size)
    for fmt in ("csr", "dcsc"):
        cfg = Config(format=fmt, grid_blocks="both")
        g = DistGraph.from_edges(src, dst, el.n, directed=directed, grid=grid, config=cfg)
        symmetric = not directed and grid.pr == grid.pc and grid.i == grid.j
        tag = f"{shape} {name} {fmt} grid_blocks=both"
        assert g.transposed_topdown is False, tag
        assert g.block_held() == (not symmetric), tag
        t = g.block.to_scipy().T.tocsr()
        assert (g.tblock.to_scipy() != t).nnz == 0, f"{tag}: tblock is not the transpose"
        for direction in ("auto", "top-down"):
            for s in sources_for(name, el):
                r = bfs(g, s, direction=direction)
                r.validate(g)
                full = r.gather()
                if grid.rank == 0:
                    ref = serial_bfs(serial, s, direction=direction)
                    assert np.array_equal(full.levels, ref.levels), f"{tag} {s}: levels differ"
                    if direction == "top-down" or grid.pc == 1:
                        assert np.array_equal(full.parents, ref.parents), f"{tag} {s}: parents"


def check_storage(g: DistGraph, el: EdgeList, directed: bool, tag: str) -> None:
    """Kept tuples are this rank's input tuples; the transpose is shared where B_ij is symmetric."""
    d, grid = g.dist, g.grid
    rows, cols = g._tuples
    assert rows.dtype == cols.dtype == d.local_dtype(), tag
    gv = d.global_rows(rows.astype(np.int64), grid.i)
    gu = d.global_cols(cols.astype(np.int64), grid.j)
    own = d.block_owner(el.dst, el.src) == grid.rank
    want = np.sort(el.dst[own] * el.n + el.src[own])
    assert np.array_equal(np.sort(gv * el.n + gu), want), f"{tag}: kept tuples differ"
    assert g.local_tuples == want.size, tag
    pieces = list(g.iter_tuples(7))
    if pieces:
        assert np.array_equal(np.concatenate([r for r, _ in pieces]), rows), tag
        assert np.array_equal(np.concatenate([c for _, c in pieces]), cols), tag
    reached = np.arange(grid.pr * d.B64) % 3 - 1  # some columns "reached" (>= 0)
    assert g.reached_tuples(reached) == np.count_nonzero(reached[cols] >= 0), tag
    symmetric = not directed and grid.pr == grid.pc and grid.i == grid.j
    assert g.block_held() == (directed and not symmetric), tag
    assert (g.tblock is g.block) == symmetric, tag
    t = g.block.to_scipy().T.tocsr()
    assert (g.tblock.to_scipy() != t).nnz == 0, f"{tag}: tblock is not the transpose"


def check_binding(grid: ProcessGrid) -> None:
    """bind="auto": ranks outnumbering the machine's cores are pinned round robin."""
    if grid.local_size > len(CORES):
        assert grid.cpu == CORES[grid.local_rank % len(CORES)], (grid.cpu, CORES)
        assert os.sched_getaffinity(0) == {grid.cpu}
    else:
        assert grid.cpu is None and sorted(os.sched_getaffinity(0)) == CORES


def check_limits(g: DistGraph, el: EdgeList, serial: Graph, directed: bool, shape: str,
                 name: str) -> None:
    s = 0
    for depth in (0, 1, 2):
        r = bfs(g, s, max_depth=depth).gather()
        if g.grid.rank == 0:
            ref = serial_bfs(serial, s, max_depth=depth)
            assert np.array_equal(r.levels, ref.levels), f"{shape} {name} max_depth={depth}"
    t = el.n - 1
    r = bfs(g, s, target=t)
    full = r.gather()
    if g.grid.rank == 0:
        ref = serial_bfs(serial, s, target=t)
        assert np.array_equal(full.levels, ref.levels), f"{shape} {name} target"
        assert full.stopped == ref.stopped, (full.stopped, ref.stopped)


def check_kronecker_grid_independence(grid: ProcessGrid, shape: str) -> None:
    g = DistGraph.kronecker(8, 16, seed=11, grid=grid, config=Config(format="dcsc"))
    got = g.global_entries()
    if grid.rank == 0:
        el = kronecker(8, 16, seed=11)
        rows, cols = expected_entries(el, False)
        assert np.array_equal(got[0], rows) and np.array_equal(got[1], cols), (
            f"{shape}: Kronecker graph depends on the grid")
    roots = g.sample_roots(8, seed=3)
    again = DistGraph.kronecker(8, 16, seed=11, grid=grid).sample_roots(8, seed=3)
    assert np.array_equal(roots, again)
    if grid.rank == 0:
        print(f"roots {shape}: {roots.tolist()}", flush=True)
    bfs(g, int(roots[0])).validate(g)
    mem = g.memory()
    # An undirected graph's rank stores B_ij once, transposed: neither the search nor
    # the validation builds B_ij itself.
    assert mem["block"] == 0 and mem["tblock"] > 0, mem
    assert not g.block_held()
    assert mem["tuples"] > 0, mem


def check_validation_errors(grid: ProcessGrid, shape: str) -> None:
    """A leaf dropped from the tree (rule 4) or moved down (rule 2) fails on every rank.

    The tuples are checked as counts on the block entries: the number of bad
    tuples reported must be the input's, duplicates included, and the rule
    the serial validator's on the same arrays.
    """
    el = kronecker(9, 8, seed=5)
    for fmt in ("csr", "dcsc"):
        g = DistGraph.kronecker(9, 8, seed=5, grid=grid, config=Config(format=fmt))
        s = int(g.sample_roots(1, seed=0)[0])
        full = bfs(g, s).gather()
        v = None
        if grid.rank == 0:
            leaves = np.setdiff1d(np.flatnonzero(full.levels == 2), full.parents)
            v = int(leaves[0])
        v = C.bcast_obj(grid.comm, v)
        for kind, rule in (("far", 2), ("unreached", 4)):
            r = bfs(g, s)
            if r.lo <= v < r.hi:
                if kind == "far":
                    r.levels[v - r.lo] += 5
                else:
                    r.levels[v - r.lo] = r.parents[v - r.lo] = -1
            try:
                r.validate(g)
            except ValidationError as exc:
                text = str(exc)
            else:  # pragma: no cover - the test fails here
                raise AssertionError(f"{shape} {fmt} {kind}: corrupted result accepted")
            assert text.startswith(f"rule {rule} "), text
            if kind == "unreached" and grid.rank == 0:
                # Every input tuple touching v joins it to a reached vertex (or is a loop),
                # each duplicate counted.
                touch = ((el.src == v) | (el.dst == v)) & (el.src != el.dst)
                assert f"({int(touch.sum())} input edges break rule 3 or 4)" in text, text


def check_counters(grid: ProcessGrid, shape: str) -> None:
    """Words and messages of a bottom-up search with bitmaps follow from the grid alone."""
    g = DistGraph.kronecker(8, 8, seed=2, grid=grid)
    r = bfs(g, int(g.sample_roots(1)[0]), direction="bottom-up", frontier_encoding="bitmap")
    L, p, pr, pc, bw = len(r.stats), grid.size, grid.pr, grid.pc, g.dist.bw
    movers = int(C.allreduce(grid.comm, np.array([int(grid.transpose_dest != grid.rank)]))[0])
    w, m = r.words_by_phase(), r.messages_by_phase()
    # A 2 x 1 grid's ranks both know the source: no Allreduce and no gather for it.
    known = int((pr, pc) == (2, 1))
    want = {
        "rotate": (L * p * (pc - 1), L * p * (pc - 1) * bw),
        "frontier_gather": ((L - known) * p * (pr - 1), (L - known) * p * (pr - 1) * bw),
        "transpose": (L * movers, L * movers * bw),
        "allreduce": ((L + 1 - known) * p * (p - 1), (L + 1 - known) * p * (p - 1) * 4),
        "expand": (0, 0),
        "fold": (0, 0),
    }
    for ph, (msgs, words) in want.items():
        assert (m[ph], w[ph]) == (msgs, words), (shape, ph, m[ph], w[ph], msgs, words)
    td = bfs(g, int(g.sample_roots(1)[0]), direction="top-down", frontier_encoding="list")
    w = td.words_by_phase()
    assert w["rotate"] == 0 and w["parent_updates"] == 0 and w["frontier_gather"] == 0
    # An undirected graph's top-down runs as B^T x over the stored transposed block:
    # every frontier id goes to the pc - 1 other ranks of its processor row, and pairs
    # fold down the processor column (then to their owners) only between several rows.
    # (The last level's frontier is expanded too: it finds nothing.)
    assert w["expand"] == (pc - 1) * int(td.stats.frontier.sum()), (shape, w)
    assert (w["fold"] > 0) == (pr > 1), (shape, w)
    if pr == 1 or movers == 0:
        assert w["transpose"] == 0, (shape, w)
    # A directed graph keeps B_ij too: expand down the column, fold along the row.
    el = erdos_renyi(200, m=1600, seed=4, directed=True)
    src, dst = share(el, grid.rank, grid.size)
    gd = DistGraph.from_edges(src, dst, el.n, directed=True, grid=grid)
    wd = bfs(gd, 0, direction="top-down").words_by_phase()
    assert (wd["fold"] > 0) == (pc > 1), (shape, wd)
    assert (wd["expand"] > 0) == (pr > 1), (shape, wd)


def check_save(grid: ProcessGrid, shape: str) -> None:
    el = grid2d(9, 7)
    src, dst = share(el, grid.rank, grid.size)
    g = DistGraph.from_edges(src, dst, el.n, grid=grid)
    r = bfs(g, 4)
    full = r.gather()
    tmp = C.bcast_obj(grid.comm, tempfile.mkdtemp() if grid.rank == 0 else None)
    out = os.path.join(tmp, "res.npz")
    r.save(out)
    arrays = [("parents", r.parents), ("levels", r.levels)]
    # The ZIP64 layout of files beyond 4 GiB, and writes split in pieces of 24 bytes.
    out64 = os.path.join(tmp, "res64.npz")
    chunk = parallel_npz._WRITE_CHUNK
    parallel_npz._WRITE_CHUNK = 24
    try:
        parallel_npz.save_npz(grid.comm, out64, 4, g.n, g.lo, arrays, zip64=True)
    finally:
        parallel_npz._WRITE_CHUNK = chunk
    if grid.rank == 0:
        for path in (out, out64):
            with np.load(path) as z:
                assert int(z["source"]) == 4
                assert np.array_equal(z["parents"], full.parents), f"{shape}: {path} parents"
                assert np.array_equal(z["levels"], full.levels), f"{shape}: {path} levels"
            with zipfile.ZipFile(path) as zf:
                assert zf.testzip() is None, f"{shape}: {path} CRC"
                big = [i.filename for i in zf.infolist() if i.extract_version >= 45]
                assert big == ([] if path == out else zf.namelist()), (shape, path, big)
            os.remove(path)
        os.rmdir(tmp)


def check_chunked_alltoallv(grid: ProcessGrid) -> None:
    comm = grid.comm
    rng = np.random.default_rng(grid.rank)
    counts = rng.integers(0, 40, size=grid.size).astype(np.int64)
    counts[grid.rank % grid.size] = 0 if grid.rank % 2 else counts[grid.rank % grid.size]
    data = np.arange(int(counts.sum()), dtype=np.int64) + 1000 * grid.rank
    one, rc1 = C.alltoallv(comm, data, counts)
    many, rc2 = C.alltoallv(comm, data, counts, max_count=grid.size + 7)
    assert np.array_equal(rc1, rc2) and np.array_equal(one, many), "chunked alltoallv differs"
    sizes = np.arange(grid.size, dtype=np.int64) * 5 + 3
    mine = np.arange(sizes[grid.rank], dtype=np.int64) + 100 * grid.rank
    a = C.allgatherv(comm, mine, sizes)
    b = C.allgatherv(comm, mine, sizes, max_count=4)
    want = np.concatenate([np.arange(sizes[r]) + 100 * r for r in range(grid.size)])
    assert np.array_equal(a, want) and np.array_equal(b, want), "chunked allgatherv differs"


def check_bad_input(grid: ProcessGrid) -> None:
    el = path(10)
    try:
        g = DistGraph.from_edges(el.src + (5 if grid.rank == grid.size - 1 else 0), el.dst, 10,
                                 grid=grid)
    except CollectiveError as exc:
        assert "out of range" in str(exc), exc
    else:  # pragma: no cover - the test fails below
        raise AssertionError("bad ids were accepted")
    g = DistGraph.from_edges(el.src[:0], el.dst[:0], 10, grid=grid)
    for bad in (-1, 10):
        try:
            bfs(g, bad)
        except CollectiveError as exc:
            assert "out of range" in str(exc)
        else:
            raise AssertionError("bad source accepted")
    r = bfs(g, 3)  # no edges at all
    assert r.reached == 1
    size = g.hi - g.lo
    for out in ((np.empty(size + 1, np.int64), np.empty(size, np.int64)),
                (np.empty(size, np.int64), np.empty(size, np.int32)), (np.empty(size),)):
        try:
            bfs(g, 3, out=out)
        except ValueError as exc:
            assert "out" in str(exc), exc
        else:
            raise AssertionError(f"bad out accepted: {out}")


def main() -> None:
    install_excepthook()
    cases = [0]
    for shape in sys.argv[1:]:
        with sub_grid(shape) as grid:
            if grid is not None:
                check_grid(grid, shape, cases)
    from mpi4py import MPI

    if MPI.COMM_WORLD.Get_rank() == 0:
        print(f"ALL OK {cases[0]} searches on grids {' '.join(sys.argv[1:])}", flush=True)


if __name__ == "__main__":
    main()
