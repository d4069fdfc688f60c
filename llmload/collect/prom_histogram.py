"""A Prometheus classic histogram as read from ``/metrics``: bounds, cumulative counts, sum, count.

An engine's histogram is cumulative since the engine started. What a run saw is the
difference between its last and first reading (``last - first``); percentiles over that
difference are estimated the way Prometheus' ``histogram_quantile`` does it: find the
bucket holding the rank, interpolate linearly inside it (from 0 for the first bucket
when its bound is positive), and answer the highest finite bound when the rank falls in
``+Inf``. Resolution is the engine's bucket layout: vLLM's TTFT buckets are 20-60 % wide
in the range that matters, so p50/p99 from the server are coarse; its ``mean``
(``sum/count``) is exact.

:class:`HistogramTrack` follows one engine histogram through a run, across engine
restarts (a count that goes down starts a new segment, like Prometheus' ``increase``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from llmload.collect.exposition import Row, Samples

__all__ = ["BucketHistogram", "HistogramTrack", "read_histogram"]


@dataclass(frozen=True, slots=True)
class BucketHistogram:
    """``bounds``: finite upper bounds, ascending; ``cumulative[i]``: observations <= bounds[i];
    ``cumulative[-1]``: all observations (the ``+Inf`` bucket)."""

    bounds: tuple[float, ...]
    cumulative: tuple[float, ...]
    sum: float
    count: float

    @property
    def mean(self) -> float | None:
        return self.sum / self.count if self.count > 0 else None

    def compatible(self, other: BucketHistogram) -> bool:
        return self.bounds == other.bounds

    def __sub__(self, other: BucketHistogram) -> BucketHistogram:
        return BucketHistogram(
            self.bounds,
            tuple(a - b for a, b in zip(self.cumulative, other.cumulative, strict=True)),
            self.sum - other.sum,
            self.count - other.count,
        )

    def __add__(self, other: BucketHistogram) -> BucketHistogram:
        return BucketHistogram(
            self.bounds,
            tuple(a + b for a, b in zip(self.cumulative, other.cumulative, strict=True)),
            self.sum + other.sum,
            self.count + other.count,
        )

    def zero(self) -> BucketHistogram:
        return BucketHistogram(self.bounds, (0.0,) * len(self.cumulative), 0.0, 0.0)

    def quantile(self, q: float) -> float | None:
        """The ``q`` quantile (0..1), interpolated inside its bucket; None without observations."""
        total = self.cumulative[-1] if self.cumulative else 0.0
        if total <= 0:
            return None
        rank = q * total
        lower, below = 0.0, 0.0
        for bound, cum in zip(self.bounds, self.cumulative, strict=False):
            if cum >= rank and cum > below:
                if bound <= 0:
                    return bound
                start = lower if lower < bound else 0.0
                return start + (bound - start) * (rank - below) / (cum - below)
            lower, below = bound, cum
        return self.bounds[-1] if self.bounds else None


def _bounds_and_counts(rows: Sequence[tuple[float, float]]) -> tuple[tuple[float, ...], tuple[float, ...]] | None:
    finite = sorted((le, c) for le, c in rows if not math.isinf(le))
    inf = [c for le, c in rows if math.isinf(le)]
    if not inf:
        return None
    return tuple(le for le, _ in finite), tuple(c for _, c in finite) + (inf[0],)


def read_histogram(samples: Samples, base: str) -> BucketHistogram | None:
    """The histogram ``base`` (``base_bucket``/``_sum``/``_count``), label sets added together.

    Label sets (engines of a data-parallel server, models, ranks) whose bounds differ from
    the first one's are left out rather than mixed.
    """
    groups: dict[tuple[tuple[str, str], ...], list[tuple[float, float]]] = {}
    for labels, value in samples.get(base + "_bucket"):
        le = labels.get("le")
        if le is None:
            continue
        try:
            bound = float(le)
        except ValueError:
            continue
        key = tuple(sorted((k, v) for k, v in labels.items() if k != "le"))
        groups.setdefault(key, []).append((bound, value))
    sums = _by_labels(samples.get(base + "_sum"))
    counts = _by_labels(samples.get(base + "_count"))
    out: BucketHistogram | None = None
    for key, rows in groups.items():
        parsed = _bounds_and_counts(rows)
        if parsed is None:
            continue
        bounds, cumulative = parsed
        h = BucketHistogram(bounds, cumulative, sums.get(key, 0.0), counts.get(key, cumulative[-1]))
        if out is None:
            out = h
        elif out.compatible(h):
            out = out + h
    return out


def _by_labels(rows: list[Row]) -> dict[tuple[tuple[str, str], ...], float]:
    return {tuple(sorted(labels.items())): value for labels, value in rows}


class HistogramTrack:
    """One engine histogram through a run: :meth:`add` each reading, :meth:`increase` at the end."""

    __slots__ = ("_done", "_first", "_prev")

    def __init__(self) -> None:
        self._first: BucketHistogram | None = None
        self._prev: BucketHistogram | None = None
        self._done: BucketHistogram | None = None  # segments closed by an engine restart

    def add(self, h: BucketHistogram) -> BucketHistogram | None:
        """Record a reading; returns what was observed since the previous one (None at first)."""
        prev = self._prev
        if prev is None:
            self._first = self._prev = h
            return None
        if not h.compatible(prev) or h.count < prev.count:  # restarted (or reconfigured)
            closed = prev - self._first  # type: ignore[operator]
            if self._done is None or not self._done.compatible(closed):
                self._done = closed if h.compatible(closed) else None
            else:
                self._done = self._done + closed
            self._first = h.zero()
            self._prev = h
            return h
        self._prev = h
        return h - prev

    def increase(self) -> BucketHistogram | None:
        """Everything observed between the first and the last reading; None before two readings."""
        if self._prev is None or self._first is None or self._prev is self._first:
            return None
        delta = self._prev - self._first
        if self._done is not None and self._done.compatible(delta):
            delta = delta + self._done
        return delta
