"""The drain guard: said when a stop waits for requests in flight; a Ctrl-C during that wait stops the users."""

from __future__ import annotations

import logging
import signal

import gevent

from llmload.runtime.drain import DrainGuard, RunInterrupt


class Signals:
    """The two names of :mod:`signal` the guard uses; handlers are kept, not installed."""

    SIGINT = signal.SIGINT

    def __init__(self) -> None:
        self.handler: object = "locust's"

    def signal(self, signum, handler):
        assert signum == signal.SIGINT
        previous, self.handler = self.handler, handler
        return previous


class User:
    def __init__(self) -> None:
        self.stopped: list[bool] = []

    def stop(self, force: bool = False) -> bool:
        self.stopped.append(force)
        return True


def guard(in_flight=2, stop_timeout=600.0):
    users, sig = [User(), User()], Signals()
    return DrainGuard(lambda: users, lambda: in_flight, lambda: stop_timeout, signals=sig), users, sig


def test_a_ctrl_c_during_the_wait_stops_every_user_at_once_and_gives_sigint_back(caplog):
    g, users, sig = guard()
    with caplog.at_level(logging.WARNING, logger="llmload"):
        g.begin()
    assert "waiting up to 10 min for 2 requests in flight to finish" in caplog.text and "Ctrl-C stops them now" in caplog.text
    assert sig.handler == g._on_sigint
    sig.handler(signal.SIGINT, None)  # Ctrl-C
    assert sig.handler == "locust's"  # a further Ctrl-C is Locust's again
    gevent.sleep(0)
    assert [u.stopped for u in users] == [[True], [True]]  # forced, as a stop without a timeout does
    g.end()
    assert sig.handler == "locust's"


def test_the_wait_ending_gives_sigint_back_without_stopping_anyone():
    g, users, sig = guard()
    g.begin()
    g.end()
    gevent.sleep(0)
    assert sig.handler == "locust's" and all(u.stopped == [] for u in users)


def test_no_wait_nothing_said_nothing_taken(caplog):
    for in_flight, timeout in ((0, 600.0), (3, 0), (3, None)):
        g, _, sig = guard(in_flight, timeout)
        with caplog.at_level(logging.WARNING, logger="llmload"):
            g.begin()
        assert sig.handler == "locust's"
    assert caplog.text == ""


def test_one_request_and_a_short_timeout_read_as_people_write_them(caplog):
    g, _, _ = guard(in_flight=1, stop_timeout=30.0)
    with caplog.at_level(logging.WARNING, logger="llmload"):
        g.begin()
    assert "waiting up to 30 s for 1 request in flight" in caplog.text and "Ctrl-C stops it now" in caplog.text


def test_a_run_interrupt_ends_the_test_gracefully_first_then_gives_up():
    ended, gave_up = [], []
    sig = Signals()
    r = RunInterrupt(lambda: ended.append(1), lambda: gave_up.append(1), signals=sig)
    r.arm()
    sig.handler(signal.SIGINT, None)  # the first Ctrl-C: the test stops as its end does
    gevent.sleep(0)
    assert (ended, gave_up, sig.handler) == ([1], [], r._on_sigint)
    sig.handler(signal.SIGINT, None)  # the second: no more waiting; any further one is Locust's
    gevent.sleep(0)
    assert (ended, gave_up, sig.handler) == ([1], [1], "locust's")
    r.disarm()
    assert sig.handler == "locust's"


def test_without_give_up_the_second_ctrl_c_is_locusts_own():
    heard = []
    sig = Signals()
    def locusts(signum, frame):  # Python's default: KeyboardInterrupt
        heard.append(signum)

    sig.handler = locusts
    r = RunInterrupt(lambda: None, signals=sig)
    r.arm()
    sig.handler(signal.SIGINT, None)
    sig.handler(signal.SIGINT, None)
    assert heard == [signal.SIGINT] and sig.handler is locusts


def test_a_run_interrupt_armed_twice_keeps_locusts_handler_to_give_back():
    sig = Signals()
    r = RunInterrupt(lambda: None, signals=sig)
    r.arm()
    r.arm()  # the next test of the same process
    r.disarm()
    assert sig.handler == "locust's"
