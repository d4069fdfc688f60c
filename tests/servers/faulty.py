"""A misbehaving OpenAI-compatible streaming server for error-path tests.

The behaviour is chosen per request by the JSON body's ``model`` field, so a normal
llmload run with ``--model <mode>`` exercises it. Routes: ``POST /v1/chat/completions``
(chat chunks, a role chunk first) and ``POST /v1/completions`` (text chunks), plus
``GET /health`` and ``GET /v1/models``. ``N`` = ``max_completion_tokens`` or
``max_tokens`` of the request (default 16); every content token is ``" tok"``; tokens
are written every 2 ms unless the mode says otherwise. The usage chunk
(``choices: []``) is sent only when ``stream_options.include_usage`` is true.

========================== ==================================================================
mode                       on the wire
========================== ==================================================================
``ok``                     role chunk, N content chunks of one token, a separate finish chunk
                           (``finish_reason: "length"``), usage chunk, ``[DONE]``
``http:<code>``            that HTTP status with ``{"error": {"message", "type", "code"}}``, the
                           message ``faulty: HTTP <code>``
``retry_after:<code>:<s>`` ``http:<code>`` with ``Retry-After: <s>``
``context_length``         400 with vLLM's message for a prompt over the context window
``html``                   200 ``text/html`` page (a web server, not an LLM endpoint)
``echo_key``               401 echoing the request's key (bearer or ``x-api-key``) in OpenAI's
                           "Incorrect API key provided: <key>" message, as some gateways do
``close_before_headers``   reads the request, closes the connection without answering
``reset_midstream:<k>``    role + k content chunks, then a TCP RST (SO_LINGER 0), no last chunk
``close_midstream:<k>``    role + k content chunks, then the socket is closed (FIN) without the
                           chunked terminator
``keepalive:<T>:<M>:<K>``  ``ok`` with ``Keep-Alive: timeout=T, max=M`` (llama.cpp's header); the
                           connection's limits, below, end it when the next request arrives
``slow_headers:<ms>``      nothing at all for ``ms`` (not even headers), then ``ok``
``slow_first:<ms>``        role chunk at once, first content chunk after ``ms``, then ``ok``
``stall_after:<k>:<ms>``   k content chunks, ``ms`` of silence carrying only ``: ping``
                           comments every 100 ms, then the rest as ``ok``
``slow_total:<ms>``        like ``ok`` but one token every ``ms``
``malformed_after:<k>``    k content chunks, then ``data: {not json``, ``[DONE]``
``short:<k>``              k content chunks, ``[DONE]``, clean end: no finish_reason, no usage
``short_with_finish:<k>``  k content chunks, finish chunk ``"stop"``, usage (k), ``[DONE]``
``empty``                  role chunk, finish chunk ``"stop"``, ``[DONE]``: no content at all
``error_event:<k>``        k content chunks, ``data: {"error": {... "CUDA out of memory" ...}}``,
                           ``[DONE]`` (as vLLM does)
``no_done``                ``ok`` without the ``[DONE]`` line
``multi_token:<k>``        every event carries k tokens of text (the last one fewer), N in all;
                           usage reports N
========================== ==================================================================

Every mode streams (``"stream": true``); a non-streaming request is answered with one
JSON body for ``ok``, as the mode says for ``http:`` and ``close_before_headers``, and
with 400 otherwise, as is an unknown mode. Connections are kept alive after a complete
answer. ``server.requests`` lists the ``model`` field of every generation request;
``GET /stats`` answers ``{"connections", "requests", "dropped"}`` (connections accepted,
generation requests read, requests dropped by ``keepalive`` limits) since the start.

``keepalive:<T>:<M>:<K>`` is llama.cpp's connection handling (cpp-httplib), made
deterministic. llama-server announces ``Keep-Alive: timeout=5, max=100``, closes a
connection idle for 5 s or after 100 requests, and also closes it right after every
streamed response, whatever it announced (the content provider's last call returns false,
which ends the connection). A client that has just taken such a connection from its pool
races that close: sometimes its next request is already on the wire when the FIN comes
(7.5 % of requests at one user). Here the close always loses the race: a request that
arrives on a connection idle for >= T s (since the end of its last response), or that has
answered M requests, or K requests (K > 0: the unannounced close, ``K = 1`` as llama.cpp
after a stream), is read and dropped: the connection is closed without a byte of answer.

Use ``with start_faulty_server() as s: s.url`` (a thread with its own loop) or
``python tests/servers/faulty.py --port N``.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import struct
import sys
import time

import orjson

from llmload.sim import http11
from llmload.sim.runner import ServerThread, serve_until_signal

__all__ = ["MODES", "FaultyServer", "start_faulty_server"]

MODES = (
    "ok", "http", "close_before_headers", "slow_headers", "reset_midstream", "slow_first", "stall_after", "slow_total",
    "malformed_after", "short", "short_with_finish", "empty", "error_event", "no_done", "multi_token",
    "close_midstream", "keepalive", "retry_after", "context_length", "html", "echo_key",
)  # fmt: skip
_PARAMS = {"http": 1, "slow_headers": 1, "reset_midstream": 1, "slow_first": 1, "stall_after": 2, "slow_total": 1,
           "malformed_after": 1, "short": 1, "short_with_finish": 1, "error_event": 1, "multi_token": 1,
           "close_midstream": 1, "keepalive": 3, "retry_after": 2}  # fmt: skip
_TOKEN = " tok"
_ITL = 0.002
_CONTEXT = ("This model's maximum context length is 32768 tokens. However, you requested 100050 tokens "
            "(100000 in the messages, 50 in the completion). Please reduce the length of the messages or completion.")
_HTML = (b"<!DOCTYPE html><html><head><title>Welcome to nginx!</title><style>body{width:35em}</style></head>"
         b"<body><h1>Welcome to nginx!</h1><p>If you see this page, the web server works.</p></body></html>")
_OOM = b'{"error": {"message": "CUDA out of memory", "type": "InternalServerError", "code": 500}}'


class _BadRequest(Exception):
    pass


class _Conn:
    """What the server knows of one connection: requests answered, when the last answer ended."""

    __slots__ = ("answered", "idle_since")

    def __init__(self) -> None:
        self.answered = 0
        self.idle_since = time.monotonic()

    def over_limits(self, timeout_s: int, max_requests: int, quiet_after: int) -> bool:
        """``keepalive`` mode: whether this connection must end instead of answering."""
        if not self.answered:
            return False
        idle = time.monotonic() - self.idle_since
        return idle >= timeout_s or self.answered >= max_requests or 0 < quiet_after <= self.answered


class _Writer:
    """Writes one streaming response, one SSE event per HTTP chunk, flushed at once."""

    def __init__(self, writer: asyncio.StreamWriter, chat: bool, model: str, prompt_tokens: int) -> None:
        self.w, self.chat, self.prompt_tokens = writer, chat, prompt_tokens
        self.env = b'"id":"faulty-1","object":"%s","created":%d,"model":%s' % (
            b"chat.completion.chunk" if chat else b"text_completion",
            int(time.time()),
            orjson.dumps(model),
        )

    async def raw(self, data: bytes) -> None:
        self.w.write(data)
        await self.w.drain()

    async def event(self, payload: bytes) -> None:
        await self.raw(http11.chunk(b"data: %b\n\n" % payload))

    async def choice(self, content: str | None, finish: str | None = None, role: bool = False) -> None:
        fr = orjson.dumps(finish)
        if self.chat:
            delta = {"role": "assistant", "content": ""} if role else {} if content is None else {"content": content}
            body = b'{"index":0,"delta":%b,"logprobs":null,"finish_reason":%b}' % (orjson.dumps(delta), fr)
        else:
            body = b'{"index":0,"text":%b,"logprobs":null,"finish_reason":%b}' % (orjson.dumps(content or ""), fr)
        await self.event(b'{%b,"choices":[%b]}' % (self.env, body))

    async def role(self) -> None:
        if self.chat:
            await self.choice(None, role=True)

    async def tokens(self, n: int, every: float = _ITL, per_event: int = 1) -> None:
        while n > 0:
            await asyncio.sleep(every)
            k = min(per_event, n)
            await self.choice(_TOKEN * k)
            n -= k

    async def usage(self, completion: int) -> None:
        p = self.prompt_tokens
        u = b'"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}' % (p, completion, p + completion)
        await self.event(b'{%b,"choices":[],%b}' % (self.env, u))

    async def end(self, done: bool = True) -> None:
        await self.raw((http11.chunk(b"data: [DONE]\n\n") if done else b"") + http11.LAST_CHUNK)


class FaultyServer:
    """The misbehaving server (see the module docstring) on the running loop."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.host, self.port, self.url = host, port, ""
        self.requests: list[str] = []
        self.connections = 0
        self.dropped = 0
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._connection, self.host, self.port, reuse_address=True)
        self.port = self._server.sockets[0].getsockname()[1]
        self.url = f"http://{self.host}:{self.port}"

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for w in list(self._writers):
            w.transport.abort()
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        self.connections += 1
        conn = _Conn()
        parser = http11.RequestParser()
        try:
            while True:
                req = parser.next()
                if req is None:
                    data = await reader.read(65536)
                    if not data:
                        return
                    parser.feed(data)
                    continue
                if not await self._answer(req, writer, conn) or not req.keep_alive:
                    return
                conn.answered += 1
                conn.idle_since = time.monotonic()
        except http11.HttpError as e:
            writer.write(http11.json_response(e.status, http11.error_body(e.status, e.message), keep_alive=False))
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            self._writers.discard(writer)
            writer.close()

    async def _answer(self, req: http11.Request, writer: asyncio.StreamWriter, conn: _Conn) -> bool:
        """Answer one request; False when the connection must not be reused."""
        if req.method == "GET" and req.path in ("/health", "/v1/models", "/stats"):
            stats = {"connections": self.connections, "requests": len(self.requests), "dropped": self.dropped}
            models = {"object": "list", "data": [{"id": m} for m in MODES]}
            body = {"status": "ok"} if req.path == "/health" else models if req.path == "/v1/models" else stats
            writer.write(http11.json_response(200, body, keep_alive=req.keep_alive))
            return True
        if req.path not in ("/v1/chat/completions", "/v1/completions") or req.method != "POST":
            writer.write(http11.json_response(404, http11.error_body(404, f"no route {req.method} {req.path}")))
            return True
        try:
            body, mode, params = _parse(req.body)
        except _BadRequest as e:
            writer.write(http11.json_response(400, http11.error_body(400, str(e))))
            return True
        self.requests.append(body.get("model", ""))
        if mode in ("http", "retry_after"):
            status = params[0]
            body = orjson.dumps(http11.error_body(status, f"faulty: HTTP {status}"))
            extra = {"retry-after": str(params[1])} if mode == "retry_after" else None
            writer.write(http11.head(status, "application/json", length=len(body), extra=extra) + body)
            return True
        if mode == "context_length":
            writer.write(http11.json_response(400, http11.error_body(400, _CONTEXT, "BadRequestError")))
            return True
        if mode == "echo_key":
            key = req.headers.get("x-api-key") or req.headers.get("authorization", "").removeprefix("Bearer ")
            said = f"Incorrect API key provided: {key}. You can find your API key at https://example.com/keys."
            writer.write(http11.json_response(401, http11.error_body(401, said, "invalid_request_error")))
            return True
        if mode == "html":
            writer.write(http11.head(200, "text/html; charset=utf-8", length=len(_HTML)) + _HTML)
            return True
        if mode == "close_before_headers":
            return False
        if mode == "keepalive" and conn.over_limits(*params):
            self.dropped += 1
            return False
        n = body.get("max_completion_tokens") or body.get("max_tokens") or 16
        if not body.get("stream"):
            if mode != "ok":
                writer.write(http11.json_response(400, http11.error_body(400, f"mode {mode!r} needs stream: true")))
                return True
            writer.write(http11.json_response(200, _full_body(body, n)))
            return True
        return await self._stream(req, writer, body, mode, params, n)

    async def _stream(self, req: http11.Request, writer: asyncio.StreamWriter, body: dict, mode: str,
                      params: list[int], n: int) -> bool:  # fmt: skip
        chat = req.path == "/v1/chat/completions"
        out = _Writer(writer, chat, str(body.get("model")), _prompt_words(body))
        usage = bool((body.get("stream_options") or {}).get("include_usage"))
        if mode == "slow_headers":
            await asyncio.sleep(params[0] / 1000)
        extra = {"keep-alive": f"timeout={params[0]}, max={params[1]}"} if mode == "keepalive" else None
        await out.raw(http11.head(200, "text/event-stream; charset=utf-8", extra=extra))
        await out.role()
        k = params[0] if params else 0
        if mode == "reset_midstream":
            await out.tokens(k)
            await asyncio.sleep(0.05)  # let the client read what was sent before the RST
            sock = writer.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
            return False
        if mode == "close_midstream":
            await out.tokens(k)
            return False  # the connection closes (FIN) with the chunked body unfinished
        if mode in ("short", "malformed_after", "error_event"):
            await out.tokens(k)
            if mode == "malformed_after":
                await out.event(b"{not json")
            elif mode == "error_event":
                await out.event(_OOM)
            await out.end()
            return True
        if mode == "empty":
            await out.choice(None, "stop")
            await out.end()
            return True
        total, finish = (k, "stop") if mode == "short_with_finish" else (n, "length")
        if mode == "slow_first":
            await asyncio.sleep(k / 1000)
            await out.tokens(1, every=0)
            await out.tokens(total - 1)
        elif mode == "stall_after":
            await out.tokens(min(k, total))
            await _stall(out, params[1] / 1000)
            await out.tokens(total - min(k, total))
        elif mode == "slow_total":
            await out.tokens(total, every=k / 1000)
        elif mode == "multi_token":
            await out.tokens(total, per_event=k)
        else:  # ok, no_done, short_with_finish, keepalive
            await out.tokens(total)
        await out.choice(None, finish)
        if usage:
            await out.usage(total)
        await out.end(done=mode != "no_done")
        return True


async def _stall(out: _Writer, seconds: float) -> None:
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        await asyncio.sleep(min(0.1, left))
        if end - time.monotonic() > 0:
            await out.raw(http11.chunk(b": ping\n\n"))


def _parse(raw: bytes) -> tuple[dict, str, list[int]]:
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError as e:
        raise _BadRequest(f"request body is not valid JSON: {e}") from e
    if not isinstance(body, dict):
        raise _BadRequest("request body must be a JSON object")
    mode, *params = str(body.get("model", "")).split(":")
    if mode not in MODES or len(params) != _PARAMS.get(mode, 0):
        raise _BadRequest(f"unknown faulty mode {body.get('model')!r}; modes: {', '.join(MODES)}")
    try:
        return body, mode, [int(p) for p in params]
    except ValueError as e:
        raise _BadRequest(f"bad parameter in faulty mode {body.get('model')!r}: {e}") from e


def _prompt_words(body: dict) -> int:
    if isinstance(body.get("prompt"), str):
        return len(body["prompt"].split())
    return sum(len(str(m.get("content", "")).split()) for m in body.get("messages") or [] if isinstance(m, dict))


def _full_body(body: dict, n: int) -> dict:
    text, p = _TOKEN * n, _prompt_words(body)
    usage = {"prompt_tokens": p, "completion_tokens": n, "total_tokens": p + n}
    if "messages" in body:
        choice = {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "length"}
        return {
            "id": "faulty-1",
            "object": "chat.completion",
            "model": body.get("model"),
            "choices": [choice],
            "usage": usage,
        }
    choice = {"index": 0, "text": text, "finish_reason": "length"}
    return {
        "id": "faulty-1",
        "object": "text_completion",
        "model": body.get("model"),
        "choices": [choice],
        "usage": usage,
    }


def start_faulty_server(port: int = 0) -> ServerThread:
    """Start the faulty server on 127.0.0.1 in a background thread; a context manager with ``.url``."""
    return ServerThread(FaultyServer(port=port)).start()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Misbehaving OpenAI-compatible streaming server (mode = request's model).")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8001)
    ns = p.parse_args(argv)
    serve_until_signal(
        FaultyServer(ns.host, ns.port), lambda url: print(f"faulty server listening on {url}", flush=True)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
