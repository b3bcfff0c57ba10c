"""The distributed validator on broken results: ``mpiexec -n P python validate_cases.py GRID...``.

For every grid named on the command line (``RxC`` with ``R·C = P``) and every
test graph (an undirected lattice with a second component and isolated
vertices, a directed lattice with vertices it cannot reach, a small Kronecker
graph with isolated vertices: no ``n`` divides by 2, 3, 4 or 6), built in one
block format or the other (see :func:`formats`), a correct distributed search
is validated, then its result is broken in one way at a time (on the ranks
owning the changed vertices only) and
:meth:`~spbfs.mpi.bfs.DistBFSResult.validate` must raise
:class:`~spbfs.validate.ValidationError` on every rank, with the same message,
rule and example everywhere, naming the rule the break violates. Rank 0 runs
the serial :func:`~spbfs.validate.validate_bfs_tree` on the same broken full
arrays: it must fail with the same rule, and, for the rules about vertices
(1, 2, 5 and the levels check), with the very same message and example. For
the edge rules 3 and 4 each validator names the first offending edge it met
(the serial one with its index in the edge list, which no rank knows here), so
the counts of offending edges must agree, the edge named must be an input edge
that breaks the rule, and when both name the same edge the messages must be
equal but for the index.

Then the search runs with 64-bit local indices (``Config(index_dtype="int64")``):
the blocks must hold int64 ids, the pieces must equal those of the same search
over int32 blocks, the levels scipy's, and the parents must pass both
validators; a break of that result must be caught too.

Any failure raises, and the installed excepthook aborts the job with a
non-zero status. Prints ``VALIDATE OK <cases>`` on rank 0 at the end.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import sys
from collections.abc import Callable, Iterator

import numpy as np
from case_runner import sub_grid

from spbfs import Config
from spbfs.edges import EdgeList
from spbfs.generators import grid2d, kronecker
from spbfs.mpi import DistGraph, ProcessGrid, bfs, install_excepthook
from spbfs.mpi.bfs import DistBFSResult
from spbfs.validate import ValidationError, reference_levels, validate_bfs_tree

#: A break: (name, expected rule, broken parents, broken levels), full arrays.
Break = tuple[str, int | str, np.ndarray, np.ndarray]


def with_extra(el: EdgeList, extra_src: list[int], extra_dst: list[int], n: int,
               directed: bool) -> EdgeList:
    """``el`` plus a few edges among new vertices, over ``n`` vertices."""
    src = np.concatenate([el.src, np.asarray(extra_src, dtype=np.int64)])
    dst = np.concatenate([el.dst, np.asarray(extra_dst, dtype=np.int64)])
    return EdgeList(src, dst, n, directed=directed)


@functools.cache
def graphs() -> list[tuple[str, EdgeList, bool, int]]:
    """The test graphs as (name, edges, directed, source), made once.

    Every ``n`` is prime or otherwise not a multiple of 2, 3, 4 or 6, so the
    last pieces are short or empty on every grid the tests use.
    """
    lattice = grid2d(7, 5)  # 35 vertices; a path 35-36-37-38; 39 and 40 isolated
    undirected = with_extra(lattice, [35, 36, 37], [36, 37, 38], 41, False)
    # grid2d's edges point from the smaller id to the larger: as arcs, vertex 0
    # reaches the whole lattice. 30 -> 31 and 30 -> 0 are out of its reach, 32..34 isolated.
    arcs = with_extra(grid2d(6, 5), [30, 30], [31, 0], 35, True)
    kron = kronecker(6, 8, seed=1)  # 64 vertices, some isolated; plus 3 isolated ones
    kron = EdgeList(kron.src, kron.dst, 67, directed=False)
    deg = np.bincount(kron.src, minlength=67) + np.bincount(kron.dst, minlength=67)
    return [("lattice+", undirected, False, 8), ("arcs", arcs, True, 0),
            ("kron6+", kron, False, int(np.argmax(deg)))]


def share(el: EdgeList, rank: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    """This rank's contiguous share of the edge list."""
    m = el.num_edges
    lo, hi = rank * m // size, (rank + 1) * m // size
    return el.src[lo:hi], el.dst[lo:hi]


def breaks(el: EdgeList, directed: bool, source: int, par: np.ndarray,
           lev: np.ndarray) -> Iterator[Break]:
    """Every way this test breaks a correct result ``(par, lev)``, and the rule it violates.

    Each break changes as little as possible so that exactly the named rule is
    the first one the serial validator (whose order of checks the distributed
    one follows) trips over; a break the graph cannot host is skipped (the
    caller checks that every break ran on some graph).
    """
    n = el.n
    arcs = set(zip(el.src.tolist(), el.dst.tolist(), strict=True))
    if not directed:
        arcs |= {(v, u) for u, v in arcs}
    children = np.bincount(par[(par >= 0) & (np.arange(n) != source)], minlength=n)
    reached = np.flatnonzero(lev >= 0)
    inner = reached[reached != source]  # reached, not the source
    unreached = np.flatnonzero(lev < 0)
    out_deg = np.bincount([a for a, _ in arcs], minlength=n)
    in_deg = np.bincount([b for _, b in arcs], minlength=n)

    def edit(name: str, rule: int | str, p: dict[int, int], lv: dict[int, int]) -> Break:
        bp, bl = par.copy(), lev.copy()
        for v, x in p.items():
            bp[v] = x
        for v, x in lv.items():
            bl[v] = x
        return name, rule, bp, bl

    # Rule 1. A tree edge p -> v turned around (parent[p] = v): a cycle of two.
    # No cycle can keep every tree edge one level apart (levels would have to
    # grow all the way round), so rule 2 breaks too; the serial validator looks
    # for cycles first and so must the distributed one.
    v = int(next(x for x in inner if lev[x] >= 2))
    yield edit("cycle (a tree edge turned around)", 1, {int(par[v]): v}, {})
    # Two neighbours on one level pointing at each other (lattices have none).
    same = sorted((u, w) for u, w in arcs if u < w and lev[u] == lev[w] >= 1
                  and (w, u) in arcs)
    if same:
        u, w = same[0]
        yield edit("cycle (two neighbours on one level)", 1, {u: w, w: u}, {})
    # A longer cycle: v's parent chain closed on v at the level-1 ancestor.
    deep = int(inner[np.argmax(lev[inner])])
    top = deep
    while lev[par[top]] >= 1:
        top = int(par[top])
    yield edit("cycle (the chain of the deepest vertex closed)", 1, {top: deep}, {})
    v = int(inner[len(inner) // 2])
    yield edit("vertex its own parent", 1, {v: v}, {})
    yield edit("parent out of range", 1, {v: n}, {})
    # Rule 5: a parent one level up that is no in-neighbour.
    found = next(((int(x), int(w)) for x in inner if lev[x] >= 2
                  for w in np.flatnonzero(lev == lev[x] - 1)
                  if (int(w), int(x)) not in arcs), None)
    assert found is not None, "no vertex has a non-neighbour one level up"
    x, w = found
    yield edit("parent not an in-neighbour", 5, {x: w}, {})
    # Rule 2 (given levels): one level off by one.
    leaf = int(next(x for x in inner if children[x] == 0 and lev[x] >= 2))
    yield edit("level one too high", 2, {}, {leaf: int(lev[leaf]) + 1})
    yield edit("level one too low", 2, {}, {leaf: int(lev[leaf]) - 1})
    hub = int(next(x for x in inner if children[x] > 0))
    yield edit("inner vertex's level one too high", 2, {}, {hub: int(lev[hub]) + 1})
    # A reached vertex left out: its children dangle (rule 1), or, a leaf, the
    # edge from its parent joins reached and unreached (rule 4).
    yield edit("inner vertex left out", 1, {hub: -1}, {hub: -1})
    yield edit("leaf left out", 4, {leaf: -1}, {leaf: -1})
    # An unreachable vertex given a parent: its edges to unreached vertices
    # break rule 4; an isolated one has only the tree edge to object to (rule 5).
    anchor = int(inner[0])
    linked = [int(u) for u in unreached if any(lev[b] < 0 and b != u for a, b in arcs if a == u)]
    if linked:
        yield edit("unreachable vertex with edges given a parent", 4, {linked[0]: anchor},
                   {linked[0]: int(lev[anchor]) + 1})
    isolated = [int(u) for u in unreached if out_deg[u] == 0 and in_deg[u] == 0]
    if isolated:
        yield edit("isolated vertex given a parent", 5, {isolated[-1]: anchor},
                   {isolated[-1]: int(lev[anchor]) + 1})
    # Rule 3 alone: a valid tree that is not breadth-first. A leaf moves under
    # a neighbour one level deeper, two levels below its old parent.
    moved = next(((int(x), int(q)) for x in inner if children[x] == 0
                  for q in np.flatnonzero(lev == lev[x] + 1) if (int(q), int(x)) in arcs), None)
    if moved is not None:
        x, q = moved
        yield edit("leaf moved two levels down", 3, {x: q}, {x: int(lev[x]) + 2})
    # The source: not its own parent, not at level 0, left out.
    first = int(np.flatnonzero(lev == 1)[0])
    yield edit("source's parent a neighbour", 1, {source: first}, {})
    yield edit("source at level 1", "levels", {}, {source: 1})
    yield edit("source left out", 1, {source: -1}, {source: -1})
    # The levels check: levels and parents disagree, or an unreached level below -1.
    yield edit("reached vertex with level -1", "levels", {}, {leaf: -1})
    yield edit("unreached vertex at level -2", "levels", {}, {int(unreached[0]): -2})


def broken(result: DistBFSResult, bpar: np.ndarray, blev: np.ndarray) -> DistBFSResult:
    """A copy of ``result`` whose pieces take the broken values; only owners change."""
    par, lev = result.parents.copy(), result.levels.copy()
    lo, hi = result.lo, result.hi
    changed = np.flatnonzero((bpar[lo:hi] != par) | (blev[lo:hi] != lev))
    par[changed] = bpar[lo + changed]
    lev[changed] = blev[lo + changed]
    return dataclasses.replace(result, parents=par, levels=lev)


def caught(call: Callable[[], object]) -> tuple[str, object, object] | None:
    """``(message, rule, example)`` of the ValidationError ``call`` raises, None if none."""
    try:
        call()
    except ValidationError as exc:
        return str(exc), exc.rule, exc.example
    return None


def edge_count(message: str) -> str:
    """The count of offending input edges a rule 3/4 message ends with."""
    m = re.search(r"\((\d+) input (edge|arc)s break rule 3 or 4\)$", message)
    assert m is not None, f"no edge count in {message!r}"
    return m.group(1)


def check_case(g: DistGraph, r: DistBFSResult, el: EdgeList, directed: bool, source: int,
               brk: Break, case: str) -> None:
    """Validate one broken result distributed, and on rank 0 serially; compare."""
    comm = g.grid.comm
    _, rule, bpar, blev = brk
    got = caught(lambda: broken(r, bpar, blev).validate(g))
    everyone = comm.allgather(got)
    assert all(x == everyone[0] for x in everyone), f"{case}: the ranks disagree: {everyone}"
    assert got is not None, f"{case}: accepted by the distributed validator"
    msg, drule, example = got
    assert drule == rule, f"{case}: rule {drule!r}, expected {rule!r}: {msg}"
    head = f"rule {rule} (" if isinstance(rule, int) else "levels check failed:"
    assert msg.startswith(head), f"{case}: {msg}"
    if g.grid.rank != 0:
        return
    serial = caught(lambda: validate_bfs_tree(el, source, bpar, blev, directed=directed))
    assert serial is not None, f"{case}: accepted by the serial validator"
    assert serial[1] == drule, f"{case}: serial says {serial[0]!r}, not {msg!r}"
    if drule not in (3, 4):
        assert serial == got, f"{case}: serial {serial} vs distributed {got}"
        return
    # The edge rules: the same count; the edge named is an input edge that breaks them.
    assert edge_count(serial[0]) == edge_count(msg), f"{case}: serial {serial[0]!r} vs {msg!r}"
    u, v = example
    assert ((el.src == u) & (el.dst == v)).any(), f"{case}: {example} is no input edge"
    lu, lv = (int(blev[u]), int(blev[v]))
    if drule == 4:
        assert (lu < 0) != (lv < 0) and (lu >= 0 or not directed), f"{case}: {msg}"
    else:
        assert min(lu, lv) >= 0 and (lv - lu > 1 if directed else abs(lv - lu) > 1), msg
    if serial[2] == example:
        assert re.sub(r"input (edge|arc) \d+ ", r"input \1 ", serial[0]) == msg, \
            f"{case}: serial {serial[0]!r} vs {msg!r}"


#: A correct search per (graph, format) with int32 blocks: parents and levels
#: pieces and what the distributed validator returned.
Baseline = dict[tuple[str, str], tuple[np.ndarray, np.ndarray, dict]]


def formats(grid: ProcessGrid, k: int) -> tuple[str, ...]:
    """The block formats graph ``k`` is built in on ``grid``.

    One per graph and grid, alternating with ``k`` and with the grid shape, so a
    run covers both and every graph meets both over the grids of the test
    (1x1, 1x2, 2x1, 1x3, 2x2, 3x2). The validator never reads the blocks, only
    the input tuples; the format matters for the search whose result is broken.
    ``SPBFS_TEST_ALL_FORMATS=1`` builds every graph in both.
    """
    if os.environ.get("SPBFS_TEST_ALL_FORMATS") == "1":
        return ("csr", "dcsc")
    return (("csr", "dcsc")[(k + grid.pr + grid.pc) % 2],)


def check_breaks(grid: ProcessGrid, shape: str, ran: set[str], baseline: Baseline) -> int:
    """Every break of every graph; returns the number of cases."""
    comm = grid.comm
    rank = grid.rank
    cases = 0
    for k, (gname, el, directed, source) in enumerate(graphs()):
        for fmt in formats(grid, k):
            src, dst = share(el, rank, grid.size)
            g = DistGraph.from_edges(src, dst, el.n, directed=directed, grid=grid,
                                     config=Config(format=fmt))
            tag = f"{shape} {gname} {fmt}"
            # "auto" picks int32 at this size: check_int64 compares against it.
            assert g.block.index_dtype == np.int32, f"{tag}: {g.block}"
            r = bfs(g, source)
            info = r.validate(g)
            baseline[gname, fmt] = (r.parents, r.levels, info)
            full = r.gather()
            par, lev = comm.bcast((full.parents, full.levels) if rank == 0 else None)
            if rank == 0:
                want = validate_bfs_tree(el, source, par, lev, directed=directed)
                assert want == info, f"{tag}: correct result: {info} != serial {want}"
                assert np.array_equal(lev, reference_levels(el.src, el.dst, el.n, source,
                                                            directed=directed)), tag
            for brk in breaks(el, directed, source, par, lev):
                ran.add(brk[0])
                check_case(g, r, el, directed, source, brk, f"{tag}: {brk[0]}")
                cases += 1
            # The breaks worked on copies: the search's own pieces still pass.
            assert r.validate(g) == info, f"{tag}: the result changed"
    return cases


def check_int64(grid: ProcessGrid, shape: str, baseline: Baseline) -> int:
    """The search with 64-bit local indices: int64 blocks, scipy's levels, valid parents,
    and the very pieces the int32 search found (only the index width differs)."""
    comm = grid.comm
    rank = grid.rank
    cases = 0
    for k, (gname, el, directed, source) in enumerate(graphs()):
        src, dst = share(el, rank, grid.size)
        for fmt in formats(grid, k):
            tag = f"{shape} {gname} {fmt} int64"
            g = DistGraph.from_edges(src, dst, el.n, directed=directed, grid=grid,
                                     config=Config(format=fmt, index_dtype="int64"))
            for b in (g.block, g.tblock):
                assert b.index_dtype == np.int64 and b.ind.dtype == np.int64, f"{tag}: {b}"
            r = bfs(g, source)
            info = r.validate(g)
            full = r.gather()
            if rank == 0:
                want = reference_levels(el.src, el.dst, el.n, source, directed=directed)
                assert np.array_equal(full.levels, want), f"{tag}: levels differ from scipy"
                v = validate_bfs_tree(el, source, full.parents, full.levels, directed=directed)
                assert v == info, f"{tag}: serial {v} != distributed {info}"
            p32, l32, i32 = baseline[gname, fmt]
            assert np.array_equal(r.parents, p32) and np.array_equal(r.levels, l32), \
                f"{tag}: the int32 and int64 searches differ on rank {rank}"
            assert info == i32, f"{tag}: {info} != {i32}"
            cases += 1
    # A break of a result the int64 kernels found is caught as well.
    par, lev = comm.bcast((full.parents, full.levels) if rank == 0 else None)
    brk = next(b for b in breaks(el, directed, source, par, lev)
               if b[0] == "parent not an in-neighbour")
    check_case(g, r, el, directed, source, brk, f"{shape} {gname} {fmt} int64: {brk[0]}")
    return cases + 1


def main() -> None:
    install_excepthook()
    cases = 0
    ran: set[str] = set()
    for shape in sys.argv[1:]:
        with sub_grid(shape) as grid:
            if grid is None:
                continue
            baseline: Baseline = {}
            cases += check_breaks(grid, shape, ran, baseline)
            cases += check_int64(grid, shape, baseline)
    # Breaks a graph cannot host are skipped; each must have run on some graph.
    assert len(ran) == 19, sorted(ran)
    from mpi4py import MPI

    if MPI.COMM_WORLD.Get_rank() == 0:
        print(f"VALIDATE OK {cases} cases on grids {' '.join(sys.argv[1:])}", flush=True)


if __name__ == "__main__":
    main()
