"""One-process search speed when other processes keep the cores busy.

For 0, 1 and 2 busy processes (``python -c 'while True: pass'``, started and
ended by this script), this runs searches on Kronecker graphs (scales 16, 18
and 20 by default, and at scale 16 from an isolated vertex) with 1 thread,
with 2 threads and with the default (``Config.threads`` unset: the thread count
:mod:`spbfs.threads` picks per search). The three settings take turns search by
search (their order rotates from one root to the next) and the table gives the median
milliseconds per search of each, the ratio of the default to the best of the
three (and the same of the means: a try of two threads that waits scheduler
slices costs one search many times over, which a median hides), and the
thread counts the default's searches ran their parallel levels on
(``BFSResult.threads``; ``-`` for a search that ran none). ``uptime`` is
printed before and after each busy level: on a machine shared with other
people the numbers move with their load.

Usage (repository root, venv active)::

    python benchmarks/busy.py                      # scales 16 18 20, 0/1/2 busy, 5 rounds
    python benchmarks/busy.py --scales 16 --busy 2 --rounds 3 --markdown
    python benchmarks/busy.py --busy 2 --nice 19       # busy processes in the background
    python benchmarks/busy.py --busy 2 --back-to-back --roots 50   # searches in a row
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np
from _common import format_table, median, set_omp_wait, start_busy, stop_busy, uptime

SETTINGS: tuple[int | None, ...] = (1, 2, None)


def _cases(scales: list[int], edgefactor: int, nroots: int, seed: int) -> list[tuple]:
    """``(label, graph per setting, roots)`` per scale, and the smallest's isolated root."""
    import spbfs
    from spbfs.generators import kronecker

    out = []
    for scale in scales:
        g = spbfs.Graph.from_edgelist(kronecker(scale, edgefactor, seed=seed))
        deg = np.asarray(g.out_degree)
        rng = np.random.default_rng(seed)
        roots = rng.choice(np.flatnonzero(deg > 0), size=nroots, replace=False)
        # One graph per setting, made once: a config passed to every call would give each
        # search a fresh Graph without the scratch arrays the previous search left it.
        graphs = {t: g.with_config(g.config.replace(threads=t)) for t in SETTINGS}
        out.append((f"Kronecker {scale}", graphs, [int(r) for r in roots]))
        isolated = np.flatnonzero(deg == 0)
        if scale == min(scales) and len(isolated):
            out.append((f"Kronecker {scale}, isolated root", graphs,
                        [int(isolated[0])] * nroots))
    return out


def _time(graphs: dict, roots: list[int], threads: int | None, ceiling: int,
          ran: Counter | None = None) -> list[float]:
    """Milliseconds of each search from ``roots`` with ``threads`` (None: the default);
    ``ran`` counts the thread counts the searches' parallel levels ran on."""
    import numba

    import spbfs

    # An explicit count stays set after a search; the default's ceiling is the caller's.
    numba.set_num_threads(ceiling)
    g = graphs[threads]
    out = []
    for r in roots:
        t = time.perf_counter()
        res = spbfs.bfs(g, r)
        out.append((time.perf_counter() - t) * 1e3)
        if ran is not None:
            ran[getattr(res, "threads", None) or 0] += 1  # older checkouts: "-"
    return out


def _sampling_cost(repeat: int = 2000) -> str:
    """Median microseconds of one policy decision and of the own-thread count it may add."""
    import numba

    from spbfs.threads import ThreadPolicy, read_own_running

    policy, ceiling = ThreadPolicy(), numba.get_num_threads()
    workers = numba.config.NUMBA_NUM_THREADS - 1

    def per_call(fn) -> float:
        ts = []
        for _ in range(repeat):
            t = time.perf_counter_ns()
            fn()
            ts.append(time.perf_counter_ns() - t)
        return median(ts) / 1e3

    choose = per_call(lambda: policy.choose(ceiling, workers))
    own = per_call(read_own_running)
    return (f"sampling: ThreadPolicy.choose {choose:.1f} us (median of {repeat}), "
            f"the own-thread count it adds when ambiguous {own:.1f} us")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scales", type=int, nargs="+", default=[16, 18, 20])
    ap.add_argument("--edgefactor", type=int, default=16)
    ap.add_argument("--busy", type=int, nargs="+", default=[0, 1, 2],
                    help="numbers of busy processes to run beside the searches")
    ap.add_argument("--nice", type=int, default=0,
                    help="niceness of the busy processes (e.g. 19: background jobs, which "
                         "the load counts as runnable but the scheduler lets wait)")
    ap.add_argument("--back-to-back", action="store_true",
                    help="run each setting's searches of a round in a row (the order rotating "
                         "by round) instead of taking turns search by search")
    ap.add_argument("--roots", type=int, default=8, help="searches per setting and round")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--omp-wait", default=None,
                    help="set OMP_WAIT_POLICY for numba's OpenMP layer (default: leave it alone)")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args(argv)
    if args.rounds < 1 or args.roots < 1:
        ap.error("--rounds and --roots must be >= 1")
    if any(k < 0 for k in args.busy):
        ap.error("--busy takes numbers >= 0")
    if not 0 <= args.nice <= 19:
        ap.error("--nice takes 0 to 19 (a busy process cannot be given a higher priority)")
    set_omp_wait(args.omp_wait)

    import numba

    import spbfs

    ceiling = numba.get_num_threads()
    cases = _cases(args.scales, args.edgefactor, args.roots, args.seed)
    for _, graphs, roots in cases:  # compile every kernel before any timing
        for t in SETTINGS:
            _time(graphs, roots[:1], t, ceiling)
            spbfs.bfs(graphs[t], roots[0], direction="bottom-up", max_depth=3)
    print(f"numba threading layer {numba.threading_layer()}, pool {numba.config.NUMBA_NUM_THREADS}"
          f", caller's threads {ceiling}, {args.rounds} rounds x {args.roots} searches")
    print(_sampling_cost())
    rows = []
    for k in args.busy:
        print(f"{k} busy (nice {args.nice}): before {uptime()}", flush=True)
        hogs = start_busy(k, args.nice)
        try:
            for label, graphs, roots in cases:
                times: dict[int | None, list[float]] = {t: [] for t in SETTINGS}
                ran: Counter[int] = Counter()
                for rnd in range(args.rounds):
                    if args.back_to_back:
                        # Each setting's searches in a row, as a user's loop runs them
                        # (the default's tries and what they cost included).
                        turn = rnd % len(SETTINGS)
                        for t in SETTINGS[turn:] + SETTINGS[:turn]:
                            times[t] += _time(graphs, roots, t, ceiling,
                                              ran if t is None else None)
                        continue
                    # The settings take turns root by root, the order rotating: with
                    # every core taken a search either runs through or waits a
                    # scheduler slice, and which one a run of searches in a row gets
                    # depends on its place in the sequence, not on its setting.
                    for i, r in enumerate(roots):
                        turn = (rnd + i) % len(SETTINGS)
                        for t in SETTINGS[turn:] + SETTINGS[:turn]:
                            times[t] += _time(graphs, [r], t, ceiling,
                                              ran if t is None else None)
                med = {t: median(v) for t, v in times.items()}
                mean = {t: sum(v) / len(v) for t, v in times.items()}
                best = min(med.values())
                rows.append([k, label, *(f"{med[t]:.2f}" for t in SETTINGS),
                             f"{med[None] / best:.2f}",
                             f"{mean[None] / min(mean.values()):.2f}",
                             " ".join(f"{n or '-'}:{c}" for n, c in sorted(ran.items()))])
        finally:
            stop_busy(hogs)
        print(f"{k} busy: after  {uptime()}", flush=True)
    numba.set_num_threads(ceiling)
    headers = ["busy", "graph", "1 thread ms", "2 threads ms", "default ms", "default / best",
               "mean: default / best", "default ran on (threads:searches)"]
    print(format_table(headers, rows, markdown=args.markdown, align="rlrrrrrl"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
