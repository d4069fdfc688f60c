"""Per-signal summaries over a run: levels (gauges), increases and rates (counters), histograms.

Pure functions over lists aligned with the poll times (``None`` where a source gave no
value). Counters follow Prometheus' ``increase``: a value lower than the previous one
means the source restarted, and the new value is what it counted since.

* :func:`gauge_stats` — ``samples, mean, min, max, p50, p95, first, last`` of the values read;
  percentiles interpolate linearly between the sorted samples;
* :func:`counter_steps` / :func:`counter_stats` — per-poll increments and rates, then
  ``increase`` over the run, ``rate_per_s`` (increase / the polls' span) and ``rate_max_per_s``;
* :func:`histogram_stats_ms` — ``count, mean, p50, p90, p99`` in milliseconds of what an
  engine histogram recorded during the run (:mod:`~llmload.collect.prom_histogram`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from llmload.collect.prom_histogram import BucketHistogram

__all__ = ["counter_stats", "counter_steps", "gauge_stats", "histogram_stats_ms", "quantile", "rounded"]

_QUANTILES = (("p50", 0.5), ("p90", 0.9), ("p99", 0.99))


def rounded(x: float | None, digits: int = 6) -> float | None:
    """``x`` to ``digits`` significant digits, but never rounded left of the point (byte counts stay
    exact); None, NaN and inf give None."""
    if x is None or not math.isfinite(x):
        return None
    if x == 0:
        return 0.0
    r = round(x, max(0, digits - 1 - int(math.floor(math.log10(abs(x))))))
    return float(r)


def quantile(sorted_values: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default) of non-empty sorted values."""
    pos = q * (len(sorted_values) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def gauge_stats(values: Sequence[float | None]) -> dict[str, float | int | None] | None:
    """Statistics of the values read (``None`` skipped); None when there is none."""
    seen = [v for v in values if v is not None]
    if not seen:
        return None
    s = sorted(seen)
    return {
        "samples": len(seen),
        "mean": rounded(sum(seen) / len(seen)),
        "min": rounded(s[0]),
        "max": rounded(s[-1]),
        "p50": rounded(quantile(s, 0.5)),
        "p95": rounded(quantile(s, 0.95)),
        "first": rounded(seen[0]),
        "last": rounded(seen[-1]),
    }


def counter_steps(
    times: Sequence[float], values: Sequence[float | None]
) -> tuple[list[float | None], list[float | None]]:
    """(increment, rate per second) at each poll since the previous poll that had a value."""
    increments: list[float | None] = [None] * len(values)
    rates: list[float | None] = [None] * len(values)
    prev_t = prev_v = None
    for i, (t, v) in enumerate(zip(times, values, strict=False)):
        if v is None:
            continue
        if prev_v is not None and prev_t is not None:
            inc = v if v < prev_v else v - prev_v  # lower: the source restarted and counts from 0
            increments[i] = inc
            rates[i] = inc / (t - prev_t) if t > prev_t else None
        prev_t, prev_v = t, v
    return increments, rates


def counter_stats(
    increments: Sequence[float | None], rates: Sequence[float | None], span_s: float
) -> dict[str, float | int | None] | None:
    """``increase``, ``rate_per_s`` (over ``span_s``), ``rate_max_per_s``; None without two readings."""
    steps = [x for x in increments if x is not None]
    if not steps:
        return None
    total = sum(steps)
    peak = [r for r in rates if r is not None]
    return {
        "increase": rounded(total),
        "rate_per_s": rounded(total / span_s) if span_s > 0 else None,
        "rate_max_per_s": rounded(max(peak)) if peak else None,
    }


def histogram_stats_ms(h: BucketHistogram | None) -> dict[str, float | int | None] | None:
    """``count, mean, p50, p90, p99`` (ms) of ``h``, the run's increase; None if absent."""
    if h is None:
        return None
    out: dict[str, float | int | None] = {"count": int(round(h.count))}
    if h.count <= 0:
        out.update(mean=None, p50=None, p90=None, p99=None)
        return out
    ms = lambda s: None if s is None else round(s * 1000.0, 3)  # noqa: E731
    out["mean"] = ms(h.mean)
    for key, q in _QUANTILES:
        out[key] = ms(h.quantile(q))
    return out
