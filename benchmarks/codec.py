"""Frontier codecs on real frontier messages: spbfs's numba codec against PyPI libraries.

Builds a Kronecker graph (edge factor 16), runs a one-process BFS
(:func:`spbfs.bfs`) and cuts every level's frontier into the pieces a
``pr x pc`` grid would send (piece ``k`` = the ids in ``[k b, (k+1) b)``,
``b = ceil(n / p)``, made piece-local), then compresses every message with
each codec. Message classes:

``small lists``
    pieces of fewer ids than the piece's bitmap has words (the grid's
    ``encoding="auto"`` sends these as sorted id lists),
``large lists``
    the other pieces, as sorted id lists,
``bitmaps``
    the same large pieces as bitmaps (what ``auto`` sends now),
``fold pairs``
    the ``(child, parent)`` pairs of top-down levels: rank ``(i, j)`` sends
    rank ``(i, t)`` the children of piece ``i pc + t`` (piece-local, sorted)
    whose parent lies in column chunk ``j`` (global ids). Made from the final
    parents, so a child found from two column chunks is counted once: the
    real fold sends a little more.

Codecs: ``spbfs`` (:mod:`spbfs.mpi.codec`), ``pyfastpfor`` (FastPFor's
``simdbinarypacking``, i.e. S4-BP128, with its SIMD delta ``delta1``; uint32
only, so int64 ids are converted each way), ``blosc2`` (LZ4 after bit
shuffle, and Zstd level 1 after a numpy delta and bit shuffle), ``numcodecs``
(``Delta`` then Blosc Zstd level 1 with bit shuffle). Every library runs on
one thread, like the numba codec. Speeds are frontier ids (pairs for fold
pairs) per second over all messages of a class, each message a separate call
(per-call costs count: most messages are small), conversions included.

Usage (repository root)::

    python benchmarks/codec.py                       # scales 18 and 20, grids 2x2 and 4x4
    python benchmarks/codec.py --scales 16 --grids 2x2 --quick
    python benchmarks/codec.py --append codec.md        # the tables, appended to a file
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import format_table, load_average  # noqa: E402

import spbfs  # noqa: E402
from spbfs.generators import kronecker  # noqa: E402
from spbfs.mpi import codec as C  # noqa: E402

Encoder = Callable[[Any], Any]
Decoder = Callable[[Any], Any]


# -- the messages ---------------------------------------------------------------------------

def frontier_messages(scale: int, grids: list[tuple[int, int]], seed: int = 1
                      ) -> tuple[dict[str, dict[str, list]], str]:
    """Messages per ``"scale s, PRxPC"`` and class; also a description of the search."""
    edges = kronecker(scale, 16, seed=seed)
    g = spbfs.Graph.from_edgelist(edges)
    # A root of median degree among those with edges: a typical Graph500 root.
    deg = np.bincount(edges.src, minlength=edges.n) + np.bincount(edges.dst, minlength=edges.n)
    cand = np.flatnonzero(deg)
    root = int(cand[np.argsort(deg[cand], kind="stable")[cand.shape[0] // 2]])
    r = spbfs.bfs(g, root)
    levels, parents = r.levels, r.parents
    n = levels.shape[0]
    dirs = r.stats.direction
    desc = (f"Kronecker scale {scale} (edge factor 16, seed {seed}), root {root}: "
            f"{r.num_reached:,} reached in {r.depth} levels, directions "
            f"{spbfs.result.direction_string(dirs)}")
    order = np.argsort(levels, kind="stable")
    bounds = np.searchsorted(levels[order], np.arange(levels.max() + 2))
    out: dict[str, dict[str, list]] = {}
    for pr, pc in grids:
        p = pr * pc
        b = -(-n // p)
        bw = -(-b // 64)
        cls: dict[str, list] = {"small lists": [], "large lists": [], "bitmaps": [],
                                "fold pairs": []}
        cb = -(-n // pc)  # column chunk length (ids)
        for d in range(int(levels.max()) + 1):
            front = np.sort(order[bounds[d]:bounds[d + 1]]).astype(np.int64)
            cuts = np.searchsorted(front, np.arange(p + 1) * b)
            for k in range(p):
                local = front[cuts[k]:cuts[k + 1]] - k * b
                if local.shape[0] == 0:
                    continue
                if local.shape[0] < bw:
                    cls["small lists"].append(local)
                else:
                    cls["large lists"].append(local)
                    bits = np.zeros(bw, np.uint64)
                    np.bitwise_or.at(bits, local >> 6,
                                     np.uint64(1) << (local & 63).astype(np.uint64))
                    cls["bitmaps"].append(bits)
            # fold of the level that reached depth d (top-down only)
            if d >= 1 and d - 1 < dirs.shape[0] and dirs[d - 1] == 0:
                par = parents[front]
                col = par // cb
                for k in range(p):
                    for j in range(pc):
                        sel = slice(cuts[k], cuts[k + 1])
                        mask = col[sel] == j
                        if not mask.any():
                            continue
                        cls["fold pairs"].append((front[sel][mask] - k * b, par[sel][mask]))
        out[f"scale {scale}, {pr}x{pc}"] = cls
    return out, desc


# -- codecs ---------------------------------------------------------------------------------

def spbfs_codecs() -> dict[str, tuple[Encoder, Decoder, Callable[[Any], int]]]:
    buf = np.empty(1 << 22, np.int64)
    dec = np.empty(1 << 22, np.int64)
    dec2 = np.empty(1 << 22, np.int64)
    bits = np.empty(1 << 16, np.uint64)

    def dec_bitmap(m: np.ndarray) -> np.ndarray:
        bw = C.decoded_length(m)
        C.decode_bitmap(m, bits[:bw])
        return bits[:bw]

    return {
        "ids": (lambda x: C.encode_ids(x, buf), lambda m: C.decode_ids(m, dec),
                lambda m: 8 * m.shape[0]),
        "bitmap": (lambda w: C.encode_bitmap(w, buf), dec_bitmap, lambda m: 8 * m.shape[0]),
        "pairs": (lambda cp: C.encode_pairs(cp[0], cp[1], buf),
                  lambda m: C.decode_pairs(m, dec, dec2), lambda m: 8 * m.shape[0]),
    }


def fastpfor_codecs() -> dict[str, tuple[Encoder, Decoder, Callable[[Any], int]]] | str:
    try:
        import pyfastpfor as pf
    except ImportError as e:
        return f"not installed ({e})"
    codec = pf.getCodec("simdbinarypacking")
    out = np.zeros(1 << 22, np.uint32)
    out2 = np.zeros(1 << 22, np.uint32)
    dec = np.zeros((1 << 22) + 1024, np.uint32)
    dec2 = np.zeros((1 << 22) + 1024, np.uint32)

    def enc(x: np.ndarray, o: np.ndarray = out, delta: bool = True) -> tuple[np.ndarray, int]:
        x32 = x.astype(np.uint32)  # the conversion pass int64 ids pay
        if delta:
            pf.delta1(x32, x32.shape[0])
        k = codec.encodeArray(x32, x32.shape[0], o, o.shape[0])
        return (o[:k], x.shape[0])

    def de(msg: tuple[np.ndarray, int], d: np.ndarray = dec, delta: bool = True) -> np.ndarray:
        words, n = msg
        m = codec.decodeArray(words, words.shape[0], d, n + 1024)
        if delta:
            pf.prefixSum1(d, m)
        return d[:m].astype(np.int64)

    return {
        "ids": (enc, de, lambda m: 4 * m[0].shape[0] + 8),
        "pairs": (lambda cp: (enc(cp[0]), enc(cp[1], out2, False)),
                  lambda m: (de(m[0]), de(m[1], dec2, False)),
                  lambda m: 4 * (m[0][0].shape[0] + m[1][0].shape[0]) + 8),
    }


def blosc2_codecs() -> dict[str, dict[str, tuple[Encoder, Decoder, Callable[[Any], int]]]] | str:
    try:
        import blosc2
    except ImportError as e:
        return f"not installed ({e})"
    blosc2.set_nthreads(1)
    lz4 = {"codec": blosc2.Codec.LZ4, "clevel": 5, "filters": [blosc2.Filter.BITSHUFFLE],
           "typesize": 8}
    zstd = {"codec": blosc2.Codec.ZSTD, "clevel": 1, "filters": [blosc2.Filter.BITSHUFFLE],
            "typesize": 8}

    def inter(cp: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        return cp[2]  # the interleaved buffer the fold sends today (built beforehand)

    def unpair(b: bytes) -> tuple[np.ndarray, np.ndarray]:
        a = np.frombuffer(blosc2.decompress2(b), np.int64)
        return a[0::2], a[1::2]

    return {
        "blosc2 lz4": {
            "ids": (lambda x: blosc2.compress2(x, **lz4),
                    lambda b: np.frombuffer(blosc2.decompress2(b), np.int64), len),
            "bitmap": (lambda w: blosc2.compress2(w, **lz4),
                       lambda b: np.frombuffer(blosc2.decompress2(b), np.uint64), len),
            "pairs": (lambda cp: blosc2.compress2(inter(cp), **lz4), unpair, len),
        },
        "blosc2 zstd": {
            "ids": (lambda x: blosc2.compress2(np.diff(x, prepend=0), **zstd),
                    lambda b: np.cumsum(np.frombuffer(blosc2.decompress2(b), np.int64)), len),
            "bitmap": (lambda w: blosc2.compress2(w, **zstd),
                       lambda b: np.frombuffer(blosc2.decompress2(b), np.uint64), len),
            "pairs": (lambda cp: blosc2.compress2(inter(cp), **zstd), unpair, len),
        },
    }


def numcodecs_codecs() -> dict[str, tuple[Encoder, Decoder, Callable[[Any], int]]] | str:
    try:
        import numcodecs
        from numcodecs import blosc as nblosc
    except ImportError as e:
        return f"not installed ({e})"
    nblosc.use_threads = False
    z = numcodecs.Blosc(cname="zstd", clevel=1, shuffle=numcodecs.Blosc.BITSHUFFLE)
    delta = numcodecs.Delta("<i8")

    def unpair(b: bytes) -> tuple[np.ndarray, np.ndarray]:
        a = np.frombuffer(z.decode(b), np.int64)
        return a[0::2], a[1::2]

    return {
        "ids": (lambda x: z.encode(delta.encode(x)),
                lambda b: delta.decode(z.decode(b)), len),
        "bitmap": (lambda w: z.encode(w), lambda b: np.frombuffer(z.decode(b), np.uint64), len),
        "pairs": (lambda cp: z.encode(cp[2]), unpair, len),
    }


# -- measuring ------------------------------------------------------------------------------

def _best_time(fn: Callable[[], Any], min_s: float) -> float:
    """Best of three rounds, each repeated to at least ``min_s / 3``."""
    best = float("inf")
    for _ in range(3):
        reps, t0 = 0, time.perf_counter()
        while True:
            fn()
            reps += 1
            el = time.perf_counter() - t0
            if el >= min_s / 3:
                break
        best = min(best, el / reps)
    return best


def _keep(m: Any) -> Any:
    """A copy of every array in ``m`` (encoders write into reused buffers)."""
    if isinstance(m, tuple):
        return tuple(_keep(x) for x in m)
    return m.copy() if isinstance(m, np.ndarray) else m


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, tuple):
        return all(_same(x, y) for x, y in zip(a, b, strict=True))
    return np.array_equal(np.asarray(a), np.asarray(b))


def measure(name: str, msgs: list, kind: str, codec: tuple[Encoder, Decoder, Callable],
            bw: int, min_s: float) -> list[Any]:
    enc, dec, size = codec
    encoded = []
    nbytes = 0
    for x in msgs:
        m = enc(x)
        m = _keep(m)  # spbfs and pyfastpfor encode into one reused buffer
        nbytes += size(m)
        encoded.append(m)
        got = dec(m)
        want = (x[0], x[1]) if kind == "pairs" else x
        if not _same(got, want):
            raise AssertionError(f"{name} does not round-trip a {kind} message")
    if kind == "pairs":
        ids = sum(x[0].shape[0] for x in msgs)
        listb = 16 * ids
    elif kind == "bitmap":
        ids = sum(int(np.unpackbits(w.view(np.uint8)).sum()) for w in msgs)
        listb = 8 * ids
    else:
        ids = sum(x.shape[0] for x in msgs)
        listb = 8 * ids
    te = _best_time(lambda: [enc(x) for x in msgs], min_s)
    td = _best_time(lambda: [dec(m) for m in encoded], min_s)
    bitmapb = 8 * (bw + 1) * len(msgs) if kind != "pairs" else 0
    return [name, f"{8 * nbytes / ids:.2f}", f"{listb / nbytes:.2f}",
            f"{bitmapb / nbytes:.2f}" if bitmapb else "-",
            _sig(ids / te / 1e6), _sig(ids / td / 1e6),
            f"{1e6 * te / len(msgs):.1f}", f"{1e6 * td / len(msgs):.1f}"]


def _sig(x: float) -> str:
    """Three significant digits."""
    return f"{x:,.0f}" if x >= 100 else f"{x:.3g}"


def nonzero_words_size(words: np.ndarray) -> int:
    """Bytes of the "indexes of non-zero words, FOR-packed, plus those words" form."""
    nz = np.flatnonzero(words)
    return 8 * (1 + C.encode_ids(nz.astype(np.int64)).shape[0] + nz.shape[0])


def validation_line(scale: int, big: list[np.ndarray], min_s: float) -> str:
    """Encoding with its fused checks against a separate numpy check of the same lists."""
    buf = np.empty(max(m.shape[0] for m in big) + 8, np.int64)
    te = _best_time(lambda: [C.encode_ids(m, buf) for m in big], min_s)
    tv = _best_time(lambda: [bool(m[0] >= 0 and (np.diff(m) > 0).all()) for m in big], min_s)
    return (f"validation, scale {scale}: spbfs encodes the large lists (checks fused) in "
            f"{1e3 * te:.2f} ms; a separate numpy check (`diff > 0`) alone takes "
            f"{1e3 * tv:.2f} ms\n")


def run(scales: list[int], grids: list[tuple[int, int]], min_s: float) -> str:
    lines = []
    load_before = load_average()
    libs: dict[str, Any] = {"spbfs": spbfs_codecs(), "pyfastpfor": fastpfor_codecs()}
    bl = blosc2_codecs()
    if isinstance(bl, str):
        libs["blosc2"] = bl
    else:
        libs.update(bl)
    libs["numcodecs delta zstd"] = numcodecs_codecs()
    for name, c in libs.items():
        if isinstance(c, str):
            lines.append(f"{name}: {c}")
    header = ["codec", "bits/id", "x list", "x bitmap", "enc M ids/s", "dec M ids/s",
              "enc µs/msg", "dec µs/msg"]
    est_err: list[float] = []
    est_tot = [0, 0]
    for scale in scales:
        msgs, desc = frontier_messages(scale, grids)
        lines.append(f"\n{desc}\n")
        for key, cls in msgs.items():
            p = int(key.split(", ")[1].split("x")[0]) * int(key.split("x")[1])
            n = 1 << scale
            b = -(-n // p)
            bw = -(-b // 64)
            for m in cls["small lists"] + cls["large lists"]:
                real = C.encode_ids(m).shape[0]
                est = C.estimate_ids_words(m.shape[0], b)
                est_err.append((est - real) / real)
                est_tot[0] += est
                est_tot[1] += real
            for cname, kind in (("small lists", "ids"), ("large lists", "ids"),
                                ("bitmaps", "bitmap"), ("fold pairs", "pairs")):
                ms = cls[cname]
                if not ms:
                    continue
                if kind == "pairs":
                    ms = [(c, q, np.column_stack([c, q]).ravel()) for c, q in ms]
                nids = sum((x[0] if kind == "pairs" else x).shape[0] for x in ms
                           ) if kind != "bitmap" else None
                what = f"{len(ms)} messages" + (f", {nids:,} ids" if nids is not None else "")
                rows = []
                for name, c in libs.items():
                    if isinstance(c, str) or kind not in c:
                        continue
                    rows.append(measure(name, ms, kind, c[kind], bw, min_s))
                if kind == "bitmap":
                    nz = sum(nonzero_words_size(w) for w in ms)
                    setbits = sum(int(np.unpackbits(w.view(np.uint8)).sum()) for w in ms)
                    rows.append(["(non-zero words form)", f"{8 * nz / setbits:.2f}",
                                 f"{8 * setbits / nz:.2f}",
                                 f"{8 * (bw + 1) * len(ms) / nz:.2f}", "-", "-", "-", "-"])
                    kinds = [C.message_kind(C.encode_bitmap(w)) for w in ms]
                    sparse = sum(int(C.encode_bitmap(w).shape[0] <= bw) for w in ms)
                    what += f", {sparse} of {len(kinds)} sent sparse by spbfs"
                lines.append(f"{key}, {cname} ({what}):\n")
                lines.append(format_table(header, rows, markdown=True))
                lines.append("")
        big = [m for cls in msgs.values() for m in cls["large lists"]]
        if big:
            lines.append(validation_line(scale, big, min_s))
    errs = np.abs(np.array(est_err))
    lines.append(f"estimate_ids_words against the {errs.shape[0]} real list messages: "
                 f"median |error| {100 * np.median(errs):.1f} %, 90th percentile "
                 f"{100 * np.quantile(errs, 0.9):.1f} %, max {100 * errs.max():.1f} %; "
                 f"total {est_tot[0]:,} words predicted, {est_tot[1]:,} real "
                 f"({100 * (est_tot[0] - est_tot[1]) / est_tot[1]:+.1f} %)")
    lines.append(f"load average before {load_before}, after {load_average()}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scales", default="18,20")
    ap.add_argument("--grids", default="2x2,4x4")
    ap.add_argument("--min-seconds", type=float, default=0.15,
                    help="time per codec, class and direction (best of three rounds)")
    ap.add_argument("--quick", action="store_true", help="short timings (a smoke run)")
    ap.add_argument("--append", help="append the tables to this Markdown file")
    a = ap.parse_args(argv)
    scales = [int(s) for s in a.scales.split(",")]
    grids = [(int(g.split("x")[0]), int(g.split("x")[1])) for g in a.grids.split(",")]
    text = run(scales, grids, 0.02 if a.quick else a.min_seconds)
    print(text)
    if a.append:
        with open(a.append, "a") as f:
            f.write("\n" + text + "\n")


if __name__ == "__main__":
    main()
