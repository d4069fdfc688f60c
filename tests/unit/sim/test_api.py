"""Request parsing (the prompt's tokens for the prefix cache, the usage's cached tokens), chat reasoning,
the llmload_* request fields and their flags."""

from __future__ import annotations

import argparse
import http.client
import json
from urllib.parse import urlsplit

import orjson
import pytest

from llmload.adapters import AdapterConfig, OpenAIChatAdapter, OpenAICompletionsAdapter
from llmload.errors import ConfigError
from llmload.sim import SimConfig, run_in_thread
from llmload.sim.api import Encoder, parse_request
from llmload.sim.config import add_arguments, config_from_args, config_to_args
from llmload.sim.prefix import block_hashes
from tests.helpers.sim_wire import post, replay, sse_events


def chat(*messages: tuple[str, str]) -> bytes:
    return orjson.dumps({"messages": [{"role": r, "content": c} for r, c in messages], "max_tokens": 2})


def test_chat_tokens_are_the_words_with_each_message_start_tagged_by_role():
    req = parse_request("chat", chat(("system", "be brief"), ("user", "hello there friend")), "m", 16)
    assert req.prompt_tokens == len(req.tokens) == 5
    assert req.tokens[2:] == ["user\x1fhello", "there", "friend"] and req.tokens[0] == "system\x1fbe"
    words = " ".join(f"w{i}" for i in range(16))
    as_user = parse_request("chat", chat(("user", words)), "m", 16)
    as_system = parse_request("chat", chat(("system", words)), "m", 16)
    assert block_hashes(as_user.tokens, 16) != block_hashes(as_system.tokens, 16)
    parts = orjson.dumps({"messages": [{"role": "user", "content": [{"type": "text", "text": words}]}]})
    assert parse_request("chat", parts, "m", 16).tokens == as_user.tokens


def test_a_conversation_shares_the_earlier_turns_as_a_prefix():
    t1 = parse_request("chat", chat(("user", " ".join(f"a{i}" for i in range(40)))), "m", 16)
    t2 = parse_request(
        "chat",
        chat(("user", " ".join(f"a{i}" for i in range(40))), ("assistant", "ok then"), ("user", "more")),
        "m",
        16,
    )
    assert t2.tokens[:40] == t1.tokens
    assert block_hashes(t2.tokens, 16)[:2] == block_hashes(t1.tokens, 16)


def test_completions_tokens_from_text_lists_and_token_ids():
    assert parse_request("completions", b'{"prompt": "a  b\\nc"}', "m", 4).tokens == ["a", "b", "c"]
    assert parse_request("completions", b'{"prompt": ["a b", "c"]}', "m", 4).tokens == ["a", "b", "c"]
    ids = parse_request("completions", b'{"prompt": [5, 6, 7]}', "m", 4)
    assert ids.tokens == [5, 6, 7] and ids.prompt_tokens == 3


def test_usage_adds_prompt_tokens_details_only_when_the_cached_count_is_known():
    req = parse_request("chat", chat(("user", "a b c")), "m", 4)
    enc = Encoder(req, 0, 0)
    plain = json.loads(enc.usage_event(2)[6:])
    assert plain["usage"] == {"prompt_tokens": 3, "total_tokens": 5, "completion_tokens": 2}
    cached = json.loads(enc.usage_event(2, 0)[6:])
    assert cached["usage"]["prompt_tokens_details"] == {"cached_tokens": 0}
    assert json.loads(enc.full_body(2, 3))["usage"]["prompt_tokens_details"] == {"cached_tokens": 3}
    assert "prompt_tokens_details" not in json.loads(enc.full_body(2))["usage"]


CHAT = {"model": "m", "messages": [{"role": "user", "content": "a b"}], "stream": True, "max_tokens": 6,
        "stream_options": {"include_usage": True}}  # fmt: skip


@pytest.fixture(scope="module")
def url():
    with run_in_thread(SimConfig(port=0, ttft_ms=2, itl_ms=1, reasoning_tokens=4, api_key="")) as server:
        yield server.url


def deltas(body: bytes) -> list[dict]:
    return [
        json.loads(d)["choices"][0]["delta"] for _, d in sse_events(body) if d != b"[DONE]" and b'"choices":[]' not in d
    ]


def test_chat_streams_reasoning_content_first_and_reports_it_in_usage(url):
    _, body = post(url, "/v1/chat/completions", CHAT)
    d = deltas(body)
    assert d[0] == {"role": "assistant", "content": ""}
    assert [list(x) for x in d[1:]] == [["reasoning_content"]] * 4 + [["content"]] * 2
    usage = json.loads(sse_events(body)[-2][1])["usage"]
    assert usage["completion_tokens"] == 6 and usage["completion_tokens_details"] == {"reasoning_tokens": 4}
    state, events, tokens, done, _ = replay(OpenAIChatAdapter(AdapterConfig()), body)
    assert (events, tokens, done, state.reasoning_chunks, state.first_output_chunk) == (6, 6, True, 4, 4)
    assert state.usage_reasoning_tokens == 4


def test_the_request_field_wins_and_completions_have_no_reasoning(url):
    _, body = post(url, "/v1/chat/completions", {**CHAT, "llmload_reasoning_tokens": 0})
    assert all("reasoning_content" not in x for x in deltas(body))
    assert b"completion_tokens_details" not in body
    _, body = post(url, "/v1/completions", {"prompt": "a", "max_tokens": 5, "stream": True})
    state, events, *_ = replay(OpenAICompletionsAdapter(AdapterConfig()), body)
    assert events == 5 and b"reasoning" not in body
    status, body = post(url, "/v1/chat/completions", {**CHAT, "stream": False})
    message = json.loads(body)["choices"][0]["message"]
    assert status == 200 and message["reasoning_content"] and message["content"]
    assert len(message["reasoning_content"].split()) == 4 and len(message["content"].split()) == 2


def test_chat_fails_after_k_tokens_when_asked(url):
    _, body = post(url, "/v1/chat/completions", {**CHAT, "llmload_fail_after": 5})
    _, events, _, done, error = replay(OpenAIChatAdapter(AdapterConfig()), body)
    assert (events, done, error) == (5, False, "server_error")
    assert body.rstrip().endswith(b"data: [DONE]")
    _, body = post(url, "/v1/chat/completions", {**CHAT, "llmload_fail_after": 6})  # not below the limit: no failure
    assert b'"error"' not in body


def test_models_accept_either_key_style():
    with run_in_thread(SimConfig(port=0, api_key="k")) as server:
        parts = urlsplit(server.url)
        for headers, status in (({}, 401), ({"x-api-key": "k"}, 200), ({"Authorization": "Bearer k"}, 200)):
            conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=5)
            conn.request("GET", "/v1/models", headers=headers)
            assert conn.getresponse().status == status
            conn.close()


def test_flags_round_trip_without_the_key(monkeypatch):
    monkeypatch.setenv("LLMLOAD_SIM_API_KEY", "from-env")
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    cfg = config_from_args(parser.parse_args(["--port", "0", "--reasoning-tokens", "32"]))
    assert cfg.reasoning_tokens == 32 and cfg.api_key == "from-env"
    args = config_to_args(cfg)
    assert args[args.index("--reasoning-tokens") + 1] == "32" and "from-env" not in args
    with pytest.raises(ConfigError, match="--reasoning-tokens must be >= 0"):
        SimConfig(reasoning_tokens=-1)
