"""Request parsing: the prompt's tokens for the prefix cache, and the usage's cached tokens."""

from __future__ import annotations

import json

import orjson

from llmload.sim.api import Encoder, parse_request
from llmload.sim.prefix import block_hashes


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
