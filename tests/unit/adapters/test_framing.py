"""SSE / NDJSON framing: spec behaviour, and identical events from the fast and reference SSE parsers."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from llmload.adapters.framing import NdjsonParser, SseParser, iter_sseclient_events

STREAMS = Path(__file__).resolve().parents[2] / "fixtures" / "streams"
SSE_FIXTURES = sorted(STREAMS.glob("*/*.sse"))


def parse(lines: list[bytes]) -> list[tuple[str, bytes]]:
    parser = SseParser()
    events = [ev for ev in map(parser.feed_line, lines) if ev is not None]
    last = parser.flush()
    return [*events, last] if last is not None else events


def reference(lines: list[bytes]) -> list[tuple[str, bytes]]:
    return list(iter_sseclient_events(iter(lines)))


# -- SseParser ---------------------------------------------------------------------------


def test_single_event_dispatches_on_blank_line_only() -> None:
    p = SseParser()
    assert p.feed_line(b'data: {"a":1}\n') is None
    assert p.feed_line(b"\n") == ("", b'{"a":1}')
    assert p.feed_line(b"\n") is None  # nothing pending: no empty event


@pytest.mark.parametrize("ending", [b"\n", b"\r\n", b"\r", b""])
def test_line_endings_are_removed(ending: bytes) -> None:
    p = SseParser()
    assert p.feed_line(b"data: x y" + ending) is None
    assert p.feed_line(ending) == ("", b"x y")


def test_only_one_space_after_colon_is_stripped() -> None:
    assert parse([b"data:x\n", b"\n", b"data:  x\n", b"\n", b"data: \n", b"\n"]) == [
        ("", b"x"),
        ("", b" x"),
        ("", b""),
    ]


def test_several_data_lines_are_joined_with_newline() -> None:
    assert parse([b"data: a\n", b"data:b\n", b"data\n", b"data: c\n", b"\n"]) == [("", b"a\nb\n\nc")]


def test_event_name_is_set_then_reset_after_dispatch() -> None:
    lines = [b"event: error\n", b"data: boom\n", b"\n", b"data: next\n", b"\n"]
    assert parse(lines) == [("error", b"boom"), ("", b"next")]


def test_explicit_message_event_is_the_default_type() -> None:
    assert parse([b"event: message\n", b"data: x\n", b"\n"]) == [("", b"x")]


def test_comments_id_retry_and_unknown_fields_are_ignored() -> None:
    lines = [b": keep-alive\n", b"id: 7\n", b"retry: 100\n", b"foo: bar\n", b"data: x\n", b":\n", b"\n"]
    assert parse(lines) == [("", b"x")]


def test_event_without_data_is_not_dispatched_and_its_name_does_not_leak() -> None:
    assert parse([b"event: ping\n", b"\n", b"data: x\n", b"\n"]) == [("", b"x")]


def test_flush_dispatches_a_pending_event_at_eof_once() -> None:
    p = SseParser()
    p.feed_line(b"event: error\n")
    p.feed_line(b'data: {"error": "x"}')
    assert p.flush() == ("error", b'{"error": "x"}')
    assert p.flush() is None


def test_llamacpp_error_field_becomes_an_error_event() -> None:
    lines = [b'error: {"code":500}\n', b"\n", b"error\n", b"\n"]
    assert parse(lines) == [("error", b'{"code":500}')]  # a bare "error" line (no colon) is ignored
    assert reference(lines) == parse(lines)


def test_data_prefix_must_be_exact() -> None:
    assert parse([b"datax: 1\n", b" data: 2\n", b"Data: 3\n", b"\n"]) == []


# -- differential: fast parser vs sseclient-py ----------------------------------------


def test_every_adapter_has_sse_fixtures() -> None:
    from llmload.adapters import BUILTIN_ADAPTERS

    streamed = {name for name, cls in BUILTIN_ADAPTERS.items() if not getattr(cls, "whole_body", False)}
    assert {p.parent.name for p in SSE_FIXTURES} == streamed  # openai-embeddings: one JSON body, no stream


@pytest.mark.parametrize("path", SSE_FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fast_parser_matches_sseclient_on_fixture(path: Path) -> None:
    lines = path.read_bytes().splitlines(keepends=True)
    fast = parse(lines)
    assert fast, "fixture produced no events"
    assert fast == reference(lines)


_FIELDS = [
    b"data: {}",
    b'data:{"x": "a:b"}',
    b"data:  two spaces",
    b"data:",
    b"data",
    b"data: \xc3\xa9t\xc3\xa9",
    b"event: error",
    b"event: ping",
    b"event:message",
    b"event",
    b": comment",
    b":",
    b"id: 42",
    b"retry: 10",
    b"unknown: field",
    b"error: {}",
    b"error",
    b"   ",
    b"[DONE]",
]


@pytest.mark.parametrize("seed", range(200))
def test_fast_parser_matches_sseclient_on_random_streams(seed: int) -> None:
    rng = random.Random(seed)
    ending = rng.choice([b"\n", b"\r\n", b"\r"])
    lines = [(rng.choice(_FIELDS) if rng.random() < 0.7 else b"") + ending for _ in range(rng.randint(1, 40))]
    if rng.random() < 0.5:  # end of stream without the final blank line, maybe mid-line
        lines[-1] = lines[-1].rstrip(b"\r\n") if rng.random() < 0.5 else lines[-1]
    assert parse(lines) == reference(lines)


# -- NDJSON ----------------------------------------------------------------------------


def test_ndjson_strips_endings_and_skips_blank_lines() -> None:
    p = NdjsonParser()
    got = [p.feed_line(line) for line in [b'{"a": 1}\n', b"\n", b"  \r\n", b'{"b": 2}\r\n', b'{"c": 3}']]
    assert got == [b'{"a": 1}', None, None, b'{"b": 2}', b'{"c": 3}']
