from __future__ import annotations

import random
from datetime import datetime, timezone
from email.utils import format_datetime

import pytest

from llmload.users.backoff_wait import RETRY_AFTER_MAX_S, Backoff, BackoffSpec, retry_after_s


def _seconds(text: str) -> float:
    units = {"ms": 0.001, "s": 1.0, "m": 60.0}
    for unit in ("ms", "s", "m"):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * units[unit]
    return float(text)


def test_waits_grow_exponentially_within_equal_jitter_up_to_the_cap():
    b = Backoff(BackoffSpec(0.1, 2.0), random.Random(1))
    waits = [b.after_error() for _ in range(8)]
    ceilings = [0.1, 0.2, 0.4, 0.8, 1.6, 2.0, 2.0, 2.0]
    for w, c in zip(waits, ceilings, strict=True):
        assert c / 2 <= w <= c
    assert b.errors_in_a_row == 8


def test_a_success_resets_the_sequence():
    b = Backoff(BackoffSpec(0.1, 5.0), random.Random(2))
    for _ in range(5):
        b.after_error()
    b.after_success()
    assert 0.05 <= b.after_error() <= 0.1


def test_users_that_failed_together_come_back_apart():
    waits = {round(Backoff(BackoffSpec(1.0, 5.0), random.Random(seed)).after_error(), 6) for seed in range(20)}
    assert len(waits) == 20


def test_retry_after_is_a_floor_up_to_its_bound():
    b = Backoff(BackoffSpec(0.1, 5.0), random.Random(3))
    assert b.after_error(retry_after=2.5) == 2.5
    assert b.after_error(retry_after=3600) == RETRY_AFTER_MAX_S
    assert b.after_error(retry_after=0.0) <= 0.4  # a zero Retry-After does not shorten the backoff


def test_off_never_waits():
    b = Backoff(BackoffSpec(None, None), random.Random(4))
    assert b.after_error() == 0.0 and b.after_error(retry_after=9) == 0.0
    assert not b.spec.on


def test_retry_after_header_as_seconds_or_http_date():
    assert retry_after_s("1") == 1.0
    assert retry_after_s(" 2.5 ") == 2.5
    assert retry_after_s("-3") == 0.0
    assert retry_after_s(None) is None and retry_after_s("") is None
    assert retry_after_s("soon") is None and retry_after_s("nan") is None
    now = datetime(2026, 12, 1, 12, 0, 0, tzinfo=timezone.utc).timestamp()
    date = format_datetime(datetime(2026, 12, 1, 12, 0, 7, tzinfo=timezone.utc), usegmt=True)
    assert retry_after_s(date, now=lambda: now) == pytest.approx(7.0)


def test_flag_values():
    assert BackoffSpec.parse("off", _seconds) == BackoffSpec(None, None)
    assert BackoffSpec.parse("100ms:5s", _seconds) == BackoffSpec(0.1, 5.0)
    assert BackoffSpec.parse("200ms", _seconds) == BackoffSpec(0.2, 5.0)
    assert BackoffSpec.parse("10s", _seconds) == BackoffSpec(10.0, 10.0)
    with pytest.raises(ValueError, match="maximum must be >= its minimum"):
        BackoffSpec.parse("2s:1s", _seconds)
    with pytest.raises(ValueError, match="minimum must be > 0"):
        BackoffSpec.parse("0s:1s", _seconds)
