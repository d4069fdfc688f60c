"""The analysis of one run, added to its summary: per-step figures, baseline, verdict, findings.

:func:`analyze` is what :meth:`llmload.runtime.Runtime.summary` calls (and what a report
can call again on a stored summary and its series). Pure: a summary dict, plain signal
series (:mod:`.signals`) and, when the run is live, the per-step histograms in; the same
summary, completed, out. Added keys (docs/summary-schema.md, ``llmload.summary/2``)::

    steps[i].overall / steps[i].classes[c]  + "error_rate", "in_flight_mean"   (.steps)
    steps[i].p50_ci95                       {"ttft_ms": [lo, hi], "tpot_ms": [lo, hi]} (with histograms)
    steps[i].server / steps[i].gpu          signal statistics over the steady window (.signals)
    baseline, verdict                       (.baseline, .verdict)
    findings                                ranked (.diagnose)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from llmload.analysis.baseline import choose_baseline
from llmload.analysis.diagnose import diagnose
from llmload.analysis.findings import build_context
from llmload.analysis.signals import Series, annotate_signals
from llmload.analysis.steps import derive_stats, step_ci, step_views
from llmload.analysis.verdict import judge_steps, no_verdict
from llmload.metrics.recorder import MetricSet

__all__ = ["analyze", "annotate_steps"]


def annotate_steps(steps: list[dict[str, Any]], step_metrics: Mapping[int, MetricSet] | None = None) -> None:
    """Add error rates, Little's-law in-flight means and (from histograms) p50 intervals to step entries, in place."""
    for entry in steps:
        users, steady = int(entry.get("users") or 0), float(entry.get("steady_s") or 0.0)
        if entry.get("overall"):
            entry["overall"].update(derive_stats(entry["overall"], users, steady))
        for stats in (entry.get("classes") or {}).values():
            stats.update(derive_stats(stats, users, steady))
        if step_metrics is not None:
            ci = step_ci(step_metrics.get(entry.get("index")))
            if ci:
                entry["p50_ci95"] = ci


def analyze(
    summary: dict[str, Any],
    *,
    degradation: float = 0.5,
    server: Series | None = None,
    gpu: Series | None = None,
    step_metrics: Mapping[int, MetricSet] | None = None,
) -> dict[str, Any]:
    """Complete ``summary`` (in place) with the per-step analysis, ``baseline``, ``verdict`` and ``findings``; return it."""
    steps = summary.get("steps") or []
    annotate_steps(steps, step_metrics)
    annotate_signals(steps, server, gpu)
    views = step_views(summary)
    baseline = None
    if not steps:
        verdict = no_verdict(
            "no_ladder", "no concurrency ladder in this run (--ladder): no safe-concurrency verdict", degradation
        )
    else:
        baseline, problem, note = choose_baseline(views)
        top = max((v.users for v in views if v.index is not None and v.index >= 0), default=None)
        if baseline is None:
            verdict = no_verdict(problem or "no_baseline", note, degradation, top)
        else:
            verdict = judge_steps(views, baseline, degradation)
            if note:
                verdict["baseline_note"] = note
    ctx = build_context(views, baseline.step if baseline else None, verdict, summary, degradation)
    summary["baseline"] = baseline.to_dict() if baseline else None
    summary["verdict"] = verdict
    summary["findings"] = [f.to_dict() for f in diagnose(ctx)]
    return summary
