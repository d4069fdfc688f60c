"""The typed results of a run: measured (:mod:`.model`) and judged (:mod:`.judgement`).

* :mod:`~llmload.results.model` — :class:`Latency`, :class:`Stats`, :class:`StepResult`, :class:`RunResult`;
* :mod:`~llmload.results.setup` — :class:`RunSetup` (the run's flags and profile, typed) and :class:`LoadState`;
* :mod:`~llmload.results.judgement` — :class:`Judgement`: baseline, :class:`Verdict`, :class:`Finding` s;
* :mod:`~llmload.results.build` — from the merged histograms (no rounding), with the steps' p50 intervals;
* :mod:`~llmload.results.step_signals` — engine/GPU series over a window;
* :mod:`~llmload.results.summary` — the summary dict (``llmload.summary/2``): the one writer that rounds;
* :mod:`~llmload.results.summary_reader` — a saved summary back into a :class:`RunResult` (``llmload report`` on old runs);
* :mod:`~llmload.results.arrival_block` — the ``arrival`` block of an open-loop run, and what it warns about;
* :mod:`~llmload.results.prompt_size` — prompt sizes as the server counted them beside llmload's: a warning when they part;
* :mod:`~llmload.results.threshold_verdict` — whether a run met its ``--threshold`` limits, and the exit code;
* :mod:`~llmload.results.repeat_aggregate` — the aggregate of ``--repeat N`` runs: median and spread, does it hold.

Pure data and pure functions: no I/O, no Locust. :mod:`llmload.analysis` reads these types and
produces the :class:`Judgement`; every writer (console, run directory, report, compare) reads them.
"""

from __future__ import annotations

from llmload.results.build import build_result, build_steps, median_ci, stats_of, with_step_signals
from llmload.results.judgement import BaselineRef, Breach, Confidence, Finding, Judgement, PassVerdict, Verdict
from llmload.results.model import BASELINE_STEP, Latency, RunResult, Stats, StepResult
from llmload.results.setup import LoadState, RunSetup
from llmload.results.step_signals import Series, series_from_timeseries, window_stats
from llmload.results.summary import SCHEMA, to_summary
from llmload.results.summary_reader import SummaryError, from_summary

__all__ = [
    "BASELINE_STEP",
    "SCHEMA",
    "BaselineRef",
    "Breach",
    "Confidence",
    "Finding",
    "Judgement",
    "Latency",
    "LoadState",
    "PassVerdict",
    "RunResult",
    "RunSetup",
    "Series",
    "Stats",
    "StepResult",
    "SummaryError",
    "Verdict",
    "build_result",
    "build_steps",
    "from_summary",
    "median_ci",
    "series_from_timeseries",
    "stats_of",
    "to_summary",
    "window_stats",
    "with_step_signals",
]
