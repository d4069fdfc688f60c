"""The fixed latency model's schedule: absolute due times, tokens due at a given time."""

from __future__ import annotations

import pytest

from llmload.sim.latency_model import FixedLatencyModel


def test_due_times_are_absolute_from_arrival():
    m = FixedLatencyModel(ttft_s=0.1, itl_s=0.01)
    assert m.due(5.0, 0) == pytest.approx(5.1)
    assert m.due(5.0, 1) == pytest.approx(5.11)
    assert m.due(5.0, 50) == pytest.approx(5.6)
    # no accumulation: token i depends only on t0 and i
    assert m.due(5.0, 1000) == pytest.approx(5.0 + 0.1 + 1000 * 0.01)


def test_tokens_due_counts_tokens_whose_time_has_come():
    m = FixedLatencyModel(ttft_s=0.1, itl_s=0.01)
    assert m.tokens_due(0.0, 0.0, 10) == 0
    assert m.tokens_due(0.0, 0.0999, 10) == 0
    assert m.tokens_due(0.0, 0.1, 10) == 1
    assert m.tokens_due(0.0, 0.1099, 10) == 1
    assert m.tokens_due(0.0, 0.11, 10) == 2
    assert m.tokens_due(0.0, 0.155, 10) == 6
    assert m.tokens_due(0.0, 100.0, 10) == 10  # capped at max_tokens


@pytest.mark.parametrize(("t0", "itl"), [(0.0, 0.01), (12345.678, 0.005), (3.3, 0.035), (0.1, 0.001)])
def test_a_token_is_due_exactly_at_its_due_time(t0, itl):
    m = FixedLatencyModel(ttft_s=0.18, itl_s=itl)
    for i in range(300):
        assert m.tokens_due(t0, m.due(t0, i), 1000) == i + 1


def test_zero_itl_makes_every_token_due_at_ttft():
    m = FixedLatencyModel(ttft_s=0.05, itl_s=0.0)
    assert m.tokens_due(0.0, 0.049, 7) == 0
    assert m.tokens_due(0.0, 0.05, 7) == 7
    assert m.duration(7) == pytest.approx(0.05)


def test_duration_is_arrival_to_last_token():
    m = FixedLatencyModel(ttft_s=0.18, itl_s=0.035)
    assert m.duration(0) == 0.0
    assert m.duration(1) == pytest.approx(0.18)
    assert m.duration(256) == pytest.approx(0.18 + 255 * 0.035)
