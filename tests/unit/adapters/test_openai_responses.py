"""The openai-responses adapter: request body, event dispatch, channels, usage, errors."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import orjson
import pytest

from llmload.adapters import DONE, AdapterConfig, Framing, OpenAIResponsesAdapter, StreamState, api_headers_for
from llmload.errors import MalformedChunk, ServerErrorEvent
from llmload.testing import assert_adapter_conforms
from llmload.workload.request_types import RequestSample

STREAMS = Path(__file__).resolve().parents[2] / "fixtures" / "streams" / "openai-responses"
SAMPLE = RequestSample(class_name="short", prompt="Hi there", input_tokens=2, max_tokens=7)


def ev(type_: str, **fields: object) -> tuple[bytes, str]:
    return orjson.dumps({"type": type_, "sequence_number": 3, **fields}), type_


@pytest.fixture
def adapter() -> OpenAIResponsesAdapter:
    return OpenAIResponsesAdapter(AdapterConfig())


@pytest.fixture
def state() -> StreamState:
    return StreamState()


def feed(adapter: OpenAIResponsesAdapter, state: StreamState, pair: tuple[bytes, str]) -> int:
    return adapter.feed(state, pair[0], pair[1])


@pytest.mark.parametrize("sse_parser", ["fast", "sseclient"])
def test_conforms_to_its_transcripts(sse_parser: str) -> None:
    outcomes = assert_adapter_conforms(OpenAIResponsesAdapter(AdapterConfig()), STREAMS, sse_parser=sse_parser)
    assert len(outcomes) == len(list(STREAMS.glob("*.sse"))) >= 10


# -- request -----------------------------------------------------------------------------


def test_class_attributes_and_auth() -> None:
    assert OpenAIResponsesAdapter.name == "openai-responses"
    assert OpenAIResponsesAdapter.default_path == "/v1/responses"
    assert OpenAIResponsesAdapter.default_framing is Framing.SSE
    assert api_headers_for(OpenAIResponsesAdapter, "sk-1") == {"Authorization": "Bearer sk-1"}
    assert api_headers_for(OpenAIResponsesAdapter, "") == {}


def test_default_request(adapter: OpenAIResponsesAdapter) -> None:
    spec = adapter.build_request(SAMPLE)
    assert (spec.method, spec.path, spec.max_tokens) == ("POST", "/v1/responses", 7)
    assert orjson.loads(spec.body) == {
        "model": "llmload-sim",
        "input": "Hi there",
        "max_output_tokens": 7,
        "stream": True,
        "store": False,
    }
    assert spec.headers["Accept"] == "text/event-stream"


def test_options_conversation_and_extra_body_last() -> None:
    config = AdapterConfig(model="m", ignore_eos=True, temperature=0.5, extra_body={"store": True, "top_p": 0.9})
    messages = ({"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"})
    sample = RequestSample("c", "Hi", 1, 5, messages=messages)
    body = orjson.loads(OpenAIResponsesAdapter(config).build_request(sample).body)
    assert body["input"] == [{"type": "message", **m} for m in messages]
    assert (body["ignore_eos"], body["temperature"], body["store"], body["top_p"]) == (True, 0.5, True, 0.9)


# -- stream ------------------------------------------------------------------------------


def test_output_deltas_count_one_each_and_note_the_first_output(adapter, state) -> None:
    assert feed(adapter, state, ev("response.output_text.delta", delta="Hi")) == 1
    assert feed(adapter, state, ev("response.output_text.delta", delta="")) == 0
    assert feed(adapter, state, ev("response.refusal.delta", delta="No")) == 1
    assert feed(adapter, state, ev("response.function_call_arguments.delta", delta='{"a"')) == 1
    assert (state.text_chars, state.first_output_chunk, state.reasoning_chunks) == (8, 0, 0)


@pytest.mark.parametrize(
    "name", ["response.reasoning_text.delta", "response.reasoning_summary_text.delta", "response.reasoning.delta"]
)
def test_reasoning_deltas_are_the_reasoning_channel(adapter, state, name: str) -> None:
    assert feed(adapter, state, ev(name, delta="Let me think")) == 1
    assert feed(adapter, state, ev(name, delta=" more")) == 1
    assert state.first_output_chunk == -1
    assert feed(adapter, state, ev("response.output_text.delta", delta="Yes")) == 1
    assert (state.reasoning_chunks, state.first_output_chunk) == (2, 2)
    feed(adapter, state, ev(name, delta="again"))  # reasoning after the answer began
    assert (state.reasoning_chunks, state.first_output_chunk) == (3, 2)


def test_lifecycle_events_are_not_parsed(adapter, state) -> None:
    for name in ("response.created", "response.output_text.done", "response.queued"):
        assert adapter.feed(state, b"{not json", name) == 0


def test_a_function_call_is_noted_from_its_item_and_its_argument_deltas(adapter, state) -> None:
    item = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "search", "arguments": ""}
    assert feed(adapter, state, ev("response.output_item.added", output_index=0, item=item)) == 0
    assert feed(adapter, state, ev("response.function_call_arguments.delta", item_id="fc_1", delta='{"q":')) == 1
    assert feed(adapter, state, ev("response.function_call_arguments.delta", item_id="fc_1", delta=' 1}')) == 1
    assert state.tool_calls == [["call_1", "search", '{"q": 1}']] and state.first_output_chunk == 0
    message = {"type": "message", "id": "m", "role": "assistant", "content": []}
    assert feed(adapter, StreamState(), ev("response.output_item.added", output_index=0, item=message)) == 0


def test_an_agent_sample_sends_its_tools_and_tool_turns_as_items() -> None:
    from llmload.adapters.tool_shapes import responses_items

    tools = ({"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}},)
    messages = ({"role": "user", "content": "find x"},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "search", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "found"})  # fmt: skip
    sample = RequestSample("a", "find x", 3, 5, messages=messages, tools=tools)
    body = orjson.loads(OpenAIResponsesAdapter(AdapterConfig()).build_request(sample).body)
    assert body["tools"] == [{"type": "function", "name": "search", "parameters": {"type": "object"}}]
    assert body["parallel_tool_calls"] is False and body["input"] == responses_items(messages)
    assert [i["type"] for i in body["input"]] == ["message", "function_call", "function_call_output"]
    assert body["input"][1] == {"type": "function_call", "call_id": "c1", "name": "search", "arguments": "{}"}
    assert body["input"][2] == {"type": "function_call_output", "call_id": "c1", "output": "found"}
    assert "tool_choice" not in body
    last = OpenAIResponsesAdapter(AdapterConfig()).build_request(replace(sample, tool_choice="none"))
    assert orjson.loads(last.body)["tool_choice"] == "none"  # a sub-agent's last turn: answer in text


def test_every_conversation_item_is_a_typed_message() -> None:
    # llama-server (b11434) answers 400 "Cannot determine type of 'item'" to an assistant item
    # without "type": "message" (OpenAI's schema makes it optional): every turn from the second.
    messages = ({"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"},
                {"role": "user", "content": "More"})  # fmt: skip
    sample = RequestSample("c", "More", 3, 5, messages=messages)
    items = orjson.loads(OpenAIResponsesAdapter(AdapterConfig()).build_request(sample).body)["input"]
    assert items == [
        {"type": "message", "role": "user", "content": "Hi"},
        {"type": "message", "role": "assistant", "content": "Hello"},
        {"type": "message", "role": "user", "content": "More"},
    ]
    assert all("type" not in m for m in messages)  # the sample's history is not changed


def test_llamacpp_timings_beside_the_completed_response_are_read(adapter, state) -> None:
    # llama-server's response.completed data: {"type", "response", "timings"} (no sequence_number).
    timings = {"cache_n": 4, "prompt_n": 6, "prompt_ms": 5.25, "predicted_n": 3, "predicted_ms": 9.5}
    usage = {"input_tokens": 10, "output_tokens": 3, "input_tokens_details": {"cached_tokens": 4}}
    data = orjson.dumps({"type": "response.completed", "response": {"status": "completed", "usage": usage},
                         "timings": timings})  # fmt: skip
    assert adapter.feed(state, data, "response.completed") == DONE
    assert (state.server_timing, state.server_queue_ms) == ("llamacpp", None)
    assert (state.server_prefill_ms, state.server_decode_ms) == (5.25, 9.5)
    assert state.usage_cached_tokens == 4


def test_completed_records_usage_and_ends(adapter, state) -> None:
    usage = {"input_tokens": 9, "output_tokens": 146, "output_tokens_details": {"reasoning_tokens": 128}}
    assert feed(adapter, state, ev("response.completed", response={"status": "completed", "usage": usage})) == DONE
    assert (state.usage_prompt_tokens, state.usage_completion_tokens, state.usage_reasoning_tokens) == (9, 146, 128)
    assert state.finish_reason == "completed"


def test_incomplete_gives_its_reason(adapter, state) -> None:
    response = {"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}, "usage": None}
    assert feed(adapter, state, ev("response.incomplete", response=response)) == DONE
    assert state.finish_reason == "max_output_tokens"
    assert state.usage_completion_tokens is None


def test_failed_and_error_events_raise_server_error(adapter, state) -> None:
    failed = ev("response.failed", response={"status": "failed", "error": {"code": "server_error", "message": "boom"}})
    with pytest.raises(ServerErrorEvent, match=r"boom \(server_error\)"):
        feed(adapter, state, failed)
    with pytest.raises(ServerErrorEvent, match="Something went wrong"):
        adapter.feed(state, b'{"type":"error","code":"ERR_X","message":"Something went wrong"}', "error")
    with pytest.raises(ServerErrorEvent, match="rate limited"):
        adapter.feed(state, b'{"error": {"message": "rate limited"}}')  # unnamed, no type


def test_unnamed_events_dispatch_on_type_and_done_ends(adapter, state) -> None:
    assert adapter.feed(state, orjson.dumps({"type": "response.output_text.delta", "delta": "x"})) == 1
    assert adapter.feed(state, orjson.dumps({"type": "response.created", "response": {}})) == 0
    assert adapter.feed(state, b"") == 0
    assert adapter.feed(state, b"[DONE]") == DONE


@pytest.mark.parametrize(
    ("data", "event"),
    [
        (b'{"type":"response.output_text.delta","delta":"cut', "response.output_text.delta"),
        (b'{"type":"response.output_text.delta","delta":7}', "response.output_text.delta"),
        (b'{"type":"response.output_text.delta"}', "response.output_text.delta"),
        (b'{"type":"response.completed","response":[1]}', "response.completed"),
        (b"not json", ""),
        (b"[1, 2]", ""),
    ],
)
def test_unparseable_events_raise_malformed(adapter, state, data: bytes, event: str) -> None:
    with pytest.raises(MalformedChunk):
        adapter.feed(state, data, event)


def test_cached_input_tokens_and_the_kept_answer_text(adapter, state) -> None:
    state.text_parts = []
    feed(adapter, state, ev("response.reasoning_text.delta", delta="think"))
    feed(adapter, state, ev("response.output_text.delta", delta="Hel"))
    feed(adapter, state, ev("response.function_call_arguments.delta", delta='{"x"'))
    feed(adapter, state, ev("response.output_text.delta", delta="lo"))
    usage = {"input_tokens": 1100, "output_tokens": 3, "input_tokens_details": {"cached_tokens": 1024}}
    feed(adapter, state, ev("response.completed", response={"status": "completed", "usage": usage}))
    assert state.reply_text() == "Hello" and state.usage_cached_tokens == 1024
