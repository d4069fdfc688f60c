"""Failing servers, end to end: users back off after errors, and keep what the server said.

A real LocalRunner against ``tests/servers/faulty.py`` (the mode is the request's model):
without backoff a failed request is followed at once by the next (5 users against HTTP 500
made 31 504 requests in 15 s); with it each user waits, longer after each error in a row,
at least a 429's ``Retry-After``. Every case checks requests = ok + errors + interrupted.
"""

from __future__ import annotations

import pytest

from tests.helpers.harness import run_inprocess, write_tiny_profile

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return write_tiny_profile(tmp_path_factory.mktemp("profiles"), output_tokens=16)


def _identity(o: dict) -> None:
    assert o["requests"] == o["ok"] + o["errors"] + o["interrupted"]


def test_errors_back_off_by_default_and_the_time_is_reported(faulty, tiny):
    s = run_inprocess(faulty, ["--model", "http:500", "--profile", tiny], users=2, seconds=3.0)
    o = s["overall"]
    _identity(o)
    # 100 ms doubling, equal jitter: at most 1/0.05 + ... ; at most 2 x 7 waits fit in 3 s.
    assert 4 <= o["errors"] <= 16, o["errors"]
    assert o["backoffs"] == o["errors"]  # one wait after each error (the last one cut by the stop)
    assert 1.0 <= o["backoff_s"] <= 2 * 3.0 + 0.5  # a wait can end a little after the stop
    assert s["errors_examples"] == {"http_500": "faulty: HTTP 500"}
    assert s["classes"]["tiny"]["errors_examples"] == {"http_500": "faulty: HTTP 500"}
    assert s["config"]["error_backoff_s"] == [0.1, 5.0]


def test_backoff_off_sends_again_at_once(faulty, tiny):
    s = run_inprocess(faulty, ["--model", "http:500", "--profile", tiny, "--error-backoff", "off"], users=1, seconds=1.5)
    o = s["overall"]
    _identity(o)
    assert o["errors"] >= 50, o["errors"]
    assert o["backoffs"] == 0 and o["backoff_s"] == 0


def test_retry_after_is_honoured(faulty, tiny):
    s = run_inprocess(faulty, ["--model", "retry_after:429:1", "--profile", tiny, "--error-backoff", "10ms:20ms"],
                      users=1, seconds=2.5)  # fmt: skip
    o = s["overall"]
    _identity(o)
    assert 2 <= o["errors"] <= 3, o["errors"]  # t = 0, 1, 2 s: the 20 ms cap alone would allow ~100
    assert o["backoff_s"] >= 1.0
    assert s["errors_by_kind"] == {"http_429": o["errors"]}


def test_the_servers_own_message_is_kept(faulty, tiny):
    s = run_inprocess(faulty, ["--model", "context_length", "--profile", tiny], users=1, seconds=1.0)
    _identity(s["overall"])
    example = s["errors_examples"]["http_400"]
    assert example.startswith("This model's maximum context length is 32768 tokens. However, you requested 100050")
    assert len(example) <= 200


def test_a_web_page_on_a_200_is_wrong_content_type(faulty, tiny):
    s = run_inprocess(faulty, ["--model", "html", "--profile", tiny], users=1, seconds=1.0)
    o = s["overall"]
    _identity(o)
    assert o["errors"] >= 1 and o["ok"] == 0
    assert s["errors_by_kind"] == {"wrong_content_type": o["errors"]}
    example = s["errors_examples"]["wrong_content_type"]
    assert "expected text/event-stream: wrong --host or --endpoint-path?" in example
    assert "Content-Type text/html" in example and "Welcome to nginx!" in example


def test_a_run_refused_with_429_and_retry_after_is_diagnosed_rate_limited(faulty, tiny, tmp_path):
    """Issue 22: 100 % HTTP 429 with Retry-After was 'Target unreachable / every request fails', no word of a rate limit."""
    from tests.helpers.harness import run_cli

    code, output, s = run_cli(
        ["--headless", "--only-summary", "--no-run-dir", "-u", "2", "-r", "2", "-t", "3s", "--host", faulty,
         "--model", "retry_after:429:1", "--profile", tiny, "--stop-timeout", "1"],
        tmp_path,
    )  # fmt: skip
    assert s is not None, output[-3000:]
    o = s["overall"]
    _identity(o)
    assert o["ok"] == 0 and o["errors"] >= 4 and s["errors_by_kind"] == {"http_429": o["errors"]}
    assert o["retry_afters"] == o["errors"] and o["retry_after_s"] == 1.0  # every refusal said when to come back
    top = s["findings"][0]
    assert top["id"] == "rate_limited", s["findings"]
    assert f"{o['errors']} refusals carried Retry-After, asking for 1 s on average" in top["evidence_text"]
    assert all(f["id"] not in ("target_unreachable", "load_generator_saturated") for f in s["findings"])
    assert f"finding: Rate limited: {faulty} refused {o['errors']} of {o['errors']} requests with HTTP 429" in output
