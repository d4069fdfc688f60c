"""The deadline watchdog on a clock the test moves: each deadline fires exactly when passed, and only then."""

from __future__ import annotations

import gevent
import pytest
from gevent.event import Event

from llmload.metrics.record import RequestRecord
from llmload.users.deadlines import DRAIN_S, Deadline, Deadlines, Watchdog
from tests.helpers.clock import FakeClock

S = 1_000_000_000  # ns per second


def tick(wd: Watchdog) -> None:
    """One scan, run where the hub timer runs it (a Deadline thrown from a hub callback comes back to us)."""
    gevent.get_hub().loop.run_callback(wd.tick)
    gevent.sleep(0)


class InFlight:
    """A request registered with the watchdog from its own greenlet, waiting until released or hit."""

    def __init__(self, watchdog: Watchdog, clock: FakeClock) -> None:
        self.rec = RequestRecord("c", 1, 10)
        self.kind: str | None = "running"
        self._release = Event()
        self._registered = Event()
        self._clock = clock
        self._watchdog = watchdog
        self.greenlet = gevent.spawn(self._run)
        self._registered.wait(5)

    def _run(self) -> None:
        self.flight = self._watchdog.register(self.rec)
        self.rec.start_ns = self._clock()
        self._registered.set()
        try:
            self._release.wait()
            self.kind = None
        except Deadline as d:
            self.kind = d.kind
        finally:
            self._watchdog.unregister(self.flight)

    def token(self) -> None:
        self.rec.chunk_ns.append(self._clock())

    def outcome(self) -> str | None:
        """What happened after one tick: the deadline's kind, or None (released: no deadline passed)."""
        if self.kind == "running":
            self._release.set()
        self.greenlet.join(5)
        return self.kind


@pytest.fixture
def rig():
    made = []

    def make(limits: Deadlines):
        clock = FakeClock(ns=1_000 * S)
        wd = Watchdog(limits, clock=clock)
        made.append(wd)
        return wd, clock

    yield make
    for wd in made:
        wd.stop()


@pytest.mark.parametrize(
    ("limits", "script", "kind"),
    [
        (Deadlines(ttft=0.1), [("wait", 0.11)], "ttft_timeout"),
        (Deadlines(ttft=0.1), [("wait", 0.09)], None),
        (Deadlines(ttft=0.3), [("wait", 0.2), ("token", 0), ("wait", 0.2)], None),  # content came in time
        (Deadlines(stall=0.1), [("token", 0), ("wait", 0.05), ("token", 0), ("wait", 0.11)], "stall_timeout"),
        (Deadlines(stall=0.2), [("token", 0)] + [("wait", 0.15), ("token", 0)] * 10, None),
        (Deadlines(total=0.15), [("token", 0)] + [("wait", 0.05), ("token", 0)] * 3 + [("wait", 0.01)], "total_timeout"),
        (Deadlines(), [("token", 0), ("wait", 3600.0)], None),
    ],
)
def test_each_deadline_fires_only_when_passed(rig, limits, script, kind):
    wd, clock = rig(limits)
    req = InFlight(wd, clock)
    for step, seconds in script:
        if step == "wait":
            clock.advance(seconds)
            tick(wd)
        else:
            req.token()
    assert req.outcome() == kind
    assert wd.in_flight == 0 and wd.fired == (kind is not None)


def test_stall_is_measured_from_the_last_token_not_from_the_start():
    # Progress is only a content token: silence after a token is a stall even though the
    # request as a whole is young, and a long wait for the first token is not one.
    wd = Watchdog(Deadlines(stall=0.1, total=10), clock=(clock := FakeClock(ns=1_000 * S)))
    try:
        req = InFlight(wd, clock)
        clock.advance(5.0)  # no token yet: the stall deadline does not run before the first one
        tick(wd)
        req.token()
        clock.advance(0.1)
        tick(wd)
        assert req.kind == "running"  # exactly at the limit: not past it
        clock.advance(0.001)
        tick(wd)
        assert req.outcome() == "stall_timeout"
    finally:
        wd.stop()


def test_a_finished_request_is_never_hit():
    wd = Watchdog(Deadlines(ttft=0.05), clock=(clock := FakeClock(ns=1_000 * S)))
    try:
        req = InFlight(wd, clock)
        req.token()
        assert req.outcome() is None
        clock.advance(10.0)
        tick(wd)  # a tick after the request left must not throw anywhere
        assert wd.fired == 0 and wd.in_flight == 0
    finally:
        wd.stop()


def test_a_draining_request_only_gets_the_drain_deadline():
    wd = Watchdog(Deadlines(ttft=0.05, total=0.1), clock=(clock := FakeClock(ns=1_000 * S)))
    try:
        req = InFlight(wd, clock)
        req.token()
        req.rec.end_ns = clock()
        req.flight.draining = True  # [DONE] seen: only the HTTP terminator is missing
        clock.advance(DRAIN_S)
        tick(wd)
        assert req.kind == "running"  # far past total, but draining: only the drain deadline counts
        clock.advance(0.01)
        tick(wd)
        assert req.outcome() == "drain"
    finally:
        wd.stop()


def test_the_hub_timer_scans_by_itself():
    wd = Watchdog(Deadlines(ttft=0.02))  # the real perf_counter_ns and the hub timer, no manual tick
    try:
        result = {}

        def request() -> None:
            rec = RequestRecord("c", 1, 10)
            flight = wd.register(rec)
            rec.start_ns = wd._clock()
            try:
                gevent.sleep(30)
            except Deadline as d:
                result["kind"] = d.kind
            finally:
                wd.unregister(flight)

        gevent.spawn(request).join(30)
        assert result == {"kind": "ttft_timeout"}
    finally:
        wd.stop()


def test_resolution_bounds():
    assert Deadlines(ttft=60).resolution() == 0.25
    assert Deadlines(stall=0.05).resolution() == 0.01
    assert Deadlines(stall=1.0).resolution() == pytest.approx(0.1)
    assert Deadlines().resolution() == 0.25 and not Deadlines().any
