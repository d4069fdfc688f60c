"""Where each request's time went: phase histograms and the TTFT tail attribution, mergeable.

:class:`PhaseStats` is a part of one request class's statistics (:mod:`llmload.metrics.parts`)
and takes successful requests only:

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

Wire form (msgpack/JSON safe, :class:`PhasesWire`): ``{"h": {phase: HistogramWire}, "t": timed,
"b": [[bucket, n, s_gateway, s_queue, s_prefill, s_other], ...]}``.

Its figures (:class:`Phases`, summary key ``phases``): one :class:`~llmload.metrics.latency.Latency`
per phase, ``timed`` and its ``coverage`` of the successful requests, and per TTFT percentile of
:data:`TAIL_QUANTILES` a :class:`TailShare`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypedDict

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
from llmload.metrics.histogram import Histogram, HistogramWire, bucket_index, bucket_value
from llmload.metrics.latency import Latency, num, rnd
from llmload.metrics.parts.contract import Context, Exported, Json, Seen
from llmload.metrics.record import RequestRecord

__all__ = ["TAIL_QUANTILES", "PhaseStats", "Phases", "PhasesWire", "TailShare"]

#: TTFT percentiles whose tail the phase attribution explains: name → quantile.
TAIL_QUANTILES = {"p90": 0.9, "p99": 0.99}

_PHASE_FUNCS = (
    ("client_wait", client_wait_s),
    ("gateway", gateway_s),
    ("server_queue", server_queue_s),
    ("prefill", prefill_s),
    ("decode", decode_s),
)
_WIDTH = 1 + len(TAIL_PARTS)


class PhasesWire(TypedDict, total=False):
    h: dict[str, HistogramWire]
    t: int
    b: list[list[float]]


@dataclass(frozen=True, slots=True)
class TailShare:
    """The requests at or above a TTFT percentile (``ttft_ms``): how many had server timing, and
    the mean share of TTFT each part took (``gateway``, ``server_queue``, ``prefill``, ``other``)."""

    ttft_ms: float | None = None
    requests: int = 0
    shares: Mapping[str, float | None] = field(default_factory=lambda: dict.fromkeys(TAIL_PARTS))

    def ranked(self) -> list[tuple[str, float]]:
        """Parts by share, largest first (parts without a share left out)."""
        return sorted(((k, v) for k, v in self.shares.items() if v is not None), key=lambda kv: -kv[1])


def _empty_tails() -> dict[str, TailShare]:
    return {q: TailShare() for q in TAIL_QUANTILES}


def _empty_phases() -> dict[str, Latency]:
    return {p: Latency() for p in PHASES}


@dataclass(frozen=True, slots=True)
class Phases:
    """Where successful requests' time went.

    ``latency``: one :class:`Latency` per phase (``client_wait``, ``gateway``,
    ``server_queue``, ``prefill``, ``decode``; empty when no request had it);
    ``timed``: requests with the server's own timing, ``coverage`` their share of the
    successful ones; ``tail``: ``{"p90", "p99"}`` → :class:`TailShare`.
    """

    key: ClassVar[str] = "phases"
    timed: int = 0
    coverage: float | None = None
    latency: Mapping[str, Latency] = field(default_factory=_empty_phases)
    tail: Mapping[str, TailShare] = field(default_factory=_empty_tails)

    def lat(self, phase: str) -> Latency:
        return self.latency.get(phase) or Latency()

    def to_dict(self) -> dict[str, Json]:
        """``{"phases": PHASES}``: per-phase latencies (ms), coverage, and the TTFT tail attribution."""
        out: dict[str, Json] = {"timed_requests": self.timed, "coverage": rnd(self.coverage, 4)}
        for name, lat in self.latency.items():
            out[f"{name}_ms"] = lat.to_dict()
        out["tail"] = {
            q: {"ttft_ms": rnd(t.ttft_ms), "requests": t.requests, "shares": {k: rnd(v, 4) for k, v in t.shares.items()}}
            for q, t in self.tail.items()
        }
        return {"phases": out}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Phases:
        """The PHASES block of a STATS block (empty Phases for an older summary without one)."""
        p = d.get("phases")
        if not p:
            return cls()
        tail = {}
        for q, t in (p.get("tail") or {}).items():
            t = t or {}
            shares = t.get("shares") or {}
            tail[str(q)] = TailShare(num(t.get("ttft_ms")), int(t.get("requests") or 0),
                                     {k: num(shares.get(k)) for k in TAIL_PARTS})  # fmt: skip
        return cls(int(p.get("timed_requests") or 0), num(p.get("coverage")),
                   {ph: Latency.from_dict(p.get(f"{ph}_ms")) for ph in PHASES}, tail or _empty_tails())  # fmt: skip

    def console_lines(self, users_max: int) -> list[str]:
        return []  # the console's "where the time went" line (report/console.py)


class PhaseStats:
    """Phase histograms, server-timing count and per-TTFT-bucket share sums of one class."""

    __slots__ = ("buckets", "hist", "timed")
    key: ClassVar[str] = "phases"
    order: ClassVar[int] = 40
    figures: ClassVar[type[Phases]] = Phases
    exported: ClassVar[tuple[Exported, ...]] = ()  # a histogram family of its own (exporter/collector.py)

    def __init__(self) -> None:
        self.hist: dict[str, Histogram] = {p: Histogram() for p in PHASES}
        self.timed = 0
        self.buckets: dict[int, list[float]] = {}  # TTFT bucket → [n, share sums per TAIL_PARTS]

    def add(self, rec: RequestRecord, seen: Seen) -> None:
        """One finished request (successful ones only count; ``seen.ttft``: its TTFT in s)."""
        if rec.outcome != "ok":
            return
        ttft = seen.ttft
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

    def to_wire(self) -> PhasesWire:
        return {
            "h": {p: h.to_wire() for p, h in self.hist.items() if h.count},
            "t": self.timed,
            "b": [[b, *row] for b, row in sorted(self.buckets.items())],
        }

    @classmethod
    def from_wire(cls, wire: PhasesWire) -> PhaseStats:
        s = cls()
        for p, hw in wire.get("h", {}).items():
            if p in s.hist:
                s.hist[p] = Histogram.from_wire(hw)
        s.timed = int(wire.get("t", 0))
        for row in wire.get("b", ()):
            s.buckets[int(row[0])] = [float(v) for v in row[1:]]
        return s

    def result(self, ctx: Context) -> Phases:
        """The phases of one class (or all) and the tail attribution of its slowest 10 % / 1 % of timed
        requests (:meth:`tail`: rank-based over the requests it averages, never empty while any was timed)."""
        ttft = ctx.ttft if ctx.ttft is not None else Histogram()
        tail = {}
        for name, q in TAIL_QUANTILES.items():
            got = self.tail(q)
            if got is None:
                # nothing timed: the threshold of every first token, for the reader's orientation
                tail[name] = TailShare(ttft.percentile(q) * 1000.0 if ttft.count else None)
                continue
            threshold, n, shares = got
            if ttft.count:  # a bucket's centre, within the exact range of the first tokens it counts among
                threshold = min(max(threshold, ttft.min), ttft.max)
            tail[name] = TailShare(threshold * 1000.0, n, shares)
        return Phases(
            timed=self.timed,
            coverage=self.timed / ctx.ok if ctx.ok else None,
            latency={ph: Latency.from_histogram(self.hist[ph]) for ph in PHASES},
            tail=tail,
        )


PART = PhaseStats
