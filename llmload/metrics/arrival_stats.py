"""What an open-loop dispatcher did, as mergeable statistics: :class:`ArrivalStats`.

Kept in :mod:`llmload.metrics` (not beside the dispatcher) so that the aggregator merges it
like every other counter and histogram without depending on the dispatcher: counts merge by
addition, the longest wait of the arrivals never sent by taking the maximum, the schedule-lag
:class:`~llmload.metrics.histogram.Histogram` by adding buckets, and the wire form is a dict of
primitives that travels in a worker's report (key ``"a"``).

An arrival is *due* when its intended time has come (``arrivals``), *sent* when a user took
it and started its request (``sent``); the difference at the end of a run is ``unsent``: the
arrivals still waiting in the client for a free user (or never queued, beyond
:data:`~llmload.arrivals.dispatcher.MAX_PENDING`), in no request count and no latency.
"""

from __future__ import annotations

from typing import Any

from llmload.metrics.histogram import Histogram

__all__ = ["HELD_BACK_SHARE", "QUEUE_JITTER_S", "SCHEDULE_LAG_P99_BOUND_S", "ArrivalStats"]

#: The client self-check's bound on the dispatcher's own lateness: a run whose schedule lag p99
#: exceeds it did not send on the schedule it claims (a busy event loop, too few CPU cores for
#: the rate), and is flagged (``arrival.scheduler_behind``, a warning). ``benchmarks/arrival_precision.py``
#: measures ~0.1 ms p99 at 200 req/s in one process: 10 ms is two orders of magnitude of room.
SCHEDULE_LAG_P99_BOUND_S = 0.010
#: The summary warns that the ``-u`` cap held arrivals back when more than this share of them
#: found every user busy and waited in the client (``waited``), or were never sent (``unsent``).
HELD_BACK_SHARE = 0.01
#: An arrival released while every user was busy counts as ``waited`` only when it stayed queued
#: longer than this: a shorter wait is the event loop's jitter (a user that was just starting, the
#: first arrival of a run, due before the first user had spawned: ~1-2 ms), not the ``-u`` cap. The
#: same bound as the dispatcher's own lateness.
QUEUE_JITTER_S = SCHEDULE_LAG_P99_BOUND_S


class ArrivalStats:
    """Arrivals due, those sent (a user took them), those that waited for a free user beyond
    :data:`QUEUE_JITTER_S`, the longest wait of those never sent, and the dispatcher's lateness."""

    __slots__ = ("arrivals", "lag", "sent", "unsent_wait", "waited")

    def __init__(self) -> None:
        self.arrivals = 0  # due (released to the queue, or beyond its bound counted without a ticket)
        self.sent = 0  # taken by a user: its request started
        self.waited = 0  # of the sent, released while every user was busy and queued > QUEUE_JITTER_S
        self.unsent_wait = 0.0  # at the end: the longest client wait (s) among the arrivals still unsent
        self.lag = Histogram()  # schedule lag (dispatched - intended), seconds

    @property
    def unsent(self) -> int:
        """Due but not sent (at the end of a run: never sent; during it: also those queued now)."""
        return max(self.arrivals - self.sent, 0)

    def merge(self, other: ArrivalStats) -> None:
        self.arrivals += other.arrivals
        self.sent += other.sent
        self.waited += other.waited
        self.unsent_wait = max(self.unsent_wait, other.unsent_wait)
        self.lag.merge(other.lag)

    def copy(self) -> ArrivalStats:
        out = ArrivalStats()
        out.merge(self)
        return out

    @property
    def empty(self) -> bool:
        return self.arrivals == 0 and self.sent == 0

    def to_wire(self) -> dict[str, Any]:
        return {"n": self.arrivals, "s": self.sent, "w": self.waited, "uw": self.unsent_wait, "lag": self.lag.to_wire()}

    @classmethod
    def from_wire(cls, wire: dict[str, Any] | None) -> ArrivalStats:
        out = cls()
        if wire:
            out.arrivals = int(wire.get("n", 0))
            out.sent = int(wire.get("s", 0))
            out.waited = int(wire.get("w", 0))
            out.unsent_wait = float(wire.get("uw", 0.0))
            if wire.get("lag"):
                out.lag = Histogram.from_wire(wire["lag"])
        return out
