"""Semiring traversals on the grid: ``mpiexec -n P python semiring_cases.py GRID...``.

Every grid named on the command line (``RxC`` with ``R·C = P``) runs
``spbfs.mpi.bfs`` with ``semiring="plus_second"`` (shortest-path counts) and
``semiring="any_pair"`` (levels only) on small graphs whose vertex counts do
not divide by the grid (a Kronecker graph with isolated vertices, a 2-D
lattice, a directed random graph), in both formats and in every direction.
Rank 0 compares the gathered levels and values with ``spbfs.bfs`` on one
process, exactly; ``spbfs.bfs`` given the DistGraph itself must run the grid
search with the one-process options (output, semiring, max_depth). Bad arguments must raise the same
:class:`~spbfs.mpi.CollectiveError` on every rank. Any failure raises and the
installed excepthook aborts the job. Prints ``ALL OK <cases>`` on rank 0.
"""

from __future__ import annotations

import numpy as np
from case_runner import both_graphs, run_cases

import spbfs
from spbfs.edges import EdgeList
from spbfs.generators import erdos_renyi, grid2d, kronecker
from spbfs.mpi import CollectiveError, DistGraph, ProcessGrid
from spbfs.mpi import bfs as dist_bfs


def graphs() -> list[tuple[str, EdgeList, bool]]:
    return [("kron7", kronecker(7, 4, seed=5), False),   # n = 128, isolated vertices
            ("grid7x6", grid2d(7, 6), False),              # n = 42: paths multiply
            ("er101d", erdos_renyi(101, m=300, seed=2, directed=True), True)]


def check_graph(grid: ProcessGrid, name: str, el: EdgeList, directed: bool, fmt: str,
                cases: list[int]) -> None:
    rank = grid.rank
    g, serial = both_graphs(grid, el, directed, fmt)
    root = rank == 0
    hub = int(np.argmax(np.bincount(el.src, minlength=el.n)))
    # Every direction from one source; the policy's choice from two more (the last
    # vertex lives on the last rank, whose piece is the short one).
    runs = [(0, d) for d in ("top-down", "bottom-up", "auto")] + [(el.n - 1, "auto"),
                                                                   (hub, "auto")]
    for source, direction in runs:
        tag = f"{grid.pr}x{grid.pc} {name} {fmt} s={source} {direction}"
        res = dist_bfs(g, source, semiring="plus_second", direction=direction)
        # The exchanges are counted as the BFS's are: nothing on one rank, and each
        # phase the grid's shape calls for.
        w = res.words_by_phase()
        if grid.size == 1:
            assert not any(w.values()), (tag, w)
        else:
            assert w["allreduce"] > 0, (tag, w)
            assert (w["expand"] > 0) == (grid.pr > 1), (tag, w)
            if direction == "top-down" and grid.pc > 1:
                assert w["fold"] > 0, (tag, w)
        r = res.gather()
        if root:
            ref = spbfs.bfs(serial, source, semiring="plus_second", direction=direction)
            assert r.parents is None and r.values.dtype == ref.values.dtype, tag
            np.testing.assert_array_equal(r.levels, ref.levels, err_msg=tag)
            np.testing.assert_array_equal(r.values, ref.values, err_msg=tag)
            # The same levels, directions and edge counts as one process.
            assert np.array_equal(r.stats.discovered, ref.stats.discovered), tag
            assert np.array_equal(r.stats.direction, ref.stats.direction), tag
            assert np.array_equal(r.stats.edges, ref.stats.edges), tag
            assert r.stopped == ref.stopped, tag
            cases[0] += 1
    r = dist_bfs(g, hub, semiring="any_pair").gather()
    if root:
        ref = spbfs.bfs(serial, hub, semiring="any_pair")
        assert r.parents is None and r.values is None, name
        np.testing.assert_array_equal(r.levels, ref.levels, err_msg=f"{name} any_pair")
        cases[0] += 1
    # spbfs.bfs itself takes the DistGraph: the script of one process runs on the grid.
    # The grid search called directly honours its config's output the same way.
    for output in ("both", "parents", "levels"):
        by_config = g.config.replace(output=output)
        for how, res in (("spbfs.bfs", spbfs.bfs(g, hub, output=output, direction="top-down")),
                         ("config", dist_bfs(g, hub, config=by_config, direction="top-down"))):
            r = res.gather()
            if root:
                ref = spbfs.bfs(serial, hub, output=output, direction="top-down")
                for field in ("parents", "levels"):
                    got, want = getattr(r, field), getattr(ref, field)
                    assert (got is None) == (want is None), (name, how, output, field)
                    if want is not None:
                        np.testing.assert_array_equal(got, want,
                                                      err_msg=f"{name} {how} {output}")
                cases[0] += 1
    r = spbfs.bfs(g, 0, semiring="plus_second", max_depth=3).gather()
    if root:
        ref = spbfs.bfs(serial, 0, semiring="plus_second", max_depth=3)
        np.testing.assert_array_equal(r.values, ref.values, err_msg=f"{name} spbfs.bfs")
        cases[0] += 1
    if not name.startswith("grid"):
        return
    # max_depth and target stop the grid where they stop one process; source_value travels.
    for kw in ({"max_depth": 2}, {"target": el.n - 1}, {"source_value": 3}):
        r = dist_bfs(g, 0, semiring="plus_second", **kw).gather()
        if root:
            ref = spbfs.bfs(serial, 0, semiring="plus_second", **kw)
            np.testing.assert_array_equal(r.values, ref.values, err_msg=f"{name} {kw}")
            np.testing.assert_array_equal(r.levels, ref.levels, err_msg=f"{name} {kw}")
            assert r.stopped == ref.stopped, (name, kw)
            cases[0] += 1


def check_bad_input(grid: ProcessGrid) -> None:
    el = grid2d(3, 3)
    g = DistGraph.from_edges(el.src, el.dst, el.n, grid=grid)

    def expect(text: str, **kwargs: object) -> None:
        try:
            dist_bfs(g, 0, **kwargs)
        except CollectiveError as exc:
            assert text in str(exc), (text, str(exc))
        else:
            raise AssertionError(f"bfs{kwargs} accepted bad input")

    expect("unknown semiring 'plus_secnd'", semiring="plus_secnd")
    expect("source_value=2 is for semirings", source_value=2)
    expect("source_value must be a real number", semiring="plus_second", source_value="1")
    expect("positional operators", semiring="plus_secondi")
    expect("the config's output='parents' asks for parents", semiring="plus_second",
           config=g.config.replace(output="parents"))
    expect("leave out out", semiring="plus_second",
           out=(np.zeros(g.hi - g.lo, np.int64), np.zeros(g.hi - g.lo, np.int64)))
    # spbfs.bfs on a DistGraph: what one process refuses, every rank refuses alike.
    for text, kwargs in (("reverse=True", {"reverse": True}),
                         ("output", {"output": "edges"}),
                         ("parents", {"semiring": "plus_second", "output": "parents"})):
        try:
            spbfs.bfs(g, 0, **kwargs)
        except ValueError as exc:
            assert text in str(exc), (text, str(exc))
        else:
            raise AssertionError(f"spbfs.bfs{kwargs} accepted bad input on a DistGraph")
    try:
        spbfs.bfs(g, g.n)
    except CollectiveError as exc:
        assert "source" in str(exc), str(exc)
    else:
        raise AssertionError("spbfs.bfs accepted a source out of range on a DistGraph")


def main() -> None:
    run_cases(graphs, check_graph, check_bad_input)


if __name__ == "__main__":
    main()
