"""The open-loop dispatcher: one greenlet per load process that releases arrivals on time.

Users of an open-loop run do not decide when to send. Each takes the next
:class:`Ticket` (:meth:`Dispatcher.take`, blocking) and sends the request it names; the
dispatcher puts tickets into an unbounded queue at their intended times. The number of
users (``-u``) is therefore the cap on requests in flight: an arrival that finds every
user busy waits in the queue, and that wait is part of what the request's user saw —
latencies of open-loop requests run from :attr:`Ticket.intended_ns`.

Two delays are kept apart:

* **schedule lag** (``dispatched - intended``): the dispatcher itself woke late (a busy
  event loop, a slow timer). It says how well the *client* kept the schedule;
* **client wait** (``sent - intended``, measured by the user): lag plus the time the
  ticket spent queued for a free user. It says how far the offered load exceeded the cap.

Per arrival the dispatcher does one mix step, one time change and one queue put
(about 3 µs); nothing happens per token. The clock and the sleep are injectable, so the
tests run on a virtual clock.

**A given schedule** (``times``, a trace replay): instead of drawing unit-rate arrivals
from the seed, the dispatcher releases the given non-decreasing times (seconds from the
start, at a plan of rate 1 they are wall seconds); ticket ``index`` is the position in that
sequence, which the caller maps to what to send. A finite schedule ends:
:attr:`Dispatcher.exhausted` is then true and the loop returns.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from time import perf_counter_ns

import gevent
from gevent.event import Event
from gevent.queue import Queue

from llmload.arrivals.process import ArrivalSpec, RatePlan, unit_arrivals
from llmload.metrics.arrival import ArrivalStats
from llmload.workload.mix import Mix

__all__ = ["ArrivalStats", "Dispatcher", "Ticket"]

_NS = 1_000_000_000


@dataclass(slots=True)
class Ticket:
    """One arrival: which class to send, and when it was meant to be sent."""

    index: int  #: position in the run's global arrival sequence
    class_index: int  #: index of the request class in the profile
    intended_ns: int  #: ``perf_counter_ns()`` time the request should have been sent
    lag_ns: int  #: how late the dispatcher released it (schedule lag)
    waited: bool  #: no user was free when it was released (it queued)


class Dispatcher:
    """Releases this process's share of the run's arrivals (see :mod:`llmload.arrivals.process`).

    ``weights`` are the profile's class weights (the global mix); ``worker``/``workers``
    pick this process's stride of the global sequence. :meth:`start` begins the schedule
    at ``t0_ns`` (a ``perf_counter_ns()`` time, possibly in the future); times of the
    rate plan are seconds from there. ``times``: a given schedule instead of the drawn
    process (see the module docstring).
    """

    def __init__(
        self,
        spec: ArrivalSpec,
        seed: int,
        plan: RatePlan,
        weights: Sequence[float],
        worker: int = 0,
        workers: int = 1,
        clock: Callable[[], int] = perf_counter_ns,
        wait: Callable[[Event, float], object] | None = None,
        times: Iterable[float] | None = None,
    ) -> None:
        if workers < 1 or not 0 <= worker < workers:
            raise ValueError(f"worker index {worker} out of range for {workers} workers")
        self.spec = spec
        self.plan = plan
        self.stats = ArrivalStats()
        self._units: Iterator[float] = iter(times) if times is not None else unit_arrivals(spec, seed)
        self.exhausted = False  # a given schedule has released its last arrival
        self._mix = Mix(weights)
        self._worker, self._workers = worker, workers
        self._clock = clock
        self._wait = wait or (lambda event, seconds: event.wait(seconds))
        self._queue: Queue = Queue()
        self._changed = Event()
        self._idle = 0  # users blocked in take(), i.e. free to send now
        self._t0_ns = 0
        self._next: tuple[int, int, float] | None = None  # (index, class, unit time) not yet released
        self._index = 0
        self._greenlet: gevent.Greenlet | None = None

    # -- control ---------------------------------------------------------------------
    def start(self, t0_ns: int | None = None) -> None:
        self._t0_ns = self._clock() if t0_ns is None else t0_ns
        self._greenlet = gevent.spawn(self.run)

    def stop(self) -> None:
        """Stop releasing; tickets already queued stay for :attr:`pending`."""
        g, self._greenlet = self._greenlet, None
        if g is not None:
            g.kill(block=False)

    def set_rate(self, rate: float, at_s: float | None = None) -> None:
        """Change the offered rate from ``at_s`` seconds after the start (default: now)."""
        if at_s is None:
            at_s = max((self._clock() - self._t0_ns) / _NS, 0.0)
        self.plan.set_rate(rate, at_s)
        self._changed.set()  # the sleeping loop recomputes the next arrival's time

    def drain_stats(self) -> ArrivalStats:
        """The statistics since the last call (a report's delta); the dispatcher starts a fresh set."""
        stats, self.stats = self.stats, ArrivalStats()
        return stats

    @property
    def running(self) -> bool:
        return self._greenlet is not None

    @property
    def pending(self) -> int:
        """Tickets released but not yet taken by a user (arrivals waiting for a free slot)."""
        return self._queue.qsize()

    # -- used by users -----------------------------------------------------------------
    def take(self) -> Ticket:
        """The next ticket for a free user (blocks until one is due)."""
        self._idle += 1
        try:
            return self._queue.get()
        finally:
            self._idle -= 1

    # -- the schedule ------------------------------------------------------------------
    def _advance(self) -> tuple[int, int, float] | None:
        """The next arrival of this process's stride: (global index, class index, unit time); None at the end."""
        mix_next, workers, worker = self._mix.next, self._workers, self._worker
        while True:
            i = self._index
            u = next(self._units, None)
            if u is None:
                return None
            cls = mix_next()  # every global arrival steps the mix, so the merged mix is exact
            self._index = i + 1
            if i % workers == worker:
                return i, cls, u

    def run(self) -> None:
        """The dispatcher loop (its own greenlet after :meth:`start`)."""
        clock, wait, changed = self._clock, self._wait, self._changed
        while True:
            if self._next is None:
                self._next = self._advance()
                if self._next is None:  # a given schedule is over
                    self.exhausted = True
                    return
            index, cls, u = self._next
            t = self.plan.time_of(u)
            now = clock()
            if t is None:  # rate 0 from here on: wait for a change
                changed.clear()
                wait(changed, None)
                continue
            due = self._t0_ns + int(t * _NS)
            if due > now:
                changed.clear()
                wait(changed, (due - now) / _NS)
                continue  # woken by the timer or by a rate change: recompute and check
            self._next = None
            waited = self._idle <= self._queue.qsize()
            stats = self.stats
            stats.arrivals += 1
            stats.waited += waited
            stats.lag.record((now - due) / _NS)
            self._queue.put(Ticket(index, cls, due, now - due, waited))
