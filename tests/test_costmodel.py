"""The exchange cost model: message sizes, monotonicity, choices, whole-search tables."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from spbfs.mpi.costmodel import (
    ENCODINGS,
    K_MID,
    PATTERNS,
    PHASES,
    CodecSpeed,
    LevelProfile,
    Summary,
    choose,
    encoded_bytes,
    estimate,
    format_table,
    level_loads,
    measure_profile,
    model_search,
)
from spbfs.mpi.network import PRESETS, LinkModel

GBE = PRESETS["1gbe"]
TENGBE = PRESETS["10gbe"]
SHM = LinkModel(1e-6, 10e9, "measured")  # a shared-memory link as measure_link sees one


def for_reference_bytes(ids: np.ndarray) -> int:
    """Bytes of sorted ids, delta + FOR in blocks of 128: 16-byte header, gaps in the bits
    of the block's largest gap (what a straightforward codec writes), plus 8 per message."""
    gaps = np.diff(np.concatenate([[0], ids]))
    total = 8
    for b0 in range(0, ids.shape[0], 128):
        w = max(1, int(gaps[b0:b0 + 128].max()).bit_length())
        total += 16 + math.ceil(min(128, ids.shape[0] - b0) * w / 8)
    return total


# --------------------------------------------------------------------------- sizes


@pytest.mark.parametrize(("n", "span"), [(100, 1 << 16), (5000, 1 << 20), (20000, 1 << 18),
                                         (1000, 1 << 24)])
def test_compressed_size_matches_a_reference_codec(n: int, span: int) -> None:
    rng = np.random.default_rng(n)
    ids = np.sort(rng.choice(span, n, replace=False))
    ref = for_reference_bytes(ids)
    assert encoded_bytes("compressed", n, span) == pytest.approx(ref, rel=0.2)


def test_sizes_of_lists_and_bitmaps() -> None:
    assert encoded_bytes("list", 1000, 1 << 20) == 8000
    assert encoded_bytes("list", 1000, 1 << 20, pairs=True) == 16000
    assert encoded_bytes("bitmap", 0, 1 << 20) == (1 << 20) / 8
    assert encoded_bytes("bitmap", 7, 100) == 16  # ceil(100 / 64) words
    assert encoded_bytes("bitmap", 10, 1 << 12, pairs=True) == 512 + 80
    assert encoded_bytes("list", 0, 64) == 0 and encoded_bytes("compressed", 0, 64) == 0


def test_compressed_never_far_above_a_bitmap_and_dense_bitmaps_send_clear_bits() -> None:
    span = 1 << 16
    bitmap = span / 8
    for n in (1, 100, 3000, 20000, 32768, 50000, span - 10, span):
        assert encoded_bytes("compressed", n, span) <= bitmap + 8
    # Almost full: the clear bits are few, so far below the bitmap.
    assert encoded_bytes("compressed", span - 10, span) < 200


def test_bad_encoding_is_named() -> None:
    with pytest.raises(ValueError, match="encoding"):
        encoded_bytes("zip", 10, 64)


# --------------------------------------------------------------------------- estimates


@settings(max_examples=60, deadline=None)
@given(phase=st.sampled_from(PHASES), pattern=st.sampled_from(PATTERNS),
       encoding=st.sampled_from(ENCODINGS), q=st.integers(2, 64),
       n=st.floats(1, 1e6), factor=st.floats(1.01, 100), fanout=st.integers(2, 8))
def test_more_ids_never_cost_less(phase: str, pattern: str, encoding: str, q: int, n: float,
                                  factor: float, fanout: int) -> None:
    """Up to half the span: beyond, a compressed bitmap sends its clear bits, fewer.

    Compressed ids are packed at a whole number of bits per gap, and a few more
    ids in the same span can take that width down by one bit for every id
    (1177 ids cost more than 1195 over 62 messages): only doubling them is
    sure to cost more.
    """
    assume(encoding != "compressed" or factor >= 2)
    span = 1 << 28
    kw = dict(q=q, span=span, link=TENGBE, fanout=fanout)
    a = estimate(phase, pattern, encoding, counts=Summary(n * q, n), **kw)
    b = estimate(phase, pattern, encoding, counts=Summary(n * factor * q, n * factor), **kw)
    assert b.seconds >= a.seconds * (1 - 1e-12)
    assert b.bytes >= a.bytes * (1 - 1e-12)
    if encoding == "list":  # every id is on the wire: strictly more
        assert b.seconds > a.seconds and b.bytes > a.bytes


@pytest.mark.parametrize("phase", PHASES)
@pytest.mark.parametrize("pattern", PATTERNS)
def test_slower_links_cost_more(phase: str, pattern: str) -> None:
    kw = dict(q=8, counts=Summary(8 * 4000, 4000), span=1 << 20)
    secs = [estimate(phase, pattern, "list", link=link, **kw).seconds
            for link in (PRESETS["ib"], TENGBE, GBE)]
    assert secs[0] < secs[1] < secs[2]


@pytest.mark.parametrize("phase", ["expand", "gather", "fold", "updates"])
def test_one_gbe_prefers_compressed_on_a_large_sparse_frontier(phase: str) -> None:
    c = choose(phase, patterns=("p2p",), encodings=("list", "compressed"), q=4,
               counts=Summary(4 * 20000, 20000), span=1 << 22, link=GBE)
    assert c.encoding == "compressed"


@pytest.mark.parametrize("phase", ["expand", "gather", "fold", "updates"])
def test_shared_memory_prefers_uncompressed(phase: str) -> None:
    c = choose(phase, q=4, counts=Summary(4 * 20000, 20000), span=1 << 22, link=SHM)
    assert c.encoding != "compressed"


def test_dense_frontier_prefers_bitmap_over_list() -> None:
    span = 1 << 16
    c = choose("gather", patterns=("p2p",), encodings=("list", "bitmap"), q=4,
               counts=Summary(4 * span / 2, span / 2), span=span, link=TENGBE)
    assert c.encoding == "bitmap"


@pytest.mark.parametrize("phase", ["expand", "gather", "fold", "updates"])
@pytest.mark.parametrize("fanout", [2, 3, 4])
def test_butterfly_sends_fewer_messages_than_p2p(phase: str, fanout: int) -> None:
    """From q = 5 with fanout 2 (q = f + 2 with fanout f: a first round to all but one)."""
    for q in range(max(5, fanout + 2), 70):
        kw = dict(q=q, counts=Summary(q * 1000, 1000), span=1 << 20, link=TENGBE, fanout=fanout)
        bf = estimate(phase, "butterfly", "list", **kw)
        pp = estimate(phase, "p2p", "list", **kw)
        assert bf.messages < pp.messages, (q, bf, pp)
        assert bf.rounds == math.ceil(math.log(q, fanout) - 1e-9)


@pytest.mark.parametrize("q", [2, 3, 5, 6, 8, 13, 16])
@pytest.mark.parametrize("fanout", [2, 4])
def test_butterfly_allgather_moves_every_other_piece_once(q: int, fanout: int) -> None:
    est = estimate("expand", "butterfly", "list", q=q, counts=[300] * q, span=1 << 20,
                   link=TENGBE, fanout=fanout)
    assert est.bytes == (q - 1) * 300 * 8


def test_collective_rounds_follow_mpich() -> None:
    kw = dict(counts=Summary(8 * 10, 10), span=1 << 16, link=TENGBE)
    # Bitmaps need no counts: recursive doubling alone, log2(8) rounds.
    assert estimate("gather", "collective", "bitmap", q=8, **kw).messages == 3
    # Lists: counts first (3 rounds), then 3 rounds of data.
    assert estimate("gather", "collective", "list", q=8, **kw).messages == 6
    # A large gather goes round the ring: q - 1 data rounds.
    big = estimate("gather", "collective", "bitmap", q=8, counts=Summary(0, 0),
                   span=1 << 22, link=TENGBE)
    assert big.messages == 7


def test_rotate_ignores_the_pattern() -> None:
    kw = dict(q=6, counts=Summary(6 * 500, 500), span=1 << 16, link=GBE)
    ests = {p: estimate("rotate", p, "bitmap", **kw) for p in PATTERNS}
    assert len({(e.seconds, e.messages, e.bytes) for e in ests.values()}) == 1
    assert ests["p2p"].messages == 5 and ests["p2p"].bytes == 5 * (1 << 16) / 8


def test_per_rank_counts_and_their_summary_agree_on_a_balanced_group() -> None:
    kw = dict(q=4, span=1 << 20, link=TENGBE)
    for phase in PHASES:
        a = estimate(phase, "p2p", "compressed", counts=[900, 900, 900, 900], **kw)
        b = estimate(phase, "p2p", "compressed", counts=(3600, 900), **kw)
        assert a == b


def test_imbalance_costs_more_than_balance() -> None:
    kw = dict(q=4, span=1 << 20, link=TENGBE)
    even = estimate("fold", "p2p", "list", counts=[1000] * 4, **kw)
    skew = estimate("fold", "p2p", "list", counts=[3700, 100, 100, 100], **kw)
    assert skew.seconds > even.seconds


def test_one_rank_groups_cost_nothing() -> None:
    for phase in PHASES:
        est = estimate(phase, "p2p", "list", q=1, counts=[10], span=64, link=GBE)
        assert est.seconds == 0 and est.messages == 0 and est.bytes == 0


@pytest.mark.parametrize(("kwargs", "word"), [
    (dict(phase="scatter"), "phase"),
    (dict(pattern="ring"), "pattern"),
    (dict(encoding="zip"), "encoding"),
    (dict(q=0), "q"),
    (dict(span=0), "span"),
    (dict(fanout=1), "fanout"),
    (dict(counts=[1, 2, 3]), "counts"),
    (dict(counts=[1, -2, 3, 4]), "counts"),
    (dict(counts=(10, 1)), "impossible"),
    (dict(counts=(10, 20)), "impossible"),
    (dict(counts=(math.nan, 1)), "counts"),
    (dict(codec={"encode_bps": 1e9}), "unknown"),
    (dict(counts=[1, 2, 3, 65], span=64), "exceeds"),
    (dict(codec={"encode_Bps": 0}), "encode_Bps"),
])
def test_bad_arguments_are_named(kwargs: dict, word: str) -> None:
    args = dict(phase="expand", pattern="p2p", encoding="list", q=4, counts=[1, 2, 3, 4],
                span=64, link=GBE)
    args.update(kwargs)
    phase, pattern, encoding = args.pop("phase"), args.pop("pattern"), args.pop("encoding")
    with pytest.raises(ValueError, match=word):
        estimate(phase, pattern, encoding, **args)


def test_codec_speed_from_a_calibration_dict() -> None:
    slow = CodecSpeed.coerce({"encode_Bps": 1e6, "decode_Bps": 1e6})
    assert slow.encode_Bps == 1e6 and slow.scan_Bps == CodecSpeed().scan_Bps
    kw = dict(q=4, counts=Summary(4 * 20000, 20000), span=1 << 22, link=GBE)
    # A codec this slow loses to plain lists even on 1 GbE.
    assert choose("expand", patterns=("p2p",), encodings=("list", "compressed"), codec=slow,
                  **kw).encoding == "list"


# --------------------------------------------------------------------------- choose


@pytest.mark.parametrize("phase", PHASES)
@pytest.mark.parametrize("link", [GBE, TENGBE, PRESETS["ib"], SHM])
def test_choose_returns_the_cheapest_candidate(phase: str, link: LinkModel) -> None:
    kw = dict(q=8, counts=Summary(8 * 3000, 3000), span=1 << 20, link=link)
    c = choose(phase, **kw)
    assert {(p, e) for p, e, _ in c.candidates} == {(p, e) for p in PATTERNS for e in ENCODINGS}
    assert (c.pattern, c.encoding, c.estimate) in c.candidates
    for p, e, est in c.candidates:
        assert est == estimate(phase, p, e, **kw)  # choose prices as estimate does
        assert c.estimate.seconds <= est.seconds
    assert c.pattern in c.why() and "worst" in c.why()


def test_choose_narrowed_to_one_candidate_returns_it() -> None:
    c = choose("fold", patterns=["collective"], encodings=["bitmap"], q=4,
               counts=Summary(40, 10), span=1 << 10, link=GBE)
    assert (c.pattern, c.encoding) == ("collective", "bitmap") and len(c.candidates) == 1
    with pytest.raises(ValueError, match="at least one"):
        choose("fold", patterns=[], q=4, counts=Summary(40, 10), span=64, link=GBE)
    with pytest.raises(ValueError, match="pattern"):
        choose("fold", patterns=["p2p", "ring"], q=4, counts=Summary(40, 10), span=64, link=GBE)


# --------------------------------------------------------------------------- whole searches


def test_level_loads_spread_the_frontier_evenly() -> None:
    n, pr, pc = 1 << 20, 4, 8
    loads = level_loads(n, pr, pc, frontier=64000, degsum=1e6, visited=1e5)
    q, summ, span = loads["expand"]
    assert q == pr and span == math.ceil(n / 32 / 64) * 64
    assert summ.max == pytest.approx(64000 / 32) and summ.total == pytest.approx(64000 / 32 * pr)
    assert loads["fold"][0] == pc and loads["rotate"][0] == pc
    # Nothing visited yet and few edges: almost every edge's child is new, 7/8 of them remote.
    few = level_loads(n, pr, pc, frontier=10, degsum=320, visited=10)
    assert few["fold"][1].total == pytest.approx(320 / 4 * 7 / 8, rel=0.01)


def synthetic_profile() -> LevelProfile:
    kd = np.zeros((3, K_MID.shape[0]))
    kd[:, 0] = 1.0  # every new vertex has one frontier neighbour
    return LevelProfile(frontier=np.array([1e-6, 0.01, 0.5]),
                        degsum=np.array([1e-6, 0.05, 0.6]),
                        discovered=np.array([0.01, 0.5, 0.1]),
                        bottomup=np.array([False, False, True]),
                        share=np.array([1.0, 1.0, 0.5]), kdist=kd, degree=30.0)


def test_model_search_totals_follow_the_profile() -> None:
    prof = synthetic_profile()
    scale, pr, pc = 20, 4, 4
    n, p = 1 << scale, pr * pc
    span = math.ceil(n / p / 64) * 64
    rows = {(r.phase, r.pattern, r.encoding): r for r in model_search(scale, (pr, pc), prof)}
    # p2p lists: every rank sends its piece (F/p ids) to pr - 1 others, top-down levels.
    exp = sum(8 * f * n * (pr - 1) for f in prof.frontier[:2])
    assert rows["expand", "p2p", "list"].bytes == pytest.approx(exp)
    assert rows["expand", "p2p", "list"].messages == pytest.approx(2 * p * (pr - 1))
    # The bottom-up level (run by half the searches) rotates pc - 1 bitmaps per rank.
    assert rows["rotate", "p2p", "bitmap"].bytes == pytest.approx(0.5 * p * (pc - 1) * span / 8)
    # One frontier neighbour each: a new vertex is sent top-down by one rank, which is
    # another than its owner with probability (pc - 1) / pc, as 16-byte pairs.
    fold = sum(16 * d * n * (pc - 1) / pc for d in prof.discovered[:2])
    assert rows["fold", "p2p", "list"].bytes == pytest.approx(fold)
    upd = 0.5 * 16 * prof.discovered[2] * n * (pc - 1) / pc
    assert rows["updates", "p2p", "list"].bytes == pytest.approx(upd)
    text = format_table(list(rows.values()))
    assert "auto" in text and "p2p/list" in text
    md = format_table(list(rows.values()), markdown=True)
    assert md.startswith("| pattern/encoding")


def test_model_search_auto_is_never_the_worst() -> None:
    prof = synthetic_profile()
    for link in ("1gbe", "10gbe", "ib"):
        rows = model_search(30, (16, 16), prof, link=link)
        for ph in PHASES:
            fixed = [r.seconds for r in rows if r.phase == ph and r.pattern != "auto"]
            auto = next(r for r in rows if r.phase == ph and r.pattern == "auto")
            if max(fixed) > 0:
                assert auto.seconds < max(fixed)


def test_model_search_rejects_bad_grids() -> None:
    with pytest.raises(ValueError, match="grid"):
        model_search(20, (0, 4), synthetic_profile())
    with pytest.raises(ValueError, match="scale"):
        model_search(99, (2, 2), synthetic_profile())
    with pytest.raises(ValueError, match="network"):
        model_search(20, (2, 2), synthetic_profile(), link="carrier pigeon")


def test_measured_profile_matches_scipy_levels() -> None:
    import scipy.sparse as sp
    from scipy.sparse.csgraph import shortest_path

    from spbfs.generators import kronecker

    prof = measure_profile(10, 8, roots=2, seed=3)
    el = kronecker(10, 8, seed=3)
    n = el.n
    a = sp.csr_matrix((np.ones(el.src.shape[0]), (el.src, el.dst)), shape=(n, n))
    assert len(prof.roots) == 2
    # The first level (the root alone) is the same for every root.
    assert prof.frontier[0] == pytest.approx(1 / n) and prof.share[0] == 1.0
    for root in prof.roots:
        d = shortest_path(a, directed=False, unweighted=True, indices=root)
        assert len(prof.frontier) >= int(d[np.isfinite(d)].max())
    rows = prof.kdist.sum(axis=1)
    assert np.allclose(rows[prof.discovered > 0], 1.0)
    # Fractions reached: the mean over roots of scipy's component sizes.
    reached = []
    for root in prof.roots:
        d = shortest_path(a, directed=False, unweighted=True, indices=root)
        reached.append(np.isfinite(d).sum() / n)
    lv = len(prof.frontier)
    total = prof.frontier[0] + float((prof.discovered * prof.share)[:lv].sum())
    assert total == pytest.approx(np.mean(reached), rel=1e-9)
