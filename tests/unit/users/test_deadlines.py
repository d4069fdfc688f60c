from __future__ import annotations

import time

import gevent
import pytest

from llmload.metrics.record import RequestRecord
from llmload.users.deadlines import Deadline, Deadlines, Watchdog


def run_request(watchdog, body):
    """Run ``body(record)`` in a greenlet registered with the watchdog; return the Deadline kind or None."""
    result = {}

    def task():
        rec = RequestRecord("c", 1, 10)
        flight = watchdog.register(rec)
        rec.start_ns = time.perf_counter_ns()
        try:
            body(rec)
            result["kind"] = None
        except Deadline as d:
            result["kind"] = d.kind
        finally:
            watchdog.unregister(flight)

    gevent.spawn(task).join(5)
    return result["kind"]


def tokens(rec, n, gap):
    for _ in range(n):
        gevent.sleep(gap)
        rec.chunk_ns.append(time.perf_counter_ns())


@pytest.mark.parametrize(
    ("limits", "body", "kind"),
    [
        (Deadlines(ttft=0.1), lambda r: gevent.sleep(0.5), "ttft_timeout"),
        (Deadlines(ttft=0.3), lambda r: tokens(r, 5, 0.02), None),
        (Deadlines(stall=0.1), lambda r: (tokens(r, 3, 0.01), gevent.sleep(0.5)), "stall_timeout"),
        (Deadlines(stall=0.2), lambda r: tokens(r, 10, 0.03), None),
        (Deadlines(total=0.15), lambda r: tokens(r, 100, 0.01), "total_timeout"),
        (Deadlines(), lambda r: tokens(r, 3, 0.01), None),
    ],
)
def test_each_deadline_fires_only_when_passed(limits, body, kind):
    wd = Watchdog(limits)
    try:
        assert run_request(wd, body) == kind
        assert wd.in_flight == 0
    finally:
        wd.stop()


def test_stall_is_measured_from_the_last_token_not_from_socket_activity():
    # Progress is only a content token: 0.3 s of silence after a token is a stall even
    # though the request as a whole is young.
    wd = Watchdog(Deadlines(stall=0.1, total=10))
    t0 = time.perf_counter()
    try:
        assert run_request(wd, lambda r: (tokens(r, 1, 0.0), gevent.sleep(0.3))) == "stall_timeout"
    finally:
        wd.stop()
    assert time.perf_counter() - t0 < 0.25  # fired within its resolution, not at the end


def test_a_finished_request_is_never_hit():
    wd = Watchdog(Deadlines(ttft=0.05))
    try:
        assert run_request(wd, lambda r: tokens(r, 1, 0.0)) is None
        gevent.sleep(0.2)  # ticks after the request left must not throw anywhere
        assert wd.fired == 0
    finally:
        wd.stop()


def test_resolution_bounds():
    assert Deadlines(ttft=60).resolution() == 0.25
    assert Deadlines(stall=0.05).resolution() == 0.01
    assert Deadlines(stall=1.0).resolution() == pytest.approx(0.1)
