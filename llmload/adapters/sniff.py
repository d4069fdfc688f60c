"""What a body that gave no content held instead: another framing, or another API's events.

Called only on the failure path (the stream loop read no content, or an adapter raised
:class:`~llmload.errors.MalformedChunk`), with the body's first read (and, for NDJSON and
raw reads, the line or read that could not be parsed): nothing runs per chunk. A first read
holds at least the server's first write, in practice its first event or line; when it shows
nothing recognisable the original error stands. :func:`format_mismatch` says, in one line, what the body was and which flag reads it
(``--stream-format``, ``--api``), or ``None`` when the body is in the format llmload was told
to read (then the original error stands: a truly empty answer, a broken event).

What is recognised, from the first lines (:data:`SAMPLE` bytes):

* SSE: a ``data:`` or ``event:`` line;
* JSON: a first line that starts with ``{`` -- JSON lines (NDJSON), or one JSON document
  (a non-streamed answer);
* the API, from an event's name or its JSON: ``response.*`` (``openai-responses``),
  ``message_start``/``content_block_delta``/... (``anthropic-messages``), ``choices[].delta``
  (``openai-chat``), ``choices[].text`` (``openai-completions``), ``choices[].message`` (a
  whole chat completion: the server did not stream), TGI's ``token``, Ollama's
  ``response``/``done`` and SSE data that is plain text (``stream``).
"""

from __future__ import annotations

from typing import Any

import orjson

from llmload.adapters.base import Framing
from llmload.adapters.chunks import shorten
from llmload.adapters.framing import SseParser

__all__ = ["SAMPLE", "format_mismatch", "sniff"]

#: How much of the body is looked at.
SAMPLE = 4096
_ANTHROPIC = frozenset(
    ("message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta",
     "message_stop")
)  # fmt: skip
_NOT_STREAMED = "a whole chat completion"
_FRAMING_NAMES = {Framing.SSE: "SSE", Framing.NDJSON: "NDJSON", Framing.RAW: "raw text"}


def _api_of(name: str, obj: Any) -> str | None:
    """The API an event belongs to, from its SSE name or its JSON (``None``: cannot tell)."""
    if not name and isinstance(obj, dict) and isinstance(obj.get("type"), str):
        name = obj["type"]
    if name.startswith("response."):
        return "openai-responses"
    if name in _ANTHROPIC:
        return "anthropic-messages"
    if not isinstance(obj, dict):
        return None
    choices = obj.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        choice = choices[0]
        if "delta" in choice:
            return "openai-chat"
        if "message" in choice:
            return _NOT_STREAMED
        if "text" in choice:
            return "openai-completions"
    if isinstance(obj.get("token"), dict) or ("response" in obj and "done" in obj):
        return "stream"
    return None


def _json(text: bytes) -> Any:
    try:
        return orjson.loads(text)
    except ValueError:
        return None


def sniff(sample: bytes) -> tuple[str, str | None, str] | None:
    """``(framing seen, API seen or None, the line that shows it)``, or ``None`` (nothing to tell).

    The framing is ``"sse"``, ``"ndjson"`` (JSON lines), ``"json"`` (one JSON document, or
    JSON cut by the sample's end).
    """
    lines = [ln.strip() for ln in sample[:SAMPLE].splitlines()]
    lines = [ln for ln in lines if ln]
    if not lines:
        return None
    if any(ln.startswith((b"data:", b"event:")) for ln in lines):
        for name, data in _sse_events(sample[:SAMPLE]):
            data = data.strip()
            text = data and data != b"[DONE]" and not data.startswith((b"{", b"["))
            api = "stream" if text else _api_of(name, _json(data))
            if api is not None:
                return "sse", api, _excerpt(b"event: %s data: %s" % (name.encode(), data) if name else b"data: " + data)
        return "sse", None, _excerpt(next((ln for ln in lines if ln.startswith(b"data:")), lines[0]))
    if not lines[0].startswith(b"{"):
        return None
    docs = [_json(ln) for ln in lines]
    if len(lines) > 1 and sum(isinstance(d, dict) for d in docs) >= 2:
        api = next((a for a in (_api_of("", d) for d in docs) if a is not None), None)
        return "ndjson", api, _excerpt(lines[0])
    whole = _json(sample.strip()) if len(sample) <= SAMPLE else None
    return "json", _api_of("", whole if whole is not None else docs[0]), _excerpt(lines[0])


def _sse_events(sample: bytes) -> list[tuple[str, bytes]]:
    """The events of an SSE sample, as the stream loop's parser cuts them (one cut by the sample's end included)."""
    parser = SseParser()
    events = [ev for ln in sample.splitlines(keepends=True) if (ev := parser.feed_line(ln)) is not None]
    last = parser.flush()
    return [*events, last] if last is not None else events


def _excerpt(line: bytes) -> str:
    return shorten(line.decode("utf-8", "replace"), 70)


def format_mismatch(framing: Framing, api: str, stream_format: str, *samples: bytes) -> str | None:
    """One line naming what the body held and the flag that reads it; ``None`` if it is what was expected.

    ``framing`` is how the body was read, ``stream_format`` the ``--stream-format`` value
    (``auto``: the framing came from the Content-Type), ``api`` the ``--api`` name. The
    first of ``samples`` that tells anything (:func:`sniff`) decides.
    """
    seen = next((found for found in map(sniff, samples) if found is not None), None)
    if seen is None:
        return None
    seen_framing, seen_api, line = seen
    told = (f"read as {_FRAMING_NAMES[framing]} (its Content-Type)" if stream_format == "auto"
            else f"read as {_FRAMING_NAMES[framing]} (--stream-format {stream_format})")  # fmt: skip
    if seen_api == _NOT_STREAMED:
        return (f"the body is one JSON document, a whole chat completion ({line}), {told}: the server did not "
                'stream (does it honour "stream": true?)')  # fmt: skip
    other_api = seen_api is not None and seen_api != api
    use_api = f" --api {seen_api}" if other_api else ""
    if seen_framing == "sse" and framing is not Framing.SSE:
        return f"the body is SSE ({line}), {told}: use --stream-format sse{use_api}"
    if seen_framing == "ndjson" and framing is not Framing.NDJSON:
        return f"the body is JSON lines ({line}), {told}: use --stream-format ndjson{use_api}"
    if seen_framing == "json" and framing is Framing.SSE:
        return f"the body is JSON, not SSE events ({line}), {told}: use --stream-format ndjson{use_api}"
    if other_api:
        return f"the body holds {seen_api} events ({line}), but --api is {api}: use --api {seen_api}"
    return None
