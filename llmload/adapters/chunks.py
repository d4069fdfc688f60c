"""Turning a bad or error-carrying stream chunk into the exception the adapter contract asks for.

Shared by every adapter (off the hot path: only called once something is wrong). Messages
are kept short -- they end up as labels and log lines -- at most :data:`MAX_MESSAGE` chars.
"""

from __future__ import annotations

from typing import Any

import orjson

from llmload.errors import MalformedChunk, ServerErrorEvent

__all__ = ["MAX_MESSAGE", "count_chars", "malformed", "server_error", "server_error_from_data", "shorten"]

#: Longest message carried by :class:`MalformedChunk` / :class:`ServerErrorEvent`.
MAX_MESSAGE = 200
_EXCERPT = 80
_UTF8_CONTINUATION = bytes(range(0x80, 0xC0))


def shorten(text: str, limit: int = MAX_MESSAGE) -> str:
    """``text`` on one line, cut to at most ``limit`` characters (``…`` marks a cut)."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def malformed(why: str, data: bytes) -> MalformedChunk:
    """A :class:`MalformedChunk` saying ``why`` with a short excerpt of ``data``."""
    excerpt = data[:_EXCERPT].decode("utf-8", "replace")
    more = "…" if len(data) > _EXCERPT else ""
    return MalformedChunk(shorten(f"{why}: {excerpt!r}{more}"), data=data)


def server_error(obj: dict[str, Any]) -> ServerErrorEvent:
    """A :class:`ServerErrorEvent` from an error object.

    Accepts the shapes servers send: ``{"error": {"message", "type", "code"}}`` (OpenAI,
    vLLM, SGLang, Ollama), ``{"error": "text", "error_type": ...}`` (TGI, transformers
    serve), ``{"object": "error", "message", ...}`` (older vLLM) and a bare
    ``{"message": ...}`` (the data of an ``event: error``).
    """
    err = obj.get("error")
    if err is None or err is True:
        err = obj
    if isinstance(err, dict):
        message = err.get("message") or err.get("detail") or orjson.dumps(err).decode()
        tags = [str(err[k]) for k in ("type", "code") if err.get(k) not in (None, "")]
        text = f"{message} ({', '.join(tags)})" if tags else str(message)
    else:
        kind = obj.get("error_type")
        text = f"{err} ({kind})" if kind else str(err)
    return ServerErrorEvent(shorten(text))


def server_error_from_data(data: bytes) -> ServerErrorEvent:
    """A :class:`ServerErrorEvent` from the data of an ``event: error`` (JSON or text)."""
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError:
        obj = None
    if isinstance(obj, dict):
        return server_error(obj)
    text = data.decode("utf-8", "replace").strip()
    return ServerErrorEvent(shorten(text or "error event without a message"))


def count_chars(data: bytes) -> int:
    """Characters in UTF-8 ``data``; exact even when a read splits a multi-byte character."""
    if data.isascii():
        return len(data)
    return len(data.translate(None, _UTF8_CONTINUATION))
