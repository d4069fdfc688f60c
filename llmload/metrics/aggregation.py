"""Merging what workers report, on the master (or on a standalone process).

Each report is a :class:`ReportWire` dict of primitives that a worker (or, when Locust
runs standalone, the process itself) sends every ``report_to_master`` interval:

``{"m": MetricSet wire delta, "s": {step: MetricSet wire delta}, "g": WorkerGauges as a dict,
"final": bool, "a": ArrivalStats wire delta (open loop only), "w": the warm-up's delta (WarmupRecorder.drain)}``

Every piece is typed (``TypedDict``): a class's statistics travel part by part
(:data:`~llmload.metrics.recorder.ClassStatsWire`, one typed wire per part of
:mod:`llmload.metrics.parts`), the gauges as :class:`WorkerGaugesWire`. Master and workers run
the same llmload version.

:class:`Aggregator` folds them in by addition into four views:

* ``run`` — this test run (reset at each test start): the summary and the web UI;
* ``steps`` — this run's statistics per load step (steady windows only), for the ladder;
* ``total`` — everything since the process started, never reset: the Prometheus
  exporter's counters and histograms, which must never go backwards (a worker leaving or
  a new test started from the web UI changes nothing already counted);
* ``warmup`` / ``starts`` — this run's warm-up requests (:class:`~llmload.metrics.warmup_window.WarmupStats`,
  in no other view) and its measured TTFTs by start slice (:class:`~llmload.metrics.coldstart.StartSlices`);
* ``window`` — the deltas of the last :data:`WINDOW_S` seconds: live percentiles and rates.
  A process's counts are complete up to its last report, so the window's test time ends
  there (the mean of the live processes' last reports of this run), not now: at the start
  of a run, counting to now would make every rate up to one report interval's share low
  (~10 % at 5 s with 1 s reports).

Per-worker gauges (users, requests in flight, CPU, event-loop lag) are kept as last
reported. A worker that stops reporting for :data:`LOST_AFTER_S` seconds (or that Locust
reports missing) is marked lost: what it reported stays counted, its gauges no longer do.
A trace replay ends when every live process says its share is sent and answered
(:meth:`Aggregator.schedules_done`).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypedDict

from llmload.metrics.arrival_stats import ArrivalStats
from llmload.metrics.coldstart import StartSlices
from llmload.metrics.recorder import MetricSet, MetricSetWire
from llmload.metrics.steady import SteadySlices
from llmload.metrics.warmup_window import WarmupStats

__all__ = [
    "CPU_SATURATED",
    "LAG_SATURATED_S",
    "LOST_AFTER_S",
    "SUSTAINED_REPORTS",
    "WINDOW_S",
    "Aggregator",
    "ReportWire",
    "Snapshot",
    "WorkerGauges",
    "WorkerGaugesWire",
    "WorkerState",
]

WINDOW_S = 30.0
LOST_AFTER_S = 15.0
#: A worker above this CPU share (of one core) measures itself, not the server.
CPU_SATURATED = 0.85
#: A gevent loop that wakes this late delays every timestamp taken by that worker.
LAG_SATURATED_S = 0.05
#: A run is flagged as client-bound when a process was saturated in this many reports in a
#: row (a one-off spike, e.g. while hundreds of users spawn, is not a verdict); the live
#: flag (exporter, web UI) is per report.
SUSTAINED_REPORTS = 2


class WorkerGaugesWire(TypedDict, total=False):
    users: int
    in_flight: int
    in_flight_by_class: dict[str, int]
    cpu_ratio: float
    loop_lag_s: float
    schedule_done: bool


@dataclass(slots=True)
class WorkerGauges:
    """Point-in-time state of one load-generating process, sent with every report."""

    users: int = 0
    in_flight: int = 0
    in_flight_by_class: dict[str, int] = field(default_factory=dict)
    cpu_ratio: float = 0.0  # process CPU time / wall time over the last report interval
    loop_lag_s: float = 0.0  # worst gevent loop wake-up delay over the last interval
    schedule_done: bool = False  # a finite arrival schedule (trace) is all sent and answered here

    @property
    def saturated(self) -> bool:
        """Short of CPU or late to wake while it had load; an idle process (no user, nothing in flight) measures
        nothing, e.g. a worker's report from before its test started, whose interval holds its start-up."""
        busy = self.users > 0 or self.in_flight > 0
        return busy and (self.cpu_ratio >= CPU_SATURATED or self.loop_lag_s >= LAG_SATURATED_S)

    def to_wire(self) -> WorkerGaugesWire:
        return {"users": self.users, "in_flight": self.in_flight, "in_flight_by_class": dict(self.in_flight_by_class),
                "cpu_ratio": self.cpu_ratio, "loop_lag_s": self.loop_lag_s, "schedule_done": self.schedule_done}  # fmt: skip

    @classmethod
    def from_wire(cls, wire: WorkerGaugesWire) -> WorkerGauges:
        return cls(
            users=int(wire.get("users", 0)),
            in_flight=int(wire.get("in_flight", 0)),
            in_flight_by_class={str(k): int(v) for k, v in wire.get("in_flight_by_class", {}).items()},
            cpu_ratio=float(wire.get("cpu_ratio", 0.0)),
            loop_lag_s=float(wire.get("loop_lag_s", 0.0)),
            schedule_done=bool(wire.get("schedule_done", False)),
        )


class ReportWire(TypedDict, total=False):
    m: MetricSetWire  # this run's statistics since the last report
    s: dict[str, MetricSetWire]  # str(step index) → that step's statistics since the last report
    g: WorkerGaugesWire
    final: bool  # the process stopped: nothing in flight any more
    a: Mapping[str, Any]  # ArrivalStats.to_wire (open loop only)
    w: Mapping[str, Any]  # WarmupRecorder.drain: {"w": WarmupStats wire?, "s": StartSlices wire?}


@dataclass(slots=True)
class WorkerState:
    worker_id: str
    gauges: WorkerGauges
    last_report: float  # time.monotonic()
    reports: int = 0
    lost: bool = False
    saturated_streak: int = 0  # consecutive saturated reports
    saturated_ever: bool = False  # during this run, for SUSTAINED_REPORTS reports in a row


@dataclass(frozen=True, slots=True)
class Snapshot:
    """An immutable view for readers (exporter, web UI, summary). Copies, safe to keep."""

    run: MetricSet
    total: MetricSet
    window: MetricSet
    steps: dict[int, MetricSet]
    window_s: float  # test time the window covers: rates = window counts / window_s
    workers: tuple[WorkerState, ...]
    users: int
    arrivals: ArrivalStats = field(default_factory=ArrivalStats)  # this run's open-loop arrivals (all processes)
    arrivals_total: ArrivalStats = field(default_factory=ArrivalStats)  # since the process started (exporter)
    window_requests: int = 0  # requests (every outcome) reported in the window: achieved rate = / window_s
    warmup: WarmupStats = field(default_factory=WarmupStats)  # this run's warm-up requests (in no other view)
    starts: StartSlices = field(default_factory=StartSlices)  # this run's measured TTFTs by start slice

    @property
    def live_workers(self) -> tuple[WorkerState, ...]:
        return tuple(w for w in self.workers if not w.lost)

    @property
    def in_flight(self) -> int:
        return sum(w.gauges.in_flight for w in self.live_workers)

    def in_flight_by_class(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for w in self.live_workers:
            for k, v in w.gauges.in_flight_by_class.items():
                out[k] = out.get(k, 0) + v
        return out

    @property
    def client_saturated(self) -> bool:
        return any(w.gauges.saturated for w in self.live_workers)


class Aggregator:
    """Merges worker reports; see the module docstring."""

    def __init__(self, clock=time.monotonic) -> None:
        self._clock = clock
        self.run = MetricSet()
        self.steps: dict[int, MetricSet] = {}
        self.total = MetricSet()
        self._window: deque[tuple[float, MetricSet]] = deque()
        self.workers: dict[str, WorkerState] = {}
        self.users = 0
        self.arrivals = ArrivalStats()
        self.arrivals_total = ArrivalStats()
        self.warmup = WarmupStats()
        self.starts = StartSlices()
        self.steady = SteadySlices()  # per wall second: TTFT/TPOT count and sum, the in-flight total (metrics/steady.py)
        self._wall = time.time
        self._run_started = clock()

    def start_run(self) -> None:
        """A new test: the run view restarts; totals and known workers stay."""
        self.run = MetricSet()
        self.steps = {}
        self.arrivals = ArrivalStats()
        self.warmup, self.starts, self.steady = WarmupStats(), StartSlices(), SteadySlices()
        self._window.clear()
        self._run_started = self._clock()
        for w in self.workers.values():
            w.saturated_ever, w.saturated_streak = False, 0
            w.gauges.schedule_done = False  # the previous test's; each process says it again for this one

    def schedules_done(self) -> bool:
        """Every live process has sent and seen answered all of its finite schedule (a trace replay's end)."""
        live = [w for w in self.workers.values() if not w.lost]
        return bool(live) and all(w.gauges.schedule_done and not w.gauges.in_flight for w in live)

    def merge_report(self, worker_id: str, report: ReportWire) -> None:
        now = self._clock()
        delta = MetricSet.from_wire(report.get("m") or {})
        if not delta.empty:
            self.run.merge(delta)
            self.total.merge(delta)
            self._window.append((now, delta))
        self._trim_window(now)  # also when nobody reads snapshots (headless, no scrapes)
        for key, wire in (report.get("s") or {}).items():
            step = self.steps.get(int(key))
            if step is None:
                step = self.steps[int(key)] = MetricSet()
            step.merge(MetricSet.from_wire(wire))
        if report.get("a"):
            arrivals = ArrivalStats.from_wire(dict(report["a"]))
            self.arrivals.merge(arrivals)
            self.arrivals_total.merge(arrivals)
        warm = report.get("w")
        if warm:
            if warm.get("w"):
                self.warmup.merge(WarmupStats.from_wire(warm["w"]))
            if warm.get("s"):
                self.starts.merge(StartSlices.from_wire(warm["s"]))
        gauges = WorkerGauges.from_wire(report.get("g") or {})
        w = self.workers.get(worker_id)
        if w is None:
            w = self.workers[worker_id] = WorkerState(worker_id, gauges, now)
        w.gauges, w.last_report, w.lost = gauges, now, False
        w.reports += 1
        w.saturated_streak = w.saturated_streak + 1 if gauges.saturated else 0
        w.saturated_ever = w.saturated_ever or w.saturated_streak >= SUSTAINED_REPORTS
        if report.get("final"):
            w.gauges = WorkerGauges()  # it stopped: nothing in flight any more
        self._record_steady(delta)

    def _record_steady(self, delta: MetricSet) -> None:
        """This report's TTFT/TPOT count and sum and the live processes' in-flight total, in this wall second."""
        ov = delta.overall() if not delta.empty else None
        ttft, tpot = (ov.core.hist["ttft"], ov.core.hist["tpot"]) if ov is not None else (None, None)
        in_flight = sum(w.gauges.in_flight for w in self.workers.values() if not w.lost)
        self.steady.add(self._wall(), (ttft.count, ttft.sum) if ttft else (0, 0.0), (tpot.count, tpot.sum) if tpot else (0, 0.0),
                        in_flight)  # fmt: skip

    def mark_lost(self, worker_id: str) -> bool:
        """Locust says the worker is gone. Returns True if it was not already marked."""
        w = self.workers.get(worker_id)
        if w is None or w.lost:
            return False
        w.lost = True
        return True

    def expire(self) -> list[str]:
        """Mark workers silent for too long as lost; returns the newly lost ids."""
        now = self._clock()
        lost = [w.worker_id for w in self.workers.values() if not w.lost and now - w.last_report > LOST_AFTER_S]
        for wid in lost:
            self.workers[wid].lost = True
        return lost

    def _trim_window(self, now: float) -> None:
        while self._window and now - self._window[0][0] > WINDOW_S:
            self._window.popleft()

    def snapshot(self, window: bool = True, run: bool = True) -> Snapshot:
        """Copies of the views; ``window=False``/``run=False`` leave those empty (cheaper)."""
        now = self._clock()
        self._trim_window(now)
        merged = MetricSet()
        if window:
            for _, delta in self._window:
                merged.merge(delta)
        # Deltas that arrived in the last WINDOW_S seconds cover about that much test time: less
        # at the start of a run, where it ends at the reports (module docstring); 0 before any.
        reported = [w.last_report for w in self.workers.values() if not w.lost and w.last_report >= self._run_started]
        span = min(WINDOW_S, sum(reported) / len(reported) - self._run_started) if reported else 0.0
        return Snapshot(
            run=self.run.copy() if run else MetricSet(),
            total=self.total.copy(),
            window=merged,
            steps={i: m.copy() for i, m in self.steps.items()} if run else {},
            window_s=span,
            workers=tuple(WorkerState(**{f: getattr(w, f) for f in w.__slots__}) for w in self.workers.values()),
            users=self.users,
            arrivals=self.arrivals.copy(),
            arrivals_total=self.arrivals_total.copy(),
            window_requests=sum(s.core.counters["requests"] for _, d in self._window for s in d.classes.values()),
            warmup=_copy_warmup(self.warmup) if run else WarmupStats(),
            starts=_copy_starts(self.starts) if run else StartSlices(),
        )


def _copy_warmup(w: WarmupStats) -> WarmupStats:
    out = WarmupStats()
    out.merge(w)
    return out


def _copy_starts(s: StartSlices) -> StartSlices:
    out = StartSlices()
    out.merge(s)
    return out
