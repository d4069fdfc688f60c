"""``--stop-on-breach``: the verdict on closed steps, from the run's per-step histograms, once their reports are in."""

from __future__ import annotations

import pytest

from llmload.ladder import REPORT_GRACE_S, LiveJudge, StepWindow, judge_windows
from llmload.ladder.judge import judge_verdict
from tests.helpers.clock import FakeClock
from tests.helpers.ladder import records


def test_judge_reads_the_runs_step_statistics():
    metrics = {0: records(50.0), 1: records(60.0)}
    w0, w1 = StepWindow(0, 1, 0.0, 1.0, 10.0), StepWindow(1, 4, 10.0, 11.0, 20.0)
    assert judge_windows([w0], metrics, 0.5) is None and judge_windows([w0, w1], metrics, 0.5) is None
    metrics[2] = records(300.0)
    breach = judge_windows([w0, w1, StepWindow(2, 8, 20.0, 21.0, 30.0)], metrics, 0.5)
    assert breach.metric == "ttft_p50" and breach.step == 2 and breach.users == 8
    assert breach.baseline == pytest.approx(50.0, rel=0.02)


def test_judge_uses_the_pre_run_and_error_rates():
    metrics = {-1: records(50.0), 0: records(55.0)}
    w0 = StepWindow(0, 1, 0.0, 1.0, 10.0)
    assert judge_windows([w0], metrics, 0.5) is None  # the pre-run's window is left out; the judge finds it anyway
    metrics[1] = records(55.0)
    metrics[1].merge(records(0.0, n=3, outcome="error"))
    breach = judge_windows([w0, StepWindow(1, 4, 10.0, 11.0, 20.0)], metrics, 0.5)
    assert breach.metric == "error_rate" and breach.value == pytest.approx(1 / 3, abs=1e-3)
    assert judge_windows([w0], {}, 0.5) is None  # nothing measured yet: no baseline, no breach


def test_live_judge_waits_for_the_reports_then_judges_each_step_once():
    clock = FakeClock(100.0)
    metrics = {0: records(50.0), 1: records(500.0)}
    asked = []

    def step_metrics():
        asked.append(clock.t)
        return metrics

    judge = LiveJudge(step_metrics, degradation=0.5, clock=clock)
    windows = [StepWindow(0, 1, 70.0, 71.0, 80.0), StepWindow(1, 4, 80.0, 81.0, 99.0)]
    assert judge.check(windows) is None  # step 1 ended 1 s ago: its workers' last reports may be missing
    clock.t = 99.0 + REPORT_GRACE_S
    breach = judge.check(windows)
    assert breach is not None and breach.step == 1 and judge.breach is breach
    n = len(asked)
    clock.t += 60
    assert judge.check(windows) is breach and len(asked) == n  # found once, kept: nothing judged again


def test_live_judge_skips_the_pre_run_window_and_uses_its_degradation():
    clock = FakeClock(1000.0)
    metrics = {-1: records(50.0), 0: records(60.0), 1: records(70.0)}
    windows = [StepWindow(-1, 1, 0.0, 0.0, 5.0), StepWindow(0, 1, 5.0, 6.0, 10.0), StepWindow(1, 4, 10.0, 11.0, 20.0)]
    assert LiveJudge(lambda: metrics, 0.5, clock).check(windows) is None  # 70 ms <= 1.5 x 50 ms
    strict = LiveJudge(lambda: metrics, 0.1, clock).check(windows)
    assert strict is not None and strict.step == 0 and strict.metric == "ttft_p50"  # 60 ms > 1.1 x 50 ms



def test_the_live_verdict_of_a_ladder_over_sessions_names_sessions():
    windows = [StepWindow(0, 1, 0.0, 1.0, 10.0), StepWindow(1, 4, 10.0, 11.0, 20.0)]
    v = judge_verdict(windows, {0: records(50.0, turn=1), 1: records(55.0, turn=2)}, 0.5)
    assert v is not None and v.status == "ok" and "holds at least 4 sessions" in v.note
    users = judge_verdict(windows, {0: records(50.0), 1: records(55.0)}, 0.5)
    assert users is not None and "holds at least 4 users" in users.note
