"""The run's warm-up (``--warmup DURATION``, ``--warmup-requests N``): which requests are not measured, and what they saw.

* :class:`WarmupGate` (one per load process) decides, once per request as it STARTS
  (:meth:`WarmupGate.starts_in_warmup`, never per token), whether the request belongs to the
  warm-up: while less than ``duration_s`` has passed since the test's start (the common start
  of the processes when the master sent one) or while this process has started fewer than its
  share of the ``N`` requests (``N`` split over the processes as the open-loop strides are);
  with both, until both are past. Once over, it stays over. The request's record carries the
  answer (:attr:`~llmload.metrics.record.RequestRecord.warmup`).
* :class:`WarmupStats` (the PhaseStats pattern: record, merge, wire, result) counts the warm-up
  requests apart: requests by outcome, errors by kind with an example, their TTFT histogram,
  and the latest start offset seen (how long the warm-up lasted). The
  :class:`~llmload.metrics.recorder.Recorder` routes a warm-up record here and nowhere else,
  so it is in no statistic, histogram, SLO, threshold or exporter counter of the run.

* :class:`WarmupRecorder` (one per load process) holds the gate, this process's warm-up
  statistics, and the measured requests' TTFT per start-time slice
  (:class:`~llmload.metrics.coldstart.StartSlices`, for the cold-start warning); it drains both
  into each report (``"w"``) as the Recorder drains the rest.

Wire form: ``{"c": ClassStats wire, "t": latest start offset s}``.
"""

from __future__ import annotations

import math
from typing import Any, TypedDict

from llmload.jsonvalue import Json
from llmload.metrics.coldstart import StartSlices, StartSlicesWire, cold_start_warning
from llmload.metrics.definitions import ttft_s
from llmload.metrics.histogram import Histogram
from llmload.metrics.record import RequestRecord
from llmload.metrics.recorder import ClassStats, ClassStatsWire

__all__ = ["RunNotes", "WarmupDrain", "WarmupGate", "WarmupRecorder", "WarmupStats", "WarmupWire", "request_share",
           "warmup_into", "warmup_summary"]


class RunNotes(TypedDict, total=False):
    """What the end of a run adds to the load generator's state: warnings, and blocks of the summary's ``extra``
    (:func:`warmup_into`, :func:`~llmload.metrics.steady.steady_into`)."""

    warnings: tuple[str, ...]
    extra: dict[str, Json]


class WarmupWire(TypedDict):
    """:meth:`WarmupStats.to_wire`: the warm-up's class statistics and its last request's start (s)."""

    c: ClassStatsWire
    t: float


class WarmupDrain(TypedDict, total=False):
    """:meth:`WarmupRecorder.drain`: what changed since the last report (each part only when not empty)."""

    w: WarmupWire
    s: StartSlicesWire


def request_share(requests: int, worker: int, workers: int) -> int:
    """Process ``worker`` of ``workers``'s share of the first ``requests``: the shares add up to ``requests``."""
    workers = max(workers, 1)
    return requests // workers + (1 if worker < requests % workers else 0)


class WarmupGate:
    """Per process: is a request starting now in the warm-up? (see the module docstring)."""

    __slots__ = ("_left", "_on", "_origin_ns", "_until_ns")

    def __init__(self) -> None:
        self._on = False
        self._origin_ns = 0
        self._until_ns = 0
        self._left = 0

    def start(self, origin_ns: int, duration_s: float, requests: int) -> None:
        """A test starts at ``origin_ns`` (``perf_counter_ns``): warm up for ``duration_s`` and this process's ``requests``."""
        self._origin_ns = origin_ns
        self._until_ns = origin_ns + int(duration_s * 1e9) if duration_s > 0 else -1  # no duration: no time condition
        self._left = max(requests, 0)
        self._on = duration_s > 0 or requests > 0

    @property
    def origin_ns(self) -> int:
        return self._origin_ns

    def starts_in_warmup(self, now_ns: int) -> bool:
        """Called once as each request starts (it counts the request)."""
        if not self._on:
            return False
        if self._left > 0:
            self._left -= 1
            return True
        if now_ns < self._until_ns:
            return True
        self._on = False  # over for the rest of the test
        return False


class WarmupStats:
    """The warm-up requests of a run, apart from the measured ones (see the module docstring)."""

    __slots__ = ("last_start_s", "stats")

    def __init__(self) -> None:
        self.stats = ClassStats()
        self.last_start_s = 0.0

    def add(self, rec: RequestRecord, start_s: float) -> None:
        """A warm-up request, which started ``start_s`` after the test's start."""
        self.stats.add(rec)
        if start_s > self.last_start_s:
            self.last_start_s = start_s

    def merge(self, other: WarmupStats) -> None:
        self.stats.merge(other.stats)
        self.last_start_s = max(self.last_start_s, other.last_start_s)

    @property
    def empty(self) -> bool:
        return self.stats.empty

    def to_wire(self) -> WarmupWire:
        return {"c": self.stats.to_wire(), "t": self.last_start_s}

    @classmethod
    def from_wire(cls, wire: WarmupWire) -> WarmupStats:
        s = cls()
        s.stats = ClassStats.from_wire(wire.get("c") or {})
        s.last_start_s = float(wire.get("t", 0.0))
        return s

    def result(self, duration_s: float, measured_ttft: tuple[float | None, float | None]) -> dict[str, Json]:
        """The summary's ``warmup`` block: ``duration_s`` how long the warm-up lasted (the run's clock), the
        measured part's TTFT (p50, p99) in s beside the warm-up's."""
        c = self.stats.counters
        h = self.stats.hist["ttft"]
        p50, p99 = h.percentiles((0.5, 0.99)) if h.count else (None, None)
        return {
            "requests": c["requests"],
            "ok": c["ok"],
            "errors": c["errors"],
            "interrupted": c["interrupted"],
            "duration_s": round(duration_s, 3),
            "errors_by_kind": dict(self.stats.errors_by_kind),
            "errors_examples": dict(self.stats.errors_examples),
            "ttft_p50_ms": _ms(p50),
            "ttft_p99_ms": _ms(p99),
            "measured_ttft_p50_ms": _ms(measured_ttft[0]),
            "measured_ttft_p99_ms": _ms(measured_ttft[1]),
        }


class WarmupRecorder:
    """Per process: the gate, the warm-up's statistics and the measured TTFTs by start slice, drained per report."""

    def __init__(self) -> None:
        self.gate = WarmupGate()
        self._stats = WarmupStats()
        self._slices = StartSlices()

    def start(self, origin_ns: int, duration_s: float, requests: int) -> None:
        """A test starts (see :meth:`WarmupGate.start`); what the last test left undrained is dropped."""
        self.gate.start(origin_ns, duration_s, requests)
        self._stats, self._slices = WarmupStats(), StartSlices()

    def add(self, rec: RequestRecord) -> bool:
        """A finished request; True when it was a warm-up request (then it belongs nowhere else)."""
        start_s = (rec.start_ns - self.gate.origin_ns) / 1e9 if rec.start_ns else 0.0
        if rec.warmup:
            self._stats.add(rec, start_s)
            return True
        if rec.outcome != "error":  # the TTFTs the run's histogram holds (ok, and cut after a first token)
            ttft = ttft_s(rec)
            if ttft is not None:
                self._slices.add(start_s, ttft)
        return False

    def drain(self) -> WarmupDrain | None:
        """``{"w": WarmupStats wire?, "s": StartSlices wire?}`` since the last drain; None when nothing."""
        stats, slices = self._stats, self._slices
        self._stats, self._slices = WarmupStats(), StartSlices()
        out: WarmupDrain = {}
        if not stats.empty:
            out["w"] = stats.to_wire()
        if not slices.empty:
            out["s"] = slices.to_wire()
        return out or None


def warmup_summary(
    warmup: WarmupStats,
    starts: StartSlices,
    measured_ttft: Histogram,
    *,
    duration_s: float,
    requests: int,
    total_s: float,
) -> tuple[dict[str, Json] | None, str | None, float]:
    """At the end of a run (every report merged): (the summary's ``warmup`` block, None without warm-up; the
    cold-start warning of a run without warm-up, or None; how long the warm-up lasted in s, which the
    measured part's duration leaves out).

    ``duration_s``/``requests``: ``--warmup``/``--warmup-requests``; ``total_s``: the test's time.
    """
    if not (duration_s > 0 or requests > 0):
        return None, cold_start_warning(starts), 0.0
    lasted = min(max(duration_s, warmup.last_start_s), total_s) if total_s > 0 else 0.0
    p50, p99 = measured_ttft.percentiles((0.5, 0.99)) if measured_ttft.count else (None, None)
    return warmup.result(lasted, (p50, p99)), None, lasted


def warmup_into(load: RunNotes, snap: Any, warmup: Any, total_s: float) -> float:
    """The coordinator's end of run: the ``warmup`` block (``load["extra"]``) or the cold-start warning
    (``load["warnings"]``) from ``snap`` (an aggregator Snapshot) and ``warmup`` (a WarmupConfig); returns how
    long the warm-up lasted (s), which the measured part's duration leaves out."""
    block, cold, lasted = warmup_summary(
        snap.warmup,
        snap.starts,
        snap.run.overall().hist["ttft"],
        duration_s=warmup.duration_s,
        requests=warmup.requests,
        total_s=total_s,
    )
    if cold is not None:
        load["warnings"] = (*load.get("warnings", ()), cold)
    if block is not None:
        load["extra"] = {**load.get("extra", {}), "warmup": block}
    return lasted


def _ms(s: float | None) -> float | None:
    return round(s * 1000, 3) if s is not None and math.isfinite(s) else None
