"""Steady state: per-second slices merged across workers, and the Mann-Kendall trend test over batch means."""

from __future__ import annotations

import numpy as np

from llmload.metrics.aggregation import Aggregator
from llmload.metrics.steady import SteadySlices, judge, mann_kendall, steady_into
from tests.unit.metrics.test_aggregation import report

T0 = 1_800_000_000.0


def _slices(
    seconds: int, ttft=lambda k: 0.05, tpot=lambda k: 0.01, in_flight=lambda k: 4.0, n: int = 10
) -> SteadySlices:
    s = SteadySlices()
    for k in range(seconds):
        s.add(T0 + k + 0.5, (n, n * ttft(k)), (n, n * tpot(k)), in_flight(k))
    return s


def test_mann_kendall_sees_a_monotonic_trend_and_not_noise():
    p, slope = mann_kendall(np.arange(10, dtype=float) * 2.0)
    assert p < 0.001 and slope == 2.0
    rng = np.random.default_rng(3)
    p, _ = mann_kendall(5.0 + rng.normal(0, 0.1, 10))
    assert p > 0.05
    assert mann_kendall(np.array([1.0, 2.0])) == (1.0, 0.0)


def test_flat_series_are_steady():
    rng = np.random.default_rng(1)
    noise = rng.normal(0, 0.002, 60)
    j = judge(_slices(60, ttft=lambda k: 0.05 + noise[k]), T0, T0 + 60)
    assert j["steady"] is True and j["batches"] == 10 and j["window_s"] == 60
    assert j["reason"] == "no trend in TTFT, TPOT or in-flight"


def test_a_ramp_whose_in_flight_still_climbs_is_not_steady():
    j = judge(_slices(30, in_flight=lambda k: 1.0 + k / 2), T0, T0 + 30)
    assert j["steady"] is False and j["reason"].startswith("in-flight still climbing (+30.0/min")
    assert j["in_flight"]["p"] < 0.05


def test_rising_ttft_is_named_with_its_rate_per_minute():
    j = judge(_slices(60, ttft=lambda k: 0.05 * (1 + 0.3 * k / 60)), T0, T0 + 60)  # +30 % over the minute
    assert j["steady"] is False
    assert j["reason"] == "ttft rising 26 %/min"  # Sen's slope over batch means, relative to the window's mean
    falling = judge(_slices(60, ttft=lambda k: 0.5 - 0.005 * k), T0, T0 + 60)
    assert falling["reason"].startswith("ttft falling")


def test_in_flight_falling_at_the_end_is_the_drain_not_a_verdict():
    assert judge(_slices(30, in_flight=lambda k: 30.0 - k), T0, T0 + 30)["steady"] is True


def test_a_short_window_cannot_tell():
    j = judge(_slices(8), T0, T0 + 8)
    assert j["steady"] is None and "window too short to tell (8 s" in j["reason"]


def test_slices_merge_by_index_and_over_the_wire():
    a, b = _slices(3, n=2), _slices(3, n=3)
    a.merge(SteadySlices.from_wire(b.to_wire()))
    k = int(T0) + 1
    assert a.slices[k].ttft_n == 5 and abs(a.slices[k].ttft_sum - 0.25) < 1e-12 and a.slices[k].inflight_samples == 2
    assert a.first_measured() == int(T0)


class _Window:
    def __init__(self, index, users, steady_from, ended_at):
        self.index, self.users, self.steady_from, self.ended_at = index, users, steady_from, ended_at


def test_steady_into_judges_each_ladder_step_and_warns_of_a_moving_one():
    s = _slices(40, in_flight=lambda k: 4.0 if k < 20 else 4.0 + (k - 20))
    load: dict = {}
    steady_into(load, s, [_Window(0, 4, T0, T0 + 20), _Window(1, 8, T0 + 20, T0 + 40)], T0 + 40)
    steps = load["extra"]["steady"]["steps"]
    assert [st["steady"] for st in steps] == [True, False] and load["extra"]["steady"]["run"] is None
    assert load["warnings"][0].startswith("ladder step 1 (8 users) was not steady over its 20 s window: in-flight")
    plain: dict = {}
    steady_into(plain, _slices(30, in_flight=lambda k: 1.0 + k), None, T0 + 30)
    assert plain["extra"]["steady"]["run"]["steady"] is False and plain["warnings"][0].startswith("not steady: ")


def test_the_aggregator_records_each_report_in_its_wall_second_with_the_in_flight_total():
    agg = Aggregator(clock=lambda: 0.0)
    now = [T0 + 0.2]
    agg._wall = lambda: now[0]
    agg.merge_report("w1", report(3, in_flight=2))
    agg.merge_report("w2", report(1, in_flight=3))
    now[0] = T0 + 1.1
    agg.merge_report("w1", report(0, in_flight=4))
    first, second = agg.steady.slices[int(T0)], agg.steady.slices[int(T0) + 1]
    assert first.ttft_n == 4 and abs(first.ttft_sum - 4 * 0.050) < 1e-9 and first.tpot_n == 4
    assert (first.inflight_sum, first.inflight_samples) == (2 + 5, 2)  # w1 alone, then w1 + w2
    assert (second.ttft_n, second.inflight_sum) == (0, 7)
    agg.start_run()
    assert not agg.steady.slices


def test_a_ladder_verdict_built_on_a_moving_step_says_so():
    from dataclasses import replace

    from llmload.analysis.analyze import analyze
    from llmload.results import from_summary
    from tests.helpers import samples

    result = from_summary(samples.ladder_summary())
    steps = [{"index": st.index, "users": st.users, "steady": True, "reason": "no trend"} for st in result.steps]
    steps[1] = {**steps[1], "steady": False, "reason": "in-flight still climbing (+3.0/min, mean 4.0)"}
    moving = replace(result, extra={**result.extra, "steady": {"run": None, "steps": steps}})
    note = analyze(moving).verdict.note
    assert f"built on steps that were not steady ({steps[1]['users']} users: in-flight still climbing" in note
    assert "not steady" not in analyze(result).verdict.note
