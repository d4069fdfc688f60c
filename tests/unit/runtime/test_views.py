"""The live views: what the web UI, its charts and the exporter read while a test runs."""

from __future__ import annotations

from llmload.ladder import LadderDriver, StepTracker
from llmload.metrics.aggregation import Aggregator
from llmload.runtime.conclusion import Setup
from llmload.runtime.views import BASELINE_MIN_OK, LiveViews
from llmload.workload.traces import TraceEntry, trace_lines
from tests.helpers.runtime import FakeLocal, environment
from tests.unit.runtime.test_conclusion import setup_of
from tests.unit.runtime.test_coordinator import report


class Views:
    """A LiveViews over its own aggregator and steps; ``setup`` and ``seconds`` change as a coordinator's do."""

    def __init__(self, setup: Setup, users: int = 0) -> None:
        self.env = environment(FakeLocal(users=users))
        self.aggregator, self.steps = Aggregator(clock=lambda: 100.0), StepTracker(clock=lambda: 50.0)
        self.setup, self.seconds = setup, 0.0
        driver = LadderDriver(self.steps, lambda: 0)
        self.views = LiveViews(self.env, self.aggregator, self.steps, driver, setup=lambda: self.setup,
                               collection=lambda: None, run_seconds=lambda: self.seconds)  # fmt: skip


def test_the_snapshot_carries_the_runners_user_count_and_the_live_one_leaves_it():
    v = Views(setup_of(), users=3)
    v.aggregator.merge_report("local", report(n=2))
    assert v.views.live_snapshot().users == 0  # the web UI's read changes nothing
    assert v.views.snapshot().users == 3 and v.views.snapshot().run.overall().counters["ok"] == 2


def test_the_offered_rate_is_none_in_a_closed_loop_and_the_setups_otherwise():
    v = Views(setup_of())
    assert v.views.offered_rate() is None and v.views.export_context().offered_rate is None
    v.setup = setup_of(arrival="poisson", rate=10.0)  # the next test's setup (the web UI form)
    assert v.views.offered_rate() == 10.0 and v.views.export_context().offered_rate == 10.0


def test_a_rate_ladders_offered_rate_is_its_running_steps():
    v = Views(setup_of(arrival="poisson", rate_ladder="2,4", num_users=8, step_time="10s", step_warmup="0s"))
    assert v.views.offered_rate() is None  # no step yet
    v.steps.enter(1, 8, steady=True)
    assert v.views.offered_rate() == 4.0 and v.views.offered_rate((0, 8, True)) == 2.0
    assert v.views.export_context().offered_rate == 4.0


def test_a_replayed_traces_offered_rate_is_its_mean_at_its_speedup(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(trace_lines([TraceEntry(float(t), 600, 3, ()) for t in (0, 5, 10)]))
    assert Views(setup_of("--trace", str(path), "--trace-speedup", "2")).views.offered_rate() == 600.0


def test_the_exporter_context_and_the_live_baseline_follow_the_ladder():
    v = Views(setup_of(ladder="1,4", step_time="10s", step_warmup="1s"))
    ctx = v.views.export_context()
    assert (ctx.api, ctx.model, ctx.profile, ctx.step, ctx.baseline) == ("openai-chat", "m", "default", None, None)
    assert ctx.classes == v.setup.profile.class_names and ctx.slo_target is None  # no SLOs
    v.steps.enter(0, 1, steady=True)
    v.aggregator.merge_report("local", report(n=BASELINE_MIN_OK - 1, step=0))
    assert v.views.live_baseline() is None  # too few successful requests yet
    v.aggregator.merge_report("local", report(n=1, step=0))
    base = v.views.export_context().baseline
    assert base["ttft_p50"] == base["ttft_p99"] and abs(base["ttft_p50"] - 0.05) < 0.001
    assert v.views.export_context().step == (0, 1, True)


def test_runs_with_slos_export_their_attainment_target():
    assert Views(setup_of(slo="ttft_ms=800")).views.export_context().slo_target == 0.99


def test_the_web_uis_inputs():
    v = Views(setup_of(degradation=0.25))
    assert v.views.class_order() == list(v.setup.profile.class_names) and v.views.ladder_status() is None
    v.seconds = 7.5
    assert v.views.run_seconds() == 7.5
    charts = v.views.chart_inputs()
    assert charts.limit_factor() == 1.25 and charts.timeline() is None and charts.ladder() is None
    v.steps.enter(0, 1, steady=True)
    assert [w.index for w in charts.steps()] == [0]
