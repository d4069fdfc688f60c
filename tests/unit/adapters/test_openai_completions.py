"""The openai-completions adapter: request body and text chunks."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from llmload.adapters import DONE, AdapterConfig, Framing, OpenAICompletionsAdapter, StreamState
from llmload.errors import MalformedChunk, ServerErrorEvent
from llmload.testing import assert_adapter_conforms
from llmload.workload.request_types import RequestSample

STREAMS = Path(__file__).resolve().parents[2] / "fixtures" / "streams"


def chunk(text: str | None, finish: str | None = None, **top: object) -> bytes:
    choice = {"index": 0, "text": text, "logprobs": None, "finish_reason": finish}
    return orjson.dumps({"id": "cmpl-1", "object": "text_completion", "choices": [choice], **top})


@pytest.fixture
def adapter() -> OpenAICompletionsAdapter:
    return OpenAICompletionsAdapter(AdapterConfig(model="base-model"))


@pytest.mark.parametrize("sse_parser", ["fast", "sseclient"])
def test_conforms_to_recorded_transcripts(sse_parser: str) -> None:
    outcomes = assert_adapter_conforms(
        OpenAICompletionsAdapter(AdapterConfig()), STREAMS / "openai-completions", sse_parser=sse_parser
    )
    assert len(outcomes) == len(list((STREAMS / "openai-completions").glob("*.sse")))


def test_class_attributes() -> None:
    assert OpenAICompletionsAdapter.name == "openai-completions"
    assert OpenAICompletionsAdapter.default_path == "/v1/completions"
    assert OpenAICompletionsAdapter.default_framing is Framing.SSE


def test_request_sends_the_prompt_text_even_for_a_conversation(adapter) -> None:
    sample = RequestSample("long", "Once upon", 2, 128, messages=({"role": "user", "content": "ignored"},))
    spec = adapter.build_request(sample)
    assert (spec.method, spec.path, spec.max_tokens) == ("POST", "/v1/completions", 128)
    assert orjson.loads(spec.body) == {
        "model": "base-model",
        "prompt": "Once upon",
        "max_tokens": 128,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    assert spec.headers["Accept"] == "text/event-stream"


def test_text_chunks(adapter) -> None:
    state = StreamState()
    assert adapter.feed(state, chunk(" the")) == 1
    assert adapter.feed(state, chunk("")) == 0
    assert adapter.feed(state, chunk(None)) == 0
    assert adapter.feed(state, chunk("", "length", usage={"prompt_tokens": 2, "completion_tokens": 1})) == 0
    assert adapter.feed(state, b"[DONE]") == DONE
    assert (state.text_chars, state.finish_reason, state.usage_prompt_tokens, state.usage_completion_tokens) == (
        4,
        "length",
        2,
        1,
    )


def test_chat_delta_is_not_completions_content(adapter) -> None:
    data = orjson.dumps({"choices": [{"index": 0, "delta": {"content": "x"}}]})
    assert adapter.feed(StreamState(), data) == 0


def test_errors(adapter) -> None:
    with pytest.raises(ServerErrorEvent, match="KV cache"):
        adapter.feed(StreamState(), orjson.dumps({"error": {"message": "out of KV cache"}}))
    with pytest.raises(MalformedChunk, match="^not JSON"):
        adapter.feed(StreamState(), b"garbage")
    with pytest.raises(MalformedChunk, match="^unexpected chunk structure"):
        adapter.feed(StreamState(), orjson.dumps({"choices": [{"text": ["a"]}]}) + b"")


def test_text_is_kept_when_asked_and_cached_tokens_read(adapter) -> None:
    state = StreamState()
    state.text_parts = []
    for piece in ("Once", " upon", " a time"):
        adapter.feed(state, orjson.dumps({"choices": [{"index": 0, "text": piece, "finish_reason": None}]}))
    usage = {"prompt_tokens": 40, "completion_tokens": 3, "prompt_tokens_details": {"cached_tokens": 32}}
    adapter.feed(state, orjson.dumps({"choices": [{"index": 0, "text": "", "finish_reason": "length"}], "usage": usage}))
    assert state.reply_text() == "Once upon a time" and state.usage_cached_tokens == 32


def test_completions_never_send_an_agent_class_tools() -> None:
    import orjson

    from llmload.adapters import AdapterConfig, OpenAICompletionsAdapter
    from llmload.workload.request_types import RequestSample

    tools = ({"type": "function", "function": {"name": "search"}},)
    body = orjson.loads(OpenAICompletionsAdapter(AdapterConfig()).build_request(RequestSample("a", "hi", 1, 3, tools=tools)).body)
    assert "tools" not in body and "parallel_tool_calls" not in body
