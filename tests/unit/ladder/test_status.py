"""The ladder's status line: which step runs, the time left in it, and the live judge's verdict so far."""

from __future__ import annotations

from llmload.config import LadderConfig
from llmload.ladder import REPORT_GRACE_S, LadderDriver, LiveJudge, StepTracker
from llmload.ladder.status import duration_text, ladder_status
from tests.helpers.clock import FakeClock
from tests.helpers.ladder import records

PLAN = LadderConfig(levels=(1, 4, 8), step_s=60.0, warmup_s=10.0)


def status(d: LadderDriver, tracker: StepTracker, now: float):
    j = d.judge
    return ladder_status(d.plan, tracker.windows, tracker.current(), d.step_ends_at, j.verdict if j else None,
                         j.judged if j else 0, now)  # fmt: skip


def test_durations_read_as_people_write_them():
    assert [duration_text(s) for s in (0, 44.6, 60, 245, 3720)] == ["0 s", "45 s", "1 min 00 s", "4 min 05 s", "1 h 02 min"]


def test_no_ladder_no_status_and_a_ladder_waits_for_its_test():
    assert ladder_status(None, [], None, None, None, 0, 0.0) is None
    s = ladder_status(PLAN, [], None, None, None, 0, 0.0)
    assert s["phase"] == "waiting" and s["steps"] == 3 and "ladder of 3 steps, 1 min 00 s each" in s["text"]


def test_the_step_the_time_left_and_the_verdict_so_far_as_the_ladder_runs():
    clock = FakeClock(1000.0)
    tracker = StepTracker(clock=clock)
    metrics = {0: records(50.0), 1: records(60.0), 2: records(400.0)}
    d = LadderDriver(tracker, baseline_ok=lambda: 0, clock=clock)
    d.configure(PLAN, LiveJudge(lambda: metrics, 0.5, clock))

    def at(t):  # the shape's tick at ladder time t, then the status at that moment
        clock.t = 1000.0 + t
        d.tick(t)
        return status(d, tracker, clock.t)

    s = at(5.0)
    assert (s["step"], s["users"], s["phase"], s["left_s"]) == (0, 1, "warm-up", 55.0)
    assert s["text"].startswith("step 1 of 3: 1 user, warm-up (not measured), 55 s left in the step")
    assert "verdict so far: no step judged yet" in s["text"] and s["verdict"] is None
    clock.t += 0.6  # read between two ticks: the time left keeps counting down
    assert status(d, tracker, clock.t)["left_s"] == 54.4
    at(60.0)  # step 1 starts: step 0's window closes
    s = at(60.0 + REPORT_GRACE_S)  # step 0 closed and judged: the baseline, within the limits
    assert (s["step"], s["phase"]) == (1, "warm-up") and s["left_s"] == 60.0 - REPORT_GRACE_S
    assert s["verdict"]["status"] == "ok" and s["verdict"]["safe_users"] == 1
    assert "verdict so far: within the limits up to 1 user (1 step judged)" in s["text"]
    at(120.0)
    s = at(130.0)  # step 1 judged: 60 ms is within 1.5 x 50 ms
    assert s["verdict"]["safe_users"] == 4 and "up to 4 users (2 steps judged)" in s["text"]
    at(180.0)  # the end closes step 2
    s = at(180.0 + REPORT_GRACE_S)
    assert s["phase"] == "ended" and s["left_s"] is None and s["verdict"]["status"] == "breach"
    assert s["verdict"]["breach"]["users"] == 8 and s["verdict"]["safe_users"] == 4
    assert "ladder ended · verdict so far: TTFT p50 broke the limit at 8 users" in s["text"]
    assert s["text"].endswith("within the limits up to 4 users") and "--stop-on-breach" not in s["text"]


def test_a_rate_ladder_and_the_pre_run():
    clock = FakeClock(0.0)
    tracker = StepTracker(clock=clock)
    rates = LadderConfig(levels=(8, 8), step_s=30.0, warmup_s=5.0, rates=(2.0, 4.0))
    d = LadderDriver(tracker, baseline_ok=lambda: 0, clock=clock)
    d.configure(rates, None)
    clock.t = 40.0
    d.tick(40.0)
    s = status(d, tracker, 40.0)
    assert (s["rate"], s["users"]) == (4.0, 8) and s["text"].startswith("step 2 of 2: 4 req/s at -u 8, steady, 20 s left")
    pre = LadderConfig(levels=(2, 4), step_s=30.0, warmup_s=5.0, baseline_requests=20)
    d.configure(pre, None)
    tracker.reset()
    d.tick(0.0)
    s = status(d, tracker, 0.0)
    assert s["phase"] == "baseline" and s["left_s"] is None
    assert s["text"].startswith("pre-run baseline: 1 user until 20 requests succeed")


def test_a_ladder_over_sessions_names_its_steps_in_sessions():
    clock = FakeClock(1000.0)
    tracker = StepTracker(clock=clock)
    metrics = {0: records(50.0, turn=1), 1: records(60.0, turn=2), 2: records(400.0, turn=3)}  # every request a turn
    d = LadderDriver(tracker, baseline_ok=lambda: 0, clock=clock)
    d.configure(PLAN, LiveJudge(lambda: metrics, 0.5, clock))
    for t in (5.0, 60.0, 120.0, 180.0, 180.0 + REPORT_GRACE_S):
        clock.t = 1000.0 + t
        d.tick(t)
    j = d.judge
    assert j is not None and j.sessions
    s = ladder_status(d.plan, tracker.windows, tracker.current(), d.step_ends_at, j.verdict, j.judged, clock.t, j.sessions)
    assert "verdict so far: TTFT p50 broke the limit at 8 sessions" in s["text"]
    assert s["text"].endswith("within the limits up to 4 sessions")
    assert ladder_status(PLAN, tracker.windows, (1, 4, True), None, None, 0, clock.t, True)["text"].startswith(
        "step 2 of 3: 4 sessions, steady"
    )
