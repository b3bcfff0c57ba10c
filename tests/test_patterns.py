"""The one registry of exchange patterns and encodings, and everything that reads it."""

from __future__ import annotations

import argparse

import pytest

from spbfs import Config
from spbfs.cli import _grid_parser
from spbfs.mpi import costmodel, exchange
from spbfs.mpi.network import LinkModel
from spbfs.patterns import ENCODINGS, PATTERNS


def test_every_registered_pattern_runs_and_is_priced() -> None:
    """A name added to the registry without its code fails here, not on a grid."""
    assert set(exchange._ALLGATHER) == set(PATTERNS)
    assert set(exchange._ALLTOALL) == set(PATTERNS)
    assert set(costmodel._GATHER_COST) == set(PATTERNS)
    assert set(costmodel._ALLTOALL_COST) == set(PATTERNS)
    assert costmodel.PATTERNS is PATTERNS and costmodel.ENCODINGS is ENCODINGS


@pytest.mark.parametrize("phase", costmodel.PHASES)
def test_the_cost_model_prices_every_registered_pair(phase: str) -> None:
    link = LinkModel(latency_s=2e-6, bandwidth_Bps=1e9)
    c = costmodel.choose(phase, q=4, counts=(400, 100), span=1024, link=link)
    assert {(p, e) for p, e, _ in c.candidates} == {(p, e) for p in PATTERNS for e in ENCODINGS}
    assert all(est.seconds > 0 for _, _, est in c.candidates)


def test_config_takes_its_choices_from_the_registry() -> None:
    for name in PATTERNS:
        assert Config(exchange=name).exchange == name
    for name in ENCODINGS:
        assert Config(frontier_encoding=name).frontier_encoding == name
    with pytest.raises(ValueError, match="config 'exchange' must be one of 'auto', 'p2p'"):
        Config(exchange="ring")
    with pytest.raises(ValueError, match="config 'frontier_encoding' must be one of"):
        Config(frontier_encoding="rle")


@pytest.mark.parametrize("command", ["bench", "bfs"])
def test_the_cli_offers_the_registry(command: str) -> None:
    parser = _grid_parser(rank=0)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    opts = {a.dest: a for a in sub.choices[command]._actions}
    assert tuple(opts["exchange"].choices) == ("auto", *PATTERNS)
    assert tuple(opts["frontier_encoding"].choices) == ("auto", *ENCODINGS)
    for name in (*PATTERNS, *ENCODINGS):
        assert f"{name}: " in opts["exchange"].help + opts["frontier_encoding"].help


def test_an_unknown_pattern_is_refused_by_name() -> None:
    ex = exchange.Exchange.__new__(exchange.Exchange)
    ex.q = 2  # past the one-rank shortcut, before any message
    with pytest.raises(ValueError, match=r"exchange pattern must be one of .*got 'ring'"):
        ex.allgather("ring", None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"exchange pattern must be one of .*got 'ring'"):
        ex.alltoall("ring", [None, None])
