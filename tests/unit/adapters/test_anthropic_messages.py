"""The anthropic-messages adapter: request body and headers, event dispatch, channels, usage, errors."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import orjson
import pytest

from llmload.adapters import (
    DONE,
    AdapterConfig,
    AnthropicMessagesAdapter,
    Framing,
    StreamState,
    api_headers_for,
    api_key_env_of,
)
from llmload.errors import MalformedChunk, ServerErrorEvent
from llmload.testing import assert_adapter_conforms
from llmload.workload.request_types import RequestSample

STREAMS = Path(__file__).resolve().parents[2] / "fixtures" / "streams" / "anthropic-messages"
SAMPLE = RequestSample(class_name="short", prompt="Hi there", input_tokens=2, max_tokens=7)


def delta(kind: str, **fields: object) -> bytes:
    return orjson.dumps({"type": "content_block_delta", "index": 0, "delta": {"type": kind, **fields}})


@pytest.fixture
def adapter() -> AnthropicMessagesAdapter:
    return AnthropicMessagesAdapter(AdapterConfig())


@pytest.fixture
def state() -> StreamState:
    return StreamState()


@pytest.mark.parametrize("sse_parser", ["fast", "sseclient"])
def test_conforms_to_its_transcripts(sse_parser: str) -> None:
    outcomes = assert_adapter_conforms(AnthropicMessagesAdapter(AdapterConfig()), STREAMS, sse_parser=sse_parser)
    assert len(outcomes) == len(list(STREAMS.glob("*.sse"))) >= 8


# -- request -----------------------------------------------------------------------------


def test_class_attributes_key_variable_and_headers() -> None:
    assert AnthropicMessagesAdapter.name == "anthropic-messages"
    assert AnthropicMessagesAdapter.default_path == "/v1/messages"
    assert AnthropicMessagesAdapter.default_framing is Framing.SSE
    assert api_key_env_of(AnthropicMessagesAdapter) == "ANTHROPIC_API_KEY"
    assert api_headers_for(AnthropicMessagesAdapter, "sk-ant-1") == {
        "anthropic-version": "2023-06-01",
        "x-api-key": "sk-ant-1",
    }
    assert api_headers_for(AnthropicMessagesAdapter, "") == {"anthropic-version": "2023-06-01"}


def test_default_request(adapter: AnthropicMessagesAdapter) -> None:
    spec = adapter.build_request(SAMPLE)
    assert (spec.method, spec.path, spec.max_tokens) == ("POST", "/v1/messages", 7)
    assert orjson.loads(spec.body) == {
        "model": "llmload-sim",
        "messages": [{"role": "user", "content": "Hi there"}],
        "max_tokens": 7,
        "stream": True,
    }
    assert "x-api-key" not in spec.headers and "Authorization" not in spec.headers  # the key is the runtime's


def test_system_messages_move_to_the_system_field_and_extra_body_wins() -> None:
    config = AdapterConfig(temperature=0.2, extra_body={"thinking": {"type": "enabled", "budget_tokens": 1024}})
    messages = (
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello"},
        {"role": "user", "content": "Bye"},
    )
    body = orjson.loads(AnthropicMessagesAdapter(config).build_request(RequestSample("c", "Hi", 1, 5, messages)).body)
    assert body["system"] == "Be brief."
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert body["temperature"] == 0.2 and body["thinking"]["budget_tokens"] == 1024


# -- stream ------------------------------------------------------------------------------


def test_text_and_tool_input_are_output_thinking_is_reasoning(adapter, state) -> None:
    assert adapter.feed(state, delta("thinking_delta", thinking="Let me see"), "content_block_delta") == 1
    assert adapter.feed(state, delta("signature_delta", signature="EqQB"), "content_block_delta") == 0
    assert state.first_output_chunk == -1
    assert adapter.feed(state, delta("text_delta", text="Hi"), "content_block_delta") == 1
    assert adapter.feed(state, delta("input_json_delta", partial_json=""), "content_block_delta") == 0
    assert adapter.feed(state, delta("input_json_delta", partial_json='{"a": 1}'), "content_block_delta") == 1
    assert adapter.feed(state, delta("citations_delta", citation={}), "content_block_delta") == 0
    assert (state.reasoning_chunks, state.first_output_chunk, state.text_chars) == (1, 1, 10 + 2 + 8)


def test_usage_finish_reason_and_stop(adapter, state) -> None:
    start = {"type": "message_start", "message": {"usage": {"input_tokens": 3, "cache_read_input_tokens": 100}}}
    assert adapter.feed(state, orjson.dumps(start), "message_start") == 0
    assert state.usage_prompt_tokens == 103 and state.usage_completion_tokens is None
    md = {"type": "message_delta", "delta": {"stop_reason": "max_tokens"}, "usage": {"output_tokens": 7}}
    assert adapter.feed(state, orjson.dumps(md), "message_delta") == 0
    assert (state.finish_reason, state.usage_completion_tokens) == ("max_tokens", 7)
    assert adapter.feed(state, b'{"type": "message_stop"}', "message_stop") == DONE
    assert state.usage_reasoning_tokens is None  # the API reports none: reasoning is counted


def test_ping_and_block_boundaries_are_not_parsed(adapter, state) -> None:
    for name in ("ping", "content_block_stop", "something_new"):
        assert adapter.feed(state, b"{junk", name) == 0


def test_a_tool_use_block_is_noted_with_its_input_fragments(adapter, state) -> None:
    start = {"type": "content_block_start", "index": 1,
             "content_block": {"type": "tool_use", "id": "toolu_1", "name": "search", "input": {}}}  # fmt: skip
    assert adapter.feed(state, orjson.dumps(start), "content_block_start") == 0
    assert adapter.feed(state, delta("input_json_delta", partial_json='{"q"'), "content_block_delta") == 1
    assert adapter.feed(state, delta("input_json_delta", partial_json=': 1}'), "content_block_delta") == 1
    assert state.tool_calls == [["toolu_1", "search", '{"q": 1}']]
    text = {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
    other = StreamState()
    assert adapter.feed(other, orjson.dumps(text), "content_block_start") == 0 and other.tool_calls is None


def test_an_agent_sample_sends_tools_and_tool_turns_as_blocks() -> None:
    tools = ({"type": "function", "function": {"name": "search", "description": "d", "parameters": {"type": "object"}}},)
    messages = ({"role": "system", "content": "be brief"}, {"role": "user", "content": "find x"},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "search", "arguments": '{"q": 1}'}},
                    {"id": "c2", "type": "function", "function": {"name": "search", "arguments": "oops"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "r1"},
                {"role": "tool", "tool_call_id": "c2", "content": "r2"})  # fmt: skip
    sample = RequestSample("a", "find x", 3, 5, messages=messages, tools=tools)
    body = orjson.loads(AnthropicMessagesAdapter(AdapterConfig()).build_request(sample).body)
    assert body["tools"] == [{"name": "search", "description": "d", "input_schema": {"type": "object"}}]
    assert body["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True} and body["system"] == "be brief"
    last = AnthropicMessagesAdapter(AdapterConfig()).build_request(replace(sample, tool_choice="none"))
    assert orjson.loads(last.body)["tool_choice"] == {"type": "none"}  # a sub-agent's last turn: answer in text
    user, assistant, results = body["messages"]
    assert user == {"role": "user", "content": "find x"}
    assert assistant == {"role": "assistant", "content": [
        {"type": "tool_use", "id": "c1", "name": "search", "input": {"q": 1}},
        {"type": "tool_use", "id": "c2", "name": "search", "input": {}}]}  # fmt: skip
    assert results == {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "r1"},
                                                   {"type": "tool_result", "tool_use_id": "c2", "content": "r2"}]}  # fmt: skip


def test_error_events_raise_server_error(adapter, state) -> None:
    data = b'{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}'
    with pytest.raises(ServerErrorEvent, match=r"Overloaded \(overloaded_error\)"):
        adapter.feed(state, data, "error")
    with pytest.raises(ServerErrorEvent, match="Overloaded"):
        adapter.feed(state, data)  # without an event line: dispatched on type


@pytest.mark.parametrize(
    ("data", "event"),
    [
        (delta("text_delta", text=5), "content_block_delta"),
        (delta("text_delta"), "content_block_delta"),
        (b'{"type": "content_block_delta", "delta": "x"}', "content_block_delta"),
        (b'{"type": "message_start", "message": []}', "message_start"),
        (b'{"type": "content_block_delta", "delta": {"type": "text_delta", "text": "cu', "content_block_delta"),
        (b"not json", ""),
    ],
)
def test_unparseable_events_raise_malformed(adapter, state, data: bytes, event: str) -> None:
    with pytest.raises(MalformedChunk):
        adapter.feed(state, data, event)


def test_cache_reads_are_the_cached_prompt_tokens_and_the_answer_text_is_kept(adapter, state) -> None:
    state.text_parts = []
    start = {"type": "message_start", "message": {"usage": {"input_tokens": 3, "cache_creation_input_tokens": 50,
                                                            "cache_read_input_tokens": 1000}}}  # fmt: skip
    adapter.feed(state, orjson.dumps(start), "message_start")
    assert (state.usage_prompt_tokens, state.usage_cached_tokens) == (1053, 1000)
    adapter.feed(state, delta("thinking_delta", thinking="hmm"), "content_block_delta")
    adapter.feed(state, delta("text_delta", text="Hi "), "content_block_delta")
    adapter.feed(state, delta("input_json_delta", partial_json='{"a": 1}'), "content_block_delta")
    adapter.feed(state, delta("text_delta", text="there"), "content_block_delta")
    assert state.reply_text() == "Hi there"
    plain = StreamState()
    adapter.feed(plain, orjson.dumps({"type": "message_start", "message": {"usage": {"input_tokens": 3}}}), "message_start")
    assert plain.usage_cached_tokens is None  # not stated
