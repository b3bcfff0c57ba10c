"""Exchange patterns and frontier encodings on process grids of 1 to 9 ranks.

``tests/mpi/exchange_cases.py`` runs every ``exchange`` x ``frontier_encoding``
value, both formats and every direction mode on graphs whose sizes do not
divide by the rank count; levels must equal scipy's, trees pass the Graph500
checks, counters and the cost model's record must say what ran. Also the
settings' own checks (config, environment, command line).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mpi_launch import SharedJobs, needs_mpi, on_grids, shared_args

from spbfs import Config, load_config
from spbfs.cli import _config, _grid_parser
from spbfs.mpi._kernels import sort_pairs


@pytest.mark.mpi
@needs_mpi
# The grids (mpi_launch.SHARED says why these), each on the first ranks of its job
# (case_runner.sub_grid), in the jobs test_butterfly.py's cases share.
@on_grids(shared_args("exchange_cases.py"))
def test_every_pattern_and_encoding(nranks: int, grids: list[str],
                                    shared_jobs: SharedJobs) -> None:
    ended, out, err = shared_jobs.part(nranks, "exchange_cases.py", grids)
    assert ended, f"stdout:\n{out}\nstderr:\n{err}"
    assert "ALL OK" in out


@pytest.mark.mpi
@needs_mpi
def test_grown_receives_deliver_every_length(shared_jobs: SharedJobs) -> None:
    """Pair channels whose receive buffers grow to the need: every message arrives
    whole (empty, at the cap, one past it, far past it, past the eager limit), the
    own message as is, and a buffer never grows past an eighth over the longest
    message its source sent (``tests/mpi/grown_cases.py``): on the first 2, 3 and
    4 ranks of one job."""
    ended, out, err = shared_jobs.part(4, "grown_cases.py", ["2", "3", "4"])
    assert ended, f"stdout:\n{out}\nstderr:\n{err}"
    for q in (2, 3, 4):
        assert f"on {q} ranks" in out, (q, out)
    assert out.count("GROWN OK") == 3, out


@pytest.mark.parametrize(("key", "bad"), [("exchange", "mpi"), ("frontier_encoding", "zip"),
                                          ("butterfly_fanout", 1), ("butterfly_fanout", 2.0),
                                          ("network", "5g"), ("network", "1:0"),
                                          ("network", "-1:1"), ("link_latency_us", -1.0),
                                          ("link_gbps", 0), ("link_gbps", float("inf"))])
def test_bad_settings_name_the_key(key: str, bad: object) -> None:
    with pytest.raises(ValueError, match=key):
        Config(**{key: bad})


def test_settings_from_each_source(tmp_path: Path) -> None:
    env = {"SPBFS_EXCHANGE": "butterfly", "SPBFS_BUTTERFLY_FANOUT": "3",
           "SPBFS_NETWORK": "10GbE", "SPBFS_LINK_GBPS": "2.5", "SPBFS_FRONTIER_ENCODING":
           "compressed"}
    cfg = load_config(environ=env)
    assert (cfg.exchange, cfg.butterfly_fanout, cfg.network, cfg.link_gbps,
            cfg.frontier_encoding) == ("butterfly", 3, "10gbe", 2.5, "compressed")
    with pytest.raises(ValueError, match="SPBFS_BUTTERFLY_FANOUT"):
        load_config(environ={"SPBFS_BUTTERFLY_FANOUT": "two"})
    toml = tmp_path / "c.toml"
    toml.write_text('exchange = "collective"\nnetwork = "20:1"\nlink_latency_us = 3\n')
    cfg = load_config(toml, environ={})
    assert (cfg.exchange, cfg.network, cfg.link_latency_us) == ("collective", "20:1", 3.0)
    args = _grid_parser(0).parse_args(
        ["bench", "--exchange", "butterfly", "--butterfly-fanout", "4", "--network", "ib",
         "--frontier-encoding", "compressed", "--link-latency-us", "1.5", "--link-gbps", "100"])
    cfg = _config(args)
    assert (cfg.exchange, cfg.butterfly_fanout, cfg.network, cfg.frontier_encoding,
            cfg.link_latency_us, cfg.link_gbps) == ("butterfly", 4, "ib", "compressed", 1.5,
                                                    100.0)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 700), st.integers(0, 2**40)), max_size=300))
def test_pairs_sort_by_child_keeping_the_smallest_parent(pairs: list[tuple[int, int]]) -> None:
    """The compressed fold's counting sort: one pair per child, the smallest parent."""
    span = 704
    flat = np.array([x for p in pairs for x in p], dtype=np.int64)
    bits = np.zeros(span // 64, np.uint64)
    par = np.empty(span, np.int64)
    children = np.empty(len(pairs), np.int64)
    parents = np.empty(len(pairs), np.int64)
    k = sort_pairs(flat, bits, par, children, parents)
    want: dict[int, int] = {}
    for c, p in pairs:
        want[c] = min(p, want.get(c, p))
    assert children[:k].tolist() == sorted(want)
    assert parents[:k].tolist() == [want[c] for c in sorted(want)]
    assert not bits.any()  # left clear for the next message
