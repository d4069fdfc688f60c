from __future__ import annotations

import pytest

from llmload.metrics.aggregation import LOST_AFTER_S, WINDOW_S, Aggregator, WorkerGauges
from llmload.metrics.definitions import settle_token_counts
from llmload.metrics.record import RequestRecord
from llmload.metrics.recorder import Recorder
from tests.helpers.clock import FakeClock

MS = 1_000_000


def report(n=1, cls="short", **gauges):
    r = Recorder()
    for _ in range(n):
        rec = RequestRecord(cls, 10, 4)
        rec.start_ns = 0
        rec.chunk_ns = [50 * MS, 55 * MS, 60 * MS, 65 * MS]
        rec.end_ns = 66 * MS
        settle_token_counts(rec, None, None)
        rec.outcome = "ok"
        r.add(rec)
    return {"m": r.drain(), "g": WorkerGauges(**gauges).to_wire()}


def test_run_restarts_but_totals_never_go_backwards():
    agg = Aggregator(FakeClock())
    agg.merge_report("w1", report(3))
    agg.merge_report("w2", report(2))
    assert agg.snapshot().run.overall().counters["requests"] == 5
    agg.start_run()
    agg.merge_report("w1", report(1))
    snap = agg.snapshot()
    assert snap.run.overall().counters["requests"] == 1
    assert snap.total.overall().counters["requests"] == 6
    assert snap.total.overall().counters["output_tokens"] == 24


def test_window_keeps_only_recent_deltas():
    clock = FakeClock()
    agg = Aggregator(clock)
    agg.merge_report("w1", report(4))
    clock.t += WINDOW_S + 1
    agg.merge_report("w1", report(1))
    snap = agg.snapshot()
    assert snap.window.overall().counters["requests"] == 1
    assert snap.window_s == WINDOW_S
    assert snap.run.overall().counters["requests"] == 5


def test_the_windows_test_time_ends_at_the_last_reports_not_now():
    """Counts are complete up to a process's last report: rates early in a run are not too low."""
    clock = FakeClock()
    agg = Aggregator(clock)
    agg.merge_report("w1", report(9))  # a report of the previous test
    agg.start_run()
    assert agg.snapshot().window_s == 0.0  # nothing reported in this run yet: no rate (not 0 req/s)
    clock.t += 2.0
    agg.merge_report("w1", report(20))
    clock.t += 0.9  # read just before the next report
    snap = agg.snapshot()
    assert snap.window_s == pytest.approx(2.0)  # 20 requests over 2 s, not over 2.9 s
    agg.merge_report("w2", report(1))  # a second process reports at 2.9 s: the window ends at the mean
    assert agg.snapshot().window_s == pytest.approx(2.45)
    agg.mark_lost("w2")
    assert agg.snapshot().window_s == pytest.approx(2.0)


def test_gauges_sum_over_live_workers_and_lost_workers_keep_their_counts():
    clock = FakeClock()
    agg = Aggregator(clock)
    agg.merge_report("w1", report(2, in_flight=3, in_flight_by_class={"short": 3}, users=5))
    agg.merge_report("w2", report(1, in_flight=2, in_flight_by_class={"short": 1, "long": 1}, users=5))
    snap = agg.snapshot()
    assert snap.in_flight == 5
    assert snap.in_flight_by_class() == {"short": 4, "long": 1}
    assert agg.mark_lost("w2") is True
    assert agg.mark_lost("w2") is False
    snap = agg.snapshot()
    assert snap.in_flight == 3 and len(snap.live_workers) == 1
    assert snap.run.overall().counters["requests"] == 3  # what w2 reported stays
    clock.t += LOST_AFTER_S + 1
    assert agg.expire() == ["w1"]


def test_final_report_zeroes_in_flight():
    agg = Aggregator(FakeClock())
    agg.merge_report("w1", report(1, in_flight=4))
    agg.merge_report("w1", {**report(0), "final": True})
    assert agg.snapshot().in_flight == 0


@pytest.mark.parametrize(("cpu", "lag", "saturated"), [(0.5, 0.001, False), (0.9, 0.0, True), (0.2, 0.08, True)])
def test_client_saturation(cpu, lag, saturated):
    agg = Aggregator(FakeClock())
    agg.merge_report("w1", report(1, users=1, cpu_ratio=0.1))
    agg.merge_report("w2", report(1, users=1, cpu_ratio=cpu, loop_lag_s=lag))
    snap = agg.snapshot()
    assert snap.client_saturated is saturated  # live: this report
    assert not any(w.saturated_ever for w in snap.workers)  # one report is a spike, not a verdict
    agg.merge_report("w2", report(1, users=1, cpu_ratio=cpu, loop_lag_s=lag))
    assert any(w.saturated_ever for w in agg.snapshot().workers) is saturated
    agg.merge_report("w2", report(1, users=1, cpu_ratio=0.1))
    agg.merge_report("w2", report(1, users=1, cpu_ratio=0.9))
    assert any(w.saturated_ever for w in agg.snapshot().workers) is saturated  # it stays flagged for the run


def test_an_idle_process_is_never_saturated():
    """A worker's report from before its test (start-up CPU, users 0) then one busy report: no verdict."""
    agg = Aggregator(FakeClock())
    agg.start_run()
    agg.merge_report("w1", {"g": WorkerGauges(cpu_ratio=0.97).to_wire()})  # idle: start-up work
    assert not agg.snapshot().client_saturated
    agg.merge_report("w1", report(1, users=32, loop_lag_s=0.09))
    snap = agg.snapshot()
    assert snap.client_saturated and not any(w.saturated_ever for w in snap.workers)
    assert WorkerGauges(in_flight=1, cpu_ratio=0.9).saturated  # in flight after its users stopped: still busy
    assert not WorkerGauges(loop_lag_s=1.0).saturated


def test_the_window_is_trimmed_even_when_nobody_takes_snapshots():
    clock = FakeClock()
    agg = Aggregator(clock)
    for _ in range(200):
        agg.merge_report("w1", report(1))
        clock.t += 1.0
    assert len(agg._window) <= WINDOW_S + 1  # memory stays flat in a headless soak


def test_a_finite_schedule_is_done_when_every_live_process_says_so_with_nothing_in_flight():
    clock = FakeClock()
    agg = Aggregator(clock=clock)
    assert not agg.schedules_done()  # nobody reported yet
    agg.merge_report("w1", report(schedule_done=True))
    agg.merge_report("w2", report(schedule_done=False, in_flight=1))
    assert not agg.schedules_done()
    agg.merge_report("w2", report(schedule_done=True, in_flight=1))  # its share is sent, one answer still due
    assert not agg.schedules_done()
    agg.merge_report("w2", report(schedule_done=True))
    assert agg.schedules_done()
    agg.start_run()  # the next test: each process must say it again
    assert not agg.schedules_done()
    agg.merge_report("w1", report(schedule_done=True))
    agg.mark_lost("w2")  # a lost worker does not hold the end back
    assert agg.schedules_done()
