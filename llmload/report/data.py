"""What a run report shows, as data (``report.json``, schema ``llmload.report/1``).

:func:`build_report` turns a :class:`~llmload.rundir.Run` (its typed
:class:`~llmload.results.model.RunResult`, read from a ``llmload.summary/2`` summary, plus its
optional time series) into one dict that the HTML and Markdown writers read::

    {"schema": "llmload.report/1",
     "run": {"name", "started_at", "duration_s", "users_max", "host", "api", "model",
             "profile", "classes_mix", "seed", "ladder", "degradation", "workers", "summary_schema",
             "gpus", "tok_s_per_gpu"},                 # GPUs seen by the GPU metrics (null: unknown)
     "warnings": [str], "errors_by_kind": {kind: n}, "errors_examples": {kind: message},
     "error_backoff": {"waits", "seconds"},
     "baseline": ..., "verdict": ...,           # as in the summary (null without a ladder)
     "steps": [STEP],                           # [] without a ladder
     "overall": ROW, "classes": [ROW + {"weight", "share", "safe_users", "breach"}],
     "findings": [...],                         # as in the summary
     "reasoning": {"rows": [REASONING], "tokens", "from_usage", "counted", "hidden"} | null,  # null: nothing reasoned
     "buffered_token_jumps": n,                 # events that carried k > 1 tokens (whole run, any outcome)
     "arrival": ARRIVAL | null,                 # open loop only (llmload.report.arrivals)
     "intervals": [...], "thresholds": {...} | null,   # 95 % intervals, --threshold (report.intervals, .thresholds)
     "repeat": {...} | null,                # --repeat N: the aggregate's rows (report.repeat)
     "steady": {"run", "steps"} | null,     # the summary's steady block (metrics.steady)
     "signals": {"server": {name: {"unit", "mean", "max"}}, "gpu": {...}},   # whole run
     "series": {"t0": wall s, "signals": {"server.waiting": [[t_s, v], ...], "gpu.utilization": ...},
                "steps": [{"index", "users", "start_s", "steady_s", "end_s"}]} | null}

    ROW  = {"name", "requests", "ok", "errors", "error_rate", "tok_s", "req_s",
            "ttft_p50", "ttft_p99", "tpot_p50", "tpot_p99", "itl_p50", "itl_p99", "e2e_p50", "e2e_p99",
            "ttft_grade",                                                   (llmload.analysis.grade)
            "good_requests"?, "attainment"?, "goodput_req_s"?, "goodput_tok_s"?,
            "cached_prompt_tokens", "prefix_cache_hit_ratio"}  (ms; goodput: runs with SLOs)
    a class ROW also has "by_turn": [TURN_ROW] (empty for a single-request class), TURN_ROW =
            {"turn": "1".."10+" (an agent class: then "tool turns", "answer turns"), "requests", "ok", "input_tokens_mean", "cached_prompt_tokens",
             "prefix_cache_hit_ratio", "ttft_p50", "ttft_p99", "tpot_p50", "tpot_p99", "e2e_p50", "e2e_p99"}
    REASONING = {"name", "reasoned", "ttft_p50", "ttfo_p50", "ttfo_p99", "reasoning_p50", "reasoning_p99",
                 "reasoning_tokens", "reasoning_tokens_mean", "hidden"}  (ms; classes that reasoned, then overall)
    STEP = ROW + {"index", "users", "steady_s", "status": "baseline" | "ok" | "safe" | "breach" | "over",
                  "server": {signal: mean}, "gpu": {signal: mean}, "rate_offered"?, "rate_achieved"?,
                  "sessions"?}                  (a ladder over sessions: its users, each one session)

A ladder over sessions (:mod:`llmload.analysis.sessions`) adds ``"sessions": {"headline", "lines"}``: its
max-sessions verdict in words (:mod:`llmload.report.session_lines`); an embeddings or rerank run adds
``"latency": "e2e"`` (its requests have no TTFT or TPOT: the writers show latency = E2E). Other runs have neither.
    a class ROW of a rate ladder also has "safe_rate": the offered rate of its per-class safe step

Series times are seconds from ``t0`` (the test start); the plot input is this plain
``{signal: [(t, value), ...]}`` mapping. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from llmload.analysis.grade import grade_ttft
from llmload.analysis.sessions import result_over_sessions, session_verdicts
from llmload.analysis.steps import batched
from llmload.jsonvalue import Json
from llmload.metrics.parts.agents import AgentFigures
from llmload.report.arrivals import arrival_data
from llmload.report.intervals import interval_rows
from llmload.report.repeat_table import repeat_data
from llmload.report.session_lines import session_headline, session_sentence
from llmload.report.threshold_table import threshold_data
from llmload.results.judgement import Judgement
from llmload.results.model import RunResult, Stats, StepResult
from llmload.results.summary import SCHEMA, baseline_dict

if TYPE_CHECKING:
    from llmload.rundir import Run

__all__ = ["PLOTTED_SIGNALS", "REPORT_SCHEMA", "build_report", "row", "series_points", "turn_rows"]

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


def _r(x: float | None, digits: int = 3) -> float | None:
    return None if x is None else round(x, digits)


def row(name: str, stats: Stats) -> dict[str, Json]:
    """The report's flat view of one :class:`Stats` (ms, to µs)."""
    out: dict[str, Json] = {
        "name": name,
        "requests": stats.requests,
        "ok": stats.ok,
        "errors": stats.errors,
        "error_rate": round(stats.errors / stats.requests, 6) if stats.requests else None,
        "tok_s": round(stats.output_tokens_per_s, 3),
        "req_s": round(stats.requests_per_s, 3),
    }
    for metric in ("ttft", "tpot", "itl", "e2e"):
        lat = stats.lat(metric)
        out[f"{metric}_p50"], out[f"{metric}_p99"] = _r(lat.p50), _r(lat.p99)
    out["ttft_grade"] = grade_ttft(stats.lat("ttft").p50)
    g = stats.goodput
    if g is not None:
        out.update(good_requests=g.good_requests, attainment=_r(g.attainment, 4),
                   goodput_req_s=round(g.requests_per_s, 3), goodput_tok_s=round(g.output_tokens_per_s, 3))  # fmt: skip
    out["cached_prompt_tokens"] = stats.cached_prompt_tokens
    out["prefix_cache_hit_ratio"] = _r(stats.prefix_cache_hit_ratio, 4)
    return out


def turn_rows(stats: Stats) -> list[dict[str, Json]]:
    """One TURN_ROW per conversation turn of ``stats`` (none for a single-request class), then per agent turn kind."""
    out = []
    kinds = {k.replace("_", " ") + "s": t for k, t in stats.part(AgentFigures).kinds.items()}  # agent classes
    for key, t in {**stats.by_turn, **kinds}.items():
        r: dict[str, Json] = {"turn": key, "requests": t.requests, "ok": t.ok, "input_tokens_mean": _r(t.input_tokens_mean, 1),
                             "cached_prompt_tokens": t.cached_prompt_tokens, "prefix_cache_hit_ratio": _r(t.prefix_cache_hit_ratio, 4)}  # fmt: skip
        for metric in ("ttft", "tpot", "e2e"):
            lat = t.lat(metric)
            r[f"{metric}_p50"], r[f"{metric}_p99"] = _r(lat.p50), _r(lat.p99)
        out.append(r)
    return out


def _reasoning_row(name: str, s: Stats) -> dict[str, Json]:
    ttft, ttfo, reasoning = s.lat("ttft"), s.lat("ttfo"), s.lat("reasoning")
    return {
        "name": name,
        "reasoned": s.reasoned,
        "ttft_p50": _r(ttft.p50),
        "ttfo_p50": _r(ttfo.p50),
        "ttfo_p99": _r(ttfo.p99),
        "reasoning_p50": _r(reasoning.p50),
        "reasoning_p99": _r(reasoning.p99),
        "reasoning_tokens": s.reasoning_tokens,
        "reasoning_tokens_mean": _r(s.reasoning_tokens_mean),
        "hidden": s.hidden_reasoning,
    }


def _reasoning(result: RunResult) -> dict[str, Json] | None:
    """TTFO and reasoning per class that reasoned, and overall; None when no request reasoned."""
    o = result.overall
    if not o.reasoned:
        return None
    rows = [_reasoning_row(n, s) for n, s in result.classes.items() if s.reasoned]
    return {"rows": [*rows, _reasoning_row("overall", o)], "tokens": o.reasoning_tokens,
            "from_usage": o.reasoning_from_usage, "counted": o.reasoning_counted, "hidden": o.hidden_reasoning}  # fmt: skip


def series_points(timeseries: Mapping[str, Any] | None) -> dict[str, list[tuple[float, float | None]]]:
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


def _step_signals(step: StepResult, points: dict[str, list[tuple[float, float | None]]]) -> dict[str, Json]:
    """Per-step engine / GPU means: the results' when present, else from the series."""
    out: dict[str, Json] = {}
    for part, names in _STEP_SIGNALS.items():
        given = getattr(step, part)
        means = {}
        for name in names:
            if name in given and isinstance(given[name], dict):
                means[name] = given[name].get("mean")
            elif f"{part}.{name}" in points:
                means[name] = _window_mean(points[f"{part}.{name}"], step.steady_from, step.ended_at)
        means = {k: v for k, v in means.items() if v is not None}
        if means:
            out[part] = means
    return out


def _status(step: StepResult, j: Judgement | None) -> str:
    index = step.index
    if j is not None and j.baseline is not None and j.baseline.step == index:
        return "baseline"
    if j is None:
        return "ok"
    v = j.verdict
    breach = v.breach
    if breach is not None and breach.step == index:
        return "breach"
    if v.safe_step == index:
        return "safe"
    if breach is not None and breach.step is not None and index > breach.step:
        return "over"
    return "ok"


def _tail_ms(stats: Stats) -> dict[str, float] | None:
    """The step's p99 TTFT split by the tail attribution: ``{part: share x TTFT p99 (ms)}``; None without timing."""
    t = stats.phases.tail.get("p99")
    if t is None or not t.requests or t.ttft_ms is None:
        return None
    return {k: round(v * t.ttft_ms, 3) for k, v in t.shares.items() if v is not None}


def _steps(result: RunResult, points: dict[str, list[tuple[float, float | None]]]) -> list[dict[str, Json]]:
    out = []
    over = result_over_sessions(result)
    for step in result.steps:
        name = f"{step.users} session{'s' if step.users != 1 else ''}" if over else f"{step.users} users"
        r = row(step.label if step.rate_offered is not None else name, step.overall)
        r.update(index=step.index, users=step.users, steady_s=step.steady_s, status=_status(step, result.judgement),
                 phases_p99_ms=_tail_ms(step.overall), **_step_signals(step, points))  # fmt: skip
        if step.rate_offered is not None:  # a rate ladder's step
            r.update(rate_offered=step.rate_offered, rate_achieved=step.rate_achieved)
        elif over:
            r["sessions"] = step.users
        out.append(r)
    return out


def _classes(result: RunResult) -> list[dict[str, Json]]:
    per_class = result.judgement.verdict.per_class if result.judgement is not None else {}
    rates = {st.index: st.rate_offered for st in result.steps if st.rate_offered is not None}
    total = result.overall.requests
    out = []
    for name, stats in result.classes.items():
        r = row(name, stats)
        judged = per_class.get(name)
        r.update(
            weight=result.weights.get(name),
            share=round(stats.requests / total, 4) if total else None,
            safe_users=judged.safe_users if judged else None,
            breach=judged.breach.to_dict() if judged and judged.breach else None,
            by_turn=turn_rows(stats),
        )
        if rates:  # a rate ladder: every step has the same users (the -u cap), its rate is what it is
            r["safe_rate"] = rates.get(judged.safe_step) if judged and judged.safe_step is not None else None
        out.append(r)
    return out


def _signals(result: RunResult) -> dict[str, Json]:
    out: dict[str, Json] = {}
    for part in ("server", "gpu"):
        sigs = (getattr(result, part) or {}).get("signals") or {}
        picked = {
            name: {"unit": s.get("unit"), "mean": s.get("mean"), "max": s.get("max")}
            for name, s in sigs.items()
            if isinstance(s, dict) and s.get("mean") is not None
        }
        if picked:
            out[part] = picked
    return out


def _series(result: RunResult, timeseries: Mapping[str, Any] | None) -> dict[str, Json] | None:
    points = series_points(timeseries)
    if not points:
        return None
    t0 = (timeseries or {}).get("started_at") or min(t for pts in points.values() for t, _ in pts)
    rel = lambda t: None if t is None else round(t - t0, 3)  # noqa: E731
    return {
        "t0": t0,
        "signals": {k: [[rel(t), v] for t, v in pts] for k, pts in points.items()},
        "steps": [
            {"index": s.index, "users": s.users, "start_s": rel(s.started_at), "steady_s": rel(s.steady_from),
             "end_s": rel(s.ended_at), **({"rate_offered": s.rate_offered} if s.rate_offered is not None else {})}
            for s in result.steps
        ],
    }  # fmt: skip


def _run_meta(name: str, result: RunResult, config_file: Mapping[str, Any] | None) -> dict[str, Json]:
    config = result.config
    profile = result.profile
    mix = ":".join(f"{c.get('weight'):g}" for c in profile.get("classes") or [] if isinstance(c.get("weight"), (int, float)))
    return {
        "name": name,
        "started_at": result.started_at,
        "duration_s": round(result.duration_s, 3),
        "users_max": result.users_max,
        "host": (config_file or {}).get("host"),
        "api": config.get("api"),
        "model": config.get("model"),
        "profile": profile.get("name") or config.get("profile"),
        "classes_mix": mix or None,
        "seed": config.get("seed"),
        "max_tokens_cap": config.get("max_tokens_cap"),
        "ladder": config.get("ladder"),
        "degradation": result.judgement.verdict.degradation if result.judgement else config.get("degradation"),
        "workers": result.workers,
        "summary_schema": result.schema or SCHEMA,
        "gpus": result.gpu_count,
        "tok_s_per_gpu": round(result.overall.output_tokens_per_s / result.gpu_count, 3) if result.gpu_count else None,
    }


def build_report(run: Run) -> dict[str, Any]:  # Any: ``arrival`` is a TypedDict, not Json
    """The report data of ``run`` (a :class:`~llmload.rundir.Run`); see the module docstring."""
    result = run.result
    j = result.judgement
    points = series_points(run.timeseries)
    return {
        "schema": REPORT_SCHEMA,
        "run": _run_meta(run.name, result, run.config),
        "warnings": list(result.warnings),
        "errors_by_kind": dict(result.errors_by_kind),
        "errors_examples": dict(result.errors_examples),
        "error_backoff": {"waits": result.overall.backoffs, "seconds": round(result.overall.backoff_s, 3)},
        "baseline": baseline_dict(result, j) if j is not None else None,
        "verdict": j.verdict.to_dict() if j is not None else None,
        "steps": _steps(result, points),
        "overall": row("overall", result.overall),
        "classes": _classes(result),
        "findings": [f.to_dict() for f in j.findings] if j is not None else [],
        "reasoning": _reasoning(result),
        "buffered_token_jumps": result.overall.buffered_token_jumps,
        "arrival": arrival_data(result),
        "intervals": interval_rows(result),
        "thresholds": threshold_data(result.thresholds),
        "repeat": repeat_data(result.extra),
        "steady": result.extra.get("steady"),
        "signals": _signals(result),
        "series": _series(result, run.timeseries),
    } | _kind(result)


def _kind(result: RunResult) -> dict[str, Any]:
    """A ladder over sessions' verdict in words; an embeddings or rerank run's ``latency`` (module docstring)."""
    out: dict[str, Any] = {}
    if verdicts := session_verdicts(result):
        out["sessions"] = {"headline": session_headline(verdicts[0]), "lines": [session_sentence(v) for v in verdicts]}
    if batched(result.overall):
        out["latency"] = "e2e"
    return out
