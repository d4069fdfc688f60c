"""Mergeable log-bucketed latency histograms.

Every llmload process uses the same fixed bucket edges, so histograms from different
workers merge by adding their counts, and a percentile read from a merged histogram is
exactly the percentile one process would have read from the same samples.

Buckets: edge ``i`` is ``LOWEST * GROWTH**i`` seconds for ``i = 0 .. N_EDGES-1``;
bucket ``i`` holds values in ``(edge[i-1], edge[i]]``, bucket 0 holds values ``<= LOWEST``
and the last bucket everything above the highest edge. ``GROWTH = 1.01`` makes every
bucket 1 % wide (relative), from 10 µs to about 1.1 hours: 2 107 edges. Percentiles are
reported as the geometric centre of their bucket clamped to the exact min/max, so the
relative error is at most 0.5 %. ``count``, ``sum``, ``min`` and ``max`` are exact.

Values are in seconds (Prometheus base unit).
"""

from __future__ import annotations

import math
from typing import Any, TypedDict

import numpy as np

__all__ = ["EDGES", "GROWTH", "LOWEST", "N_BUCKETS", "Histogram", "HistogramWire", "bucket_index", "bucket_value"]

LOWEST = 1e-5  # seconds: 10 µs
GROWTH = 1.01  # 1 % relative bucket width
HIGHEST = 4000.0  # seconds: a little over an hour
N_EDGES = math.ceil(math.log(HIGHEST / LOWEST) / math.log(GROWTH)) + 1
#: Upper edges of buckets 0 .. N_EDGES-1 (the last bucket, index N_EDGES, is the overflow).
EDGES = LOWEST * np.power(GROWTH, np.arange(N_EDGES, dtype=np.float64))
N_BUCKETS = N_EDGES + 1

_LOG_LOWEST = math.log(LOWEST)
_INV_LOG_GROWTH = 1.0 / math.log(GROWTH)
# Geometric centre of each bucket, the value a percentile falling in it reports.
_CENTRES = np.empty(N_BUCKETS, dtype=np.float64)
_CENTRES[0] = LOWEST
_CENTRES[1:N_EDGES] = np.sqrt(EDGES[:-1] * EDGES[1:])
_CENTRES[N_EDGES] = math.inf  # overflow: reported as the exact max


def bucket_index(value: float) -> int:
    """Bucket of one value in seconds."""
    if value <= LOWEST:
        return 0
    i = math.ceil((math.log(value) - _LOG_LOWEST) * _INV_LOG_GROWTH - 1e-9)
    return i if i < N_EDGES else N_EDGES


def bucket_value(index: int) -> float:
    """The value (seconds) a bucket stands for: its geometric centre (the overflow bucket: the highest edge)."""
    return float(_CENTRES[index]) if index < N_EDGES else float(EDGES[-1])


def _bucket_indices(values: np.ndarray) -> np.ndarray:
    v = np.maximum(values, LOWEST)
    idx = np.ceil((np.log(v) - _LOG_LOWEST) * _INV_LOG_GROWTH - 1e-9).astype(np.int64)
    np.clip(idx, 0, N_EDGES, out=idx)
    return idx


class HistogramWire(TypedDict):
    """Sparse wire form (msgpack/JSON safe): bucket indices and their counts."""

    i: list[int]
    c: list[int]
    n: int
    s: float
    lo: float
    hi: float


class Histogram:
    """Counts per fixed bucket plus exact count/sum/min/max. Merge = addition."""

    __slots__ = ("count", "counts", "max", "min", "sum")

    def __init__(self) -> None:
        self.counts = np.zeros(N_BUCKETS, dtype=np.int64)
        self.count = 0
        self.sum = 0.0
        self.min = math.inf
        self.max = -math.inf

    # -- recording ---------------------------------------------------------------------
    def record(self, value: float) -> None:
        """Add one value (seconds)."""
        self.counts[bucket_index(value)] += 1
        self.count += 1
        self.sum += value
        if value < self.min:
            self.min = value
        if value > self.max:
            self.max = value

    def record_many(self, values: np.ndarray) -> None:
        """Add an array of values (seconds) in one vectorised step."""
        n = len(values)
        if n == 0:
            return
        if n < 8:
            for v in values.tolist():
                self.record(v)
            return
        np.add.at(self.counts, _bucket_indices(values), 1)
        self.count += n
        self.sum += float(values.sum())
        lo, hi = float(values.min()), float(values.max())
        if lo < self.min:
            self.min = lo
        if hi > self.max:
            self.max = hi

    # -- combining ---------------------------------------------------------------------
    def merge(self, other: Histogram) -> None:
        """Add ``other`` into this histogram."""
        if other.count == 0:
            return
        self.counts += other.counts
        self.count += other.count
        self.sum += other.sum
        self.min = min(self.min, other.min)
        self.max = max(self.max, other.max)

    def copy(self) -> Histogram:
        h = Histogram()
        h.merge(self)
        return h

    # -- reading -----------------------------------------------------------------------
    @property
    def mean(self) -> float:
        return self.sum / self.count if self.count else math.nan

    def percentile(self, q: float) -> float:
        """Value (seconds) at quantile ``q`` in [0, 1]; NaN when empty.

        The smallest bucket whose cumulative count reaches ``ceil(q * count)`` (at least 1),
        reported as its geometric centre clamped to the exact [min, max].
        """
        if self.count == 0:
            return math.nan
        if q <= 0:
            return self.min
        if q >= 1:
            return self.max
        rank = max(1, math.ceil(q * self.count - 1e-9))
        idx = int(np.searchsorted(np.cumsum(self.counts), rank, side="left"))
        return min(max(float(_CENTRES[idx]), self.min), self.max)

    def percentiles(self, qs: list[float] | tuple[float, ...]) -> list[float]:
        """Several quantiles with one cumulative sum."""
        if self.count == 0:
            return [math.nan] * len(qs)
        cum = np.cumsum(self.counts)
        out = []
        for q in qs:
            if q <= 0:
                out.append(self.min)
            elif q >= 1:
                out.append(self.max)
            else:
                rank = max(1, math.ceil(q * self.count - 1e-9))
                idx = int(np.searchsorted(cum, rank, side="left"))
                out.append(min(max(float(_CENTRES[idx]), self.min), self.max))
        return out

    def cumulative_at(self, upper_edges: np.ndarray) -> np.ndarray:
        """Cumulative counts of values ``<= edge`` for edges that are bucket edges.

        Used to export classic Prometheus ``le`` buckets that are exact sums of the fine
        buckets. Each edge is mapped to the fine bucket it closes.
        """
        cum = np.cumsum(self.counts)
        idx = _bucket_indices(np.asarray(upper_edges, dtype=np.float64))
        return cum[idx]

    # -- wire --------------------------------------------------------------------------
    def to_wire(self) -> HistogramWire:
        nz = np.flatnonzero(self.counts)
        return {
            "i": nz.tolist(),
            "c": self.counts[nz].tolist(),
            "n": self.count,
            "s": self.sum,
            "lo": self.min if self.count else 0.0,
            "hi": self.max if self.count else 0.0,
        }

    @classmethod
    def from_wire(cls, wire: HistogramWire | dict[str, Any]) -> Histogram:
        h = cls()
        if wire["n"]:
            h.counts[np.asarray(wire["i"], dtype=np.int64)] = np.asarray(wire["c"], dtype=np.int64)
            h.count = int(wire["n"])
            h.sum = float(wire["s"])
            h.min = float(wire["lo"])
            h.max = float(wire["hi"])
        return h

    def __repr__(self) -> str:
        if not self.count:
            return "Histogram(empty)"
        p50, p99 = self.percentiles((0.5, 0.99))
        return f"Histogram(n={self.count}, mean={self.mean:.6g}s, p50={p50:.6g}s, p99={p99:.6g}s)"
