"""plan's search: the fewest replicas that meet the goal, with K - 1 evaluated beside it; the answer line."""

from __future__ import annotations

from llmload.capacity.replicas import Goal, Trial, answer_line, search, trial_of
from llmload.metrics.parts.goodput import SloFigures
from llmload.results.model import Goodput, Latency, Stats

GOAL = Goal(target=0.99, slo=(("ttft_ms", 1000.0),))


def _trial(k: int, attainment: float) -> Trial:
    return Trial(k, attainment >= 0.99, 100, attainment, None if attainment >= 0.99 else "ttft_ms",
                 {"ttft": 100.0, "tpot": 20.0, "e2e": 900.0}, {"ttft": 640.0, "tpot": 25.0, "e2e": 2000.0}, 5.0)  # fmt: skip


def test_search_finds_the_fewest_replicas_and_evaluates_the_one_below_it():
    curve = {k: min(1.0, 0.2 * k + 0.1) for k in range(1, 65)}  # meets from 5 replicas (0.99 <= 1.0 at 5)
    asked: list[int] = []

    def evaluate(k: int) -> Trial:
        asked.append(k)
        return _trial(k, curve[k])

    best, trials = search(evaluate, 64)
    assert best is not None and best.replicas == 5
    assert {4, 5} <= {t.replicas for t in trials} and len(asked) == len(set(asked)) <= 6  # doubling, then bisecting
    assert [t.replicas for t in trials] == sorted(t.replicas for t in trials)


def test_search_says_none_when_the_most_replicas_allowed_miss():
    best, trials = search(lambda k: _trial(k, 0.5), 6)
    assert best is None and trials[-1].replicas == 6
    assert answer_line(best, trials, GOAL, 6).startswith("no replica count up to 6 meets it: 6 replicas:")


def test_the_answer_names_the_latency_against_the_slo_the_margin_and_one_replica_less():
    trials = [_trial(2, 0.71), _trial(3, 0.996)]
    line = answer_line(trials[1], trials, GOAL, 64)
    assert line == ("3 replicas: TTFT p99 640 ms (SLO 1000), attainment 99.6 % (target 99 %, margin +0.6 pt); "
                    "2 replicas: 71.0 %, mostly ttft_ms")  # fmt: skip


def test_a_trial_meets_the_baseline_goal_while_both_p50s_stay_within_the_degradation():
    goal = Goal(degradation=0.5, baseline_ttft_ms=100.0, baseline_tpot_ms=20.0)
    lat = {"ttft": Latency(count=10, p50=149.0, p99=300.0), "tpot": Latency(count=10, p50=29.0, p99=31.0)}
    assert trial_of(2, Stats(requests=10, ok=10, latency=lat), goal).meets
    slow = {**lat, "tpot": Latency(count=10, p50=31.0, p99=40.0)}
    assert not trial_of(1, Stats(requests=10, ok=10, latency=slow), goal).meets
    judged = Stats(requests=10, ok=10, latency=lat).with_part(
        SloFigures(Goodput(good_requests=9, attainment=0.9, missed={"ttft_ms": 1}))
    )
    t = trial_of(1, judged, GOAL)
    assert not t.meets and t.attainment == 0.9 and t.failed_slo == "ttft_ms"
