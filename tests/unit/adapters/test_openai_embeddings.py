"""The embeddings adapter: batched request bodies, the JSON answer read whole and checked."""

from __future__ import annotations

import base64
import struct

import orjson
import pytest

from llmload.adapters import AdapterConfig, Framing, OpenAIEmbeddingsAdapter, StreamState, get_adapter_class
from llmload.adapters.openai_embeddings import MalformedEmbeddings, batch_texts, check_embeddings
from llmload.workload.request_types import RequestSample

SAMPLE = RequestSample("short", "one two three four five six", 6, 0)


def _answer(vectors: list, prompt_tokens: int = 12) -> bytes:
    data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
    return orjson.dumps({"object": "list", "data": data, "usage": {"prompt_tokens": prompt_tokens, "total_tokens": 12}})


def test_registered_and_read_whole() -> None:
    assert get_adapter_class("openai-embeddings") is OpenAIEmbeddingsAdapter
    assert OpenAIEmbeddingsAdapter.default_path == "/v1/embeddings"
    assert OpenAIEmbeddingsAdapter.default_framing is Framing.RAW and OpenAIEmbeddingsAdapter.whole_body


def test_request_batches_rotations_of_the_prompt() -> None:
    adapter = OpenAIEmbeddingsAdapter(AdapterConfig(model="e5", batch=3))
    spec = adapter.build_request(SAMPLE)
    body = orjson.loads(spec.body)
    assert (spec.method, spec.path, spec.max_tokens, spec.inputs) == ("POST", "/v1/embeddings", 0, 3)
    assert body["model"] == "e5" and body["encoding_format"] == "float"
    texts = body["input"]
    assert len(texts) == 3 and len(set(texts)) == 3
    assert texts[0] == SAMPLE.prompt
    assert all(sorted(t.split()) == sorted(SAMPLE.prompt.split()) for t in texts)
    assert spec.headers["Accept"] == "application/json"


def test_extra_body_wins() -> None:
    adapter = OpenAIEmbeddingsAdapter(AdapterConfig(extra_body={"encoding_format": "base64", "dimensions": 64}))
    body = orjson.loads(adapter.build_request(SAMPLE).body)
    assert body["encoding_format"] == "base64" and body["dimensions"] == 64 and body["input"] == [SAMPLE.prompt]


def test_answer_in_several_reads_counts_once() -> None:
    adapter = OpenAIEmbeddingsAdapter(AdapterConfig(batch=2))
    state = StreamState()
    body = _answer([[0.5, 0.25, 1.0], [0.0, 1.0, -1.0]], prompt_tokens=17)
    cut = body.index(b"}") + 1  # a read ending on a "}" inside the document
    assert adapter.feed(state, body[:cut]) == 0
    assert adapter.feed(state, body[cut:-3]) == 0
    assert adapter.feed(state, body[-3:] + b"\n") == 1
    assert (state.usage_prompt_tokens, state.usage_completion_tokens, state.finish_reason) == (17, 0, "stop")
    assert state.text_parts is None  # the buffer is dropped once parsed


def test_base64_vectors() -> None:
    vec = base64.b64encode(struct.pack("<4f", 1, 2, 3, 4)).decode()
    assert check_embeddings(orjson.loads(_answer([vec, vec])), 2) == 4


@pytest.mark.parametrize(
    ("vectors", "inputs", "words"),
    [
        ([[1.0, 2.0]], 2, "1 embeddings for 2 inputs"),
        ([[1.0, 2.0], [1.0]], 2, "differ in dimension"),
        ([["a", 2.0]], 1, "other than numbers"),
        (["not base64!"], 1, "not base64"),
        ([base64.b64encode(b"abc").decode()], 1, "not float32"),
        ([[]], 1, "dimension 0"),
        ([None], 1, "has no embedding"),
    ],
)
def test_malformed_answers(vectors: list, inputs: int, words: str) -> None:
    adapter = OpenAIEmbeddingsAdapter(AdapterConfig(batch=inputs))
    with pytest.raises(MalformedEmbeddings, match=words) as info:
        adapter.feed(StreamState(), _answer(vectors))
    assert info.value.kind == "malformed_embeddings"


def test_no_data_list() -> None:
    with pytest.raises(MalformedEmbeddings, match="no data list"):
        OpenAIEmbeddingsAdapter(AdapterConfig()).feed(StreamState(), b'{"object": "list"}')


def test_batch_texts_one_word_and_one_input() -> None:
    assert batch_texts("hello", 1) == ["hello"]
    assert batch_texts("hello", 3) == ["hello"] * 3
