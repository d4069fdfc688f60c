"""Response writers ("sinks"): what the engine calls as a request's tokens come due.

One class per response shape: :class:`SseSink` (streaming chat/completions/responses/
messages: the encoder, :mod:`.api`, decides the events),
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
when nothing was sent yet, else the API's own mid-stream error events
(``Encoder.error_events``; raw text streams cannot carry one: the connection is closed
mid-body). A request with ``llmload_fail_after = k`` fails that way after ``k`` tokens.

``seq`` is the engine's handle of the request (set by the server after ``submit``); its
``cached_tokens`` (``None`` in the fixed-latency mode, which has no KV cache) becomes
``usage.prompt_tokens_details.cached_tokens`` (or the API's own field).
"""

from __future__ import annotations

from collections.abc import Callable
from time import perf_counter_ns
from typing import Any, Protocol

from llmload.sim import http11
from llmload.sim.api import BaseEncoder
from llmload.sim.timing import server_times

__all__ = ["BufferedSink", "Connection", "RawSink", "Sink", "SseSink", "StampedSseSink"]

_CHUNK = http11.chunk


class Connection(Protocol):
    """What a sink needs of its connection."""

    transport: Any

    def finish(self, keep_alive: bool) -> None: ...


class Sink:
    """Base of the response writers the engine calls (see :class:`~.engine.TokenSink`)."""

    __slots__ = ("conn", "emitted", "enc", "fail_at", "head", "keep_alive", "seq", "write")

    def __init__(self, conn: Connection, enc: BaseEncoder, keep_alive: bool, head: bytes = b"") -> None:
        assert conn.transport is not None
        self.conn = conn
        self.enc = enc
        self.keep_alive = keep_alive
        self.write: Callable[[bytes], None] = conn.transport.write
        self.emitted = 0
        self.head = head
        self.seq: Any = None
        self.fail_at = enc.req.fail_after  # 0: never (``llmload_fail_after``)

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

    def _injected_failure(self, n: int) -> bool:
        """``llmload_fail_after``: when these ``n`` tokens reach it, send the tokens up to it, then fail."""
        i, stop = self.emitted, self.fail_at
        if i + n < stop:
            return False
        self.fail_at = 0
        self._write_tokens(i, stop)
        self.emitted = stop
        self.fail(f"llmload sim: failure injected after {stop} tokens (llmload_fail_after)")
        return True

    def _write_tokens(self, i: int, end: int) -> None:
        """Send tokens ``i .. end-1`` (and the head) without finishing; a buffered body sends nothing."""

    def fail(self, message: str) -> None:
        """End the response with a server error (see the module docstring)."""
        if self.head or isinstance(self, BufferedSink):
            self.head = b""
            self.write(http11.json_response(500, http11.error_body(500, message), keep_alive=self.keep_alive))
            self.conn.finish(self.keep_alive)
        else:
            self._fail_midstream(message)

    def _fail_midstream(self, message: str) -> None:
        events = self.enc.error_events(message)
        self.write(b"".join([_CHUNK(e) for e in events]) + http11.LAST_CHUNK)
        self.conn.finish(self.keep_alive)


class SseSink(Sink):
    __slots__ = ()

    def _write_tokens(self, i: int, end: int) -> None:
        head, self.head = self.head, b""
        self.write(head + self._events(i, end, False))

    def _events(self, i: int, end: int, finished: bool) -> bytes:
        """Token events ``i .. end-1``; the last carries the finish reason when ``finished``."""
        enc = self.enc
        if end - i == 1:
            return _CHUNK(enc.token_event(i, finished))
        return b"".join([_CHUNK(enc.token_event(j, finished and j == end - 1)) for j in range(i, end)])

    def emit(self, n: int, finished: bool) -> None:
        if self.fail_at and self._injected_failure(n):
            return
        i = self.emitted
        self.emitted = end = i + n
        head, self.head = self.head, b""
        data = head + self._events(i, end, finished)
        if not finished:
            self.write(data)
            return
        enc = self.enc
        enc.times = server_times(self.seq)  # the true queue/prefill/decode, for --per-request-timing
        tail = b"".join([_CHUNK(e) for e in enc.end_events(end, self.cached_tokens())])
        self.write(data + tail + http11.LAST_CHUNK)
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

    def _write_tokens(self, i: int, end: int) -> None:
        word, head, self.head = self.enc.word, self.head, b""
        self.write(head + b"".join([_CHUNK(word(j)) for j in range(i, end)]))

    def emit(self, n: int, finished: bool) -> None:
        if self.fail_at and self._injected_failure(n):
            return
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
        if self.fail_at and self._injected_failure(n):
            return
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
