"""The simulator's /v1/responses: event order, reasoning items, usage, failures; read back by the adapter."""

from __future__ import annotations

import json

import pytest

from llmload.adapters import AdapterConfig, OpenAIResponsesAdapter
from llmload.sim import SimConfig, run_in_thread
from tests.helpers.sim_wire import post, replay, sse_events

BODY = {"model": "m", "input": "one two three", "instructions": "be brief", "stream": True}


@pytest.fixture(scope="module")
def url():
    with run_in_thread(SimConfig(port=0, ttft_ms=2, itl_ms=1, default_max_tokens=5)) as server:
        yield server.url


def names(body: bytes) -> list[str]:
    return [name for name, _ in sse_events(body)]


def test_reasoning_then_answer_in_the_reference_order(url):
    status, body = post(url, "/v1/responses", {**BODY, "max_output_tokens": 8, "llmload_reasoning_tokens": 3})
    assert status == 200
    events = sse_events(body)
    assert [name for name, _ in events] == [
        "response.created", "response.in_progress",
        "response.output_item.added", "response.content_part.added",
        *["response.reasoning_text.delta"] * 3,
        "response.reasoning_text.done", "response.content_part.done", "response.output_item.done",
        "response.output_item.added", "response.content_part.added",
        *["response.output_text.delta"] * 5,
        "response.output_text.done", "response.content_part.done", "response.output_item.done",
        "response.incomplete",
    ]  # fmt: skip
    docs = [json.loads(data) for _, data in events]
    assert [d["sequence_number"] for d in docs] == list(range(len(docs)))
    assert all(d["type"] == name for (name, _), d in zip(events, docs, strict=True))
    final = docs[-1]["response"]
    assert final["status"] == "incomplete" and final["incomplete_details"] == {"reason": "max_output_tokens"}
    assert final["usage"]["output_tokens"] == 8
    assert final["usage"]["output_tokens_details"] == {"reasoning_tokens": 3}
    assert final["usage"]["input_tokens"] == 5  # words of input + instructions
    reasoning, message = final["output"]
    deltas = [d["delta"] for d in docs if d["type"] == "response.reasoning_text.delta"]
    assert reasoning["type"] == "reasoning" and reasoning["content"][0]["text"] == "".join(deltas)
    texts = [d["delta"] for d in docs if d["type"] == "response.output_text.delta"]
    assert message["content"][0]["text"] == "".join(texts)
    assert {d["output_index"] for d in docs if d["type"] == "response.output_text.delta"} == {1}


def test_the_adapter_reads_it_channel_by_channel(url):
    _, body = post(url, "/v1/responses", {**BODY, "max_output_tokens": 8, "llmload_reasoning_tokens": 3})
    state, events, tokens, done, error = replay(OpenAIResponsesAdapter(AdapterConfig()), body)
    assert (events, tokens, done, error) == (8, 8, True, None)
    assert (state.reasoning_chunks, state.first_output_chunk, state.usage_reasoning_tokens) == (3, 3, 3)
    assert (state.usage_completion_tokens, state.usage_prompt_tokens, state.finish_reason) == (
        8,
        5,
        "max_output_tokens",
    )


def test_without_a_limit_the_default_length_completes(url):
    _, body = post(url, "/v1/responses", BODY)
    assert names(body)[-1] == "response.completed"
    assert names(body).count("response.output_text.delta") == 5
    final = json.loads(sse_events(body)[-1][1])["response"]
    assert final["status"] == "completed" and final["usage"]["output_tokens_details"] == {"reasoning_tokens": 0}


def test_reasoning_that_fills_the_limit_has_no_message(url):
    _, body = post(url, "/v1/responses", {**BODY, "max_output_tokens": 2, "llmload_reasoning_tokens": 9})
    assert names(body).count("response.reasoning_text.delta") == 2
    assert "response.output_text.delta" not in names(body)
    final = json.loads(sse_events(body)[-1][1])["response"]
    assert [item["type"] for item in final["output"]] == ["reasoning"]
    assert final["usage"]["output_tokens_details"] == {"reasoning_tokens": 2}


def test_an_injected_failure_is_response_failed_after_k_tokens(url):
    _, body = post(url, "/v1/responses", {**BODY, "max_output_tokens": 8, "llmload_fail_after": 2})
    assert names(body)[-1] == "response.failed"
    _, events, _, done, error = replay(OpenAIResponsesAdapter(AdapterConfig()), body)
    assert (events, done, error) == (2, False, "server_error")
    status, body = post(url, "/v1/responses", {**BODY, "stream": False, "llmload_fail_after": 1})
    assert status == 500


def test_non_streaming_answers_the_response_object(url):
    status, body = post(url, "/v1/responses", {**BODY, "stream": False, "llmload_reasoning_tokens": 2})
    doc = json.loads(body)
    assert status == 200 and doc["object"] == "response" and doc["status"] == "completed"
    assert [item["type"] for item in doc["output"]] == ["reasoning", "message"]
    assert doc["usage"]["output_tokens"] == 5 and doc["usage"]["output_tokens_details"]["reasoning_tokens"] == 2


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"model": "m"}, "'input' is required"),
        ({"input": [1]}, "each item of 'input' must be an object"),
        ({"input": "x", "max_output_tokens": 0}, "'max_output_tokens' must be an integer >= 1"),
        ({"input": "x", "llmload_reasoning_tokens": -1}, "'llmload_reasoning_tokens' must be an integer >= 0"),
        ({"input": "x", "llmload_fail_after": True}, "'llmload_fail_after' must be an integer >= 1"),
    ],
)
def test_bad_requests_are_400(url, body, message):
    status, data = post(url, "/v1/responses", body)
    assert status == 400 and message in json.loads(data)["error"]["message"]


def test_cached_prompt_tokens_go_to_input_tokens_details():
    from llmload.sim.api_responses import ResponsesEncoder, parse_responses

    enc = ResponsesEncoder(parse_responses(json.dumps(BODY).encode(), "m", 4), 0, 0)
    final = json.loads(sse_events(enc.end_events(4, cached_tokens=3)[-1])[0][1])["response"]
    assert final["usage"]["input_tokens_details"] == {"cached_tokens": 3} and final["usage"]["input_tokens"] == 5
    assert json.loads(enc.full_body(4))["usage"]["input_tokens_details"] == {"cached_tokens": 0}
