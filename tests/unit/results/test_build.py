"""Results built from histograms: p50 intervals, steps, the load generator's state."""

from __future__ import annotations

import math

from llmload.ladder import StepWindow
from llmload.metrics.aggregation import Aggregator, WorkerGauges
from llmload.metrics.definitions import settle_token_counts
from llmload.metrics.histogram import Histogram
from llmload.metrics.record import RequestRecord
from llmload.metrics.recorder import MetricSet
from llmload.results.build import build_result, build_steps, load_generator, median_ci, stats_of, unfinished_warning
from llmload.results.model import Stats
from llmload.results.setup import LoadState

MS = 1_000_000


def test_median_ci_brackets_the_median_and_narrows_with_samples():
    small, big = Histogram(), Histogram()
    for v in range(1, 21):
        small.record(v / 1000.0)
    for v in range(1, 2001):
        big.record((v / 20) / 1000.0)  # 0.05 .. 100 ms
    lo, hi = median_ci(small)
    assert lo < small.percentile(0.5) * 1000 < hi
    # n = 20: ranks 10 +- 0.98*sqrt(20) = 10 +- 4.4 -> about the 6th and 15th samples
    assert 5.5 <= lo <= 6.5 and 14.5 <= hi <= 15.5
    blo, bhi = median_ci(big)
    assert (bhi - blo) / 50 < 0.1 < (hi - lo) / 10
    one = Histogram()
    one.record(0.042)
    assert median_ci(one) == (42.0, 42.0)
    assert median_ci(Histogram()) is None


def _rec(ttft_ms: float, n: int = 5) -> RequestRecord:
    r = RequestRecord("a", input_tokens=10, max_tokens=n)
    r.start_ns = 0
    r.chunk_ns = [int((ttft_ms + 10 * i) * MS) for i in range(n)]
    r.end_ns = r.chunk_ns[-1] + MS
    settle_token_counts(r, None, None)
    r.outcome = "ok"
    return r


def test_a_step_from_its_histograms_with_its_p50_intervals():
    m = MetricSet()
    for t in range(40, 60):
        m.add(_rec(float(t)))
    (st,) = build_steps([StepWindow(0, 1, 0.0, 1.0, 11.0)], {0: m}, ["a"])
    assert set(st.ci) == {"ttft", "tpot"}
    assert st.ci["ttft"][0] < 50 < st.ci["ttft"][1]
    assert math.isclose(st.ci["tpot"][0], 10.0, rel_tol=0.02)
    assert st.steady_s == 10.0 and st.overall.ok == 20 and st.overall.requests_per_s == 2.0
    assert st.classes["a"].ok == 20
    (empty,) = build_steps([StepWindow(1, 4, 0.0)], {0: m}, [])
    assert empty.ci == {} and empty.overall.requests == 0 and empty.steady_s == 0.0



def test_load_generator_state_of_a_master_and_of_a_standalone_process():
    clock = [0.0]
    agg = Aggregator(clock=lambda: clock[0])
    hot = WorkerGauges(users=4, cpu_ratio=0.97).to_wire()
    agg.merge_report("w1", {"g": hot})
    agg.merge_report("w1", {"g": hot})  # saturated twice in a row: flagged for the run
    agg.merge_report("w2", {"g": WorkerGauges().to_wire()})
    agg.mark_lost("w2")
    g = load_generator(agg.snapshot(), master=True, local_id="local")
    assert g["load"] == LoadState(workers=2, workers_lost=("w2",), saturated=True, saturated_processes=("w1",))
    assert len(g["warnings"]) == 2 and "saturated" in g["warnings"][0] and "w2" in g["warnings"][1]
    standalone = load_generator(Aggregator().snapshot(), master=False, local_id="local")
    assert standalone == {"load": LoadState(), "warnings": ()}
    result = build_result(MetricSet(), duration_s=1.0, users_max=1, weights={}, load=g)
    assert (result.workers, result.workers_lost, result.client_saturated) == (2, ("w2",), True)


def _timed(ttft_ms: float, queue_ms: float, prefill_ms: float, cls: str = "chat") -> RequestRecord:
    r = RequestRecord(cls, 10, 2)
    r.start_ns = 0
    r.chunk_ns = [int(ttft_ms * 1e6), int((ttft_ms + 10) * 1e6)]
    r.end_ns = int((ttft_ms + 20) * 1e6)
    r.outcome, r.output_tokens = "ok", 2
    r.server_timing, r.server_queue_ms, r.server_prefill_ms, r.server_decode_ms = "vllm", queue_ms, prefill_ms, 10.0
    return r


def test_phases_tail_attribution_follows_the_ttft_percentiles_through_summary_and_back():
    from llmload.report.console import tail_text
    from llmload.results.build import stats_of
    from llmload.results.summary import stats_dict
    from llmload.results.summary_reader import stats_from_dict

    m = MetricSet()
    for _ in range(95):
        m.add(_timed(50, 5, 40))  # the body: prefill
    for _ in range(5):
        m.add(_timed(1000, 900, 60))  # the tail: queue
    untimed = _timed(50, 5, 40)
    untimed.server_timing = untimed.server_queue_ms = untimed.server_prefill_ms = None
    m.add(untimed)
    s = stats_of(m.overall(), 10.0)
    assert s.phases.timed == 100 and s.phases.coverage == 100 / 101
    assert abs(s.phases.lat("server_queue").p50 - 5.0) < 0.03  # within the 1 % bucket
    p99 = s.phases.tail["p99"]
    assert p99.requests == 5 and p99.ranked()[0][0] == "server_queue"
    assert abs(p99.shares["server_queue"] - 0.9) < 1e-9 and abs(p99.shares["gateway"] - 0.04) < 1e-9
    assert s.phases.tail["p90"].ranked()[0][0] == "prefill"  # p90 sits in the body (95 % of requests)
    assert tail_text(s.phases, "p99").startswith("p99 TTFT 1000 ms: 90 % server queue, 6 % prefill, 4 % gateway")
    block = stats_dict(s)["phases"]
    assert block["coverage"] == 0.9901 and block["tail"]["p99"]["shares"]["server_queue"] == 0.9
    assert block["decode_ms"]["count"] == 101
    back = stats_from_dict(stats_dict(s)).phases
    assert back.tail["p99"].ranked()[0] == ("server_queue", 0.9) and back.timed == 100


def test_a_run_where_every_ended_request_failed_is_not_said_to_be_still_running():
    # 9 ttft_timeouts and 7 requests in flight at the stop, none ok: the failures left no latencies, not the stop.
    failed = unfinished_warning(Stats(requests=16, ok=0, errors=9, interrupted=7))
    assert failed is not None and failed.startswith("no request completed: 9 of 16 started requests failed")
    assert "other 7 were still running" in failed and "errors by kind" in failed and "most requests" not in failed
    most = unfinished_warning(Stats(requests=16, ok=0, errors=3, interrupted=13))  # most were running: as before
    assert most is not None and "most requests were still running" in most
    assert "(13 of 16 started requests interrupted, 0 completed, 3 failed)" in most
    assert unfinished_warning(Stats(requests=16, ok=0, errors=16)) is None  # nothing running: the finding says it
    assert unfinished_warning(Stats(requests=16, ok=9, errors=0, interrupted=7)) is None


def test_the_held_back_warning_reads_the_offered_rate_as_people_write_it():
    """A trace's mean rate came out as 'offered 44.8607/s'."""
    from llmload.results.build import arrival_warnings
    from llmload.results.model import ArrivalResult

    for rate, said in ((44.860714, "offered 44.86/s"), (1000.0, "offered 1000/s"), (0.5, "offered 0.5/s")):
        a = ArrivalResult(mode="trace", offered_rate=rate, achieved_rate=2.32, arrivals=40, waited=25)
        (w,) = arrival_warnings(a, Stats(), users=16)
        assert said in w and "achieved 2.32/s" in w, w


def test_retry_after_counters_give_the_refusals_that_carried_one_and_the_mean_wait_through_the_summary():
    from llmload.metrics.recorder import ClassStats
    from llmload.results.summary import stats_dict
    from llmload.results.summary_reader import stats_from_dict

    cs = ClassStats()
    cs.core.counters.update(requests=5, errors=5)
    backoff = cs.parts["backoff"]
    backoff.retry_afters, backoff.retry_after_ms = 4, 6000
    s = stats_of(cs, 10.0)
    assert (s.retry_afters, s.retry_after_s) == (4, 1.5)
    d = stats_dict(s)
    assert (d["retry_afters"], d["retry_after_s"]) == (4, 1.5)
    back = stats_from_dict(d)
    assert (back.retry_afters, back.retry_after_s) == (4, 1.5)
    none = stats_of(ClassStats(), 10.0)
    assert (none.retry_afters, none.retry_after_s, stats_dict(none)["retry_after_s"]) == (0, None, None)
    old = stats_from_dict({"requests": 3, "errors": 3})  # a summary written before the keys
    assert (old.retry_afters, old.retry_after_s) == (0, None)
