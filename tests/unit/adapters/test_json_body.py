"""A non-streamed JSON answer read whole from raw reads (adapters/json_body.py)."""

from __future__ import annotations

from llmload.adapters.base import StreamState
from llmload.adapters.json_body import PENDING, whole_json


def test_the_document_comes_when_a_read_completes_it():
    state = StreamState()
    body = b'{"a": {"b": 1}, "c": [1, 2]}\n'
    cut = body.index(b"}") + 1  # ends on the inner object's "}": parsed, incomplete
    assert whole_json(state, body[:cut]) is PENDING
    assert whole_json(state, body[cut:-4]) is PENDING  # not even tried: no "}" at the end
    assert whole_json(state, body[-4:]) == {"a": {"b": 1}, "c": [1, 2]}
    assert state.text_parts is None and state.text_chars == len(body)


def test_one_read_and_trailing_whitespace():
    assert whole_json(StreamState(), b'{"x": 1}\r\n ') == {"x": 1}
    assert whole_json(StreamState(), b"") is PENDING
