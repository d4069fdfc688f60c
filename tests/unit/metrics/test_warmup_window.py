"""The run's warm-up: the gate (decided once per request at its start, injected clock), the warm-up's own
statistics, what a report carries, and that the aggregator keeps warm-up requests out of every other view."""

from __future__ import annotations

from llmload.metrics.aggregation import Aggregator
from llmload.metrics.coldstart import StartSlices
from llmload.metrics.histogram import Histogram
from llmload.metrics.record import RequestRecord
from llmload.metrics.warmup_window import WarmupGate, WarmupRecorder, WarmupStats, request_share, warmup_summary

S = 1_000_000_000
MS = 1_000_000


def rec(start_s, ttft_ms, *, warmup=False, outcome="ok", kind=None):
    r = RequestRecord("c", 10, 4)
    r.start_ns = int(start_s * S)
    r.chunk_ns = [r.start_ns + int(ttft_ms * MS)] if ttft_ms is not None else []
    r.end_ns = r.start_ns + int((ttft_ms or 0) * MS) + 5 * MS
    r.output_tokens = len(r.chunk_ns)
    r.outcome, r.error_kind, r.error_message = outcome, kind, "boom" if kind else None
    r.warmup = warmup
    return r


def test_a_duration_warms_up_the_requests_that_start_before_its_end_then_stays_over():
    g = WarmupGate()
    g.start(origin_ns=10 * S, duration_s=6.0, requests=0)
    assert [g.starts_in_warmup(t * S) for t in (10, 12, 15)] == [True, True, True]
    assert g.starts_in_warmup(int(15.999 * S))
    assert not g.starts_in_warmup(16 * S)
    assert not g.starts_in_warmup(12 * S)  # over is over (a clock never goes back; nor does the warm-up)


def test_requests_warm_up_the_first_n_and_with_a_duration_the_later_of_both():
    g = WarmupGate()
    g.start(origin_ns=5 * S, duration_s=0.0, requests=3)
    assert [g.starts_in_warmup(0) for _ in range(5)] == [True, True, True, False, False]  # before the origin too
    g.start(origin_ns=0, duration_s=1.0, requests=2)  # a new test starts the gate afresh
    assert [g.starts_in_warmup(t) for t in (0, 0, int(0.5 * S), 2 * S)] == [True, True, True, False]
    g.start(origin_ns=0, duration_s=1.0, requests=5)
    assert [g.starts_in_warmup(2 * S) for _ in range(6)] == [True] * 5 + [False]


def test_without_warmup_nothing_is_warm_up():
    g = WarmupGate()
    assert not g.starts_in_warmup(0)
    g.start(origin_ns=0, duration_s=0.0, requests=0)
    assert not g.starts_in_warmup(0)


def test_the_request_shares_of_the_processes_add_up_to_n():
    assert [request_share(10, w, 3) for w in range(3)] == [4, 3, 3]
    assert sum(request_share(128, w, 7) for w in range(7)) == 128
    assert request_share(5, 0, 1) == 5 and request_share(0, 2, 4) == 0


def test_the_recorder_keeps_warmup_requests_apart_and_dates_the_measured_ones():
    w = WarmupRecorder()
    w.start(origin_ns=100 * S, duration_s=5.0, requests=0)
    assert w.add(rec(101, 1000, warmup=True))
    assert w.add(rec(104, None, warmup=True, outcome="error", kind="http_503"))
    assert not w.add(rec(107, 50))
    assert not w.add(rec(108, None, outcome="error", kind="http_503"))  # a failure has no TTFT to date
    wire = w.drain()
    assert wire is not None and w.drain() is None  # drained: nothing twice
    stats = WarmupStats.from_wire(wire["w"])
    assert stats.stats.counters["requests"] == 2 and stats.stats.counters["errors"] == 1
    assert stats.stats.errors_by_kind == {"http_503": 1} and stats.stats.errors_examples == {"http_503": "boom"}
    assert abs(stats.last_start_s - 4.0) < 1e-9
    slices = StartSlices.from_wire(wire["s"])
    assert sum(h.count for h in slices.slices.values()) == 1


def test_the_aggregator_merges_the_warmup_of_every_process_into_its_own_view_only():
    agg = Aggregator(clock=lambda: 0.0)
    agg.start_run()
    for worker, start in (("a", 1.0), ("b", 3.0)):
        w = WarmupRecorder()
        w.start(origin_ns=0, duration_s=5.0, requests=0)
        w.add(rec(start, 1000, warmup=True))
        w.add(rec(start + 5, 50))
        agg.merge_report(worker, {"m": {}, "w": w.drain()})
    snap = agg.snapshot()
    assert snap.warmup.stats.counters["requests"] == 2 and snap.warmup.last_start_s == 3.0
    assert snap.run.empty and snap.total.empty and snap.window.empty  # in no other view: exporter, summary, live
    assert sum(h.count for h in snap.starts.slices.values()) == 2
    agg.start_run()
    assert agg.snapshot().warmup.empty and agg.snapshot().starts.empty


def test_the_summary_block_puts_the_warmup_ttft_beside_the_measured_part_and_says_how_long():
    stats = WarmupStats()
    for i in range(20):
        stats.add(rec(i * 0.25, 1000 + i), i * 0.25)
    measured = Histogram()
    for _ in range(100):
        measured.record(0.05)
    block, warning, lasted = warmup_summary(stats, StartSlices(), measured, duration_s=6.0, requests=0, total_s=20.0)
    assert warning is None and lasted == 6.0
    assert block["requests"] == 20 and block["duration_s"] == 6.0
    assert 995 <= block["ttft_p50_ms"] <= 1020 and 1010 <= block["ttft_p99_ms"] <= 1025
    assert 49 <= block["measured_ttft_p50_ms"] <= 51 and 49 <= block["measured_ttft_p99_ms"] <= 51
    # --warmup-requests: as long as its last request started later; never beyond the run
    _, _, lasted = warmup_summary(stats, StartSlices(), measured, duration_s=0.0, requests=20, total_s=20.0)
    assert lasted == 4.75
    _, _, lasted = warmup_summary(stats, StartSlices(), measured, duration_s=60.0, requests=0, total_s=20.0)
    assert lasted == 20.0


def test_without_warmup_there_is_no_block_and_a_cold_start_warns():
    starts = StartSlices()
    for i in range(20):
        starts.add(i * 0.1, 1.0)  # the first 2 s: 1 s to first token
    for i in range(200):
        starts.add(2.0 + i * 0.05, 0.05)
    block, warning, lasted = warmup_summary(WarmupStats(), starts, Histogram(), duration_s=0.0, requests=0, total_s=12.0)
    assert block is None and lasted == 0.0
    assert warning is not None and "--warmup" in warning and "cold start" in warning
