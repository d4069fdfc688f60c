"""What an open-loop dispatcher did, as mergeable statistics: :class:`ArrivalStats`.

Kept in :mod:`llmload.metrics` (not beside the dispatcher) so that the aggregator merges it
like every other counter and histogram without depending on the dispatcher: counts merge by
addition, the schedule-lag :class:`~llmload.metrics.histogram.Histogram` by adding buckets, and
the wire form is a dict of primitives that travels in a worker's report (key ``"a"``).
"""

from __future__ import annotations

from typing import Any

from llmload.metrics.histogram import Histogram

__all__ = ["HELD_BACK_SHARE", "SCHEDULE_LAG_P99_BOUND_S", "ArrivalStats"]

#: The client self-check's bound on the dispatcher's own lateness: a run whose schedule lag p99
#: exceeds it did not send on the schedule it claims (a busy event loop, too few CPU cores for
#: the rate), and is flagged (``arrival.scheduler_behind``, a warning). ``benchmarks/arrival_precision.py``
#: measures ~0.1 ms p99 at 200 req/s in one process: 10 ms is two orders of magnitude of room.
SCHEDULE_LAG_P99_BOUND_S = 0.010
#: The summary warns that the ``-u`` cap held arrivals back when more than this share of them
#: found every user busy (and queued in the client).
HELD_BACK_SHARE = 0.01


class ArrivalStats:
    """Arrivals released, those that found no free user (they queued), and the dispatcher's lateness."""

    __slots__ = ("arrivals", "lag", "waited")

    def __init__(self) -> None:
        self.arrivals = 0
        self.waited = 0
        self.lag = Histogram()  # schedule lag (dispatched - intended), seconds

    def merge(self, other: ArrivalStats) -> None:
        self.arrivals += other.arrivals
        self.waited += other.waited
        self.lag.merge(other.lag)

    def copy(self) -> ArrivalStats:
        out = ArrivalStats()
        out.merge(self)
        return out

    @property
    def empty(self) -> bool:
        return self.arrivals == 0

    def to_wire(self) -> dict[str, Any]:
        return {"n": self.arrivals, "w": self.waited, "lag": self.lag.to_wire()}

    @classmethod
    def from_wire(cls, wire: dict[str, Any] | None) -> ArrivalStats:
        out = cls()
        if wire:
            out.arrivals = int(wire.get("n", 0))
            out.waited = int(wire.get("w", 0))
            if wire.get("lag"):
                out.lag = Histogram.from_wire(wire["lag"])
        return out
