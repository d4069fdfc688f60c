from __future__ import annotations

import itertools
import random
from collections import Counter

import pytest

from llmload.workload.mix import Mix, integer_weights


def sequence(weights, n, offset=0):
    m = Mix(weights, offset=offset)
    return [m.next() for _ in range(n)]


def max_prefix_deviation(weights, seq):
    w = integer_weights(weights)
    total = sum(w)
    counts = [0] * len(w)
    worst = 0.0
    for n, i in enumerate(seq, 1):
        counts[i] += 1
        worst = max(worst, max(abs(counts[k] - n * w[k] / total) for k in range(len(w))))
    return worst


def test_343_sequence_is_pinned():
    assert sequence([3, 4, 3], 10) == [1, 0, 2, 1, 0, 2, 1, 0, 1, 2]


@pytest.mark.parametrize(
    ("weights", "ints"), [([3, 4, 3], (3, 4, 3)), ([1, 2, 7], (1, 2, 7)), ([0.3, 0.45, 0.25], (6, 9, 5))]
)
def test_every_full_period_is_exact(weights, ints):
    m = Mix(weights)
    assert m.period == sum(ints)
    for _ in range(50):
        counts = Counter(m.next() for _ in range(m.period))
        assert tuple(counts[i] for i in range(len(ints))) == ints


@pytest.mark.parametrize("weights", [[3, 4, 3], [1, 2, 7], [0.3, 0.45, 0.25], [1, 1], [5, 1], [1, 1, 1, 6, 6]])
def test_every_prefix_within_one_request(weights):
    k = len(weights)
    bound = 1 - 1 / (2 * k - 2)
    seq = sequence(weights, 5 * sum(integer_weights(weights)))
    assert max_prefix_deviation(weights, seq) <= bound + 1e-12
    assert bound < 1


@pytest.mark.parametrize(
    ("weights", "worst"), [([3, 4, 3], 1.0), ([1, 2, 7], 1.2), ([0.3, 0.45, 0.25], 1.1), ([1, 1], 0.5)]
)
def test_a_user_at_an_offset_sees_a_window_within_two_sigma(weights, worst):
    """Windows of the cycle cannot all stay under one request (the best 3:4:3 cycle reaches 0.9)."""
    k = len(weights)
    period = sum(integer_weights(weights))
    devs = [max_prefix_deviation(weights, sequence(weights, 3 * period, offset)) for offset in range(period)]
    assert max(devs) == pytest.approx(worst)
    assert max(devs) <= 2 * (1 - 1 / (2 * k - 2)) + 1e-12


def test_prefix_bound_exhaustive_small_weights():
    for k in (2, 3, 4):
        bound = 1 - 1 / (2 * k - 2)
        for w in itertools.product(range(1, 7), repeat=k):
            assert max_prefix_deviation(w, sequence(w, 2 * sum(w))) <= bound + 1e-12, w


def test_prefix_bound_random_weights_many_classes():
    rng = random.Random(3)
    for _ in range(300):
        w = [rng.randint(1, 300) for _ in range(rng.randint(2, 8))]
        assert max_prefix_deviation(w, sequence(w, sum(w))) < 1, w


def test_nginx_swrr_would_miss_the_bound():
    """The reason mix.py is not plain nginx SWRR: it falls a whole request behind at 1:1:1:6:6."""
    w = [1, 1, 1, 6, 6]
    cur, seq = [0] * len(w), []
    for _ in range(sum(w)):
        cur = [c + x for c, x in zip(cur, w, strict=True)]
        i = max(range(len(w)), key=lambda j: (cur[j], -j))
        cur[i] -= sum(w)
        seq.append(i)
    assert max_prefix_deviation(w, seq) >= 1
    assert max_prefix_deviation(w, sequence(w, sum(w))) < 1


def test_ten_users_first_and_second_requests_are_exactly_343():
    mixes = [Mix([3, 4, 3], offset=u) for u in range(10)]
    first = Counter(m.next() for m in mixes)
    second = Counter(m.next() for m in mixes)
    assert [first[i] for i in range(3)] == [3, 4, 3]
    assert [second[i] for i in range(3)] == [3, 4, 3]


@pytest.mark.parametrize("users", [1, 2, 3, 5, 7, 13, 25, 100])
def test_first_requests_of_n_users_within_one_of_share(users):
    first = Counter(Mix([3, 4, 3], offset=u).next() for u in range(users))
    for i, share in enumerate((0.3, 0.4, 0.3)):
        assert abs(first[i] - users * share) < 1


def test_one_user_sends_every_class_in_ratio():
    assert Counter(sequence([3, 4, 3], 10)) == {0: 3, 1: 4, 2: 3}


def test_offset_shifts_the_sequence_and_wraps():
    base = sequence([1, 2, 7], 40)
    for k in range(25):
        assert sequence([1, 2, 7], 20, offset=k) == base[k % 10 : k % 10 + 20]
    assert sequence([1, 2, 7], 10, offset=1003) == sequence([1, 2, 7], 10, offset=3)


def test_single_class():
    assert sequence([2.5], 5) == [0, 0, 0, 0, 0]


@pytest.mark.parametrize(
    ("weights", "expected"),
    [
        ([3, 4, 3], (3, 4, 3)),
        ([2, 4, 2], (1, 2, 1)),
        ([0.3, 0.45, 0.25], (6, 9, 5)),
        ([1.5, 1], (3, 2)),
        ([0.1, 0.2], (1, 2)),
    ],
)
def test_integer_weights(weights, expected):
    assert integer_weights(weights) == expected


@pytest.mark.parametrize("weights", [[], [1, 0], [1, -2], [float("nan")], [float("inf")], [True, 1], ["3"]])
def test_bad_weights(weights):
    with pytest.raises(ValueError, match="weight"):
        Mix(weights)


def test_negative_offset():
    with pytest.raises(ValueError, match="offset"):
        Mix([1, 1], offset=-1)
