"""The wait for requests in flight when a test stops (the drain), and a Ctrl-C that cuts it short.

A test that stops with a stop timeout (a ladder sets it to the request timeout, so that the
last step's requests finish and count in their step; or ``--stop-timeout``) waits in Locust
for every user to finish its request: up to minutes, silently. Locust's own Ctrl-C raises
``KeyboardInterrupt`` in its main greenlet, out of that wait: a traceback, exit 130, no
summary, everything measured lost (the first Ctrl-C of a ladder starts such a wait, so a
second one lost the run).

:class:`DrainGuard` (every process that sends load: standalone, worker) says, when a stop
begins with requests in flight and a stop timeout, how many and for how long at most, and
takes SIGINT for the length of the wait: a Ctrl-C then stops the users at once, as a stop
without a timeout does (their requests count as interrupted), and the test ends with its
summary. The handler before it is back when the wait ends or at that Ctrl-C, so a further
Ctrl-C is Locust's again.

:class:`RunInterrupt` (a headless master and a worker, while a test runs): Locust's Ctrl-C
quits at once. A master's ``quit()`` neither stops the workers nor waits for them, and a
worker's tells the master it quit before its users have stopped: the summary came out with
none of the requests then in flight, while the workers went on finishing them (a ladder's,
up to the request timeout) unreported. The first Ctrl-C now stops the test as its end does
(a master tells the workers to stop and waits for them; a worker stops its users, the drain
guard above takes SIGINT, and it sends its stop report), then quits. A master's second
Ctrl-C quits now, with what the workers have reported (``give_up``): a worker that is stopping
handles no message until its users have stopped, so the master cannot cut remote workers
short. Under ``--processes`` one Ctrl-C reaches the master and every worker, so the second
also cuts the workers' requests (counted as interrupted), and the master's quit, which waits
half a second for their last reports, summarises them.
"""

from __future__ import annotations

import logging
import signal
from collections.abc import Callable, Iterable
from typing import Any, Protocol

import gevent

__all__ = ["DrainGuard", "RunInterrupt"]

log = logging.getLogger("llmload")


class _Stoppable(Protocol):
    def stop(self, force: bool = False) -> bool: ...


class _Sigint:
    """SIGINT and SIGTERM taken for a while: ``take`` installs a handler and keeps the ones before, ``give_back``
    restores them.

    Locust's own SIGTERM handler is gevent's (installed below Python's :mod:`signal`, which reads it as the
    default, ``SIG_DFL``): ``own_sigterm`` takes SIGTERM all the same (the run interrupt: for the length of a
    headless run, whose end quits anyway); else SIGTERM is taken only from a Python handler (the drain guard: the
    run interrupt's), so that a web UI process keeps Locust's.
    """

    def __init__(self, signals: Any, own_sigterm: bool = False) -> None:
        self._signals = signals
        self._own_sigterm = own_sigterm
        self._previous: dict[int, Any] = {}  # signal -> the handler before ours; empty: ours is not installed

    @property
    def taken(self) -> bool:
        return bool(self._previous)

    def take(self, handler: Callable[[int, Any], None]) -> None:
        if self._previous:
            return
        s = self._signals
        signums = [s.SIGINT]
        if self._own_sigterm or callable(s.getsignal(s.SIGTERM)):
            signums.append(s.SIGTERM)
        try:
            for signum in signums:
                self._previous[signum] = s.signal(signum, handler)
        except ValueError:  # not the main thread: Locust's handling stays
            self.give_back()

    def give_back(self) -> dict[int, Any]:
        """The handlers before ours are back (and returned by signal; empty when ours were not installed)."""
        previous, self._previous = self._previous, {}
        for signum, handler in previous.items():
            self._signals.signal(signum, handler if handler is not None else self._signals.SIG_DFL)
        return previous


class DrainGuard:
    """``users``: the process's running users; ``in_flight``: requests in flight now; ``stop_timeout``:
    Locust's stop timeout (s, 0 or None: no wait); ``signals``: the :mod:`signal` module (a fake in tests)."""

    def __init__(
        self,
        users: Callable[[], Iterable[_Stoppable]],
        in_flight: Callable[[], int],
        stop_timeout: Callable[[], float | None],
        signals: Any = signal,
    ) -> None:
        self._users = users
        self._in_flight = in_flight
        self._stop_timeout = stop_timeout
        self._sigint = _Sigint(signals)

    def begin(self) -> None:
        """A stop begins (``test_stopping``): with requests in flight and a stop timeout, say so and take SIGINT."""
        timeout, n = self._stop_timeout() or 0, self._in_flight()
        if timeout <= 0 or n <= 0 or self._sigint.taken:
            return
        log.warning(
            "llmload: waiting up to %s for %d request%s in flight to finish (the stop timeout); "
            "Ctrl-C stops %s now (counted as interrupted) and the summary follows",
            _seconds(timeout), n, "" if n == 1 else "s", "it" if n == 1 else "them",
        )  # fmt: skip
        self._sigint.take(self._on_sigint)

    def end(self) -> None:
        """The wait is over (``test_stop``, quitting): SIGINT's handler before ours is back."""
        self._sigint.give_back()

    def _on_sigint(self, signum: int, frame: Any) -> None:
        self._sigint.give_back()
        gevent.spawn(self._stop_users, _name(signum))  # not in the signal handler: stopping a user switches greenlets

    def _stop_users(self, name: str = "Ctrl-C") -> None:
        users = list(self._users())
        log.warning("llmload: %s: stopping %d user%s now; requests in flight count as interrupted",
                    name, len(users), "" if len(users) == 1 else "s")  # fmt: skip
        for user in users:
            user.stop(force=True)


class RunInterrupt:
    """A Ctrl-C or SIGTERM during a headless test (one process or a master) or on a worker: see the module docstring.

    ``end_test``: ends the test as its end does, then quits; ``give_up``: what a second signal does (None: the
    handler before ours; Locust's SIGTERM handler, out of Python's reach, as its Ctrl-C: a shutdown);
    ``stop_timeout``: Locust's stop timeout (s), for what the first signal says.
    """

    def __init__(
        self,
        end_test: Callable[[], None],
        give_up: Callable[[], None] | None = None,
        stop_timeout: Callable[[], float | None] = lambda: None,
        signals: Any = signal,
    ) -> None:
        self._end_test, self._give_up, self._stop_timeout = end_test, give_up, stop_timeout
        self._signals = signals
        self._sigint = _Sigint(signals, own_sigterm=True)
        self.presses = 0

    def arm(self) -> None:
        """A test starts (``test_start``): the next Ctrl-C or SIGTERM is ours."""
        if self._sigint.taken:
            return
        self.presses = 0
        self._sigint.take(self._on_sigint)

    def disarm(self) -> None:
        """The test is over (quitting): the handlers before ours are back."""
        self._sigint.give_back()

    def _on_sigint(self, signum: int, frame: Any) -> None:
        self.presses += 1
        name = _name(signum)
        if self.presses == 1:
            timeout = self._stop_timeout() or 0
            if timeout > 0:
                log.warning("llmload: %s: stopping the test; requests in flight finish within the stop timeout (%s) "
                            "and count (%s again: stop them now)", name, _seconds(timeout), name)  # fmt: skip
            else:
                log.warning("llmload: %s: stopping the test; requests in flight stop now and count as interrupted "
                            "(--stop-timeout lets them finish)", name)  # fmt: skip
            gevent.spawn(self._end_test)  # not in the signal handler: it switches greenlets
            return
        previous = self._sigint.give_back().get(signum)  # any further signal is Locust's
        if self._give_up is not None:
            gevent.spawn(self._give_up)
        elif callable(previous):
            previous(signum, frame)  # this one too
        else:
            self._signals.default_int_handler(signum, frame)  # Locust's SIGTERM: a shutdown, as its Ctrl-C


def _name(signum: int) -> str:
    return "Ctrl-C" if signum == signal.SIGINT else signal.Signals(signum).name


def _seconds(s: float) -> str:
    return f"{s:g} s" if s < 120 else f"{s / 60:g} min"
