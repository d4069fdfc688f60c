from __future__ import annotations

import math
from itertools import islice

import numpy as np
import pytest

from llmload.arrivals.schedules import ArrivalSpec, RatePlan, unit_arrivals, worker_share
from tests.helpers.gap_stats import cv, ks_exponential


def _gaps(mode: str, n: int, burstiness: float = 1.0, seed: int = 7) -> np.ndarray:
    times = np.fromiter(islice(unit_arrivals(ArrivalSpec(mode, burstiness), seed), n), float)
    return np.diff(times)


def test_constant_gaps_are_exactly_one_and_start_at_zero():
    times = list(islice(unit_arrivals(ArrivalSpec("constant"), seed=1), 5))
    assert times == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert cv(_gaps("constant", 10_000)) == 0.0


def test_poisson_gaps_are_exponential():
    gaps = _gaps("poisson", 20_000)
    assert gaps.mean() == pytest.approx(1.0, rel=0.03)
    assert cv(gaps) == pytest.approx(1.0, abs=0.03)
    # KS at 1 % significance: critical distance 1.63 / sqrt(n).
    assert ks_exponential(gaps) < 1.63 / math.sqrt(len(gaps))


def test_gamma_shape_sets_the_burstiness():
    assert cv(_gaps("gamma", 40_000, burstiness=0.25)) == pytest.approx(2.0, rel=0.05)
    assert cv(_gaps("gamma", 40_000, burstiness=4.0)) == pytest.approx(0.5, rel=0.05)
    assert _gaps("gamma", 40_000, burstiness=0.25).mean() == pytest.approx(1.0, rel=0.05)
    # Shape 1 is Poisson.
    assert ks_exponential(_gaps("gamma", 20_000, burstiness=1.0)) < 1.63 / math.sqrt(20_000)


def test_the_sequence_depends_on_the_seed_only():
    a = list(islice(unit_arrivals(ArrivalSpec("poisson"), seed=3), 3000))
    b = list(islice(unit_arrivals(ArrivalSpec("poisson"), seed=3), 3000))
    c = list(islice(unit_arrivals(ArrivalSpec("poisson"), seed=4), 3000))
    assert a == b and a != c
    assert all(x < y for x, y in zip(a, a[1:], strict=False))


def test_worker_shares_merge_into_the_global_sequence():
    spec = ArrivalSpec("gamma", 0.5)
    whole = list(islice(unit_arrivals(spec, 11), 999))
    shares = [list(islice(worker_share(unit_arrivals(spec, 11), w, 3), 333)) for w in range(3)]
    merged = sorted(x for share in shares for x in share)
    assert merged == list(enumerate(whole))
    assert [i for i, _ in shares[1][:3]] == [1, 4, 7]


def test_bad_specs_are_refused_with_the_valid_choices():
    with pytest.raises(ValueError, match="closed, constant, poisson, gamma"):
        ArrivalSpec("bursty")
    with pytest.raises(ValueError, match="burstiness"):
        ArrivalSpec("gamma", 0.0)
    with pytest.raises(ValueError, match="closed loop"):
        next(unit_arrivals(ArrivalSpec("closed"), 1))
    with pytest.raises(ValueError, match="out of range"):
        next(worker_share(iter([0.0]), 2, 2))


def test_rate_plan_maps_unit_time_to_seconds():
    plan = RatePlan(10.0)
    assert plan.time_of(0.0) == 0.0
    assert plan.time_of(25.0) == pytest.approx(2.5)
    plan.set_rate(20.0, at_s=4.0)  # 40 arrivals expected by t = 4 s, then 20/s
    assert plan.integrated(4.0) == pytest.approx(40.0)
    assert plan.time_of(30.0) == pytest.approx(3.0)  # before the change: unchanged
    assert plan.time_of(60.0) == pytest.approx(5.0)
    assert plan.integrated(5.0) == pytest.approx(60.0)
    assert plan.pieces == [(0.0, 10.0), (4.0, 20.0)]


def test_rate_zero_pauses_and_a_later_rate_resumes():
    plan = RatePlan(10.0)
    plan.set_rate(0.0, at_s=1.0)
    assert plan.time_of(5.0) == pytest.approx(0.5)
    assert plan.time_of(10.0) is None  # paused from t = 1 s
    plan.set_rate(5.0, at_s=3.0)
    assert plan.time_of(10.0) == pytest.approx(3.0)  # the next arrival comes when the pause ends
    assert plan.time_of(15.0) == pytest.approx(4.0)


def test_rate_changes_in_the_past_or_invalid_rates_are_refused():
    plan = RatePlan(1.0)
    plan.set_rate(2.0, at_s=5.0)
    with pytest.raises(ValueError, match="before the previous one"):
        plan.set_rate(3.0, at_s=4.0)
    plan.set_rate(4.0, at_s=5.0)  # same start: replaces the piece
    assert plan.pieces == [(0.0, 1.0), (5.0, 4.0)]
    for bad in (-1.0, math.nan, math.inf, True):
        with pytest.raises(ValueError, match="requests/s"):
            RatePlan(bad)


def test_a_share_above_what_one_process_keeps_on_schedule_is_said():
    from llmload.arrivals.schedules import MAX_PROCESS_RATE, process_rate_warning

    assert process_rate_warning(MAX_PROCESS_RATE, 1) is None and process_rate_warning(4 * MAX_PROCESS_RATE, 4) is None
    said = process_rate_warning(50_000, 2)
    assert said is not None and said.startswith("this load process's share of the arrivals is 25,000 req/s")
    assert "add processes (--processes N)" in said
