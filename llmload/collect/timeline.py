"""The run's readings in time order: one column per signal per source, one row per poll.

:class:`Timeline` is what the collector fills (:meth:`Timeline.add` once per poll, with
whatever each source answered) and what the summaries and the stored series are built
from (:mod:`~llmload.collect.report`). Pure: no clock, no I/O.

Times are wall-clock seconds (``time.time()``, to align with client records and other
tools); ``t0`` is the test start, so ``t - t0`` is the time into the test. Every column
has one value per poll, missing where its source gave nothing (down, or the series
absent): readers get ``None`` there. Columns are ``array('d')`` with NaN for missing,
8 bytes a value: a day of polls every 2 s of one engine and 8 GPUs holds ~35 MB.
Engine histograms are not stored per poll: a :class:`HistogramTrack` per endpoint keeps
what the run added, and each poll's increment is kept as its sum and count, for the
per-interval mean.
"""

from __future__ import annotations

import math
from array import array
from dataclasses import dataclass, field

from llmload.collect.engines import EngineReading
from llmload.collect.gpus import GpuReading, combine
from llmload.collect.prom_histogram import BucketHistogram, HistogramTrack
from llmload.collect.signal_table import server_signal
from llmload.collect.stats import counter_steps

__all__ = ["Column", "DeviceTrack", "EndpointTrack", "Series", "Timeline"]

Column = list[float | None]
_NAN = math.nan


class Series:
    """One column: a value per poll, NaN where there was none."""

    __slots__ = ("_a",)

    def __init__(self, values: array | None = None) -> None:
        self._a = values if values is not None else array("d")

    def put(self, i: int, value: float | None) -> None:
        """Set poll ``i`` (the polls since the last value set are missing)."""
        a = self._a
        if len(a) < i:
            a.extend([_NAN] * (i - len(a)))
        a.append(_NAN if value is None else value)

    def column(self, n: int | None = None) -> Column:
        """The values as a list of ``n`` polls (padded), ``None`` where missing."""
        out: Column = [None if v != v else v for v in self._a]
        if n is not None and len(out) < n:
            out.extend([None] * (n - len(out)))
        return out

    def any(self) -> bool:
        return any(v == v for v in self._a)

    def at(self, i: int) -> float | None:
        """The value of poll ``i``, None where missing (or not reached)."""
        v = self._a[i] if 0 <= i < len(self._a) else _NAN
        return None if v != v else v


@dataclass
class EndpointTrack:
    """One engine endpoint through the run."""

    engine: str | None = None
    gauges: dict[str, Series] = field(default_factory=dict)
    counters: dict[str, Series] = field(default_factory=dict)
    histograms: dict[str, HistogramTrack] = field(default_factory=dict)
    step_sums: dict[str, Series] = field(default_factory=dict)  # per poll: what the histogram added
    step_counts: dict[str, Series] = field(default_factory=dict)

    def add(self, i: int, r: EngineReading) -> None:
        self.engine = self.engine or r.engine
        for name, v in r.gauges.items():
            self.gauges.setdefault(name, Series()).put(i, v)
        for name, v in r.counters.items():
            self.counters.setdefault(name, Series()).put(i, v)
        for name, h in r.histograms.items():
            step = self.histograms.setdefault(name, HistogramTrack()).add(h)
            self.step_sums.setdefault(name, Series()).put(i, None if step is None else step.sum)
            self.step_counts.setdefault(name, Series()).put(i, None if step is None else step.count)


@dataclass
class DeviceTrack:
    """One GPU (or MIG instance) through the run."""

    key: str
    vocabulary: str
    info: dict[str, str]
    values: dict[str, Series] = field(default_factory=dict)
    coarse: set[str] = field(default_factory=set)
    lost_at: float | None = None

    def add(self, i: int, t: float, r: GpuReading) -> None:
        self.info.update(r.info)
        self.coarse |= r.coarse
        for name, v in r.values.items():
            self.values.setdefault(name, Series()).put(i, v)
        if r.lost and self.lost_at is None:
            self.lost_at = t

    def column(self, name: str, n: int) -> Column:
        series = self.values.get(name)
        return series.column(n) if series is not None else [None] * n


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
        for key, gpu in gpus.items():
            device = self.devices.get(key)
            if device is None:
                device = self.devices[key] = DeviceTrack(key, gpu.vocabulary, dict(gpu.info))
            device.add(i, t, gpu)

    @property
    def span_s(self) -> float:
        return self.t[-1] - self.t[0] if len(self.t) > 1 else 0.0

    # -- engine signals, all endpoints together ---------------------------------------------
    def gauge(self, name: str, url: str | None = None) -> Column:
        """The gauge at each poll: one endpoint's, or all endpoints' combined by the signal's agg."""
        n = len(self.t)
        cols = [e.gauges[name].column(n) for u, e in self.endpoints.items() if name in e.gauges and url in (None, u)]
        out: Column = [_combine_gauge(name, row) for row in zip(*cols, strict=True)] if cols else []
        return out or [None] * n

    def latest(self, name: str) -> float | None:
        """The gauge at the last poll, all endpoints combined (what :meth:`gauge` ends with), in O(endpoints)."""
        i = len(self.t) - 1
        return _combine_gauge(name, [e.gauges[name].at(i) for e in self.endpoints.values() if name in e.gauges])

    def counter(self, name: str, url: str | None = None) -> tuple[Column, Column]:
        """(increment, rate per second) at each poll, summed over endpoints."""
        n = len(self.t)
        inc_total: Column = [None] * n
        rate_total: Column = [None] * n
        for u, e in self.endpoints.items():
            if name not in e.counters or url not in (None, u):
                continue
            incs, rates = counter_steps(self.t, e.counters[name].column(n))
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
            if name not in e.step_counts or url not in (None, u):
                continue
            step_sums, step_counts = e.step_sums[name].column(n), e.step_counts[name].column(n)
            for i in range(n):
                c = step_counts[i]
                if c is not None:
                    sums[i] += step_sums[i] or 0.0
                    counts[i] += c
        return [s / c if c > 0 else None for s, c in zip(sums, counts, strict=True)]

    def signals(self, url: str | None = None) -> set[str]:
        """Names of the engine signals any (or one) endpoint gave."""
        out: set[str] = set()
        for u, e in self.endpoints.items():
            if url in (None, u):
                out |= set(e.gauges) | set(e.counters) | set(e.histograms) | set(e.step_counts)
        return out

    # -- GPU signals -----------------------------------------------------------------------
    def gpu(self, name: str) -> Column:
        """All GPUs' ``name`` at each poll, combined (:func:`~llmload.collect.gpus.combine`)."""
        n = len(self.t)
        cols = {k: d.values[name].column(n) for k, d in self.devices.items() if name in d.values}
        return [combine({k: v for k, c in cols.items() if (v := c[i]) is not None}, name) for i in range(n)]

    def latest_gpu(self, name: str) -> float | None:
        """All GPUs' ``name`` at the last poll, combined (what :meth:`gpu` ends with), in O(GPUs)."""
        i = len(self.t) - 1
        values = {k: d.values[name].at(i) for k, d in self.devices.items() if name in d.values}
        return combine({k: v for k, v in values.items() if v is not None}, name)


def _combine_gauge(name: str, values: list[float | None] | tuple[float | None, ...]) -> float | None:
    """Several endpoints' ``name`` at one poll, by the signal's agg (missing ones left out)."""
    seen = [v for v in values if v is not None]
    if not seen:
        return None
    return sum(seen) / len(seen) if server_signal(name).agg == "mean" else sum(seen)
