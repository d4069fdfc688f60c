"""What a run report shows, as data (``report.json``, schema ``llmload.report/1``).

:func:`build_report` turns a :class:`~llmload.rundir.Run` (summary ``llmload.summary/2``
plus its optional time series) into one dict that every report writer reads::

    {"schema": "llmload.report/1",
     "run": {"name", "started_at", "duration_s", "users_max", "host", "api", "model",
             "profile", "classes_mix", "seed", "ladder", "degradation", "workers", "summary_schema"},
     "warnings": [str], "errors_by_kind": {kind: n},
     "baseline": ..., "verdict": ...,           # as in the summary (null without a ladder)
     "steps": [STEP],                           # [] without a ladder
     "overall": ROW, "classes": [ROW + {"weight", "share", "safe_users", "breach"}],
     "findings": [...],                         # as in the summary
     "signals": {"server": {name: {"unit", "mean", "max"}}, "gpu": {...}},   # whole run
     "series": {"t0": wall s, "signals": {"server.waiting": [[t_s, v], ...], "gpu.utilization": ...},
                "steps": [{"index", "users", "start_s", "steady_s", "end_s"}]} | null}

    ROW  = {"name", "requests", "ok", "errors", "error_rate", "tok_s", "req_s",
            "ttft_p50", "ttft_p99", "tpot_p50", "tpot_p99", "itl_p50", "itl_p99", "e2e_p50", "e2e_p99"}  (ms)
    STEP = ROW + {"index", "users", "steady_s", "status": "baseline" | "ok" | "safe" | "breach" | "over",
                  "server": {signal: mean}, "gpu": {signal: mean}}

Series times are seconds from ``t0`` (the test start); the plot input is this plain
``{signal: [(t, value), ...]}`` mapping. Pure: no I/O.
"""

from __future__ import annotations

from typing import Any

__all__ = ["PLOTTED_SIGNALS", "REPORT_SCHEMA", "build_report", "row", "series_points"]

REPORT_SCHEMA = "llmload.report/1"

#: The time-series columns the report keeps: ``part.column`` of ``llmload.timeseries/1``.
PLOTTED_SIGNALS = (
    "server.waiting",
    "server.running",
    "server.kv_cache_usage",
    "server.preemptions_rate_per_s",
    "server.generation_tokens_rate_per_s",
    "gpu.utilization",
    "gpu.memory_bandwidth_utilization",
    "gpu.sm_activity",
)
_STEP_SIGNALS = {"server": ("waiting", "running", "kv_cache_usage"), "gpu": ("utilization", "memory_bandwidth_utilization")}


def _q(stats: dict[str, Any], metric: str, q: str) -> float | None:
    block = stats.get(f"{metric}_ms") or {}
    return block.get(q)


def row(name: str, stats: dict[str, Any]) -> dict[str, Any]:
    """The report's flat view of one STATS block of the summary."""
    requests = stats.get("requests") or 0
    errors = stats.get("errors") or 0
    out: dict[str, Any] = {
        "name": name,
        "requests": requests,
        "ok": stats.get("ok"),
        "errors": errors,
        "error_rate": round(errors / requests, 6) if requests else None,
        "tok_s": stats.get("output_tokens_per_s"),
        "req_s": stats.get("requests_per_s"),
    }
    for metric in ("ttft", "tpot", "itl", "e2e"):
        for q in ("p50", "p99"):
            out[f"{metric}_{q}"] = _q(stats, metric, q)
    return out


def series_points(timeseries: dict[str, Any] | None) -> dict[str, list[tuple[float, float | None]]]:
    """``llmload.timeseries/1`` columns -> ``{"server.waiting": [(t_wall_s, value), ...], ...}``."""
    if not timeseries:
        return {}
    t = timeseries.get("t") or []
    out: dict[str, list[tuple[float, float | None]]] = {}
    for key in PLOTTED_SIGNALS:
        part, name = key.split(".", 1)
        col = ((timeseries.get(part) or {}).get("signals") or {}).get(name)
        if col and any(v is not None for v in col):
            out[key] = list(zip(t, col, strict=False))
    return out


def _window_mean(points: list[tuple[float, float | None]], t0: float | None, t1: float | None) -> float | None:
    if t0 is None or t1 is None:
        return None
    vals = [v for t, v in points if v is not None and t0 <= t < t1]
    return round(sum(vals) / len(vals), 6) if vals else None


def _step_signals(step: dict[str, Any], points: dict[str, list[tuple[float, float | None]]]) -> dict[str, Any]:
    """Per-step engine / GPU means: the summary's (analysis) when present, else from the series."""
    out: dict[str, Any] = {}
    for part, names in _STEP_SIGNALS.items():
        given = step.get(part) or {}
        means = {}
        for name in names:
            if name in given and isinstance(given[name], dict):
                means[name] = given[name].get("mean")
            elif f"{part}.{name}" in points:
                means[name] = _window_mean(points[f"{part}.{name}"], step.get("steady_from"), step.get("ended_at"))
        means = {k: v for k, v in means.items() if v is not None}
        if means:
            out[part] = means
    return out


def _status(step: dict[str, Any], verdict: dict[str, Any] | None, baseline: dict[str, Any] | None) -> str:
    index = step.get("index")
    if baseline and baseline.get("step") == index:
        return "baseline"
    if not verdict:
        return "ok"
    breach = verdict.get("breach") or {}
    if breach and breach.get("step") == index:
        return "breach"
    if verdict.get("safe_step") == index:
        return "safe"
    if breach and breach.get("step") is not None and index is not None and index > breach["step"]:
        return "over"
    return "ok"


def _steps(summary: dict[str, Any], points: dict[str, list[tuple[float, float | None]]]) -> list[dict[str, Any]]:
    verdict, baseline = summary.get("verdict"), summary.get("baseline")
    out = []
    for step in summary.get("steps") or []:
        r = row(f"{step.get('users')} users", step.get("overall") or {})
        r.update(
            index=step.get("index"),
            users=step.get("users"),
            steady_s=step.get("steady_s"),
            status=_status(step, verdict, baseline),
            **_step_signals(step, points),
        )
        out.append(r)
    return out


def _classes(summary: dict[str, Any]) -> list[dict[str, Any]]:
    per_class = ((summary.get("verdict") or {}).get("per_class")) or {}
    out = []
    for name, stats in (summary.get("classes") or {}).items():
        r = row(name, stats)
        judged = per_class.get(name) or {}
        r.update(
            weight=stats.get("weight"),
            share=stats.get("share_of_requests"),
            safe_users=judged.get("safe_users"),
            breach=judged.get("breach"),
        )
        out.append(r)
    return out


def _signals(summary: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for part in ("server", "gpu"):
        sigs = (summary.get(part) or {}).get("signals") or {}
        picked = {
            name: {"unit": s.get("unit"), "mean": s.get("mean"), "max": s.get("max")}
            for name, s in sigs.items()
            if isinstance(s, dict) and s.get("mean") is not None
        }
        if picked:
            out[part] = picked
    return out


def _series(summary: dict[str, Any], timeseries: dict[str, Any] | None) -> dict[str, Any] | None:
    points = series_points(timeseries)
    if not points:
        return None
    t0 = (timeseries or {}).get("started_at") or min(t for pts in points.values() for t, _ in pts)
    rel = lambda t: None if t is None else round(t - t0, 3)  # noqa: E731
    return {
        "t0": t0,
        "signals": {k: [[rel(t), v] for t, v in pts] for k, pts in points.items()},
        "steps": [
            {
                "index": s.get("index"),
                "users": s.get("users"),
                "start_s": rel(s.get("started_at")),
                "steady_s": rel(s.get("steady_from")),
                "end_s": rel(s.get("ended_at")),
            }
            for s in summary.get("steps") or []
        ],
    }


def _run_meta(name: str, summary: dict[str, Any], config_file: dict[str, Any] | None) -> dict[str, Any]:
    config = summary.get("config") or {}
    profile = summary.get("profile") or {}
    mix = ":".join(f"{c.get('weight'):g}" for c in profile.get("classes") or [] if isinstance(c.get("weight"), (int, float)))
    return {
        "name": name,
        "started_at": summary.get("started_at"),
        "duration_s": summary.get("duration_s"),
        "users_max": summary.get("users_max"),
        "host": (config_file or {}).get("host"),
        "api": config.get("api"),
        "model": config.get("model"),
        "profile": profile.get("name") or config.get("profile"),
        "classes_mix": mix or None,
        "seed": config.get("seed"),
        "max_tokens_cap": config.get("max_tokens_cap"),
        "ladder": config.get("ladder"),
        "degradation": (summary.get("verdict") or {}).get("degradation", config.get("degradation")),
        "workers": summary.get("workers"),
        "summary_schema": summary.get("schema"),
    }


def build_report(run: Any) -> dict[str, Any]:
    """The report data of ``run`` (a :class:`~llmload.rundir.Run`); see the module docstring."""
    s = run.summary
    points = series_points(run.timeseries)
    return {
        "schema": REPORT_SCHEMA,
        "run": _run_meta(run.name, s, run.config),
        "warnings": list(s.get("warnings") or []),
        "errors_by_kind": dict(s.get("errors_by_kind") or {}),
        "baseline": s.get("baseline"),
        "verdict": s.get("verdict"),
        "steps": _steps(s, points),
        "overall": row("overall", s.get("overall") or {}),
        "classes": _classes(s),
        "findings": list(s.get("findings") or []),
        "signals": _signals(s),
        "series": _series(s, run.timeseries),
    }
