"""The simulator's /v1/messages: event order, thinking blocks, usage, headers, failures; read back by the adapter."""

from __future__ import annotations

import json

import pytest

from llmload.adapters import AdapterConfig, AnthropicMessagesAdapter
from llmload.sim import SimConfig, run_in_thread
from tests.helpers.sim_wire import post, replay, sse_events

BODY = {"model": "m", "system": "be brief", "messages": [{"role": "user", "content": "one two three"}], "stream": True}
VERSION = {"anthropic-version": "2023-06-01"}


@pytest.fixture(scope="module")
def url():
    with run_in_thread(SimConfig(port=0, ttft_ms=2, itl_ms=1, default_max_tokens=5)) as server:
        yield server.url


def messages(url: str, body: dict, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    return post(url, "/v1/messages", body, VERSION if headers is None else headers)


def test_thinking_then_text_in_the_reference_order(url):
    status, body = messages(url, {**BODY, "max_tokens": 6, "llmload_reasoning_tokens": 2})
    assert status == 200
    events = sse_events(body)
    docs = [json.loads(data) for _, data in events]
    kinds = [(name, d.get("delta", {}).get("type")) for (name, _), d in zip(events, docs, strict=True)]
    assert kinds == [
        ("message_start", None), ("content_block_start", None), ("ping", None),
        *[("content_block_delta", "thinking_delta")] * 2,
        ("content_block_delta", "signature_delta"), ("content_block_stop", None), ("content_block_start", None),
        *[("content_block_delta", "text_delta")] * 4,
        ("content_block_stop", None), ("message_delta", None), ("message_stop", None),
    ]  # fmt: skip
    assert docs[0]["message"]["usage"]["input_tokens"] == 5  # words of messages + system
    assert docs[1]["content_block"]["type"] == "thinking" and docs[7]["content_block"]["type"] == "text"
    assert {d["index"] for d in docs if d.get("delta", {}).get("type") == "text_delta"} == {1}
    assert docs[-2]["delta"]["stop_reason"] == "max_tokens" and docs[-2]["usage"] == {"output_tokens": 6}


def test_the_adapter_reads_it_channel_by_channel(url):
    _, body = messages(url, {**BODY, "max_tokens": 6, "llmload_reasoning_tokens": 2})
    state, events, tokens, done, error = replay(AnthropicMessagesAdapter(AdapterConfig()), body)
    assert (events, tokens, done, error) == (6, 6, True, None)
    assert (state.reasoning_chunks, state.first_output_chunk, state.usage_reasoning_tokens) == (2, 2, None)
    assert (state.usage_prompt_tokens, state.usage_completion_tokens, state.finish_reason) == (5, 6, "max_tokens")


def test_without_reasoning_one_text_block(url):
    _, body = messages(url, {**BODY, "max_tokens": 3})
    docs = [json.loads(d) for _, d in sse_events(body)]
    assert docs[1]["content_block"] == {"type": "text", "text": ""}
    assert sum(d.get("delta", {}).get("type") == "text_delta" for d in docs) == 3
    assert not any(d.get("delta", {}).get("type") in ("thinking_delta", "signature_delta") for d in docs)


def test_thinking_that_fills_the_limit_closes_its_block(url):
    _, body = messages(url, {**BODY, "max_tokens": 2, "llmload_reasoning_tokens": 5})
    kinds = [json.loads(d).get("delta", {}).get("type") for _, d in sse_events(body)]
    assert kinds.count("thinking_delta") == 2 and "text_delta" not in kinds and "signature_delta" in kinds


def test_an_injected_failure_is_an_error_event(url):
    _, body = messages(url, {**BODY, "max_tokens": 6, "llmload_fail_after": 3})
    assert sse_events(body)[-1][0] == "error"
    _, events, _, done, error = replay(AnthropicMessagesAdapter(AdapterConfig()), body)
    assert (events, done, error) == (3, False, "server_error")


def test_non_streaming_answers_the_message_object(url):
    status, body = messages(url, {**BODY, "stream": False, "max_tokens": 4, "llmload_reasoning_tokens": 1})
    doc = json.loads(body)
    assert status == 200 and doc["type"] == "message" and doc["stop_reason"] == "max_tokens"
    assert [b["type"] for b in doc["content"]] == ["thinking", "text"]
    assert doc["usage"]["output_tokens"] == 4


@pytest.mark.parametrize(
    ("body", "headers", "message"),
    [
        ({**BODY, "max_tokens": 3}, {}, "anthropic-version: header is required"),
        ({k: v for k, v in BODY.items()}, VERSION, "max_tokens: Field required"),
        ({**BODY, "max_tokens": 3, "messages": [{"role": "system", "content": "x"}]}, VERSION, "Unexpected role"),
        ({**BODY, "max_tokens": 3, "messages": []}, VERSION, "non-empty list"),
    ],
)
def test_bad_requests_are_400(url, body, headers, message):
    status, data = messages(url, body, headers)
    assert status == 400 and message in json.loads(data)["error"]["message"]


def test_api_key_is_checked_the_way_each_api_sends_it():
    chat = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 2}
    config = SimConfig(port=0, ttft_ms=1, itl_ms=1, api_key="k-123")
    assert "k-123" not in repr(config) and "API key required" in config.describe()
    with run_in_thread(config) as server:
        assert messages(server.url, {**BODY, "max_tokens": 2})[0] == 401
        assert messages(server.url, {**BODY, "max_tokens": 2}, {**VERSION, "x-api-key": "k-123"})[0] == 200
        bearer = {**VERSION, "Authorization": "Bearer k-123"}
        assert messages(server.url, {**BODY, "max_tokens": 2}, bearer)[0] == 401  # not the Messages API's way
        assert post(server.url, "/v1/chat/completions", chat)[0] == 401
        assert post(server.url, "/v1/chat/completions", chat, {"Authorization": "Bearer k-123"})[0] == 200
        assert post(server.url, "/v1/chat/completions", chat, {"Authorization": "Bearer nope"})[0] == 401


def test_the_prefix_cache_split_is_in_message_delta_and_the_adapter_adds_it_back():
    from llmload.adapters import StreamState
    from llmload.sim.api_messages import MessagesEncoder, parse_messages

    req = parse_messages(json.dumps({**BODY, "max_tokens": 2}).encode(), "m", 4)
    enc = MessagesEncoder(req, 0, 0)
    name, data = sse_events(enc.end_events(2, cached_tokens=3)[-2])[0]
    usage = json.loads(data)["usage"]
    assert usage == {"output_tokens": 2, "input_tokens": 2, "cache_creation_input_tokens": 0,
                     "cache_read_input_tokens": 3}  # fmt: skip
    state = StreamState()
    AnthropicMessagesAdapter(AdapterConfig()).feed(state, data, name)
    assert (state.usage_prompt_tokens, state.usage_completion_tokens) == (5, 2)
    assert json.loads(enc.full_body(2, 3))["usage"]["cache_read_input_tokens"] == 3
    assert "input_tokens" not in json.loads(sse_events(enc.end_events(2)[-2])[0][1])["usage"]
