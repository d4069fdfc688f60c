"""One latency metric's distribution in milliseconds, as the results carry it (:class:`Latency`).

Built from a merged :class:`~llmload.metrics.histogram.Histogram` (:meth:`Latency.from_histogram`)
or read back from a summary; nothing rounded (writers round). Here, below the results, so that a
part of the per-class statistics (:mod:`llmload.metrics.parts`) can state its latencies.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from llmload.metrics.confidence import HEADLINE_QUANTILES, quantile_ci
from llmload.metrics.histogram import Histogram
from llmload.metrics.parts.contract import Json

__all__ = ["Latency", "num", "rnd"]

_QUANTILES = (0.5, 0.9, 0.99)


def rnd(x: float | None, digits: int = 3) -> float | None:
    """``x`` rounded for a summary (ms and rates to 3 decimals, ratios to 4); None stays None."""
    return None if x is None else round(x, digits)


def num(v: Any) -> float | None:
    """A number read back from a summary (None for anything else, booleans included)."""
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


@dataclass(frozen=True, slots=True)
class Latency:
    """One metric's distribution (ms); every figure None without samples.

    ``ci95``: for a headline latency ``{"p50", "p90", "p99"}`` → the percentile's 95 % interval
    ``(lo, hi)`` in ms, or None with too few samples for it (:mod:`llmload.metrics.confidence`);
    empty for every other latency.
    """

    count: int = 0
    mean: float | None = None
    p50: float | None = None
    p90: float | None = None
    p99: float | None = None
    max: float | None = None
    min: float | None = None
    ci95: Mapping[str, tuple[float, float] | None] = field(default_factory=dict)

    @classmethod
    def from_histogram(cls, h: Histogram, ci: bool = False) -> Latency:
        """The figures of ``h``; ``ci``: with the percentiles' 95 % intervals."""
        ms = 1000.0
        intervals: dict[str, tuple[float, float] | None] = {}
        if ci:
            for name, q in HEADLINE_QUANTILES.items():
                got = quantile_ci(h, q)
                intervals[name] = (got[0] * ms, got[1] * ms) if got is not None else None
        if h.count == 0:
            return cls(ci95=intervals)
        p50, p90, p99 = h.percentiles(_QUANTILES)
        return cls(h.count, h.mean * ms, p50 * ms, p90 * ms, p99 * ms, h.max * ms, h.min * ms, intervals)

    def interval(self, name: str) -> tuple[float, float] | None:
        """The 95 % interval of percentile ``name`` (``"p99"``), ms; None when unknown or too few samples."""
        return self.ci95.get(name)

    def to_dict(self) -> dict[str, Json]:
        """The summary's latency block: mean/p50/p90/p99/max (ms, rounded to µs) plus min and count; a headline
        latency also ``ci95``: ``{"p50" | "p90" | "p99": [lo, hi] | null}`` (null: too few samples for it)."""
        out: dict[str, Json] = {"mean": rnd(self.mean), "p50": rnd(self.p50), "p90": rnd(self.p90), "p99": rnd(self.p99),
                               "max": rnd(self.max), "min": rnd(self.min), "count": self.count}  # fmt: skip
        if self.ci95:
            out["ci95"] = {k: [round(v[0], 3), round(v[1], 3)] if v is not None else None for k, v in self.ci95.items()}
        return out

    @classmethod
    def from_dict(cls, block: Mapping[str, Any] | None) -> Latency:
        """A latency block read back (an empty Latency for None)."""
        b = block or {}
        ci = {str(k): (float(v[0]), float(v[1])) if v and len(v) == 2 else None for k, v in (b.get("ci95") or {}).items()}
        return cls(int(b.get("count") or 0), num(b.get("mean")), num(b.get("p50")), num(b.get("p90")), num(b.get("p99")),
                   num(b.get("max")), num(b.get("min")), ci)  # fmt: skip
