"""The Keep-Alive header and the reuse rule, on an injected clock."""

from __future__ import annotations

import pytest

from llmload.users.keepalive import Connection, KeepAlivePolicy, parse_keep_alive
from tests.helpers.clock import FakeClock


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("timeout=5, max=100", (5.0, 100)),  # llama.cpp (cpp-httplib)
        ("max=99, timeout=15", (15.0, 99)),  # any order
        ("Timeout=5,MAX=3", (5.0, 3)),  # any case, no spaces
        ("timeout=2.5", (2.5, None)),
        ("max=7", (None, 7)),
        ('timeout="4"', (4.0, None)),
        ("timeout=abc, max=-1, max=x", (None, None)),  # bad values ignored
        ("timeout=-3, foo=bar, max", (None, None)),
        ("timeout=nan, max=2", (None, 2)),
        ("", (None, None)),
        (None, (None, None)),
        (["timeout=5", "max=10"], (5.0, 10)),  # the header sent twice
    ],
)
def test_parse_keep_alive(header, expected):
    assert parse_keep_alive(header) == expected


def served(policy: KeepAlivePolicy, header: str | None, times: int = 1) -> Connection:
    conn = Connection()
    for _ in range(times):
        conn.announce(header)
        policy.returned(conn)
    return conn


def test_no_header_means_no_limit():
    clock = FakeClock(100.0)
    policy = KeepAlivePolicy(clock)
    conn = served(policy, None, times=1000)
    clock.t += 3600
    assert policy.reusable(conn)


def test_idle_timeout_with_margin():
    clock = FakeClock(100.0)
    policy = KeepAlivePolicy(clock)
    conn = served(policy, "timeout=5, max=100")
    clock.t += 3.99
    assert policy.reusable(conn)
    clock.t += 0.01  # 4.0 s idle = timeout 5 - margin 1
    assert not policy.reusable(conn)


def test_margin_is_a_quarter_of_a_short_timeout():
    clock = FakeClock(100.0)
    policy = KeepAlivePolicy(clock)
    conn = served(policy, "timeout=1")
    clock.t += 0.74
    assert policy.reusable(conn)
    clock.t += 0.01
    assert not policy.reusable(conn)


def test_timeout_zero_never_reuses():
    policy = KeepAlivePolicy(FakeClock(100.0))
    assert not policy.reusable(served(policy, "timeout=0"))


def test_idle_counts_from_the_last_return():
    clock = FakeClock(100.0)
    policy = KeepAlivePolicy(clock)
    conn = served(policy, "timeout=5")
    clock.t += 3.5
    conn.announce("timeout=5")
    policy.returned(conn)  # a second request ended: idle again from now
    clock.t += 3.5
    assert policy.reusable(conn)


def test_max_requests_per_connection():
    policy = KeepAlivePolicy(FakeClock(100.0))
    assert policy.reusable(served(policy, "timeout=5, max=3", times=2))
    assert not policy.reusable(served(policy, "timeout=5, max=3", times=3))


def test_the_latest_answer_holds():
    clock = FakeClock(100.0)
    policy = KeepAlivePolicy(clock)
    conn = served(policy, "timeout=1, max=1")
    assert not policy.reusable(conn)
    conn.announce(None)  # the next answer on it carried no limits
    assert policy.reusable(conn)
