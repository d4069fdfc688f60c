"""The ladder's schedule and its driver (the shape's logic without Locust): steps, warm-ups, pre-run, the end, a breach."""

from __future__ import annotations

import pytest

from llmload.config import LadderConfig
from llmload.errors import ConfigError
from llmload.ladder import REPORT_GRACE_S, LadderDriver, LiveJudge, StepAt, StepTracker, step_at
from llmload.ladder.plan import FixedLoad, cut_short
from llmload.ladder.tracker import StepWindow
from tests.helpers.clock import FakeClock
from tests.helpers.ladder import records

PLAN = LadderConfig(levels=(1, 4, 8), step_s=10.0, warmup_s=2.0)


def test_step_at_walks_the_levels_with_a_warm_up_each():
    assert step_at(PLAN, 0.0) == StepAt(0, 1, False)
    assert step_at(PLAN, 1.99) == StepAt(0, 1, False)
    assert step_at(PLAN, 2.0) == StepAt(0, 1, True)
    assert step_at(PLAN, 10.5) == StepAt(1, 4, False)
    assert step_at(PLAN, 29.9) == StepAt(2, 8, True)
    assert step_at(PLAN, 30.0) is None


def test_the_plan_is_validated_once():
    with pytest.raises(ConfigError, match="--step-warmup 10s: must be shorter than --step-time 10s"):
        LadderConfig(levels=(1,), step_s=10.0, warmup_s=10.0)
    with pytest.raises(ConfigError, match="--step-time: must be > 0"):
        LadderConfig(levels=(1,), step_s=0.0, warmup_s=0.0)
    assert PLAN.rate_for(8) == 8.0 and LadderConfig((1,), 1.0, 0.0, spawn_rate=2.0).rate_for(8) == 2.0


def test_driver_runs_the_steps_then_ends_the_test():
    tracker = StepTracker(clock=FakeClock())
    d = LadderDriver(tracker, baseline_ok=lambda: 0)
    assert d.tick(0.0) is None  # no plan: the shape ends at once
    d.configure(PLAN, None)
    assert d.tick(0.0) == (1, 1.0) and tracker.steady_step is None
    assert d.tick(3.0) == (1, 1.0) and tracker.steady_step == 0
    assert d.tick(12.5) == (4, 4.0) and tracker.current() == (1, 4, True)
    assert d.tick(30.0) is None and tracker.current() is None  # the end closes the last window
    assert [w.index for w in tracker.windows] == [0, 1]


def test_driver_holds_one_user_until_the_pre_run_has_its_requests():
    ok = [0]
    tracker = StepTracker(clock=FakeClock())
    d = LadderDriver(tracker, baseline_ok=lambda: ok[0])
    d.configure(LadderConfig(levels=(2, 4), step_s=10.0, warmup_s=1.0, baseline_requests=5), None)
    assert d.tick(0.0) == (1, 1.0) and tracker.current() == (-1, 1, True)
    ok[0] = 4
    assert d.tick(40.0) == (1, 1.0)  # however long it takes
    ok[0] = 5
    assert d.tick(41.0) == (2, 2.0)  # the ladder's clock starts now
    assert tracker.current() == (0, 2, False) and tracker.windows[0].ended_at is not None
    assert d.tick(52.0) == (4, 4.0)
    assert d.tick(61.0) is None


def test_stop_on_breach_ends_the_ladder_once_a_closed_step_breaks_the_limits():
    clock = FakeClock(0.0)
    tracker = StepTracker(clock=clock)
    metrics = {0: records(50.0), 1: records(400.0), 2: records(400.0)}
    d = LadderDriver(tracker, baseline_ok=lambda: 0)
    plan = LadderConfig(levels=(1, 4, 8), step_s=10.0, warmup_s=1.0, stop_on_breach=True)
    d.configure(plan, LiveJudge(lambda: metrics, 0.5, clock))
    for t in (0.0, 2.0, 10.0, 12.0, 20.0):
        clock.t = t
        assert d.tick(t) is not None
    clock.t = 20.0 + REPORT_GRACE_S
    assert d.tick(clock.t) is None  # step 1 (4 users) closed and breached: the test ends in step 2
    assert tracker.current() is None
    without = LadderDriver(StepTracker(clock=clock), baseline_ok=lambda: 0)
    without.configure(LadderConfig(levels=(1, 4, 8), step_s=10.0, warmup_s=1.0), LiveJudge(lambda: metrics, 0.5, clock))
    assert without.tick(24.0) == (8, 8.0)  # without --stop-on-breach the ladder goes on


def test_without_a_ladder_the_driver_holds_locusts_own_users_read_anew_each_tick():
    load = [FixedLoad(3, 3.0)]
    tracker = StepTracker(clock=FakeClock())
    d = LadderDriver(tracker, baseline_ok=lambda: 0, fixed_load=lambda: load[0])
    assert d.tick(0.0) == (3, 3.0) and tracker.current() is None  # no steps, no step windows
    load[0] = FixedLoad(7, 2.0, run_time=60.0)  # the form edited the running test
    assert d.tick(5.0) == (7, 2.0)
    assert d.tick(60.0) is None  # its run time is up
    load[0] = None
    assert d.tick(1.0) is None  # nothing to hold: the test ends, as without a driver


def test_a_run_time_ends_a_ladder_too_and_a_new_test_gets_its_pre_run_again():
    clock = FakeClock(0.0)
    tracker = StepTracker(clock=clock)
    ok = [5]
    d = LadderDriver(tracker, baseline_ok=lambda: ok[0], fixed_load=lambda: FixedLoad(1, 1.0, run_time=15.0), clock=clock)
    d.configure(LadderConfig(levels=(2, 4), step_s=10.0, warmup_s=1.0, baseline_requests=5), None)
    assert d.tick(0.0) == (2, 2.0) and d.step_ends_at == 10.0  # the pre-run already had its requests
    clock.t = 12.0
    assert d.tick(12.0) == (4, 4.0) and d.step_ends_at == 20.0
    assert d.tick(15.0) is None and tracker.current() is None and d.step_ends_at is None
    ok[0] = 0
    d.configure(d.plan, None)  # the next test (from the web UI) starts with its own pre-run
    assert d.tick(0.0) == (1, 1.0) and tracker.current() == (-1, 1, True)


def test_the_judge_gives_its_verdict_so_far_without_stop_on_breach():
    clock = FakeClock(0.0)
    tracker = StepTracker(clock=clock)
    metrics = {0: records(50.0), 1: records(400.0)}
    judge = LiveJudge(lambda: metrics, 0.5, clock)
    d = LadderDriver(tracker, baseline_ok=lambda: 0, clock=clock)
    d.configure(LadderConfig(levels=(1, 4, 8), step_s=10.0, warmup_s=1.0), judge)
    for t in (0.0, 10.0, 14.0, 20.0, 24.0):
        clock.t = t
        assert d.tick(t) is not None  # the ladder goes on
    assert judge.judged == 2 and judge.verdict.status == "breach" and judge.breach.users == 4
    assert judge.verdict.safe_users == 1


def test_a_ladder_that_ended_early_or_cut_its_last_step_says_so():
    """Stopped from the web UI in its 2nd step: the verdict said "holds at least 4 users; extend --ladder"."""
    full = [StepWindow(0, 1, 0.0, 2.0, 10.0), StepWindow(1, 4, 10.0, 12.0, 20.0), StepWindow(2, 8, 20.0, 22.0, 30.2)]
    assert cut_short(PLAN, full) is None and cut_short(None, full[:1]) is None and cut_short(PLAN, []) is None
    late_tick = [*full[:2], StepWindow(2, 8, 20.0, 23.0, 30.0)]  # the warm-up ended at the next 1 s tick
    assert cut_short(PLAN, late_tick) is None
    stopped = [full[0], StepWindow(1, 4, 10.0, 12.0, 13.5)]
    said = cut_short(PLAN, stopped)
    assert said.startswith("the ladder ended at step 2 of 3 (4 users); that step was steady for 1.5 s of 8 s; "
                           "never ran: 8 users (the test was stopped"), said  # fmt: skip
    assert cut_short(PLAN, full[:2]) == ("the ladder ended at step 2 of 3 (4 users); never ran: 8 users (the test was "
                                         "stopped, -t ended it, or --stop-on-breach did): the verdict covers the steps "
                                         "that ran")  # fmt: skip
    last_cut = [*full[:2], StepWindow(2, 8, 20.0, 22.0, 25.0)]
    assert "step 3 of 3 (8 users); that step was steady for 3.0 s of 8 s (" in cut_short(PLAN, last_cut)
    rates = LadderConfig(levels=(8, 8), step_s=10.0, warmup_s=2.0, rates=(5.0, 10.0))
    assert "(5 req/s); never ran: 10 req/s" in cut_short(rates, [StepWindow(0, 8, 0.0, 2.0, 10.0, 5.0)])


def test_end_now_ends_the_test_at_the_next_tick_and_a_new_run_forgets_it():
    """A headless master's Ctrl-C: the shape ends as at the plan's end (it stops the workers and waits for them)."""
    tracker = StepTracker(clock=FakeClock())
    d = LadderDriver(tracker, baseline_ok=lambda: 0)
    d.configure(PLAN, None)
    d.begin()
    assert d.tick(3.0) == (1, 1.0)
    d.end_now()
    assert d.tick(4.0) is None and tracker.current() is None and tracker.windows[-1].ended_at is not None
    d.begin()  # the next shape run
    assert d.tick(0.0) == (1, 1.0)
