"""The per-event stream loop: read, stamp, hand to the adapter. The hot path of llmload.

One function per framing. Each reads events as they arrive, takes one
``perf_counter_ns()`` stamp per read, lets the adapter parse the event, and appends the
stamp to ``record.chunk_ns`` when the event carried content. Nothing else happens per
event: no allocation beyond the stamp, no derived metric, no Locust event.

Each loop returns ``True`` when an end-of-stream sentinel (``[DONE]``) was seen and
``False`` at the end of the body; errors propagate as exceptions
(:mod:`llmload.errors`, connection errors from the HTTP layer).

The first read is kept on the state (``body_start``, a reference). When no content could
be read (or an adapter found an event it cannot parse), :func:`consume` asks
:mod:`llmload.adapters.sniff` whether the body was in another framing or another API's
events, and then raises :class:`~llmload.errors.StreamFormatMismatch` naming the flag that
reads it: once per failed request, nothing per chunk.
"""

from __future__ import annotations

from time import perf_counter_ns
from typing import TYPE_CHECKING

from llmload.adapters.base import DONE, Framing
from llmload.adapters.framing import NdjsonParser, SseParser, iter_sseclient_events
from llmload.adapters.sniff import format_mismatch
from llmload.errors import MalformedChunk, StreamFormatMismatch

if TYPE_CHECKING:
    from llmload.adapters.base import Adapter, StreamState
    from llmload.metrics.record import RequestRecord
    from llmload.users.http_pool import BodyReader

__all__ = ["consume"]


def consume(
    framing: Framing, reader: BodyReader, adapter: Adapter, state: StreamState, rec: RequestRecord, sse_parser: str
) -> bool:
    """Read the whole stream with the given framing; see the module docstring."""
    try:
        if framing is Framing.SSE:
            if sse_parser == "sseclient":
                done = _consume_sseclient(reader, adapter, state, rec)
            else:
                done = _consume_sse(reader, adapter, state, rec)
        elif framing is Framing.NDJSON:
            done = _consume_ndjson(reader, adapter, state, rec)
        else:
            done = _consume_raw(reader, adapter, state, rec)
    except MalformedChunk as exc:
        _raise_if_mismatched(framing, adapter, state, exc)
        raise
    if not rec.chunk_ns:
        _raise_if_mismatched(framing, adapter, state, None)
    return done


def _raise_if_mismatched(framing: Framing, adapter: Adapter, state: StreamState, cause: Exception | None) -> None:
    """The failure path: raise StreamFormatMismatch when the body was in another format."""
    stream_format = getattr(getattr(adapter, "config", None), "stream_format", "auto")
    # An SSE event's data alone says nothing of the framing (a cut JSON is no JSON body).
    broken = getattr(cause, "data", b"") if framing is not Framing.SSE else b""
    message = format_mismatch(framing, adapter.name, stream_format, state.body_start, broken)
    if message is not None:
        raise StreamFormatMismatch(message) from cause


def _consume_sse(reader: BodyReader, adapter: Adapter, state: StreamState, rec: RequestRecord) -> bool:
    # One read per wake-up (whatever bytes arrived), split into lines here: events that
    # arrived together get the same stamp, which is when they arrived. Measured cheaper
    # than two geventhttpclient readline() calls per event (benchmarks/client_overhead.py).
    read_some = reader.read_some
    parser = SseParser()
    feed_line = parser.feed_line
    feed = adapter.feed
    append = rec.chunk_ns.append
    tail = b""
    data = state.body_start = read_some()
    while data:
        t = perf_counter_ns()
        lines = (tail + data if tail else data).split(b"\n")
        tail = lines.pop()  # the unfinished last line (b"" when the read ended on a newline)
        for line in lines:
            ev = feed_line(line)
            if ev is None:
                continue
            n = feed(state, ev[1], ev[0])
            if n == 1:
                append(t)
            elif n > 1:
                rec.add_counted_chunk(t, n)
            elif n == DONE:
                rec.end_ns = t
                return True
        data = read_some()
    if tail:
        parser.feed_line(tail)
    return _flush_sse(parser, adapter, state, rec)


def _flush_sse(parser: SseParser, adapter: Adapter, state: StreamState, rec: RequestRecord) -> bool:
    """An event left without its closing blank line at EOF (seen on real servers)."""
    t = perf_counter_ns()
    ev = parser.flush()
    if ev is not None:
        n = adapter.feed(state, ev[1], ev[0])
        if n == DONE:
            rec.end_ns = t
            return True
        if n == 1:
            rec.chunk_ns.append(t)
        elif n > 1:
            rec.add_counted_chunk(t, n)
    return False


def _consume_sseclient(reader: BodyReader, adapter: Adapter, state: StreamState, rec: RequestRecord) -> bool:
    """Same as :func:`_consume_sse` with sseclient-py as the (spec-complete, slower) parser.

    Reads line by line: ``body_start`` stays empty (no format mismatch is told here)."""
    readline = reader.readline
    lines = iter(readline, b"")
    feed = adapter.feed
    for event, data in iter_sseclient_events(lines):
        t = perf_counter_ns()
        n = feed(state, data, event)
        if n == 1:
            rec.chunk_ns.append(t)
        elif n > 1:
            rec.add_counted_chunk(t, n)
        elif n == DONE:
            rec.end_ns = t
            return True
    return False


def _consume_ndjson(reader: BodyReader, adapter: Adapter, state: StreamState, rec: RequestRecord) -> bool:
    # Read and split like the SSE loop (lines that arrived together share their read's stamp).
    # The last line may come without its newline (readline() would drop it at the end of the
    # body, and with it the final object's usage and finish reason): fed at the end.
    read_some = reader.read_some
    feed_line = NdjsonParser().feed_line
    feed = adapter.feed
    append = rec.chunk_ns.append
    tail = b""
    t = 0
    data = state.body_start = read_some()
    while data:
        t = perf_counter_ns()
        lines = (tail + data if tail else data).split(b"\n")
        tail = lines.pop()  # the unfinished last line (b"" when the read ended on a newline)
        for line in lines:
            doc = feed_line(line)
            if doc is None:
                continue
            n = feed(state, doc, "")
            if n == 1:
                append(t)
            elif n > 1:
                rec.add_counted_chunk(t, n)
            elif n == DONE:
                rec.end_ns = t
                return True
        data = read_some()
    doc = feed_line(tail) if tail else None
    if doc is not None:  # stamped when its last byte arrived (the last read), not at the end of the body
        n = feed(state, doc, "")
        if n == 1:
            append(t)
        elif n > 1:
            rec.add_counted_chunk(t, n)
        elif n == DONE:
            rec.end_ns = t
            return True
    return False


def _consume_raw(reader: BodyReader, adapter: Adapter, state: StreamState, rec: RequestRecord) -> bool:
    read_some = reader.read_some
    feed = adapter.feed
    append = rec.chunk_ns.append
    data = state.body_start = read_some()
    while data:
        t = perf_counter_ns()
        n = feed(state, data, "")
        if n == 1:
            append(t)
        elif n > 1:
            rec.add_counted_chunk(t, n)
        elif n == DONE:
            rec.end_ns = t
            return True
        data = read_some()
    return False
