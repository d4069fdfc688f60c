"""Per-step figures the verdict and the diagnosis read: one :class:`StepView` per ladder step.

A step entry of the summary (``summary["steps"][i]``, built by
:func:`llmload.report.summary.build_steps`) holds STATS blocks for requests that *started*
in the step's steady window. This module adds what those blocks leave implicit and reads
them into typed views:

* **error rate** = ``errors / (ok + errors)`` (interrupted requests, cut off at the stop,
  are neither);
* **mean in-flight** by Little's law, ``L = λ · W``: ``λ`` = requests started per second of
  the steady window (``requests / steady_s``, every outcome), ``W`` = the mean E2E of the
  successful requests (failed ones are assumed to last as long). Users are closed loops
  with at most one request each, so ``L`` is capped at the step's users;
* **the p50's 95 % confidence interval** (:func:`median_ci`), from the order statistics
  of the step's own histogram: with ``n`` samples the median lies between the samples of
  rank ``n/2 ± 0.98·√n`` (normal approximation of the binomial, ``z = 1.96``). The
  verdict's confidence band is judged on these intervals.

Everything here is pure: dicts in, dicts and dataclasses out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from llmload.metrics.histogram import Histogram
from llmload.metrics.recorder import MetricSet

__all__ = [
    "CI_METRICS",
    "Perf",
    "StepView",
    "derive_stats",
    "median_ci",
    "step_ci",
    "step_views",
]

#: Latencies whose p50 gets a confidence interval (the ones the verdict judges).
CI_METRICS = ("ttft", "tpot")
_Z = 1.96


def median_ci(h: Histogram, z: float = _Z) -> tuple[float, float] | None:
    """95 % confidence interval of the median of ``h``, in ms: ``(p(0.5 - z/(2√n)), p(0.5 + z/(2√n)))``.

    Distribution-free (ranks of the order statistics), as fine as the histogram's
    buckets (≤ 1 %); None without samples. One sample gives ``(min, max)`` = itself.
    """
    n = h.count
    if n == 0:
        return None
    half = z * 0.5 / math.sqrt(n)
    lo, hi = h.percentiles((max(0.0, 0.5 - half), min(1.0, 0.5 + half)))
    return round(lo * 1000.0, 3), round(hi * 1000.0, 3)


def step_ci(m: MetricSet | None) -> dict[str, list[float]]:
    """``{"ttft_ms": [lo, hi], "tpot_ms": [lo, hi]}``: the p50 intervals of one step (all classes)."""
    if m is None:
        return {}
    overall = m.overall()
    out: dict[str, list[float]] = {}
    for name in CI_METRICS:
        ci = median_ci(overall.hist[name])
        if ci is not None:
            out[f"{name}_ms"] = list(ci)
    return out


def _get(stats: Mapping[str, Any], metric: str, key: str) -> float | None:
    block = stats.get(f"{metric}_ms") or {}
    v = block.get(key)
    return float(v) if isinstance(v, (int, float)) else None


def derive_stats(stats: Mapping[str, Any], users: int, steady_s: float) -> dict[str, float | None]:
    """``error_rate`` and ``in_flight_mean`` of one STATS block (formulas in the module docstring)."""
    ok, errors = int(stats.get("ok") or 0), int(stats.get("errors") or 0)
    requests = int(stats.get("requests") or 0)
    error_rate = round(errors / (ok + errors), 4) if ok + errors else None
    e2e_mean = _get(stats, "e2e", "mean")
    in_flight = None
    if steady_s > 0 and e2e_mean is not None:
        in_flight = round(min(float(users), requests / steady_s * e2e_mean / 1000.0), 3)
    return {"error_rate": error_rate, "in_flight_mean": in_flight}


@dataclass(frozen=True, slots=True)
class Perf:
    """The client's figures for one step (all classes, or one class). Latencies in ms."""

    requests: int = 0
    ok: int = 0
    errors: int = 0
    ttft_p50: float | None = None
    ttft_p99: float | None = None
    ttft_mean: float | None = None
    tpot_p50: float | None = None
    tpot_p99: float | None = None
    itl_p50: float | None = None
    itl_p99: float | None = None
    e2e_p50: float | None = None
    e2e_p99: float | None = None
    e2e_mean: float | None = None
    tok_s: float = 0.0
    req_s: float = 0.0
    error_rate: float | None = None
    in_flight: float | None = None
    input_tokens_mean: float | None = None
    errors_by_kind: dict[str, int] = field(default_factory=dict)

    @property
    def finished(self) -> int:
        """Requests with an outcome the verdict can judge (ok + errors)."""
        return self.ok + self.errors

    def value(self, metric: str) -> float | None:
        """``"ttft_p50"`` → :attr:`ttft_p50`; ``"error_rate"`` → :attr:`error_rate`."""
        return getattr(self, metric, None)

    @classmethod
    def from_stats(cls, stats: Mapping[str, Any] | None, users: int, steady_s: float) -> Perf:
        if not stats:
            return cls()
        derived = derive_stats(stats, users, steady_s)
        ok = int(stats.get("ok") or 0)
        return cls(
            requests=int(stats.get("requests") or 0),
            ok=ok,
            errors=int(stats.get("errors") or 0),
            ttft_p50=_get(stats, "ttft", "p50"),
            ttft_p99=_get(stats, "ttft", "p99"),
            ttft_mean=_get(stats, "ttft", "mean"),
            tpot_p50=_get(stats, "tpot", "p50"),
            tpot_p99=_get(stats, "tpot", "p99"),
            itl_p50=_get(stats, "itl", "p50"),
            itl_p99=_get(stats, "itl", "p99"),
            e2e_p50=_get(stats, "e2e", "p50"),
            e2e_p99=_get(stats, "e2e", "p99"),
            e2e_mean=_get(stats, "e2e", "mean"),
            tok_s=float(stats.get("output_tokens_per_s") or 0.0),
            req_s=float(stats.get("requests_per_s") or 0.0),
            error_rate=derived["error_rate"],
            in_flight=derived["in_flight_mean"],
            input_tokens_mean=(int(stats.get("input_tokens") or 0) / ok) if ok else None,
            errors_by_kind=dict(stats.get("errors_by_kind") or {}),
        )


SignalStats = dict[str, dict[str, float]]


@dataclass(frozen=True, slots=True)
class StepView:
    """One load step: who ran it, the client's figures, and the server/GPU signals of its steady window.

    ``index`` is the ladder index (``-1`` = the single-request pre-run), or ``None`` for a
    whole run without a ladder (see :func:`step_views`).
    """

    index: int | None
    users: int
    steady_s: float
    perf: Perf
    classes: dict[str, Perf] = field(default_factory=dict)
    server: SignalStats = field(default_factory=dict)
    gpu: SignalStats = field(default_factory=dict)
    ci: dict[str, tuple[float, float]] = field(default_factory=dict)

    def s(self, name: str, stat: str = "mean") -> float | None:
        """A server signal's statistic over the steady window (None when not collected)."""
        v = (self.server.get(name) or {}).get(stat)
        return float(v) if isinstance(v, (int, float)) else None

    def g(self, name: str, stat: str = "mean") -> float | None:
        """A GPU signal's statistic over the steady window (None when not collected)."""
        v = (self.gpu.get(name) or {}).get(stat)
        return float(v) if isinstance(v, (int, float)) else None

    def interval(self, metric: str) -> tuple[float, float] | None:
        """The p50 confidence interval of ``"ttft"``/``"tpot"`` (None when unknown)."""
        return self.ci.get(f"{metric}_ms")

    @property
    def label(self) -> str:
        users = "1 user" if self.users == 1 else f"{self.users} users"
        if self.index is None:
            return f"{users} (whole run)"
        return "the baseline pre-run" if self.index == -1 else users


def _view(entry: Mapping[str, Any]) -> StepView:
    users = int(entry.get("users") or 0)
    steady_s = float(entry.get("steady_s") or 0.0)
    classes = {n: Perf.from_stats(c, users, steady_s) for n, c in (entry.get("classes") or {}).items()}
    ci = {k: (float(v[0]), float(v[1])) for k, v in (entry.get("p50_ci95") or {}).items() if v and len(v) == 2}
    return StepView(
        index=entry.get("index"),
        users=users,
        steady_s=steady_s,
        perf=Perf.from_stats(entry.get("overall"), users, steady_s),
        classes=classes,
        server=dict(entry.get("server") or {}),
        gpu=dict(entry.get("gpu") or {}),
        ci=ci,
    )


def _run_signals(part: Mapping[str, Any] | None) -> SignalStats:
    """The whole run's ``server``/``gpu`` signals in the per-step vocabulary (counters as ``*_rate_per_s``)."""
    out: SignalStats = {}
    for name, st in ((part or {}).get("signals") or {}).items():
        if not isinstance(st, Mapping):
            continue
        if "rate_per_s" in st:
            out[f"{name}_rate_per_s"] = {"mean": st["rate_per_s"], "max": st.get("rate_max_per_s", st["rate_per_s"])}
        elif name.endswith("_ms") and "mean" in st:
            out[f"{name[:-3]}_mean_ms"] = {"mean": st["mean"]}
        elif "mean" in st:
            out[name] = {k: st[k] for k in ("mean", "min", "max", "last") if k in st}
        elif "value" in st:
            out[name] = {"mean": st["value"]}
    return out


def step_views(summary: Mapping[str, Any]) -> list[StepView]:
    """The summary's ladder steps as views, in order (the pre-run first when there is one).

    A run without a ladder gives one view of the whole run (``index`` None, its users the
    run's maximum, the run's ``server``/``gpu`` means): the diagnosis still reads levels
    such as KV usage from it, but nothing is compared with a baseline.
    """
    steps = summary.get("steps") or []
    if steps:
        return sorted((_view(e) for e in steps), key=lambda v: v.index if v.index is not None else 0)
    users = int(summary.get("users_max") or 0)
    duration = float(summary.get("duration_s") or 0.0)
    classes = {n: Perf.from_stats(c, users, duration) for n, c in (summary.get("classes") or {}).items()}
    return [
        StepView(
            index=None,
            users=users,
            steady_s=duration,
            perf=Perf.from_stats(summary.get("overall"), users, duration),
            classes=classes,
            server=_run_signals(summary.get("server")),
            gpu=_run_signals(summary.get("gpu")),
        )
    ]
