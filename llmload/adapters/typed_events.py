"""One SSE event of an API whose events carry their type: OpenAI Responses, Anthropic Messages.

Both APIs name every event (``event: response.output_text.delta``,
``event: content_block_delta``) and repeat the name as the JSON ``type``; some gateways drop
the ``event:`` lines. :func:`decode_typed_event` reads either form the same way and leaves
the adapter only the event kinds it counts:

* named: an unknown name is a lifecycle or ping event, returned as 0 without parsing its
  data; the error kind raises :class:`~llmload.errors.ServerErrorEvent` (JSON or text data);
* unnamed: ``[DONE]`` ends the stream, an empty data line is nothing, the JSON ``type``
  picks the kind; an unknown type is nothing unless it carries an ``error`` (raised);
* data that is not a JSON object raises :class:`~llmload.errors.MalformedChunk`.

Per event: one dict lookup, and one ``orjson.loads`` for the events the adapter counts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from orjson import loads

from llmload.adapters.base import DONE
from llmload.adapters.chunks import malformed, server_error, server_error_from_data

__all__ = ["decode_typed_event"]

_DONE_SENTINEL = b"[DONE]"


def decode_typed_event(data: bytes, event: str, kinds: Mapping[Any, int], error_kind: int) -> tuple[int, Any]:
    """``(kind, parsed object)`` of one event, or ``(0 or DONE, None)`` when there is nothing to read.
    ``kinds``: event name -> kind, also looked up with the JSON ``type`` (any JSON value, or None)."""
    if event:
        kind = kinds.get(event)
        if kind is None:
            return 0, None
        if kind == error_kind:
            raise server_error_from_data(data)
        try:
            obj = loads(data)
        except ValueError:
            raise malformed("not JSON", data) from None
        if type(obj) is not dict:
            raise malformed("not a JSON object", data)
        return kind, obj
    stripped = data.strip()
    if stripped == _DONE_SENTINEL:
        return DONE, None
    if not stripped:
        return 0, None
    try:
        obj = loads(stripped)
    except ValueError:
        raise malformed("not JSON", data) from None
    if type(obj) is not dict:
        raise malformed("not a JSON object", data)
    kind = kinds.get(obj.get("type"))
    if kind == error_kind or (kind is None and obj.get("error")):
        raise server_error(obj)
    if kind is None:
        return 0, None
    return kind, obj
