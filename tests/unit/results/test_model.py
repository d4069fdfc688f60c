"""Derived figures of the typed results: error rate and Little's-law in-flight mean."""

from __future__ import annotations

from llmload.results.summary_reader import stats_from_dict
from tests.helpers.analysis_data import stats


def test_error_rate_counts_ok_and_errors_not_interrupted():
    assert stats_from_dict(stats(ok=95, errors=5, interrupted=7)).error_rate == 0.05
    assert stats_from_dict(stats(ok=0, errors=0, interrupted=3)).error_rate is None


def test_in_flight_is_littles_law_capped_at_users():
    # 20 requests started in 10 s, each 1.5 s on average: L = 2/s x 1.5 s = 3
    assert stats_from_dict(stats(ok=20, e2e=1500.0)).in_flight_mean(users=8, span_s=10.0) == 3.0
    # a closed loop cannot hold more requests than users
    assert stats_from_dict(stats(ok=20, e2e=9000.0)).in_flight_mean(users=8, span_s=10.0) == 8.0
    assert stats_from_dict(stats(ok=20)).in_flight_mean(users=8, span_s=0.0) is None
