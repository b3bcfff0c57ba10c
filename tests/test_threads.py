"""The thread count of a one-process search (spbfs.threads) and the ``threads`` setting."""

from __future__ import annotations

import importlib
import inspect
import threading
from pathlib import Path

import networkx as nx
import numba
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import shortest_path

import spbfs
import spbfs.threads as T
from spbfs.config import Config, load_config
from spbfs.threads import ThreadPolicy, count_threads, read_own_running, read_running

# The module, not the function ``spbfs.bfs`` that the package exports under its name.
bfs_module = importlib.import_module("spbfs.bfs")
POOL = numba.config.NUMBA_NUM_THREADS
needs_two = pytest.mark.skipif(POOL < 2, reason="numba's pool has one thread")


# ----------------------------------------------------------------- synthetic /proc


def _loadavg(tmp_path: Path, running: int, total: int = 200) -> str:
    f = tmp_path / "loadavg"
    f.write_text(f"2.50 1.20 0.80 {running}/{total} 12345\n")
    return str(f)


def _tasks(tmp_path: Path, states: list[str]) -> str:
    """A task folder like /proc/self/task: one thread per state letter."""
    d = tmp_path / "task"
    for i, s in enumerate(states):
        (d / str(100 + i)).mkdir(parents=True)
        # A name with a space and a ") S" inside: the state follows the last ')'.
        (d / str(100 + i) / "stat").write_text(f"{100 + i} (numba ) S w{i}) {s} 1 2 3 4\n")
    return str(d)


@pytest.fixture(autouse=True)
def no_trials(monkeypatch):
    """A busy reading gives its count, never a try of the most threads: the tests that
    count threads expect the reading's answer (the trials have their own tests)."""
    monkeypatch.setattr(T.ThreadProbe, "retry", float("inf"))


@pytest.fixture(autouse=True)
def every_graph_asks(monkeypatch):
    """The small graphs of these tests read the machine as a large one does (below
    ONE_THREAD_ARCS arcs a search runs on one thread without asking)."""
    monkeypatch.setattr(bfs_module, "ONE_THREAD_ARCS", 0)


@pytest.fixture
def machine(monkeypatch):
    """Make the policy see a machine of ``cpus`` CPUs of which ``allowed`` are ours."""
    def set_(cpus: int, allowed: int) -> None:
        monkeypatch.setattr(T.os, "cpu_count", lambda: cpus)
        monkeypatch.setattr(T, "_allowed_cpus", lambda: allowed)
    return set_


# ----------------------------------------------------------------- the pure rule


@pytest.mark.parametrize(
    ("ceiling", "running", "own", "cpus", "allowed", "spare", "want"),
    [
        (2, 1, 1, 2, 2, 1, 2),     # quiet: only the reader runs
        (2, 2, 1, 2, 2, 1, 2),     # one other process: one core idle, plus the spare
        (2, 3, 1, 2, 2, 1, 1),     # two others: both cores taken
        (2, 9, 1, 2, 2, 1, 1),     # far more: never below 1
        (2, 2, 1, 2, 2, 0, 1),     # no spare: idle cores only
        (2, 3, 2, 2, 2, 1, 2),     # the second runnable task is our own worker
        (16, 1, 1, 16, 16, 1, 16),
        (16, 9, 1, 16, 16, 1, 9),  # 8 others on 16 cores: 8 idle + 1
        (4, 9, 1, 16, 16, 1, 4),   # the caller's ceiling caps it
        (16, 1, 1, 16, 4, 1, 4),   # affinity: 4 CPUs are ours
        (4, 13, 1, 16, 4, 1, 4),   # 12 others fit on the 12 CPUs that are not ours
        (4, 15, 1, 16, 4, 1, 3),   # 14 others: 2 spill onto ours -> 2 idle + 1
        (4, 40, 1, 16, 4, 1, 1),
    ],
)
def test_count_threads(ceiling, running, own, cpus, allowed, spare, want):
    assert count_threads(ceiling, running, own, cpus, allowed, spare) == want


@pytest.mark.parametrize("bad", [
    {"ceiling": 0}, {"own_running": 0}, {"running": -1}, {"allowed": 0}, {"allowed": 3},
    {"spare": -1},
])
def test_count_threads_refuses_bad_counts(bad):
    args = {"ceiling": 2, "running": 1, "own_running": 1, "cpus": 2, "allowed": 2, "spare": 1}
    with pytest.raises(ValueError, match=f"{next(iter(bad))}={next(iter(bad.values()))}"):
        count_threads(**{**args, **bad})


# ----------------------------------------------------------------- readings


def test_read_running(tmp_path):
    assert read_running(_loadavg(tmp_path, 7)) == 7
    assert read_running(str(tmp_path / "absent")) is None
    bad = tmp_path / "bad"
    bad.write_text("0.1 0.2 0.3\n")
    assert read_running(str(bad)) is None
    bad.write_text("0.1 0.2 0.3 x/9 1\n")
    assert read_running(str(bad)) is None


def test_read_own_running(tmp_path):
    assert read_own_running(_tasks(tmp_path, ["R", "S", "R", "D"])) == 2
    assert read_own_running(str(tmp_path / "absent")) is None


def test_real_proc_is_read_where_there_is_one():
    if not Path("/proc/loadavg").exists():
        pytest.skip("no /proc here")
    assert read_running() >= 1  # this very test is running
    assert read_own_running() >= 1


# ----------------------------------------------------------------- the policy


def test_policy_idle_busy_and_one_other(tmp_path, machine):
    machine(2, 2)
    assert ThreadPolicy(loadavg=_loadavg(tmp_path, 1)).choose(2, 1) == 2
    assert ThreadPolicy(loadavg=_loadavg(tmp_path, 5)).choose(2, 1) == 1
    assert ThreadPolicy(loadavg=_loadavg(tmp_path, 2)).choose(2, 1) == 2
    # The caller's ceiling is never exceeded.
    assert ThreadPolicy(loadavg=_loadavg(tmp_path, 1)).choose(1, 1) == 1


def test_policy_counts_its_own_spinning_workers(tmp_path, machine):
    """3 runnable on 2 cores: busy if 2 are others, quiet if one is our own worker."""
    machine(2, 2)
    load = _loadavg(tmp_path, 3)
    ours_spin = ThreadPolicy(loadavg=load, task_dir=_tasks(tmp_path / "a", ["R", "R"]))
    assert ours_spin.choose(2, 1) == 2
    ours_sleep = ThreadPolicy(loadavg=load, task_dir=_tasks(tmp_path / "b", ["R", "S"]))
    assert ours_sleep.choose(2, 1) == 1
    # Unreadable task list: the safe side (fewer threads).
    assert ThreadPolicy(loadavg=load, task_dir=str(tmp_path / "none")).choose(2, 1) == 1


def test_policy_with_a_probe_reads_only_numbas_workers(tmp_path, machine):
    """A probe that knows the pool's workers reads their states alone: another thread of
    the process (OpenBLAS's, say) that runs is counted as load, the safe side."""
    machine(2, 2)
    load = _loadavg(tmp_path, 3)
    probe = T.ThreadProbe()
    probe._workers = ("100",)  # as if named by the probe's parallel region
    spin = _tasks(tmp_path / "a", ["R", "S"])
    assert ThreadPolicy(loadavg=load, task_dir=spin, probe=probe).choose(2, 1) == 2
    asleep = _tasks(tmp_path / "b", ["S", "R", "R"])  # 101 and 102 run, but are no workers
    assert ThreadPolicy(loadavg=load, task_dir=asleep, probe=probe).choose(2, 1) == 1
    assert ThreadPolicy(loadavg=load, task_dir=asleep).choose(2, 1) == 2  # no probe: all read


def test_a_probe_reuses_only_a_choice_of_fewer_threads(tmp_path, machine, monkeypatch):
    machine(2, 2)
    clock = [100.0]
    monkeypatch.setattr(T.time, "monotonic", lambda: clock[0])
    probe = T.ThreadProbe()
    (tmp_path / "busy").mkdir()
    (tmp_path / "quiet").mkdir()
    busy, quiet = _loadavg(tmp_path / "busy", 9), _loadavg(tmp_path / "quiet", 1)
    on = ThreadPolicy(loadavg=busy, probe=probe)
    assert on.choose(2, 1) == 1
    clock[0] += probe.hold / 2
    assert ThreadPolicy(loadavg=quiet, probe=probe).choose(2, 1) == 1  # kept
    assert ThreadPolicy(loadavg=quiet, probe=probe).choose(3, 1) == 2  # another ceiling: read
    clock[0] += probe.hold
    assert ThreadPolicy(loadavg=quiet, probe=probe).choose(2, 1) == 2  # too old: read again
    clock[0] += probe.hold / 10
    assert on.choose(2, 1) == 1  # the most (2) was not kept: read again at once


# ----------------------------------------------------------------- trials between two counts


def _warm_probe() -> T.ThreadProbe:
    """A probe past its first search (which it does not count)."""
    probe = T.ThreadProbe()
    probe.record(1, 1, 2, 1.0, 1)
    assert probe._cost == {}
    return probe


@pytest.fixture
def clock(monkeypatch):
    """The probe's clock, moved by hand; tries allowed again (retry 0.02 s)."""
    now = [1000.0]
    monkeypatch.setattr(T.time, "monotonic", lambda: now[0])
    monkeypatch.setattr(T.ThreadProbe, "retry", 0.02)
    return now


def test_trials_run_the_readings_count_until_the_other_is_measured(clock):
    probe = _warm_probe()
    assert probe.pick(1, 2) == 1  # nothing measured: the reading's count
    clock[0] += 0.5
    assert probe.pick(1, 2) == 1  # still nothing reported: never a try
    probe.record(1, 1, 2, 0.010, 10_000)  # 1 us per vertex
    # The first try waits 20 ms (two searches 10 ms apart here) and at least one search.
    assert _until_a_try(probe, clock, 1, 0.010) == 2
    # A try never reported does not make the next search a try too.
    assert probe.pick(1, 2) == 1
    clock[0] += 0.0401
    assert probe.pick(1, 2) == 2
    # It loses by 40 ms: the next try waits until 40 ms are 5 % of the seconds the
    # graph's searches spend from here (0.8 s), whatever the clock says.
    probe.record(2, 1, 2, 0.050, 10_000)
    assert 79 <= _until_a_try(probe, clock, 1, 0.010) <= 81


def test_the_first_try_comes_early_whichever_count_the_reading_gave(clock):
    """The reading's two threads (the spare beside another process) run the first searches;
    one thread is tried 20 ms later, and leads where it costs less. The probe's first
    search (its one-time costs) is not counted."""
    probe = T.ThreadProbe()
    assert probe.pick(2, 1) == 2
    probe.record(2, 2, 1, 0.500, 10_000)
    assert probe._cost == {}
    clock[0] += 0.010
    assert probe.pick(2, 1) == 2
    probe.record(2, 2, 1, 0.010, 10_000)
    for _ in range(2):
        clock[0] += 0.010
        assert probe.pick(2, 1) == 2
        probe.record(2, 2, 1, 0.010, 10_000)
    clock[0] += 0.010
    assert probe.pick(2, 1) == 1  # the third search after the first: a try
    probe.record(1, 2, 1, 0.012, 10_000)  # one thread 1.2x slower: two keep the lead
    assert probe.pick(2, 1) == 2
    # Tried again only once the 2 ms it lost are 5 % of the searches' seconds (40 ms).
    for _ in range(4):
        clock[0] += 0.010
        assert probe.pick(2, 1) == 2
        probe.record(2, 2, 1, 0.010, 10_000)
    clock[0] += 0.010
    assert probe.pick(2, 1) == 1


@pytest.mark.parametrize(("one", "two", "lead"), [
    (1.0, 0.5, 2),  # twice as fast
    (1.0, 0.95, 1),  # 5 % cheaper: not gain times
    (1.0, 1.05, 1),
    (1.0, 1.0 / T.ThreadProbe.gain - 0.01, 2),
])
def test_the_larger_count_leads_only_where_it_is_gain_times_cheaper(clock, one, two, lead):
    seconds = {1: one * 0.01, 2: two * 0.01}
    for first, other in ((1, 2), (2, 1)):  # whichever count the reading gave
        probe = _warm_probe()
        while set(probe._cost) != {1, 2}:  # until the other count was tried
            clock[0] += 0.01
            count = probe.pick(first, other)
            probe.record(count, first, other, seconds[count], 10_000)
        clock[0] += 0.01
        assert probe.pick(first, other) == lead


def _until_a_try(probe, clock, lead, seconds, limit=1000):
    """Searches 10 ms apart, each reporting ``seconds`` on the ``lead`` count, until the
    probe picks the other count; how many ran."""
    for i in range(limit):
        clock[0] += 0.010
        if probe.pick(1, 2) != lead:
            return i
        probe.record(lead, 1, 2, seconds, 10_000)
    return limit


def _two_lead(probe, clock):
    """Searches on one thread (0.9 us a vertex) until two are tried and win (0.3 us)."""
    assert probe.pick(1, 2) == 1
    probe.record(1, 1, 2, 0.009, 10_000)
    assert _until_a_try(probe, clock, 1, 0.009) < 1000
    probe.record(2, 1, 2, 0.003, 10_000)  # two threads ran 3x faster
    assert probe.pick(1, 2) == 2


def test_a_try_that_wins_leads_until_most_of_its_last_searches_cost_more(clock):
    probe = _warm_probe()
    _two_lead(probe, clock)
    for _ in range(4):  # one thread is tried again 20 ms after it lost the lead
        clock[0] += 0.001
        assert probe.pick(1, 2) == 2
        probe.record(2, 1, 2, 0.004, 10_000)
    assert probe._cost[2] == pytest.approx(0.4e-6)  # the median of the last five
    for slow in range(3):  # searches that waited scheduler slices
        clock[0] += 0.001
        assert probe.pick(1, 2) == 2  # one or two of five: still the median's fast one
        probe.record(2, 1, 2, 0.100 + slow * 0.001, 10_000)
    # Three of the last five: the lead is back on one thread, and two wait until the
    # 91 ms the median search lost are 5 % of the searches' seconds (1.82 s: 202
    # searches of 9 ms).
    assert probe._cost[2] == pytest.approx(10e-6) and probe._cost[2] > probe._cost[1]
    assert 202 <= _until_a_try(probe, clock, 1, 0.009) <= 204


def test_a_try_of_the_fewer_threads_replaces_their_old_cost(clock):
    """Once the most lead, one thread is tried again; a fresh cost decides, not the old."""
    probe = _warm_probe()
    _two_lead(probe, clock)
    assert _until_a_try(probe, clock, 2, 0.003) < 1000  # the try of one thread
    probe.record(1, 1, 2, 0.002, 10_000)  # the machine changed: one thread now costs less
    assert probe._cost[1] == pytest.approx(0.2e-6)
    assert probe.pick(1, 2) == 1


def test_trials_start_over_after_a_pause(clock):
    probe = _warm_probe()
    _two_lead(probe, clock)
    probe.keep(2, 1, 2)  # a reading named the two counts
    assert probe.recall(2) == (1, 2) and probe.recall(4) is None
    clock[0] += probe.stale + 0.001  # no search for a while: the costs describe the past
    assert probe.recall(2) is None
    assert probe.pick(1, 2) == 1
    assert probe._cost == {}


def test_a_pause_forgets_the_costs_not_the_tries_budget(clock):
    """Searches half a second apart with a longer pause every third (a program doing other
    work between them): each pause forgets the costs, but a count whose try lost by 40 ms
    still waits until that is 5 % of the searches' seconds, not one search past the
    pause (which tried it every third search)."""
    probe = _warm_probe()
    seconds = {1: 0.010, 2: 0.050}
    picks = []
    for k in range(30):
        clock[0] += probe.stale + 0.2 if k % 3 == 0 else 0.5
        count = probe.pick(1, 2)
        probe.record(count, 1, 2, seconds[count], 10_000)
        picks.append(count)
        if k % 3 == 0:
            assert set(probe._cost) == {count}  # the pause forgot the other's cost
    assert picks.count(2) == 1, picks


def test_trials_of_long_searches_keep_their_costs_for_twenty_searches(clock):
    """Searches of 0.2 s each, 1.5 s apart (other work between them): the costs hold."""
    probe = _warm_probe()
    seconds = {1: 0.2, 2: 0.1}
    while set(probe._cost) != {1, 2}:
        clock[0] += 1.5
        count = probe.pick(1, 2)
        probe.record(count, 1, 2, seconds[count], 10_000)
    clock[0] += 1.5
    assert probe.pick(1, 2) == 2 and set(probe._cost) == {1, 2}
    clock[0] += probe.stale_searches * 0.1 + 0.01  # longer than twenty of its searches
    assert probe.pick(1, 2) == 1 and probe._cost == {}


def test_the_policy_picks_between_counts_whatever_the_reading(tmp_path, machine, clock,
                                                             monkeypatch):
    """With a probe a busy reading weighs its one thread against the most, a quiet one the
    most against half as many; once both are measured no reading is made."""
    machine(4, 4)
    (tmp_path / "busy").mkdir()
    (tmp_path / "quiet").mkdir()
    busy, quiet = _loadavg(tmp_path / "busy", 9), _loadavg(tmp_path / "quiet", 1)
    assert ThreadPolicy(loadavg=quiet, probe=T.ThreadProbe()).decide(4, 3) == (4, (4, 2), True)
    assert ThreadPolicy(loadavg=busy).decide(4, 3) == (1, None, True)  # no probe: no trials
    probe = _warm_probe()
    on = ThreadPolicy(loadavg=busy, probe=probe)
    assert on.decide(4, 3) == (1, (1, 4), True)
    probe.record(1, 1, 4, 0.009, 10_000)
    probe.record(4, 1, 4, 0.003, 10_000)
    clock[0] += 0.5  # long past hold: only the costs answer, without a reading
    reads = []
    monkeypatch.setattr(T, "read_running", lambda path="": reads.append(path) or 9)
    assert on.decide(4, 3) == (4, (1, 4), True)
    assert ThreadPolicy(loadavg=quiet, probe=probe).choose(4, 3) == 4
    assert reads == []
    assert on.decide(1, 3) == (1, None, True)  # ceiling 1: nothing to pick from or read
    assert reads == []
    assert on.decide(2, 3) == (1, (1, 2), True)  # another most: read again
    assert len(reads) == 1


def test_the_spare_thread_beside_another_process_is_weighed_against_fewer(
        tmp_path, machine, clock, monkeypatch):
    """One other process on two cores: the reading gives two (the idle core plus the
    spare), and one is the other count. Without a probe nothing measures the team that
    such a count would run: its small levels stay on one thread."""
    machine(2, 2)
    own = [1]
    asked = []

    def own_running(self, task_dir="/proc/self/task"):
        asked.append(1)
        return own[0]

    monkeypatch.setattr(T.ThreadProbe, "own_running", own_running)
    (tmp_path / "one").mkdir()
    (tmp_path / "quiet").mkdir()
    one_other, quiet = _loadavg(tmp_path / "one", 2), _loadavg(tmp_path / "quiet", 1)
    assert ThreadPolicy(loadavg=quiet).decide(2, 1) == (2, None, True)
    assert ThreadPolicy(loadavg=one_other).decide(2, 1) == (2, None, False)
    probe = _warm_probe()
    on = ThreadPolicy(loadavg=one_other, probe=probe)
    assert on.decide(2, 1) == (2, (2, 1), True)  # the reading's count leads until both measured
    probe.record(2, 2, 1, 0.030, 10_000)
    probe.record(1, 2, 1, 0.010, 10_000)
    assert on.decide(2, 1) == (1, (2, 1), True)  # one thread measured cheaper
    assert asked == []  # nothing read beyond the load
    # Three runnable: this process's spinning worker and one other process.
    own[0] = 2
    (tmp_path / "three").mkdir()
    three = ThreadPolicy(loadavg=_loadavg(tmp_path / "three", 3), probe=T.ThreadProbe())
    assert three.decide(2, 1) == (2, (2, 1), True)
    assert asked == [1]
    own[0] = 1  # two other processes: one thread, weighed against the most
    assert ThreadPolicy(loadavg=three.loadavg, probe=T.ThreadProbe()).decide(2, 1) == (
        1, (1, 2), True)



def test_long_searches_get_no_spare_thread_beside_another_process(tmp_path, machine, clock):
    """A graph whose searches take longer than spare_seconds: a reading beside one other
    process names one thread first (two are still tried); a quiet reading still names
    the most; short searches keep the spare thread."""
    machine(2, 2)
    (tmp_path / "one").mkdir()
    (tmp_path / "quiet").mkdir()
    one_other, quiet = _loadavg(tmp_path / "one", 2), _loadavg(tmp_path / "quiet", 1)
    probe = _warm_probe()
    assert not probe.long_searches
    probe.record(2, 2, 1, probe.spare_seconds * 2, 10_000)
    assert probe.long_searches
    clock[0] += probe.stale_searches * probe.spare_seconds * 2 + 1  # the costs go stale
    probe._workers = ("100",)  # as if named by the probe's parallel region: asleep
    asleep = _tasks(tmp_path / "one", ["S"])
    assert ThreadPolicy(loadavg=one_other, task_dir=asleep, probe=probe).decide(2, 1) == (
        1, (1, 2), True)
    clock[0] += 2
    assert ThreadPolicy(loadavg=quiet, probe=probe).decide(2, 1) == (2, (2, 1), True)
    short = _warm_probe()
    short.record(2, 2, 1, short.spare_seconds / 2, 10_000)
    assert not short.long_searches
    assert ThreadPolicy(loadavg=one_other, probe=short).decide(2, 1)[0] == 2

def test_long_searches_keep_both_threads_beside_their_own_spinning_worker(tmp_path, machine,
                                                                         clock):
    """Two runnable tasks on two cores, one of them this process's pool worker still
    spinning after the last search: a quiet machine, whose long searches keep both
    threads; with the worker asleep the other task is another process's (one thread
    first, as beside a busy process)."""
    machine(2, 2)
    load = _loadavg(tmp_path, 2)
    probe = _warm_probe()
    probe.record(2, 2, 1, probe.spare_seconds * 2, 10_000)
    assert probe.long_searches
    probe._workers = ("100",)  # as if named by the probe's parallel region
    clock[0] += probe.stale_searches * probe.spare_seconds * 2 + 1  # the costs go stale
    spinning = _tasks(tmp_path / "a", ["R"])
    assert ThreadPolicy(loadavg=load, task_dir=spinning, probe=probe).decide(2, 1) == (
        2, (2, 1), True)
    clock[0] += 2
    asleep = _tasks(tmp_path / "b", ["S"])
    assert ThreadPolicy(loadavg=load, task_dir=asleep, probe=probe).decide(2, 1) == (
        1, (1, 2), True)


@needs_two
def test_a_busy_machines_searches_report_their_cost(monkeypatch, keep_threads, machine, clock):
    """A graph's searches on a busy machine measure their count; where two threads led,
    the next search runs on two though the reading says one (``BFSResult.threads``)."""
    from spbfs.generators import kronecker

    machine(POOL, POOL)
    numba.set_num_threads(2)
    _load(monkeypatch, 50)
    el = kronecker(12, 16, seed=4)
    g = spbfs.Graph.from_edgelist(el)
    hub = int(np.argmax(np.asarray(g.out_degree)))
    want = _levels(np.asarray(el.src), np.asarray(el.dst), g.n, hub)
    for _ in range(2):  # the probe's first search is not counted
        r = spbfs.bfs(g, hub)
        assert r.threads == 1 and np.array_equal(r.levels, want)
    assert " on 1 thread;" in r.summary()
    probe = g._search_cache["numba_scratch"].thread_policy.probe
    assert set(probe._cost) == {1} and probe._cost[1] > 0
    probe._cost[2] = probe._cost[1] / 10  # as if a try of two had won
    r = spbfs.bfs(g, hub)
    assert r.threads == 2 and np.array_equal(r.levels, want)
    assert numba.get_num_threads() == 2
    numba.set_num_threads(1)
    r = spbfs.bfs(g, hub)  # the caller's ceiling of one: nothing to pick from
    assert r.threads == 1
    r = spbfs.bfs(g, hub, config=g.config.replace(threads=2))  # a given count is obeyed
    assert r.threads == 2


def _cliques_of_four(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The edges of ``n / 4`` disjoint 4-cliques: a search reaches its clique in one level,
    and with 1.5 n edges the graph can run bottom-up levels (the engine, not the
    top-down-only path of a sparser graph: :func:`spbfs.search.small.takes_small`)."""
    base = np.arange(0, n, 4)
    pairs = [(a, b) for a in range(4) for b in range(a + 1, 4)]
    src = np.concatenate([base + a for a, _ in pairs])
    dst = np.concatenate([base + b for _, b in pairs])
    return src, dst

@needs_two
def test_a_search_whose_only_parallel_regions_are_its_passes_reports_its_cost(
        monkeypatch, keep_threads, machine, clock):
    """From 2**18 vertices the passes over all vertices run on the search's threads: on a
    busy machine such a search measures its count though no level runs in parallel."""
    machine(POOL, POOL)
    numba.set_num_threads(2)
    _load(monkeypatch, 50)
    n = 1 << 18
    g = spbfs.Graph.from_edges(*_cliques_of_four(n), n=n)
    for _ in range(2):  # the probe's first search is not counted
        r = spbfs.bfs(g, 4)
        assert r.threads is None and int((r.levels >= 0).sum()) == 4  # no parallel level
    probe = g._search_cache["numba_scratch"].thread_policy.probe
    assert set(probe._cost) == {1} and probe._cost[1] > 0
    probe._cost[2] = probe._cost[1] / 10  # as if a try of two had won
    r = spbfs.bfs(g, 4)
    assert set(probe._cost) == {1, 2} and probe._cost[2] != probe._cost[1] / 10
    assert int(r.levels[5]) == 1 and numba.get_num_threads() == 2


def test_a_search_without_parallel_levels_reports_no_threads():
    n = 500
    g = spbfs.Graph.from_edges(np.arange(n - 1), np.arange(1, n), n=n)
    assert spbfs.bfs(g, 0).threads is None
    r = spbfs.bfs(g, 0, config=g.config.replace(threads=1))
    assert r.threads is None and " thread" not in r.summary()


def test_a_probe_forgets_workers_that_are_gone(tmp_path):
    probe = T.ThreadProbe()
    probe._workers = ("100", "102")
    task = _tasks(tmp_path, ["R", "S"])  # threads 100 and 101: 102 has ended
    assert probe.own_running(task) is None
    assert probe._workers is None  # named again at the next reading
    probe._workers = ()  # the workers cannot be named here: the caller lists every thread
    assert probe.own_running(task) is None


@needs_two
def test_the_probe_names_the_threads_that_run_numbas_regions(keep_threads):
    """While a parallel region runs, every thread the probe named is runnable."""
    if not Path("/proc/self/task").exists():
        pytest.skip("no /proc here")
    numba.set_num_threads(POOL)  # the region below runs on the whole pool
    probe = T.ThreadProbe()
    probe.own_running()
    if not probe._workers:
        pytest.skip("numba's workers cannot be named here (no gettid)")
    assert len(probe._workers) == POOL - 1
    assert str(threading.get_native_id()) not in probe._workers
    counts: list[int | None] = []
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            counts.append(probe.own_running())

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        _spin_all(np.zeros(POOL * 64), 0.3)
    finally:
        done.set()
        watcher.join()
    assert counts and max(c or 0 for c in counts) == POOL


@numba.njit(parallel=True, nogil=True, cache=False)
def _spin_all(out, seconds):  # type: ignore[no-untyped-def]
    # Every thread of the region computes for about ``seconds`` (a busy loop).
    for i in numba.prange(out.shape[0]):
        x = 0.0
        for j in range(int(seconds * 2e8 / out.shape[0] * numba.get_num_threads())):
            x += (j % 7) * 1e-9
        out[i] = x


@needs_two
def test_a_graphs_searches_share_its_probe(monkeypatch, keep_threads, machine):
    """The ambiguous case (3 runnable on 2 cores) reads the graph's probe, not every thread."""
    from spbfs.generators import kronecker

    machine(2, 2)
    numba.set_num_threads(2)
    monkeypatch.setattr(T, "read_running", lambda path="/proc/loadavg": 3)
    asked = []
    monkeypatch.setattr(T.ThreadProbe, "own_running",
                        lambda self, task_dir="/proc/self/task": asked.append(self) or 2)

    def every_thread(task_dir="/proc/self/task"):
        raise AssertionError("the graph's probe should have answered")

    monkeypatch.setattr(T, "read_own_running", every_thread)
    el = kronecker(12, 16, seed=4)
    g = spbfs.Graph.from_edgelist(el)
    s = int(np.argmax(np.asarray(g.out_degree)))
    for _ in range(2):
        r = spbfs.bfs(g, s)
        assert np.array_equal(r.levels, _levels(np.asarray(el.src), np.asarray(el.dst), g.n, s))
    assert len(asked) == 2 and asked[0] is asked[1]


def test_policy_affinity_limited(tmp_path, machine):
    machine(16, 2)
    assert ThreadPolicy(loadavg=_loadavg(tmp_path, 1)).choose(16, 15) == 2
    # 9 others fit on the 14 CPUs outside the mask: ours stay idle.
    assert ThreadPolicy(loadavg=_loadavg(tmp_path, 10)).choose(16, 15) == 2
    # 14 others on the 14 CPUs outside the mask, 2 more on ours (workers asleep).
    policy = ThreadPolicy(loadavg=_loadavg(tmp_path, 17), task_dir=_tasks(tmp_path, ["R"]))
    assert policy.choose(16, 15) == 1


def test_policy_without_proc(tmp_path, machine):
    """macOS, Windows: no /proc, every thread the caller allows (as before)."""
    machine(8, 8)
    policy = ThreadPolicy(loadavg=str(tmp_path / "absent"), task_dir=str(tmp_path / "absent"))
    assert policy.choose(8, 7) == 8
    assert policy.choose(3, 7) == 3
    machine(8, 4)
    assert policy.choose(8, 7) == 4


def test_policy_bad_arguments():
    with pytest.raises(ValueError, match="'spare' must be an integer >= 0"):
        ThreadPolicy(spare=-1)
    with pytest.raises(ValueError, match="'ceiling' must be a positive integer"):
        ThreadPolicy().choose(0, 1)
    with pytest.raises(ValueError, match="'workers' must be an integer >= 0"):
        ThreadPolicy().choose(2, -1)


# ----------------------------------------------------------------- configuration


@pytest.mark.parametrize("value", [None, "auto", " AUTO "])
def test_config_auto(value):
    assert Config(threads=value).threads is None
    assert Config().threads is None  # the default adapts


@pytest.mark.parametrize("value", [0, -2, 1.5, True, "two", ""])
def test_config_bad_threads(value):
    with pytest.raises(ValueError, match="'threads' must be a positive integer or 'auto'"):
        Config(threads=value)


def test_env_and_toml(tmp_path):
    assert load_config(environ={"SPBFS_THREADS": "auto"}).threads is None
    assert load_config(environ={"SPBFS_THREADS": "3"}).threads == 3
    with pytest.raises(ValueError, match="SPBFS_THREADS must be an integer or 'auto'"):
        load_config(environ={"SPBFS_THREADS": "many"})
    f = tmp_path / "c.toml"
    f.write_text('threads = "auto"\n')
    assert Config.from_toml(f).threads is None
    # A keyword "auto" beats the environment's number, the environment's the file's.
    assert load_config(environ={"SPBFS_THREADS": "3"}, threads="auto").threads is None
    f.write_text("threads = 4\n")
    assert load_config(f, environ={}).threads == 4
    assert load_config(f, environ={"SPBFS_THREADS": "auto"}).threads is None


# ----------------------------------------------------------------- inside a search


@pytest.fixture
def seen(monkeypatch):
    """The thread count of every search that runs a parallel region, as numba has it set
    when the search first asks for its count (the search, not the call, chooses when)."""
    counts: list[int] = []
    inner = T.SearchThreads.count

    def spy(self, policy=None):
        count = inner(self, policy)
        if not getattr(self, "_seen", False):
            self._seen = True
            assert numba.get_num_threads() == count
            counts.append(count)
        return count

    monkeypatch.setattr(T.SearchThreads, "count", spy)
    return counts


@pytest.fixture
def keep_threads():
    before = numba.get_num_threads()
    yield before
    numba.set_num_threads(before)


def _graph() -> spbfs.Graph:
    from spbfs.generators import kronecker

    return spbfs.Graph.from_edgelist(kronecker(10, 8, seed=3))


def _load(monkeypatch, running: int) -> None:
    monkeypatch.setattr(T.ThreadProbe, "hold", 0.0)  # every search reads the machine
    monkeypatch.setattr(T, "read_running", lambda path="/proc/loadavg": running)
    monkeypatch.setattr(T, "read_own_running", lambda task_dir="/proc/self/task": 1)


@needs_two
def test_explicit_threads_are_obeyed_even_when_busy(monkeypatch, seen, keep_threads):
    _load(monkeypatch, 50)
    g = _graph()
    for t in (1, 2):
        spbfs.bfs(g, 0, config=g.config.replace(threads=t))
        assert seen[-1] == t
        assert numba.get_num_threads() == keep_threads  # the caller's count, restored


@needs_two
def test_a_search_given_one_thread_leaves_the_next_default_search_its_ceiling(
        monkeypatch, seen, keep_threads, machine):
    """A config's count is that search's: the default search after one given
    ``threads=1`` still reads the machine against the caller's count (two here)."""
    machine(POOL, POOL)
    numba.set_num_threads(2)
    _load(monkeypatch, 1)  # quiet
    g = _graph()
    spbfs.bfs(g, 0, config=g.config.replace(threads=1))
    assert seen[-1] == 1 and numba.get_num_threads() == 2
    spbfs.bfs(g, 0)
    assert seen[-1] == 2


@needs_two
def test_auto_follows_the_load_and_restores_the_callers_count(monkeypatch, seen, keep_threads,
                                                              machine):
    machine(POOL, POOL)
    numba.set_num_threads(2)
    g = _graph()
    _load(monkeypatch, 50)  # every core taken by others
    spbfs.bfs(g, 0)
    assert seen[-1] == 1
    assert numba.get_num_threads() == 2
    _load(monkeypatch, 1)  # quiet
    spbfs.bfs(g, 0)
    assert seen[-1] == 2
    numba.set_num_threads(1)  # the caller's own setting is the ceiling
    spbfs.bfs(g, 0)
    assert seen[-1] == 1 and numba.get_num_threads() == 1


@needs_two
def test_auto_restores_after_an_error(monkeypatch, keep_threads, machine):
    machine(POOL, POOL)
    numba.set_num_threads(2)
    _load(monkeypatch, 50)

    def boom(*args, **kwargs):
        assert args[-1].count() == 1 and numba.get_num_threads() == 1
        raise RuntimeError("boom")

    monkeypatch.setattr(bfs_module, "_search", boom)
    with pytest.raises(RuntimeError, match="boom"):
        spbfs.bfs(_graph(), 0)
    assert numba.get_num_threads() == 2


@needs_two
def test_each_python_thread_keeps_its_own_count(monkeypatch, seen, keep_threads, machine):
    """numba's count is per thread: a worker thread's setting is its searches' ceiling."""
    machine(POOL, POOL)
    _load(monkeypatch, 1)
    numba.set_num_threads(2)
    g = _graph()
    inside: list[int] = []

    def work() -> None:
        numba.set_num_threads(1)
        spbfs.bfs(g, 0)
        inside.append(numba.get_num_threads())

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert seen == [1] and inside == [1]
    assert numba.get_num_threads() == 2


@pytest.mark.parametrize("fmt", ["csr", "dcsc"])
@pytest.mark.parametrize("semiring", ["min_second", "plus_second"])
def test_results_identical_under_every_setting(monkeypatch, keep_threads, machine, fmt,
                                               semiring):
    rng = np.random.default_rng(5)
    n = 3000
    nxg = nx.gnm_random_graph(n, 12000, seed=7)
    src, dst = np.array(nxg.edges(), dtype=np.int64).T
    g = spbfs.Graph.from_edges(src, dst, n=n, config=Config(format=fmt))
    a = sp.coo_matrix((np.ones(len(src)), (src, dst)), shape=(n, n))
    a = (a + a.T).tocsr()
    machine(POOL, POOL)
    for s in rng.choice(n, size=3, replace=False).tolist():
        want = shortest_path(a, unweighted=True, indices=s)
        want = np.where(np.isinf(want), -1, want).astype(np.int64)
        runs = []
        for threads, running in ((1, 1), (2, 1), (None, 1), (None, 50)):
            _load(monkeypatch, running)
            r = spbfs.bfs(g, s, config=g.config.replace(threads=threads), semiring=semiring)
            assert np.array_equal(r.levels, want), (threads, running)
            runs.append(r)
        first = runs[0]
        for r in runs[1:]:
            if semiring == "min_second":
                assert np.array_equal(r.parents, first.parents)
            else:
                assert np.array_equal(r.values, first.values)
        if semiring == "min_second":
            # Parents are the smallest neighbour one level up (checked against the matrix).
            p = first.parents
            for v in np.flatnonzero(want > 0):
                nbrs = a.indices[a.indptr[v]:a.indptr[v + 1]]
                up = nbrs[want[nbrs] == want[v] - 1]
                assert p[v] == up.min()


# ----------------------------------------------------------------- asked when first needed


@pytest.fixture
def reads(monkeypatch):
    """How often each search read the machine's load (the policy's first step)."""
    count = [0]

    def read(path="/proc/loadavg"):
        count[0] += 1
        return 50  # every core taken by others: the policy answers 1

    monkeypatch.setattr(T, "read_running", read)
    monkeypatch.setattr(T.ThreadProbe, "hold", 0.0)  # every choice reads the machine
    monkeypatch.setattr(T, "read_own_running", lambda task_dir="/proc/self/task": 1)
    return count


def _levels(src: np.ndarray, dst: np.ndarray, n: int, s: int) -> np.ndarray:
    a = sp.coo_matrix((np.ones(len(src)), (src, dst)), shape=(n, n))
    d = shortest_path((a + a.T).tocsr(), unweighted=True, indices=s)
    return np.where(np.isinf(d), -1, d).astype(np.int64)


@needs_two
def test_a_search_of_small_levels_never_reads_the_load(reads, keep_threads, machine):
    """A long path's levels are one vertex each: no parallel region, so no policy."""
    machine(POOL, POOL)
    numba.set_num_threads(2)
    n = 5000
    src, dst = np.arange(n - 1), np.arange(1, n)
    g = spbfs.Graph.from_edges(src, dst, n=n)
    r = spbfs.bfs(g, 17)
    assert reads[0] == 0
    assert np.array_equal(r.levels, _levels(src, dst, n, 17))
    assert numba.get_num_threads() == 2


@needs_two
@pytest.mark.parametrize("fmt", ["csr", "dcsc"])
def test_the_first_parallel_level_asks_once_and_runs_on_the_answer(reads, seen, keep_threads,
                                                                   machine, fmt):
    """A Kronecker search's bottom-up levels run on the count chosen before the first."""
    from spbfs.generators import kronecker

    machine(POOL, POOL)
    numba.set_num_threads(2)
    el = kronecker(12, 16, seed=4)
    g = spbfs.Graph.from_edgelist(el, config=Config(format=fmt))
    s = int(np.argmax(np.asarray(g.out_degree)))
    r = spbfs.bfs(g, s)
    assert (np.asarray(r.stats.direction) == 1).any()  # it ran bottom-up levels
    assert reads[0] == 1 and seen == [1]  # asked once; the busy machine's answer is 1
    src, dst = np.asarray(el.src), np.asarray(el.dst)
    assert np.array_equal(r.levels, _levels(src, dst, g.n, s))
    assert numba.get_num_threads() == 2  # the caller's count restored


@needs_two
def test_a_graphs_next_search_asks_on_entry(reads, keep_threads, machine, monkeypatch):
    """Once a graph's search asked for its count, the next one (from a vertex with edges)
    asks before its first level; one that did not ask makes the next one wait again."""
    from spbfs.generators import kronecker
    from spbfs.kernels import bfs_numba as nbk

    machine(POOL, POOL)
    numba.set_num_threads(2)
    el = kronecker(12, 16, seed=4)
    g = spbfs.Graph.from_edgelist(el)
    deg = np.asarray(g.out_degree)
    hub, leaf = int(np.argmax(deg)), int(np.flatnonzero(deg == 1)[0])
    isolated = np.flatnonzero(deg == 0)
    calls: list[int] = []  # the thread count each call of the compiled loop got (0: not chosen)
    inner = nbk.search_levels
    at = list(inspect.signature(inner.py_func).parameters).index("nparts")

    def spy(*args):
        calls.append(int(args[at]))
        return inner(*args)

    monkeypatch.setattr(nbk, "search_levels", spy)

    def first_call(*args, **kw):
        calls.clear()
        r = spbfs.bfs(g, *args, **kw)
        return (calls[0] if calls else None), r

    src, dst = np.asarray(el.src), np.asarray(el.dst)
    assert first_call(hub)[0] == 0 and reads[0] == 1  # asked when its first parallel level came
    nparts, r = first_call(hub)
    assert nparts == 1 and reads[0] == 2  # asked on entry (the busy machine's answer: 1)
    assert np.array_equal(r.levels, _levels(src, dst, g.n, hub))
    if len(isolated):
        # One level, no engine (spbfs.search.small): no count asked, and it tells nothing.
        assert first_call(int(isolated[0]))[0] is None and reads[0] == 2
        assert first_call(hub)[0] == 1 and reads[0] == 3
    first_call(leaf, max_depth=1)  # asked on entry, but ran no parallel level
    assert first_call(hub)[0] == 0  # so this one waits for its first parallel level
    assert numba.get_num_threads() == 2


@needs_two
def test_a_large_graph_asks_before_its_passes_over_n(reads, seen, keep_threads, machine):
    """From 2**18 vertices the reset pass runs in parallel: the count is asked for it."""
    machine(POOL, POOL)
    numba.set_num_threads(2)
    n = 1 << 18
    g = spbfs.Graph.from_edges(*_cliques_of_four(n), n=n)  # one level from any vertex
    r = spbfs.bfs(g, 4)
    assert reads[0] == 1 and seen == [1]
    assert r.levels[4:8].tolist() == [0, 1, 1, 1] and int((r.levels >= 0).sum()) == 4


@needs_two
def test_small_levels_go_to_a_team_where_a_trial_measures_it_or_the_cores_are_idle(
        tmp_path, keep_threads, machine, monkeypatch):
    """Runs of small levels go to a team of two threads on a count given, a trial's count of
    two, or a count read without a trial off idle cores; not on a count of two read without
    a trial beside another process (the spare thread). A trial's one thread forms no team
    but marks the levels a team would run, so that its search reports its cost. The answer
    is the same every way."""
    from spbfs.direction import DirectionPolicy
    from spbfs.generators import grid2d
    from spbfs.kernels import bfs_numba as nbk
    from spbfs.search.driver import run_levels
    from spbfs.search.numba_engine import NumbaEngine, ScratchPool

    machine(POOL, POOL)
    # The other load is not this process's workers: the second thread is the spare one.
    monkeypatch.setattr(T.ThreadProbe, "own_running", lambda self, task_dir="": 1)
    numba.set_num_threads(2)
    (tmp_path / "quiet").mkdir()
    (tmp_path / "spare").mkdir()
    quiet = _loadavg(tmp_path / "quiet", 1)
    # POOL - 1 other tasks: one core idle, the second thread only as the spare.
    spare = _loadavg(tmp_path / "spare", POOL)
    one_leads = _warm_probe()
    one_leads.stale = float("inf")  # however long the searches before it take
    one_leads.pick(2, 1)
    one_leads.record(2, 2, 1, 0.09, 10_000)
    one_leads.record(1, 2, 1, 0.01, 10_000)
    g = spbfs.Graph.from_edgelist(grid2d(400, 400))  # frontiers past _TEAM_VERTICES
    runs = []
    for policy, count, team in ((ThreadPolicy(loadavg=quiet), 2, True),
                                (ThreadPolicy(loadavg=spare), 2, False),
                                (ThreadPolicy(loadavg=spare, probe=T.ThreadProbe()), 2, True),
                                (ThreadPolicy(loadavg=spare, probe=one_leads), 1, False),
                                (None, 2, True)):
        choice = T.SearchThreads(2 if policy is None else None, policy)
        e = NumbaEngine(g.out_block, g.in_block, g.out_degree, ScratchPool(),
                        threads=choice.count if policy is not None else 2,
                        quiet=lambda c=choice: c.quiet)
        e.team_topdown = 16  # the grid's levels are team levels where a team may run
        assert e.threads() == count and choice.quiet is (team or count == 1)
        assert choice.measured is (policy is not None and policy.probe is not None)
        assert (e.team_topdown == 16) is (team or count == 1)
        r = run_levels(e, DirectionPolicy("top-down"), 0)
        assert (int(e.sv[nbk.SV_TEAM]) > 0) is team, policy
        stats = r.log.stats()
        runs.append(e.finish(stats.discovered, True, True))
        assert e.release() is (team or count == 1)  # a level for threads was met
        choice.restore()
    for parents, levels in runs[1:]:
        np.testing.assert_array_equal(parents, runs[0][0])
        np.testing.assert_array_equal(levels, runs[0][1])


@needs_two
def test_a_graph_below_one_thread_arcs_runs_on_one_thread_without_reading(
        reads, keep_threads, machine, monkeypatch):
    """A default search of a small graph neither reads the load nor runs two threads,
    and leaves the caller's count as it was; a count given is still obeyed."""
    from spbfs.generators import kronecker

    monkeypatch.setattr(bfs_module, "ONE_THREAD_ARCS", T.ONE_THREAD_ARCS)
    machine(POOL, POOL)
    numba.set_num_threads(2)
    el = kronecker(12, 16, seed=4)
    g = spbfs.Graph.from_edgelist(el)
    assert g.nnz < T.ONE_THREAD_ARCS
    s = int(np.argmax(np.asarray(g.out_degree)))
    r = spbfs.bfs(g, s)
    assert (np.asarray(r.stats.direction) == 1).any()  # a level that would run in parallel
    assert reads[0] == 0 and r.threads == 1
    assert numba.get_num_threads() == 2
    assert np.array_equal(r.levels, _levels(np.asarray(el.src), np.asarray(el.dst), g.n, s))
    r2 = spbfs.bfs(g, s, config=g.config.replace(threads=2))
    assert r2.threads == 2 and np.array_equal(r2.levels, r.levels)
    # A graph past the limit asks (the busy reading of the fixture answers one thread).
    monkeypatch.setattr(bfs_module, "ONE_THREAD_ARCS", g.nnz)
    big = spbfs.Graph.from_edgelist(el)
    assert spbfs.bfs(big, s).threads == 1 and reads[0] == 1
    # So does a graph of few arcs but as many vertices as the passes over them run in
    # parallel for (bottom-up: the engine, not the rows' search).
    monkeypatch.setattr(bfs_module, "ONE_THREAD_ARCS", T.ONE_THREAD_ARCS)
    wide = spbfs.Graph.from_edges(np.arange(3), np.arange(1, 4), n=1 << 18)
    assert wide.nnz < T.ONE_THREAD_ARCS
    r3 = spbfs.bfs(wide, 0, direction="bottom-up")
    assert reads[0] == 2 and r3.levels[:5].tolist() == [0, 1, 2, 3, -1]
