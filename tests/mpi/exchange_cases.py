"""Exchange patterns x frontier encodings: ``mpiexec -n P python exchange_cases.py GRID...``.

For each grid named (``RxC``, ``R·C = P``): graphs whose sizes do not divide
by the rank count (a Kronecker graph, a 2-D lattice with many levels, a
directed random graph), both formats, every direction mode, every
``exchange`` x ``frontier_encoding`` value. Levels must equal scipy's
(:func:`spbfs.validate.reference_levels`), parents pass the distributed
Graph500 check; the counters must show what the pattern does (a compressed
search sends fewer frontier words than a list search at the same levels on
the Kronecker graph; the butterfly's and the collectives' messages are those
of :mod:`spbfs.mpi.exchange`), and an ``auto`` search keeps its record of
choices. A search under the emulated 1 GbE link gives the same answer and
takes at least the model's time. Prints ``ALL OK <cases>`` on rank 0.
"""

from __future__ import annotations

import sys
import time

import numpy as np
from case_runner import sub_grid

from spbfs import Config, Graph
from spbfs.algorithms import connected_components, multi_source_bfs, sssp
from spbfs.algorithms.distributed import dist_connected_components, dist_multi_source_bfs, dist_sssp
from spbfs.edges import EdgeList
from spbfs.generators import erdos_renyi, grid2d, kronecker
from spbfs.mpi import DistGraph, ProcessGrid, bfs, install_excepthook
from spbfs.mpi.network import LinkModel
from spbfs.validate import reference_levels

EXCHANGES = ("p2p", "collective", "butterfly", "auto")
ENCODINGS = ("list", "bitmap", "compressed", "auto")
DIRECTIONS = ("auto", "top-down", "bottom-up")


def graphs() -> list[tuple[str, EdgeList, bool]]:
    return [("kron9", kronecker(9, 8, seed=5), False), ("grid23x17", grid2d(23, 17), False),
            ("er301d", erdos_renyi(301, m=900, seed=2, directed=True), True)]


def share(el: EdgeList, rank: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = rank * el.num_edges // size, (rank + 1) * el.num_edges // size
    return el.src[lo:hi], el.dst[lo:hi]


def frontier_words(r: object) -> int:
    w = r.words_by_phase()  # type: ignore[attr-defined]
    return int(w["transpose"] + w["expand"] + w["frontier_gather"])


def check_grid(grid: ProcessGrid, shape: str, cases: list[int]) -> None:
    rank = grid.rank
    for name, el, directed in graphs():
        src = int(np.argmax(np.bincount(el.src, minlength=el.n)))
        want = reference_levels(el.src, el.dst, el.n, src, directed=directed)
        for fmt in ("csr", "dcsc"):
            s, d = share(el, rank, grid.size)
            g = DistGraph.from_edges(s, d, el.n, directed=directed, grid=grid,
                                     config=Config(format=fmt, butterfly_fanout=2 + cases[0] % 3))
            words: dict[tuple[str, str], int] = {}
            # Every combination in every direction on one graph and format of the square
            # grids with several ranks a row and a column, 2x2 and 3x3 (every phase's
            # pattern then moves data; 3x3 has three ranks along both); elsewhere, 2x3
            # and 3x2 and the 1-D grids included, each exchange x encoding combination
            # once, the directions in turn, which still runs every pair of direction,
            # exchange and encoding values on every grid, graph and format (a 9-rank
            # job on 2 cores: the whole product on 2x3 and 3x2 too took 56 more searches).
            every = name == "kron9" and fmt == "csr" and grid.pr == grid.pc > 1
            combos = [(dr, ex, enc) for dr in DIRECTIONS for ex in EXCHANGES for enc in ENCODINGS
                      if every or DIRECTIONS.index(dr) == (EXCHANGES.index(ex)
                                                          + ENCODINGS.index(enc)) % 3
                      or (dr == "top-down" and ex == "p2p")]
            for direction, ex, enc in combos:
                tag = f"{shape} {name} {fmt} {direction} {ex} {enc}"
                # auto on one machine is the size rule; a given link makes the cost
                # model decide (every other case).
                cfg = g.config.replace(exchange=ex, frontier_encoding=enc)
                if cases[0] % 2:
                    cfg = cfg.replace(link_latency_us=2.0, link_gbps=20.0)
                r = bfs(g, src, direction=direction, config=cfg)
                try:
                    r.validate(g)
                except Exception as exc:
                    raise AssertionError(f"{tag}: {exc}") from exc
                full = r.gather()
                if rank == 0:
                    assert np.array_equal(full.levels, want), f"{tag}: levels differ"
                modelled = cfg.link_gbps is not None
                # The record holds the model's choices (one machine without a given
                # link keeps the size rule and records nothing).
                auto = "auto" in (ex, enc)
                assert bool(r.exchange_log) == (auto and modelled and grid.size > 1
                                                and len(r.stats) > 1), tag
                for rec in r.exchange_log:
                    assert rec["pattern"] in ("p2p", "collective", "butterfly"), rec
                    assert rec["encoding"] in ("list", "bitmap", "compressed"), rec
                    assert rec["actual_s"] >= 0, rec
                    # The model prices what it chose; the shared-memory rule does not
                    # (and never compresses).
                    est = rec["estimated_s"]
                    assert est >= 0 if modelled else (est != est or est == 0), rec
                    if not modelled and enc == "auto":
                        assert rec["encoding"] != "compressed", rec
                if ex == "p2p" and direction == "top-down":
                    words[enc, direction] = frontier_words(r)
                cases[0] += 1
            # kron9 is undirected: its top-down expands along the processor row (the
            # transposed product over the one stored block, see spbfs.mpi.bfs).
            if name == "kron9" and grid.pc >= 4 and fmt == "csr":
                # Green's point: log_f(q) rounds of f - 1 messages instead of q - 1 messages.
                gf = DistGraph.from_edges(s, d, el.n, directed=directed, grid=grid,
                                          config=Config(butterfly_fanout=2))
                m = {ex: bfs(gf, src, direction="top-down", exchange=ex,
                             frontier_encoding="list").messages_by_phase()["expand"]
                     for ex in ("p2p", "butterfly")}
                assert m["butterfly"] < m["p2p"], m
            if name == "kron9" and grid.pc > 1:
                # Piece-local ids packed in ~log2(B) bits: far fewer words than 64-bit ids.
                assert words["compressed", "top-down"] < words["list", "top-down"], words
        # The emulated link: same levels, and the search waits at least the model's time
        # for the messages it counted (a lower bound only).
        cfg = Config(format="csr", network="1gbe")
        s, d = share(el, rank, grid.size)
        g = DistGraph.from_edges(s, d, el.n, directed=directed, grid=grid, config=cfg)
        t0 = time.perf_counter()
        r = bfs(g, src)
        took = time.perf_counter() - t0
        full = r.gather()
        if rank == 0:
            assert np.array_equal(full.levels, want), f"{shape} {name}: emulated levels differ"
        if grid.size > 1:
            link = LinkModel.parse("1gbe")
            # Every level ends with an Allreduce of at least one round on every rank.
            assert took >= len(r.stats) * link.latency_s, (took, len(r.stats))
        cases[0] += 1


def check_registered_encoding(grid: ProcessGrid, shape: str, cases: list[int]) -> None:
    """An encoding registered from outside (``toy_encoding``) runs a search like the default."""
    import toy_encoding

    toy_encoding.install()
    el = kronecker(9, 8, seed=5)
    src = int(np.argmax(np.bincount(el.src, minlength=el.n)))
    s, d = share(el, grid.rank, grid.size)
    for fmt in ("csr", "dcsc"):
        g = DistGraph.from_edges(s, d, el.n, grid=grid, config=Config(format=fmt))
        want = bfs(g, src).gather()
        before = toy_encoding.CHECKED.decoded
        for direction in DIRECTIONS:
            r = bfs(g, src, direction=direction, frontier_encoding=toy_encoding.NAME)
            r.validate(g)
            full = r.gather()
            if grid.rank == 0:
                assert np.array_equal(full.levels, want.levels), f"{shape} {fmt} {direction}"
            cases[0] += 1
        # Every level's frontier from the other rank of a chunk came through its decode.
        assert toy_encoding.CHECKED.decoded > before or grid.pr == grid.pc == 1, shape


def check_algorithms(grid: ProcessGrid, shape: str, cases: list[int]) -> None:
    """The distributed algorithms move their vectors by the same patterns (GridOps).

    Each exchange on one graph of each grid, the graph turning with the grid
    (``pr + pc``): every grid runs every exchange and every graph (the directed one
    too), and the grids together run every exchange on every graph.
    """
    all_graphs = graphs()
    for k, ex in enumerate(EXCHANGES):
        name, el, directed = all_graphs[(k + grid.pr + grid.pc) % len(all_graphs)]
        tag = f"{shape} {name} {ex}"
        s, d = share(el, grid.rank, grid.size)
        g = DistGraph.from_edges(s, d, el.n, directed=directed, grid=grid,
                                 config=Config(exchange=ex, butterfly_fanout=3))
        r_cc = dist_connected_components(g).gather()
        r_sp = dist_sssp(g, 0).gather()
        r_ms = dist_multi_source_bfs(g, [0, el.n // 2]).gather()
        if grid.rank == 0:
            serial = Graph.from_edgelist(el, directed=directed)
            assert np.array_equal(r_cc.labels, connected_components(serial).labels), \
                f"{tag}: components"
            assert np.array_equal(r_sp.distances, sssp(serial, 0).distances), f"{tag}: sssp"
            assert np.array_equal(r_ms.levels, multi_source_bfs(serial, [0, el.n // 2]).levels), \
                f"{tag}: multi-source levels"
        cases[0] += 3


def main(shapes: list[str]) -> None:
    install_excepthook()
    cases = [0]
    for shape in shapes:
        with sub_grid(shape) as grid:
            if grid is None:
                continue
            # A count of this grid's own: its ranks choose settings by it, and a rank
            # idle on an earlier grid of the launch has not counted that grid's cases.
            here = [0]
            check_grid(grid, shape, here)
            check_algorithms(grid, shape, here)
            if shape in ("1x2", "2x1"):
                check_registered_encoding(grid, shape, here)
            cases[0] += here[0]
    from mpi4py import MPI

    if MPI.COMM_WORLD.Get_rank() == 0:
        print(f"ALL OK {cases[0]}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
