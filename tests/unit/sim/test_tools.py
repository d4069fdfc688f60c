"""The simulator answers chat requests that carry tools with tool calls, in OpenAI chat's streaming shape."""

from __future__ import annotations

import json
import random

import pytest

from llmload.adapters import AdapterConfig, OpenAIChatAdapter
from llmload.errors import ConfigError
from llmload.sim import SimConfig, run_in_thread
from llmload.sim.api import ApiError, parse_request
from llmload.sim.config import add_arguments, config_from_args, config_to_args
from llmload.sim.tools import ToolRequest, tool_request
from tests.helpers.sim_wire import post, replay, sse_events

TOOLS = [{"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}},
         {"type": "function", "function": {"name": "calc", "parameters": {"type": "object"}}}]  # fmt: skip
CHAT = {"model": "m", "messages": [{"role": "user", "content": "a b"}], "stream": True, "max_tokens": 7,
        "stream_options": {"include_usage": True}, "tools": TOOLS[:1]}  # fmt: skip


def decide(body: dict, share: float = 0.75, seed: int = 0):
    raw = json.dumps(body).encode()
    return tool_request(parse_request("chat", raw, "m", 16), raw, share, random.Random(seed))


def test_tool_choice_none_never_calls_required_always_and_auto_at_the_share():
    assert not isinstance(decide({**CHAT, "tool_choice": "none"}, share=1.0), ToolRequest)
    assert decide({**CHAT, "tool_choice": "required"}, share=0.0).calls == ("search",)
    rng = random.Random(3)
    raw = json.dumps(CHAT).encode()
    gen = parse_request("chat", raw, "m", 16)
    called = sum(isinstance(tool_request(gen, raw, 0.75, rng), ToolRequest) for _ in range(2000))
    assert 1400 < called < 1600  # 75 % of auto answers
    assert not isinstance(decide({**CHAT, "tools": []}, share=1.0), ToolRequest)


def test_parallel_calls_call_each_tool_and_a_named_choice_calls_that_one():
    assert decide({**CHAT, "tools": TOOLS, "tool_choice": "required"}).calls == ("search", "calc")
    one = decide({**CHAT, "tools": TOOLS, "tool_choice": "required", "parallel_tool_calls": False}).calls
    assert len(one) == 1 and one[0] in ("search", "calc")
    named = {"type": "function", "function": {"name": "calc"}}
    assert decide({**CHAT, "tools": TOOLS, "tool_choice": named}).calls == ("calc",)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"tools": "x"}, "'tools' must be a list"),
        ({"tools": [{"type": "function"}]}, "each of 'tools'"),
        ({"tool_choice": "sometimes"}, "'tool_choice' must be"),
        ({"tool_choice": {"type": "function", "function": {"name": "nope"}}}, "not among 'tools'"),
    ],
)
def test_a_malformed_tools_or_tool_choice_is_refused(extra, message):
    with pytest.raises(ApiError, match=message):
        decide({**CHAT, **extra})


@pytest.fixture(scope="module")
def url():
    with run_in_thread(SimConfig(port=0, ttft_ms=2, itl_ms=1, tool_call_share=1.0)) as server:
        yield server.url


def test_a_tool_call_streams_its_id_and_name_then_its_arguments_and_finishes_with_tool_calls(url):
    status, body = post(url, "/v1/chat/completions", CHAT)
    assert status == 200
    chunks = [json.loads(d) for _, d in sse_events(body) if d != b"[DONE]"]
    deltas = [c["choices"][0] for c in chunks if c["choices"]]
    assert deltas[0]["delta"] == {"role": "assistant", "content": ""}
    first = deltas[1]["delta"]["tool_calls"][0]
    assert first["id"].startswith("call_") and first["type"] == "function" and first["function"]["name"] == "search"
    rest = [d["delta"]["tool_calls"][0] for d in deltas[2:]]
    assert all(set(r) == {"index", "function"} and set(r["function"]) == {"arguments"} for r in rest)
    args = first["function"]["arguments"] + "".join(r["function"]["arguments"] for r in rest)
    assert len(json.loads(args)["input"].split()) == 7  # every token is one word of the arguments
    assert [d["finish_reason"] for d in deltas[1:]] == [None] * 6 + ["tool_calls"]
    assert chunks[-1]["usage"]["completion_tokens"] == 7
    state, events, tokens, done, error = replay(OpenAIChatAdapter(AdapterConfig()), body)
    assert (events, done, error, state.finish_reason) == (7, True, None, "tool_calls")
    assert state.tool_calls == [[first["id"], "search", args]]
    assert state.text_parts is None  # nothing asked for the answer text


def test_parallel_calls_share_the_tokens_and_the_adapter_assembles_each(url):
    _, body = post(url, "/v1/chat/completions", {**CHAT, "tools": TOOLS, "max_tokens": 5})
    state, events, *_ = replay(OpenAIChatAdapter(AdapterConfig()), body)
    assert events == 5 and [c[1] for c in state.tool_calls] == ["search", "calc"]
    assert [len(json.loads(c[2])["input"].split()) for c in state.tool_calls] == [2, 3]
    assert state.tool_calls[0][0] != state.tool_calls[1][0]


def test_text_when_tool_choice_is_none_and_a_non_streaming_call(url):
    _, body = post(url, "/v1/chat/completions", {**CHAT, "tool_choice": "none"})
    state, events, *_ = replay(OpenAIChatAdapter(AdapterConfig()), body)
    assert state.tool_calls is None and state.finish_reason == "length" and events == 7
    status, body = post(url, "/v1/chat/completions", {**CHAT, "stream": False})
    doc = json.loads(body)
    message, choice = doc["choices"][0]["message"], doc["choices"][0]
    assert status == 200 and message["content"] is None and choice["finish_reason"] == "tool_calls"
    assert len(json.loads(message["tool_calls"][0]["function"]["arguments"])["input"].split()) == 7


def test_the_share_flag_round_trips_and_is_checked():
    import argparse

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    cfg = config_from_args(parser.parse_args(["--tool-call-share", "0.25"]))
    assert cfg.tool_call_share == 0.25
    assert config_from_args(parser.parse_args(config_to_args(cfg))).tool_call_share == 0.25
    with pytest.raises(ConfigError, match="--tool-call-share must be in 0..1"):
        SimConfig(tool_call_share=1.5)


RESPONSES = {"model": "m", "input": [{"type": "message", "role": "user", "content": "a b"}], "stream": True,
             "max_output_tokens": 5, "tools": [{"type": "function", "name": "search", "parameters": {}}]}  # fmt: skip
MESSAGES = {"model": "m", "messages": [{"role": "user", "content": "a b"}], "stream": True, "max_tokens": 5,
            "tools": [{"name": "search", "input_schema": {"type": "object"}}]}  # fmt: skip
ANTHROPIC = {"anthropic-version": "2023-06-01"}


def test_responses_stream_a_function_call_the_responses_adapter_reads(url):
    from llmload.adapters import OpenAIResponsesAdapter

    status, body = post(url, "/v1/responses", RESPONSES)
    assert status == 200
    names = [name for name, _ in sse_events(body)]
    assert names[:3] == ["response.created", "response.in_progress", "response.output_item.added"]
    assert names.count("response.function_call_arguments.delta") == 5 and names[-1] == "response.completed"
    state, events, _, done, error = replay(OpenAIResponsesAdapter(AdapterConfig()), body)
    assert (events, done, error) == (5, True, None) and state.usage_completion_tokens == 5
    ((call_id, name, args),) = state.tool_calls
    assert call_id.startswith("call_") and name == "search" and len(json.loads(args)["input"].split()) == 5
    final = json.loads(sse_events(body)[-1][1])["response"]
    assert final["output"][0]["arguments"] == args and final["output"][0]["call_id"] == call_id


def test_messages_stream_tool_use_blocks_the_anthropic_adapter_reads(url):
    from llmload.adapters import AnthropicMessagesAdapter

    tools = MESSAGES["tools"] + [{"name": "calc", "input_schema": {"type": "object"}}]
    status, body = post(url, "/v1/messages", {**MESSAGES, "tools": tools}, ANTHROPIC)
    assert status == 200
    state, events, _, done, error = replay(AnthropicMessagesAdapter(AdapterConfig()), body)
    assert (events, done, error, state.finish_reason) == (5, True, None, "tool_use")
    assert [c[1] for c in state.tool_calls] == ["search", "calc"]  # parallel use is the default
    assert all(isinstance(json.loads(c[2])["input"], str) for c in state.tool_calls)
    one = {**MESSAGES, "tools": tools, "tool_choice": {"type": "any", "disable_parallel_tool_use": True}}
    state, *_ = replay(AnthropicMessagesAdapter(AdapterConfig()), post(url, "/v1/messages", one, ANTHROPIC)[1])
    assert len(state.tool_calls) == 1
    status, body = post(url, "/v1/messages", {**MESSAGES, "stream": False}, ANTHROPIC)
    doc = json.loads(body)
    assert doc["stop_reason"] == "tool_use" and doc["content"][0]["type"] == "tool_use"
    assert len(doc["content"][0]["input"]["input"].split()) == 5


def test_tool_results_count_in_the_prompt_where_they_stand(url):
    from llmload.adapters import AnthropicMessagesAdapter, OpenAIResponsesAdapter

    words = " ".join(["w"] * 30)
    items = [*RESPONSES["input"], {"type": "function_call", "call_id": "c", "name": "search", "arguments": "{}"},
             {"type": "function_call_output", "call_id": "c", "output": words}]  # fmt: skip
    _, body = post(url, "/v1/responses", {**RESPONSES, "input": items, "tool_choice": "none"})
    state, *_ = replay(OpenAIResponsesAdapter(AdapterConfig()), body)
    assert state.usage_prompt_tokens == 2 + 30 and state.tool_calls is None
    messages = [*MESSAGES["messages"], {"role": "assistant", "content": [{"type": "tool_use", "id": "c", "name": "search", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c", "content": words}]}]  # fmt: skip
    _, body = post(url, "/v1/messages", {**MESSAGES, "messages": messages, "tool_choice": {"type": "none"}}, ANTHROPIC)
    state, *_ = replay(AnthropicMessagesAdapter(AdapterConfig()), body)
    assert state.usage_prompt_tokens == 2 + 30 and state.tool_calls is None and state.finish_reason == "max_tokens"
