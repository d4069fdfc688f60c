"""Where each request's time went: phase histograms and the TTFT tail attribution, mergeable.

:class:`PhaseStats` belongs to one request class (inside
:class:`~llmload.metrics.recorder.ClassStats`) and takes successful requests only:

* one :class:`~llmload.metrics.histogram.Histogram` per phase of
  :data:`~llmload.metrics.definitions.PHASES` (a phase a request lacks is not recorded);
* ``timed``: requests that carried the server's own timing (``coverage = timed / ok``);
* the **tail attribution**: per TTFT bucket (the histograms' shared bucket index), the
  count of timed requests and the sums of their TTFT shares
  (:func:`~llmload.metrics.definitions.tail_parts`). Which requests are "in the tail"
  is only known at the end, after every worker's reports are merged; sums per bucket
  merge by addition, and the tail above a quantile ``q`` is rank-based over the same
  timed requests: the slowest buckets holding at least ``ceil((1 - q) * timed)`` of
  them, their sums divided by their count (:meth:`PhaseStats.tail`). No per-request
  data travels.

Wire form (msgpack/JSON safe): ``{"h": {phase: HistogramWire}, "t": timed,
"b": [[bucket, n, s_gateway, s_queue, s_prefill, s_other], ...]}``.
"""

from __future__ import annotations

import math
from typing import Any

from llmload.metrics.definitions import (
    PHASES,
    TAIL_PARTS,
    client_wait_s,
    decode_s,
    gateway_s,
    prefill_s,
    server_queue_s,
    tail_parts,
)
from llmload.metrics.histogram import Histogram, bucket_index, bucket_value
from llmload.metrics.record import RequestRecord

__all__ = ["PhaseStats"]

_PHASE_FUNCS = (
    ("client_wait", client_wait_s),
    ("gateway", gateway_s),
    ("server_queue", server_queue_s),
    ("prefill", prefill_s),
    ("decode", decode_s),
)
_WIDTH = 1 + len(TAIL_PARTS)


class PhaseStats:
    """Phase histograms, server-timing count and per-TTFT-bucket share sums of one class."""

    __slots__ = ("buckets", "hist", "timed")

    def __init__(self) -> None:
        self.hist: dict[str, Histogram] = {p: Histogram() for p in PHASES}
        self.timed = 0
        self.buckets: dict[int, list[float]] = {}  # TTFT bucket → [n, share sums per TAIL_PARTS]

    def add(self, rec: RequestRecord, ttft: float | None) -> None:
        """One successful request (its TTFT in s, already computed by the caller)."""
        h = self.hist
        for name, f in _PHASE_FUNCS:
            v = f(rec)
            if v is not None:
                h[name].record(v)
        if rec.server_timing is None or ttft is None:
            return
        self.timed += 1
        parts = tail_parts(rec)
        if parts is None:
            return
        b = bucket_index(ttft)
        row = self.buckets.get(b)
        if row is None:
            row = self.buckets[b] = [0.0] * _WIDTH
        row[0] += 1
        for i, share in enumerate(parts, 1):
            row[i] += share

    def merge(self, other: PhaseStats) -> None:
        for p, h in other.hist.items():
            self.hist[p].merge(h)
        self.timed += other.timed
        for b, orow in other.buckets.items():
            row = self.buckets.get(b)
            if row is None:
                self.buckets[b] = list(orow)
            else:
                for i, v in enumerate(orow):
                    row[i] += v

    @property
    def empty(self) -> bool:
        return not self.timed and not any(h.count for h in self.hist.values())

    def tail(self, q: float) -> tuple[float, int, dict[str, float]] | None:
        """The slowest ``1 - q`` of the timed requests: (their TTFT threshold in s, how many,
        mean share per part); None when no request was timed.

        Rank-based over the same population it averages (timed successful requests): the
        buckets are taken from the slowest down until they hold at least ``ceil((1 - q) * n)``
        requests (at least one), so a tail is never empty while timed requests exist. The
        threshold is the TTFT of the fastest bucket taken (its geometric centre), i.e. the
        ``q`` percentile of the timed requests, not of every TTFT (which also holds requests
        that failed or were cut after their first token).
        """
        n_all = sum(row[0] for row in self.buckets.values())
        if not n_all:
            return None
        need = max(1, math.ceil((1.0 - q) * n_all - 1e-9))
        total = [0.0] * _WIDTH
        low = 0
        for b in sorted(self.buckets, reverse=True):
            for i, v in enumerate(self.buckets[b]):
                total[i] += v
            low = b
            if total[0] >= need:
                break
        n = total[0]
        return bucket_value(low), int(n), {part: total[i] / n for i, part in enumerate(TAIL_PARTS, 1)}

    def to_wire(self) -> dict[str, Any]:
        return {
            "h": {p: h.to_wire() for p, h in self.hist.items() if h.count},
            "t": self.timed,
            "b": [[b, *row] for b, row in sorted(self.buckets.items())],
        }

    @classmethod
    def from_wire(cls, wire: dict[str, Any]) -> PhaseStats:
        s = cls()
        for p, hw in wire.get("h", {}).items():
            if p in s.hist:
                s.hist[p] = Histogram.from_wire(hw)
        s.timed = int(wire.get("t", 0))
        for row in wire.get("b", ()):
            s.buckets[int(row[0])] = [float(v) for v in row[1:]]
        return s
