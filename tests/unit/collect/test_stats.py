"""Per-signal summaries: gauge statistics, counter increases across restarts, histogram figures in ms."""

from __future__ import annotations

import pytest

from llmload.collect.prom_histogram import BucketHistogram
from llmload.collect.stats import counter_stats, counter_steps, gauge_stats, histogram_stats_ms, quantile, rounded


def test_gauge_stats_skip_missing_values():
    s = gauge_stats([None, 1.0, 3.0, None, 2.0, 10.0])
    assert s == {
        "samples": 4,
        "mean": 4.0,
        "min": 1.0,
        "max": 10.0,
        "p50": 2.5,
        "p95": pytest.approx(8.95),
        "first": 1.0,
        "last": 10.0,
    }
    assert gauge_stats([None, None]) is None
    assert gauge_stats([]) is None


def test_quantile_is_linear_between_closest_ranks():
    assert quantile([1.0], 0.95) == 1.0
    assert quantile([0.0, 10.0], 0.5) == 5.0
    assert quantile([1.0, 2.0, 3.0, 4.0, 5.0], 0.95) == pytest.approx(4.8)


def test_counter_steps_handle_gaps_and_restarts():
    t = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    v = [100.0, 110.0, None, 130.0, 5.0, 15.0]  # no reading at 2 s; restarted before 4 s
    incs, rates = counter_steps(t, v)
    assert incs == [None, 10.0, None, 20.0, 5.0, 10.0]
    assert rates == [None, 10.0, None, 10.0, 5.0, 10.0]
    s = counter_stats(incs, rates, span_s=5.0)
    assert s == {"increase": 45.0, "rate_per_s": 9.0, "rate_max_per_s": 10.0}


def test_counter_with_one_reading_has_no_stats():
    incs, rates = counter_steps([0.0, 1.0], [None, 7.0])
    assert counter_stats(incs, rates, 1.0) is None


def test_histogram_stats_in_ms():
    h = BucketHistogram((0.1, 0.2), (10.0, 20.0, 20.0), 3.0, 20.0)
    assert histogram_stats_ms(h) == {"count": 20, "mean": 150.0, "p50": 100.0, "p90": 180.0, "p99": 198.0}
    empty = BucketHistogram((0.1,), (0.0, 0.0), 0.0, 0.0)
    assert histogram_stats_ms(empty) == {"count": 0, "mean": None, "p50": None, "p90": None, "p99": None}
    assert histogram_stats_ms(None) is None


def test_rounded_keeps_six_significant_digits():
    assert rounded(150754820096.0) == 150754820096.0  # never rounded left of the point
    assert rounded(1234.56789) == 1234.57
    assert rounded(0.000123456789) == 0.000123457
    assert rounded(0.0) == 0.0 and rounded(None) is None and rounded(float("nan")) is None
