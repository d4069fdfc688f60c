"""Telling what a body that gave no content held: another framing, another API's events, or nothing to tell."""

from __future__ import annotations

from pathlib import Path

import pytest

from llmload.adapters.base import Framing
from llmload.adapters.sniff import format_mismatch, sniff

STREAMS = Path(__file__).resolve().parents[2] / "fixtures" / "streams"
TRANSCRIPTS = sorted(p for p in STREAMS.glob("*/*") if p.suffix in (".sse", ".ndjson"))
_FRAMING = {".sse": Framing.SSE, ".ndjson": Framing.NDJSON}

CHAT = (STREAMS / "openai-chat" / "llamacpp_timings.sse").read_bytes()
RESPONSES = (STREAMS / "openai-responses" / "openai_text_completed.sse").read_bytes()
ANTHROPIC = (STREAMS / "anthropic-messages" / "anthropic_text.sse").read_bytes()
OLLAMA = (STREAMS / "stream" / "ollama_generate.ndjson").read_bytes()
COMPLETION = (
    b'{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Hi"}}]}'
)


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=[f"{p.parent.name}/{p.name}" for p in TRANSCRIPTS])
def test_a_body_in_the_expected_format_is_no_mismatch(path):
    """Every recorded transcript, read as its API and framing: never called another format (errors included)."""
    for stream_format in ("auto", _FRAMING[path.suffix].value):
        assert format_mismatch(_FRAMING[path.suffix], path.parent.name, stream_format, path.read_bytes()) is None


@pytest.mark.parametrize(
    ("framing", "api", "body", "says"),
    [
        (Framing.SSE, "openai-chat", RESPONSES, "the body holds openai-responses events (event: response.created "
                                                "data: {"),
        (Framing.SSE, "openai-chat", RESPONSES, "but --api is openai-chat: use --api openai-responses"),
        (Framing.SSE, "openai-responses", CHAT, "use --api openai-chat"),
        (Framing.SSE, "openai-chat", ANTHROPIC, "use --api anthropic-messages"),
        (Framing.SSE, "anthropic-messages", CHAT, "use --api openai-chat"),
        (Framing.SSE, "openai-chat", b"data: Hello\n\ndata:  world\n\n", "use --api stream"),
        (Framing.NDJSON, "openai-chat", CHAT, "the body is SSE (data: {\"choices\""),
        (Framing.NDJSON, "openai-chat", CHAT, "read as NDJSON (--stream-format ndjson): use --stream-format sse"),
        (Framing.RAW, "openai-responses", RESPONSES, "read as raw text (--stream-format raw): use --stream-format sse"),
        (Framing.NDJSON, "openai-chat", RESPONSES, "use --stream-format sse --api openai-responses"),
        (Framing.SSE, "stream", OLLAMA, "the body is JSON lines ({\"model\":\"llama3.2\""),
        (Framing.SSE, "openai-chat", OLLAMA, "read as SSE (--stream-format sse): use --stream-format ndjson --api stream"),
        (Framing.NDJSON, "openai-chat", OLLAMA, "the body holds stream events"),
        (Framing.SSE, "openai-chat", COMPLETION, "one JSON document, a whole chat completion"),
        (Framing.NDJSON, "openai-chat", COMPLETION, 'the server did not stream (does it honour "stream": true?)'),
    ],
)  # fmt: skip
def test_another_format_is_named_with_the_flag_that_reads_it(framing, api, body, says):
    message = format_mismatch(framing, api, framing.value, body)
    assert message is not None and says in message, message


def test_the_framing_from_the_content_type_is_said_so():
    message = format_mismatch(Framing.SSE, "stream", "auto", OLLAMA)
    assert message is not None and "read as SSE (its Content-Type): use --stream-format ndjson" in message


@pytest.mark.parametrize("body", [b"", b"\n\n", b": keep-alive\n\n", b"Hello world", b"<html>page</html>"])
def test_nothing_to_tell_is_no_mismatch(body):
    for framing in Framing:
        assert format_mismatch(framing, "openai-chat", "auto", body) is None


def test_sse_without_content_is_sse_yet_no_api():
    body = b"data: [DONE]\n\n"
    assert (
        format_mismatch(Framing.SSE, "openai-chat", "auto", body) is None
    )  # a truly empty answer stays empty_response
    assert "the body is SSE (data: [DONE])" in format_mismatch(Framing.NDJSON, "openai-chat", "ndjson", body)


def test_sniff_reads_the_first_lines_only_and_says_which_line_showed_it():
    assert sniff(CHAT)[:2] == ("sse", "openai-chat")
    assert sniff(RESPONSES)[:2] == ("sse", "openai-responses")
    assert sniff(OLLAMA)[:2] == ("ndjson", "stream")
    assert sniff(COMPLETION)[:2] == ("json", "a whole chat completion")
    assert sniff(b"x" * 10_000) is None
    assert len(sniff(CHAT)[2]) <= 70
