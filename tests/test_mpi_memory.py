"""The distributed construction in rounds and column groups builds the same graph.

:meth:`spbfs.mpi.DistGraph.kronecker` generates and routes its share ``chunk``
edges at a time, and :class:`spbfs.mpi._construct.ColumnBuckets` builds a
rank's block one column group at a time from 6-byte records: neither may
change the blocks, the tuple counts, the self-loops (their order included) or
the degrees. Each is compared here with a build of the same edges in one
round and one group (the MPI side under ``mpiexec`` on 2 and 4 ranks).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest
from mpi_launch import launch, needs_mpi

from spbfs.generators import kronecker_edges
from spbfs.mpi import _construct as K
from spbfs.mpi.grid import Distribution


def _parts(g):  # type: ignore[no-untyped-def]
    """What a rank's construction leaves: block, tuple counts, self-loops, degrees."""
    return {"ptr": g.tblock.ptr, "ind": g.tblock.ind, "counts": g._tuple_counts,
            "loop_rows": g._loops[0], "loop_cols": g._loops[1], "deg": g.piece_degrees()}


def _assert_same(a: dict, b: dict) -> None:
    for k in a:
        assert a[k].dtype == b[k].dtype and np.array_equal(a[k], b[k]), k


@pytest.mark.parametrize("chunk", [1, 777, 5000])
def test_kronecker_in_rounds_equals_one_round_and_the_edge_list(chunk: int) -> None:
    from spbfs.mpi import DistGraph

    scale, ef, seed = 10, 8, 6
    rounds = DistGraph.kronecker(scale, ef, seed=seed, grid="1x1", chunk=chunk)
    one = DistGraph.kronecker(scale, ef, seed=seed, grid="1x1", chunk=10**9)
    src, dst = kronecker_edges(scale, ef, seed=seed)
    given = DistGraph.from_edges(src, dst, 1 << scale, grid="1x1", chunk=10**9)
    assert rounds._loops[0].size > 0  # the order of the self-loops is compared too
    _assert_same(_parts(one), _parts(rounds))
    _assert_same(_parts(given), _parts(rounds))
    assert rounds.input_edges == src.size and rounds.local_tuples == src.size


@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("nbuckets", [2, 7, 64])
def test_column_groups_build_the_one_group_block(nbuckets: int, transpose: bool) -> None:
    d = Distribution(500, 1, 1)
    rng = np.random.default_rng(nbuckets)
    tup = rng.integers(0, d.B64, 3000).astype(np.int32)
    # Repeated records (one more than 255 times: wider counts) and self-loops.
    tup = np.concatenate([tup, np.tile(tup[:2], 300), np.repeat(tup[4:20:2], 2),
                          tup[:600]])
    mir = rng.integers(0, d.B64, 800).astype(np.int32)
    args = (0, 0, d.b, d.B64, d.B64, d.B64)
    one = K.build_columns([tup.copy()], [mir.copy()], *args, transpose=transpose)
    many = K.build_columns([tup.copy()], [mir.copy()], *args, transpose=transpose,
                           nbuckets=nbuckets)
    assert one[2].dtype == np.uint16 and one[3][0].size >= 8
    for a, b in zip([*one[:3], *one[3]], [*many[:3], *many[3]], strict=True):
        assert a.dtype == b.dtype and np.array_equal(a, b)


def test_records_arriving_in_pieces_keep_the_order_of_one_exchange() -> None:
    """Self-loops come out by source rank, each source's in its input order."""
    d = Distribution(256, 1, 1)
    rng = np.random.default_rng(5)
    # Two arrivals from three sources: the loops of source 0 in both arrivals come
    # before those of source 1.
    arrivals, sources = [], []
    for _ in range(2):
        sizes = rng.integers(5, 40, 3)
        arrivals.append([rng.integers(0, 9, 2 * s).astype(np.int32) for s in sizes])
        sources.append(sizes)
    whole = np.concatenate([a[s] for s in range(3) for a in arrivals])
    cols = K.ColumnBuckets(d.B64, 3, 0, 0, d.b, d.B64, True, 3, np.int32)
    for a, s in zip(arrivals, sources, strict=True):
        box = [np.concatenate(a)]
        cols.add(box, s)
        assert box == []
    got = cols.build(d.B64)
    want = K.build_columns([whole], [], 0, 0, d.b, d.B64, d.B64, d.B64, transpose=True)
    assert got[3][0].size > 3
    for a, b in zip([*got[:3], *got[3]], [*want[:3], *want[3]], strict=True):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("chunk", [0, -3, 2.5, True])
def test_a_bad_chunk_is_refused(chunk: object) -> None:
    from spbfs.mpi import DistGraph
    from spbfs.mpi.comm import CollectiveError

    with pytest.raises(CollectiveError, match="chunk must be a positive int"):
        DistGraph.kronecker(6, 4, grid="1x1", chunk=chunk)  # type: ignore[arg-type]
    with pytest.raises(CollectiveError, match="chunk must be a positive int"):
        DistGraph.from_edges([0, 1], [1, 2], 3, grid="1x1", chunk=chunk)  # type: ignore[arg-type]


_SCRIPT = """
import sys
import numpy as np
from spbfs.generators import kronecker_edges
from spbfs.mpi import DistGraph, ProcessGrid

g = ProcessGrid(sys.argv[1])

def parts(x):
    return [x.tblock.ptr, x.tblock.ind, x._tuple_counts, *x._loops, x.piece_degrees()]

def same(a, b):
    return all(p.dtype == q.dtype and np.array_equal(p, q) for p, q in zip(a, b))

rounds = DistGraph.kronecker(11, 8, seed=3, grid=g, chunk=333)
one = DistGraph.kronecker(11, 8, seed=3, grid=g, chunk=10**9)
src, dst = kronecker_edges(11, 8, seed=3)
mine = slice(g.rank * src.size // g.size, (g.rank + 1) * src.size // g.size)
given = DistGraph.from_edges(src[mine], dst[mine], 1 << 11, grid=g, chunk=10**9)
for directed in (False, True):
    # Uneven shares: rank 0 holds most edges, so the ranks' rounds differ in length.
    cut = slice(0, src.size * 3 // 4) if g.rank == 0 else \\
        slice(src.size * 3 // 4 + (g.rank - 1), src.size, g.size - 1)
    a = DistGraph.from_edges(src[cut], dst[cut], 1 << 11, directed=directed, grid=g, chunk=97)
    b = DistGraph.from_edges(src[cut], dst[cut], 1 << 11, directed=directed, grid=g)
    print(f"rank {g.rank} directed={directed} same={same(parts(a), parts(b))}")
print(f"rank {g.rank} rounds={same(parts(rounds), parts(one))} "
      f"given={same(parts(rounds), parts(given))} loops={rounds._loops[0].size}")
"""


@pytest.mark.mpi
@needs_mpi
@pytest.mark.parametrize(("nranks", "grid"), [(2, "2x1"), (4, "2x2")])
def test_grid_construction_in_rounds_equals_one_round(tmp_path: Path, nranks: int,
                                                      grid: str) -> None:
    script = tmp_path / "rounds.py"
    script.write_text(textwrap.dedent(_SCRIPT))
    rc, out, err, _ = launch(nranks, [str(script), grid], timeout=240)
    assert rc == 0, err
    for r in range(nranks):
        assert f"rank {r} rounds=True given=True" in out, out
        assert f"rank {r} directed=False same=True" in out, out
        assert f"rank {r} directed=True same=True" in out, out
