"""The run summary (schema ``llmload.summary/2``): pure data built from merged statistics.

Contract keys (extra keys may be added, these never change meaning)::

    {"schema": "llmload.summary/2", "duration_s": float, "users_max": int,
     "overall": STATS, "classes": {name: STATS + {"weight": w}}, "errors_by_kind": {kind: n}}

    STATS = {"requests", "ok", "errors", "interrupted", "output_tokens", "input_tokens",
             "output_tokens_per_s", "requests_per_s",
             "ttft_ms" | "itl_ms" | "tpot_ms" | "e2e_ms": {"mean", "p50", "p90", "p99", "max"},
             "received_output_tokens", "received_output_tokens_per_s", "reconnects", ...}

``requests = ok + errors + interrupted`` always. Latencies and token counts cover
successful requests (TTFT also those interrupted by the end of the test after their first
token); ``requests_per_s`` is successful requests per second of test time and
``output_tokens_per_s`` their output tokens per second. ``received_output_tokens`` is
every output token that arrived, whatever the request's outcome, and
``received_output_tokens_per_s`` its rate (``metrics/definitions.py``). ``reconnects``
counts requests sent again on a fresh connection after a reused keep-alive connection
turned out closed before any response byte (not extra requests: each is one request). A
latency with no samples is ``null``.
"""

from __future__ import annotations

import math
from typing import Any

from llmload.metrics.aggregation import SUSTAINED_REPORTS, Snapshot
from llmload.metrics.definitions import METRICS, received_output_tokens, received_output_tokens_per_s
from llmload.metrics.histogram import Histogram
from llmload.metrics.recorder import ClassStats, MetricSet

__all__ = ["SCHEMA", "build_steps", "build_summary", "latency_ms", "load_generator_section", "unfinished_warning"]

SCHEMA = "llmload.summary/2"
_QUANTILES = (0.5, 0.9, 0.99)


def latency_ms(h: Histogram) -> dict[str, float | int | None]:
    """mean/p50/p90/p99/max (ms, rounded to µs) plus min and count of one histogram."""
    if h.count == 0:
        return {"mean": None, "p50": None, "p90": None, "p99": None, "max": None, "min": None, "count": 0}
    p50, p90, p99 = h.percentiles(_QUANTILES)
    r = lambda s: round(s * 1000.0, 3)  # noqa: E731
    return {"mean": r(h.mean), "p50": r(p50), "p90": r(p90), "p99": r(p99), "max": r(h.max), "min": r(h.min), "count": h.count}


def _stats(s: ClassStats, duration_s: float) -> dict[str, Any]:
    c = s.counters
    per_s = (lambda n: round(n / duration_s, 3)) if duration_s > 0 else (lambda n: 0.0)
    out: dict[str, Any] = {
        "requests": c["requests"],
        "ok": c["ok"],
        "errors": c["errors"],
        "interrupted": c["interrupted"],
        "output_tokens": c["output_tokens"],
        "input_tokens": c["input_tokens"],
        "output_tokens_per_s": per_s(c["output_tokens"]),
        "requests_per_s": per_s(c["ok"]),
    }
    for m in METRICS:
        out[f"{m}_ms"] = latency_ms(s.hist[m])
    out["output_tokens_from_usage_ratio"] = round(c["output_tokens_from_usage"] / c["ok"], 4) if c["ok"] else None
    out["partial_output_tokens"] = c["partial_output_tokens"]
    out["received_output_tokens"] = received_output_tokens(c["output_tokens"], c["partial_output_tokens"])
    out["received_output_tokens_per_s"] = round(
        received_output_tokens_per_s(c["output_tokens"], c["partial_output_tokens"], duration_s), 3
    )
    out["reconnects"] = c["reconnects"]
    out["errors_by_kind"] = dict(sorted(s.errors_by_kind.items()))
    return out


def unfinished_warning(stats: dict[str, Any]) -> str | None:
    """A warning when most started requests were still running at the end (or none completed)."""
    n, ok, cut = stats["requests"], stats["ok"], stats["interrupted"]
    if not cut or (cut * 2 <= n and ok):
        return None
    return (
        f"most requests were still running when the test ended ({cut} of {n} started requests interrupted, "
        f"{ok} completed): latencies and output tok/s cover completed requests only; what streamed is in "
        f"received tok/s ({stats['received_output_tokens']} tokens, {stats['received_output_tokens_per_s']:g}/s). "
        "Run longer (-t) or ask for shorter outputs (the profile's output_tokens)"
    )


def build_summary(
    metrics: MetricSet,
    *,
    duration_s: float,
    users_max: int,
    weights: dict[str, float] | None = None,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The summary dict for merged ``metrics`` over a test of ``duration_s`` seconds.

    ``weights`` (class → profile weight) lists classes in profile order, including
    classes that sent nothing; ``extra`` keys are added at the top level.
    """
    duration_s = duration_s if math.isfinite(duration_s) and duration_s > 0 else 0.0
    overall = metrics.overall()
    names = list(weights or {}) + [n for n in metrics.classes if n not in (weights or {})]
    total_requests = overall.counters["requests"]
    classes: dict[str, Any] = {}
    for name in names:
        s = metrics.classes.get(name) or ClassStats()
        entry = _stats(s, duration_s)
        entry["weight"] = (weights or {}).get(name)
        entry["share_of_requests"] = round(s.counters["requests"] / total_requests, 4) if total_requests else None
        classes[name] = entry
    summary: dict[str, Any] = {
        "schema": SCHEMA,
        "duration_s": round(duration_s, 3),
        "users_max": users_max,
        "overall": _stats(overall, duration_s),
        "classes": classes,
        "errors_by_kind": dict(sorted(overall.errors_by_kind.items())),
    }
    if extra:
        summary.update(extra)
    unfinished = unfinished_warning(summary["overall"])
    if unfinished:
        summary["warnings"] = [*summary.get("warnings", []), unfinished]
    return summary


def build_steps(windows: list[Any], steps: dict[int, MetricSet], weights: dict[str, float]) -> list[dict[str, Any]]:
    """One entry per ladder step: its window and its steady-window statistics.

    ``windows`` are :class:`~llmload.shapes.ladder.StepWindow` objects; the statistics of
    a step cover requests that *started* in its steady window, and rates are per second of
    that window.
    """
    out = []
    for w in windows:
        entry = w.to_dict()
        m = steps.get(w.index) or MetricSet()
        duration = entry["steady_s"]
        entry["overall"] = _stats(m.overall(), duration)
        entry["classes"] = {n: _stats(m.classes.get(n) or ClassStats(), duration) for n in weights}
        out.append(entry)
    return out


def load_generator_section(snap: Snapshot, *, master: bool, local_id: str) -> dict[str, Any]:
    """The summary's view of the load generator: workers, lost workers, saturation, warnings."""
    out: dict[str, Any] = {}
    if master:
        workers = [w for w in snap.workers if w.worker_id != local_id]
        out["workers"] = len(workers)
        out["workers_lost"] = sorted(w.worker_id for w in workers if w.lost)
    saturated = sorted(w.worker_id for w in snap.workers if w.saturated_ever)
    out["client"] = {"saturated": bool(saturated), "saturated_processes": saturated}
    warnings = []
    if saturated:
        warnings.append(
            f"the load generator was saturated (CPU >= 85 % of a core or event-loop lag >= 50 ms, "
            f"{SUSTAINED_REPORTS} reports in a row, in {', '.join(saturated)}): latencies measure the client, "
            "not the server; add workers (--processes N)"
        )
    if out.get("workers_lost"):
        warnings.append(f"workers lost during the run (their reports so far are included): {', '.join(out['workers_lost'])}")
    out["warnings"] = warnings
    return out
