"""Talking to the simulator in tests: one POST, and its SSE events (the client's own parser)."""

from __future__ import annotations

import http.client
import json
from urllib.parse import urlsplit

from llmload.adapters.framing import SseParser


def post(url: str, path: str, body: object, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    """(status, body) of ``POST path`` with a JSON body; chunked bodies are read whole."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json", **(headers or {})})
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def sse_events(body: bytes) -> list[tuple[str, bytes]]:
    """``(event name, data)`` of an SSE body, as llmload's stream loop frames it."""
    parser = SseParser()
    events = [ev for line in body.splitlines(keepends=True) if (ev := parser.feed_line(line)) is not None]
    tail = parser.flush()
    return events + ([tail] if tail is not None else [])


def replay(adapter, body: bytes):
    """Feed an SSE body to ``adapter`` as the stream loop would: (state, content events, tokens, done, error)."""
    from llmload.adapters.base import DONE, StreamState
    from llmload.errors import StreamError

    state, events, tokens, done, error = StreamState(), 0, 0, False, None
    try:
        for name, data in sse_events(body):
            n = adapter.feed(state, data, name)
            if n == DONE:
                done = True
                break
            if n > 0:
                events, tokens = events + 1, tokens + n
    except StreamError as e:
        error = e.kind
    return state, events, tokens, done, error
