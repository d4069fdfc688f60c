"""Stream framing: cutting a response body, line by line, into the events adapters parse.

Pure parsers, no I/O and no clock. The stream loop reads lines as they arrive and feeds
them here; each parser returns an event as soon as one is complete.

* :class:`SseParser` -- ``text/event-stream`` (the fast parser, default). Follows the
  WHATWG SSE rules for ``data:`` (one optional space after the colon; several data lines
  joined with ``\\n``), ``event:``, comments (``:``), ``id:``/``retry:`` (ignored) and
  dispatch on a blank line. Events without data lines are not dispatched. The event name
  is ``""`` for the default type (an explicit ``event: message`` is the default type too).
* :func:`iter_sseclient_events` -- the same events from the ``sseclient-py`` package, the
  spec-complete reference (``--sse-parser sseclient``). A differential test keeps the two
  identical on every recorded transcript.
* :class:`NdjsonParser` -- one JSON document per line; the last line of a body may come
  without its newline (the stream loop feeds it at the end of the body).

One deliberate extension to the SSE rules, applied by both SSE paths: llama.cpp's server
reports an error inside a stream as an ``error: {...}`` *field* (not ``event: error``),
which a strict parser would ignore. Both parsers turn that field into an event named
``"error"`` whose data is the field's value, so the adapter can raise a server error
instead of the stream looking merely truncated.

The reader must split on ``\\n`` (``\\r\\n`` and a lone ``\\r`` are also accepted as line
endings); each call gets one line with or without its line ending.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from sseclient import SSEClient

__all__ = ["NdjsonParser", "SseParser", "iter_sseclient_events"]

#: One SSE event as produced by the parsers: ``(event_name, data)``.
SseEvent = tuple[str, bytes]


class SseParser:
    """Incremental SSE parser fed one line at a time. Hot path: one call per line.

    >>> p = SseParser()
    >>> p.feed_line(b"data: hi\\n") is None, p.feed_line(b"\\n")
    (True, ('', b'hi'))
    """

    __slots__ = ("_data", "_event")

    def __init__(self) -> None:
        self._data: bytes | None = None  # None: no data line seen in the pending event
        self._event = ""

    def feed_line(self, line: bytes) -> SseEvent | None:
        """Consume one line; return ``(event_name, data)`` when it completes an event."""
        if line.startswith(b"data:"):
            # The common case, kept to one slice: value without the optional space and ending.
            start = 6 if line[5:6] == b" " else 5
            if line.endswith(b"\n"):
                value = line[start:-2] if line.endswith(b"\r\n") else line[start:-1]
            elif line.endswith(b"\r"):
                value = line[start:-1]
            else:
                value = line[start:]
            data = self._data
            self._data = value if data is None else data + b"\n" + value
            return None
        if line == b"\n" or line == b"\r\n" or not line or line == b"\r":
            data = self._data
            if data is None:
                self._event = ""
                return None
            event = self._event
            self._data = None
            self._event = ""
            return event, data
        self._other_field(line)
        return None

    def flush(self) -> SseEvent | None:
        """End of stream: dispatch a pending event whose final blank line never came."""
        return self.feed_line(b"")

    def _other_field(self, line: bytes) -> None:
        """Fields other than ``data`` (rare): ``event``, ``error`` (llama.cpp), the rest ignored."""
        if line.startswith(b":"):
            return
        line = line.rstrip(b"\r\n")
        name, colon, value = line.partition(b":")
        if colon and value.startswith(b" "):
            value = value[1:]
        if name == b"event":
            event = value.decode("utf-8", "replace")
            self._event = "" if event == "message" else event
        elif name == b"data":  # a bare ``data`` line: an empty data line
            self._data = b"" if self._data is None else self._data + b"\n"
        elif name == b"error" and colon:
            self._event = "error"
            self._data = value if self._data is None else self._data + b"\n" + value


def _error_field_as_event(lines: Iterable[bytes]) -> Iterator[bytes]:
    """Rewrite llama.cpp's ``error:`` field into ``event: error`` + ``data:`` (see module doc)."""
    for line in lines:
        if line.startswith(b"error:"):
            body = line.rstrip(b"\r\n")
            ending = line[len(body) :] or b"\n"
            yield b"event: error" + ending
            yield b"data" + body[5:] + ending
        else:
            yield line


def iter_sseclient_events(lines: Iterable[bytes]) -> Iterator[SseEvent]:
    """Events of an SSE line iterator as parsed by ``sseclient.SSEClient`` (the reference).

    Yields the same ``(event_name, data)`` pairs as :class:`SseParser` including the
    event pending at end of stream; slower (decodes every line), but spec-complete.
    """
    for event in SSEClient(_error_field_as_event(lines)).events():
        name = event.event
        yield ("" if name == "message" else name), event.data.encode("utf-8")


class NdjsonParser:
    """Newline-delimited JSON: each non-blank line is one event (line ending removed, if any)."""

    __slots__ = ()

    def feed_line(self, line: bytes) -> bytes | None:
        """Return the line without its ending, or ``None`` for a blank line."""
        line = line.rstrip(b"\r\n")
        if not line or line.isspace():
            return None
        return line
