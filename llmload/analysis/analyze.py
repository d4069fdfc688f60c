"""The analysis of one run: baseline, safe-concurrency verdict, ranked findings.

:func:`analyze` is what the coordinator calls when a run ends, and what ``llmload report``
calls on a stored summary that predates the analysis. Pure: a
:class:`~llmload.results.model.RunResult` in (per-step figures, p50 intervals and signals
already in it), a :class:`~llmload.results.judgement.Judgement` out. The summary's keys
(docs/summary-schema.md, ``llmload.summary/2``)::

    baseline                                (.baseline; the figures are its step's)
    verdict                                 (.verdict; its ``slo`` from .slo, runs with SLOs only)
    findings                                ranked (.diagnose)
"""

from __future__ import annotations

from dataclasses import replace

from llmload.analysis.baseline import choose_baseline
from llmload.analysis.diagnose import diagnose
from llmload.analysis.findings import build_context
from llmload.analysis.guards import guard
from llmload.analysis.sessions import result_over_sessions
from llmload.analysis.slo_verdict import judge_slo
from llmload.analysis.steps import step_views
from llmload.analysis.verdict import judge_steps, no_verdict
from llmload.results.judgement import Judgement, Verdict
from llmload.results.model import RunResult

__all__ = ["analyze"]


def unsteady_note(verdict: Verdict, result: RunResult, unit: str = "user") -> Verdict:
    """A verdict built on ladder steps that were not steady (``steady.steps``, llmload.metrics.steady) says so in its
    note: the steps up to and including the breach (every step when none breached)."""
    steps = ((result.extra.get("steady") or {}).get("steps")) or []
    last = verdict.breach.step if verdict.breach is not None and verdict.breach.step is not None else None
    moving = [s for s in steps if s.get("steady") is False and (last is None or s.get("index", 0) <= last)]
    if not moving:
        return verdict
    said = "; ".join(f"{s.get('users')} {unit}s: {s.get('reason')}" for s in moving)
    note = f"built on steps that were not steady ({said}): lengthen --step-time (or --step-warmup) and rerun"
    return replace(verdict, note=f"{verdict.note}; {note}" if verdict.note else note)


def analyze(result: RunResult, degradation: float | None = None) -> Judgement:
    """The baseline, verdict and findings of ``result``; ``degradation`` defaults to the run's (``--degradation``)."""
    degradation = result.setup.degradation if degradation is None else degradation
    views = step_views(result)
    baseline = None
    if not result.steps:
        verdict = no_verdict(
            "no_ladder", "no concurrency ladder in this run (--ladder): no safe-concurrency verdict", degradation
        )
    else:
        baseline, problem, note = choose_baseline(views)
        unit = "session" if result_over_sessions(result) else "user"  # each user one session (analysis.sessions)
        top = max((v.users for v in views if v.index is not None and v.index >= 0), default=None)
        if baseline is None:
            verdict = no_verdict(problem or "no_baseline", note, degradation, top)
        else:
            verdict = guard(judge_steps(views, baseline, degradation, unit), views, baseline, unit)
            if note:
                verdict = replace(verdict, baseline_note=note)
            verdict = unsteady_note(verdict, result, unit)
    slo = judge_slo(result)
    if slo is not None:
        verdict = replace(verdict, slo=slo)
    ctx = build_context(views, baseline.step if baseline else None, verdict, result, degradation)
    return Judgement(baseline.ref() if baseline else None, verdict, tuple(diagnose(ctx)))
