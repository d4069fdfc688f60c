"""The run's readings in time order: one column per signal per source, one row per poll.

:class:`Timeline` is what the collector fills (:meth:`Timeline.add` once per poll, with
whatever each source answered) and what the summaries and the stored series are built
from (:mod:`~llmload.collect.report`). Pure: no clock, no I/O.

Times are wall-clock seconds (``time.time()``, to align with client records and other
tools); ``t0`` is the test start, so ``t - t0`` is the time into the test. Every column
has one entry per poll, ``None`` where its source gave nothing (down, or the series
absent). Engine histograms are not stored per poll: a :class:`HistogramTrack` per
endpoint keeps what the run added, and each poll's increment is kept as ``(sum, count)``
for the per-interval mean.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from llmload.collect.engines import EngineReading
from llmload.collect.gpus import GpuReading, combine
from llmload.collect.histogram import BucketHistogram, HistogramTrack
from llmload.collect.signals import server_signal
from llmload.collect.stats import counter_steps

__all__ = ["DeviceTrack", "EndpointTrack", "Timeline"]

Column = list[float | None]


def _put(columns: dict[str, Column], name: str, i: int, value: float | None) -> None:
    col = columns.setdefault(name, [])
    col.extend([None] * (i - len(col)))
    col.append(value)


def _padded(col: Column, n: int) -> Column:
    return col + [None] * (n - len(col)) if len(col) < n else col


@dataclass
class EndpointTrack:
    """One engine endpoint through the run."""

    engine: str | None = None
    gauges: dict[str, Column] = field(default_factory=dict)
    counters: dict[str, Column] = field(default_factory=dict)
    histograms: dict[str, HistogramTrack] = field(default_factory=dict)
    steps: dict[str, list[tuple[float, float] | None]] = field(default_factory=dict)  # per poll (sum, count)

    def add(self, i: int, r: EngineReading) -> None:
        self.engine = self.engine or r.engine
        for name, v in r.gauges.items():
            _put(self.gauges, name, i, v)
        for name, v in r.counters.items():
            _put(self.counters, name, i, v)
        for name, h in r.histograms.items():
            step = self.histograms.setdefault(name, HistogramTrack()).add(h)
            col = self.steps.setdefault(name, [])
            col.extend([None] * (i - len(col)))
            col.append(None if step is None else (step.sum, step.count))


@dataclass
class DeviceTrack:
    """One GPU (or MIG instance) through the run."""

    key: str
    vocabulary: str
    info: dict[str, str]
    values: dict[str, Column] = field(default_factory=dict)
    coarse: set[str] = field(default_factory=set)
    lost_at: float | None = None

    def add(self, i: int, t: float, r: GpuReading) -> None:
        self.info.update(r.info)
        self.coarse |= r.coarse
        for name, v in r.values.items():
            _put(self.values, name, i, v)
        if r.lost and self.lost_at is None:
            self.lost_at = t


class Timeline:
    """Polls of the run: :attr:`t` (wall clock), engine endpoints by URL, GPUs by key."""

    def __init__(self, t0: float) -> None:
        self.t0 = t0
        self.t: list[float] = []
        self.endpoints: dict[str, EndpointTrack] = {}
        self.devices: dict[str, DeviceTrack] = {}

    def __len__(self) -> int:
        return len(self.t)

    def add(self, t: float, engines: dict[str, EngineReading | None], gpus: dict[str, GpuReading]) -> None:
        """One poll at wall time ``t``: each engine endpoint's reading (None: nothing), every GPU read."""
        i = len(self.t)
        self.t.append(t)
        for url, reading in engines.items():
            track = self.endpoints.setdefault(url, EndpointTrack())
            if reading is not None:
                track.add(i, reading)
        for key, reading in gpus.items():
            track = self.devices.get(key)
            if track is None:
                track = self.devices[key] = DeviceTrack(key, reading.vocabulary, dict(reading.info))
            track.add(i, t, reading)

    @property
    def span_s(self) -> float:
        return self.t[-1] - self.t[0] if len(self.t) > 1 else 0.0

    # -- engine signals, all endpoints together ---------------------------------------------
    def gauge(self, name: str, url: str | None = None) -> Column:
        """The gauge at each poll: one endpoint's, or all endpoints' combined by the signal's agg."""
        n = len(self.t)
        cols = [_padded(e.gauges[name], n) for u, e in self.endpoints.items() if name in e.gauges and url in (None, u)]
        mean = server_signal(name).agg == "mean"
        out: Column = []
        for row in zip(*cols, strict=True) if cols else ():
            seen = [v for v in row if v is not None]
            out.append(None if not seen else (sum(seen) / len(seen) if mean else sum(seen)))
        return out or [None] * n

    def counter(self, name: str, url: str | None = None) -> tuple[Column, Column]:
        """(increment, rate per second) at each poll, summed over endpoints."""
        n = len(self.t)
        inc_total: Column = [None] * n
        rate_total: Column = [None] * n
        for u, e in self.endpoints.items():
            if name not in e.counters or url not in (None, u):
                continue
            incs, rates = counter_steps(self.t, _padded(e.counters[name], n))
            for i in range(n):
                if incs[i] is not None:
                    inc_total[i] = (inc_total[i] or 0.0) + incs[i]  # type: ignore[operator]
                if rates[i] is not None:
                    rate_total[i] = (rate_total[i] or 0.0) + rates[i]  # type: ignore[operator]
        return inc_total, rate_total

    def histogram(self, name: str, url: str | None = None) -> BucketHistogram | None:
        """What the run added to histogram ``name``, endpoints with the same buckets added together."""
        out: BucketHistogram | None = None
        for u, e in self.endpoints.items():
            track = e.histograms.get(name)
            if track is None or url not in (None, u):
                continue
            h = track.increase()
            if h is None:
                continue
            out = h if out is None else (out + h if out.compatible(h) else out)
        return out

    def interval_mean(self, name: str, url: str | None = None) -> Column:
        """Mean of the histogram's observations made between each poll and the one before."""
        n = len(self.t)
        sums, counts = [0.0] * n, [0.0] * n
        for u, e in self.endpoints.items():
            if name not in e.steps or url not in (None, u):
                continue
            for i, step in enumerate(e.steps[name]):
                if step is not None:
                    sums[i] += step[0]
                    counts[i] += step[1]
        return [s / c if c > 0 else None for s, c in zip(sums, counts, strict=True)]

    def signals(self, url: str | None = None) -> set[str]:
        """Names of the engine signals any (or one) endpoint gave."""
        out: set[str] = set()
        for u, e in self.endpoints.items():
            if url in (None, u):
                out |= set(e.gauges) | set(e.counters) | set(e.histograms)
        return out

    # -- GPU signals -----------------------------------------------------------------------
    def gpu(self, name: str) -> Column:
        """All GPUs' ``name`` at each poll, combined (:func:`~llmload.collect.gpus.combine`)."""
        n = len(self.t)
        cols = {k: _padded(d.values[name], n) for k, d in self.devices.items() if name in d.values}
        return [combine({k: c[i] for k, c in cols.items() if c[i] is not None}, name) for i in range(n)]
