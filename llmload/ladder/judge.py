"""The verdict while the ladder runs, on each step once it is closed: the LLM tab's "so far", and ``--stop-on-breach``.

:meth:`LiveJudge.check` is asked every tick of the ladder. A step is judged once its
workers' last reports are in (:data:`REPORT_GRACE_S` after it ended): the judge builds the
closed steps' results from the run's per-step histograms
(:func:`~llmload.results.build.build_steps`, as the summary does), picks the baseline and
applies the verdict's p50 and error-rate limits (:mod:`llmload.analysis.verdict`). The
verdict so far (:attr:`LiveJudge.verdict`: safe step, breach) is kept from the last judged
step, and the breach (:class:`~llmload.results.judgement.Breach`) once found; both None
while there is no usable baseline or too few requests to judge. Unlike the summary's, this
verdict is not guarded (:mod:`llmload.analysis.guards`): the summary's is the one to keep.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence

from llmload.analysis.baseline import choose_baseline
from llmload.analysis.sessions import over_sessions
from llmload.analysis.steps import views_of_steps
from llmload.analysis.verdict import judge_steps
from llmload.ladder.tracker import StepWindow
from llmload.metrics.recorder import MetricSet
from llmload.results.build import build_steps
from llmload.results.judgement import Breach, Verdict
from llmload.results.model import BASELINE_STEP

__all__ = ["REPORT_GRACE_S", "LiveJudge", "judge_verdict", "judge_windows"]

#: A closed step is judged this long after it ended, when the workers' reports are in.
REPORT_GRACE_S = 4.0


def judge_verdict(windows: Sequence[StepWindow], metrics: Mapping[int, MetricSet], degradation: float) -> Verdict | None:
    """The verdict on the steps of ``windows`` (the pre-run found in ``metrics`` when it is not among them);
    None without a usable baseline."""
    return _judged(windows, metrics, degradation)[0]


def _judged(windows: Sequence[StepWindow], metrics: Mapping[int, MetricSet],
            degradation: float) -> tuple[Verdict | None, bool]:  # fmt: skip
    """(:func:`judge_verdict`, whether the steps are over sessions: every request a session's turn)."""
    ws = list(windows)
    if BASELINE_STEP in metrics and all(w.index != BASELINE_STEP for w in ws):
        ws.insert(0, StepWindow(BASELINE_STEP, 1, 0.0))  # the pre-run: latencies only
    steps = build_steps(ws, metrics, ())
    views = views_of_steps(steps)
    baseline, _, _ = choose_baseline(views)
    over = over_sessions([st.overall for st in steps])  # each user one session: its notes name sessions
    if baseline is None:
        return None, over
    return judge_steps(views, baseline, degradation, "session" if over else "user"), over


def judge_windows(windows: Sequence[StepWindow], metrics: Mapping[int, MetricSet], degradation: float) -> Breach | None:
    """The breach among the steps of ``windows`` (see :func:`judge_verdict`), or None."""
    verdict = judge_verdict(windows, metrics, degradation)
    return verdict.breach if verdict is not None and verdict.status == "breach" else None


class LiveJudge:
    """Judges closed steps once each, reading the run's per-step statistics through ``step_metrics()``."""

    def __init__(
        self,
        step_metrics: Callable[[], Mapping[int, MetricSet]],
        degradation: float,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._step_metrics = step_metrics
        self.degradation = degradation
        self._clock = clock
        self._judged = 0
        self.verdict: Verdict | None = None  # on the steps judged so far
        self.breach: Breach | None = None
        self.sessions = False  # the steps judged so far are over sessions (llmload.analysis.sessions)

    @property
    def judged(self) -> int:
        """Closed windows judged so far (the pre-run's included)."""
        return self._judged

    def check(self, windows: Sequence[StepWindow]) -> Breach | None:
        """Judge the steps that closed at least :data:`REPORT_GRACE_S` ago and were not judged yet."""
        if self.breach is not None:
            return self.breach
        now = self._clock()
        closed = [w for w in windows if w.ended_at is not None and now - w.ended_at >= REPORT_GRACE_S]
        if len(closed) > self._judged:
            self._judged = len(closed)
            ladder = [w for w in closed if w.index != BASELINE_STEP] or closed
            self.verdict, self.sessions = _judged(ladder, dict(self._step_metrics()), self.degradation)
            if self.verdict is not None and self.verdict.status == "breach":
                self.breach = self.verdict.breach
        return self.breach
