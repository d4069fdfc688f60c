"""Percentile intervals from a histogram: exact binomial ranks, the fewest samples, coverage, merging."""

from __future__ import annotations

import math

import numpy as np
import pytest

from llmload.metrics.confidence import (
    min_samples,
    proportion_ci,
    quantile_ci,
    rank_interval,
    relative_half_width,
    too_few_text,
)
from llmload.metrics.histogram import Histogram


def _binom_cdf(k: int, n: int, q: float) -> float:
    return sum(math.comb(n, j) * q**j * (1 - q) ** (n - j) for j in range(k + 1))


@pytest.mark.parametrize(("q", "n_min"), [(0.5, 6), (0.9, 36), (0.99, 368)])
def test_the_fewest_samples_are_where_both_ranks_first_exist(q, n_min):
    assert min_samples(q) == n_min
    assert rank_interval(n_min - 1, q) is None
    lo, hi = rank_interval(n_min, q)
    assert 1 <= lo < hi <= n_min


@pytest.mark.parametrize(("n", "q"), [(6, 0.5), (20, 0.5), (101, 0.5), (40, 0.9), (400, 0.99), (1000, 0.99)])
def test_the_ranks_are_the_exact_equal_tailed_binomial_ones(n, q):
    lo, hi = rank_interval(n, q)
    assert _binom_cdf(lo - 1, n, q) <= 0.025 < _binom_cdf(lo, n, q)  # the largest lower rank
    assert _binom_cdf(hi - 1, n, q) >= 0.975 > _binom_cdf(hi - 2, n, q)  # the smallest upper rank
    assert _binom_cdf(hi - 1, n, q) - _binom_cdf(lo - 1, n, q) >= 0.95


def test_twenty_samples_bound_their_median_by_the_6th_and_15th():
    assert rank_interval(20, 0.5) == (6, 15)
    assert rank_interval(2000, 0.99) == (1971, 1989)


def test_large_counts_need_no_normal_approximation():
    lo, hi = rank_interval(10_000_000, 0.5)
    assert lo < 5_000_000 < hi and hi - lo == pytest.approx(2 * 1.96 * math.sqrt(2.5e6), abs=3)


def test_coverage_of_the_order_statistic_interval_is_at_least_95_percent():
    rng = np.random.default_rng(23)
    for n, q in ((20, 0.5), (50, 0.9), (400, 0.99)):
        lo, hi = rank_interval(n, q)
        xs = np.sort(rng.uniform(size=(3000, n)), axis=1)
        covered = np.mean((xs[:, lo - 1] <= q) & (q <= xs[:, hi - 1]))
        assert covered >= 0.94, (n, q, covered)  # >= 95 % by construction; 3000 draws: +-0.4 % noise


def test_the_histogram_interval_holds_the_percentile_and_narrows_with_samples():
    rng = np.random.default_rng(5)
    small, big = Histogram(), Histogram()
    small.record_many(rng.lognormal(math.log(0.05), 0.3, 400))
    big.record_many(rng.lognormal(math.log(0.05), 0.3, 40_000))
    for q in (0.5, 0.9, 0.99):
        for h in (small, big):
            lo, hi = quantile_ci(h, q)
            assert h.min <= lo <= h.percentile(q) <= hi <= h.max
        assert relative_half_width(big.percentile(q), quantile_ci(big, q)) < relative_half_width(
            small.percentile(q), quantile_ci(small, q)
        )
    assert quantile_ci(small, 0.99) is not None and quantile_ci(Histogram(), 0.5) is None


def test_one_value_many_times_gives_an_interval_within_its_bucket():
    h = Histogram()
    for _ in range(100):
        h.record(0.050)
    assert quantile_ci(h, 0.5) == (0.050, 0.050)  # clamped to the exact min and max
    h.record(0.0502)
    lo, hi = quantile_ci(h, 0.5)
    assert 0.0495 < lo <= hi < 0.0505


def test_too_few_samples_for_a_p99_give_no_interval():
    h = Histogram()
    for i in range(74):
        h.record(0.001 * (i + 1))
    assert quantile_ci(h, 0.99) is None and quantile_ci(h, 0.9) is not None
    assert too_few_text(74, "p99") == "n=74: too few for a p99"


def test_a_merged_histogram_gives_the_same_interval_as_one_process():
    rng = np.random.default_rng(9)
    values = rng.exponential(0.1, 3000)
    whole, a, b = Histogram(), Histogram(), Histogram()
    whole.record_many(values)
    a.record_many(values[:1000])
    b.record_many(values[1000:])
    a.merge(b)
    for q in (0.5, 0.9, 0.99):
        assert quantile_ci(a, q) == quantile_ci(whole, q)


def test_the_wilson_interval_of_a_share():
    assert proportion_ci(0, 0) is None
    lo, hi = proportion_ci(0, 100)
    assert lo == pytest.approx(0.0, abs=1e-12) and hi == pytest.approx(0.037, abs=0.001)
    lo, hi = proportion_ci(5, 100)
    assert lo == pytest.approx(0.0215, abs=0.001) and hi == pytest.approx(0.1118, abs=0.001)


def test_relative_half_width_is_the_wider_side():
    assert relative_half_width(100.0, (95.0, 109.0)) == pytest.approx(0.09)
    assert relative_half_width(None, (1.0, 2.0)) is None and relative_half_width(1.0, None) is None
