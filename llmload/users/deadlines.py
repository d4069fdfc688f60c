"""Request deadlines enforced by one watchdog per process, at no cost per token.

Three deadlines, each optional (``None`` = off):

* ``ttft``  — no content event within this many seconds of the request start;
* ``stall`` — no new content event within this many seconds of the previous one
  (SSE comments, pings or role-only chunks do not count as progress);
* ``total`` — the whole request took longer than this.

Instead of a timer per request or per token, a single periodic hub timer scans the
requests in flight (the stream loop already appends a timestamp per content event, so
the watchdog reads progress from there) and throws :class:`Deadline` into the greenlet of
a request that is past one of its deadlines — exactly how ``gevent.Timeout`` delivers its
exception, from a hub callback. Resolution is a tenth of the shortest deadline, clamped
to [10 ms, 250 ms]. The scan is O(requests in flight) per tick: about 5 µs per request
per tick, e.g. 2.5 ms of CPU per second at 500 streams and 0.1 s resolution.

A request whose end-of-stream sentinel was already seen is *draining* (reading the
HTTP terminator): it only gets a short drain deadline after which the connection is
dropped without changing the request's outcome.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import gevent

if TYPE_CHECKING:
    from llmload.metrics.record import RequestRecord

__all__ = ["Deadline", "Deadlines", "Flight", "Watchdog"]

DRAIN_S = 1.0


class Deadline(BaseException):  # noqa: N818 - BaseException like gevent.Timeout, so no `except Exception` swallows it
    """Thrown into a request's greenlet; ``kind`` is ttft_timeout | stall_timeout | total_timeout | drain."""

    def __init__(self, kind: str, limit_s: float) -> None:
        super().__init__(kind)
        self.kind = kind
        self.limit_s = limit_s


class Deadlines:
    """The configured limits in seconds (``None`` = no limit)."""

    __slots__ = ("stall", "total", "ttft")

    def __init__(self, ttft: float | None = None, stall: float | None = None, total: float | None = None) -> None:
        self.ttft, self.stall, self.total = ttft, stall, total

    @property
    def any(self) -> bool:
        return self.ttft is not None or self.stall is not None or self.total is not None

    def resolution(self) -> float:
        limits = [x for x in (self.ttft, self.stall, self.total) if x is not None]
        return min(0.25, max(0.01, min(limits) / 10)) if limits else 0.25


class Flight:
    """A request in flight as the watchdog sees it."""

    __slots__ = ("draining", "greenlet", "record")

    def __init__(self, greenlet: gevent.Greenlet, record: RequestRecord) -> None:
        self.greenlet = greenlet
        self.record = record
        self.draining = False


class Watchdog:
    """Tracks requests in flight (also the in-flight gauge) and enforces :class:`Deadlines`.

    ``clock`` is the ``perf_counter_ns`` the stream loop stamps records with (tests shift it
    and call :meth:`tick` themselves instead of waiting for the hub timer).
    """

    def __init__(self, limits: Deadlines, clock: Callable[[], int] = time.perf_counter_ns) -> None:
        self.limits = limits
        self._clock = clock
        self.flights: set[Flight] = set()
        self._timer: Any = None  # the hub loop's timer (gevent, untyped) while flights run
        self.fired = 0

    @property
    def in_flight(self) -> int:
        return len(self.flights)

    def register(self, record: RequestRecord) -> Flight:
        flight = Flight(gevent.getcurrent(), record)
        self.flights.add(flight)
        if self._timer is None:
            self._start()
        return flight

    def unregister(self, flight: Flight) -> None:
        self.flights.discard(flight)

    def _start(self) -> None:
        res = self.limits.resolution()
        self._timer = gevent.get_hub().loop.timer(res, res)
        self._timer.start(self.tick)

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer.close()
            self._timer = None

    def tick(self) -> None:
        """One scan (the hub timer's callback): throw :class:`Deadline` into every late request."""
        if not self.flights:
            return
        now = self._clock()
        lim = self.limits
        for flight in list(self.flights):
            expired = self._expired(flight, now, lim)
            if expired is not None and flight in self.flights:
                self.flights.discard(flight)
                self.fired += 1
                flight.greenlet.throw(Deadline(*expired))

    @staticmethod
    def _expired(flight: Flight, now: int, lim: Deadlines) -> tuple[str, float] | None:
        rec = flight.record
        if rec.start_ns == 0:
            return None
        if flight.draining:
            return ("drain", DRAIN_S) if now - rec.end_ns > DRAIN_S * 1e9 else None
        age = (now - rec.start_ns) * 1e-9
        if lim.total is not None and age > lim.total:
            return ("total_timeout", lim.total)
        chunks = rec.chunk_ns
        if not chunks:
            if lim.ttft is not None and age > lim.ttft:
                return ("ttft_timeout", lim.ttft)
        elif lim.stall is not None and (now - chunks[-1]) * 1e-9 > lim.stall:
            return ("stall_timeout", lim.stall)
        return None
