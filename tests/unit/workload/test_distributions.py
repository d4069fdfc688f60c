from __future__ import annotations

import random
import statistics

import pytest

from llmload.errors import ProfileError
from llmload.workload.distributions import (
    MAX_TOKENS,
    Choice,
    Duration,
    Fixed,
    LogNormal,
    Normal,
    Uniform,
    parse_distribution,
    parse_duration,
)

WHERE = "profile 'x.toml': classes[2].output_tokens"


def draws(d, n=20_000, seed=1):
    rng = random.Random(seed)
    return [d.sample(rng) for _ in range(n)]


def test_fixed_int():
    d = parse_distribution(200, WHERE)
    assert d == Fixed(200)
    assert d.mean == 200.0
    assert set(draws(d, 100)) == {200}
    assert d.to_dict() == 200


def test_uniform_inclusive_bounds_and_mean():
    d = parse_distribution({"dist": "uniform", "min": 3, "max": 7}, WHERE)
    assert d == Uniform(3, 7)
    xs = draws(d)
    assert set(xs) == {3, 4, 5, 6, 7}
    assert d.mean == 5.0
    assert statistics.mean(xs) == pytest.approx(5.0, abs=0.05)


def test_normal_moments_and_clamp():
    d = parse_distribution({"dist": "normal", "mean": 200, "stddev": 50}, WHERE)
    xs = draws(d)
    assert statistics.mean(xs) == pytest.approx(200, rel=0.01)
    assert statistics.pstdev(xs) == pytest.approx(50, rel=0.03)
    clamped = parse_distribution({"dist": "normal", "mean": 100, "stddev": 100, "min": 20, "max": 150}, WHERE)
    ys = draws(clamped)
    assert min(ys) == 20
    assert max(ys) == 150


def test_normal_never_below_one():
    d = Normal(mean=2, stddev=10)
    assert min(draws(d)) == 1


def test_lognormal_mean_and_stddev_are_of_the_values():
    d = parse_distribution({"dist": "lognormal", "mean": 300, "stddev": 200}, WHERE)
    assert isinstance(d, LogNormal)
    xs = draws(d, 100_000)
    assert statistics.mean(xs) == pytest.approx(300, rel=0.02)
    assert statistics.pstdev(xs) == pytest.approx(200, rel=0.05)
    assert statistics.median(xs) < 300  # right-skewed


def test_unbounded_draws_never_exceed_the_token_cap():
    """A wide log-normal without max: its far tail is clamped to MAX_TOKENS, never a prompt of 1e9 words."""
    d = parse_distribution({"dist": "lognormal", "mean": 1_000_000, "stddev": 1e9}, WHERE)
    assert max(draws(d, n=5_000)) == MAX_TOKENS
    assert parse_distribution(MAX_TOKENS, WHERE) == Fixed(MAX_TOKENS)  # the cap itself is allowed


def test_lognormal_clamp():
    d = parse_distribution({"dist": "lognormal", "mean": 300, "stddev": 600, "min": 10, "max": 1000}, WHERE)
    xs = draws(d)
    assert min(xs) >= 10
    assert max(xs) == 1000


def test_choice_weighted_and_zero_weight_never_drawn():
    d = parse_distribution({"dist": "choice", "values": [128, 512, 2048], "weights": [2, 1, 0]}, WHERE)
    xs = draws(d, 30_000)
    assert 2048 not in xs
    assert xs.count(128) / len(xs) == pytest.approx(2 / 3, abs=0.01)
    assert d.mean == pytest.approx((2 * 128 + 512) / 3)


def test_choice_unweighted_is_uniform():
    d = parse_distribution({"dist": "choice", "values": [1, 2]}, WHERE)
    assert d == Choice((1, 2))
    xs = draws(d)
    assert xs.count(1) / len(xs) == pytest.approx(0.5, abs=0.02)
    assert d.mean == 1.5


@pytest.mark.parametrize(
    "value",
    [
        7,
        {"dist": "uniform", "min": 1, "max": 9},
        {"dist": "normal", "mean": 10, "stddev": 3},
        {"dist": "normal", "mean": 10, "stddev": 3, "min": 2, "max": 30},
        {"dist": "lognormal", "mean": 10.5, "stddev": 3, "max": 30},
        {"dist": "choice", "values": [1, 5], "weights": [1, 3]},
    ],
)
def test_samples_are_ints_deterministic_and_to_dict_round_trips(value):
    d = parse_distribution(value, WHERE)
    a, b = draws(d, 500, seed=7), draws(d, 500, seed=7)
    assert a == b
    assert all(type(x) is int and x >= 1 for x in a)
    assert parse_distribution(d.to_dict(), WHERE) == d


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"dist": "normal", "mean": 200, "stddev": 0}, f"{WHERE}: stddev must be > 0"),
        ({"dist": "lognormal", "mean": -1, "stddev": 5}, f"{WHERE}: mean must be > 0"),
        (0, f"{WHERE}: must be ≥ 1, got 0"),
        (True, f"{WHERE}: expected an int, or a table"),
        ("200", f"{WHERE}: expected an int, or a table"),
        (12.5, f"{WHERE}: expected an int, or a table"),
        (
            {"dist": "gamma", "mean": 3},
            f"{WHERE}.dist: expected one of uniform, normal, lognormal, choice, got 'gamma'",
        ),
        ({"mean": 3}, f"{WHERE}.dist: expected one of"),
        ({"dist": "uniform", "min": 5}, f"{WHERE}: dist = 'uniform' needs 'max'"),
        ({"dist": "uniform", "min": 5, "max": 4}, f"{WHERE}: max (4) must be ≥ min (5)"),
        ({"dist": "uniform", "min": 0, "max": 4}, f"{WHERE}: min must be an int ≥ 1, got 0"),
        ({"dist": "uniform", "min": 1.5, "max": 4}, f"{WHERE}: min must be an int ≥ 1, got 1.5"),
        ({"dist": "normal", "mean": 10, "stdev": 3}, f"{WHERE}: unknown key 'stdev' for dist = 'normal'"),
        ({"dist": "normal", "mean": 10, "stddev": 3, "max": 2, "min": 5}, f"{WHERE}: max (2) must be ≥ min (5)"),
        ({"dist": "choice", "values": []}, f"{WHERE}.values: expected a non-empty list"),
        ({"dist": "choice", "values": [3, 0]}, f"{WHERE}.values[1]: expected an int ≥ 1, got 0"),
        ({"dist": "choice", "values": [3, 4], "weights": [1]}, f"{WHERE}.weights: expected a list of 2 numbers"),
        ({"dist": "choice", "values": [3, 4], "weights": [1, -1]}, f"{WHERE}.weights[1]: expected a number ≥ 0"),
        ({"dist": "choice", "values": [3, 4], "weights": [0, 0]}, f"{WHERE}.weights: at least one weight must be > 0"),
        # a count beyond any model's context is a typo that would exhaust memory building the prompt
        (1_000_000_000, f"{WHERE}: 1e+09 is more than any model's context (10,000,000 tokens at most)"),
        ({"dist": "uniform", "min": 1, "max": 10**12}, f"{WHERE}.max: 1e+12 is more than any model's context"),
        ({"dist": "lognormal", "mean": 5e8, "stddev": 5}, f"{WHERE}.mean: 5e+08 is more than any model's context"),
        ({"dist": "normal", "mean": 5, "stddev": 1, "max": 10**9}, f"{WHERE}.max: 1e+09 is more than"),
        ({"dist": "choice", "values": [3, 10**10]}, f"{WHERE}.values[1]: 1e+10 is more than"),
    ],
)
def test_errors_name_file_and_field(value, message):
    with pytest.raises(ProfileError) as e:
        parse_distribution(value, WHERE)
    assert str(e.value).startswith(message)
    assert "\n" not in str(e.value)


# -- durations ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        0,
        2.5,
        {"dist": "uniform", "min": 1, "max": 3},
        {"dist": "exponential", "mean": 5, "max": 30},
        {"dist": "normal", "mean": 4, "stddev": 2, "min": 1},
        {"dist": "lognormal", "mean": 5, "stddev": 4, "max": 60},
    ],
)
def test_durations_are_floats_within_bounds_deterministic_and_round_trip(value):
    d = parse_duration(value, "w")
    a = [d.sample(random.Random(4)) for _ in range(200)]
    b = [d.sample(random.Random(4)) for _ in range(200)]
    assert a == b
    assert all(isinstance(x, float) and x >= d.min and (d.max is None or x <= d.max) for x in a)
    assert parse_duration(d.to_dict(), "w") == d


def test_duration_moments():
    rng = random.Random(9)
    exp = parse_duration({"dist": "exponential", "mean": 5}, "w")
    xs = [exp.sample(rng) for _ in range(40_000)]
    assert statistics.mean(xs) == pytest.approx(5, rel=0.03)
    assert statistics.stdev(xs) == pytest.approx(5, rel=0.05)  # memoryless: stddev = mean
    uni = parse_duration({"dist": "uniform", "min": 2, "max": 4}, "w")
    assert uni.mean == 3 and statistics.mean(uni.sample(rng) for _ in range(20_000)) == pytest.approx(3, rel=0.02)
    assert parse_duration(1.5, "w") == Duration("fixed", 1.5)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (-1, "where: must be ≥ 0 seconds, got -1"),
        ("5s", "where: expected a number of seconds ≥ 0, or a table"),
        ({"dist": "gamma"}, "where.dist: expected one of uniform, exponential, normal, lognormal, got 'gamma'"),
        ({"dist": "exponential", "mean": 0}, "where: mean must be > 0"),
        ({"dist": "uniform", "min": 1}, "where: dist = 'uniform' needs 'max'"),
        ({"dist": "normal", "mean": 1, "stddev": 1, "scale": 2}, "where: unknown key 'scale'"),
        ({"dist": "uniform", "min": -1, "max": 2}, "where: min must be a number of seconds ≥ 0"),
    ],
)
def test_duration_errors_name_the_field(value, message):
    with pytest.raises(ProfileError) as e:
        parse_duration(value, "where")
    assert str(e.value).startswith(message)
