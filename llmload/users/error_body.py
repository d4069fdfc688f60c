"""What a server said when it refused a request: the message out of an error body.

Servers wrap the reason differently; the user keeps the first :data:`LIMIT` characters of
the first of these that is present, else of the body as text:

============================ ==============================================================
server                       body
============================ ==============================================================
OpenAI, vLLM, SGLang, llama  ``{"error": {"message": "...", "type": ..., "code": ...}}``
Anthropic                    ``{"type": "error", "error": {"type": ..., "message": "..."}}``
TGI                          ``{"error": "...", "error_type": "..."}``
FastAPI / Starlette          ``{"detail": "..."}`` or ``{"detail": [{"msg": "..."}, ...]}``
others                       ``{"message": "..."}``, or plain text / HTML
============================ ==============================================================

The message is what a person fixes the test by ("maximum context length is 32768
tokens. However, you requested 100050 tokens"), so it is kept on the record and one
example per error kind reaches the summary. Pure.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

__all__ = ["LIMIT", "error_message"]

#: Characters of a server's message kept.
LIMIT = 200
_TAGS = re.compile(rb"<[^>]*>")
_SPACE = re.compile(r"\s+")


def _from_json(doc: Any) -> str | None:
    if not isinstance(doc, dict):
        return None
    err = doc.get("error")
    if isinstance(err, dict):
        msg = err.get("message") or err.get("msg")
        if isinstance(msg, str) and msg:
            return msg
    if isinstance(err, str) and err:
        return err
    detail = doc.get("detail")
    if isinstance(detail, str) and detail:
        return detail
    if isinstance(detail, list) and detail and isinstance(detail[0], dict) and isinstance(detail[0].get("msg"), str):
        return "; ".join(str(d.get("msg")) for d in detail if isinstance(d, dict))
    msg = doc.get("message")
    return msg if isinstance(msg, str) and msg else None


def error_message(body: bytes, content_type: str | None = None) -> str:
    """The server's own message in ``body`` (at most :data:`LIMIT` characters; ``""`` if none)."""
    if not body:
        return ""
    text: str | None = None
    stripped = body.lstrip()
    if stripped[:1] in (b"{", b"["):
        try:
            text = _from_json(orjson.loads(stripped))
        except orjson.JSONDecodeError:
            text = None  # cut JSON (only the start was read): fall back to the raw text
    if text is None:
        raw = _TAGS.sub(b" ", body) if b"<" in body[:64] or (content_type or "").startswith("text/html") else body
        text = raw.decode("utf-8", "replace")
    text = _SPACE.sub(" ", text).strip()
    return text if len(text) <= LIMIT else text[: LIMIT - 1] + "…"
