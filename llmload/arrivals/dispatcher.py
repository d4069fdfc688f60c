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

A ticket counts as *sent* when a user takes it (:attr:`ArrivalStats.sent`), and as *waited*
when it was released while every user was busy and stayed queued longer than
:data:`~llmload.metrics.arrival_stats.QUEUE_JITTER_S` (a shorter wait is the event loop's jitter,
such as the first arrival of a run, due before the first user had spawned). At the end of a
run (:meth:`Dispatcher.settle`, from the final report) the tickets still queued are the
run's *unsent* arrivals: counted (due minus sent) with the longest wait among them, then
dropped.

**Bounded, and never deaf.** When the client cannot keep up (a rate far above what ``-u``
users send, a burst of a trace), due arrivals pile up. The queue holds at most
:data:`MAX_PENDING` tickets; an arrival due while it is full is counted (due, never sent)
without a ticket. While behind, the loop yields to the event loop every
:data:`YIELD_EVERY` arrivals, so the run's end (``-t``), signals and reports still happen.
A rate no process can schedule is refused before any load (:data:`~llmload.arrivals.schedules.MAX_RATE`).

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

import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from time import perf_counter_ns

import gevent
from gevent.event import Event
from gevent.queue import Queue

from llmload.arrivals.schedules import ArrivalSpec, RatePlan, process_rate_warning, unit_arrivals
from llmload.metrics.arrival_stats import QUEUE_JITTER_S, ArrivalStats
from llmload.workload.mix import Mix

__all__ = ["MAX_PENDING", "YIELD_EVERY", "ArrivalStats", "Dispatcher", "Ticket"]

_NS = 1_000_000_000
#: The most tickets one process keeps queued for a free user (~200 bytes each: ~20 MB). Beyond it,
#: due arrivals are counted (due, never sent) without a ticket: a queue that long already means
#: minutes of client wait, and every arrival behind it would be sent later still, or never.
MAX_PENDING = 100_000
#: While behind its schedule, the loop yields to the event loop after this many arrivals in a row.
YIELD_EVERY = 64
#: A due time further than this (s) from the start is never (a rate of ~0, a trace time / a tiny
#: speedup): the loop waits for a rate change instead of computing a time that overflows.
_HORIZON_S = 1e12
_JITTER_NS = int(QUEUE_JITTER_S * _NS)

log = logging.getLogger(__name__)


@dataclass(slots=True)
class Ticket:
    """One arrival: which class to send, and when it was meant to be sent."""

    index: int  #: position in the run's global arrival sequence
    class_index: int  #: index of the request class in the profile
    intended_ns: int  #: ``perf_counter_ns()`` time the request should have been sent
    lag_ns: int  #: how late the dispatcher released it (schedule lag)
    #: released while no user was free; once taken: and it queued longer than QUEUE_JITTER_S
    waited: bool


class Dispatcher:
    """Releases this process's share of the run's arrivals (see :mod:`llmload.arrivals.schedules`).

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
        wait: Callable[[Event, float | None], object] | None = None,
        times: Iterable[float] | None = None,
    ) -> None:
        if workers < 1 or not 0 <= worker < workers:
            raise ValueError(f"worker index {worker} out of range for {workers} workers")
        self.spec = spec
        self.plan = plan
        self.stats = ArrivalStats()
        self._units: Iterator[float] = iter(times) if times is not None else unit_arrivals(spec, seed)
        self._drawn = times is None  # a drawn process at the plan's rate (a given schedule has its own times)
        self._warned = False
        self.exhausted = False  # a given schedule has released its last arrival
        self._mix = Mix(weights)
        self._worker, self._workers = worker, workers
        self._clock = clock
        self._wait = wait or (lambda event, seconds: event.wait(seconds))
        self._queue: Queue = Queue()
        self._first_dropped_ns: int | None = None  # intended time of the first arrival due while the queue was full
        self._changed = Event()
        self._idle = 0  # users blocked in take(), i.e. free to send now
        self._t0_ns = 0
        self._next: tuple[int, int, float] | None = None  # (index, class, unit time) not yet released
        self._index = 0
        self._greenlet: gevent.Greenlet | None = None

    # -- control ---------------------------------------------------------------------
    def start(self, t0_ns: int | None = None) -> None:
        self._t0_ns = self._clock() if t0_ns is None else t0_ns
        self._check_rate()
        self._greenlet = gevent.spawn(self.run)

    def _check_rate(self) -> None:
        """One warning line (once) when this process's share is more than one process keeps on schedule."""
        warning = process_rate_warning(self.plan.rate, self._workers) if self._drawn and not self._warned else None
        if warning:
            self._warned = True
            log.warning("llmload: %s", warning)

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
        self._check_rate()
        self._changed.set()  # the sleeping loop recomputes the next arrival's time

    def settle(self) -> None:
        """The run is over: stop releasing; the tickets still queued will never be sent.

        They stay counted as due and not sent (``unsent``); the longest client wait among them
        (and among the arrivals due while the queue was full) goes into :attr:`stats`, then
        they are dropped, so a second call adds nothing.
        """
        self.stop()
        oldest = [] if self._first_dropped_ns is None else [self._first_dropped_ns]
        if self._queue.qsize():
            oldest.append(self._queue.peek_nowait().intended_ns)
        if oldest:
            self.stats.unsent_wait = max(self.stats.unsent_wait, max(self._clock() - min(oldest), 0) / _NS)
        while self._queue.qsize():
            self._queue.get_nowait()
        self._first_dropped_ns = None

    def drain_stats(self, final: bool = False) -> ArrivalStats:
        """The statistics since the last call (a report's delta); the dispatcher starts a fresh set.

        ``final`` (the run's last report): :meth:`settle` first, so the delta says what stayed unsent."""
        if final:
            self.settle()
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
        """The next ticket for a free user (blocks until one is due); it counts as sent."""
        self._idle += 1
        try:
            ticket: Ticket = self._queue.get()
        finally:
            self._idle -= 1
        stats = self.stats
        stats.sent += 1
        if ticket.waited:  # released while every user was busy: a wait, unless only the loop's jitter
            ticket.waited = self._clock() - ticket.intended_ns - ticket.lag_ns > _JITTER_NS
            stats.waited += ticket.waited
        return ticket

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
        clock, wait, changed, queue = self._clock, self._wait, self._changed, self._queue
        burst = 0  # arrivals released in a row without waiting (behind the schedule)
        while True:
            if self._next is None:
                self._next = self._advance()
                if self._next is None:  # a given schedule is over
                    self.exhausted = True
                    return
            index, cls, u = self._next
            t = self.plan.time_of(u)
            now = clock()
            if t is None or not t < _HORIZON_S:  # rate 0 from here on (or as good as): wait for a change
                changed.clear()
                wait(changed, None)
                continue
            due = self._t0_ns + int(t * _NS)
            if due > now:
                burst = 0
                changed.clear()
                wait(changed, (due - now) / _NS)
                continue  # woken by the timer or by a rate change: recompute and check
            self._next = None
            stats = self.stats
            stats.arrivals += 1
            pending = queue.qsize()
            if pending < MAX_PENDING:
                stats.lag.record((now - due) / _NS)
                queue.put(Ticket(index, cls, due, now - due, self._idle <= pending))
            elif self._first_dropped_ns is None:
                self._first_dropped_ns = due  # due, never sent: its wait runs to the end
            burst += 1
            if burst >= YIELD_EVERY:  # behind: let users, reports, timers and signals run
                burst = 0
                gevent.sleep(0)
