"""The drain guard: said when a stop waits for requests in flight; a Ctrl-C during that wait stops the users."""

from __future__ import annotations

import logging
import signal

import gevent

from llmload.runtime.drain import DrainGuard, RunInterrupt


class Signals:
    """What the guards use of :mod:`signal`; handlers are kept, not installed. SIGINT's before ours is Locust's
    (Python's KeyboardInterrupt); SIGTERM's reads as the default, as gevent's handler (Locust's) does."""

    SIGINT, SIGTERM, SIG_DFL = signal.SIGINT, signal.SIGTERM, signal.SIG_DFL

    def __init__(self) -> None:
        self.handlers: dict[int, object] = {signal.SIGINT: "locust's", signal.SIGTERM: signal.SIG_DFL}
        self.interrupted: list[int] = []  # default_int_handler calls (a KeyboardInterrupt: Locust's shutdown)

    @property
    def handler(self) -> object:
        return self.handlers[signal.SIGINT]

    @handler.setter
    def handler(self, handler: object) -> None:
        self.handlers[signal.SIGINT] = handler

    def signal(self, signum, handler):
        previous, self.handlers[signum] = self.handlers[signum], handler
        return previous

    def getsignal(self, signum):
        return self.handlers[signum]

    def default_int_handler(self, signum, frame):
        self.interrupted.append(signum)


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


def test_a_run_interrupt_takes_sigterm_too_and_gives_gevents_default_back():
    """SIGTERM on a headless run (systemd, docker stop, kill): as Ctrl-C. Locust's SIGTERM handler is gevent's, which
    Python reads as the default: a second SIGTERM without give_up raises KeyboardInterrupt, Locust's Ctrl-C path."""
    ended, sig = [], Signals()
    r = RunInterrupt(lambda: ended.append(1), signals=sig)
    r.arm()
    assert sig.handlers[signal.SIGTERM] == r._on_sigint
    sig.handlers[signal.SIGTERM](signal.SIGTERM, None)
    gevent.sleep(0)
    assert ended == [1] and sig.interrupted == []
    sig.handlers[signal.SIGTERM](signal.SIGTERM, None)
    assert sig.interrupted == [signal.SIGTERM]
    assert sig.handlers == {signal.SIGINT: "locust's", signal.SIGTERM: signal.SIG_DFL}


def test_the_first_signal_says_whether_requests_in_flight_finish_or_are_cut(caplog):
    for timeout, said in ((10.0, "SIGTERM: stopping the test; requests in flight finish within the stop timeout (10 s)"),
                          (0, "SIGTERM: stopping the test; requests in flight stop now and count as interrupted")):
        caplog.clear()
        r = RunInterrupt(lambda: None, stop_timeout=lambda t=timeout: t, signals=Signals())
        r.arm()
        with caplog.at_level(logging.WARNING, logger="llmload"):
            r._on_sigint(signal.SIGTERM, None)
        assert said in caplog.text, caplog.text


def test_a_second_sigterm_during_the_wait_stops_the_users_and_hands_back_the_run_interrupts():
    """One process: the run interrupt's SIGTERM (the first ended the test), then the drain guard's for the wait."""
    users, sig = [User(), User()], Signals()
    r = RunInterrupt(lambda: None, signals=sig)
    r.arm()
    g = DrainGuard(lambda: users, lambda: 2, lambda: 10.0, signals=sig)
    g.begin()
    assert sig.handlers == {signal.SIGINT: g._on_sigint, signal.SIGTERM: g._on_sigint}
    sig.handlers[signal.SIGTERM](signal.SIGTERM, None)
    gevent.sleep(0)
    assert [u.stopped for u in users] == [[True], [True]]
    assert sig.handlers == {signal.SIGINT: r._on_sigint, signal.SIGTERM: r._on_sigint}


def test_the_drain_guard_leaves_locusts_sigterm_alone():
    """A web UI process (no run interrupt): SIGTERM stays gevent's, which Python could not give back."""
    g, _, sig = guard()
    g.begin()
    assert sig.handlers == {signal.SIGINT: g._on_sigint, signal.SIGTERM: signal.SIG_DFL}
    g.end()
    assert sig.handlers == {signal.SIGINT: "locust's", signal.SIGTERM: signal.SIG_DFL}
