"""What the gate compares: per scope (``overall`` and each class) and metric, a :class:`Figure`.

From one run: the percentile and its 95 % interval (order statistics, :mod:`llmload.metrics.confidence`),
``n`` the samples behind it; ``error_rate`` with its Wilson interval over the finished requests.

From a ``--repeat`` aggregate, when the summary has one (``repeat``, written by ``llmload run
--repeat N``): the median across repetitions and, as its interval, the repetitions' range
[min, max]; ``n`` is then the number of repetitions and ``cv`` their coefficient of variation.
The gate reads this shape (the figure keys as in STATS: ``ttft_ms`` holds ``p50``/``p90``/``p99``)::

    "repeat": {"runs": N, "aggregate": {"overall" | CLASS: {
        "ttft_p99_ms": {"median", "min", "max", "cv", "values": [...]}, ..., "error_rate": {...}}}}
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypedDict

from llmload.gate.limits import LATENCY_METRICS
from llmload.metrics.confidence import HEADLINE_QUANTILES, min_samples, proportion_ci
from llmload.results.model import RunResult, Stats

__all__ = ["Figure", "RunFacts", "describe", "figure_of", "scopes_of"]


@dataclass(frozen=True, slots=True)
class Figure:
    """One metric of one scope: ``value`` (ms, or a share for ``error_rate``), its interval ``[lo, hi]``
    (None: unknown or too few samples), ``n`` samples (requests, or repetitions when ``runs``)."""

    value: float | None
    lo: float | None = None
    hi: float | None = None
    n: int = 0
    runs: bool = False
    cv: float | None = None
    need: int | None = None  # the fewest samples an interval of this percentile needs (when n is below it)

    @property
    def interval(self) -> tuple[float, float] | None:
        return (self.lo, self.hi) if self.lo is not None and self.hi is not None else None


def scopes_of(result: RunResult) -> dict[str, Stats]:
    """``overall`` and each class with a request."""
    return {"overall": result.overall, **{n: s for n, s in result.classes.items() if s.requests}}


def _repeat(result: RunResult, scope: str, metric: str) -> Figure | None:
    rep = result.extra.get("repeat")
    if not isinstance(rep, Mapping):
        return None
    key = f"{metric}_ms" if metric in LATENCY_METRICS else metric
    agg = ((rep.get("aggregate") or {}).get(scope) or {}).get(key)
    if not isinstance(agg, Mapping) or not isinstance(agg.get("median"), (int, float)):
        return None
    values = [v for v in agg.get("values") or () if isinstance(v, (int, float))]
    runs = int(rep.get("runs") or len(values) or 0)
    lo, hi = agg.get("min"), agg.get("max")
    cv = agg.get("cv")
    return Figure(float(agg["median"]), float(lo) if lo is not None else None, float(hi) if hi is not None else None,
                  runs, True, float(cv) if isinstance(cv, (int, float)) and math.isfinite(cv) else None)  # fmt: skip


def figure_of(result: RunResult, scope: str, metric: str) -> Figure | None:
    """The figure of ``metric`` in ``scope`` (None: the scope is not in this run)."""
    rep = _repeat(result, scope, metric)
    if rep is not None:
        return rep
    s = scopes_of(result).get(scope)
    if s is None:
        return None
    if metric == "error_rate":
        lo, hi = proportion_ci(s.errors, s.finished) or (None, None)
        return Figure(s.error_rate, lo, hi, n=s.finished)
    latency, pct = LATENCY_METRICS[metric]
    lat = s.lat(latency)
    ci = lat.interval(pct)
    need = min_samples(HEADLINE_QUANTILES[pct]) if ci is None and lat.count < min_samples(HEADLINE_QUANTILES[pct]) else None
    lo, hi = ci or (None, None)
    return Figure(getattr(lat, pct), lo, hi, n=lat.count, need=need)


class RunFacts(TypedDict):
    """What the gate says of a run besides its figures."""

    requests: int
    ok: int
    started_at: str | None
    seed: int | None
    repetitions: int | None


def describe(result: RunResult) -> RunFacts:
    """What the gate says of a run: its requests, start time, seed, and repetitions when aggregated."""
    rep = result.extra.get("repeat")
    return {"requests": result.overall.requests, "ok": result.overall.ok, "started_at": result.started_at,
            "seed": result.setup.seed,
            "repetitions": int(rep.get("runs") or 0) if isinstance(rep, Mapping) else None}  # fmt: skip
