"""The one registry of exchange patterns and encodings, and everything that reads it."""

from __future__ import annotations

import argparse

import numpy as np
import pytest
from mpi_launch import SCRIPTS

from spbfs import Config
from spbfs.cli import _grid_parser
from spbfs.mpi import costmodel, exchange
from spbfs.mpi.network import LinkModel
from spbfs.patterns import (
    AUTO_ENCODINGS,
    ENCODING_CODE,
    ENCODINGS,
    PATTERN_CODE,
    PATTERNS,
    encoding,
    implementation,
)


def test_every_registered_pattern_runs_and_is_priced() -> None:
    """A name added to the registry without its code fails here, not on a grid."""
    assert set(PATTERN_CODE) == set(PATTERNS)
    for name in PATTERNS:
        obj = implementation(name)
        for method in ("allgather", "alltoall", "gather_cost", "alltoall_cost"):
            assert callable(getattr(obj, method, None)), f"{name} lacks {method}"
    assert costmodel.PATTERNS is PATTERNS and costmodel.ENCODINGS is ENCODINGS


def test_every_registered_encoding_has_its_object() -> None:
    assert set(ENCODING_CODE) == set(ENCODINGS) and set(AUTO_ENCODINGS) <= set(ENCODINGS)
    for name in ENCODINGS:
        obj = encoding(name)
        assert obj.name == name
        for attr in ("bitmap_sized", "pairs", "encode", "decode", "encode_pairs",
                     "decode_pairs", "nbytes", "seconds"):
            assert hasattr(obj, attr), f"{name} lacks {attr}"
    with pytest.raises(ValueError, match=r"encoding must be one of .*got 'rle'"):
        encoding("rle")


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> object:
    """The checksum encoding of ``tests/mpi/toy_encoding.py``, registered for one test."""
    import spbfs.patterns as reg

    monkeypatch.syspath_prepend(str(SCRIPTS))
    for attr in ("ENCODING_HELP", "ENCODING_CODE", "ENCODINGS"):  # restored afterwards
        monkeypatch.setattr(reg, attr, getattr(reg, attr))
    import toy_encoding

    with pytest.raises(ValueError, match="config 'frontier_encoding' must be one of"):
        Config(frontier_encoding=toy_encoding.NAME)
    toy_encoding.install()
    return toy_encoding


def test_a_registered_encoding_is_taken_everywhere(toy: object) -> None:
    """One entry: Config, the command line and the cost model take it; auto does not pick it."""
    import spbfs.patterns as reg

    name = toy.NAME  # type: ignore[attr-defined]
    assert Config(frontier_encoding=name).frontier_encoding == name
    parser = _grid_parser(rank=0)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    opt = next(a for a in sub.choices["bfs"]._actions if a.dest == "frontier_encoding")
    assert name in opt.choices and f"{name}: " in opt.help
    link = LinkModel(latency_s=2e-6, bandwidth_Bps=1e9)
    c = costmodel.choose("expand", q=4, counts=(400, 100), span=1024, link=link)
    price = {e: est for p, e, est in c.candidates if p == "p2p"}
    # One word more per message than a list, and a pass to sum it.
    assert price[name].bytes == pytest.approx(price["list"].bytes + 8 * 3)
    assert price[name].codec_s > price["list"].codec_s == 0
    kd = np.zeros((3, costmodel.K_MID.shape[0]))
    kd[:, 0] = 1.0
    prof = costmodel.LevelProfile(frontier=np.array([1e-6, 0.01, 0.5]),
                                  degsum=np.array([1e-6, 0.05, 0.6]),
                                  discovered=np.array([0.01, 0.5, 0.1]),
                                  bottomup=np.array([False, False, True]),
                                  share=np.ones(3), kdist=kd, degree=30.0)
    rows = costmodel.model_search(12, (2, 2), prof, link="10gbe")
    assert {r.encoding for r in rows} >= {name, *AUTO_ENCODINGS}
    assert name not in reg.AUTO_ENCODINGS


def test_a_pattern_is_one_module_and_one_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    """A registered object is what the exchange runs and what the model prices."""
    calls: list[str] = []
    base = implementation("p2p")

    class Traced:
        def allgather(self, ex, msg, maxlen):  # type: ignore[no-untyped-def]
            calls.append("allgather")
            return [msg] * ex.q, 0, 0

        def alltoall(self, ex, sends, maxlen):  # type: ignore[no-untyped-def]
            calls.append("alltoall")
            return list(sends), 0, 0

        def gather_cost(self, *args):  # type: ignore[no-untyped-def]
            calls.append("gather_cost")
            return base.gather_cost(*args)

        def alltoall_cost(self, *args):  # type: ignore[no-untyped-def]
            calls.append("alltoall_cost")
            return base.alltoall_cost(*args)

    import spbfs.patterns as reg

    monkeypatch.setitem(globals(), "_TRACED", Traced())
    monkeypatch.setattr(reg, "PATTERN_CODE", {**reg.PATTERN_CODE, "p2p": f"{__name__}:_TRACED"})
    ex = exchange.Exchange.__new__(exchange.Exchange)
    ex.q, ex.rank, ex._patterns = 2, 0, {}
    ex.allgather("p2p", None)  # type: ignore[arg-type]
    ex.alltoall("p2p", [None, None])
    link = LinkModel(latency_s=2e-6, bandwidth_Bps=1e9)
    costmodel.estimate("expand", "p2p", "list", q=4, counts=(400, 100), span=1024, link=link)
    costmodel.estimate("fold", "p2p", "list", q=4, counts=(400, 100), span=1024, link=link)
    assert calls == ["allgather", "alltoall", "gather_cost", "alltoall_cost"]


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
    ex.q, ex._patterns = 2, {}  # past the one-rank shortcut, before any message
    with pytest.raises(ValueError, match=r"exchange pattern must be one of .*got 'ring'"):
        ex.allgather("ring", None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"exchange pattern must be one of .*got 'ring'"):
        ex.alltoall("ring", [None, None])
