"""The rerank adapter: a query and N documents per request, the JSON answer read whole and checked."""

from __future__ import annotations

import orjson
import pytest

from llmload.adapters import AdapterConfig, Framing, RerankAdapter, StreamState, get_adapter_class
from llmload.adapters.rerank import QUERY_WORDS, MalformedRerank
from llmload.workload.request_types import RequestSample

SAMPLE = RequestSample("docs", " ".join(f"w{i}" for i in range(20)), 20, 0)


def _answer(results: list) -> bytes:
    return orjson.dumps({"model": "m", "object": "list", "usage": {"prompt_tokens": 11, "total_tokens": 11},
                         "results": results})  # fmt: skip


def test_registered_and_read_whole():
    assert get_adapter_class("rerank") is RerankAdapter
    assert RerankAdapter.default_path == "/v1/rerank" and RerankAdapter.default_framing is Framing.RAW
    assert RerankAdapter.whole_body


def test_request_has_the_query_and_the_documents():
    spec = RerankAdapter(AdapterConfig(model="rr", batch=3)).build_request(SAMPLE)
    body = orjson.loads(spec.body)
    assert (spec.path, spec.inputs, spec.max_tokens) == ("/v1/rerank", 3, 0)
    assert body["model"] == "rr" and body["query"] == " ".join(SAMPLE.prompt.split()[:QUERY_WORDS])
    assert len(body["documents"]) == 3 == len(set(body["documents"])) and body["documents"][0] == SAMPLE.prompt


def test_a_scored_answer_counts_once_with_the_servers_prompt_tokens():
    state = StreamState()
    body = _answer([{"index": 1, "relevance_score": 0.9}, {"index": 0, "relevance_score": -0.2}])
    adapter = RerankAdapter(AdapterConfig(batch=2))
    assert adapter.feed(state, body[:10]) == 0
    assert adapter.feed(state, body[10:]) == 1
    assert (state.usage_prompt_tokens, state.usage_completion_tokens, state.finish_reason) == (11, 0, "stop")


def test_top_n_asks_for_fewer_results():
    adapter = RerankAdapter(AdapterConfig(batch=4, extra_body={"top_n": 2}))
    assert orjson.loads(adapter.build_request(SAMPLE).body)["top_n"] == 2
    assert adapter.feed(StreamState(), _answer([{"index": 3, "relevance_score": 1}, {"index": 0, "relevance_score": 0}])) == 1


@pytest.mark.parametrize(
    ("results", "words"),
    [
        (None, "no results list"),
        ([{"index": 0, "relevance_score": 0.5}], "1 results for 2 of 2 documents"),
        ([{"index": 0, "relevance_score": 0.5}, {"index": 0, "relevance_score": 0.1}], "no distinct document index"),
        ([{"index": 0, "relevance_score": 0.5}, {"index": 2, "relevance_score": 0.1}], "no distinct document index"),
        ([{"index": 0, "relevance_score": 0.5}, {"index": 1, "relevance_score": "high"}], "no numeric relevance_score"),
    ],
)
def test_malformed_answers(results, words):
    with pytest.raises(MalformedRerank, match=words) as info:
        RerankAdapter(AdapterConfig(batch=2)).feed(StreamState(), _answer(results))
    assert info.value.kind == "malformed_rerank"
