"""95 % confidence intervals of percentiles, read from a mergeable histogram (one definition).

**Method: order statistics (distribution-free, exact binomial).** Of ``n`` samples, the
number ``B`` at or below the true quantile ``ξ_q`` is Binomial(n, q). The interval is the
pair of order statistics ``[X_(l), X_(u)]`` with

* ``l`` the largest rank with ``P(B <= l - 1) <= 2.5 %`` and
* ``u`` the smallest rank with ``P(B <= u - 1) >= 97.5 %``,

so that ``P(X_(l) <= ξ_q <= X_(u)) >= 95 %`` whatever the latency distribution (equal
tails, each at most 2.5 %; Hahn & Meeker, *Statistical Intervals*, ch. 5). The binomial is
summed exactly (in log space, over ±12 standard deviations around ``n·q``: the mass left
out is below 1e-30), never by a normal approximation, so small samples are not flattered.

**Too few samples.** Both ranks exist only when ``(1 - q)^n <= 2.5 %`` and ``q^n <= 2.5 %``:
:func:`min_samples` is the smallest such ``n`` — 6 for a p50, 36 for a p90, 368 for a p99.
Below it the data cannot bound that percentile at 95 % (a p99 of 74 requests is the
2nd-largest value; nothing says how far the true p99 lies above it): :func:`quantile_ci`
returns None and writers say "n=74: too few for a p99".

**From the histogram.** The ranks are looked up in the histogram's cumulative counts; the
interval runs from the *lower* edge of the bucket holding rank ``l`` to the *upper* edge of
the bucket holding rank ``u``, clamped to the exact min/max: the 1 % bucket width is inside
the interval, so it always contains the percentile the histogram reports, and a histogram
merged from workers gives the same interval as one process.

**A share** (an error rate, an SLO attainment): :func:`proportion_ci`, the Wilson score
interval of ``k`` of ``n`` (z = 1.96), which stays inside [0, 1] and is not zero-width at 0 errors.

``±`` (:func:`relative_half_width`) is the wider side of the interval relative to the
percentile: ``max(hi - p, p - lo) / p``.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from llmload.metrics.histogram import EDGES, LOWEST, Histogram

__all__ = [
    "HEADLINE_QUANTILES",
    "LEVEL",
    "min_samples",
    "proportion_ci",
    "quantile_ci",
    "rank_interval",
    "relative_half_width",
    "too_few_text",
]

#: The confidence level of every interval.
LEVEL = 0.95
#: The percentiles that carry an interval: name -> quantile.
HEADLINE_QUANTILES = {"p50": 0.5, "p90": 0.9, "p99": 0.99}
_SPAN_SD = 12.0
_Z = 1.959963984540054  # the normal quantile of 97.5 %
_lgamma = np.frompyfunc(math.lgamma, 1, 1)


def _binomial_cdf(n: int, q: float) -> tuple[int, np.ndarray]:
    """(k0, F) with ``F[i] = P(B <= k0 + i)`` for B ~ Binomial(n, q), over the window holding its mass."""
    sd = math.sqrt(n * q * (1.0 - q))
    k0 = max(0, math.floor(n * q - _SPAN_SD * sd) - 2)
    k1 = min(n, math.ceil(n * q + _SPAN_SD * sd) + 2)
    k = np.arange(k0, k1 + 1, dtype=np.float64)
    log_pmf = (
        math.lgamma(n + 1.0)
        - np.asarray(_lgamma(k + 1.0), dtype=np.float64)
        - np.asarray(_lgamma(n - k + 1.0), dtype=np.float64)
        + k * math.log(q)
        + (n - k) * math.log1p(-q)
    )
    return k0, np.cumsum(np.exp(log_pmf))


@functools.lru_cache(maxsize=4096)
def rank_interval(n: int, q: float, level: float = LEVEL) -> tuple[int, int] | None:
    """1-based ranks ``(l, u)`` of the order-statistic interval of quantile ``q`` (module docstring);
    None when ``n`` samples cannot give one (fewer than :func:`min_samples`)."""
    if n <= 0 or not 0.0 < q < 1.0:
        return None
    tail = (1.0 - level) / 2.0
    k0, cdf = _binomial_cdf(n, q)
    lower = k0 + int(np.searchsorted(cdf, tail, side="right"))  # l - 1 = the largest k with F(k) <= tail
    upper = k0 + int(np.searchsorted(cdf, 1.0 - tail, side="left")) + 1  # u - 1 = the smallest k with F(k) >= 1 - tail
    if lower < 1 or upper > n:
        return None
    return lower, upper


@functools.lru_cache(maxsize=64)
def min_samples(q: float, level: float = LEVEL) -> int:
    """The fewest samples whose order statistics bound quantile ``q`` at ``level`` (6, 36, 368 for p50/p90/p99)."""
    tail = (1.0 - level) / 2.0
    n = max(1, math.ceil(math.log(tail) / math.log(max(q, 1.0 - q))) - 1)
    while rank_interval(n, q, level) is None:
        n += 1
    return n


def _lower_edge(index: int) -> float:
    return float(EDGES[index - 1]) if index > 0 else 0.0


def _upper_edge(index: int) -> float:
    return float(EDGES[index]) if index < len(EDGES) else math.inf


def quantile_ci(h: Histogram, q: float, level: float = LEVEL) -> tuple[float, float] | None:
    """The interval (seconds) of quantile ``q`` of ``h`` (module docstring); None with too few samples."""
    ranks = rank_interval(h.count, q, level)
    if ranks is None:
        return None
    cum = np.cumsum(h.counts)
    lo_i, hi_i = (int(i) for i in np.searchsorted(cum, ranks, side="left"))
    lo = max(_lower_edge(lo_i), h.min, LOWEST if lo_i == 0 else 0.0)
    hi = min(_upper_edge(hi_i), h.max)
    point = h.percentile(q)  # a bucket centre within [min, max]: the interval holds it
    return min(lo, point), max(hi, point)


def proportion_ci(k: int, n: int) -> tuple[float, float] | None:
    """Wilson score 95 % interval of the share ``k / n``; None for ``n == 0``."""
    if n <= 0:
        return None
    p, z2 = k / n, _Z * _Z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = _Z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def relative_half_width(value: float | None, ci: tuple[float, float] | None) -> float | None:
    """``max(hi - value, value - lo) / value`` (the ``±`` writers show); None without both or for a value <= 0."""
    if value is None or ci is None or value <= 0:
        return None
    lo, hi = ci
    return max(hi - value, value - lo) / value


def too_few_text(n: int, name: str) -> str:
    """``"n=74: too few for a p99"`` (``name`` a key of :data:`HEADLINE_QUANTILES`)."""
    return f"n={n}: too few for a {name}"
