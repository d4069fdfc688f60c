"""What a response must be to count as an answer: a success status, a stream, and complete.

Called by :meth:`llmload.users.llm_user.LLMUser.send` once per request (never per chunk); each
raises the error of its kind (:mod:`llmload.errors`) with the server's own words where it
sent some (:func:`llmload.users.error_body.error_message`).
"""

from __future__ import annotations

from typing import NoReturn

from llmload.adapters.base import Framing, StreamState
from llmload.errors import ConnectError, EmptyResponse, HttpStatusError, StreamTruncated, WrongContentType
from llmload.metrics.record import RequestRecord
from llmload.users.backoff_wait import RETRY_AFTER_STATUSES, retry_after_s
from llmload.users.error_body import error_message
from llmload.users.http_pool import BodyReader

__all__ = ["check_complete", "raise_for_status", "raise_not_a_stream"]

#: How much of an error body is read for its message (the rest is dropped with the connection).
_ERROR_BODY_READ = 4096


def raise_for_status(resp, reader: BodyReader | None, rec: RequestRecord) -> BodyReader:
    """Raise for a response without a success status (or with no body to read); else return its ``reader``."""
    error = getattr(resp, "error", None)
    status = resp.status_code or 0
    if status == 0 or reader is None:
        raise ConnectError(f"{type(error).__name__}: {error}" if error else "no response")
    if status >= 300:
        if status in RETRY_AFTER_STATUSES:
            rec.retry_after_s = retry_after_s(resp.headers.get("retry-after") if resp.headers else None)
        content_type = resp.headers.get("content-type") if resp.headers else None
        message = error_message(_body_start(resp, reader), content_type)
        raise HttpStatusError(status, message or f"HTTP {status} (no message in the body)")
    return reader


def raise_not_a_stream(resp, content_type: str | None, reader: BodyReader) -> NoReturn:
    """A successful status whose body is not a stream (an HTML page, a JSON document)."""
    said = error_message(_body_start(resp, reader), content_type)
    status = resp.status_code
    ct = (content_type or "").split(";", 1)[0].strip()
    raise WrongContentType(
        f"HTTP {status} with Content-Type {ct}, expected text/event-stream: wrong --host or --endpoint-path?"
        + (f" (the body says: {said})" if said else "")
    )


def _body_start(resp, reader: BodyReader) -> bytes:
    """The start of a body that will not be streamed (the rest is dropped with the connection).

    Locust has already read the whole body of an error status (``resp.content``, cached):
    then that; else what arrives, up to :data:`_ERROR_BODY_READ` bytes.
    """
    body = b""
    try:
        if reader.complete:
            return (resp.content or b"")[:_ERROR_BODY_READ]
        while len(body) < _ERROR_BODY_READ:
            part = reader.read_some()
            if not part:
                break
            body += part
            if reader.complete:
                break
    except Exception:  # a body cut short: its start is all there is
        pass
    return body[:_ERROR_BODY_READ]


def check_complete(rec: RequestRecord, state: StreamState, framing: Framing) -> None:
    if not rec.chunk_ns:
        raise EmptyResponse("the response carried no content")
    # Fewer tokens than asked for and no finish reason: the stream was cut, not finished.
    if state.finish_reason is None and rec.output_tokens < rec.max_tokens and framing is not Framing.RAW:
        raise StreamTruncated(f"stream ended after {rec.output_tokens} of {rec.max_tokens} tokens without a finish reason")
