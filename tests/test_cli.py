"""The spbfs command: bench, bfs, info, and one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from mpi_launch import launch, needs_mpi

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
def test_errors_are_one_line(args, message, data_dir):
    args = [a.replace("{karate}", str(data_dir / "karate.mtx")) for a in args]
    p = subprocess.run([sys.executable, "-m", "spbfs", *args], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode != 0
    assert message in p.stderr
    assert "Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1


def _spbfs(args: list[str], **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "spbfs", *args], capture_output=True,
                          text=True, timeout=120, env={**os.environ, **env})


def test_unknown_environment_variable_is_a_one_line_error():
    p = _spbfs(["bench", "--scale", "6", "--roots", "1"], SPBFS_FORAMT="dcsc")
    assert p.returncode == 1
    assert p.stderr.startswith("spbfs: error: unknown spbfs environment variable SPBFS_FORAMT "
                               "(did you mean SPBFS_FORMAT?); valid ones: "), p.stderr
    assert len(p.stderr.strip().splitlines()) == 1


def test_bad_environment_value_is_a_one_line_error():
    p = _spbfs(["bench", "--scale", "6", "--roots", "1"], SPBFS_DEBUG="maybe")
    assert p.returncode == 1
    assert "environment SPBFS_DEBUG must be one of '1', 'true'" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1


def test_debug_setting_shows_the_traceback():
    p = _spbfs(["bench", "--scale", "0"], SPBFS_DEBUG="1")
    assert p.returncode == 1
    assert "Traceback" in p.stderr and "scale" in p.stderr


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

