"""The spbfs command under mpiexec: the grid commands, their options and one-line errors.

The commands' own logic runs in process in tests/test_cli.py; these launch
``mpiexec -n P python -m spbfs ...`` (and ``spbfs.mpi``). By its name the file
runs with the other mpiexec files on one pytest worker (tests/conftest.py), one
job after another, while the other worker runs tests/test_cli.py without waiting
at the tests' mpiexec lock (in a whole run, test_cli.py's jobs waited 163 s there
behind the exchange cases' jobs). Command lines that need no entry point of their
own run several to a job through ``tests/mpi/cli_runs.py`` (:func:`runs`), which calls
:func:`spbfs.cli.main` once for each: a job's start (every rank's imports and numba
cache loads) took 2-4 s of the 3-4 s of each small job in a whole run.
"""

from __future__ import annotations

import json
import re

import networkx as nx
import numpy as np
import pytest
from mpi_launch import SCRIPTS, launch, needs_mpi
from scipy.sparse import csgraph


def runs(nranks: int, lines: list[list[str]], timeout: float,
         grid: bool = False) -> list[tuple[str, str, str]]:
    """Run ``lines`` (spbfs command lines; ``grid``: ``python -m spbfs.mpi``'s) in one
    job of ``nranks`` ranks.

    Returns, per command line, (its status as every rank returned it, rank 0's
    stdout of it, rank 0's stderr of it).
    """
    words = [w for k, line in enumerate(lines) for w in ([":::"] if k else []) + line]
    rc, out, err, _ = launch(nranks, [str(SCRIPTS / "cli_runs.py"), *(["--grid"] if grid else []),
                                      *words], timeout=timeout)
    assert rc == 0, f"stdout:\n{out}\nstderr:\n{err}"
    outs, errs = (re.split(r"^=== run \d+\n", text, flags=re.M)[1:] for text in (out, err))
    assert len(outs) == len(errs) == len(lines), f"stdout:\n{out}\nstderr:\n{err}"
    result = []
    for k, (o, e) in enumerate(zip(outs, errs, strict=True)):
        status = re.search(rf"^run {k} status (\S+)$", o, re.M)
        assert status, o
        result.append((status[1], o[:status.start()], e))
    return result


@pytest.mark.mpi
@needs_mpi
def test_grid_flag_runs_the_grid_commands(tmp_path):
    """``spbfs bench --grid`` takes the grid path, options of that path included."""
    js = tmp_path / "b.json"
    rc, out, err, _ = launch(1, ["-m", "spbfs", "bench", "--grid", "1x1", "--scale", "6",
                                 "--roots", "2", "--frontier-encoding", "list",
                                 "--json", str(js)], timeout=120)
    assert rc == 0, err
    assert "per-search phase split" in out
    doc = json.loads(js.read_text())
    assert doc["header"]["grid"] == "1x1" and doc["header"]["frontier_encoding"] == "list"


@pytest.mark.mpi
@needs_mpi
def test_grid_usage_error_is_one_line_from_rank_0():
    rc, _, err, _ = launch(2, ["-m", "spbfs.mpi", "bench", "--frontier-encoding", "nope"],
                           timeout=120)
    assert rc == 2
    assert err.count("Error: argument --frontier-encoding: invalid choice: 'nope'") == 1, err
    assert "Traceback" not in err


@pytest.mark.mpi
@needs_mpi
def test_grid_algorithm_commands_match_the_references(tmp_path, weighted_file, data_dir):
    """Under mpiexec the algorithm commands run their distributed twins."""
    p, a, rows = weighted_file
    names = ("cc", "sssp", "pagerank", "bc", "triangles")
    extras = ([], ["--source", "0"], ["--unweighted", "--tol", "1e-12"], [], [])
    lines = [[name, str(p), "--directed", *extra, "--out", str(tmp_path / f"{name}.npz"),
              "--progress"] for name, extra in zip(names, extras, strict=True)]
    out = {}
    for name, (status, stdout, err) in zip(names, runs(2, lines, timeout=180), strict=True):
        assert status == "0", err
        assert stdout.count("wrote") == 1, stdout  # rank 0 alone reports
        assert re.search(rf"^{name}\s+\d", err, re.M), err  # --progress, rank 0
        with np.load(tmp_path / f"{name}.npz") as z:
            out[name] = {k: z[k] for k in z.files}
    g = nx.DiGraph()
    g.add_nodes_from(range(7))
    g.add_weighted_edges_from(rows)
    assert (out["cc"]["labels"] == csgraph.connected_components(a, connection="weak")[1]).all()
    assert np.allclose(out["sssp"]["distances"], csgraph.dijkstra(a, indices=0))
    want = nx.pagerank(g, tol=1e-12, weight=None)
    assert np.allclose(out["pagerank"]["scores"], [want[v] for v in range(7)], atol=1e-9)
    want = nx.betweenness_centrality(g)
    assert np.allclose(out["bc"]["betweenness"], [want[v] for v in range(7)])
    want = nx.triangles(g.to_undirected())
    assert out["triangles"]["triangles"].tolist() == [want[v] for v in range(7)]
    # the weighted file's values make a weighted pagerank, which the grid does not run
    rc, _, err, _ = launch(2, ["-m", "spbfs", "pagerank", str(p)], timeout=120)
    assert rc == 2 and "pass --unweighted" in err and err.count("Error:") == 1


@pytest.mark.mpi
@needs_mpi
def test_grid_bfs_renumber(tmp_path, label_file):
    p, g = label_file
    f = tmp_path / "r.npz"
    rc, out, err, _ = launch(2, ["-m", "spbfs.mpi", "bfs", str(p), "--source", "7",
                                 "--renumber", "--out", str(f), "--validate"], timeout=120)
    assert rc == 0, err
    assert "validation: passed" in out and out.count("wrote") == 1
    with np.load(f) as z:
        assert z["ids"].tolist() == sorted(g)
        want = nx.single_source_shortest_path_length(g, 7)
        assert {int(z["ids"][k]): int(v) for k, v in enumerate(z["levels"])} == want


@pytest.mark.mpi
@needs_mpi
def test_parallel_reader_refuses_sparse_ids(tmp_path):
    """As the serial readers: one line naming the line of the id, suggesting --renumber."""
    p = tmp_path / "big.txt"
    p.write_text("0 1\n1 2\n2 2147483648\n")
    z = tmp_path / "big.npz"
    np.savez(z, src=np.array([0, 1, 2]), dst=np.array([1, 2, 2**31]))
    wheres = ("line 3: the largest vertex id is 2147483648",
              "edge 2: the largest vertex id is 2147483648")
    for nranks in (1, 3):
        results = runs(nranks, [["bfs", str(path), "--source", "0"] for path in (p, z)],
                       timeout=120, grid=True)
        for where, (status, _, err) in zip(wheres, results, strict=True):
            assert status == "2", err
            assert where in err and "pass --renumber" in err, err
            assert err.count("Error:") == 1 and "Traceback" not in err


@pytest.mark.mpi
@needs_mpi
def test_grid_and_bind_options(tmp_path):
    """--grid picks the shape, --bind the pinning (the bench's JSON header records both)."""
    headers = {}
    for grid, bind, progress in (("2x1", "core", ["--progress"]), ("1x2", "none", [])):
        js = tmp_path / f"{grid}.json"
        rc, _, err, _ = launch(2, ["-m", "spbfs", "bench", "--scale", "6", "--roots", "2",
                                   "--grid", grid, "--bind", bind, "--json", str(js),
                                   *progress], timeout=180)
        assert rc == 0, err
        headers[grid] = json.loads(js.read_text())["header"]
        # rank 0 alone draws, and only when asked (stderr is a pipe here)
        steps = re.findall(r"^(generate and build|warm up|BFS)\s", err, re.M)
        assert steps == (["generate and build", "generate and build", "warm up", "warm up",
                          "BFS"] if progress else []), err
    assert headers["2x1"]["grid"] == "2x1" and headers["1x2"]["grid"] == "1x2"
    assert headers["1x2"]["pinned_cores"] == "none"
    assert headers["2x1"]["pinned_cores"] != "none"
