"""The simulator's HTTP layer: connections, routing and response writers.

Routes: ``POST /v1/chat/completions``, ``POST /v1/completions``, ``POST /v1/stream``
(wire format in :mod:`llmload.sim.api`), ``GET /v1/models``, ``GET /health``. Unknown
paths answer 404, a wrong method 405, bad JSON or fields 400, always with the OpenAI
error body ``{"error": {"message", "type", "code"}}``.

Each connection is an :class:`asyncio.Protocol` (no per-connection task, no stream
objects) with ``TCP_NODELAY``. A generation request writes its headers (and, for
chat, the role chunk) at once and hands a writer (a *sink*) to the engine, which
calls it as tokens come due; each call goes straight to the socket. One SSE event
per HTTP chunk, no compression, keep-alive per HTTP/1.1 (see :mod:`.http11`).
With ``stamp_chunks`` on, SSE responses get a :class:`_StampedSseSink`, which stamps
each content chunk with its send time; when off, nothing on the token path changes.
"""

from __future__ import annotations

import asyncio
import random
import socket
import time
from collections.abc import Callable
from time import perf_counter_ns
from typing import Any

from llmload.sim import http11
from llmload.sim.api import DONE_EVENT, WORDS, ApiError, Encoder, GenRequest, parse_request
from llmload.sim.config import SimConfig
from llmload.sim.engine import FixedLatencyEngine, Sequence
from llmload.sim.model import FixedLatencyModel
from llmload.sim.runner import ServerThread, serve_until_signal

__all__ = ["SimServer", "run_in_thread", "serve"]

_GENERATE = {"/v1/chat/completions": "chat", "/v1/completions": "completions", "/v1/stream": "stream"}
_SSE = "text/event-stream; charset=utf-8"
_CHUNK = http11.chunk


class SimServer:
    """The simulator bound to ``config.host:config.port`` on the running loop."""

    def __init__(self, config: SimConfig) -> None:
        self.config = config
        self.url = ""
        self.port = 0
        self.engine: FixedLatencyEngine | None = None
        self.connections: set[_Connection] = set()
        self._rng = random.Random(config.seed)
        self._server: asyncio.Server | None = None

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        self.engine = FixedLatencyEngine(FixedLatencyModel(self.config.ttft_s, self.config.itl_s), loop)
        self._server = await loop.create_server(
            lambda: _Connection(self), self.config.host, self.config.port, backlog=4096, reuse_address=True
        )
        self.port = self._server.sockets[0].getsockname()[1]
        host = self.config.host if ":" not in self.config.host else f"[{self.config.host}]"
        self.url = f"http://{host}:{self.port}"

    async def stop(self) -> None:
        """Stop listening and drop every connection (streams in flight are cut)."""
        if self._server is not None:
            self._server.close()
        for conn in list(self.connections):
            conn.abort()
        if self.engine is not None:
            self.engine.close()
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None

    def new_encoder(self, req: GenRequest) -> Encoder:
        return Encoder(req, int(time.time()), self._rng.randrange(len(WORDS)))


def serve(config: SimConfig, ready: Callable[[str], Any] | None = None) -> None:
    """Run the simulator in this (main) thread until SIGINT or SIGTERM, then stop cleanly.

    ``ready(url)`` is called once it listens (the URL has the bound port when
    ``config.port`` is 0).
    """
    serve_until_signal(SimServer(config), ready)


def run_in_thread(config: SimConfig) -> ServerThread:
    """Start the simulator on its own loop in a daemon thread; use as a context manager."""
    return ServerThread(SimServer(config)).start()


class _Connection(asyncio.Protocol):
    """One client connection: parses requests, answers them one at a time, in order."""

    def __init__(self, app: SimServer) -> None:
        self.app = app
        self.parser = http11.RequestParser()
        self.transport: asyncio.Transport | None = None
        self.busy = False  # a response is being generated
        self.seq: Sequence | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.app.connections.add(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self.app.connections.discard(self)
        if self.seq is not None and self.app.engine is not None:
            self.app.engine.cancel(self.seq)
        self.seq = None
        self.transport = None

    def abort(self) -> None:
        if self.transport is not None:
            self.transport.abort()

    def data_received(self, data: bytes) -> None:
        self.parser.feed(data)
        if not self.busy:
            self.serve_next()

    def serve_next(self) -> None:
        """Answer buffered requests until one needs time or more bytes are needed."""
        while not self.busy and self.transport is not None and not self.transport.is_closing():
            try:
                req = self.parser.next()
            except http11.HttpError as e:
                self.transport.write(
                    http11.json_response(e.status, http11.error_body(e.status, e.message), keep_alive=False)
                )
                self.transport.close()
                return
            if req is None:
                if self.parser.needs_continue:
                    self.transport.write(http11.CONTINUE)
                    self.parser.continue_sent()
                return
            self.dispatch(req)

    def finish(self, keep_alive: bool) -> None:
        """Called by a sink when its response is complete."""
        self.busy = False
        self.seq = None
        if self.transport is None:
            return
        if not keep_alive:
            self.transport.close()
        else:
            self.serve_next()

    def _reply(self, status: int, obj: object, keep_alive: bool) -> None:
        assert self.transport is not None
        self.transport.write(http11.json_response(status, obj, keep_alive=keep_alive))
        if not keep_alive:
            self.transport.close()

    def _error(self, status: int, message: str, keep_alive: bool) -> None:
        self._reply(status, http11.error_body(status, message), keep_alive)

    def dispatch(self, req: http11.Request) -> None:
        app, ka = self.app, req.keep_alive
        endpoint = _GENERATE.get(req.path)
        if endpoint is None:
            if req.path not in ("/health", "/v1/models"):
                self._error(404, f"no route for {req.method} {req.path}", ka)
            elif req.method != "GET":
                self._error(405, f"use GET for {req.path}", ka)
            elif req.path == "/health":
                self._reply(200, {"status": "ok"}, ka)
            else:
                card = {"id": app.config.model, "object": "model", "created": 0, "owned_by": "llmload-sim"}
                self._reply(200, {"object": "list", "data": [card]}, ka)
            return
        if req.method != "POST":
            self._error(405, f"use POST for {req.path}", ka)
            return
        try:
            gen = parse_request(endpoint, req.body, app.config.model, app.config.default_max_tokens)
        except ApiError as e:
            self._error(e.status, e.message, ka)
            return
        self._generate(gen, ka)

    def _generate(self, gen: GenRequest, keep_alive: bool) -> None:
        assert self.transport is not None
        assert self.app.engine is not None
        enc = self.app.new_encoder(gen)
        sink: _Sink
        if not gen.stream:
            sink = _BufferedSink(self, enc, keep_alive)
        elif gen.endpoint == "stream":
            self.transport.write(http11.head(200, "text/plain; charset=utf-8", keep_alive=keep_alive))
            sink = _RawSink(self, enc, keep_alive)
        else:
            first = http11.head(200, _SSE, keep_alive=keep_alive)
            if gen.endpoint == "chat":
                first += _CHUNK(enc.role_event())
            self.transport.write(first)
            sink = (_StampedSseSink if self.app.config.stamp_chunks else _SseSink)(self, enc, keep_alive)
        self.busy = True
        self.seq = self.app.engine.submit(sink, gen.max_tokens, gen.prompt_tokens)


class _Sink:
    """Base of the response writers the engine calls (see :class:`~.engine.TokenSink`)."""

    __slots__ = ("conn", "emitted", "enc", "keep_alive", "write")

    def __init__(self, conn: _Connection, enc: Encoder, keep_alive: bool) -> None:
        assert conn.transport is not None
        self.conn = conn
        self.enc = enc
        self.keep_alive = keep_alive
        self.write = conn.transport.write
        self.emitted = 0

    def emit(self, n: int, finished: bool) -> None:
        raise NotImplementedError


class _SseSink(_Sink):
    __slots__ = ()

    def emit(self, n: int, finished: bool) -> None:
        enc, i = self.enc, self.emitted
        self.emitted = end = i + n
        if not finished:
            if n == 1:
                self.write(_CHUNK(enc.token_event(i, False)))
            else:
                self.write(b"".join([_CHUNK(enc.token_event(j, False)) for j in range(i, end)]))
            return
        parts = [_CHUNK(enc.token_event(j, j == end - 1)) for j in range(i, end)]
        if enc.req.include_usage:
            parts.append(_CHUNK(enc.usage_event(end)))
        parts.append(_CHUNK(DONE_EVENT))
        parts.append(http11.LAST_CHUNK)
        self.write(b"".join(parts))
        self.conn.finish(self.keep_alive)


class _StampedSseSink(_Sink):
    """:class:`_SseSink` whose content chunks carry ``llmload_sent_ns`` (``--stamp-chunks``)."""

    __slots__ = ()

    def emit(self, n: int, finished: bool) -> None:
        enc, i = self.enc, self.emitted
        self.emitted = end = i + n
        if not finished:
            if n == 1:
                self.write(_CHUNK(enc.stamped_token_event(i, False, perf_counter_ns())))
            else:
                t = perf_counter_ns()
                self.write(b"".join([_CHUNK(enc.stamped_token_event(j, False, t)) for j in range(i, end)]))
            return
        t = perf_counter_ns()
        parts = [_CHUNK(enc.stamped_token_event(j, j == end - 1, t)) for j in range(i, end)]
        if enc.req.include_usage:
            parts.append(_CHUNK(enc.usage_event(end)))
        parts.append(_CHUNK(DONE_EVENT))
        parts.append(http11.LAST_CHUNK)
        self.write(b"".join(parts))
        self.conn.finish(self.keep_alive)


class _RawSink(_Sink):
    __slots__ = ()

    def emit(self, n: int, finished: bool) -> None:
        word, i = self.enc.word, self.emitted
        self.emitted = end = i + n
        data = b"".join([_CHUNK(word(j)) for j in range(i, end)])
        if finished:
            self.write(data + http11.LAST_CHUNK)
            self.conn.finish(self.keep_alive)
        else:
            self.write(data)


class _BufferedSink(_Sink):
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
            body, ctype = enc.full_body(self.emitted), "application/json"
        self.write(http11.head(200, ctype, length=len(body), keep_alive=self.keep_alive) + body)
        self.conn.finish(self.keep_alive)
