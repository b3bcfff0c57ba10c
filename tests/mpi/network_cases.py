"""The link measurement and its cache: ``mpiexec -n P python network_cases.py CACHE_DIR``.

1. :func:`~spbfs.mpi.network.measure_link` gives the same positive, finite
   latency and bandwidth on every rank.
2. :func:`~spbfs.mpi.network.cached_link` on an empty cache directory measures
   and writes ``link.json`` (rank 0); rank 0 then overwrites the entry with
   sentinel numbers no measurement gives, and the next call must return
   exactly those (it read the cache rather than measuring).
3. A corrupt file is re-measured (positive, finite, not the sentinel) and
   rewritten readable.
4. A cache directory that cannot be created (a path below a regular file)
   still returns a measurement.

Any failure raises, and the excepthook ends the job with a non-zero status.
Rank 0 prints ``NETWORK OK`` at the end.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

from mpi4py import MPI

from spbfs.mpi import install_excepthook
from spbfs.mpi.network import LinkModel, cached_link, measure_link

SENTINEL = (0.000123, 4.56e9)


def same_everywhere(comm: MPI.Comm, link: LinkModel) -> None:
    got = comm.allgather((link.latency_s, link.bandwidth_Bps))
    assert all(g == got[0] for g in got), f"ranks disagree on the link: {got}"


def measured_ok(link: LinkModel) -> None:
    assert link.latency_s > 0 and math.isfinite(link.latency_s), link
    assert link.bandwidth_Bps > 0 and math.isfinite(link.bandwidth_Bps), link
    assert (link.latency_s, link.bandwidth_Bps) != SENTINEL, link


def main() -> None:
    install_excepthook()
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    cache = Path(sys.argv[1])

    link = measure_link(comm)
    measured_ok(link)
    same_everywhere(comm, link)

    first = cached_link(comm, cache)
    measured_ok(first)
    same_everywhere(comm, first)
    file = cache / "link.json"
    if rank == 0:
        data = json.loads(file.read_text())
        assert len(data) == 1, data
        (key,) = data
        assert key.endswith(f"/{comm.Get_size()}"), key
        data[key]["latency_s"], data[key]["bandwidth_Bps"] = SENTINEL
        file.write_text(json.dumps(data))
    comm.Barrier()
    again = cached_link(comm, cache)
    assert (again.latency_s, again.bandwidth_Bps) == SENTINEL, again

    if rank == 0:
        file.write_text("{not json")
    comm.Barrier()
    fresh = cached_link(comm, cache)
    measured_ok(fresh)
    same_everywhere(comm, fresh)
    if rank == 0:
        entry = next(iter(json.loads(file.read_text()).values()))
        assert (entry["latency_s"], entry["bandwidth_Bps"]) == (fresh.latency_s,
                                                                fresh.bandwidth_Bps)
        blocker = cache / "a-file"
        blocker.write_text("")
    comm.Barrier()
    nowhere = cached_link(comm, cache / "a-file" / "below")
    measured_ok(nowhere)
    if rank == 0:
        print("NETWORK OK", flush=True)


if __name__ == "__main__":
    main()
