"""Host staging of a device engine's messages (spbfs.mpi.staging), its setting and its price.

The grid's runs under the strict cupy stand-in are in ``tests/mpi/engine_cases.py``
(``check_staging``: every level's crossing through the pinned buffers, reused).
"""

from __future__ import annotations

import numpy as np
import pytest
from _cupy_standin import make

from spbfs import Config, load_config
from spbfs.mpi import costmodel
from spbfs.mpi.network import LinkModel
from spbfs.mpi.staging import Staging, cuda_aware, library_cuda_aware


@pytest.fixture
def standin(monkeypatch: pytest.MonkeyPatch) -> tuple[object, object]:
    modules, t = make()
    for name, mod in modules.items():
        monkeypatch.setitem(__import__("sys").modules, name, mod)
    return modules["cupy"], t


def test_pinned_buffers_grow_geometrically_and_are_reused(standin: tuple) -> None:
    cp, t = standin
    st = Staging(cp, direct=False)
    assert st.mode == "pinned" and st.grown == 0
    for n in (10, 900, 3000, 2500, 40, 3000):
        host = np.arange(n, dtype=np.int64) * 3
        dev = st.up(host)
        assert isinstance(dev, cp.ndarray) and np.array_equal(cp.asnumpy(dev), host)
        back = st.down(dev * 2)
        assert np.array_equal(back, host * 2)
        assert t.is_pinned(back)  # a view of the pinned buffer, not a fresh array
    # Per direction: 1024 words first, then once to 3000 (the need, over twice 1024).
    assert st.grown == 4 and len(t.pinned) == 4
    assert t.pinned_to_device == t.to_device == 6 and t.pinned_to_host == 6
    assert st.rbuf.shape[0] >= 3000 and st.sbuf.shape[0] >= 3000


def test_a_message_landed_in_the_pinned_buffer_goes_up_without_another_copy(
        standin: tuple) -> None:
    cp, t = standin
    st = Staging(cp, direct=False)
    for n in (700, 300, 2000):
        buf = st.landing(n)
        assert buf.dtype == np.int64 and buf.shape == (n,) and t.is_pinned(buf)
        buf[:] = np.arange(n) * 5  # as MPI writes it
        before = t.pinned_to_device
        got = st.recv(buf)
        assert np.array_equal(got.get(), np.arange(n) * 5)
        assert t.pinned_to_device == before + 1
    assert st.grown == 2  # the 1024 words the first two shared, then 2048
    # A message received elsewhere is still copied into the staging buffer first.
    other = np.arange(9, dtype=np.int64)
    assert np.array_equal(st.recv(other).get(), other) and t.is_pinned(st.rbuf)
    host = Staging(np, direct=False).landing(4)
    assert host.dtype == np.int64 and host.shape == (4,) and not t.is_pinned(host)


def test_direct_staging_takes_device_messages_as_they_are(standin: tuple) -> None:
    cp, t = standin
    st = Staging(cp, direct=True)
    dev = cp.asarray(np.arange(5, dtype=np.int64))
    before = (t.to_device, t.to_host)
    assert st.up(dev) is dev and (t.to_device, t.to_host) == before
    assert np.array_equal(st.down(dev), np.arange(5)) and t.to_host == before[1] + 1
    assert not t.pinned and st.grown == 0


def test_what_the_phases_hand_to_mpi(standin: tuple) -> None:
    """send/recv per mode: pinned copies each way (one transfer for an exchange's
    messages), device arrays as they are where the library is CUDA-aware."""
    cp, t = standin
    host = np.arange(12, dtype=np.int64)
    pinned, direct = Staging(cp, direct=False), Staging(cp, direct=True)
    a, b = cp.asarray(host[:5]), cp.asarray(host[5:])
    n0 = t.to_host
    parts = pinned.send_parts([a, None, b])
    assert t.to_host == n0 + 1 and parts[1] is None  # one transfer for both messages
    assert all(t.is_pinned(p) for p in (parts[0], parts[2]))
    assert np.array_equal(np.concatenate([parts[0], parts[2]]), host)
    got = pinned.recv(host[3:7])
    assert isinstance(got, cp.ndarray) and t.pinned_to_device == 1
    assert np.array_equal(got.get(), host[3:7])
    assert pinned.empty is np.empty and t.is_pinned(pinned.send(a))
    both = pinned.host_parts([a, b])  # alive together: one buffer, not one overwritten
    assert np.array_equal(both[0], host[:5]) and np.array_equal(both[1], host[5:])
    # CUDA-aware: nothing copied, receive buffers on the device.
    n1 = (t.to_device, t.to_host)
    assert direct.send(a) is a and direct.recv(a) is a and direct.send_parts([a, b])[0] is a
    assert isinstance(direct.empty(4, np.int64), cp.ndarray)
    assert (t.to_device, t.to_host) == n1
    # A host-only encoding's message: down once, and up once when it is received.
    assert np.array_equal(direct.host(a), host[:5]) and t.to_host == n1[1] + 1
    assert isinstance(direct.recv(host[:2]), cp.ndarray) and t.to_device == n1[0] + 1


def test_host_engine_stages_nothing() -> None:
    st = Staging(np, direct=True)
    a = np.arange(4, dtype=np.int32)
    assert st.mode == "host" and st.up(a).dtype == np.int64 and st.down(a) is a
    assert st.send(a) is a and st.recv(a) is a and st.host(a) is a and not st.device
    assert st.send_parts([a, None])[0] is a and st.empty is np.empty


def test_cuda_aware_setting() -> None:
    assert Config().cuda_aware == "auto"
    assert Config(cuda_aware=True).cuda_aware is True
    assert load_config(environ={"SPBFS_CUDA_AWARE": "off"}).cuda_aware is False
    assert load_config(environ={"SPBFS_CUDA_AWARE": "Auto"}).cuda_aware == "auto"
    with pytest.raises(ValueError, match="config 'cuda_aware' must be 'auto', true or false"):
        Config(cuda_aware="yes")
    with pytest.raises(ValueError, match="SPBFS_CUDA_AWARE must be one of 'auto', '1'"):
        load_config(environ={"SPBFS_CUDA_AWARE": "maybe"})
    asked = library_cuda_aware()
    assert cuda_aware("auto") is asked and cuda_aware(True) is True and cuda_aware(False) is False
    from mpi4py import MPI

    if MPI.Get_library_version().startswith("MPICH") and "cuda" not in \
            MPI.Get_library_version().lower():
        assert asked is False  # the mpich wheel: built without CUDA


def test_the_model_charges_staging_only_for_a_device() -> None:
    link = LinkModel(latency_s=2e-6, bandwidth_Bps=1e9)
    q, counts, span = 4, (400, 100), 1024
    for phase in costmodel.PHASES:
        host = costmodel.estimate(phase, "p2p", "list", q=q, counts=counts, span=span,
                                  link=link)
        dev = costmodel.estimate(phase, "p2p", "list", q=q, counts=counts, span=span,
                                 link=link, device=costmodel.PCIE)
        assert host.staging_s == 0 and dev.staging_s > 0, phase
        assert dev.seconds == pytest.approx(host.seconds + dev.staging_s), phase
        assert dev.bytes == host.bytes and dev.messages == host.messages, phase
    # An expand of 64-bit ids: what this rank sends (3 x 100 ids) comes down, and the
    # busiest receiver's three pieces of (400 - 100) / 3 ids go up, one copy each.
    dev = costmodel.estimate("expand", "p2p", "list", q=q, counts=counts, span=span, link=link,
                             device=costmodel.PCIE)
    staged_bytes = 8 * 3 * 100 + 3 * 8 * (400 - 100) / 3
    assert dev.staging_s == pytest.approx(costmodel.PCIE.seconds(q, staged_bytes))
    ch = costmodel.choose("fold", q=q, counts=counts, span=span, link=link,
                          device=costmodel.PCIE)
    assert all(est.staging_s > 0 for _, _, est in ch.candidates)


def test_what_comes_down_outlives_the_next_transfer(standin: tuple) -> None:
    # The pinned buffer is reused: ArrayLocal.down's arrays (kept by the algorithms
    # across several transfers) must not be views of it.
    cp, _ = standin
    from spbfs.mpi.local_array import ArrayLocal

    eng = ArrayLocal.__new__(ArrayLocal)  # only its transfers: no graph needed
    eng.xp, eng.staging = cp, Staging(cp, direct=False)
    first, flags = eng.down(cp.asarray(np.arange(6, dtype=np.int64)),
                            cp.asarray(np.array([True, False])))
    eng.down(cp.asarray(np.full(8, -1, dtype=np.int64)))
    assert first.tolist() == list(range(6)) and flags.tolist() == [True, False]
