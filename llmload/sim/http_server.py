"""The simulator's HTTP layer: connections, routing, ``/metrics``.

Routes: ``POST /v1/chat/completions``, ``POST /v1/completions``, ``POST /v1/stream``
(wire format in :mod:`llmload.sim.api`), ``POST /v1/responses``
(:mod:`llmload.sim.api_responses`), ``POST /v1/messages`` (:mod:`llmload.sim.api_messages`),
``POST /v1/embeddings`` (:mod:`llmload.sim.embeddings`),
``GET /v1/models``, ``GET /health``,
``GET /metrics`` (Prometheus text: the engine's ``vllm:*`` series, see
:mod:`.metrics`, and the simulated GPU's ``llmload_gpu_*`` gauges, see :mod:`.gpu`,
unless ``gpu_metrics_port`` serves those on a port of their own). Unknown paths
answer 404, a wrong method 405, bad JSON or fields 400, a full admission queue 429,
always with the OpenAI error body ``{"error": {"message", "type", "code"}}``. With
``--api-key`` the generation routes and ``/v1/models`` answer 401 unless the request
carries the key the API's way: ``Authorization: Bearer <key>``, or ``x-api-key: <key>``
(``/v1/messages``, which takes only that; ``/v1/models`` takes either).

Each connection is an :class:`asyncio.Protocol` (no per-connection task, no stream
objects) with ``TCP_NODELAY``. A generation request gets a writer (a *sink*,
:mod:`.sinks`) that the engine calls as tokens come due; each call goes straight to
the socket. One SSE event per HTTP chunk, no compression, keep-alive per HTTP/1.1
(see :mod:`.http11`). The fixed-latency engine's responses start at once (headers
and, for chat, the role chunk); the engine model's start with their first token, so
that a request failing before it is answered 500.
"""

from __future__ import annotations

import asyncio
import random
import socket
import time
from collections.abc import Callable
from typing import Any

from llmload.sim import http11
from llmload.sim.api import WORDS, ApiError, BaseEncoder, Encoder, GenRequest, parse_request
from llmload.sim.api_messages import MessagesEncoder, parse_messages
from llmload.sim.api_responses import ResponsesEncoder, parse_responses
from llmload.sim.batching import BatchingEngine
from llmload.sim.cold_server import ColdStartModel
from llmload.sim.config import SimConfig
from llmload.sim.embeddings import PATH as EMBEDDINGS_PATH
from llmload.sim.embeddings import serve_embeddings
from llmload.sim.engine import FixedLatencyEngine
from llmload.sim.gpu import SimulatedGpu, gpu_uuid
from llmload.sim.latency_model import FixedLatencyModel, LatencyModel
from llmload.sim.metrics import EngineStats, render_engine_metrics
from llmload.sim.runner import ServerThread, serve_until_signal
from llmload.sim.sinks import BufferedSink, RawSink, Sink, SseSink, StampedSseSink
from llmload.sim.tools import EncoderClass, encoder_class, tool_request

__all__ = ["SimServer", "run_in_thread", "serve"]

_GENERATE = {
    "/v1/chat/completions": "chat",
    "/v1/completions": "completions",
    "/v1/stream": "stream",
    "/v1/responses": "responses",
    "/v1/messages": "messages",
}
_ENCODERS: dict[str, EncoderClass] = {"responses": ResponsesEncoder, "messages": MessagesEncoder}
_SSE = "text/event-stream; charset=utf-8"
_PROMETHEUS = "text/plain; version=0.0.4; charset=utf-8"
_CHUNK = http11.chunk
#: Routes served by a module of their own: ``handler(connection, request)``.
_ROUTES: dict[str, Callable[[Any, http11.Request], None]] = {EMBEDDINGS_PATH: serve_embeddings}


class SimServer:
    """The simulator bound to ``config.host:config.port`` on the running loop."""

    def __init__(self, config: SimConfig) -> None:
        self.config = config
        self.url = ""
        self.port = 0
        self.gpu_url = ""  # the GPU gauges' own /metrics when gpu_metrics_port is set
        self.engine: FixedLatencyEngine | BatchingEngine | None = None
        self.gpu: SimulatedGpu | None = None
        self.connections: set[_Connection] = set()
        self._rng = random.Random(config.seed)
        self._servers: list[asyncio.Server] = []
        self._loop: asyncio.AbstractEventLoop | None = None

    async def start(self) -> None:
        loop = self._loop = asyncio.get_running_loop()
        cfg, stats = self.config, EngineStats()
        if cfg.engine is None:
            model: LatencyModel = FixedLatencyModel(cfg.ttft_s, cfg.itl_s)
            if cfg.cold_start_s and cfg.cold_start_ttft_ms:  # the first seconds slower to first token
                model = ColdStartModel(model, cfg.cold_start_s, cfg.cold_start_ttft_ms / 1000.0)
            self.engine = FixedLatencyEngine(model, loop, stats)
        else:
            self.gpu = SimulatedGpu(cfg.engine, uuid_=gpu_uuid(cfg.seed), hostname=socket.gethostname(), t0=loop.time())
            self.engine = BatchingEngine(cfg.engine, loop, stats, self.gpu)
        server = await loop.create_server(
            lambda: _Connection(self), cfg.host, cfg.port, backlog=4096, reuse_address=True
        )
        self._servers.append(server)
        self.port = server.sockets[0].getsockname()[1]
        self.url = self._url(self.port)
        if cfg.gpu_metrics_port is not None:
            gpu_server = await loop.create_server(
                lambda: _Connection(self, gpu_only=True), cfg.host, cfg.gpu_metrics_port, reuse_address=True
            )
            self._servers.append(gpu_server)
            self.gpu_url = self._url(gpu_server.sockets[0].getsockname()[1])

    def _url(self, port: int) -> str:
        host = self.config.host if ":" not in self.config.host else f"[{self.config.host}]"
        return f"http://{host}:{port}"

    async def stop(self) -> None:
        """Stop listening and drop every connection (streams in flight are cut)."""
        for server in self._servers:
            server.close()
        for conn in list(self.connections):
            conn.abort()
        if self.engine is not None:
            self.engine.close()
        for server in self._servers:
            await server.wait_closed()
        self._servers = []

    def metrics_text(self, engine: bool = True, gpu: bool = True) -> bytes:
        """The Prometheus exposition of the engine's and/or the simulated GPU's series."""
        lines: list[str] = []
        if engine and self.engine is not None:
            p = self.config.engine
            info = None
            if p is not None:
                info = {
                    "block_size": str(p.block_size),
                    "num_gpu_blocks": str(p.num_kv_blocks),
                    "gpu_memory_utilization": repr(p.gpu_memory_utilization),
                    "enable_prefix_caching": str(p.prefix_caching),
                    "cache_dtype": "auto",
                }
            lines += render_engine_metrics(self.engine.stats, self.engine.gauges(), self.config.model, info)
        if gpu and self.gpu is not None and self._loop is not None:
            lines += self.gpu.render(self._loop.time())
        return ("\n".join(lines) + "\n").encode()

    def new_encoder(self, req: GenRequest) -> BaseEncoder:
        enc = encoder_class(req, _ENCODERS.get(req.endpoint, Encoder))(req, int(time.time()), self._rng.randrange(len(WORDS)))
        enc.timing_format = self.config.per_request_timing
        return enc

    def authorized(self, req: http11.Request, endpoint: str | None) -> bool:
        """Whether ``req`` carries ``--api-key`` the API's way (always, without one)."""
        key = self.config.api_key
        if not key:
            return True
        bearer = req.headers.get("authorization") == f"Bearer {key}"
        x_api_key = req.headers.get("x-api-key") == key
        if endpoint == "messages":
            return x_api_key
        return bearer or (x_api_key and endpoint is None)


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

    def __init__(self, app: SimServer, gpu_only: bool = False) -> None:
        self.app = app
        self.gpu_only = gpu_only  # the GPU gauges' own port: GET /metrics only
        self.parser = http11.RequestParser()
        self.transport: asyncio.Transport | None = None
        self.busy = False  # a response is being generated
        self.seq: Any = None  # the engine's handle of the request being generated

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
            _ROUTES.get(req.path, _Connection.dispatch)(self, req)  # routes of their own modules, else dispatch

    def finish(self, keep_alive: bool) -> None:
        """Called by a sink when its response is complete (or ended early by an injected failure)."""
        if self.seq is not None and self.app.engine is not None:
            self.app.engine.cancel(self.seq)  # a no-op once the engine is done with it
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

    def _error(self, status: int, message: str, keep_alive: bool, type_: str | None = None) -> None:
        self._reply(status, http11.error_body(status, message, type_), keep_alive)

    def dispatch(self, req: http11.Request) -> None:
        app, ka = self.app, req.keep_alive
        endpoint = None if self.gpu_only else _GENERATE.get(req.path)
        if (
            (endpoint is not None or req.path == "/v1/models")
            and not self.gpu_only
            and not app.authorized(req, endpoint)
        ):
            way = "an x-api-key header" if endpoint == "messages" else "Authorization: Bearer <key>"
            self._error(401, f"invalid or missing API key: send it as {way}", ka, "authentication_error")
            return
        if endpoint is None:
            routes = ("/metrics",) if self.gpu_only else ("/health", "/v1/models", "/metrics")
            if req.path not in routes:
                self._error(404, f"no route for {req.method} {req.path}", ka)
            elif req.method != "GET":
                self._error(405, f"use GET for {req.path}", ka)
            elif req.path == "/health":
                self._reply(200, {"status": "ok"}, ka)
            elif req.path == "/metrics":
                on_own_port = app.gpu_url != ""
                body = app.metrics_text(engine=not self.gpu_only, gpu=self.gpu_only or not on_own_port)
                assert self.transport is not None
                self.transport.write(http11.head(200, _PROMETHEUS, length=len(body), keep_alive=ka) + body)
                if not ka:
                    self.transport.close()
            else:
                card = {"id": app.config.model, "object": "model", "created": 0, "owned_by": "llmload-sim"}
                self._reply(200, {"object": "list", "data": [card]}, ka)
            return
        if req.method != "POST":
            self._error(405, f"use POST for {req.path}", ka)
            return
        if endpoint == "messages" and "anthropic-version" not in req.headers:
            self._error(400, "anthropic-version: header is required", ka)
            return
        parse = parse_responses if endpoint == "responses" else parse_messages if endpoint == "messages" else None
        cfg = app.config
        try:
            if parse is None:
                gen = parse_request(endpoint, req.body, cfg.model, cfg.default_max_tokens, cfg.reasoning_tokens)
            else:
                gen = parse(req.body, cfg.model, cfg.default_max_tokens, cfg.reasoning_tokens)
            gen = tool_request(gen, req.body, cfg.tool_call_share, app._rng)  # a request with tools: maybe tool calls
        except ApiError as e:
            self._error(e.status, e.message, ka)
            return
        self._generate(gen, ka)

    def _generate(self, gen: GenRequest, keep_alive: bool) -> None:
        app = self.app
        assert app.engine is not None
        enc = app.new_encoder(gen)
        sink: Sink
        if not gen.stream:
            sink = BufferedSink(self, enc, keep_alive)
        elif gen.endpoint == "stream":
            sink = RawSink(self, enc, keep_alive, http11.head(200, "text/plain; charset=utf-8", keep_alive=keep_alive))
        else:
            head = http11.head(200, _SSE, keep_alive=keep_alive) + b"".join([_CHUNK(e) for e in enc.head_events()])
            sink = (StampedSseSink if app.config.stamp_chunks else SseSink)(self, enc, keep_alive, head)
        try:
            seq = app.engine.submit(sink, gen.max_tokens, gen.prompt_tokens, gen.tokens)
        except ApiError as e:  # refused before anything was written
            self._error(e.status, e.message, keep_alive, e.type_)
            return
        sink.seq = seq
        if isinstance(app.engine, FixedLatencyEngine):
            sink.flush_head()
        self.busy = True
        self.seq = seq
