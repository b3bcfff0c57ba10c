"""The link model, the slow-network emulator, and the link measurement under mpiexec."""

from __future__ import annotations

import math
import time

import pytest
from mpi_launch import SCRIPTS, launch, needs_mpi

from spbfs.mpi.network import PRESETS, Emulator, LinkModel, cache_dir

# --------------------------------------------------------------------------- parsing


@pytest.mark.parametrize(("spec", "lat", "bw"), [
    ("1gbe", 50e-6, 125e6 * 1448 / 1538),
    ("10gbe", 10e-6, 1250e6 * 1448 / 1538),
    ("IB", 1.5e-6, 12e9),
    (" 10GbE ", 10e-6, 1250e6 * 1448 / 1538),
    ("20:1", 20e-6, 0.125e9),
    ("0:100", 0.0, 12.5e9),
    ("2.5:0.5", 2.5e-6, 62.5e6),
])
def test_parse_presets_and_numbers(spec: str, lat: float, bw: float) -> None:
    link = LinkModel.parse(spec)
    assert link.latency_s == pytest.approx(lat, rel=1e-12, abs=1e-18)
    assert link.bandwidth_Bps == pytest.approx(bw, rel=1e-12)
    assert not link.native


@pytest.mark.parametrize("spec", [None, "native", "NATIVE"])
def test_parse_native(spec: str | None) -> None:
    link = LinkModel.parse(spec)
    assert link.native and link.latency_s == 0 and math.isinf(link.bandwidth_Bps)


@pytest.mark.parametrize("spec", ["", "fast", "20", "20:", ":1", "20:0", "-1:1", "a:b",
                                  "1:2:3", "inf:1", "20:nan", 5, 1.0])
def test_parse_rejects(spec: object) -> None:
    with pytest.raises(ValueError, match="network") as info:
        LinkModel.parse(spec)  # type: ignore[arg-type]
    msg = str(info.value)
    assert "1gbe" in msg and "LAT_US:GBPS" in msg and repr(spec) in msg


def test_presets_are_ordered() -> None:
    """Faster networks: lower latency, higher bandwidth (a typo in a constant shows here)."""
    a, b, c = PRESETS["1gbe"], PRESETS["10gbe"], PRESETS["ib"]
    assert a.latency_s > b.latency_s > c.latency_s
    assert a.bandwidth_Bps < b.bandwidth_Bps < c.bandwidth_Bps


@pytest.mark.parametrize(("lat", "bw"), [(-1e-6, 1e9), (math.nan, 1e9), (1e-6, 0.0),
                                         (1e-6, -5.0), (1e-6, math.nan), (math.inf, 1e9)])
def test_link_model_rejects_bad_numbers(lat: float, bw: float) -> None:
    with pytest.raises(ValueError):
        LinkModel(lat, bw)


@pytest.mark.parametrize(("lat", "gbps"), [(-1, 1), (1, 0), ("x", 1), (1, math.inf)])
def test_from_numbers_rejects(lat: object, gbps: object) -> None:
    with pytest.raises(ValueError, match="link"):
        LinkModel.from_numbers(lat, gbps)  # type: ignore[arg-type]


def test_seconds_is_latency_plus_bytes() -> None:
    link = LinkModel(1e-5, 1e9)
    assert link.seconds(3, 2e6) == pytest.approx(3e-5 + 2e-3)


# --------------------------------------------------------------------------- emulator


def test_native_emulator_is_inactive_and_never_holds() -> None:
    em = Emulator(LinkModel.parse("native"))
    assert em.active is False
    em.hold(time.perf_counter(), 1000, 10**12)
    assert em.held_s == 0 and em.steps == 0


def test_hold_waits_at_least_the_model_time() -> None:
    link = LinkModel.parse("1gbe")
    em = Emulator(link)
    assert em.active is True
    for messages, nbytes in ((1, 0), (3, 100_000), (0, 250_000)):
        t0 = time.perf_counter()
        em.hold(t0, messages, nbytes)
        assert time.perf_counter() - t0 >= messages * 50e-6 + nbytes / link.bandwidth_Bps


def test_hold_takes_the_longer_direction() -> None:
    link = LinkModel(1e-6, 1e8)
    em = Emulator(link)
    t0 = time.perf_counter()
    em.hold(t0, 1, 0, recv_messages=2, recv_nbytes=200_000)  # receiving dominates: 2 ms
    assert time.perf_counter() - t0 >= 2e-6 + 200_000 / 1e8
    assert em.deadline(0.0, 1, 0, 2, 200_000) == pytest.approx(2e-6 + 2e-3)


def test_hold_returns_when_the_step_already_took_longer() -> None:
    em = Emulator(LinkModel.parse("ib"))
    em.hold(time.perf_counter() - 10.0, 10, 1000)  # 10 s ago: long done
    assert em.held_s == 0 and em.steps == 0


def test_cache_dir_follows_xdg(tmp_path) -> None:
    assert cache_dir({"XDG_CACHE_HOME": str(tmp_path)}) == tmp_path / "spbfs"
    assert cache_dir({}).parts[-2:] == (".cache", "spbfs")


# --------------------------------------------------------------------------- under mpiexec


@pytest.mark.mpi
@needs_mpi
def test_measure_link_and_cache_on_two_ranks(tmp_path) -> None:
    """Positive finite numbers, the same on both ranks; the cache is read back, a corrupt
    one re-measured, an unwritable one skipped."""
    rc, out, err, _ = launch(2, [str(SCRIPTS / "network_cases.py"), str(tmp_path / "cache")],
                             timeout=120)
    assert rc == 0, f"stdout:\n{out}\nstderr:\n{err}"
    assert "NETWORK OK" in out, out


def test_cached_link_expires(tmp_path) -> None:
    """A day-old measurement is taken again (one from a busy hour must not stay forever)."""
    from spbfs.mpi.network import CACHE_SECONDS, _read_cache, _write_cache

    f = tmp_path / "link.json"
    assert _write_cache(f, "host/2", LinkModel(1e-6, 5e9, "measured"))
    now = time.time()
    assert _read_cache(f, "host/2", now=now) == LinkModel(1e-6, 5e9, "measured")
    assert _read_cache(f, "host/2", now=now + CACHE_SECONDS + 60) is None
