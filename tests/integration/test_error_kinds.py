"""Every error kind, end to end: a real Locust runner against a misbehaving server.

Each case runs llmload's user in a real LocalRunner with ``--model <mode>`` (the faulty
server picks its misbehaviour from the model name) and checks the summary: the error is
counted under its kind, and requests = ok + errors + interrupted.
"""

from __future__ import annotations

import socket

import pytest

from tests.helpers.harness import run_inprocess, write_tiny_profile

pytestmark = pytest.mark.integration

CASES = [
    # mode, extra flags, expected error kind (None = every finished request is ok)
    ("ok", [], None),
    ("no_done", [], None),
    ("short_with_finish:3", [], None),
    ("multi_token:4", [], None),
    ("http:429", [], "http_429"),
    ("http:500", [], "http_500"),
    ("close_before_headers", [], "connection"),
    ("reset_midstream:3", [], "stream_disconnected"),
    ("close_midstream:3", [], "stream_disconnected"),
    ("slow_first:1500", ["--ttft-timeout", "0.3s"], "ttft_timeout"),
    ("slow_headers:1500", ["--ttft-timeout", "0.3s"], "ttft_timeout"),
    ("stall_after:3:1500", ["--stall-timeout", "0.3s"], "stall_timeout"),
    ("slow_total:100", ["--request-timeout", "0.6s"], "total_timeout"),
    ("malformed_after:3", [], "malformed_chunk"),
    ("short:3", [], "stream_truncated"),
    ("empty", [], "empty_response"),
    ("error_event:3", [], "server_error"),
]


@pytest.fixture(scope="module")
def tiny_profile(tmp_path_factory):
    return write_tiny_profile(tmp_path_factory.mktemp("profiles"), output_tokens=16)


@pytest.mark.parametrize(("mode", "flags", "kind"), CASES, ids=[c[0] for c in CASES])
def test_error_kind_is_counted(faulty, tiny_profile, mode, flags, kind):
    # 1.2 s: the slowest kind (slow_total: the 0.6 s --request-timeout) fails each user's first request
    # by ~0.7 s; every mode is the same on every request, and error backoff spaces the failing ones out
    # (4-9 finished requests per failing mode, 55-270 per succeeding one).
    s = run_inprocess(faulty, ["--model", mode, "--profile", tiny_profile, *flags], users=2, seconds=1.2)
    o = s["overall"]
    assert o["requests"] == o["ok"] + o["errors"] + o["interrupted"]
    assert o["requests"] >= 2
    if kind is None:
        assert o["errors"] == 0, s["errors_by_kind"]
        assert o["ok"] >= 2
        assert o["output_tokens"] == 16 * o["ok"] or mode.startswith("short_with_finish")
    else:
        assert o["errors"] >= 1
        assert s["errors_by_kind"] == {kind: o["errors"]}
        assert o["ok"] == 0


def test_multi_token_events_count_tokens_from_usage(faulty, tiny_profile):
    s = run_inprocess(faulty, ["--model", "multi_token:4", "--profile", tiny_profile], users=1, seconds=1.5)
    o = s["overall"]
    assert o["ok"] >= 1 and o["output_tokens"] == 16 * o["ok"]
    assert o["output_tokens_from_usage_ratio"] == 1.0
    # 4 events of 4 tokens: 3 ITL gaps per request, TPOT spreads over 15 token gaps.
    assert o["itl_ms"]["count"] == 3 * o["ok"]


def test_without_stream_usage_tokens_are_counted_from_the_stream(faulty, tiny_profile):
    s = run_inprocess(faulty, ["--model", "ok", "--profile", tiny_profile, "--no-stream-usage"], users=1, seconds=1.0)
    o = s["overall"]
    assert o["ok"] >= 1 and o["output_tokens"] == 16 * o["ok"]
    assert o["output_tokens_from_usage_ratio"] == 0.0


def test_requests_cut_by_the_end_of_the_test_are_interrupted(faulty, tiny_profile):
    # Each request takes 16 x 100 ms: the test ends while every user is mid-stream.
    s = run_inprocess(faulty, ["--model", "slow_total:100", "--profile", tiny_profile], users=3, seconds=0.8)
    o = s["overall"]
    assert o["interrupted"] == 3 and o["errors"] == 0 and o["ok"] == 0
    assert o["requests"] == 3


def test_a_refused_port_is_a_connection_error(tiny_profile):
    with socket.socket() as s:  # a port nobody listens on (bound, then released)
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    host = f"http://127.0.0.1:{port}"
    summary = run_inprocess(host, ["--model", "ok", "--profile", tiny_profile, "--no-preflight"], users=2, seconds=1.0)
    o = summary["overall"]
    assert o["requests"] == o["ok"] + o["errors"] + o["interrupted"]
    assert o["errors"] >= 2 and summary["errors_by_kind"] == {"connection": o["errors"]}
    assert o["reconnects"] == 0


@pytest.mark.parametrize("mode", ["close_midstream:3", "reset_midstream:3"])
def test_a_stream_cut_after_the_headers_says_how_many_tokens_had_arrived(faulty, tiny_profile, mode):
    from llmload.metrics.record import RequestRecord

    seen: list[RequestRecord] = []
    s = run_inprocess(faulty, ["--model", mode, "--profile", tiny_profile], users=1, seconds=1.0, on_record=seen.append)
    o = s["overall"]
    assert o["requests"] == o["ok"] + o["errors"] + o["interrupted"]
    assert s["errors_by_kind"] == {"stream_disconnected": o["errors"]} and o["errors"] >= 1
    failed = [r for r in seen if r.outcome == "error"]
    assert failed and all(r.error_message.startswith("connection lost after 3 tokens") for r in failed)
    cut = sum(r.output_tokens for r in seen if r.outcome == "interrupted")
    assert o["partial_output_tokens"] == 3 * o["errors"] + cut
    assert o["received_output_tokens"] == o["partial_output_tokens"]


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (["--stream-format", "ndjson"], "the body is SSE (data: {"),  # was malformed_chunk
        (["--api", "openai-completions", "--endpoint-path", "/v1/chat/completions"], "use --api openai-chat"),  # was empty_response
    ],
    ids=["ndjson_on_sse", "completions_on_chat"],
)  # fmt: skip
def test_an_answer_in_another_format_is_a_stream_format_mismatch(faulty, tiny_profile, flags, says):
    """A body that holds an answer the flags do not read is counted as what it is, with the flag that reads it."""
    s = run_inprocess(faulty, ["--model", "ok", "--profile", tiny_profile, *flags], users=1, seconds=0.6)
    o = s["overall"]
    assert o["requests"] == o["ok"] + o["errors"] + o["interrupted"] and o["errors"] >= 1
    assert s["errors_by_kind"] == {"stream_format_mismatch": o["errors"]}
    assert says in s["errors_examples"]["stream_format_mismatch"]
