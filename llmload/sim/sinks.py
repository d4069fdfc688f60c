"""Response writers ("sinks"): what the engine calls as a request's tokens come due.

One class per response shape: :class:`SseSink` (streaming chat/completions),
:class:`StampedSseSink` (the same with ``llmload_sent_ns`` on every content chunk,
``--stamp-chunks``), :class:`RawSink` (``/v1/stream`` text), :class:`BufferedSink`
(non-streaming JSON). ``emit(n, finished)`` writes ``n`` tokens, one SSE event per
HTTP chunk, straight to the socket; the last call ends the response and hands the
connection back (:meth:`Connection.finish`).

``head`` holds what precedes the first token (status line, headers and, for chat,
the role chunk) until it is sent: at once for the fixed-latency engine
(:meth:`Sink.flush_head`), with the first token for the engine model, so that a
request that fails before its first token can still be answered with a status.
``fail(message)`` ends a response with an error: HTTP 500 with the OpenAI error body
when nothing was sent yet, else a ``data: {"error": {...}}`` event then ``[DONE]``
(raw text streams cannot carry one: the connection is closed mid-body).

``seq`` is the engine's handle of the request (set by the server after ``submit``); its
``cached_tokens`` (``None`` in the fixed-latency mode, which has no KV cache) becomes
``usage.prompt_tokens_details.cached_tokens``.
"""

from __future__ import annotations

from collections.abc import Callable
from time import perf_counter_ns
from typing import Any, Protocol

import orjson

from llmload.sim import http11
from llmload.sim.api import DONE_EVENT, Encoder

__all__ = ["BufferedSink", "Connection", "RawSink", "Sink", "SseSink", "StampedSseSink"]

_CHUNK = http11.chunk


class Connection(Protocol):
    """What a sink needs of its connection."""

    transport: Any

    def finish(self, keep_alive: bool) -> None: ...


class Sink:
    """Base of the response writers the engine calls (see :class:`~.engine.TokenSink`)."""

    __slots__ = ("conn", "emitted", "enc", "head", "keep_alive", "seq", "write")

    def __init__(self, conn: Connection, enc: Encoder, keep_alive: bool, head: bytes = b"") -> None:
        assert conn.transport is not None
        self.conn = conn
        self.enc = enc
        self.keep_alive = keep_alive
        self.write: Callable[[bytes], None] = conn.transport.write
        self.emitted = 0
        self.head = head
        self.seq: Any = None

    def cached_tokens(self) -> int | None:
        """Prompt tokens the engine's prefix cache served, when it has one."""
        return None if self.seq is None else self.seq.cached_tokens

    def flush_head(self) -> None:
        """Send the head now instead of with the first token."""
        if self.head:
            self.write(self.head)
            self.head = b""

    def emit(self, n: int, finished: bool) -> None:
        raise NotImplementedError

    def fail(self, message: str) -> None:
        """End the response with a server error (see the module docstring)."""
        if self.head or isinstance(self, BufferedSink):
            self.head = b""
            self.write(http11.json_response(500, http11.error_body(500, message), keep_alive=self.keep_alive))
            self.conn.finish(self.keep_alive)
        else:
            self._fail_midstream(message)

    def _fail_midstream(self, message: str) -> None:
        event = b"data: " + orjson.dumps(http11.error_body(500, message)) + b"\n\n"
        self.write(_CHUNK(event) + _CHUNK(DONE_EVENT) + http11.LAST_CHUNK)
        self.conn.finish(self.keep_alive)


class SseSink(Sink):
    __slots__ = ()

    def _events(self, i: int, end: int, finished: bool) -> bytes:
        """Token events ``i .. end-1``; the last carries the finish reason when ``finished``."""
        enc = self.enc
        if end - i == 1:
            return _CHUNK(enc.token_event(i, finished))
        return b"".join([_CHUNK(enc.token_event(j, finished and j == end - 1)) for j in range(i, end)])

    def emit(self, n: int, finished: bool) -> None:
        i = self.emitted
        self.emitted = end = i + n
        head, self.head = self.head, b""
        data = head + self._events(i, end, finished)
        if not finished:
            self.write(data)
            return
        if self.enc.req.include_usage:
            data += _CHUNK(self.enc.usage_event(end, self.cached_tokens()))
        self.write(data + _CHUNK(DONE_EVENT) + http11.LAST_CHUNK)
        self.conn.finish(self.keep_alive)


class StampedSseSink(SseSink):
    """:class:`SseSink` whose content chunks carry ``llmload_sent_ns`` (``--stamp-chunks``):
    the send time taken just before the write, shared by tokens written together."""

    __slots__ = ()

    def _events(self, i: int, end: int, finished: bool) -> bytes:
        enc, t = self.enc, perf_counter_ns()
        return b"".join([_CHUNK(enc.stamped_token_event(j, finished and j == end - 1, t)) for j in range(i, end)])


class RawSink(Sink):
    __slots__ = ()

    def emit(self, n: int, finished: bool) -> None:
        word, i = self.enc.word, self.emitted
        self.emitted = end = i + n
        data = self.head + b"".join([_CHUNK(word(j)) for j in range(i, end)])
        self.head = b""
        if finished:
            self.write(data + http11.LAST_CHUNK)
            self.conn.finish(self.keep_alive)
        else:
            self.write(data)

    def _fail_midstream(self, message: str) -> None:
        self.conn.finish(False)  # closes the connection before the last chunk


class BufferedSink(Sink):
    __slots__ = ()

    def emit(self, n: int, finished: bool) -> None:
        self.emitted += n
        if not finished:
            return
        enc = self.enc
        if enc.req.endpoint == "stream":
            body = enc.text(self.emitted).encode()
            ctype = "text/plain; charset=utf-8"
        else:
            body, ctype = enc.full_body(self.emitted, self.cached_tokens()), "application/json"
        self.write(http11.head(200, ctype, length=len(body), keep_alive=self.keep_alive) + body)
        self.conn.finish(self.keep_alive)
