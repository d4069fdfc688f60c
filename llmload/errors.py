"""Exception tree of llmload.

::

    LlmloadError                      base of everything llmload raises on purpose
    ├── ConfigError                   bad flag, profile or dataset; raised before any load is sent
    │   └── ProfileError              a profile file that cannot be used (path and field in the message)
    └── StreamError                   a request that failed; ``kind`` is its error-kind label
        ├── HttpStatusError           non-2xx answer (kind ``http_<code>``)
        ├── ConnectError              no response: refused, reset or closed before the status line (``connection``)
        ├── StreamDisconnected        the connection was lost after the headers, mid-answer (``stream_disconnected``)
        ├── MalformedChunk            an event the adapter cannot parse (``malformed_chunk``)
        ├── ServerErrorEvent          the server reported an error inside the stream (``server_error``)
        ├── StreamTruncated           ended early: fewer tokens than asked and no finish reason (``stream_truncated``)
        ├── EmptyResponse             a successful answer that carried no content (``empty_response``)
        ├── StreamFormatMismatch      an answer in another API's events or another framing than
        │                             --api / --stream-format say (``stream_format_mismatch``)
        └── WrongContentType          a successful status whose body is not a stream, e.g. an HTML page
                                      (``wrong_content_type``: wrong --host or --endpoint-path)
    RequestFailed                     what Locust's failure table shows for a failed request (``kind: message``)

A request that met a closed keep-alive connection before any response byte is sent again
once on a fresh connection (:mod:`llmload.users.http_pool`); only if that fails too is it a
``connection`` error.

Deadlines (``ttft_timeout``, ``stall_timeout``, ``total_timeout``) are not exceptions of this
tree: the watchdog throws :class:`llmload.users.deadlines.Deadline` (a ``BaseException``, like
``gevent.Timeout``) into the late request's greenlet. A request that fails because of a bug in
llmload or in an adapter is counted as :data:`CLIENT_ERROR` (and its traceback shown by
Locust), so that it is never mistaken for a server fault.

Error kinds are the labels used in ``errors_by_kind`` of the summary and in
``llmload_errors_total{kind}``; :data:`ERROR_KINDS` lists the fixed ones
(``http_<code>`` kinds are open-ended).
"""

from __future__ import annotations

__all__ = [
    "CLIENT_ERROR",
    "ERROR_KINDS",
    "ConfigError",
    "ConnectError",
    "EmptyResponse",
    "HttpStatusError",
    "LlmloadError",
    "MalformedChunk",
    "ProfileError",
    "RequestFailed",
    "ServerErrorEvent",
    "StreamDisconnected",
    "StreamError",
    "StreamFormatMismatch",
    "StreamTruncated",
    "WrongContentType",
]

#: A request that failed because of a bug in llmload or in an adapter, not because of the server.
CLIENT_ERROR = "client_error"
#: Fixed error kinds (plus open-ended ``http_<status>``).
ERROR_KINDS = (
    "connection",
    "stream_disconnected",
    "ttft_timeout",
    "stall_timeout",
    "total_timeout",
    "malformed_chunk",
    "stream_truncated",
    "empty_response",
    "stream_format_mismatch",
    "wrong_content_type",
    "server_error",
    CLIENT_ERROR,
)


class LlmloadError(Exception):
    """Base class of llmload's own errors."""


class ConfigError(LlmloadError):
    """Invalid configuration. The message is one line: what, where, how to fix."""


class ProfileError(ConfigError):
    """A workload profile or dataset that cannot be used."""


class StreamError(LlmloadError):
    """A request that failed. ``kind`` is the error-kind label it is counted under."""

    kind = "stream_error"

    def __init__(self, message: str = "", *, kind: str | None = None) -> None:
        super().__init__(message or self.__class__.__name__)
        if kind is not None:
            self.kind = kind


class HttpStatusError(StreamError):
    def __init__(self, status: int, message: str = "") -> None:
        super().__init__(message or f"HTTP {status}", kind=f"http_{status}")
        self.status = status


class ConnectError(StreamError):
    kind = "connection"


class StreamDisconnected(StreamError):
    """The connection was lost after the response headers; the message says how many tokens had arrived."""

    kind = "stream_disconnected"


class MalformedChunk(StreamError):
    """``data``: the event (or line, or read) that could not be parsed, when the adapter gave it."""

    kind = "malformed_chunk"

    def __init__(self, message: str = "", *, data: bytes = b"") -> None:
        super().__init__(message)
        self.data = data


class ServerErrorEvent(StreamError):
    kind = "server_error"


class StreamTruncated(StreamError):
    kind = "stream_truncated"


class EmptyResponse(StreamError):
    kind = "empty_response"


class StreamFormatMismatch(StreamError):
    """No content could be read, but the body held one in another format: SSE ``data:`` lines
    read as NDJSON, JSON lines read as SSE, another API's events. The message names what was
    seen and the flag that reads it (:mod:`llmload.adapters.sniff`)."""

    kind = "stream_format_mismatch"


class WrongContentType(StreamError):
    """A 2xx answer whose Content-Type is no stream (``text/html``, ``application/json``): not an LLM endpoint."""

    kind = "wrong_content_type"


class RequestFailed(Exception):
    """The exception Locust's failure table shows for a failed LLM request: ``"<kind>: <message>"``."""
