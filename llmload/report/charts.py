"""The report's charts, as :class:`~llmload.report.svg.Chart` objects built from report data.

* :func:`ladder_charts` — TTFT, TPOT, output tok/s and error rate per ladder step, one point per step on a categorical users axis, with the
  baseline and the limit as reference lines, the safe zone shaded and the breach ringed;
* :func:`ladder_charts` also draws, when the server sent per-request timing, the p99 TTFT
  of each step as a stacked bar of its phases (gateway, server queue, prefill, other);
* :func:`timeline_charts` — engine queue (waiting / running), KV-cache usage, GPU
  utilisation and memory bandwidth, engine output tokens/s over the run, with step
  boundaries and steady windows; from the plain ``{signal: [(t, value), ...]}`` series.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from llmload.report import fmt
from llmload.report.svg import Band, Bar, Chart, HRule, Line, Point, VMark
from llmload.report.theme import PALETTE

__all__ = ["ladder_charts", "timeline_charts"]

Figure = tuple[str, Chart]


def _latency_unit(values: list[float | None]) -> tuple[str, float]:
    """ms, or s when the values reach 5 s (ticks stay short)."""
    top = max((v for v in values if v is not None), default=0.0)
    return ("s", 1000.0) if top >= 5000 else ("ms", 1.0)


def _ladder_steps(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in report.get("steps") or [] if (s.get("index") or 0) >= 0]


def _ticks(steps: list[dict[str, Any]]) -> list[tuple[int, str]]:
    """One tick per step: its users, or its offered rate for a rate ladder."""
    return [(i, f"{s['rate_offered']:g}" if s.get("rate_offered") is not None else str(s.get("users")))
            for i, s in enumerate(steps)]  # fmt: skip


def _x_label(steps: list[dict[str, Any]]) -> str:
    if any(s.get("rate_offered") is not None for s in steps):
        return "offered rate, req/s (rate ladder step)"
    return "concurrent users (ladder step)"


def _safe_band(steps: list[dict[str, Any]], verdict: dict[str, Any] | None) -> list[Band]:
    if not verdict or verdict.get("safe_step") is None:
        return []
    idx = next((i for i, s in enumerate(steps) if s.get("index") == verdict["safe_step"]), None)
    if idx is None:
        return []
    return [Band(-0.5, idx + 0.5, PALETTE["safe"], 0.08, f"safe ≤ {fmt.step_label(steps[idx])}")]


def _latency_chart(report: dict[str, Any], metric: str, title: str) -> Chart:
    steps = _ladder_steps(report)
    verdict, baseline = report.get("verdict") or {}, report.get("baseline") or {}
    values = [s.get(f"{metric}_p50") for s in steps] + [s.get(f"{metric}_p99") for s in steps]
    unit, div = _latency_unit(values)
    scale = lambda v: None if v is None else v / div  # noqa: E731
    lines = [
        Line("p50", [(i, scale(s.get(f"{metric}_p50"))) for i, s in enumerate(steps)], PALETTE["p50"], markers=True),
        Line("p99", [(i, scale(s.get(f"{metric}_p99"))) for i, s in enumerate(steps)], PALETTE["p99"], dashed=True, markers=True),
    ]
    rules = []
    base = (baseline.get(f"{metric}_ms") or {}).get("p50")
    if base is not None:
        rules.append(HRule(base / div, f"baseline {fmt.ms(base)}", PALETTE["baseline"]))
    limit = (verdict.get("limits") or {}).get(f"{metric}_p50_ms")
    if limit is not None:
        rules.append(HRule(limit / div, f"limit {fmt.ms(limit)}", PALETTE["limit"]))
    points = []
    breach = verdict.get("breach") or {}
    if breach.get("metric") == f"{metric}_p50" and breach.get("value") is not None:
        idx = next((i for i, s in enumerate(steps) if s.get("index") == breach.get("step")), None)
        if idx is not None:
            points.append(Point(idx, breach["value"] / div, "breach", PALETTE["breach"]))
    return Chart(
        title=title,
        x_label=_x_label(steps),
        y_label=f"{title.split(' ')[0]} ({unit})",
        lines=lines,
        rules=rules,
        bands=_safe_band(steps, verdict),
        points=points,
        x_ticks=_ticks(steps),
        x_range=(-0.5, len(steps) - 0.5),
    )


def _simple_ladder_chart(report: dict[str, Any], title: str, y_label: str, line: Line, rules: list[HRule]) -> Chart:
    steps = _ladder_steps(report)
    return Chart(
        title=title,
        x_label=_x_label(steps),
        y_label=y_label,
        lines=[line],
        rules=rules,
        bands=_safe_band(steps, report.get("verdict")),
        x_ticks=_ticks(steps),
        x_range=(-0.5, len(steps) - 0.5),
    )


_PHASE_PARTS = (("client_wait", "client wait (-u cap)", "#a855f7"), ("gateway", "gateway", "#9ca3af"), ("server_queue", "server queue", "#ea580c"),
                ("prefill", "prefill", "#2563eb"), ("other", "other (queue+network)", "#d1d5db"))  # fmt: skip


def _phase_chart(steps: list[dict[str, Any]]) -> Chart | None:
    """p99 TTFT per step, stacked by where the time went; None when no step had server timing."""
    if not any(s.get("phases_p99_ms") for s in steps):
        return None
    tops = [sum((s.get("phases_p99_ms") or {}).values()) for s in steps]
    unit, div = _latency_unit(tops)
    bars = [
        Bar(i, [((s["phases_p99_ms"].get(key) or 0.0) / div, color) for key, _, color in _PHASE_PARTS])
        for i, s in enumerate(steps)
        if s.get("phases_p99_ms")
    ]
    return Chart(
        title="p99 TTFT by phase",
        x_label=_x_label(steps),
        y_label=f"p99 TTFT ({unit})",
        lines=[Line(label, [], color) for _, label, color in _PHASE_PARTS],  # legend swatches
        bars=bars,
        x_ticks=_ticks(steps),
        x_range=(-0.5, len(steps) - 0.5),
    )


def ladder_charts(report: dict[str, Any]) -> list[Figure]:
    """(caption, chart) per ladder chart; [] without ladder steps."""
    steps = _ladder_steps(report)
    if not steps:
        return []
    out: list[Figure] = [
        ("Time to first token vs concurrency", _latency_chart(report, "ttft", "TTFT per step")),
        ("Time per output token vs concurrency", _latency_chart(report, "tpot", "TPOT per step")),
    ] if report.get("latency") != "e2e" else [  # embeddings, rerank: one JSON answer, its latency (E2E)
        ("Latency (E2E) vs concurrency", _latency_chart(report, "e2e", "Latency per step (E2E)"))]  # fmt: skip
    tok = Line("output tok/s", [(i, s.get("tok_s")) for i, s in enumerate(steps)], PALETTE["throughput"], markers=True)
    out.append(("Output throughput vs concurrency", _simple_ladder_chart(report, "Output tokens/s", "tokens/s", tok, [])))
    if steps:  # always shown: the error rate is one of the verdict's three limits
        err = [(i, None if s.get("error_rate") is None else s["error_rate"] * 100) for i, s in enumerate(steps)]
        limit = ((report.get("verdict") or {}).get("limits") or {}).get("error_rate", 0.01)
        rule = [HRule(limit * 100, f"limit {limit * 100:g} %", PALETTE["limit"])]
        chart = _simple_ladder_chart(report, "Error rate", "errors (%)", Line("error rate", err, PALETTE["requests"], markers=True), rule)
        out.append(("Error rate vs concurrency", chart))
    phases = _phase_chart(steps)
    if phases is not None:
        out.append(("Where the p99 TTFT went, per step (mean shares of the requests at or above it)", phases))
    return out


# -- over time -----------------------------------------------------------------------------
_TIMELINE = (
    # caption, y label, y max, scale, [(signal, label, colour)]
    ("Engine queue: waiting and running requests", "requests", None, 1.0,
     [("server.waiting", "waiting", "waiting"), ("server.running", "running", "running")]),
    ("KV-cache usage", "KV cache used (%)", 100.0, 100.0, [("server.kv_cache_usage", "KV cache", "kv")]),
    ("GPU utilisation and memory bandwidth", "percent of peak (%)", 100.0, 100.0,
     [("gpu.utilization", "utilisation", "gpu_util"), ("gpu.memory_bandwidth_utilization", "memory bandwidth", "gpu_bw"),
      ("gpu.sm_activity", "SM activity", "gpu_sm")]),
    ("Engine output tokens per second", "tokens/s", None, 1.0,
     [("server.generation_tokens_rate_per_s", "generated tok/s", "gen_tok")]),
)  # fmt: skip


def _time_axis(span: float) -> tuple[float, str, Callable[[float], str]]:
    if span >= 600:
        return 60.0, "time into the run (min)", lambda v: f"{v:g}"
    return 1.0, "time into the run (s)", lambda v: f"{v:g}"


def timeline_charts(report: dict[str, Any]) -> list[Figure]:
    """(caption, chart) per engine / GPU chart that has data; [] without series."""
    series = report.get("series") or {}
    signals: dict[str, list[tuple[float, float | None]]] = series.get("signals") or {}  # JSON pairs [t_s, v]
    if not signals:
        return []
    times = [t for pts in signals.values() for t, _ in pts if t is not None]
    span = max(times) - min(times) if times else 0.0
    div, x_label, x_format = _time_axis(span)
    steps = series.get("steps") or []
    marks, bands = [], []
    for s in steps:
        if s.get("start_s") is not None:
            label = fmt.step_label(s) if len(steps) <= 8 else _ticks([s])[0][1]  # many steps: the bare number
            marks.append(VMark(s["start_s"] / div, label if (s.get("index") or 0) >= 0 else "baseline"))
        if s.get("steady_s") is not None and s.get("end_s") is not None:
            bands.append(Band(s["steady_s"] / div, s["end_s"] / div, PALETTE["steady"], 0.05))
    x_range = (min(times) / div, max(times) / div) if times else None
    out: list[Figure] = []
    for caption, y_label, y_max, scale, wanted in _TIMELINE:
        lines = [
            Line(label, [(t / div, None if v is None else v * scale) for t, v in signals[key]], PALETTE[colour])
            for key, label, colour in wanted
            if key in signals
        ]
        if not lines:
            continue
        chart = Chart(
            title=caption,
            x_label=x_label + ("; shaded: steady windows" if bands else ""),
            y_label=y_label,
            lines=lines,
            marks=marks,
            bands=bands,
            x_range=x_range,
            x_format=x_format,
            y_max=y_max,
        )
        out.append((caption, chart))
    return out
