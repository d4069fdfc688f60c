"""A non-streamed JSON answer read whole by the stream loop's raw reads (embeddings, rerank).

The adapter of such an API reads with :attr:`~llmload.adapters.base.Framing.RAW` (every read one event)
and sets ``whole_body = True`` (then a JSON ``Content-Type`` is read that way too). :func:`whole_json`
keeps the reads on the state (``StreamState.text_parts``) and parses them when a read ends the JSON
object: it returns the document then, :data:`PENDING` before. That read is the request's one content
event: its stamp is the time to the whole answer. Nothing is parsed until a read ends on ``}``; a
read that ends on one inside the document is parsed and found incomplete (rare: JSON objects
nested in the answer).
"""

from __future__ import annotations

from typing import Any

import orjson

from llmload.adapters.base import StreamState

__all__ = ["PENDING", "whole_json"]

#: What :func:`whole_json` returns until the document is whole.
PENDING: Any = object()
_CLOSE = ord("}")
_SPACE = b" \t\r\n"


def whole_json(state: StreamState, data: bytes) -> Any:
    """The JSON document once ``data`` completes it (the kept reads dropped), else :data:`PENDING`."""
    parts = state.text_parts
    if parts is None:
        parts = state.text_parts = []
    parts.append(bytes(data))
    end = data.rstrip(_SPACE)
    if not end or end[-1] != _CLOSE:
        return PENDING
    body = b"".join(parts)  # type: ignore[arg-type]
    try:
        doc = orjson.loads(body)
    except ValueError:
        return PENDING  # a read that ended inside the document on a "}"
    state.text_parts = None
    state.text_chars = len(body)
    return doc
