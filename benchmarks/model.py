"""The exchange cost model: predicted bytes, messages and seconds per phase of whole searches.

Prints, from :func:`spbfs.mpi.costmodel.model_search` on a level profile
measured by one-process searches (Kronecker scale ``--profile-scale``):

1. for 16×16 and 64×64 grids at scales 30, 33 and 36 (and 2×2 at 18 and 20),
   bytes and messages per phase (summed over ranks and levels) for every
   pattern × encoding and for ``auto`` (the model's own choice per level,
   from what the ranks know before the level), with the busiest rank's
   summed seconds on one link (``--link``);
2. a summary over the links 1gbe, 10gbe and ib: the best and worst fixed
   choice and ``auto``, in modelled seconds;
3. with ``--check``: the model against the counters of real 2×2 searches
   (``mpiexec -n 4``, frontier encodings list and bitmap, the same graph and
   roots as the profile);
4. with ``--codec``: the speed of the numba delta + FOR bit-packing prototype
   behind :class:`~spbfs.mpi.costmodel.CodecSpeed`'s defaults.

Usage (repository root, venv active)::

    python benchmarks/model.py                    # tables (~10 s after numba's cache is warm)
    python benchmarks/model.py --check --codec    # + measured counters and codec speed (~1 min)
    python benchmarks/model.py --markdown
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from spbfs.mpi.costmodel import (  # noqa: E402
    ENCODINGS,
    PATTERNS,
    PHASES,
    LevelProfile,
    format_table,
    measure_profile,
    model_search,
)

#: Model phase -> the search's counter phase.
COUNTER = {"expand": "expand", "gather": "frontier_gather", "fold": "fold",
           "rotate": "rotate", "updates": "parent_updates"}


def load_line() -> str:
    """The load average, for the record."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f}"


def tables(prof: LevelProfile, link: str, markdown: bool) -> None:
    for grid, scale in (((2, 2), 18), ((2, 2), 20), ((16, 16), 30), ((16, 16), 33),
                        ((16, 16), 36), ((64, 64), 30), ((64, 64), 33), ((64, 64), 36)):
        rows = model_search(scale, grid, prof, link=link)
        print(f"\n{grid[0]}x{grid[1]}, scale {scale}, link {link}: bytes / messages per "
              f"phase (all ranks, one search), seconds (busiest rank, summed)\n")
        print(format_table(rows, markdown=markdown))
        picks = "; ".join(f"{r.phase}: " + ", ".join(f"{k}×{v}" for k, v in r.picks.items())
                          for r in rows if r.pattern == "auto" and r.picks)
        print(f"\nauto picked (levels): {picks}")


def summary(prof: LevelProfile, markdown: bool) -> None:
    head = ["grid", "scale", "link", "best fixed", "s", "worst fixed", "s", "auto s",
            "auto / best"]
    body = []
    for grid in ((2, 2), (16, 16), (64, 64)):
        for scale in ((18, 20) if grid == (2, 2) else (30, 33, 36)):
            for link in ("1gbe", "10gbe", "ib"):
                rows = model_search(scale, grid, prof, link=link)
                tot: dict[str, float] = {}
                for r in rows:
                    key = "auto" if r.pattern == "auto" else f"{r.pattern}/{r.encoding}"
                    tot[key] = tot.get(key, 0.0) + r.seconds
                auto = tot.pop("auto")
                best = min(tot, key=tot.__getitem__)
                worst = max(tot, key=tot.__getitem__)
                body.append([f"{grid[0]}x{grid[1]}", str(scale), link, best,
                             f"{tot[best] * 1e3:.3g} ms", worst, f"{tot[worst] * 1e3:.3g} ms",
                             f"{auto * 1e3:.3g} ms", f"{auto / tot[best]:.3f}"])
    _print(head, body, markdown)


def _print(head: list[str], body: list[list[str]], markdown: bool) -> None:
    if markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for c in body:
            print("| " + " | ".join(c) + " |")
        return
    widths = [max(len(h), *(len(c[k]) for c in body)) for k, h in enumerate(head)]
    fmt = "  ".join(f"{{:>{w}}}" for w in widths)
    print(fmt.format(*head))
    for c in body:
        print(fmt.format(*c))


# --------------------------------------------------------------------------- --check


def worker(scale: int, roots: list[int]) -> None:
    """Under mpiexec: per encoding, the counters of searches from ``roots``, JSON on rank 0."""
    from spbfs.mpi import DistGraph, bfs

    g = DistGraph.kronecker(scale, 16, seed=1, grid=(2, 2))
    out = {}
    for enc in ("list", "bitmap"):
        bfs(g, roots[0], frontier_encoding=enc)  # warm-up
        words: dict[str, int] = {}
        msgs: dict[str, int] = {}
        for r in roots:
            res = bfs(g, r, frontier_encoding=enc)
            for ph, w in res.words_by_phase().items():
                words[ph] = words.get(ph, 0) + w
            for ph, m in res.messages_by_phase().items():
                msgs[ph] = msgs.get(ph, 0) + m
        out[enc] = {"words": words, "messages": msgs}
    if g.grid.rank == 0:
        print("JSON " + json.dumps(out))


def check(scale: int, roots: int, markdown: bool) -> None:
    prof = measure_profile(scale, 16, roots=roots, seed=1)
    here = str(Path(sys.executable).parent)
    exe = shutil.which("mpiexec", path=here + os.pathsep + os.environ.get("PATH", ""))
    if exe is None:
        sys.exit("benchmarks/model.py --check: mpiexec not found")
    cmd = [exe, "-n", "4", sys.executable, __file__, "--worker", str(scale),
           *map(str, prof.roots)]
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600, check=True)
    line = next(x for x in done.stdout.splitlines() if x.startswith("JSON "))
    got = json.loads(line[5:])
    k = len(prof.roots)
    rows = model_search(scale, (2, 2), prof, link="native")
    by = {(r.phase, r.pattern, r.encoding): r for r in rows}
    print(f"\n2x2, Kronecker scale {scale}, mean of {k} searches (roots {list(prof.roots)}): "
          f"the model's p2p rows against the search's counters; {load_line()}\n")
    head = ["phase", "frontier encoding", "model bytes", "measured bytes", "ratio",
            "model msgs", "measured msgs"]
    body = []
    for ph in PHASES:
        for enc in ("list", "bitmap"):
            # Pairs always travel as lists and the rotation as a bitmap, whatever the setting.
            menc = "list" if ph in ("fold", "updates") else "bitmap" if ph == "rotate" else enc
            r = by[ph, "p2p", menc]
            wb = got[enc]["words"][COUNTER[ph]] * 8 / k
            wm = got[enc]["messages"][COUNTER[ph]] / k
            ratio = f"{r.bytes / wb:.2f}" if wb else "-"
            body.append([ph, enc, f"{r.bytes:,.0f}", f"{wb:,.0f}", ratio, f"{r.messages:,.0f}",
                         f"{wm:,.1f}"])
    _print(head, body, markdown)


# --------------------------------------------------------------------------- --codec


def codec_speed() -> None:
    """The numba delta + FOR prototype's encode and decode speed (uncompressed bytes/s)."""
    import numba

    @numba.njit
    def enc(ids: np.ndarray, out: np.ndarray) -> int:
        n = ids.shape[0]
        pos = 0
        prev = 0
        for b0 in range(0, n, 128):
            b1 = min(n, b0 + 128)
            mx = 0
            p = prev
            for i in range(b0, b1):
                mx = max(mx, ids[i] - p)
                p = ids[i]
            w = 1
            while (1 << w) <= mx:
                w += 1
            pos = (pos + 63) & ~63
            out[pos >> 6] = w
            pos += 64
            for i in range(b0, b1):
                d = ids[i] - prev
                prev = ids[i]
                wi = pos >> 6
                bi = pos & 63
                out[wi] |= np.uint64(d) << np.uint64(bi)
                if bi + w > 64:
                    out[wi + 1] |= np.uint64(d) >> np.uint64(64 - bi)
                pos += w
        return (pos + 63) >> 6

    @numba.njit
    def dec(buf: np.ndarray, n: int, out: np.ndarray) -> None:
        pos = 0
        prev = 0
        for b0 in range(0, n, 128):
            b1 = min(n, b0 + 128)
            pos = (pos + 63) & ~63
            w = buf[pos >> 6]
            pos += 64
            mask = (np.uint64(1) << np.uint64(w)) - np.uint64(1)
            for i in range(b0, b1):
                wi = pos >> 6
                bi = pos & 63
                v = buf[wi] >> np.uint64(bi)
                if bi + w > 64:
                    v |= buf[wi + 1] << np.uint64(64 - bi)
                prev += np.int64(v & mask)
                out[i] = prev
                pos += w

    rng = np.random.default_rng(1)
    print(f"\nnumba delta + FOR prototype, one thread; {load_line()}\n")
    head = ["ids", "span", "bits per id", "encode GB/s", "decode GB/s"]
    body = []
    for n, span in ((1 << 20, 1 << 24), (1 << 16, 1 << 22), (4096, 1 << 20)):
        ids = np.sort(rng.choice(span, n, replace=False)).astype(np.int64)
        out = np.zeros(n + n // 64 + 16, np.uint64)
        back = np.empty(n, np.int64)
        words = enc(ids, out)
        dec(out, n, back)
        if not np.array_equal(back, ids):
            raise RuntimeError("prototype codec does not round-trip")
        te, td = [], []
        for _ in range(7):
            out[:] = 0
            t = time.perf_counter()
            enc(ids, out)
            te.append(time.perf_counter() - t)
            t = time.perf_counter()
            dec(out, n, back)
            td.append(time.perf_counter() - t)
        body.append([f"{n:,}", f"{span:,}", f"{words * 64 / n:.2f}",
                     f"{8 * n / np.median(te) / 1e9:.2f}", f"{8 * n / np.median(td) / 1e9:.2f}"])
    _print(head, body, False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--profile-scale", type=int, default=18)
    ap.add_argument("--roots", type=int, default=4)
    ap.add_argument("--link", default="10gbe", help="link of the detailed tables")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--check", type=int, nargs="?", const=18, default=None, metavar="SCALE",
                    help="compare with the counters of 2x2 searches (default scale 18)")
    ap.add_argument("--codec", action="store_true", help="time the codec prototype")
    ap.add_argument("--worker", type=int, nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.worker[0], args.worker[1:])
        return
    t0 = time.perf_counter()
    prof = measure_profile(args.profile_scale, 16, roots=args.roots, seed=1)
    print(f"profile: {prof.source} ({time.perf_counter() - t0:.1f} s); {load_line()}")
    print("levels (fraction of n in the frontier, of the total degree, direction): "
          + ", ".join(f"{f:.3g}/{d:.3g}/{'B' if b else 'T'}"
                      for f, d, b in zip(prof.frontier, prof.degsum, prof.bottomup,
                                         strict=True)))
    print(f"patterns {PATTERNS}, encodings {ENCODINGS}")
    summary(prof, args.markdown)
    tables(prof, args.link, args.markdown)
    if args.check is not None:
        check(args.check, args.roots, args.markdown)
    if args.codec:
        codec_speed()


if __name__ == "__main__":
    main()
