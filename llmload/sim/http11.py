"""A lean HTTP/1.1 server-side codec: request parsing and response framing.

Supported subset (enough for load generators and curl, not a general server):

* request line ``METHOD target HTTP/1.x``; the target's path is used, any query
  string is dropped;
* headers up to 64 KiB in all; only ``Content-Length``, ``Connection``,
  ``Transfer-Encoding`` and ``Expect`` are interpreted;
* bodies by ``Content-Length`` only (up to 64 MiB); a chunked request body is
  refused with 411, ``Expect: 100-continue`` is answered;
* persistent connections: HTTP/1.1 keeps the connection open unless the request
  says ``Connection: close``; HTTP/1.0 closes unless it says ``keep-alive``;
  pipelined requests are parsed in order (the caller answers them in order).

Responses are written by the caller from :func:`head` plus either a sized body or
chunks framed with :func:`chunk` and ended with :data:`LAST_CHUNK`. Nothing here
compresses. Pure bytes in, bytes out: no sockets.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from llmload.jsonvalue import Json

__all__ = [
    "CONTINUE",
    "LAST_CHUNK",
    "HttpError",
    "Request",
    "RequestParser",
    "chunk",
    "error_body",
    "head",
    "json_response",
]

MAX_HEAD = 64 * 1024
MAX_BODY = 64 * 1024 * 1024
LAST_CHUNK = b"0\r\n\r\n"
CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"

_REASONS = {
    100: "Continue", 200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed",
    408: "Request Timeout", 411: "Length Required", 413: "Content Too Large", 422: "Unprocessable Content",
    429: "Too Many Requests", 431: "Request Header Fields Too Large", 500: "Internal Server Error",
    501: "Not Implemented", 502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout",
}  # fmt: skip


class HttpError(Exception):
    """A request that cannot be parsed; answer ``status`` and close the connection."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True, slots=True)
class Request:
    """One parsed request. Header names are lower-case; ``path`` has no query string."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    keep_alive: bool


class RequestParser:
    """Incremental parser: :meth:`feed` bytes as they arrive, take requests with :meth:`next`.

    ``needs_continue`` becomes true when a request announced ``Expect: 100-continue``
    and its body has not arrived yet; the caller sends :data:`CONTINUE` once and calls
    :meth:`continue_sent`.
    """

    __slots__ = ("_buf", "_pending", "needs_continue")

    def __init__(self) -> None:
        self._buf = bytearray()
        self._pending: tuple[str, str, dict[str, str], int, bool] | None = None
        self.needs_continue = False

    def feed(self, data: bytes) -> None:
        self._buf += data

    def continue_sent(self) -> None:
        self.needs_continue = False

    def next(self) -> Request | None:
        """The next complete request, or ``None`` until more bytes arrive. Raises :class:`HttpError`."""
        if self._pending is None:
            end = self._buf.find(b"\r\n\r\n")
            if end < 0:
                if len(self._buf) > MAX_HEAD:
                    raise HttpError(431, "request head larger than 64 KiB")
                return None
            self._pending = _parse_head(bytes(self._buf[:end]))
            del self._buf[: end + 4]
            self.needs_continue = self._pending[2].get("expect", "").lower() == "100-continue"
        method, path, headers, length, keep_alive = self._pending
        if len(self._buf) < length:
            return None
        body = bytes(self._buf[:length])
        del self._buf[:length]
        self._pending = None
        self.needs_continue = False
        return Request(method, path, headers, body, keep_alive)


def _parse_head(raw: bytes) -> tuple[str, str, dict[str, str], int, bool]:
    try:
        text = raw.decode("latin-1")
    except UnicodeDecodeError as e:  # pragma: no cover - latin-1 decodes any byte
        raise HttpError(400, "undecodable request head") from e
    lines = text.split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise HttpError(400, f"bad request line {lines[0][:80]!r}")
    method, target, version = parts
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if not sep or not name or name != name.strip():
            raise HttpError(400, f"bad header line {line[:80]!r}")
        headers[name.lower()] = value.strip()
    if "chunked" in headers.get("transfer-encoding", "").lower():
        raise HttpError(411, "chunked request bodies are not supported; send Content-Length")
    try:
        length = int(headers.get("content-length", "0"))
    except ValueError as e:
        raise HttpError(400, "bad Content-Length") from e
    if length < 0:
        raise HttpError(400, "bad Content-Length")
    if length > MAX_BODY:
        raise HttpError(413, "request body larger than 64 MiB")
    conn = headers.get("connection", "").lower()
    keep_alive = "keep-alive" in conn if version == "HTTP/1.0" else "close" not in conn
    return method, target.split("?", 1)[0], headers, length, keep_alive


def head(
    status: int,
    content_type: str,
    *,
    length: int | None = None,
    keep_alive: bool = True,
    extra: dict[str, str] | None = None,
) -> bytes:
    """Status line and headers; ``length`` None means ``Transfer-Encoding: chunked``; ``extra``: more headers."""
    framing = "transfer-encoding: chunked" if length is None else f"content-length: {length}"
    conn = "" if keep_alive else "connection: close\r\n"
    more = "".join(f"{k}: {v}\r\n" for k, v in (extra or {}).items())
    return (
        f"HTTP/1.1 {status} {_REASONS.get(status, 'Unknown')}\r\n"
        f"server: llmload-sim\r\ncontent-type: {content_type}\r\ncache-control: no-cache\r\n"
        f"{conn}{more}{framing}\r\n\r\n"
    ).encode("latin-1")


def chunk(data: bytes) -> bytes:
    """``data`` framed as one HTTP/1.1 chunk (must not be empty: that is :data:`LAST_CHUNK`)."""
    return b"%x\r\n%b\r\n" % (len(data), data)


def json_response(status: int, obj: Any, *, keep_alive: bool = True) -> bytes:
    """A complete response with a JSON body."""
    body = orjson.dumps(obj)
    return head(status, "application/json", length=len(body), keep_alive=keep_alive) + body


def error_body(status: int, message: str, type_: str | None = None) -> dict[str, Json]:
    """The OpenAI error shape: ``{"error": {"message", "type", "code"}}``."""
    if type_ is None:
        type_ = "invalid_request_error" if 400 <= status < 500 else "server_error"
    return {"error": {"message": message, "type": type_, "code": status}}
