"""``--stop-on-breach``: the judge the step tracker asks after each closed step.

:class:`~llmload.steps.StepTracker` calls ``judge(closed_windows)`` a report interval
after a step ends; the judge builds those steps' figures from the run's per-step
histograms (the same :func:`~llmload.report.summary.build_steps` as the summary), picks
the baseline and applies the verdict's p50 and error-rate limits (:mod:`.verdict`). It
returns the breach dict (``{"step", "users", "metric", "value", "limit", "baseline", ...}``)
or None — also None while there is no usable baseline or too few requests to judge.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from llmload.analysis.analyze import annotate_steps
from llmload.analysis.baseline import choose_baseline
from llmload.analysis.steps import step_views
from llmload.analysis.verdict import judge_steps
from llmload.metrics.recorder import MetricSet
from llmload.report.summary import build_steps
from llmload.shapes.ladder import BASELINE_STEP, StepWindow

__all__ = ["make_judge"]


def make_judge(
    step_metrics: Callable[[], Mapping[int, MetricSet]], degradation: float
) -> Callable[[list[StepWindow]], dict[str, Any] | None]:
    """A judge over the closed ``windows``, reading the run's per-step statistics through ``step_metrics()``."""

    def judge(windows: list[StepWindow]) -> dict[str, Any] | None:
        metrics = dict(step_metrics())
        ws = list(windows)
        if BASELINE_STEP in metrics and all(w.index != BASELINE_STEP for w in ws):
            ws.insert(0, StepWindow(BASELINE_STEP, 1, 0.0))  # the pre-run: latencies only
        entries = build_steps(ws, metrics, {})
        annotate_steps(entries)
        views = step_views({"steps": entries})
        baseline, _, _ = choose_baseline(views)
        if baseline is None:
            return None
        verdict = judge_steps(views, baseline, degradation)
        return verdict["breach"] if verdict["status"] == "breach" else None

    return judge
