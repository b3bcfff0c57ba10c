"""The spbfs command: every command, the effect of every option, one-line errors."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse import csgraph

from spbfs.cli import main


def test_bench_small(capsys):
    assert main(["bench", "--scale", "10", "--roots", "4", "--format", "dcsc"]) == 0
    out = capsys.readouterr().out
    assert "SCALE:" in out and "harmonic_mean_TEPS" in out
    assert "format:" in out and "dcsc" in out


def test_bfs_writes_npz(tmp_path, data_dir, capsys):
    out = tmp_path / "r.npz"
    assert main(["bfs", str(data_dir / "karate.mtx"), "--source", "0", "--out", str(out)]) == 0
    z = np.load(out)
    assert z["levels"][0] == 0 and z["parents"][0] == 0 and (z["levels"] >= 0).all()
    assert "reached 34 of 34" in capsys.readouterr().out


def test_info(data_dir, capsys):
    assert main(["info", str(data_dir / "west0067.mtx")]) == 0
    out = capsys.readouterr().out
    assert "vertices:    67" in out and "dcsc block" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["bfs", "/no/such/file.mtx", "--source", "0"], "error"),
        (["bfs", "{karate}", "--source", "99"], "source=99 is out of range"),
        (["bfs", "{karate}", "--source", "-3"], "source=-3 is out of range"),
        (["bench", "--scale", "0"], "scale"),
    ],
)
def test_errors_are_one_line(args, message, data_dir, monkeypatch, capsys):
    args = [a.replace("{karate}", str(data_dir / "karate.mtx")) for a in args]
    status, _, err = _spbfs(monkeypatch, capsys, args)
    assert status != 0
    assert message in err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def _spbfs(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
           args: list[str], **env: str) -> tuple[int, str, str]:
    """``spbfs ARGS`` in this process under the environment's ``env``: (status, out, err).

    The command's logic is :func:`spbfs.cli.main`'s; a process of its own (two
    seconds of imports on a loaded machine) is for the entry point's behaviour,
    which test_entry_point_errors_are_one_line and
    test_debug_setting_shows_the_traceback check.
    """
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    capsys.readouterr()  # what earlier calls printed
    try:
        status = main(args)
    except SystemExit as exc:  # argparse's usage errors
        status = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return status, out, err


def _entry_point(args: list[str], **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "spbfs", *args], capture_output=True,
                          text=True, timeout=120, env={**os.environ, **env})


def test_entry_point_errors_are_one_line():
    """``python -m spbfs``: nothing but the one line on stderr (no warning at start-up)."""
    p = _entry_point(["bfs", "/no/such/file.mtx", "--source", "0"])
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert p.stderr.startswith("spbfs: error: ") and len(p.stderr.strip().splitlines()) == 1


def test_unknown_environment_variable_is_a_one_line_error(monkeypatch, capsys):
    status, _, err = _spbfs(monkeypatch, capsys, ["bench", "--scale", "6", "--roots", "1"],
                            SPBFS_FORAMT="dcsc")
    assert status == 1
    assert err.startswith("spbfs: error: unknown spbfs environment variable SPBFS_FORAMT "
                          "(did you mean SPBFS_FORMAT?); valid ones: "), err
    assert len(err.strip().splitlines()) == 1


def test_bad_environment_value_is_a_one_line_error(monkeypatch, capsys):
    status, _, err = _spbfs(monkeypatch, capsys, ["bench", "--scale", "6", "--roots", "1"],
                            SPBFS_DEBUG="maybe")
    assert status == 1
    assert "environment SPBFS_DEBUG must be one of '1', 'true'" in err
    assert len(err.strip().splitlines()) == 1


def test_debug_setting_shows_the_traceback():
    p = _entry_point(["bench", "--scale", "0"], SPBFS_DEBUG="1")
    assert p.returncode == 1
    assert "Traceback" in p.stderr and "scale" in p.stderr


def test_sparse_ids_fail_with_a_message(tmp_path, capsys):
    """An edge list with an id of 2**31 ends with one line naming it, not out of memory."""
    p = tmp_path / "big.txt"
    p.write_text("0 1\n1 2\n2 2147483648\n")
    for cmd in (["info", str(p)], ["bfs", str(p), "--source", "0"]):
        assert main(cmd) != 0
        err = capsys.readouterr().err
        assert "line 3: the largest vertex id is 2147483648" in err and "renumber" in err, err


def test_version(capsys):
    import spbfs

    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"spbfs {spbfs.__version__}"


def test_info_tells_sinks_from_isolated_vertices(tmp_path, capsys):
    """Directed 0 -> 1 -> 2 on 4 vertices: two without out-edges, one isolated."""
    p = tmp_path / "d.mtx"
    p.write_text("%%MatrixMarket matrix coordinate pattern general\n4 4 2\n1 2\n2 3\n")
    assert main(["info", str(p), "--directed"]) == 0
    out = capsys.readouterr().out
    assert "no out-edges 2" in out and "no in-edges 2" in out and "isolated:    1 " in out
    assert main(["info", str(p), "--undirected"]) == 0
    out = capsys.readouterr().out
    assert "no out-edges 1" in out and "in-degree" not in out and "isolated:    1 " in out



# --------------------------------------------------------------------------- every option's effect
#
# Each test runs the command in this process and checks what it prints or writes
# against an independent reference (scipy.sparse.csgraph, networkx), or against the
# same command without the option where the option's effect is a difference.

def _run(capsys, args: list[str]) -> str:
    """stdout of ``spbfs ARGS`` (exit status 0 required)."""
    rc = main(args)
    out, err = capsys.readouterr()
    assert rc == 0, err
    return out


def _scipy_levels(a: sp.spmatrix, source: int, directed: bool) -> np.ndarray:
    d = csgraph.shortest_path(a, method="D", directed=directed, unweighted=True,
                              indices=source)
    return np.where(np.isinf(d), -1, d).astype(np.int64)


def _directions(out: str) -> str:
    return re.search(r"directions (\S+)", out).group(1)


def _mtx_matrix(path) -> sp.csr_matrix:
    """The file's adjacency, by scipy's reader (pattern: every entry an edge)."""
    import scipy.io

    a = sp.csr_matrix(scipy.io.mmread(str(path)))
    a.data[:] = 1
    return a


def _bfs_npz(capsys, tmp_path, args: list[str]) -> tuple[str, dict[str, np.ndarray]]:
    out_file = tmp_path / f"r{len(list(tmp_path.iterdir()))}.npz"
    out = _run(capsys, ["bfs", *args, "--out", str(out_file)])
    with np.load(out_file) as z:
        return out, {k: z[k] for k in z.files}


@pytest.fixture(scope="module")
def kron_file(tmp_path_factory):
    """A Kronecker graph of scale 10 as an edge-list file, and its scipy adjacency."""
    from spbfs.generators import kronecker
    from spbfs.io import write_edgelist

    e = kronecker(10, 16, seed=3)
    path = tmp_path_factory.mktemp("kron") / "k10.txt"
    write_edgelist(path, e)
    a = sp.coo_matrix((np.ones(e.num_edges), (e.src, e.dst)), shape=(e.n, e.n)).tocsr()
    a = ((a + a.T) > 0).astype(np.int8)
    a.setdiag(0)
    a.eliminate_zeros()
    deg = np.diff(a.indptr)
    # A vertex of the smallest positive degree: the search starts slowly, so the
    # switch to bottom-up comes after a few top-down levels.
    source = int(np.flatnonzero(deg == deg[deg > 0].min())[0])
    return path, a.tocsr(), source


def test_bfs_source_levels_match_scipy(capsys, tmp_path, data_dir):
    a = _mtx_matrix(data_dir / "karate.mtx")
    for s in (0, 16, 33):
        _, z = _bfs_npz(capsys, tmp_path, [str(data_dir / "karate.mtx"), "--source", str(s)])
        assert (z["levels"] == _scipy_levels(a, s, directed=False)).all()
        assert int(z["source"]) == s


def test_bfs_out_parents_form_a_bfs_tree(capsys, tmp_path, data_dir):
    a = _mtx_matrix(data_dir / "karate.mtx")
    a = ((a + a.T) > 0).tocsr()
    _, z = _bfs_npz(capsys, tmp_path, [str(data_dir / "karate.mtx"), "--source", "5"])
    par, lev = z["parents"], z["levels"]
    for v in np.flatnonzero(lev > 0):
        assert a[par[v], v] and lev[par[v]] == lev[v] - 1


def test_bfs_directed_and_undirected(capsys, tmp_path, data_dir):
    """west0067 is a general (directed) Matrix Market file."""
    f = str(data_dir / "west0067.mtx")
    a = _mtx_matrix(f)
    _, d = _bfs_npz(capsys, tmp_path, [f, "--source", "3"])
    _, d2 = _bfs_npz(capsys, tmp_path, [f, "--source", "3", "--directed"])
    _, u = _bfs_npz(capsys, tmp_path, [f, "--source", "3", "--undirected"])
    want_d, want_u = _scipy_levels(a, 3, True), _scipy_levels(a, 3, False)
    assert not (want_d == want_u).all()  # the option must make a difference here
    assert (d["levels"] == want_d).all() and (d2["levels"] == want_d).all()
    assert (u["levels"] == want_u).all()
    # and the other way round: a symmetric file searched as arcs is still symmetric,
    # so take a one-way edge list, which says nothing and defaults to undirected.
    p = tmp_path / "arcs.txt"
    p.write_text("0 1\n1 2\n")
    _, z = _bfs_npz(capsys, tmp_path, [str(p), "--source", "2"])
    _, zd = _bfs_npz(capsys, tmp_path, [str(p), "--source", "2", "--directed"])
    assert z["levels"].tolist() == [2, 1, 0] and zd["levels"].tolist() == [-1, -1, 0]


def test_bfs_reverse_follows_in_edges(capsys, tmp_path, data_dir):
    f = str(data_dir / "west0067.mtx")
    a = _mtx_matrix(f)
    _, z = _bfs_npz(capsys, tmp_path, [f, "--source", "3", "--reverse"])
    want = _scipy_levels(a.T.tocsr(), 3, True)
    assert not (want == _scipy_levels(a, 3, True)).all()
    assert (z["levels"] == want).all()


def test_bfs_max_depth_cuts_the_levels(capsys, tmp_path, kron_file):
    path, a, s = kron_file
    full = _scipy_levels(a, s, False)
    assert full.max() > 2
    out, z = _bfs_npz(capsys, tmp_path, [str(path), "--source", str(s), "--max-depth", "2"])
    want = np.where(full <= 2, full, -1)
    assert (z["levels"] == want).all()
    assert "(max_depth)" in out


def test_bfs_target_stops_early(capsys, tmp_path, kron_file):
    path, a, s = kron_file
    full = _scipy_levels(a, s, False)
    t = int(np.flatnonzero(full == 2)[0])
    out, z = _bfs_npz(capsys, tmp_path, [str(path), "--source", str(s), "--target", str(t)])
    assert "(target)" in out
    assert z["levels"][t] == 2
    assert z["levels"].max() == 2  # no level after the target's was searched
    reached = z["levels"] >= 0
    assert (z["levels"][reached] == full[reached]).all()


def test_bfs_one_based(capsys, tmp_path):
    p = tmp_path / "one.txt"
    p.write_text("1 2\n2 3\n")
    _, z1 = _bfs_npz(capsys, tmp_path, [str(p), "--source", "0", "--one-based"])
    _, z0 = _bfs_npz(capsys, tmp_path, [str(p), "--source", "1"])
    assert z1["levels"].tolist() == [0, 1, 2]       # ids 1..3 are vertices 0..2
    assert z0["levels"].tolist() == [-1, 0, 1, 2]   # 0-based: vertex 0 has no edge


def test_bfs_stats_table_has_one_row_per_level(capsys, kron_file):
    path, a, s = kron_file
    depth = int(_scipy_levels(a, s, False).max())
    plain = _run(capsys, ["bfs", str(path), "--source", str(s)])
    out = _run(capsys, ["bfs", str(path), "--source", str(s), "--stats"])
    extra = out.splitlines()[len(plain.splitlines()):]
    rows = [ln for ln in extra if re.match(r"\s*\d+\s+(top-down|bottom-up)", ln)]
    # levels 0..depth, plus the last one that finds nothing new
    assert len(rows) in (depth, depth + 1), out
    assert "".join("T" if "top-down" in r else "B" for r in rows) == _directions(out)
    assert len(plain.splitlines()) == 1


def test_bfs_direction_forces_every_level(capsys, kron_file):
    path, a, s = kron_file
    want = _scipy_levels(a, s, False)
    auto = _directions(_run(capsys, ["bfs", str(path), "--source", str(s)]))
    assert "T" in auto and "B" in auto
    td = _directions(_run(capsys, ["bfs", str(path), "--source", str(s), "--direction",
                                   "top-down", "--stats"]))
    bu = _directions(_run(capsys, ["bfs", str(path), "--source", str(s), "--direction",
                                   "bottom-up"]))
    assert set(td) == {"T"} and set(bu) == {"B"}
    assert len(td) >= want.max()


def test_bfs_alpha_and_beta_move_the_switches(capsys, kron_file):
    path, _, s = kron_file

    def dirs(*opts: str) -> str:
        return _directions(_run(capsys, ["bfs", str(path), "--source", str(s), *opts]))

    default = dirs()
    assert "B" in default
    assert "B" not in dirs("--alpha", "1e-9")        # m_f * alpha never exceeds m_u
    eager = dirs("--alpha", "1e9")
    # Leaves top-down as soon as the guard lets it (the frontier's edges reach n):
    # never later than the default, which waits for m_f * alpha > m_u as well.
    assert eager.index("B") <= default.index("B")
    # beta: back to top-down once the frontier falls below n / beta
    stay = dirs("--alpha", "1e9", "--beta", "1e12")
    leave = dirs("--alpha", "1e9", "--beta", "1e-12")
    assert stay.count("B") > leave.count("B"), (stay, leave)
    assert stay.rstrip("B") == stay[: stay.index("B")]  # never back to top-down


def test_threads_sets_numba_threads(capsys, tmp_path, data_dir):
    import numba

    from spbfs.generators import kronecker
    from spbfs.io import write_mtx

    # Above the small-search size: karate's search is one serial call that leaves
    # numba's count alone whatever --threads says.
    path = tmp_path / "kron10.mtx"
    write_mtx(path, kronecker(10, 16, seed=1))
    before = numba.get_num_threads()
    try:
        for t in (1, 2):
            _run(capsys, ["bfs", str(path), "--source", "0", "--threads", str(t)])
            assert numba.get_num_threads() == min(t, numba.config.NUMBA_NUM_THREADS)
        out = _run(capsys, ["bench", "--scale", "6", "--roots", "2", "--threads", "1"])
        assert re.search(r"^threads:\s+1$", out, re.M), out
        # The timed searches' counts (a scale 6 search runs no parallel level: "-").
        ran = re.search(r"^threads_ran:\s+(.*)$", out, re.M)
        assert ran and sum(int(x.split(":")[1]) for x in ran.group(1).split()) == 2, out
        out = _run(capsys, ["cc", str(data_dir / "karate.mtx"), "--threads", "1"])
        assert numba.get_num_threads() == 1
    finally:
        numba.set_num_threads(before)


def test_config_file_and_its_keys(capsys, tmp_path, kron_file):
    """--config: format, direction, alpha, output, threads from a TOML file."""
    import numba

    path, a, s = kron_file
    cfg = tmp_path / "c.toml"
    cfg.write_text('[spbfs]\nformat = "dcsc"\ndirection = "top-down"\n')
    out = _run(capsys, ["bench", "--scale", "6", "--roots", "2", "--config", str(cfg)])
    assert re.search(r"^format:\s+dcsc$", out, re.M)
    assert re.search(r"^direction:\s+top-down$", out, re.M)
    out = _run(capsys, ["bfs", str(path), "--source", str(s), "--config", str(cfg)])
    assert set(_directions(out)) == {"T"}
    # an option given beats the file
    out = _run(capsys, ["bfs", str(path), "--source", str(s), "--config", str(cfg),
                        "--direction", "bottom-up"])
    assert set(_directions(out)) == {"B"}
    cfg.write_text("alpha = 1e-9\n")
    out = _run(capsys, ["bfs", str(path), "--source", str(s), "--config", str(cfg)])
    assert "B" not in _directions(out)
    cfg.write_text('output = "levels"\n')
    _, z = _bfs_npz(capsys, tmp_path, [str(path), "--source", str(s), "--config", str(cfg)])
    assert "parents" not in z and (z["levels"] == _scipy_levels(a, s, False)).all()
    before = numba.get_num_threads()
    try:
        cfg.write_text("threads = 1\n")
        _run(capsys, ["bfs", str(path), "--source", str(s), "--config", str(cfg)])
        assert numba.get_num_threads() == 1
    finally:
        numba.set_num_threads(before)


def test_format_and_backend_options(capsys):
    for fmt, backend in (("dcsc", "numpy"), ("csr", "numba")):
        out = _run(capsys, ["bench", "--scale", "6", "--roots", "2", "--format", fmt,
                            "--backend", backend])
        assert re.search(rf"^format:\s+{fmt}$", out, re.M)
        assert re.search(rf"^backend:\s+{backend}$", out, re.M)


def test_index_dtype_key_changes_info(capsys, monkeypatch, data_dir):
    out = _run(capsys, ["info", str(data_dir / "karate.mtx")])
    assert "(int32 local ids)" in out
    monkeypatch.setenv("SPBFS_INDEX_DTYPE", "int64")
    out = _run(capsys, ["info", str(data_dir / "karate.mtx")])
    assert "(int64 local ids)" in out and "int32" not in out


def _stat(out: str, key: str) -> float:
    return float(re.search(rf"^{key}:\s+(\S+)$", out, re.M).group(1))


def test_bench_graph_options(capsys):
    out = _run(capsys, ["bench", "--scale", "7", "--edgefactor", "4", "--roots", "3"])
    assert _stat(out, "SCALE") == 7 and _stat(out, "edgefactor") == 4 and _stat(out, "NBFS") == 3
    # every search counts the input edges of its component: at most all 4 * 2**7
    assert 0 < _stat(out, "max_nedge") <= 4 << 7
    out8 = _run(capsys, ["bench", "--scale", "8", "--edgefactor", "8", "--roots", "2"])
    assert 4 << 7 < _stat(out8, "max_nedge") <= 8 << 8 and _stat(out8, "NBFS") == 2


def test_bench_seed_changes_graph_and_roots(capsys):
    def nedges(seed: str) -> tuple[float, ...]:
        out = _run(capsys, ["bench", "--scale", "8", "--edgefactor", "2", "--roots", "8",
                            "--seed", seed, "--no-validate"])
        return tuple(_stat(out, k) for k in ("min_nedge", "median_nedge", "max_nedge",
                                             "mean_nedge"))

    a, b, c = nedges("1"), nedges("2"), nedges("1")
    assert a == c and a != b


def test_bench_no_validate_and_plot(capsys, tmp_path):
    out = _run(capsys, ["bench", "--scale", "6", "--roots", "2"])
    assert "validate" in out
    out = _run(capsys, ["bench", "--scale", "6", "--roots", "2", "--no-validate"])
    assert "validate" not in out
    pytest.importorskip("matplotlib")
    png = tmp_path / "b.png"
    out = _run(capsys, ["bench", "--scale", "6", "--roots", "2", "--plot", str(png)])
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and f"plot: {png}" in out


# --------------------------------------------------------------------------- --renumber


LABELS = [10**12, -5, 7, 3 * 10**11, 42]


def test_renumber_bfs_writes_ids(capsys, tmp_path, label_file):
    p, g = label_file
    out, z = _bfs_npz(capsys, tmp_path, [str(p), "--source", "7", "--renumber"])
    assert z["ids"].tolist() == sorted(LABELS)
    want = nx.single_source_shortest_path_length(g, 7)
    assert {int(z["ids"][k]): int(v) for k, v in enumerate(z["levels"])} == want
    # parents are vertex numbers: ids[parents] names them
    for k, par in enumerate(z["parents"]):
        if z["levels"][k] > 0:
            assert g.has_edge(int(z["ids"][k]), int(z["ids"][par]))
    assert "--source 7 is vertex" in out
    # target by label too
    _, zt = _bfs_npz(capsys, tmp_path, [str(p), "--source", "7", "--renumber", "--target",
                                        str(10**12)])
    assert zt["levels"][z["ids"].tolist().index(10**12)] == want[10**12]


def test_renumber_is_needed_and_suggested(capsys, tmp_path, label_file):
    p, _ = label_file
    assert main(["bfs", str(p), "--source", "7"]) == 1
    err = capsys.readouterr().err
    assert "--renumber" in err and "renumber=True" not in err
    assert main(["bfs", str(p), "--source", "8", "--renumber"]) == 1
    assert "--source 8 is not a vertex id" in capsys.readouterr().err


def test_renumber_info(capsys, label_file):
    p, g = label_file
    out = _run(capsys, ["info", str(p), "--renumber"])
    assert f"vertices:    {g.number_of_nodes()}" in out
    assert f"renumbered:  ids {min(LABELS)} .. {max(LABELS)}" in out
    assert "self-loops" in out and "(1 self-loops)" in out


def test_info_one_based(capsys, tmp_path):
    p = tmp_path / "one.txt"
    p.write_text("1 2\n2 3\n")
    assert "vertices:    3" in _run(capsys, ["info", str(p), "--one-based"])
    assert "vertices:    4" in _run(capsys, ["info", str(p)])


# --------------------------------------------------------------------------- --progress


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_only_when_asked_or_on_a_terminal(capsys, monkeypatch, data_dir):
    f = str(data_dir / "karate.mtx")
    assert main(["bfs", f, "--source", "0"]) == 0
    assert capsys.readouterr().err == ""          # not a terminal: nothing
    assert main(["bench", "--scale", "6", "--roots", "2"]) == 0
    err = capsys.readouterr().err                 # bench reports its phases always
    for step in ("warm up", "generate", "build", "untimed", "BFS"):
        assert re.search(rf"^{step}\s", err, re.M), err
    assert "\r" not in err                        # whole lines into a pipe
    assert main(["bench", "--scale", "6", "--roots", "16"]) == 0
    captured = capsys.readouterr()
    bfs_lines = re.findall(r"^BFS\s+\[#*-*\] (\d+)/16", captured.err, re.M)
    assert bfs_lines == ["2", "4", "6", "8", "10", "12", "14", "16"], captured.err
    warm = re.search(r"^warmup_time:\s+(\S+)", captured.out, re.M)
    assert warm and float(warm.group(1)) > 0, captured.out
    assert main(["bfs", f, "--source", "0", "--progress"]) == 0
    err = capsys.readouterr().err
    assert re.search(r"^read\s", err, re.M) and re.search(r"^build\s+\[#+\] 1/1", err, re.M)
    assert main(["triangles", f, "--progress"]) == 0
    assert re.search(r"^triangles\s+\d", capsys.readouterr().err, re.M)
    term = _Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    assert main(["bfs", f, "--source", "0"]) == 0  # a terminal: drawn, in place
    assert "\rbuild" in term.getvalue() and "read" in term.getvalue()


def test_build_progress_is_a_callback():
    from spbfs.graph import Graph

    calls: list[tuple[int, int]] = []
    Graph.from_edges([0, 1], [1, 2], directed=True)  # no callback: fine
    from spbfs.edges import EdgeList

    e = EdgeList(np.array([0, 1]), np.array([1, 2]), 3, directed=True)
    Graph.from_edgelist(e, progress=lambda i, n: calls.append((i, n)))
    assert calls == [(1, 2), (2, 2)]
    calls.clear()
    Graph.from_edgelist(e, directed=False, progress=lambda i, n: calls.append((i, n)))
    assert calls == [(1, 1)]


# --------------------------------------------------------------------------- algorithms


def _algo(capsys, tmp_path, args: list[str]) -> tuple[str, dict[str, np.ndarray]]:
    out_file = tmp_path / f"a{len(list(tmp_path.iterdir()))}.npz"
    out = _run(capsys, [*args, "--out", str(out_file)])
    with np.load(out_file) as z:
        return out, {k: z[k] for k in z.files}


def test_cc_matches_scipy(capsys, tmp_path, weighted_file, data_dir):
    p, a, _ = weighted_file
    out, z = _algo(capsys, tmp_path, ["cc", str(p), "--directed"])
    k, labels = csgraph.connected_components(a, directed=True, connection="weak")
    assert (z["labels"] == labels).all() and f"connected components: {k} of 7" in out
    f = data_dir / "west0067.mtx"
    _, z = _algo(capsys, tmp_path, ["cc", str(f)])
    assert (z["labels"] == csgraph.connected_components(_mtx_matrix(f), connection="weak")[1]
            ).all()


def test_sssp_weights_from_the_file(capsys, tmp_path, weighted_file):
    p, a, _ = weighted_file
    _, z = _algo(capsys, tmp_path, ["sssp", str(p), "--source", "0", "--directed"])
    assert np.allclose(z["distances"], csgraph.dijkstra(a, indices=0))
    _, zu = _algo(capsys, tmp_path, ["sssp", str(p), "--source", "0", "--directed",
                                     "--unweighted"])
    assert np.array_equal(zu["distances"], csgraph.dijkstra(a, indices=0, unweighted=True))
    assert not np.array_equal(zu["distances"], z["distances"])
    _, zs = _algo(capsys, tmp_path, ["sssp", str(p), "--source", "4", "--undirected"])
    assert np.allclose(zs["distances"], csgraph.dijkstra(a, directed=False, indices=4))
    assert int(zs["source"]) == 4


def test_sssp_negative_weight_is_a_clear_error(capsys, tmp_path):
    p = tmp_path / "neg.txt"
    p.write_text("0 1 1\n1 2 -3\n")
    assert main(["sssp", str(p), "--source", "0"]) == 1
    err = capsys.readouterr().err
    assert "edge 1 -> 2 has weight -3.0" in err and len(err.strip().splitlines()) == 1


def test_pagerank_options(capsys, tmp_path, weighted_file):
    p, _, rows = weighted_file
    g = nx.DiGraph()
    g.add_nodes_from(range(7))
    g.add_weighted_edges_from(rows)
    out, z = _algo(capsys, tmp_path, ["pagerank", str(p), "--directed", "--alpha", "0.7",
                                      "--tol", "1e-12", "--max-iter", "1000"])
    want = nx.pagerank(g, alpha=0.7, tol=1e-12, max_iter=1000, weight="weight")
    assert np.allclose(z["scores"], [want[v] for v in range(7)], atol=1e-9)
    assert "converged after" in out and "(alpha 0.7, tol 1e-12, weighted)" in out
    _, zu = _algo(capsys, tmp_path, ["pagerank", str(p), "--directed", "--alpha", "0.7",
                                     "--tol", "1e-12", "--unweighted"])
    want = nx.pagerank(g, alpha=0.7, tol=1e-12, weight=None)
    assert np.allclose(zu["scores"], [want[v] for v in range(7)], atol=1e-9)
    out = _run(capsys, ["pagerank", str(p), "--directed", "--max-iter", "2"])
    assert "did not converge after 2 iterations" in out
    loose = _run(capsys, ["pagerank", str(p), "--directed", "--tol", "1e-2"])
    tight = _run(capsys, ["pagerank", str(p), "--directed", "--tol", "1e-10", "--max-iter",
                          "1000"])
    assert "did not" not in loose + tight

    def iterations(out: str) -> int:
        return int(re.search(r"converged after (\d+) iterations", out).group(1))

    assert iterations(loose) < iterations(tight)
    # pagerank's --alpha is the damping factor, not the BFS switch of the config
    from spbfs import Config
    from spbfs.cli import _config, _parser

    args = _parser().parse_args(["pagerank", str(p), "--alpha", "0.5"])
    assert _config(args).alpha == Config().alpha and args.damping == 0.5


def test_bc_options(capsys, tmp_path, data_dir):
    f = data_dir / "karate.mtx"
    g = nx.from_scipy_sparse_array(_mtx_matrix(f))
    _, z = _algo(capsys, tmp_path, ["bc", str(f)])
    want = nx.betweenness_centrality(g, normalized=True)
    assert np.allclose(z["betweenness"], [want[v] for v in range(34)])
    _, zn = _algo(capsys, tmp_path, ["bc", str(f), "--no-normalized"])
    want = nx.betweenness_centrality(g, normalized=False)
    assert np.allclose(zn["betweenness"], [want[v] for v in range(34)])
    _, zk = _algo(capsys, tmp_path, ["bc", str(f), "-k", "5", "--seed", "1"])
    _, zk2 = _algo(capsys, tmp_path, ["bc", str(f), "--samples", "5", "--seed", "1"])
    _, zk3 = _algo(capsys, tmp_path, ["bc", str(f), "-k", "5", "--seed", "2"])
    assert np.array_equal(zk["betweenness"], zk2["betweenness"])
    assert not np.allclose(zk["betweenness"], z["betweenness"])
    assert not np.allclose(zk["betweenness"], zk3["betweenness"])
    # the sample estimate is networkx's for the same sources: the sources are the
    # vertices whose own count is scaled as a sample of k - 1 (networkx 3.5+)
    from spbfs.algorithms import betweenness_centrality

    lib = betweenness_centrality(str(f), k=5, seed=1)
    assert np.array_equal(zk["betweenness"], lib)


def test_triangles_match_networkx(capsys, tmp_path, data_dir):
    f = data_dir / "karate.mtx"
    g = nx.from_scipy_sparse_array(_mtx_matrix(f))
    out, z = _algo(capsys, tmp_path, ["triangles", str(f)])
    want = nx.triangles(g)
    assert z["triangles"].tolist() == [want[v] for v in range(34)]
    assert f"triangles: {sum(want.values()) // 3};" in out


def test_algorithms_renumber(capsys, tmp_path, label_file):
    p, g = label_file
    _, z = _algo(capsys, tmp_path, ["sssp", str(p), "--source", str(-5), "--renumber"])
    want = nx.single_source_shortest_path_length(g, -5)
    assert {int(i): float(d) for i, d in zip(z["ids"], z["distances"], strict=True)} == want
    _, z = _algo(capsys, tmp_path, ["cc", str(p), "--renumber"])
    assert z["ids"].tolist() == sorted(LABELS) and len(set(z["labels"])) == 1
    assert main(["triangles", str(p)]) == 1
    assert "--renumber" in capsys.readouterr().err


def test_algorithm_format_and_backend(capsys, tmp_path, data_dir):
    f = data_dir / "karate.mtx"
    outs = [_algo(capsys, tmp_path, ["triangles", str(f), "--format", fmt, "--backend", be])[1]
            for fmt, be in (("csr", "numba"), ("dcsc", "numpy"))]
    assert np.array_equal(outs[0]["triangles"], outs[1]["triangles"])


def test_out_without_extension_names_the_file_written(tmp_path, data_dir, capsys):
    out = tmp_path / "result"
    assert main(["bfs", str(data_dir / "karate.mtx"), "--source", "0", "--out", str(out)]) == 0
    assert (tmp_path / "result.npz").is_file() and not out.exists()
    assert f"wrote {out}.npz: parents, levels (34 vertices)" in capsys.readouterr().out


@pytest.mark.parametrize("command", [["bfs", "{karate}", "--source", "0"], ["cc", "{karate}"]])
def test_unwritable_out_fails_before_the_run(command, tmp_path, data_dir, monkeypatch, capsys):
    args = [a.replace("{karate}", str(data_dir / "karate.mtx")) for a in command]
    status, out, err = _spbfs(monkeypatch, capsys, [*args, "--out", "/nonexistent/x.npz"])
    assert status == 1
    assert err == ("spbfs: error: --out /nonexistent/x.npz: folder /nonexistent does "
                   "not exist\n")
    assert out == ""  # nothing ran: no summary printed
    (tmp_path / "d.npz").mkdir()
    status, _, err = _spbfs(monkeypatch, capsys, [*args, "--out", str(tmp_path / "d")])
    assert status == 1
    assert err == f"spbfs: error: --out {tmp_path / 'd.npz'}: is a directory\n"
