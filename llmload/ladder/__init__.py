"""The concurrency ladder, in one package: plan, step tracker, live judge, and the Locust shape.

* :mod:`~llmload.ladder.plan` — what runs when (:func:`step_at`), and :class:`LadderDriver`, the
  shape's logic (pre-run baseline, steps, stop-on-breach) without Locust;
* :mod:`~llmload.ladder.tracker` — :class:`StepTracker`: the running step on every process (the
  master broadcasts changes as :data:`MESSAGE`), its windows, the steady step a request records;
* :mod:`~llmload.ladder.judge` — :class:`LiveJudge`: ``--stop-on-breach``'s verdict on closed steps;
* :mod:`~llmload.ladder.status` — :func:`~llmload.ladder.status.ladder_status`: where a running ladder
  is (step, time left, verdict so far), one line for the LLM tab and fields for scripts;
* :mod:`~llmload.ladder.shape` — :class:`~llmload.ladder.shape.LadderShape`, the ``LoadTestShape``
  a locustfile declares (``from llmload.ladder.shape import LadderShape``; the only module here
  that imports Locust, so it is not imported by this package).

The ladder's flags are validated in :mod:`llmload.config.ladder`; the wiring is
:func:`llmload.plugin.install` (driver attached to the shape, tracker shared with the load
process and the coordinator, judge built per test by the coordinator).
"""

from __future__ import annotations

from llmload.ladder.judge import REPORT_GRACE_S, LiveJudge, judge_windows
from llmload.ladder.plan import LadderDriver, StepAt, step_at
from llmload.ladder.tracker import MESSAGE, StepTracker, StepWindow

__all__ = [
    "MESSAGE",
    "REPORT_GRACE_S",
    "LadderDriver",
    "LiveJudge",
    "StepAt",
    "StepTracker",
    "StepWindow",
    "judge_windows",
    "step_at",
]
