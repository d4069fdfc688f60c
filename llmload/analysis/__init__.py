"""Analysis of a run: per-step views, the single-request baseline, the safe-concurrency verdict, the diagnosis.

Pure functions over the typed results (:mod:`llmload.results`; no printing, no I/O), one
concept per module:

* :mod:`~llmload.analysis.steps` — per-step views of the results (figures the rules compare);
* :mod:`~llmload.analysis.baseline` — which step is the baseline;
* :mod:`~llmload.analysis.verdict` — safe concurrency, p99 and per-class verdicts, band, recommended limit;
* :mod:`~llmload.analysis.slo_verdict` — the verdict's ``slo``: the largest step meeting the SLO attainment target;
* :mod:`~llmload.analysis.sessions` — a ladder over sessions (conversation or agent users): the max-sessions verdict;
* :mod:`~llmload.analysis.guards` — :func:`~llmload.analysis.guards.guard`: a verdict on too little
  evidence becomes ``inconclusive``;
* :mod:`~llmload.analysis.grade` — the TTFT grade of each class (excellent ... bad);
* :mod:`~llmload.analysis.findings` — the rules' context and the rule decorator;
* :mod:`~llmload.analysis.rules_target` — the rules before every other: the target answers only
  errors, or refuses the load (rate limited);
* :mod:`~llmload.analysis.rules_queue` — where requests wait: the client, the gateway, the scheduler;
* :mod:`~llmload.analysis.rules_memory` — the GPU's memory and compute: KV cache, decode bandwidth, prefill;
* :mod:`~llmload.analysis.rules_cache` — the engine's prefix cache does not hit where the workload
  shares prefixes;
* :mod:`~llmload.analysis.cache` — :class:`~llmload.analysis.cache.CacheView`, what the prefix-cache
  rule reads of a run;
* :mod:`~llmload.analysis.rules` — the rule table (:data:`RULES`);
* :mod:`~llmload.analysis.diagnose` — run the table, rank, ``not_enough_signals``;
* :mod:`~llmload.analysis.analyze` — all of it: a :class:`~llmload.results.judgement.Judgement`.

The ``--stop-on-breach`` judge that applies the verdict while a ladder runs is
:mod:`llmload.ladder.judge`. See docs/diagnosis.md (the rule table, the verdict's rules)
and docs/summary-schema.md.
"""

from __future__ import annotations

from llmload.analysis.analyze import analyze
from llmload.analysis.baseline import MIN_REQUESTS, Baseline, choose_baseline
from llmload.analysis.diagnose import NOT_ENOUGH_SIGNALS, diagnose, rank
from llmload.analysis.findings import Context, Finding, build_context, rule
from llmload.analysis.rules import RULES, rule_ids
from llmload.analysis.steps import Perf, StepView, step_views, views_of_steps
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
    "StepView",
    "analyze",
    "build_context",
    "choose_baseline",
    "diagnose",
    "judge_steps",
    "no_verdict",
    "rank",
    "rule",
    "rule_ids",
    "step_views",
    "views_of_steps",
]
