"""Replay the thread trial (``spbfs.threads.ThreadProbe``) on drawn search costs.

Two threads beside one busy process are a lottery: a search on two threads is fast
(2.2-2.8 ms, Kronecker 18's quiet two-thread time) when both get their slices, and
waits slices (7-12 ms) when the helper is descheduled; one thread takes 2.9-4.3 ms
(the spread measured beside a busy process, docs/benchmarks.md). This script runs
the probe's own ``pick``/``record`` on such costs, with a clock of its own, as
``benchmarks/defaults.py`` calls a graph's default in one pass: three warm-up
searches (the first builds the engine: 5x), fifteen interleaved ones 30 ms apart,
eighteen in a row. It prints, per share of fast two-thread searches, the default's
median over the fifteen interleaved searches against the better fixed count's median
(drawn the same way): the median, 90th percentile and share of passes above 1.2 over
``--passes`` passes, and the same for the means; and each fixed count's median and mean against
the better one's (where the two statistics pick different counts, no count and no
mix of the two is near the best by both). The reading gives two threads (the
idle core plus the spare) and weighs one against them; ``--first 1``: one thread,
weighing two (every core taken, as beside two busy processes; the costs drawn the
same way). No machine is measured: this is the trial's decision
rule against a model of the machine, which a noisy shared machine cannot show in a
few passes. ``--other PATH`` replays a second ``threads.py`` (another version of the
module) beside it.

Usage (repository root, venv active)::

    python benchmarks/thread_trial.py --passes 400
    python benchmarks/thread_trial.py --other /path/to/older/spbfs/threads.py
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
import types
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import format_table

REACHED = 262_144  # Kronecker 18's vertices


def _module(path: Path, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"--other {path}: not a Python module")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


class _Replay:
    """Drawn costs and a clock of its own for one module's ``ThreadProbe``."""

    def __init__(self, mod: Any, seed: int) -> None:
        self.now = 0.0
        self.rng = np.random.default_rng(seed)
        self.probe_class = mod.ThreadProbe
        # The module's own reference to ``time``, not the interpreter's module.
        mod.time = types.SimpleNamespace(monotonic=lambda: self.now,
                                         perf_counter=time.perf_counter)

    def cost(self, count: int, fast: float) -> float:
        rng = self.rng
        if count == 1:
            return float(rng.uniform(2.9e-3, 4.3e-3))
        return float(rng.uniform(2.2e-3, 2.8e-3) if rng.random() < fast
                     else rng.uniform(7e-3, 12e-3))

    def one_pass(self, fast: float, first: int) -> tuple[float, float]:
        """The default's median over one pass's interleaved searches, over the better
        fixed count's; the same for the means."""
        probe = self.probe_class()
        other = 3 - first
        timed = []
        for i in range(36):
            self.now += 0.03 if i < 18 else 0.0
            count = probe.pick(first, other)
            seconds = self.cost(count, fast) * (5 if i == 0 else 1)
            self.now += seconds
            probe.record(count, first, other, seconds, REACHED)
            if 3 <= i < 18:
                timed.append(seconds)
        fixed = [[self.cost(c, fast) for _ in range(15)] for c in (1, 2)]
        return (float(np.median(timed)) / min(float(np.median(f)) for f in fixed),
                float(np.mean(timed)) / min(float(np.mean(f)) for f in fixed))


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--passes", type=int, default=400)
    p.add_argument("--fast", type=float, nargs="*", default=[1.0, 0.9, 0.7, 0.5, 0.3, 0.0],
                   help="shares of two-thread searches that are fast")
    p.add_argument("--other", type=Path, help="another version of spbfs/threads.py")
    p.add_argument("--first", type=int, choices=[1, 2], default=2,
                   help="the reading's count (the other is weighed against it)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--markdown", action="store_true")
    args = p.parse_args(argv)
    here = Path(__file__).resolve().parents[1] / "spbfs" / "threads.py"
    replays = {"this": _Replay(_module(here, "_threads_this"), args.seed)}
    if args.other is not None:
        if not args.other.is_file():
            p.error(f"--other {args.other}: no such file")
        replays["other"] = _Replay(_module(args.other, "_threads_other"), args.seed)
    rows = []
    for fast in args.fast:
        # The fixed counts against the better one, by median and by mean (many draws).
        draws = {c: np.array([replays["this"].cost(c, fast) for _ in range(20_000)])
                 for c in (1, 2)}
        fixed = []
        for stat in (np.median, np.mean):
            best = min(float(stat(d)) for d in draws.values())
            fixed.append(" / ".join(f"{float(stat(draws[c])) / best:.2f}" for c in (1, 2)))
        row = [f"{fast:.1f}", *fixed]
        for replay in replays.values():
            r = np.array([replay.one_pass(fast, args.first) for _ in range(args.passes)])
            for k in (0, 1):
                row.append(f"{np.median(r[:, k]):.2f} / {np.percentile(r[:, k], 90):.2f} / "
                           f"{np.mean(r[:, k] > 1.2) * 100:.0f} %")
        rows.append(row)
    heads = ["fast two-thread searches", "threads=1 / 2: median / best",
             "threads=1 / 2: mean / best"] + [
        f"{k}: default/best {stat} p50 / p90 / passes > 1.2" for k in replays
        for stat in ("median", "mean")]
    print(f"{args.passes} passes per row, seed {args.seed}, the reading's count {args.first}")
    print(format_table(heads, rows, markdown=args.markdown))


if __name__ == "__main__":
    main()
