"""The stream adapter: raw text reads, SSE text or JSON events (TGI, Ollama, generic gateways)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from llmload.adapters import DONE, AdapterConfig, Framing, StreamAdapter, StreamState
from llmload.errors import MalformedChunk, ServerErrorEvent
from llmload.testing import assert_adapter_conforms
from llmload.workload.request_types import RequestSample

STREAMS = Path(__file__).resolve().parents[2] / "fixtures" / "streams"


@pytest.fixture
def adapter() -> StreamAdapter:
    return StreamAdapter(AdapterConfig())


@pytest.fixture
def state() -> StreamState:
    return StreamState()


@pytest.mark.parametrize("sse_parser", ["fast", "sseclient"])
def test_conforms_to_recorded_transcripts(sse_parser: str) -> None:
    outcomes = assert_adapter_conforms(StreamAdapter(AdapterConfig()), STREAMS / "stream", sse_parser=sse_parser)
    assert {Path(name).suffix for name in outcomes} == {".sse", ".ndjson", ".txt"}


def test_class_attributes() -> None:
    assert (StreamAdapter.name, StreamAdapter.default_path) == ("stream", "/v1/stream")
    assert StreamAdapter.default_framing is Framing.RAW


def test_request() -> None:
    spec = StreamAdapter(AdapterConfig(model="unused")).build_request(RequestSample("short", "Hello", 1, 12))
    assert (spec.method, spec.path, spec.max_tokens) == ("POST", "/v1/stream", 12)
    assert orjson.loads(spec.body) == {"prompt": "Hello", "max_new_tokens": 12, "stream": True}
    assert spec.headers == {"Content-Type": "application/json", "Accept": "*/*", "Accept-Encoding": "identity"}


def test_request_options() -> None:
    config = AdapterConfig(path="/generate_stream", ignore_eos=True, temperature=0.7, extra_body={"top_k": 5})
    spec = StreamAdapter(config).build_request(RequestSample("short", "Hello", 1, 12))
    assert spec.path == "/generate_stream"
    assert orjson.loads(spec.body) == {
        "prompt": "Hello",
        "max_new_tokens": 12,
        "stream": True,
        "ignore_eos": True,
        "temperature": 0.7,
        "top_k": 5,
    }


def test_raw_reads_are_content(adapter, state) -> None:
    assert adapter.feed(state, b"Hello") == 1
    assert adapter.feed(state, b" ") == 1
    assert adapter.feed(state, b"") == 0
    assert adapter.feed(state, b"{not json") == 1
    assert state.text_chars == 15


def test_characters_are_counted_across_a_split_multibyte_character(adapter, state) -> None:
    word = "héllo wörld".encode()
    cut = word.index(b"\xc3") + 1  # inside "é"
    assert adapter.feed(state, word[:cut]) == 1
    assert adapter.feed(state, word[cut:]) == 1
    assert state.text_chars == len("héllo wörld")


def test_done_sentinel(adapter, state) -> None:
    assert adapter.feed(state, b"[DONE]") == DONE


@pytest.mark.parametrize(
    "payload",
    [
        {"token": {"id": 5, "text": "ab", "special": False}, "generated_text": None, "details": None},
        {"text": "ab"},
        {"delta": "ab"},
        {"delta": {"content": "ab"}},
        {"content": "ab"},
        {"response": "ab", "done": False},
    ],
)
def test_accepted_json_shapes(adapter, state, payload: dict) -> None:
    assert adapter.feed(state, orjson.dumps(payload)) == 1
    assert state.text_chars == 2


def test_json_without_text_is_not_content(adapter, state) -> None:
    assert adapter.feed(state, b'{"status": "queued"}') == 0
    assert adapter.feed(state, b'{"text": ""}') == 0
    assert state.text_chars == 0


def test_tgi_details_give_finish_reason_and_generated_tokens(adapter, state) -> None:
    final = {
        "token": {"id": 2, "text": "</s>", "special": True},
        "generated_text": "x",
        "details": {"finish_reason": "length", "generated_tokens": 20, "seed": None},
    }
    assert adapter.feed(state, orjson.dumps(final)) == 1
    assert (state.finish_reason, state.usage_completion_tokens, state.usage_prompt_tokens) == ("length", 20, None)


def test_ollama_final_object(adapter, state) -> None:
    final = {"response": "", "done": True, "done_reason": "stop", "prompt_eval_count": 26, "eval_count": 290}
    assert adapter.feed(state, orjson.dumps(final)) == 0
    assert (state.finish_reason, state.usage_prompt_tokens, state.usage_completion_tokens) == ("stop", 26, 290)


def test_llamacpp_native_final_event(adapter, state) -> None:
    # Every /completion event has "stop"; the last one ("stop": true) finishes the stream and counts its tokens.
    assert adapter.feed(state, b'{"index": 0, "content": "ab", "stop": false, "tokens_predicted": 2}') == 1
    assert state.finish_reason is None and state.usage_completion_tokens is None
    final = {"content": "", "stop": True, "stop_type": "eos", "tokens_predicted": 5, "tokens_evaluated": 9,
             "timings": {"cache_n": 4, "prompt_n": 5, "prompt_ms": 2.5, "predicted_ms": 7.0}}  # fmt: skip
    assert adapter.feed(state, orjson.dumps(final)) == 0
    assert (state.finish_reason, state.usage_prompt_tokens, state.usage_completion_tokens) == ("stop", 9, 5)
    assert (state.usage_cached_tokens, state.server_timing, state.server_prefill_ms) == (4, "llamacpp", 2.5)
    cancelled = StreamState()
    adapter.feed(cancelled, b'{"content": "", "stop": true, "stop_type": "none", "tokens_predicted": 1}')
    assert cancelled.finish_reason is None  # not finished: the completeness check judges it


def test_errors(adapter, state) -> None:
    with pytest.raises(ServerErrorEvent, match=r"^Input validation error \(validation\)$"):
        adapter.feed(state, b'{"error": "Input validation error", "error_type": "validation"}')
    with pytest.raises(ServerErrorEvent, match="^overloaded$"):
        adapter.feed(state, b"overloaded", "error")
    with pytest.raises(MalformedChunk, match=r"^unexpected chunk structure \(TypeError\)"):
        adapter.feed(state, b'{"text": 17}')
    with pytest.raises(MalformedChunk, match=r"^unexpected chunk structure \(AttributeError\)"):
        adapter.feed(state, b'{"token": "abc"}')


def test_raw_reads_kept_as_bytes_join_a_split_utf8_character() -> None:
    adapter = StreamAdapter(AdapterConfig())
    state = StreamState()
    state.text_parts = []
    word = "naïve".encode()  # ï is two bytes: a read may end between them
    for data in (word[:3], word[3:], b" end"):
        assert adapter.feed(state, data) == 1
    adapter.feed(state, orjson.dumps({"text": " json"}))
    assert state.reply_text() == "naïve end json"
