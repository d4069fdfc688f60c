"""Analysis of a run: per-step figures, the single-request baseline, the safe-concurrency verdict, the diagnosis.

Pure functions over data (no printing, no I/O), one concept per module:

* :mod:`~llmload.analysis.steps` — per-step figures (error rate, Little's-law in-flight, p50 intervals) and views;
* :mod:`~llmload.analysis.signals` — engine/GPU series averaged over each steady window;
* :mod:`~llmload.analysis.baseline` — which step is the baseline;
* :mod:`~llmload.analysis.verdict` — safe concurrency, p99 and per-class verdicts, band, recommended limit;
* :mod:`~llmload.analysis.findings` — the finding type, the rules' context, the rule decorator;
* :mod:`~llmload.analysis.rules_queue`, :mod:`~llmload.analysis.rules_memory` — the rules;
* :mod:`~llmload.analysis.rules` — the rule table (:data:`RULES`);
* :mod:`~llmload.analysis.diagnose` — run the table, rank, ``not_enough_signals``;
* :mod:`~llmload.analysis.analyze` — all of it, added to a summary;
* :mod:`~llmload.analysis.stop` — the ``--stop-on-breach`` judge.

See docs/diagnosis.md (the rule table, the verdict's rules) and docs/summary-schema.md.
"""

from __future__ import annotations

from llmload.analysis.analyze import analyze, annotate_steps
from llmload.analysis.baseline import MIN_REQUESTS, Baseline, choose_baseline
from llmload.analysis.diagnose import NOT_ENOUGH_SIGNALS, diagnose, rank
from llmload.analysis.findings import Context, Finding, build_context, rule
from llmload.analysis.rules import RULES, rule_ids
from llmload.analysis.signals import Series, annotate_signals, series_from_timeseries, window_stats
from llmload.analysis.steps import Perf, StepView, median_ci, step_ci, step_views
from llmload.analysis.stop import make_judge
from llmload.analysis.verdict import ERROR_RATE_LIMIT, judge_steps, no_verdict

__all__ = [
    "ERROR_RATE_LIMIT",
    "MIN_REQUESTS",
    "NOT_ENOUGH_SIGNALS",
    "RULES",
    "Baseline",
    "Context",
    "Finding",
    "Perf",
    "Series",
    "StepView",
    "analyze",
    "annotate_signals",
    "annotate_steps",
    "build_context",
    "choose_baseline",
    "diagnose",
    "judge_steps",
    "make_judge",
    "median_ci",
    "no_verdict",
    "rank",
    "rule",
    "rule_ids",
    "series_from_timeseries",
    "step_ci",
    "step_views",
    "window_stats",
]
