"""Engine histograms: quantiles as Prometheus' histogram_quantile, increases over a run, restarts."""

from __future__ import annotations

import pytest

from llmload.collect.exposition import Samples
from llmload.collect.prom_histogram import BucketHistogram, HistogramTrack, read_histogram
from tests.helpers.collect import samples


def hist(bounds, cumulative, total_sum=0.0):
    return BucketHistogram(tuple(bounds), tuple(float(c) for c in cumulative), total_sum, float(cumulative[-1]))


def test_quantile_interpolates_inside_the_bucket_from_zero_for_the_first():
    h = hist([0.1, 0.2, 0.4], [10, 30, 40, 40])
    assert h.quantile(0.25) == pytest.approx(0.1)  # rank 10: the top of the first bucket
    assert h.quantile(0.125) == pytest.approx(0.05)  # rank 5: halfway from 0 to 0.1
    assert h.quantile(0.5) == pytest.approx(0.15)  # rank 20: halfway through (0.1, 0.2]
    assert h.quantile(0.9) == pytest.approx(0.2 + 0.2 * 0.6)  # rank 36 in (0.2, 0.4]: 6 of its 10


def test_quantile_in_the_inf_bucket_is_the_highest_finite_bound_and_empty_is_none():
    assert hist([1.0, 2.0], [1, 2, 10]).quantile(0.99) == 2.0
    assert hist([1.0, 2.0], [0, 0, 0]).quantile(0.5) is None


def test_quantile_of_a_zero_bound_first_bucket_is_zero():
    assert hist([0.0, 0.1, 0.2], [50, 60, 100, 100]).quantile(0.5) == 0.0  # SGLang's queue_time le="0.0"


def test_empty_buckets_before_the_rank_are_skipped():
    h = hist([0.1, 0.2, 0.3, 0.4], [0, 0, 0, 8, 8])
    assert h.quantile(0.5) == pytest.approx(0.35)


def test_read_histogram_adds_label_sets_with_the_same_buckets():
    rows = []
    for engine, counts, total in (("0", (1, 3, 4), 1.0), ("1", (2, 2, 5), 2.0)):
        lab = {"model_name": "m", "engine": engine}
        for le, c in zip(("0.1", "0.5", "+Inf"), counts, strict=True):
            rows.append(("h_bucket", {**lab, "le": le}, c))
        rows += [("h_sum", lab, total), ("h_count", lab, counts[-1])]
    rows += [("h_bucket", {"engine": "2", "le": "7"}, 1), ("h_bucket", {"engine": "2", "le": "+Inf"}, 1)]
    h = read_histogram(Samples(rows), "h")
    assert h.bounds == (0.1, 0.5)
    assert h.cumulative == (3.0, 5.0, 9.0)
    assert (h.sum, h.count) == (3.0, 9.0)
    assert read_histogram(Samples(rows), "absent") is None


def test_vllm_ttft_increase_between_two_recorded_scrapes():
    a = read_histogram(samples("vllm-0.10-v1_llama-3.1-8b_t0.txt"), "vllm:time_to_first_token_seconds")
    b = read_histogram(samples("vllm-0.10-v1_llama-3.1-8b_t1.txt"), "vllm:time_to_first_token_seconds")
    d = b - a
    assert d.count == 40 and d.cumulative[-1] == 40
    assert d.mean == pytest.approx((b.sum - a.sum) / 40)
    assert 0.02 < d.quantile(0.5) < d.quantile(0.99) <= 2560.0


def test_track_sums_segments_across_an_engine_restart():
    t = HistogramTrack()
    assert t.add(hist([1.0], [5, 10], 10.0)) is None
    step = t.add(hist([1.0], [6, 14], 15.0))
    assert (step.count, step.sum) == (4.0, 5.0)
    assert t.increase().count == 4.0
    step = t.add(hist([1.0], [1, 3], 2.0))  # restarted: counts from zero again
    assert step.count == 3.0
    t.add(hist([1.0], [2, 5], 4.0))
    inc = t.increase()
    assert inc.count == 4.0 + 5.0
    assert inc.sum == pytest.approx(5.0 + 4.0)
    assert inc.cumulative == (1.0 + 2.0, 4.0 + 5.0)


def test_track_with_one_reading_has_no_increase():
    t = HistogramTrack()
    t.add(hist([1.0], [1, 1]))
    assert t.increase() is None
