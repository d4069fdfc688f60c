"""The run's conclusion, a pure function of what the coordinator knows at the end: no Locust, no clock, no output."""

from __future__ import annotations

from llmload.config import RunConfig, read
from llmload.ladder import StepTracker
from llmload.metrics.aggregation import Aggregator
from llmload.results import to_summary
from llmload.runtime.conclusion import LOCAL_ID, RunSpan, Setup, conclude, offer
from llmload.runtime.workload import run_workload
from llmload.workload.traces import TraceEntry, trace_lines
from tests.helpers.runtime import parse
from tests.unit.runtime.test_coordinator import report

S = 10**9
STARTED = 1_780_000_000.0  # 2026-05-28T20:26:40Z


def setup_of(*args: str, host: str | None = "http://127.0.0.1:9", **flags) -> Setup:
    config = RunConfig.from_values({**read(parse(*args)), "runs_dir": "", **flags})
    profile, trace = run_workload(config)
    return Setup(config, profile, trace, host)


def merged(*reports, source=LOCAL_ID):
    agg = Aggregator(clock=lambda: 100.0)
    agg.start_run()
    for r in reports:
        agg.merge_report(source, r)
    return agg


def span(seconds: float, users_max: int = 2) -> RunSpan:
    return RunSpan(5 * S, 5 * S + int(seconds * S), STARTED, STARTED + seconds, users_max)


def test_the_result_counts_the_reports_over_the_tests_span_and_says_when_and_where_it_ran():
    agg = merged(report(n=4))
    setup = setup_of(host="http://user:secret@127.0.0.1:9")
    s = to_summary(conclude(agg.snapshot(), agg.steady, [], setup, None, span(8.0, users_max=3), master=False))
    assert (s["overall"]["ok"], s["duration_s"], s["users_max"]) == (4, 8.0, 3)
    assert s["started_at"] == "2026-05-28T20:26:40Z"
    assert s["config"]["host"] == "http://127.0.0.1:9"  # the target's credentials are not in the summary
    assert "workers" not in s and s["verdict"]["status"] == "no_ladder"  # one process; analysed
    assert list(s["classes"]) == list(setup.profile.class_names)


def test_a_test_that_never_started_lasted_no_time():
    agg = merged()
    nothing = RunSpan(0, 7 * S, STARTED, STARTED, 0)
    assert nothing.seconds == 0.0
    assert conclude(agg.snapshot(), agg.steady, [], setup_of(), None, nothing, master=False).duration_s == 0.0


def test_a_master_counts_its_workers_and_names_the_lost_ones():
    agg = merged()
    agg.merge_report("w1", report(n=2))
    agg.merge_report("w2", report(n=1))
    agg.mark_lost("w2")
    s = to_summary(conclude(agg.snapshot(), agg.steady, [], setup_of(), None, span(4.0), master=True))
    assert (s["workers"], s["workers_lost"], s["overall"]["ok"]) == (2, ["w2"], 3)
    assert any("workers lost during the run" in w for w in s["warnings"])


def test_the_offered_rate_is_the_setups_once():
    closed = setup_of()
    assert offer(closed.config, closed.trace) == (None, None) and (closed.replay, closed.rate) == (None, None)
    poisson = setup_of(arrival="poisson", rate=10.0)
    assert (poisson.replay, poisson.rate) == (None, 10.0)
    agg = merged(report(n=20))
    arrival = to_summary(conclude(agg.snapshot(), agg.steady, [], poisson, None, span(4.0), master=False))["arrival"]
    assert (arrival["mode"], arrival["offered_rate"], arrival["achieved_rate"]) == ("poisson", 10.0, 5.0)


def test_a_replayed_traces_offered_rate_is_its_mean_at_its_speedup(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(trace_lines([TraceEntry(float(t), 600, 3, ()) for t in (0, 5, 10)]))
    setup = setup_of("--trace", str(path), "--trace-speedup", "2")
    replay, rate = offer(setup.config, setup.trace)
    assert replay is not None and replay.entries == 3 and rate == 600.0 == setup.rate  # 3 entries over 5 ms
    agg = merged()
    arrival = to_summary(conclude(agg.snapshot(), agg.steady, [], setup, None, span(1.0), master=False))["arrival"]
    assert arrival["offered_rate"] == 600.0 and arrival["trace"]["entries"] == 3


def test_a_ladder_cut_short_says_so():
    wall = iter(float(t) for t in range(100, 200))
    steps = StepTracker(clock=lambda: next(wall))
    steps.enter(0, 1, steady=True)
    steps.close()
    agg = merged(report(n=2, step=0))
    setup = setup_of(ladder="1,2", step_time="10s", step_warmup="0s")
    warnings = to_summary(conclude(agg.snapshot(), agg.steady, steps.windows, setup, None, span(1.0), master=False))["warnings"]
    assert any(w.startswith("the ladder ended at step 1 of 2") for w in warnings), warnings


def test_the_same_inputs_conclude_the_same():
    agg = merged(report(n=3))
    setup, s = setup_of(), span(2.0)
    first = to_summary(conclude(agg.snapshot(), agg.steady, [], setup, None, s, master=False))
    assert to_summary(conclude(agg.snapshot(), agg.steady, [], setup, None, s, master=False)) == first
