"""The per-event stream loop: read, stamp, hand to the adapter. The hot path of llmload.

One function per framing. Each reads events as they arrive, takes one
``perf_counter_ns()`` stamp per read, lets the adapter parse the event, and appends the
stamp to ``record.chunk_ns`` when the event carried content. Nothing else happens per
event: no allocation beyond the stamp, no derived metric, no Locust event.

Each loop returns ``True`` when an end-of-stream sentinel (``[DONE]``) was seen and
``False`` at the end of the body; errors propagate as exceptions
(:mod:`llmload.errors`, connection errors from the HTTP layer).
"""

from __future__ import annotations

from time import perf_counter_ns
from typing import TYPE_CHECKING

from llmload.adapters.base import DONE, Framing
from llmload.adapters.framing import NdjsonParser, SseParser, iter_sseclient_events

if TYPE_CHECKING:
    from llmload.adapters.base import Adapter, StreamState
    from llmload.metrics.record import RequestRecord
    from llmload.users.http import BodyReader

__all__ = ["consume"]


def consume(
    framing: Framing, reader: BodyReader, adapter: Adapter, state: StreamState, rec: RequestRecord, sse_parser: str
) -> bool:
    """Read the whole stream with the given framing; see the module docstring."""
    if framing is Framing.SSE:
        if sse_parser == "sseclient":
            return _consume_sseclient(reader, adapter, state, rec)
        return _consume_sse(reader, adapter, state, rec)
    if framing is Framing.NDJSON:
        return _consume_ndjson(reader, adapter, state, rec)
    return _consume_raw(reader, adapter, state, rec)


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
    while True:
        data = read_some()
        t = perf_counter_ns()
        if not data:
            break
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
    """Same as :func:`_consume_sse` with sseclient-py as the (spec-complete, slower) parser."""
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
    while True:
        data = read_some()
        if not data:
            break
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
    while True:
        data = read_some()
        t = perf_counter_ns()
        if not data:
            return False
        n = feed(state, data, "")
        if n == 1:
            append(t)
        elif n > 1:
            rec.add_counted_chunk(t, n)
        elif n == DONE:
            rec.end_ns = t
            return True
