"""The openai-chat adapter: request body, and every chunk shape real servers send."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from llmload.adapters import DONE, AdapterConfig, Framing, OpenAIChatAdapter, StreamState
from llmload.errors import MalformedChunk, ServerErrorEvent
from llmload.testing import assert_adapter_conforms
from llmload.workload.request_types import RequestSample

STREAMS = Path(__file__).resolve().parents[2] / "fixtures" / "streams"
SAMPLE = RequestSample(class_name="short", prompt="Hi there", input_tokens=2, max_tokens=7)


def chunk(delta: dict | None = None, finish: str | None = None, **top: object) -> bytes:
    choice = {"index": 0, "delta": delta or {}, "logprobs": None, "finish_reason": finish}
    return orjson.dumps({"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [choice], **top})


@pytest.fixture
def adapter() -> OpenAIChatAdapter:
    return OpenAIChatAdapter(AdapterConfig())


@pytest.fixture
def state() -> StreamState:
    return StreamState()


@pytest.mark.parametrize("sse_parser", ["fast", "sseclient"])
def test_conforms_to_recorded_transcripts(sse_parser: str) -> None:
    outcomes = assert_adapter_conforms(
        OpenAIChatAdapter(AdapterConfig()), STREAMS / "openai-chat", sse_parser=sse_parser
    )
    assert len(outcomes) == len(list((STREAMS / "openai-chat").glob("*.sse")))


# -- request -----------------------------------------------------------------------------


def test_class_attributes() -> None:
    assert OpenAIChatAdapter.name == "openai-chat"
    assert OpenAIChatAdapter.default_path == "/v1/chat/completions"
    assert OpenAIChatAdapter.default_framing is Framing.SSE


def test_default_request(adapter: OpenAIChatAdapter) -> None:
    spec = adapter.build_request(SAMPLE)
    assert (spec.method, spec.path, spec.max_tokens) == ("POST", "/v1/chat/completions", 7)
    assert orjson.loads(spec.body) == {
        "model": "llmload-sim",
        "messages": [{"role": "user", "content": "Hi there"}],
        "max_tokens": 7,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    assert spec.headers == {
        "Content-Type": "application/json",
        "Accept": "text/event-stream",
        "Accept-Encoding": "identity",
    }


def test_request_options_and_extra_body_merged_last() -> None:
    config = AdapterConfig(
        model="m",
        path="/proxy/chat",
        include_usage=False,
        ignore_eos=True,
        temperature=0.0,
        extra_body={"top_p": 0.5, "max_tokens": 99},
    )
    spec = OpenAIChatAdapter(config).build_request(SAMPLE)
    body = orjson.loads(spec.body)
    assert spec.path == "/proxy/chat"
    assert body == {
        "model": "m",
        "messages": [{"role": "user", "content": "Hi there"}],
        "max_tokens": 99,  # the user's extra_body wins
        "stream": True,
        "ignore_eos": True,
        "temperature": 0.0,
        "top_p": 0.5,
    }
    assert list(body)[-1] == "top_p"
    assert spec.max_tokens == 7  # what the workload asked for


def test_conversation_messages_are_sent_as_given(adapter: OpenAIChatAdapter) -> None:
    messages = ({"role": "system", "content": "be brief"}, {"role": "user", "content": "hello"})
    sample = RequestSample("medium", "hello", 5, 3, messages=messages)
    assert orjson.loads(adapter.build_request(sample).body)["messages"] == list(messages)


def test_headers_are_a_fresh_dict_per_request(adapter: OpenAIChatAdapter) -> None:
    first = adapter.build_request(SAMPLE)
    first.headers["Authorization"] = "Bearer x"
    assert "Authorization" not in adapter.build_request(SAMPLE).headers


# -- feed: content -------------------------------------------------------------------------


def test_role_only_and_empty_content_chunks_are_not_content(adapter, state) -> None:
    assert adapter.feed(state, chunk({"role": "assistant", "content": ""})) == 0
    assert adapter.feed(state, chunk({"role": "assistant", "content": None})) == 0
    assert adapter.feed(state, chunk({"role": "assistant"})) == 0
    assert adapter.feed(state, chunk({})) == 0
    assert state.text_chars == 0


def test_content_chunk_counts_one_whatever_its_length(adapter, state) -> None:
    assert adapter.feed(state, chunk({"content": "Hello"})) == 1
    assert adapter.feed(state, chunk({"content": " brave new world"})) == 1
    assert state.text_chars == 21


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning", "refusal"])
def test_reasoning_and_refusal_count_as_content(adapter, state, field: str) -> None:
    assert adapter.feed(state, chunk({field: "hmm", "content": None})) == 1
    assert state.text_chars == 3


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_reasoning_is_the_reasoning_channel_until_the_first_output(adapter, state, field: str) -> None:
    assert adapter.feed(state, chunk({field: "Let", "content": ""})) == 1
    assert adapter.feed(state, chunk({field: " me"})) == 1
    assert (state.reasoning_chunks, state.first_output_chunk) == (2, -1)
    assert adapter.feed(state, chunk({"content": "4"})) == 1
    assert (state.reasoning_chunks, state.first_output_chunk) == (2, 2)
    assert adapter.feed(state, chunk({field: " again"})) == 1  # reasoning after the answer began
    assert adapter.feed(state, chunk({"content": "."})) == 1
    assert (state.reasoning_chunks, state.first_output_chunk) == (3, 2)


@pytest.mark.parametrize(
    "delta",
    [{"refusal": "I can't"}, {"tool_calls": [{"index": 0, "function": {"name": "f"}}]}],
    ids=["refusal", "tool_call"],
)
def test_refusal_and_tool_calls_are_output(adapter, state, delta: dict) -> None:
    adapter.feed(state, chunk({"reasoning": "hmm"}))
    assert adapter.feed(state, chunk(delta)) == 1
    assert state.first_output_chunk == 1


def test_tool_call_deltas_count_as_output_when_they_carry_text(adapter, state) -> None:
    call = {"index": 0, "id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a"'}}
    assert adapter.feed(state, chunk({"tool_calls": [call]})) == 1
    assert adapter.feed(state, chunk({"tool_calls": [{"index": 0, "function": {"arguments": ": 1}"}}]})) == 1
    assert adapter.feed(state, chunk({"tool_calls": [{"index": 0, "function": {"arguments": ""}}]})) == 0
    assert adapter.feed(state, chunk({"tool_calls": []})) == 0
    assert state.text_chars == 9


def test_tool_call_deltas_are_assembled_by_index_and_plain_text_leaves_them_alone(adapter, state) -> None:
    adapter.feed(state, chunk({"content": "let me look"}))
    assert state.tool_calls is None
    first = {"index": 0, "id": "c1", "type": "function", "function": {"name": "search", "arguments": '{"q":'}}
    second = {"index": 1, "id": "c2", "type": "function", "function": {"name": "calc", "arguments": ""}}
    adapter.feed(state, chunk({"tool_calls": [first, second]}))
    adapter.feed(state, chunk({"tool_calls": [{"index": 0, "function": {"arguments": ' "x"}'}}]}))
    adapter.feed(state, chunk({"tool_calls": [{"index": 1, "function": {"arguments": "{}"}}]}, "tool_calls"))
    assert state.tool_calls == [["c1", "search", '{"q": "x"}'], ["c2", "calc", "{}"]]
    assert state.finish_reason == "tool_calls"


def test_an_agent_sample_sends_its_tools_and_a_plain_one_does_not(adapter) -> None:
    tools = ({"type": "function", "function": {"name": "search", "parameters": {}}},)
    body = orjson.loads(adapter.build_request(RequestSample("a", "hi", 1, 3, tools=tools)).body)
    assert body["tools"] == list(tools) and body["parallel_tool_calls"] is False
    assert "tools" not in orjson.loads(adapter.build_request(SAMPLE).body)


def test_tool_choice_none_is_sent_with_the_tools_only_when_the_sample_says_so(adapter) -> None:
    tools = ({"type": "function", "function": {"name": "search", "parameters": {}}},)
    body = orjson.loads(adapter.build_request(RequestSample("a", "hi", 1, 3, tools=tools, tool_choice="none")).body)
    assert body["tool_choice"] == "none" and body["tools"] == list(tools)
    assert "tool_choice" not in orjson.loads(adapter.build_request(RequestSample("a", "hi", 1, 3, tools=tools)).body)


def test_usage_reasoning_tokens_are_recorded(adapter, state) -> None:
    details = {"reasoning_tokens": 192, "audio_tokens": 0}
    usage = {"prompt_tokens": 14, "completion_tokens": 213, "completion_tokens_details": details}
    assert adapter.feed(state, orjson.dumps({"choices": [], "usage": usage})) == 0
    assert (state.usage_completion_tokens, state.usage_reasoning_tokens) == (213, 192)
    assert adapter.feed(state, orjson.dumps({"choices": [], "usage": {"completion_tokens_details": None}})) == 0
    assert state.usage_reasoning_tokens == 192


def test_done_sentinel(adapter, state) -> None:
    assert adapter.feed(state, b"[DONE]") == DONE
    assert adapter.feed(state, b" [DONE] ") == DONE


def test_empty_data_is_a_keep_alive(adapter, state) -> None:
    assert adapter.feed(state, b"") == 0
    assert adapter.feed(state, b" ") == 0


def test_finish_reason_and_usage_in_the_finish_chunk(adapter, state) -> None:
    usage = {"prompt_tokens": 14, "completion_tokens": 5, "total_tokens": 19}
    assert adapter.feed(state, chunk({}, "length", usage=usage)) == 0
    assert (state.finish_reason, state.usage_prompt_tokens, state.usage_completion_tokens) == ("length", 14, 5)


def test_usage_in_a_separate_chunk_without_choices(adapter, state) -> None:
    assert adapter.feed(state, chunk({"content": "x"}, "stop")) == 1
    sep = orjson.dumps({"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 1}})
    assert adapter.feed(state, sep) == 0
    no_choices_key = orjson.dumps({"usage": {"prompt_tokens": 4, "completion_tokens": 2}})
    assert adapter.feed(state, no_choices_key) == 0
    assert (state.finish_reason, state.usage_prompt_tokens, state.usage_completion_tokens) == ("stop", 4, 2)


def test_null_usage_and_null_finish_reason_are_not_recorded(adapter, state) -> None:
    assert adapter.feed(state, chunk({"content": "x"}, None, usage=None)) == 1
    assert (state.finish_reason, state.usage_prompt_tokens, state.usage_completion_tokens) == (None, None, None)


def test_running_usage_gives_the_token_count_of_each_chunk(adapter, state) -> None:
    def running(content: str, n: int) -> bytes:
        return chunk({"content": content}, usage={"prompt_tokens": 9, "completion_tokens": n})

    assert adapter.feed(state, running("", 0)) == 0
    assert adapter.feed(state, running("a", 1)) == 1
    assert adapter.feed(state, running("b c d", 4)) == 3
    assert adapter.feed(state, running("e", 4)) == 1  # content without a stated increase is still one chunk
    assert state.usage_completion_tokens == 4


def test_a_usage_jump_over_chunks_without_content_lands_on_the_next_content_chunk(adapter, state) -> None:
    def running(delta: dict, n: int) -> bytes:
        return chunk(delta, usage={"prompt_tokens": 9, "completion_tokens": n})

    assert adapter.feed(state, running({"role": "assistant", "content": ""}, 0)) == 0
    assert adapter.feed(state, running({"content": "a"}, 1)) == 1
    assert adapter.feed(state, running({}, 6)) == 0  # a parser holding text back; usage keeps counting
    assert adapter.feed(state, running({}, 12)) == 0
    call = {"index": 0, "function": {"name": "f", "arguments": '{"x": 1}'}}
    assert adapter.feed(state, running({"tool_calls": [call]}, 17)) == 16
    assert adapter.feed(state, running({"content": "b"}, 18)) == 1


def test_stated_counts_of_reasoning_chunks_are_noted_as_reasoning_tokens(adapter, state) -> None:
    def running(delta: dict, n: int) -> bytes:
        return chunk(delta, usage={"completion_tokens": n})

    adapter.feed(state, running({"role": "assistant"}, 0))
    assert adapter.feed(state, running({"reasoning_content": "a b c"}, 3)) == 3
    assert adapter.feed(state, running({"reasoning_content": "d"}, 4)) == 1
    assert adapter.feed(state, running({"content": "e f"}, 6)) == 2
    assert (state.reasoning_chunks, state.reasoning_extra_tokens, state.first_output_chunk) == (2, 2, 2)


def test_usage_first_seen_on_a_content_chunk_is_not_a_per_chunk_count(adapter, state) -> None:
    assert adapter.feed(state, chunk({"content": "end"}, "stop", usage={"completion_tokens": 40})) == 1
    assert state.usage_completion_tokens == 40


# -- feed: errors --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (
            {"error": {"message": "bad prompt", "type": "BadRequestError", "code": 400}},
            "bad prompt (BadRequestError, 400)",
        ),
        ({"error": "CUDA out of memory", "error_type": "generation"}, "CUDA out of memory (generation)"),
        ({"error": "boom"}, "boom"),
        (
            {"object": "error", "message": "too long", "type": "BadRequestError", "code": 400},
            "too long (BadRequestError, 400)",
        ),
    ],
)
def test_error_objects_raise_server_error(adapter, state, payload: dict, message: str) -> None:
    with pytest.raises(ServerErrorEvent) as info:
        adapter.feed(state, orjson.dumps(payload))
    assert str(info.value) == message
    assert info.value.kind == "server_error"


def test_error_message_is_shortened_to_200_chars(adapter, state) -> None:
    with pytest.raises(ServerErrorEvent) as info:
        adapter.feed(state, orjson.dumps({"error": {"message": "x" * 5000}}))
    assert len(str(info.value)) == 200
    assert str(info.value).endswith("…")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b'{"message": "upstream timeout", "code": 504}', "upstream timeout (504)"),
        (b"model overloaded", "model overloaded"),
        (b'{"error": {"message": "nope"}}', "nope"),
    ],
)
def test_error_event_raises_server_error(adapter, state, data: bytes, message: str) -> None:
    with pytest.raises(ServerErrorEvent, match=r"^" + message.replace("(", r"\(").replace(")", r"\)") + "$"):
        adapter.feed(state, data, "error")


def test_other_named_events_are_tolerated(adapter, state) -> None:
    assert adapter.feed(state, b"keep-alive", "ping") == 0
    assert adapter.feed(state, chunk({"content": "x"}), "chunk") == 1


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b'{"choices":[{"delta":{"content":"Hel', "not JSON"),
        (b"<html>502 Bad Gateway</html>", "not JSON"),
        (b"[1, 2]", "not a JSON object"),
        (b'{"choices": "oops"}', "unexpected chunk structure"),
        (b'{"choices": [{"delta": {"content": 5}}]}', "unexpected chunk structure"),
        (b'{"choices": [], "usage": {"completion_tokens": "many"}}', "unexpected chunk structure"),
    ],
)
def test_unparseable_chunks_raise_malformed_with_an_excerpt(adapter, state, data: bytes, why: str) -> None:
    with pytest.raises(MalformedChunk) as info:
        adapter.feed(state, data)
    assert str(info.value).startswith(why)
    assert data[:10].decode() in str(info.value)
    assert info.value.kind == "malformed_chunk"


def test_malformed_excerpt_is_short(adapter, state) -> None:
    with pytest.raises(MalformedChunk) as info:
        adapter.feed(state, b"x" * 10_000)
    assert len(str(info.value)) <= 200


def test_content_as_a_list_of_parts_counts_its_text_parts(adapter, state) -> None:
    parts = [{"type": "text", "text": "abc"}, {"type": "image_url", "image_url": {"url": "x"}}]
    assert adapter.feed(state, chunk({"content": parts})) == 1
    assert state.text_chars == 3


# -- cached prompt tokens and the kept answer text (conversations) ---------------------------


def test_cached_prompt_tokens_are_read_from_usage(adapter, state) -> None:
    usage = {"prompt_tokens": 1100, "completion_tokens": 4, "prompt_tokens_details": {"cached_tokens": 992}}
    assert adapter.feed(state, orjson.dumps({"choices": [], "usage": usage})) == 0
    assert (state.usage_prompt_tokens, state.usage_cached_tokens) == (1100, 992)
    other = StreamState()
    adapter.feed(other, orjson.dumps({"choices": [], "usage": {"prompt_tokens": 5, "prompt_tokens_details": None}}))
    assert other.usage_cached_tokens is None  # not stated: unknown, never 0


def test_answer_text_is_kept_only_when_asked(adapter, state) -> None:
    events = [chunk({"role": "assistant"}), chunk({"content": "Hel"}), chunk({"reasoning_content": "hmm"}),
              chunk({"content": [{"type": "text", "text": "lo"}, {"type": "image"}]}), chunk({"content": "!"}, "stop")]  # fmt: skip
    for e in events:
        adapter.feed(state, e)
    assert state.text_parts is None and state.reply_text() == ""
    keep = StreamState()
    keep.text_parts = []
    assert [adapter.feed(keep, e) for e in events] == [0, 1, 1, 1, 1]
    assert keep.reply_text() == "Hello!"  # the answer only: reasoning is not re-sent
