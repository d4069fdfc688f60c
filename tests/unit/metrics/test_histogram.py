from __future__ import annotations

import math

import numpy as np
import pytest

from llmload.metrics.histogram import EDGES, GROWTH, LOWEST, N_BUCKETS, Histogram, bucket_index


def test_buckets_are_at_most_one_percent_wide():
    widths = EDGES[1:] / EDGES[:-1] - 1
    assert widths.max() <= 0.01 + 1e-12
    assert EDGES[0] == LOWEST
    assert EDGES[-1] >= 3600  # an hour-long request still lands in a real bucket


@pytest.mark.parametrize("value", [2e-5, 0.001, 0.005, 0.05, 0.2, 1.0, 37.5, 3000.0])
def test_value_lands_in_its_bucket(value):
    i = bucket_index(value)
    assert EDGES[i - 1] < value <= EDGES[i] * (1 + 1e-9)


def test_scalar_and_vector_bucketing_agree():
    rng = np.random.default_rng(1)
    values = rng.lognormal(-4, 1.5, 5000)
    a, b = Histogram(), Histogram()
    for v in values:
        a.record(float(v))
    b.record_many(values)
    assert np.array_equal(a.counts, b.counts)
    assert a.count == b.count == 5000
    assert a.sum == pytest.approx(b.sum)
    assert (a.min, a.max) == (b.min, b.max)


def test_percentiles_within_half_a_bucket_of_exact():
    rng = np.random.default_rng(2)
    values = rng.lognormal(-3, 1.0, 20000)
    h = Histogram()
    h.record_many(values)
    for q in (0.5, 0.9, 0.99, 0.999):
        exact = float(np.quantile(values, q, method="inverted_cdf"))
        assert h.percentile(q) == pytest.approx(exact, rel=(GROWTH - 1) / 2 + 1e-9)
    assert h.percentile(0) == values.min()
    assert h.percentile(1) == values.max()
    assert h.mean == pytest.approx(values.mean())


def test_merge_equals_one_process_with_all_samples():
    rng = np.random.default_rng(3)
    parts = [rng.lognormal(-3, 1, n) for n in (100, 2500, 7)]
    merged, single = Histogram(), Histogram()
    for p in parts:
        h = Histogram()
        h.record_many(p)
        merged.merge(Histogram.from_wire(h.to_wire()))  # as workers ship them
    single.record_many(np.concatenate(parts))
    assert np.array_equal(merged.counts, single.counts)
    assert merged.percentiles([0.5, 0.9, 0.99]) == single.percentiles([0.5, 0.9, 0.99])
    assert merged.count == single.count and merged.min == single.min and merged.max == single.max


def test_wire_form_is_sparse_and_round_trips():
    h = Histogram()
    for v in (0.01, 0.01, 0.5):
        h.record(v)
    w = h.to_wire()
    assert len(w["i"]) == 2 and sorted(w["c"]) == [1, 2]
    back = Histogram.from_wire(w)
    assert np.array_equal(back.counts, h.counts) and back.sum == h.sum


def test_empty_histogram():
    h = Histogram()
    assert math.isnan(h.percentile(0.5)) and math.isnan(h.mean)
    assert Histogram.from_wire(h.to_wire()).count == 0
    assert len(h.counts) == N_BUCKETS


def test_extremes_go_to_under_and_overflow():
    h = Histogram()
    h.record(0.0)
    h.record(1e9)
    assert h.counts[0] == 1 and h.counts[-1] == 1
    assert h.percentile(0.99) == 1e9  # clamped to the exact max


def test_cumulative_at_bucket_edges_is_exact():
    h = Histogram()
    values = np.array([0.001, 0.002, 0.002, 0.05, 0.3, 2.0])
    h.record_many(values)
    edges = EDGES[[bucket_index(0.0025), bucket_index(0.1), bucket_index(1.0)]]
    cum = h.cumulative_at(edges)
    assert cum.tolist() == [int((values <= e).sum()) for e in edges]
