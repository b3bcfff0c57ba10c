"""Butterfly exchanges (:mod:`spbfs.mpi.butterfly`): rounds, messages and buffers per rank count.

Without options: the table predicted by :func:`spbfs.mpi.butterfly.predict`
for ``p = 2 .. 9`` ranks and fanouts 2, 3 and 4, no MPI needed: rounds,
messages per rank of the butterfly against ``p - 1`` point-to-point messages,
and the largest buffer (one message, one round's receipts) as a fraction of
the data.

``--measure``: one ``mpiexec -n p`` run per ``p`` of this script in worker
mode, which calls :meth:`~spbfs.mpi.butterfly.Butterfly.allgather` and
:meth:`~spbfs.mpi.butterfly.Butterfly.alltoall` once per fanout and reports
the counters (the maximum over the ranks); the table then shows measured
counts beside the predicted ones.

``--time P``: under ``mpiexec -n P`` (launched here), the time per call of a
tiny exchange (a few ids per rank, as on a road network's thousand levels):
the butterfly's allgather and alltoall against :func:`spbfs.mpi.comm.exchange`
(one round of ``p - 1`` messages with preallocated receive buffers, what the
grid's frontier exchange and fold use now). Medians of blocks of calls; the
load average is printed with them.

Run ``python benchmarks/butterfly.py --help``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from _common import format_table, load_average  # noqa: E402

from spbfs.mpi.butterfly import predict  # noqa: E402

FANOUTS = (2, 3, 4)


def _mpiexec() -> str:
    here = Path(sys.executable).parent / "mpiexec"
    return str(here) if here.exists() else "mpiexec"


def _run_worker(p: int, *args: str) -> dict:
    """This script under ``mpiexec -n p`` in worker mode; rank 0's JSON line."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run([_mpiexec(), "-n", str(p), sys.executable, __file__, "--worker", *args],
                         check=True, capture_output=True, text=True, env=env, timeout=600).stdout
    return json.loads(out.strip().splitlines()[-1])


# --------------------------------------------------------------------------- worker (under mpiexec)


def worker_counts() -> None:
    """Counters of one allgather and one alltoall per fanout (max over ranks)."""
    from mpi4py import MPI

    from spbfs.mpi.butterfly import Butterfly

    comm = MPI.COMM_WORLD
    q, r = comm.Get_size(), comm.Get_rank()
    res = {}
    for f in FANOUTS:
        b = Butterfly(comm, f)
        b.allgather(np.arange(r + 1, dtype=np.int64))
        g = comm.allreduce(b.messages, op=MPI.MAX)
        b.alltoall([np.arange(t + 1, dtype=np.int64) for t in range(q)])
        a = comm.allreduce(b.messages, op=MPI.MAX)
        res[f] = [g, a]
    if r == 0:
        print(json.dumps(res), flush=True)


def worker_time(calls: int, blocks: int, ids: int) -> None:
    """Seconds per call of tiny exchanges: butterfly against comm.exchange."""
    from mpi4py import MPI

    from spbfs.mpi import comm as C
    from spbfs.mpi.butterfly import Butterfly
    from spbfs.mpi.comm import WaitPolicy

    comm = MPI.COMM_WORLD.Dup()
    C.set_policy(comm, WaitPolicy())  # the grid's default policy
    q, r = comm.Get_size(), comm.Get_rank()
    msg = np.arange(ids, dtype=np.int64) + r
    sends = [np.arange(ids, dtype=np.int64) + t for t in range(q)]
    bufs = [np.empty(max(ids, 1) * 2, dtype=np.int64) for _ in range(q)]
    flys = {f: Butterfly(comm, f) for f in FANOUTS if f < q or f == 2}
    ops = {"exchange (p2p)": lambda: C.exchange(comm, [msg] * q, bufs, tag=5)}
    for f, b in flys.items():
        ops[f"butterfly allgather f={f}"] = b.allgather
        ops[f"butterfly alltoall f={f}"] = b.alltoall
    args = {"exchange (p2p)": ()}
    for name in ops:
        if "allgather" in name:
            args[name] = (msg,)
        elif "alltoall" in name:
            args[name] = (sends,)
    times: dict[str, list[float]] = {name: [] for name in ops}
    for _ in range(blocks):  # interleaved, so load changes hit every variant alike
        for name, fn in ops.items():
            a = args[name]
            C.wait_barrier(comm)
            t0 = time.perf_counter()
            for _ in range(calls):
                fn(*a)
            times[name].append((time.perf_counter() - t0) / calls)
    med = {name: float(np.median(v)) for name, v in times.items()}
    gathered = comm.gather(med, root=0)
    if r == 0:
        print(json.dumps({k: max(g[k] for g in gathered) for k in med}), flush=True)


# --------------------------------------------------------------------------- tables


def predicted_rows(measured: dict[int, dict] | None) -> list[list[str]]:
    rows = []
    for p in range(2, 10):
        for f in FANOUTS:
            pr = predict(p, f)
            g, a = pr["allgather"], pr["alltoall"]
            row = [str(p), str(f), str(pr["rounds"]), str(g["messages"]), str(p - 1)]
            if measured is not None:
                mg, ma = measured[p][str(f)]
                row.append(f"{mg} / {ma}")
            row += [f"{g['largest_message']:.2f}", f"{g['largest_round']:.2f}",
                    f"{a['largest_message']:.2f}", f"{a['peak']:.2f}"]
            rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--measure", action="store_true",
                    help="run mpiexec -n p for p = 2..9 and show the counters")
    ap.add_argument("--time", type=int, nargs="*", metavar="P",
                    help="time tiny exchanges on these rank counts (e.g. --time 2 4)")
    ap.add_argument("--calls", type=int, default=500, help="calls per timed block")
    ap.add_argument("--blocks", type=int, default=7, help="timed blocks per variant")
    ap.add_argument("--ids", type=int, default=3, help="int64 entries per message when timing")
    ap.add_argument("--markdown", action="store_true", help="markdown tables")
    ap.add_argument("--worker", nargs="*", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker is not None:
        if args.worker and args.worker[0] == "time":
            worker_time(*(int(x) for x in args.worker[1:]))
        else:
            worker_counts()
        return
    measured = {p: _run_worker(p) for p in range(2, 10)} if args.measure else None
    head = ["p", "fanout", "rounds", "msgs/rank", "p2p msgs"]
    if measured is not None:
        head.append("measured (ag / a2a)")
    head += ["ag largest msg", "ag largest round", "a2a largest msg", "a2a peak"]
    print(f"# butterfly exchanges, predicted{' and measured' if measured else ''}")
    print(format_table(head, predicted_rows(measured), markdown=args.markdown))
    if args.time:
        print(f"\n# seconds per call, {args.ids} ids per message, median of {args.blocks} "
              f"blocks of {args.calls} calls, slowest rank")
        for p in args.time:
            before = load_average()
            t = _run_worker(p, "time", str(args.calls), str(args.blocks), str(args.ids))
            rows = [[name, f"{sec * 1e6:.1f}"] for name, sec in t.items()]
            print(f"\np = {p} (load before {before})")
            print(format_table(["exchange", "µs per call"], rows, markdown=args.markdown))
        print(f"load after: {load_average()}")


if __name__ == "__main__":
    main()
