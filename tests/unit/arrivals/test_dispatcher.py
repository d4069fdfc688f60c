from __future__ import annotations

from collections import Counter

import gevent
import numpy as np
import pytest

from llmload.arrivals.dispatcher import Dispatcher
from llmload.arrivals.schedules import ArrivalSpec, RatePlan
from tests.helpers.clock import FakeClock

NS = 1_000_000_000


class VirtualClock(FakeClock):
    """perf_counter_ns on a virtual time line; the dispatcher's waits advance it (plus a set lateness)."""

    def __init__(self, late_s: float = 0.0) -> None:
        super().__init__(ns=10 * NS)
        self.late_s = late_s
        self.waits: list[float | None] = []

    def wait(self, event, seconds):
        self.waits.append(seconds)
        if seconds is None:
            gevent.sleep(0)  # let the test change the rate
            return
        self.advance(seconds + self.late_s)
        gevent.sleep(0)


def _dispatcher(spec=None, rate=10.0, clock=None, **kw) -> tuple[Dispatcher, VirtualClock]:
    clock = clock or VirtualClock()
    spec = spec or ArrivalSpec("constant")
    d = Dispatcher(spec, seed=5, plan=RatePlan(rate), weights=[3, 4, 3], clock=clock, wait=clock.wait, **kw)
    return d, clock


def _take(d: Dispatcher, n: int):
    return [d.take() for _ in range(n)]


def test_constant_arrivals_are_released_at_their_intended_times():
    d, clock = _dispatcher(rate=10.0)
    d.start()
    try:
        tickets = _take(d, 20)
    finally:
        d.stop()
    starts = np.array([t.intended_ns for t in tickets]) - tickets[0].intended_ns
    assert starts.tolist() == [i * NS // 10 for i in range(20)]
    assert [t.index for t in tickets] == list(range(20))
    assert all(t.lag_ns == 0 for t in tickets)
    assert d.stats.arrivals >= 20 and d.stats.lag.max == 0.0


def test_the_mix_is_exact_over_the_global_sequence():
    d, _ = _dispatcher(spec=ArrivalSpec("poisson"), rate=50.0)
    d.start()
    try:
        tickets = _take(d, 100)
    finally:
        d.stop()
    assert Counter(t.class_index for t in tickets) == {0: 30, 1: 40, 2: 30}


def test_workers_take_strides_whose_union_is_the_whole_run():
    runs = []
    for w in range(2):
        d, _ = _dispatcher(spec=ArrivalSpec("gamma", 0.5), rate=20.0, worker=w, workers=2)
        d.start(t0_ns=10 * NS)
        try:
            runs.append(_take(d, 50))
        finally:
            d.stop()
    single, _ = _dispatcher(spec=ArrivalSpec("gamma", 0.5), rate=20.0)
    single.start(t0_ns=10 * NS)
    try:
        whole = _take(single, 100)
    finally:
        single.stop()
    merged = sorted((t.index, t.class_index, t.intended_ns) for run in runs for t in run)
    assert merged == [(t.index, t.class_index, t.intended_ns) for t in whole]


def test_a_late_dispatcher_reports_its_lag():
    d, clock = _dispatcher(rate=10.0, clock=VirtualClock(late_s=0.003))
    d.start()
    try:
        tickets = _take(d, 10)
    finally:
        d.stop()
    assert all(t.lag_ns in (0, 3_000_000) for t in tickets)
    assert d.stats.lag.max == pytest.approx(0.003)


def test_arrivals_with_no_free_user_queue_and_count_as_waited_once_taken():
    d, clock = _dispatcher(rate=100.0)
    d.start()
    gevent.sleep(0)
    for _ in range(20):  # nobody takes: every arrival queues
        gevent.sleep(0)
    d.stop()
    assert d.pending == d.stats.arrivals > 5
    assert d.stats.sent == d.stats.waited == 0  # not sent yet
    first = d.take()  # queued for the whole run so far (virtual seconds > the jitter bound)
    assert first.waited and first.index == 0
    assert (d.stats.sent, d.stats.waited, d.stats.unsent) == (1, 1, d.stats.arrivals - 1)


class FrozenClock(VirtualClock):
    """Time moves only when the test moves it (a dispatcher's wait just yields)."""

    def wait(self, event, seconds):
        self.waits.append(seconds)
        gevent.sleep(0)


def test_a_wait_within_the_loops_jitter_is_not_the_cap():
    """The first arrival of a run is due before the first user has spawned: no user is free when it is released,
    and it waits ~1-2 ms for one. That is not the -u cap (it counted as 'waited', and every short or low-rate run
    warned "the -u cap held arrivals back ... raise -u")."""
    clock = FrozenClock()
    d, _ = _dispatcher(rate=10.0, clock=clock)
    d.start()
    gevent.sleep(0)
    assert d.pending == 1  # released with no user waiting
    clock.ns += 2_000_000  # a user takes it 2 ms later
    first = d.take()
    assert not first.waited and (d.stats.sent, d.stats.waited) == (1, 0)
    clock.ns += 150_000_000  # the next one (due at 100 ms) is released late, and taken at once: lag, not a wait
    gevent.sleep(0)
    assert d.pending == 1
    late = d.take()
    assert late.lag_ns == 52_000_000 and not late.waited and d.stats.waited == 0
    clock.ns += 100_000_000  # due at 200 ms, released at 250 ms, taken 50 ms later: the cap held it back
    gevent.sleep(0)
    clock.ns += 50_000_000
    held = d.take()
    d.stop()
    assert held.waited and (d.stats.sent, d.stats.waited) == (3, 1)


def test_at_the_end_the_arrivals_still_queued_are_unsent_with_their_longest_wait():
    """The final report counts what was due and never sent, and how long the oldest of them had waited: the
    arrivals still queued at the end were in no count (the run said 500 sent where the server got 84)."""
    d, clock = _dispatcher(rate=10.0)
    t0 = clock.ns
    d.start()
    first = d.take()  # index 0, a user was waiting
    while d.stats.arrivals < 11:  # nobody takes for 1 s: 10 more are due
        gevent.sleep(0)
    second = d.take()  # index 1, queued for ~0.9 s
    stats = d.drain_stats(final=True)
    assert (first.index, second.index) == (0, 1) and not first.waited and second.waited
    assert stats.sent == 2 and stats.waited == 1 and stats.unsent == stats.arrivals - 2 >= 9
    assert stats.unsent_wait == pytest.approx((clock.ns - t0 - 0.2 * NS) / NS)  # index 2, due at 0.2 s
    assert d.pending == 0 and not d.running
    again = d.drain_stats(final=True)  # a worker's later reports are final too: nothing is counted twice
    assert again.empty and again.unsent_wait == 0.0


class RunawayClock:
    """1 ms later at every reading, so a dispatcher at 1e9 req/s is always behind. After ``limit`` readings it
    raises, which ends a loop that never yields (the test then fails instead of hanging)."""

    def __init__(self, limit: int) -> None:
        self.now, self.calls, self.limit = 10 * NS, 0, limit

    def __call__(self) -> int:
        self.calls += 1
        if self.calls > self.limit:
            raise RuntimeError("the dispatcher never yielded")
        self.now += 1_000_000
        return self.now


def test_a_rate_far_beyond_the_client_yields_and_keeps_a_bounded_queue(monkeypatch):
    """--rate 1e9 queued tickets in a loop that never yielded: -t and SIGTERM were never served, 24 GB later the
    kernel killed the process. Now the loop yields while behind, and arrivals due while MAX_PENDING tickets wait are
    counted (due, never sent) without a ticket."""
    import llmload.arrivals.dispatcher as dispatcher

    monkeypatch.setattr(dispatcher, "MAX_PENDING", 100)
    clock = RunawayClock(limit=200_000)
    d = Dispatcher(ArrivalSpec("constant"), seed=5, plan=RatePlan(1e9), weights=[1.0], clock=clock,
                   wait=lambda event, seconds: gevent.sleep(0))  # fmt: skip
    d.start()
    for _ in range(50):  # the test's greenlet gets its turns while the dispatcher is behind
        gevent.sleep(0)
    assert d.running and not d._greenlet.dead and clock.calls < 200_000
    assert d.pending == 100 and d.stats.arrivals > 50 * dispatcher.YIELD_EVERY - 100
    d.take()
    stats = d.drain_stats(final=True)
    assert stats.sent == 1 and stats.unsent == stats.arrivals - 1
    assert stats.unsent_wait > 0 and d.pending == 0


def test_a_rate_change_takes_effect_without_restarting_the_sequence():
    d, clock = _dispatcher(rate=10.0)
    d.start()
    try:
        before = _take(d, 5)  # 0.0 .. 0.4 s
        d.set_rate(20.0, at_s=0.5)
        after = _take(d, 4)
    finally:
        d.stop()
    t0 = before[0].intended_ns
    assert [(t.intended_ns - t0) / NS for t in after] == pytest.approx([0.5, 0.55, 0.6, 0.65])


def test_rate_zero_pauses_until_a_new_rate():
    d, clock = _dispatcher(rate=10.0)
    d.start()
    try:
        _take(d, 2)
        d.set_rate(0.0, at_s=0.2)
        for _ in range(5):
            gevent.sleep(0)
        assert d.pending == 0 and None in clock.waits
        d.set_rate(10.0, at_s=1.0)
        resumed = d.take()
    finally:
        d.stop()
    assert resumed.index == 2
    assert resumed.intended_ns == 10 * NS + NS  # 1.0 s after the start


def test_a_given_schedule_is_released_at_its_times_split_by_stride_and_then_ends():
    times = [0.0, 0.25, 0.25, 1.0, 2.5]  # a trace's seconds (ties allowed)
    got = []
    for worker in (0, 1):
        clock = VirtualClock()
        t0 = clock.ns
        d = Dispatcher(ArrivalSpec("trace"), seed=5, plan=RatePlan(1.0), weights=[1.0], worker=worker, workers=2,
                       clock=clock, wait=clock.wait, times=times)  # fmt: skip
        assert not d.exhausted
        d.start(t0)
        d._greenlet.join(timeout=1)  # a finite schedule: the loop returns by itself
        assert d.exhausted
        tickets = [d.take() for _ in range(d.pending)]
        got += [(t.index, (t.intended_ns - t0) / NS) for t in tickets]
        assert d.stats.arrivals == len(tickets)
    assert sorted(got) == list(enumerate(times))


def test_an_empty_schedule_is_at_its_end_at_once():
    clock = VirtualClock()
    d = Dispatcher(ArrivalSpec("trace"), seed=1, plan=RatePlan(1.0), weights=[1.0], clock=clock, wait=clock.wait,
                   times=[])  # fmt: skip
    d.start()
    d._greenlet.join(timeout=1)
    assert d.exhausted and d.pending == 0 and d.stats.arrivals == 0


def test_a_time_beyond_any_run_waits_instead_of_killing_the_loop():
    """A trace timestamp of 1e308 ms (or a rate of ~0) made a due time that overflowed: OverflowError killed the
    dispatcher's greenlet, with a traceback. The loop now waits for a change that never comes (the run ends at -t)."""
    clock = VirtualClock()
    d = Dispatcher(ArrivalSpec("trace"), seed=1, plan=RatePlan(1.0), weights=[1.0], clock=clock, wait=clock.wait,
                   times=[0.0, 1e305])  # fmt: skip
    d.start()
    first = d.take()
    for _ in range(5):
        gevent.sleep(0)
    assert first.index == 0 and d.running and not d._greenlet.dead and d.pending == 0 and None in clock.waits
    d.stop()
