"""Round trips of the frontier codec (:mod:`spbfs.mpi.codec`) and its error cases.

The references are the inputs themselves (a round trip must give them back)
and numpy's own bit operations for bitmaps; sizes are checked against the
bounds the module promises, not against its own arithmetic.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spbfs.mpi import codec as C

MAX63 = (1 << 63) - 1
SETTINGS = settings(max_examples=100, deadline=None, derandomize=True)


def _ids(values: set[int] | list[int]) -> np.ndarray:
    return np.array(sorted(values), dtype=np.int64)


@st.composite
def id_sets(draw: st.DrawFn) -> np.ndarray:
    """Empty, single, dense ranges, random sparse and huge-range sorted id sets."""
    kind = draw(st.sampled_from(["empty", "single", "dense", "sparse", "huge", "edges"]))
    if kind == "empty":
        return np.zeros(0, np.int64)
    if kind == "single":
        return _ids([draw(st.integers(0, MAX63))])
    if kind == "dense":
        start = draw(st.integers(0, 1 << 62))
        n = draw(st.sampled_from([1, 2, 127, 128, 129, 255, 256, 257, 1000]))
        return np.arange(start, start + n, dtype=np.int64)
    if kind == "edges":  # gaps of the widest widths around block boundaries
        n = draw(st.sampled_from([127, 128, 129, 256, 257]))
        hi = draw(st.sampled_from([1 << 40, 1 << 62, MAX63]))
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
        vals = set(rng.integers(0, hi, n - 2, dtype=np.int64).tolist()) | {0, hi}
        return _ids(vals)
    hi = (1 << 40) if kind == "huge" else draw(st.sampled_from([1 << 10, 1 << 16, 1 << 20]))
    return _ids(draw(st.sets(st.integers(0, hi), max_size=700)))


@SETTINGS
@given(ids=id_sets(), offset=st.integers(-(1 << 20), 1 << 20), as32=st.booleans())
def test_ids_round_trip(ids: np.ndarray, offset: int, as32: bool) -> None:
    if as32 and (ids.shape[0] == 0 or ids[-1] < 2**31):
        ids_in = ids.astype(np.int32)
    else:
        ids_in = ids
    msg = C.encode_ids(ids_in)
    assert msg.dtype == np.int64 and msg.ndim == 1
    assert msg.shape[0] <= C.max_encoded_words(ids.shape[0]) <= ids.shape[0] + 4
    assert C.message_kind(msg) == "ids" and C.decoded_length(msg) == ids.shape[0]
    got = C.decode_ids(msg, offset=offset)
    if ids.shape[0] and ids[-1] > MAX63 - (1 << 20):
        np.testing.assert_array_equal(C.decode_ids(msg), ids)  # offset would overflow
    else:
        np.testing.assert_array_equal(got, ids + offset)


def test_ids_into_buffers_and_trailing_words() -> None:
    ids = _ids(range(5, 5000, 7))
    buf = np.full(C.max_encoded_words(ids.shape[0]) + 10, -1, np.int64)
    msg = C.encode_ids(ids, buf)
    assert np.shares_memory(msg, buf)
    out = np.full(ids.shape[0] + 3, -9, np.int64)
    got = C.decode_ids(buf, out, offset=100)  # the whole buffer: words past the end ignored
    assert np.shares_memory(got, out) and got.shape[0] == ids.shape[0]
    np.testing.assert_array_equal(got, ids + 100)
    assert (out[ids.shape[0]:] == -9).all()


def test_dense_runs_compress_to_headers() -> None:
    ids = np.arange(1 << 40, (1 << 40) + 100_000, dtype=np.int64)
    msg = C.encode_ids(ids)
    # gaps of 0 bits: only the header, the first id and the width bytes remain
    assert msg.shape[0] <= 2 + -(-ids.shape[0] // 128 // 8) + 1
    np.testing.assert_array_equal(C.decode_ids(msg), ids)


def test_widest_gaps() -> None:
    ids = _ids([0, MAX63])
    np.testing.assert_array_equal(C.decode_ids(C.encode_ids(ids)), ids)
    ids = _ids([0, *range(1, 300), 1 << 62, MAX63])
    np.testing.assert_array_equal(C.decode_ids(C.encode_ids(ids)), ids)


@st.composite
def pair_sets(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    children = draw(id_sets())
    n = children.shape[0]
    phi = draw(st.sampled_from([1, 1 << 20, 1 << 40, MAX63]))
    plo = draw(st.integers(0, phi))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    parents = rng.integers(plo, phi, n, dtype=np.int64, endpoint=True)
    return children, parents


@SETTINGS
@given(pairs=pair_sets(), offset=st.integers(-1000, 1000))
def test_pairs_round_trip(pairs: tuple[np.ndarray, np.ndarray], offset: int) -> None:
    children, parents = pairs
    if children.shape[0] and children[-1] > MAX63 - 1000:
        offset = 0
    msg = C.encode_pairs(children, parents)
    assert msg.shape[0] <= C.max_encoded_words(children.shape[0], "pairs")
    assert C.message_kind(msg) == "pairs"
    c, p = C.decode_pairs(msg, offset=offset)
    np.testing.assert_array_equal(c, children + offset)
    np.testing.assert_array_equal(p, parents)


def test_pairs_from_interleaved_buffer() -> None:
    """The fold's buffer holds (child, parent) interleaved: strided views encode as is."""
    rng = np.random.default_rng(3)
    n = 1000
    children = np.sort(rng.choice(1 << 18, n, replace=False)).astype(np.int64)
    parents = rng.integers(0, 1 << 30, n)
    buf = np.empty(2 * n, np.int64)
    buf[0::2] = children
    buf[1::2] = parents
    msg = C.encode_pairs(buf[0::2], buf[1::2])
    co = np.empty(n + 5, np.int64)
    po = np.empty(n + 5, np.int64)
    c, p = C.decode_pairs(msg, co, po, offset=1 << 18)
    assert np.shares_memory(c, co) and np.shares_memory(p, po)
    np.testing.assert_array_equal(c, children + (1 << 18))
    np.testing.assert_array_equal(p, parents)


@st.composite
def bitmaps(draw: st.DrawFn) -> np.ndarray:
    bw = draw(st.sampled_from([0, 1, 2, 3, 64, 130, 1024]))
    density = draw(st.sampled_from([0.0, 1e-4, 0.003, 0.02, 0.1, 0.3, 0.7, 1.0]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    bits = rng.random(bw * 64) < density
    return np.packbits(bits, bitorder="little").view(np.uint64).copy()


@SETTINGS
@given(words=bitmaps())
def test_bitmap_round_trip(words: np.ndarray) -> None:
    msg = C.encode_bitmap(words)
    assert msg.shape[0] <= words.shape[0] + 1
    assert C.message_kind(msg) == "bitmap" and C.decoded_length(msg) == words.shape[0]
    out = np.full(words.shape[0] + 2, 0xDEAD, np.uint64)  # garbage must be overwritten
    C.decode_bitmap(msg, out)
    np.testing.assert_array_equal(out[:words.shape[0]], words)
    assert (out[words.shape[0]:] == 0xDEAD).all()


def test_sparse_bitmap_is_smaller_and_exact() -> None:
    words = np.zeros(4096, np.uint64)
    pos = np.array([0, 1, 63, 64, 100_000, 4096 * 64 - 1])
    np.bitwise_or.at(words, pos >> 6, np.uint64(1) << (pos & 63).astype(np.uint64))
    msg = C.encode_bitmap(words)
    assert msg.shape[0] < 20
    out = np.zeros(4096, np.uint64)
    C.decode_bitmap(msg, out)
    got = np.flatnonzero(np.unpackbits(out.view(np.uint8), bitorder="little"))
    np.testing.assert_array_equal(got, pos)


def test_estimate_against_real_messages() -> None:
    rng = np.random.default_rng(7)
    for n, span in [(500, 1 << 12), (10_000, 1 << 20), (50_000, 1 << 17), (2000, 1 << 40)]:
        if span < 1 << 30:
            ids = np.sort(rng.choice(span, n, replace=False))
        else:  # collisions are negligible
            ids = np.unique(rng.integers(0, span, n))
        real = C.encode_ids(ids.astype(np.int64)).shape[0]
        est = C.estimate_ids_words(ids.shape[0], span)
        assert abs(est - real) <= 0.1 * real + 3, (n, span, est, real)
    assert C.estimate_ids_words(0, 10) == 1
    assert C.estimate_ids_words(1000, 1000) <= 4  # every id: gaps of 0 bits


def test_calibrate_reports_rates() -> None:
    r = C.calibrate(0.03)
    assert r["encode_bytes_per_s"] > 0 and r["decode_bytes_per_s"] > 0
    assert 0 < r["words_per_id"] < 1


# -- errors ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("ids", "match"), [
    (np.array([3, 2], np.int64), "ids must be strictly increasing"),
    (np.array([1, 5, 5, 9], np.int64), "ids must be strictly increasing"),
    (np.array([-1, 2], np.int64), "ids must be non-negative"),
    (np.array([1.0, 2.0]), "ids must be int64 or int32"),
    (np.array([1, 2], np.uint64), "ids must be int64 or int32"),
    (np.zeros((2, 2), np.int64), "ids must be 1-D"),
    ([1, 2], "ids must be a numpy array"),
])
def test_encode_ids_rejects(ids: object, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        C.encode_ids(ids)  # type: ignore[arg-type]


def test_unsorted_late_in_a_long_list() -> None:
    ids = np.arange(10_000, dtype=np.int64)
    ids[9_000] = 5
    with pytest.raises(ValueError, match="strictly increasing"):
        C.encode_ids(ids)


def test_buffers_too_small() -> None:
    ids = np.arange(0, 1000, 3, dtype=np.int64)
    with pytest.raises(ValueError, match="out has"):
        C.encode_ids(ids, np.empty(10, np.int64))
    dense = np.arange(1000, dtype=np.int64)  # fits in 4 words: a small buffer is fine
    np.testing.assert_array_equal(C.decode_ids(C.encode_ids(dense, np.empty(10, np.int64))),
                                  dense)
    with pytest.raises(ValueError, match="out must be a 1-D int64"):
        C.encode_ids(ids, np.empty(2000, np.int32))
    msg = C.encode_ids(ids)
    with pytest.raises(ValueError, match="out has"):
        C.decode_ids(msg, np.empty(5, np.int64))
    words = np.ones(10, np.uint64)
    with pytest.raises(ValueError, match="out has"):
        C.encode_bitmap(words, np.empty(10, np.int64))
    with pytest.raises(ValueError, match="out_words has"):
        C.decode_bitmap(C.encode_bitmap(words), np.empty(9, np.uint64))


def test_pairs_rejects() -> None:
    with pytest.raises(ValueError, match="children must be strictly increasing"):
        C.encode_pairs(np.array([2, 1]), np.array([0, 0]))
    with pytest.raises(ValueError, match="parents must be non-negative"):
        C.encode_pairs(np.array([1, 2]), np.array([0, -4]))
    with pytest.raises(ValueError, match="differ in length"):
        C.encode_pairs(np.array([1, 2]), np.array([0]))
    with pytest.raises(ValueError, match="parents must be int64"):
        C.encode_pairs(np.array([1, 2]), np.array([0.0, 1.0]))


def test_truncated_and_foreign_messages() -> None:
    ids = np.arange(0, 100_000, 13, dtype=np.int64)
    msg = C.encode_ids(ids)
    with pytest.raises(ValueError, match="truncated"):
        C.decode_ids(msg[: msg.shape[0] - 1])
    pairs = C.encode_pairs(ids, ids)
    with pytest.raises(ValueError, match="truncated"):
        C.decode_pairs(pairs[:-1])
    with pytest.raises(ValueError, match="not ids"):
        C.decode_ids(pairs)
    with pytest.raises(ValueError, match="not pairs"):
        C.decode_pairs(msg)
    with pytest.raises(ValueError, match="not a bitmap"):
        C.decode_bitmap(msg, np.zeros(10, np.uint64))
    with pytest.raises(ValueError, match="not an encoded message"):
        C.decode_ids(np.array([12345], np.int64))
    with pytest.raises(ValueError, match="empty"):
        C.decode_ids(np.zeros(0, np.int64))
    with pytest.raises(ValueError, match="corrupt"):
        C.decode_ids(np.array([(1 << 40) << 8 | 0xC1, 0, 0], np.int64))  # absurd count
    bad = msg.copy()
    bad[2] = 64  # the first block's width byte
    with pytest.raises(ValueError, match="corrupt"):
        C.decode_ids(bad)
    words = np.zeros(100, np.uint64)
    words[7] = 3
    bm = C.encode_bitmap(words)
    with pytest.raises(ValueError, match="truncated"):
        C.decode_bitmap(bm[:-1], np.zeros(100, np.uint64))
    dense = C.encode_bitmap(np.full(100, 2**64 - 1, np.uint64))
    with pytest.raises(ValueError, match="truncated"):
        C.decode_bitmap(dense[:-1], np.zeros(100, np.uint64))


def test_max_encoded_words_bounds() -> None:
    for n in [0, 1, 2, 127, 128, 129, 1000, 10**6]:
        assert C.max_encoded_words(n) <= n + 4
        assert C.max_encoded_words(n, "pairs") <= 2 * n + 5 + n // 128
        assert C.max_encoded_words(n, "bitmap") == n + 1
    with pytest.raises(ValueError, match="kind"):
        C.max_encoded_words(3, "list")
    with pytest.raises(ValueError, match="n must be non-negative"):
        C.max_encoded_words(-1)
